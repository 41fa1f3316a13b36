// The VFS of CairnStoreCipher.h: registered paths are stored as authenticated blocks, other files pass through.

#include "CairnStoreCipher.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define OVERHEAD CAIRN_STORE_BLOCK_OVERHEAD
#define ROUND8(n) (((n) + 7) & ~7)

enum { KIND_DATABASE = 1, KIND_WAL = 2, KIND_JOURNAL = 3 };

typedef struct Registration {
    char *path;
    void *context;
    uint8_t fileID[16];
    uint8_t header[CAIRN_STORE_HEADER_SIZE];
    int pageSize;
    struct Registration *next;
} Registration;

// An open file. `base` comes first, as SQLite requires; the default VFS's own file follows at `real`.
typedef struct CipherFile {
    sqlite3_file base;
    sqlite3_file *real;
    void *context;
    uint8_t fileID[16];
    int kind;
    sqlite3_int64 headerSize;  // physical bytes before block 0
    sqlite3_int64 firstBlock;  // plaintext bytes of block 0
    sqlite3_int64 blockSize;   // plaintext bytes of every later block
    uint8_t *plain;            // scratch: one block of plaintext
    uint8_t *sealed;           // scratch: one block as stored
    // A WAL frame header (24 bytes) waits here for the page SQLite writes right after it, so that the frame is
    // sealed once as one block instead of being read back and sealed again. Any other call writes it first.
    uint8_t held[64];
    int heldLength;
    sqlite3_int64 heldOffset;
} CipherFile;

static int flushHeld(CipherFile *f);

static sqlite3_vfs *realVFS = NULL;
static sqlite3_vfs cipherVFS;
static sqlite3_io_methods cipherMethods;
static cairn_seal_function sealBlock = NULL;
static cairn_open_function openBlock = NULL;
static cairn_context_function retainContext = NULL;
static cairn_context_function releaseContext = NULL;
static pthread_mutex_t registryLock = PTHREAD_MUTEX_INITIALIZER;
static Registration *registry = NULL;
static int64_t failures = 0;

// MARK: - Geometry: logical byte ranges onto blocks

static sqlite3_int64 blockStart(const CipherFile *f, sqlite3_int64 index) {
    return index == 0 ? 0 : f->firstBlock + (index - 1) * f->blockSize;
}

static sqlite3_int64 blockLength(const CipherFile *f, sqlite3_int64 index) {
    return index == 0 ? f->firstBlock : f->blockSize;
}

static sqlite3_int64 blockIndex(const CipherFile *f, sqlite3_int64 offset) {
    return offset < f->firstBlock ? 0 : 1 + (offset - f->firstBlock) / f->blockSize;
}

static sqlite3_int64 physicalOffset(const CipherFile *f, sqlite3_int64 index) {
    if (index == 0) return f->headerSize;
    return f->headerSize + f->firstBlock + OVERHEAD + (index - 1) * (f->blockSize + OVERHEAD);
}

// The plaintext size of a file whose stored size is `physical`.
static sqlite3_int64 logicalSize(const CipherFile *f, sqlite3_int64 physical) {
    sqlite3_int64 rest = physical - f->headerSize;
    if (rest <= OVERHEAD) return 0;
    if (rest <= f->firstBlock + OVERHEAD) return rest - OVERHEAD;
    rest -= f->firstBlock + OVERHEAD;
    sqlite3_int64 full = rest / (f->blockSize + OVERHEAD);
    sqlite3_int64 tail = rest % (f->blockSize + OVERHEAD);
    return f->firstBlock + full * f->blockSize + (tail > OVERHEAD ? tail - OVERHEAD : 0);
}

static void makeAAD(const CipherFile *f, sqlite3_int64 index, uint8_t *aad) {
    memcpy(aad, f->fileID, 16);
    aad[16] = (uint8_t)f->kind;
    for (int i = 0; i < 8; i++) aad[17 + i] = (uint8_t)((uint64_t)index >> (56 - 8 * i));
}

static int currentSize(CipherFile *f, sqlite3_int64 *size) {
    sqlite3_int64 physical = 0;
    int rc = f->real->pMethods->xFileSize(f->real, &physical);
    if (rc == SQLITE_OK) *size = logicalSize(f, physical);
    return rc;
}

// MARK: - Blocks

// Reads and authenticates block `index`, which holds `length` bytes of plaintext, into `f->plain`.
static int readBlock(CipherFile *f, sqlite3_int64 index, int length) {
    int rc = f->real->pMethods->xRead(f->real, f->sealed, length + OVERHEAD, physicalOffset(f, index));
    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_DATA : rc;
    uint8_t aad[CAIRN_STORE_AAD_SIZE];
    makeAAD(f, index, aad);
    if (openBlock(f->context, aad, f->sealed, length, f->plain) != 0) {
        __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        return SQLITE_IOERR_DATA;
    }
    return SQLITE_OK;
}

// Seals the first `length` bytes of `f->plain` as block `index`.
static int writeBlock(CipherFile *f, sqlite3_int64 index, int length) {
    uint8_t aad[CAIRN_STORE_AAD_SIZE];
    makeAAD(f, index, aad);
    if (sealBlock(f->context, aad, f->plain, length, f->sealed) != 0) return SQLITE_IOERR_WRITE;
    return f->real->pMethods->xWrite(f->real, f->sealed, length + OVERHEAD, physicalOffset(f, index));
}

// Grows the file with sealed zeros up to `target` bytes (blocks must be whole before a later one starts).
static int extendTo(CipherFile *f, sqlite3_int64 size, sqlite3_int64 target) {
    while (size < target) {
        sqlite3_int64 index = blockIndex(f, size);
        sqlite3_int64 start = blockStart(f, index);
        int have = (int)(size - start);
        int want = (int)blockLength(f, index);
        if (start + want > target) want = (int)(target - start);
        if (have > 0) {
            int rc = readBlock(f, index, have);
            if (rc != SQLITE_OK) return rc;
        }
        memset(f->plain + have, 0, want - have);
        int rc = writeBlock(f, index, want);
        if (rc != SQLITE_OK) return rc;
        size = start + want;
    }
    return SQLITE_OK;
}

// MARK: - I/O methods of an encrypted file

static int cipherClose(sqlite3_file *file) {
    CipherFile *f = (CipherFile *)file;
    int flushed = f->real->pMethods && f->plain ? flushHeld(f) : SQLITE_OK;
    int rc = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
    if (rc == SQLITE_OK) rc = flushed;
    if (f->context) releaseContext(f->context);
    sqlite3_free(f->plain);
    sqlite3_free(f->sealed);
    f->context = NULL;
    f->plain = f->sealed = NULL;
    return rc;
}

static int cipherRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    CipherFile *f = (CipherFile *)file;
    sqlite3_int64 size;
    int rc = flushHeld(f);
    if (rc != SQLITE_OK) return rc;
    rc = currentSize(f, &size);
    if (rc != SQLITE_OK) return rc;
    uint8_t *out = buffer;
    sqlite3_int64 position = offset, end = offset + amount;
    while (position < end) {
        if (position >= size) {
            memset(out + (position - offset), 0, (size_t)(end - position));
            return SQLITE_IOERR_SHORT_READ;
        }
        sqlite3_int64 index = blockIndex(f, position);
        sqlite3_int64 start = blockStart(f, index);
        sqlite3_int64 stop = start + blockLength(f, index);
        if (stop > size) stop = size;
        rc = readBlock(f, index, (int)(stop - start));
        if (rc != SQLITE_OK) return rc;
        sqlite3_int64 upto = stop < end ? stop : end;
        memcpy(out + (position - offset), f->plain + (position - start), (size_t)(upto - position));
        position = upto;
    }
    return SQLITE_OK;
}

// Writes `amount` bytes at `offset`, reading back and resealing the blocks it only partly covers.
static int writeRange(CipherFile *f, const void *buffer, int amount, sqlite3_int64 offset) {
    sqlite3_int64 size;
    int rc = currentSize(f, &size);
    if (rc != SQLITE_OK) return rc;
    sqlite3_int64 firstStart = blockStart(f, blockIndex(f, offset));
    if (firstStart > size) {
        rc = extendTo(f, size, firstStart);
        if (rc != SQLITE_OK) return rc;
        size = firstStart;
    }
    const uint8_t *in = buffer;
    sqlite3_int64 position = offset, end = offset + amount;
    while (position < end) {
        sqlite3_int64 index = blockIndex(f, position);
        sqlite3_int64 start = blockStart(f, index);
        sqlite3_int64 stop = start + blockLength(f, index);
        sqlite3_int64 upto = stop < end ? stop : end;
        int existing = size > start ? (int)((size < stop ? size : stop) - start) : 0;
        int from = (int)(position - start), to = (int)(upto - start);
        if (existing > 0 && (from > 0 || to < existing)) {
            rc = readBlock(f, index, existing);
            if (rc != SQLITE_OK) return rc;
        }
        if (from > existing) memset(f->plain + existing, 0, (size_t)(from - existing));
        memcpy(f->plain + from, in + (position - offset), (size_t)(to - from));
        rc = writeBlock(f, index, to > existing ? to : existing);
        if (rc != SQLITE_OK) return rc;
        if (upto > size) size = upto;
        position = upto;
    }
    return SQLITE_OK;
}

// Writes a held frame header on its own.
static int flushHeld(CipherFile *f) {
    if (f->heldLength == 0) return SQLITE_OK;
    int length = f->heldLength;
    f->heldLength = 0;
    return writeRange(f, f->held, length, f->heldOffset);
}

static int cipherWrite(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    CipherFile *f = (CipherFile *)file;
    if (f->heldLength > 0) {
        sqlite3_int64 index = blockIndex(f, f->heldOffset);
        sqlite3_int64 start = blockStart(f, index);
        if (offset == f->heldOffset + f->heldLength && f->heldOffset == start && offset + amount == start + blockLength(f, index)) {
            // The held header and this page make the whole frame: seal it once, with nothing to read back.
            sqlite3_int64 size;
            int rc = currentSize(f, &size);
            if (rc == SQLITE_OK && start > size) rc = extendTo(f, size, start);
            if (rc != SQLITE_OK) return rc;
            memcpy(f->plain, f->held, (size_t)f->heldLength);
            memcpy(f->plain + f->heldLength, buffer, (size_t)amount);
            f->heldLength = 0;
            return writeBlock(f, index, (int)blockLength(f, index));
        }
        int rc = flushHeld(f);
        if (rc != SQLITE_OK) return rc;
    }
    if (f->kind == KIND_WAL && amount <= (int)sizeof(f->held)) {
        sqlite3_int64 index = blockIndex(f, offset);
        if (index > 0 && offset == blockStart(f, index) && amount < blockLength(f, index)) {
            memcpy(f->held, buffer, (size_t)amount);
            f->heldLength = amount;
            f->heldOffset = offset;
            return SQLITE_OK;
        }
    }
    return writeRange(f, buffer, amount, offset);
}

static int cipherTruncate(sqlite3_file *file, sqlite3_int64 target) {
    CipherFile *f = (CipherFile *)file;
    sqlite3_int64 size;
    int rc = flushHeld(f);
    if (rc != SQLITE_OK) return rc;
    rc = currentSize(f, &size);
    if (rc != SQLITE_OK) return rc;
    if (target >= size) return extendTo(f, size, target);
    sqlite3_int64 index = blockIndex(f, target);
    sqlite3_int64 start = blockStart(f, index);
    sqlite3_int64 physical = physicalOffset(f, index);
    if (target > start) {
        rc = readBlock(f, index, (int)(target - start));
        if (rc == SQLITE_OK) rc = writeBlock(f, index, (int)(target - start));
        if (rc != SQLITE_OK) return rc;
        physical += target - start + OVERHEAD;
    }
    return f->real->pMethods->xTruncate(f->real, physical);
}

static int cipherSync(sqlite3_file *file, int flags) {
    CipherFile *f = (CipherFile *)file;
    int rc = flushHeld(f);
    return rc == SQLITE_OK ? f->real->pMethods->xSync(f->real, flags) : rc;
}

static int cipherFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    CipherFile *f = (CipherFile *)file;
    int rc = flushHeld(f);
    return rc == SQLITE_OK ? currentSize(f, size) : rc;
}

static int cipherLock(sqlite3_file *file, int level) {
    CipherFile *f = (CipherFile *)file;
    return f->real->pMethods->xLock(f->real, level);
}

static int cipherUnlock(sqlite3_file *file, int level) {
    CipherFile *f = (CipherFile *)file;
    return f->real->pMethods->xUnlock(f->real, level);
}

static int cipherCheckReservedLock(sqlite3_file *file, int *result) {
    CipherFile *f = (CipherFile *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, result);
}

static int cipherFileControl(sqlite3_file *file, int op, void *argument) {
    CipherFile *f = (CipherFile *)file;
    int flushed = flushHeld(f);
    if (flushed != SQLITE_OK) return flushed;
    // Size hints and chunking would grow the stored file by plaintext amounts; memory mapping would bypass the
    // cipher. None of them is needed for correctness.
    if (op == SQLITE_FCNTL_SIZE_HINT || op == SQLITE_FCNTL_CHUNK_SIZE) return SQLITE_OK;
    if (op == SQLITE_FCNTL_MMAP_SIZE) {
        if (argument) *(sqlite3_int64 *)argument = 0;
        return SQLITE_OK;
    }
    return f->real->pMethods->xFileControl(f->real, op, argument);
}

static int cipherSectorSize(sqlite3_file *file) {
    CipherFile *f = (CipherFile *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int cipherDeviceCharacteristics(sqlite3_file *file) {
    CipherFile *f = (CipherFile *)file;
    int atomic = SQLITE_IOCAP_ATOMIC | SQLITE_IOCAP_ATOMIC512 | SQLITE_IOCAP_ATOMIC1K | SQLITE_IOCAP_ATOMIC2K |
                 SQLITE_IOCAP_ATOMIC4K | SQLITE_IOCAP_ATOMIC8K | SQLITE_IOCAP_ATOMIC16K | SQLITE_IOCAP_ATOMIC32K |
                 SQLITE_IOCAP_ATOMIC64K | SQLITE_IOCAP_BATCH_ATOMIC;
    return f->real->pMethods->xDeviceCharacteristics(f->real) & ~atomic;
}

// The shared-memory index holds page numbers and frame positions, never page content: it passes through.
static int cipherShmMap(sqlite3_file *file, int page, int size, int extend, void volatile **memory) {
    CipherFile *f = (CipherFile *)file;
    return f->real->pMethods->xShmMap(f->real, page, size, extend, memory);
}

static int cipherShmLock(sqlite3_file *file, int offset, int count, int flags) {
    CipherFile *f = (CipherFile *)file;
    return f->real->pMethods->xShmLock(f->real, offset, count, flags);
}

static void cipherShmBarrier(sqlite3_file *file) {
    CipherFile *f = (CipherFile *)file;
    f->real->pMethods->xShmBarrier(f->real);
}

static int cipherShmUnmap(sqlite3_file *file, int deleteFlag) {
    CipherFile *f = (CipherFile *)file;
    return f->real->pMethods->xShmUnmap(f->real, deleteFlag);
}

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
    file->pMethods = &cipherMethods;
    if (kind == KIND_DATABASE) {
        sqlite3_int64 physical = 0;
        rc = f->real->pMethods->xFileSize(f->real, &physical);
        if (rc == SQLITE_OK && physical == 0 && !(flags & SQLITE_OPEN_READONLY)) {
            rc = f->real->pMethods->xWrite(f->real, registration.header, CAIRN_STORE_HEADER_SIZE, 0);
        }
        if (rc != SQLITE_OK) {
            cipherClose(file);
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
    cipherMethods = (sqlite3_io_methods){
        .iVersion = 2,
        .xClose = cipherClose,
        .xRead = cipherRead,
        .xWrite = cipherWrite,
        .xTruncate = cipherTruncate,
        .xSync = cipherSync,
        .xFileSize = cipherFileSize,
        .xLock = cipherLock,
        .xUnlock = cipherUnlock,
        .xCheckReservedLock = cipherCheckReservedLock,
        .xFileControl = cipherFileControl,
        .xSectorSize = cipherSectorSize,
        .xDeviceCharacteristics = cipherDeviceCharacteristics,
        .xShmMap = cipherShmMap,
        .xShmLock = cipherShmLock,
        .xShmBarrier = cipherShmBarrier,
        .xShmUnmap = cipherShmUnmap,
    };
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
    return __atomic_load_n(&failures, __ATOMIC_RELAXED);
}
