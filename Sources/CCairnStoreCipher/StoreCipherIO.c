// SQLite's I/O methods for an encrypted file: byte ranges through the blocks, everything else to the real file.

#include "StoreCipherInternal.h"

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
    int rc = flushHeld(f);
    if (rc != SQLITE_OK) return rc;
    // The file's size is asked only when a block comes up short: whole blocks need no system call for it.
    sqlite3_int64 size = -1;
    uint8_t *out = buffer;
    sqlite3_int64 position = offset, end = offset + amount;
    while (position < end) {
        if (size >= 0 && position >= size) {
            memset(out + (position - offset), 0, (size_t)(end - position));
            return SQLITE_IOERR_SHORT_READ;
        }
        sqlite3_int64 index = blockIndex(f, position);
        sqlite3_int64 start = blockStart(f, index);
        sqlite3_int64 stop = start + blockLength(f, index);
        if (size < 0) {
            rc = readWholeBlock(f, index);
            if (rc == SQLITE_IOERR_SHORT_READ) {
                rc = currentSize(f, &size);
                if (rc != SQLITE_OK) return rc;
                continue;
            }
        } else {
            if (stop > size) stop = size;
            rc = readBlock(f, index, (int)(stop - start));
        }
        if (rc != SQLITE_OK) return rc;
        sqlite3_int64 upto = stop < end ? stop : end;
        memcpy(out + (position - offset), f->plain + (position - start), (size_t)(upto - position));
        position = upto;
    }
    return SQLITE_OK;
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

const sqlite3_io_methods cipherIOMethods = {
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
