/*
** The binary-file toolkit: the one place for what every engine file format
** needs besides durability (which is atomic_file.h).  Never installed.
**
**   - little-endian fixed-width fields (rv__put_u32 ... rv__get_u64), the
**     host byte-order test and an in-place item byte swap for big-endian
**     hosts, and 8-byte section padding;
**   - the two checksums of the formats: CRC-32C (Castagnoli, slicing by 8;
**     the BM25 index, lexical/io.c) and rv__sum64 (a streaming 64-bit
**     multiply-rotate sum; the flat vector index, dense/flat_io.c).  They
**     differ because the formats shipped that way; both are frozen (files
**     written by earlier versions must keep loading), so new formats should
**     pick one of these two rather than add a third.
**
** Writers: build the image with these helpers and write it through
** rv__atomic_begin / rv__write_all / rv__atomic_commit (temporary sibling,
** fsync, rename, fsync of the directory).  Readers: check magic, version,
** sizes, then the checksum, before trusting any field.
**
** Thread-safety: everything here is reentrant; a checksum state or CRC
** table belongs to its caller.
*/
#ifndef ROWVOI_CORE_BINFILE_H
#define ROWVOI_CORE_BINFILE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../internal.h"

/* ---------------------------------------------------- little-endian I/O */

static inline int rv__host_le(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static inline void rv__put_u32(void *dst, uint32_t v) {
    unsigned char *p = (unsigned char *)dst;
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline void rv__put_u64(void *dst, uint64_t v) {
    unsigned char *p = (unsigned char *)dst;
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t rv__get_u32(const void *src) {
    const unsigned char *p = (const unsigned char *)src;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t rv__get_u64(const void *src) {
    const unsigned char *p = (const unsigned char *)src;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* n rounded up to a multiple of 8 (section padding). */
static inline uint64_t rv__pad8(uint64_t n) {
    return (n + 7) & ~(uint64_t)7;
}

/* Reverse the bytes of each `width`-byte item in place (big-endian hosts). */
void rv__swap_items(void *data, size_t count, size_t width);

/* ------------------------------------------------------ opening files */

/* Readers open their file with rv__open_read, then check it with
** rv__regular_size before reading a byte.  rv__open_read opens path
** read-only with O_NONBLOCK | O_NOCTTY | O_CLOEXEC: a FIFO or a device
** opens at once instead of blocking (nothing is read from it), and the
** descriptor does not leak into child processes.  Symbolic links are
** followed: the caller named the path (hosts that must not follow them open
** the file themselves, with O_NOFOLLOW, and pass the descriptor to the
** *_load_fd functions).  Returns the descriptor, or -1 with errno set.
** rv__regular_size fstats fd: RV_OK and *size for a regular file;
** RV_E_IO naming name and what it is ("a FIFO (named pipe)", "a directory",
** ...) for anything else; RV_E_RANGE when the size exceeds SIZE_MAX. */
int rv__open_read(const char *path);
rv_status rv__regular_size(int fd, const char *name, uint64_t *size);

/* ------------------------------------------------------------ CRC-32C */

/* CRC-32C (Castagnoli), slicing by 8.  The table is built by the caller
** (8 KiB; on the heap or stack: no global state).  rv__crc32c continues a
** running crc (start with 0) over n bytes. */
typedef struct {
    uint32_t t[8][256];
} rv__crc_table;
void rv__crc32c_init(rv__crc_table *tab);
uint32_t rv__crc32c(const rv__crc_table *tab, uint32_t crc, const void *data, size_t n);

/* ------------------------------------------------------------- sum64 */

/* Streaming 64-bit checksum (four 64-bit lanes of multiply-rotate rounds
** over little-endian words, then an avalanche finish).  Not cryptographic:
** it detects accidental damage. */
typedef struct rv__sum64 {
    uint64_t acc[4];
    uint8_t buf[32];
    size_t buffered;
    uint64_t total;
} rv__sum64;

void rv__sum64_init(rv__sum64 *s, uint64_t seed);
void rv__sum64_update(rv__sum64 *s, const void *data, size_t len);
uint64_t rv__sum64_final(const rv__sum64 *s);

#endif /* ROWVOI_CORE_BINFILE_H */
