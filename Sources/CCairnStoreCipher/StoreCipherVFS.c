// The VFS of CairnStoreCipher.h: registered paths are stored as authenticated blocks, other files pass through.

#include "StoreCipherInternal.h"

#include <pthread.h>
#include <stdlib.h>

sqlite3_vfs *realVFS = NULL;
cairn_seal_function sealBlock = NULL;
cairn_open_function openBlock = NULL;
cairn_context_function retainContext = NULL;
cairn_context_function releaseContext = NULL;
int64_t cipherFailures = 0;
static sqlite3_vfs cipherVFS;
static pthread_mutex_t registryLock = PTHREAD_MUTEX_INITIALIZER;
static Registration *registry = NULL;

// MARK: - The VFS

// The registration for the database behind `name`, copied into `out` (the caller retains its context).
static int lookup(const char *name, int kind, Registration *out) {
    size_t length = strlen(name);
    const char *suffix = kind == KIND_WAL ? "-wal" : kind == KIND_JOURNAL ? "-journal" : "";
    size_t suffixLength = strlen(suffix);
    if (length < suffixLength || strcmp(name + length - suffixLength, suffix) != 0) return 0;
    size_t databaseLength = length - suffixLength;
    int found = 0;
    pthread_mutex_lock(&registryLock);
    for (Registration *r = registry; r; r = r->next) {
        if (strlen(r->path) == databaseLength && strncmp(r->path, name, databaseLength) == 0) {
            *out = *r;
            retainContext(r->context);
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&registryLock);
    return found;
}

static int cipherOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    int kind = 0;
    if (flags & SQLITE_OPEN_MAIN_DB) kind = KIND_DATABASE;
    else if (flags & SQLITE_OPEN_WAL) kind = KIND_WAL;
    else if (flags & SQLITE_OPEN_MAIN_JOURNAL) kind = KIND_JOURNAL;
    Registration registration;
    if (kind == 0 || name == NULL || !lookup(name, kind, &registration)) {
        return realVFS->xOpen(realVFS, name, file, flags, outFlags);
    }
    CipherFile *f = (CipherFile *)file;
    memset(f, 0, sizeof(CipherFile));
    f->real = (sqlite3_file *)((char *)file + ROUND8(sizeof(CipherFile)));
    f->context = registration.context;
    memcpy(f->fileID, registration.fileID, 16);
    f->kind = kind;
    int page = registration.pageSize;
    f->headerSize = kind == KIND_DATABASE ? CAIRN_STORE_HEADER_SIZE : 0;
    f->firstBlock = kind == KIND_WAL ? 32 : page;
    f->blockSize = kind == KIND_WAL ? 24 + page : page;
    f->plain = sqlite3_malloc((int)f->blockSize + OVERHEAD);
    f->sealed = sqlite3_malloc((int)f->blockSize + OVERHEAD);
    int rc = (f->plain && f->sealed) ? realVFS->xOpen(realVFS, name, f->real, flags, outFlags) : SQLITE_NOMEM;
    if (rc != SQLITE_OK) {
        releaseContext(f->context);
        sqlite3_free(f->plain);
        sqlite3_free(f->sealed);
        f->real->pMethods = NULL;
        file->pMethods = NULL;
        return rc;
    }
    file->pMethods = &cipherIOMethods;
    if (kind == KIND_DATABASE) {
        sqlite3_int64 physical = 0;
        rc = f->real->pMethods->xFileSize(f->real, &physical);
        if (rc == SQLITE_OK && physical == 0 && !(flags & SQLITE_OPEN_READONLY)) {
            rc = f->real->pMethods->xWrite(f->real, registration.header, CAIRN_STORE_HEADER_SIZE, 0);
        }
        if (rc != SQLITE_OK) {
            cipherIOMethods.xClose(file);
            file->pMethods = NULL;
            return rc;
        }
    }
    return SQLITE_OK;
}

static int passDelete(sqlite3_vfs *v, const char *name, int syncDir) {
    (void)v;
    return realVFS->xDelete(realVFS, name, syncDir);
}
static int passAccess(sqlite3_vfs *v, const char *name, int flags, int *result) {
    (void)v;
    return realVFS->xAccess(realVFS, name, flags, result);
}
static int passFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) {
    (void)v;
    return realVFS->xFullPathname(realVFS, name, n, out);
}
static void *passDlOpen(sqlite3_vfs *v, const char *name) {
    (void)v;
    return realVFS->xDlOpen(realVFS, name);
}
static void passDlError(sqlite3_vfs *v, int n, char *message) {
    (void)v;
    realVFS->xDlError(realVFS, n, message);
}
static void (*passDlSym(sqlite3_vfs *v, void *handle, const char *symbol))(void) {
    (void)v;
    return realVFS->xDlSym(realVFS, handle, symbol);
}
static void passDlClose(sqlite3_vfs *v, void *handle) {
    (void)v;
    realVFS->xDlClose(realVFS, handle);
}
static int passRandomness(sqlite3_vfs *v, int n, char *out) {
    (void)v;
    return realVFS->xRandomness(realVFS, n, out);
}
static int passSleep(sqlite3_vfs *v, int microseconds) {
    (void)v;
    return realVFS->xSleep(realVFS, microseconds);
}
static int passCurrentTime(sqlite3_vfs *v, double *now) {
    (void)v;
    return realVFS->xCurrentTime(realVFS, now);
}
static int passGetLastError(sqlite3_vfs *v, int n, char *out) {
    (void)v;
    return realVFS->xGetLastError ? realVFS->xGetLastError(realVFS, n, out) : 0;
}
static int passCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *now) {
    (void)v;
    return realVFS->xCurrentTimeInt64(realVFS, now);
}
static int passSetSystemCall(sqlite3_vfs *v, const char *name, sqlite3_syscall_ptr call) {
    (void)v;
    return realVFS->xSetSystemCall(realVFS, name, call);
}
static sqlite3_syscall_ptr passGetSystemCall(sqlite3_vfs *v, const char *name) {
    (void)v;
    return realVFS->xGetSystemCall(realVFS, name);
}
static const char *passNextSystemCall(sqlite3_vfs *v, const char *name) {
    (void)v;
    return realVFS->xNextSystemCall(realVFS, name);
}

int cairn_store_cipher_install(cairn_seal_function seal, cairn_open_function open, cairn_context_function retain,
                               cairn_context_function release) {
    pthread_mutex_lock(&registryLock);
    if (realVFS != NULL) {
        pthread_mutex_unlock(&registryLock);
        return SQLITE_OK;
    }
    int rc = sqlite3_initialize();
    sqlite3_vfs *base = rc == SQLITE_OK ? sqlite3_vfs_find(NULL) : NULL;
    if (base == NULL || base->iVersion < 3) {
        pthread_mutex_unlock(&registryLock);
        return rc == SQLITE_OK ? SQLITE_ERROR : rc;
    }
    sealBlock = seal;
    openBlock = open;
    retainContext = retain;
    releaseContext = release;
    cipherVFS = (sqlite3_vfs){
        .iVersion = 3,
        .szOsFile = ROUND8((int)sizeof(CipherFile)) + base->szOsFile,
        .mxPathname = base->mxPathname,
        .zName = "cairn-store-cipher",
        .xOpen = cipherOpen,
        .xDelete = passDelete,
        .xAccess = passAccess,
        .xFullPathname = passFullPathname,
        .xDlOpen = passDlOpen,
        .xDlError = passDlError,
        .xDlSym = passDlSym,
        .xDlClose = passDlClose,
        .xRandomness = passRandomness,
        .xSleep = passSleep,
        .xCurrentTime = passCurrentTime,
        .xGetLastError = passGetLastError,
        .xCurrentTimeInt64 = passCurrentTimeInt64,
        .xSetSystemCall = passSetSystemCall,
        .xGetSystemCall = passGetSystemCall,
        .xNextSystemCall = passNextSystemCall,
    };
    realVFS = base;
    rc = sqlite3_vfs_register(&cipherVFS, 1);
    if (rc != SQLITE_OK) realVFS = NULL;
    pthread_mutex_unlock(&registryLock);
    return rc;
}

int cairn_store_cipher_register(const char *path, void *context, const uint8_t *file_id, const uint8_t *header,
                                int page_size) {
    Registration *r = calloc(1, sizeof(Registration));
    if (r == NULL) return SQLITE_NOMEM;
    r->path = strdup(path);
    if (r->path == NULL) {
        free(r);
        return SQLITE_NOMEM;
    }
    r->context = context;
    memcpy(r->fileID, file_id, 16);
    memcpy(r->header, header, CAIRN_STORE_HEADER_SIZE);
    r->pageSize = page_size;
    retainContext(context);
    cairn_store_cipher_unregister(path);
    pthread_mutex_lock(&registryLock);
    r->next = registry;
    registry = r;
    pthread_mutex_unlock(&registryLock);
    return SQLITE_OK;
}

void cairn_store_cipher_unregister(const char *path) {
    Registration *removed = NULL;
    pthread_mutex_lock(&registryLock);
    for (Registration **link = &registry; *link; link = &(*link)->next) {
        if (strcmp((*link)->path, path) == 0) {
            removed = *link;
            *link = removed->next;
            break;
        }
    }
    pthread_mutex_unlock(&registryLock);
    if (removed) {
        releaseContext(removed->context);
        free(removed->path);
        free(removed);
    }
}

int cairn_store_cipher_full_pathname(const char *path, char *output, int capacity) {
    sqlite3_vfs *vfs = realVFS ? realVFS : sqlite3_vfs_find(NULL);
    if (vfs == NULL) return SQLITE_ERROR;
    return vfs->xFullPathname(vfs, path, capacity, output);
}

int64_t cairn_store_cipher_failures(void) {
    return __atomic_load_n(&cipherFailures, __ATOMIC_RELAXED);
}
