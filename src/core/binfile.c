/*
** The binary-file toolkit: checksums and byte-order helpers shared by every
** engine file format.  See binfile.h.
*/
#define _POSIX_C_SOURCE 200809L
#include "binfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void rv__swap_items(void *data, size_t count, size_t width) {
    uint8_t *p = (uint8_t *)data;
    for (size_t i = 0; i < count; i++, p += width)
        for (size_t a = 0, b = width - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* ------------------------------------------------------ opening files */

int rv__open_read(const char *path) {
    int fd;
    do {
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

/* What a file type is called in messages. */
static const char *rv__kind(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    return "not a regular file";
}

rv_status rv__regular_size(int fd, const char *name, uint64_t *size) {
    struct stat sb;
    if (fstat(fd, &sb) != 0) return rv__error(RV_E_IO, "cannot stat %s: %s", name, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return rv__error(RV_E_IO,
                         "%s is %s, not a regular file: an index file must be a regular "
                         "file (nothing was read from it)",
                         name, rv__kind(sb.st_mode));
    if (sb.st_size < 0 || (uint64_t)sb.st_size > (uint64_t)SIZE_MAX)
        return rv__error(RV_E_RANGE, "%s is too large for memory", name);
    *size = (uint64_t)sb.st_size;
    return RV_OK;
}

/* ------------------------------------------------------------ CRC-32C */

void rv__crc32c_init(rv__crc_table *tab) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        tab->t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int s = 1; s < 8; s++)
            tab->t[s][i] = (tab->t[s - 1][i] >> 8) ^ tab->t[0][tab->t[s - 1][i] & 0xFF];
}

uint32_t rv__crc32c(const rv__crc_table *tab, uint32_t crc, const void *data, size_t n) {
    const unsigned char *p = data;
    uint32_t c = ~crc;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        c = tab->t[7][lo & 0xFF] ^ tab->t[6][(lo >> 8) & 0xFF] ^ tab->t[5][(lo >> 16) & 0xFF] ^
            tab->t[4][lo >> 24] ^ tab->t[3][p[4]] ^ tab->t[2][p[5]] ^ tab->t[1][p[6]] ^
            tab->t[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--) c = (c >> 8) ^ tab->t[0][(c ^ *p++) & 0xFF];
    return ~c;
}

/* ------------------------------------------------------------- checksum */

#define RV__P1 0x9E3779B185EBCA87ULL
#define RV__P2 0xC2B2AE3D27D4EB4FULL
#define RV__P3 0x165667B19E3779F9ULL
#define RV__P4 0x85EBCA77C2B2AE63ULL

static inline uint64_t rv__rotl64(uint64_t x, unsigned r) {
    return (x << r) | (x >> (64u - r));
}

static inline uint64_t rv__le64(const uint8_t *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

static inline uint64_t rv__sum_round(uint64_t acc, uint64_t w) {
    acc += w * RV__P2;
    acc = rv__rotl64(acc, 31);
    return acc * RV__P1;
}

void rv__sum64_init(rv__sum64 *s, uint64_t seed) {
    s->acc[0] = seed + RV__P1 + RV__P2;
    s->acc[1] = seed + RV__P2;
    s->acc[2] = seed;
    s->acc[3] = seed - RV__P1;
    s->buffered = 0;
    s->total = 0;
}

static void rv__sum64_block(uint64_t acc[4], const uint8_t *p) {
    acc[0] = rv__sum_round(acc[0], rv__le64(p));
    acc[1] = rv__sum_round(acc[1], rv__le64(p + 8));
    acc[2] = rv__sum_round(acc[2], rv__le64(p + 16));
    acc[3] = rv__sum_round(acc[3], rv__le64(p + 24));
}

void rv__sum64_update(rv__sum64 *s, const void *data, size_t len) {
    const uint8_t *p = (const uint8_t *)data;
    s->total += len;
    if (s->buffered) {
        size_t take = 32 - s->buffered;
        if (take > len) take = len;
        memcpy(s->buf + s->buffered, p, take);
        s->buffered += take;
        p += take;
        len -= take;
        if (s->buffered < 32) return;
        rv__sum64_block(s->acc, s->buf);
        s->buffered = 0;
    }
    uint64_t a[4] = {s->acc[0], s->acc[1], s->acc[2], s->acc[3]};
    while (len >= 32) {
        rv__sum64_block(a, p);
        p += 32;
        len -= 32;
    }
    memcpy(s->acc, a, sizeof a);
    if (len) {
        memcpy(s->buf, p, len);
        s->buffered = len;
    }
}

uint64_t rv__sum64_final(const rv__sum64 *s) {
    uint64_t h = rv__rotl64(s->acc[0], 1) + rv__rotl64(s->acc[1], 7) + rv__rotl64(s->acc[2], 12) +
                 rv__rotl64(s->acc[3], 18);
    for (int i = 0; i < 4; i++) {
        h ^= rv__sum_round(0, s->acc[i]);
        h = h * RV__P1 + RV__P4;
    }
    h += s->total;
    size_t i = 0;
    for (; i + 8 <= s->buffered; i += 8) {
        h ^= rv__sum_round(0, rv__le64(s->buf + i));
        h = rv__rotl64(h, 27) * RV__P1 + RV__P4;
    }
    for (; i < s->buffered; i++) {
        h ^= (uint64_t)s->buf[i] * 0x27D4EB2F165667C5ULL;
        h = rv__rotl64(h, 11) * RV__P1;
    }
    h ^= h >> 33;
    h *= RV__P2;
    h ^= h >> 29;
    h *= RV__P3;
    h ^= h >> 32;
    return h;
}
