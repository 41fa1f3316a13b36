#ifndef CAIRN_STORE_CIPHER_H
#define CAIRN_STORE_CIPHER_H

/*
 * The page cipher under Cairn's encrypted stores: an SQLite VFS that sits in front of the platform's default VFS.
 *
 * A file whose database path has been registered (with a cipher context) is stored as authenticated blocks:
 * the main database as `header | block 0 | block 1 | ...`, each block being `nonce (12) | ciphertext | tag (16)`.
 * The WAL and the rollback journal of that database use the same context, without a header. Every other file
 * goes straight to the default VFS, untouched. The cryptography itself lives in Swift (swift-crypto), reached
 * through the callbacks below; this file only maps SQLite's byte ranges onto blocks.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of clear header at the start of an encrypted database file (written by Swift, skipped here). */
#define CAIRN_STORE_HEADER_SIZE 128
/** Bytes each block carries beyond its plaintext: a 12-byte nonce and a 16-byte tag. */
#define CAIRN_STORE_BLOCK_OVERHEAD 28
/** Bytes of additional authenticated data given to the callbacks: file id (16), file kind (1), block index (8). */
#define CAIRN_STORE_AAD_SIZE 25

/** Seals `length` bytes of `plaintext` into `output` (`length + 28` bytes: nonce, ciphertext, tag). 0 on success. */
typedef int (*cairn_seal_function)(void *context, const uint8_t *aad, const uint8_t *plaintext, int length,
                                   uint8_t *output);
/** Opens `length + 28` bytes of `input` into `length` bytes of `plaintext`. 0 on success, nonzero if inauthentic. */
typedef int (*cairn_open_function)(void *context, const uint8_t *aad, const uint8_t *input, int length,
                                   uint8_t *plaintext);
/** Retains or releases a context while a file uses it. */
typedef void (*cairn_context_function)(void *context);

/** Installs the VFS as SQLite's default (once; later calls do nothing). Returns an SQLite result code. */
int cairn_store_cipher_install(cairn_seal_function seal, cairn_open_function open, cairn_context_function retain,
                               cairn_context_function release);

/**
 * Encrypts the database at `path` (as SQLite names it, see `cairn_store_cipher_full_pathname`), its WAL and its
 * journal with `context`. `file_id` (16 bytes) is bound into every block; `header` (CAIRN_STORE_HEADER_SIZE bytes)
 * is written when SQLite creates the file. `page_size` sizes the WAL's blocks (one frame each). Replaces an earlier
 * registration of the same path. The context is retained.
 */
int cairn_store_cipher_register(const char *path, void *context, const uint8_t *file_id, const uint8_t *header,
                                int page_size);

/** Forgets the registration of `path`: files opened later go to the default VFS. Open files keep their context. */
void cairn_store_cipher_unregister(const char *path);

/** Writes into `output` the full path SQLite will use for `path` (the default VFS's xFullPathname). */
int cairn_store_cipher_full_pathname(const char *path, char *output, int capacity);

/** Counts the blocks that failed authentication since the process started (for diagnostics and tests). */
int64_t cairn_store_cipher_failures(void);

#ifdef __cplusplus
}
#endif

#endif
