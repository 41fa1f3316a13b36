// The blocks of an encrypted file: reading, sealing, growing and partial writes (see StoreCipherInternal.h).

#include "StoreCipherInternal.h"

// Opens the sealed block in `f->sealed` (`length` bytes of plaintext) into `f->plain`.
static int authenticate(CipherFile *f, sqlite3_int64 index, int length) {
    uint8_t aad[CAIRN_STORE_AAD_SIZE];
    makeAAD(f, index, aad);
    if (openBlock(f->context, aad, f->sealed, length, f->plain) != 0) {
        __atomic_add_fetch(&cipherFailures, 1, __ATOMIC_RELAXED);
        return SQLITE_IOERR_DATA;
    }
    return SQLITE_OK;
}

// Reads and authenticates block `index`, which holds `length` bytes of plaintext, into `f->plain`.
int readBlock(CipherFile *f, sqlite3_int64 index, int length) {
    int rc = f->real->pMethods->xRead(f->real, f->sealed, length + OVERHEAD, physicalOffset(f, index));
    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_DATA : rc;
    return authenticate(f, index, length);
}

int readWholeBlock(CipherFile *f, sqlite3_int64 index) {
    int length = (int)blockLength(f, index);
    int rc = f->real->pMethods->xRead(f->real, f->sealed, length + OVERHEAD, physicalOffset(f, index));
    return rc == SQLITE_OK ? authenticate(f, index, length) : rc;
}

// Seals the first `length` bytes of `f->plain` as block `index`.
int writeBlock(CipherFile *f, sqlite3_int64 index, int length) {
    uint8_t aad[CAIRN_STORE_AAD_SIZE];
    makeAAD(f, index, aad);
    if (sealBlock(f->context, aad, f->plain, length, f->sealed) != 0) return SQLITE_IOERR_WRITE;
    return f->real->pMethods->xWrite(f->real, f->sealed, length + OVERHEAD, physicalOffset(f, index));
}

// Grows the file with sealed zeros up to `target` bytes (blocks must be whole before a later one starts).
int extendTo(CipherFile *f, sqlite3_int64 size, sqlite3_int64 target) {
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

// Writes `amount` bytes at `offset`, reading back and resealing the blocks it only partly covers.
int writeRange(CipherFile *f, const void *buffer, int amount, sqlite3_int64 offset) {
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
int flushHeld(CipherFile *f) {
    if (f->heldLength == 0) return SQLITE_OK;
    int length = f->heldLength;
    f->heldLength = 0;
    return writeRange(f, f->held, length, f->heldOffset);
}
