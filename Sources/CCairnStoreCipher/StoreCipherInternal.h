// Shared inside CCairnStoreCipher (not public): the encrypted file's layout, and the block operations of
// StoreCipherBlocks.c that StoreCipherIO.c (SQLite's I/O methods) and StoreCipherVFS.c (opening) build on.

#ifndef CAIRN_STORE_CIPHER_INTERNAL_H
#define CAIRN_STORE_CIPHER_INTERNAL_H

#include "CairnStoreCipher.h"

#include <sqlite3.h>
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

/// The default VFS every file really goes to.
extern sqlite3_vfs *realVFS;
/// The I/O methods of an encrypted file (StoreCipherIO.c).
extern const sqlite3_io_methods cipherIOMethods;
/// The Swift callbacks.
extern cairn_seal_function sealBlock;
extern cairn_open_function openBlock;
extern cairn_context_function retainContext;
extern cairn_context_function releaseContext;
/// Blocks that failed authentication.
extern int64_t cipherFailures;

// MARK: - Geometry: logical byte ranges onto blocks

static inline sqlite3_int64 blockStart(const CipherFile *f, sqlite3_int64 index) {
    return index == 0 ? 0 : f->firstBlock + (index - 1) * f->blockSize;
}

static inline sqlite3_int64 blockLength(const CipherFile *f, sqlite3_int64 index) {
    return index == 0 ? f->firstBlock : f->blockSize;
}

static inline sqlite3_int64 blockIndex(const CipherFile *f, sqlite3_int64 offset) {
    return offset < f->firstBlock ? 0 : 1 + (offset - f->firstBlock) / f->blockSize;
}

static inline sqlite3_int64 physicalOffset(const CipherFile *f, sqlite3_int64 index) {
    if (index == 0) return f->headerSize;
    return f->headerSize + f->firstBlock + OVERHEAD + (index - 1) * (f->blockSize + OVERHEAD);
}

// The plaintext size of a file whose stored size is `physical`.
static inline sqlite3_int64 logicalSize(const CipherFile *f, sqlite3_int64 physical) {
    sqlite3_int64 rest = physical - f->headerSize;
    if (rest <= OVERHEAD) return 0;
    if (rest <= f->firstBlock + OVERHEAD) return rest - OVERHEAD;
    rest -= f->firstBlock + OVERHEAD;
    sqlite3_int64 full = rest / (f->blockSize + OVERHEAD);
    sqlite3_int64 tail = rest % (f->blockSize + OVERHEAD);
    return f->firstBlock + full * f->blockSize + (tail > OVERHEAD ? tail - OVERHEAD : 0);
}

static inline void makeAAD(const CipherFile *f, sqlite3_int64 index, uint8_t *aad) {
    memcpy(aad, f->fileID, 16);
    aad[16] = (uint8_t)f->kind;
    for (int i = 0; i < 8; i++) aad[17 + i] = (uint8_t)((uint64_t)index >> (56 - 8 * i));
}

static inline int currentSize(CipherFile *f, sqlite3_int64 *size) {
    sqlite3_int64 physical = 0;
    int rc = f->real->pMethods->xFileSize(f->real, &physical);
    if (rc == SQLITE_OK) *size = logicalSize(f, physical);
    return rc;
}

// MARK: - Blocks (StoreCipherBlocks.c)

/// Reads and authenticates block `index`, which holds `length` bytes of plaintext, into `f->plain`.
int readBlock(CipherFile *f, sqlite3_int64 index, int length);
/// Reads and authenticates block `index` whole; SQLITE_IOERR_SHORT_READ (nothing read) when the file ends inside it.
/// Only the last block of a file can be short, so no file size is needed for the others.
int readWholeBlock(CipherFile *f, sqlite3_int64 index);
/// Seals the first `length` bytes of `f->plain` as block `index`.
int writeBlock(CipherFile *f, sqlite3_int64 index, int length);
/// Grows the file with sealed zeros from `size` up to `target` bytes.
int extendTo(CipherFile *f, sqlite3_int64 size, sqlite3_int64 target);
/// Writes `amount` bytes at `offset`, reading back and resealing the blocks it only partly covers.
int writeRange(CipherFile *f, const void *buffer, int amount, sqlite3_int64 offset);
/// Writes a held WAL frame header on its own.
int flushHeld(CipherFile *f);

#endif
