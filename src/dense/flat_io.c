/*
** Saving and loading flat indexes.
**
** File layout (all integers little-endian):
**
**   offset size  field
**        0    8  magic "\x89RVFLAT\n" (the high byte and the newline catch
**                text-mode transfers, as PNG's signature does)
**        8    4  format version (RV_FLAT_FORMAT_VERSION)
**       12    4  header size (96)
**       16    4  dim
**       20    4  metric (rv_metric)
**       24    4  storage (rv_flat_storage)
**       28    4  rescore factor
**       32    8  n, the number of vectors
**       40    8  next id (one past the largest id ever added)
**       48    8  payload size in bytes = n * 8 + n * dim * 4
**       56    8  payload checksum
**       64   24  reserved, zero
**       88    8  header checksum over bytes 0 .. 87
**       96       payload: n int64 ids, then n rows of dim float32
**
** The compact (float16 / int8) copies are derived from the float32 rows on
** load, so the file holds float32 only and every storage kind round-trips
** exactly.  The magic and the version sit at fixed offsets in every version,
** so a future reader can still say "version 2" rather than "corrupt".
**
** One writer (rv__write_image) serves files and memory, one reader (rv__load_image)
** both sources, so rv_flat_save_buffer's bytes are the file's bytes.  Files
** are replaced through core/atomic_file (temporary, fsync, rename).
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/atomic_file.h"
#include "flat_internal.h"

#define RV__HDR   96u
#define RV__BATCH 256u
static const uint8_t rv__magic[8] = {0x89, 'R', 'V', 'F', 'L', 'A', 'T', '\n'};

static rv_status rv__io_error(const char *what, const char *path) {
    return rv__error(RV_E_IO, "%s %s: %s", what, path, strerror(errno));
}

static void rv__fill_header(uint8_t *h, const rv_flat *ix, uint64_t payload, uint64_t sum) {
    memset(h, 0, RV__HDR);
    memcpy(h, rv__magic, 8);
    rv__put_u32(h + 8, RV_FLAT_FORMAT_VERSION);
    rv__put_u32(h + 12, RV__HDR);
    rv__put_u32(h + 16, ix->dim);
    rv__put_u32(h + 20, (uint32_t)ix->metric);
    rv__put_u32(h + 24, (uint32_t)ix->storage);
    rv__put_u32(h + 28, ix->rescore_factor);
    rv__put_u64(h + 32, ix->n_live);
    rv__put_u64(h + 40, (uint64_t)ix->next_id);
    rv__put_u64(h + 48, payload);
    rv__put_u64(h + 56, sum);
    rv__sum64 hs;
    rv__sum64_init(&hs, 0);
    rv__sum64_update(&hs, h, 88);
    rv__put_u64(h + 88, rv__sum64_final(&hs));
}

/* Where a saved index goes: a file descriptor (fd >= 0) or caller memory
** (large enough: rv_flat_save_buffer checks the size first). */
typedef struct rv__sink {
    int fd;
    const char *name; /* for messages */
    uint8_t *buf;
    uint64_t pos;
} rv__sink;

static rv_status rv__sink_put(rv__sink *s, const void *p, size_t n) {
    if (s->fd >= 0) {
        rv_status st = rv__write_all(s->fd, p, n, s->name);
        if (st) return st;
    } else {
        memcpy(s->buf + s->pos, p, n);
    }
    s->pos += n;
    return RV_OK;
}

static uint64_t rv__payload_size(const rv_flat *ix) {
    return (uint64_t)ix->n_live * 8 + (uint64_t)ix->n_live * ix->dim * 4;
}

/* Write the whole file image: a placeholder header, the ids, the vectors,
** then the real header (with the payload checksum) over the placeholder. */
static rv_status rv__write_image(const rv_flat *ix, rv__sink *s) {
    size_t dim = ix->dim;
    uint64_t payload = rv__payload_size(ix);
    float *buf = (float *)rv__malloc(RV__BATCH * dim * sizeof *buf);
    int64_t *idb = (int64_t *)rv__malloc(RV__BATCH * sizeof *idb);
    rv_status st = RV_OK;
    if (!buf || !idb) {
        st = rv__nomem("the save buffers");
        goto done;
    }
    uint8_t hdr[RV__HDR];
    rv__fill_header(hdr, ix, payload, 0); /* placeholder, rewritten below */
    if ((st = rv__sink_put(s, hdr, RV__HDR)) != RV_OK) goto done;
    rv__sum64 ps;
    rv__sum64_init(&ps, 0);
    int swap = !rv__host_le();
    /* ids, in row order */
    size_t m = 0;
    for (size_t r = 0; r <= ix->n_rows; r++) {
        if (r < ix->n_rows && ix->dead[r]) continue;
        if (r < ix->n_rows) idb[m++] = ix->row_id[r];
        if (m == RV__BATCH || (r == ix->n_rows && m)) {
            if (swap) rv__swap_items(idb, m, 8);
            rv__sum64_update(&ps, idb, m * 8);
            if ((st = rv__sink_put(s, idb, m * 8)) != RV_OK) goto done;
            m = 0;
        }
    }
    /* vectors */
    for (size_t r = 0; r <= ix->n_rows; r++) {
        if (r < ix->n_rows && ix->dead[r]) continue;
        if (r < ix->n_rows) {
            const float *x = rv__flat_row(ix, r, buf + m * dim);
            if (x != buf + m * dim) memcpy(buf + m * dim, x, dim * sizeof *buf);
            m++;
        }
        if (m == RV__BATCH || (r == ix->n_rows && m)) {
            if (swap) rv__swap_items(buf, m * dim, 4);
            rv__sum64_update(&ps, buf, m * dim * 4);
            if ((st = rv__sink_put(s, buf, m * dim * 4)) != RV_OK) goto done;
            m = 0;
        }
    }
    rv__fill_header(hdr, ix, payload, rv__sum64_final(&ps));
    if (s->fd >= 0)
        st = rv__write_at(s->fd, hdr, RV__HDR, 0, s->name);
    else
        memcpy(s->buf, hdr, RV__HDR);
done:
    rv__free(buf);
    rv__free(idb);
    return st;
}

rv_status rv_flat_save(const rv_flat *ix, const char *path) {
    return rv_flat_save_mode(ix, path, -1);
}

rv_status rv_flat_save_mode(const rv_flat *ix, const char *path, long mode) {
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(path, "path");
    /* a temporary sibling, fsynced and renamed over path (core/atomic_file) */
    rv__atomic_file af;
    rv_status st = rv__atomic_begin_mode(&af, path, mode);
    if (st) return st;
    rv__sink s = {af.fd, af.tmp, NULL, 0};
    st = rv__write_image(ix, &s);
    if (st) {
        rv__atomic_abort(&af);
        return st;
    }
    return rv__atomic_commit(&af);
}

rv_status rv_flat_save_buffer(const rv_flat *ix, void *buf, size_t capacity, size_t *size) {
    if (size) *size = 0;
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(size, "size");
    if (!buf && capacity)
        return rv__error(RV_E_INVALID_ARG, "buf is NULL but capacity = %zu", capacity);
    RV__CHECK_SIZE(capacity, 1, "capacity");
    uint64_t total = RV__HDR + rv__payload_size(ix);
    if (total > SIZE_MAX) return rv__error(RV_E_RANGE, "the index is too large for memory");
    *size = (size_t)total;
    if (total > capacity)
        return rv__error(RV_E_SHAPE, "the index needs %zu bytes; capacity is %zu", (size_t)total,
                         capacity);
    rv__sink s = {-1, "memory", (uint8_t *)buf, 0};
    return rv__write_image(ix, &s);
}

static rv_status rv__corrupt(const char *path, const char *why) {
    return rv__error(RV_E_CORRUPT, "%s: %s", path, why);
}

/* Where a saved index comes from: a file descriptor (read with pread from
** offset 0, so the descriptor's own offset is neither used nor moved) or
** memory.  err keeps the first read error (errno), so a failing disk is
** reported as RV_E_IO, not as a truncated file. */
typedef struct rv__source {
    int fd;
    const uint8_t *mem;
    uint64_t size, pos;
    int err;
} rv__source;

/* fread's contract: the number of whole items read. */
static size_t rv__src_read(rv__source *s, void *p, size_t width, size_t count) {
    if (s->fd >= 0) {
        size_t want = width * count, got = 0;
        while (got < want) {
            ssize_t r = pread(s->fd, (uint8_t *)p + got, want - got, (off_t)(s->pos + got));
            if (r < 0) {
                if (errno == EINTR) continue;
                if (!s->err) s->err = errno;
                break;
            }
            if (r == 0) break;
            got += (size_t)r;
        }
        s->pos += got;
        return got / width;
    }
    uint64_t avail = (s->size - s->pos) / width;
    size_t n = count < avail ? count : (size_t)avail;
    memcpy(p, s->mem + s->pos, n * width);
    s->pos += (uint64_t)n * width;
    return n;
}

/* Parse and verify an image of fsize bytes; name is for messages. */
static rv_status rv__load_image(rv__source *src, const char *path, uint64_t fsize, rv_flat **out) {
    rv_status st = RV_OK;
    rv_flat *ix = NULL;
    int64_t *ids = NULL;
    float *buf = NULL;
    uint8_t h[RV__HDR];
    size_t got = rv__src_read(src, h, 1, RV__HDR);
    if (got < 12) {
        st = rv__corrupt(path, "too short to be a rowvoi flat index");
        goto done;
    }
    if (memcmp(h, rv__magic, 8) != 0) {
        st = rv__corrupt(path, "not a rowvoi flat index (bad magic number)");
        goto done;
    }
    uint32_t version = rv__get_u32(h + 8);
    if (version != RV_FLAT_FORMAT_VERSION) {
        st = rv__error(RV_E_VERSION,
                       "%s: flat index format version %u; this library reads "
                       "version %u",
                       path, (unsigned)version, (unsigned)RV_FLAT_FORMAT_VERSION);
        goto done;
    }
    if (got < RV__HDR) {
        st = rv__corrupt(path, "truncated header");
        goto done;
    }
    rv__sum64 hs;
    rv__sum64_init(&hs, 0);
    rv__sum64_update(&hs, h, 88);
    if (rv__sum64_final(&hs) != rv__get_u64(h + 88)) {
        st = rv__corrupt(path, "header checksum mismatch");
        goto done;
    }
    uint32_t hsize = rv__get_u32(h + 12), dim = rv__get_u32(h + 16), metric = rv__get_u32(h + 20),
             storage = rv__get_u32(h + 24), rescore = rv__get_u32(h + 28);
    uint64_t n = rv__get_u64(h + 32), next_id = rv__get_u64(h + 40), payload = rv__get_u64(h + 48),
             want_sum = rv__get_u64(h + 56);
    for (int i = 64; i < 88; i++)
        if (h[i]) {
            st = rv__corrupt(path, "reserved header bytes are not zero");
            goto done;
        }
    if (hsize != RV__HDR || dim == 0 || dim > RV_FLAT_MAX_DIM || metric > RV_METRIC_L2 ||
        storage > RV_FLAT_I8 || rescore == 0 || rescore > 1024 ||
        next_id > (uint64_t)RV_FLAT_MAX_ID + 1) {
        st = rv__corrupt(path, "header field out of range");
        goto done;
    }
    uint64_t row_bytes = 8 + (uint64_t)dim * 4;
    if (n > (UINT64_MAX - RV__HDR) / row_bytes || payload != n * row_bytes) {
        st = rv__corrupt(path, "payload size does not match the vector count");
        goto done;
    }
    if (fsize != RV__HDR + payload) {
        st = rv__error(RV_E_CORRUPT,
                       "%s: truncated or extended: the header promises %llu "
                       "bytes, the file has %llu",
                       path, (unsigned long long)(RV__HDR + payload), (unsigned long long)fsize);
        goto done;
    }
    if (n > SIZE_MAX / 16) {
        st = rv__error(RV_E_RANGE, "%s: too many vectors for this platform", path);
        goto done;
    }
    rv_flat_options opt;
    rv_flat_options_init(&opt);
    opt.dim = dim;
    opt.metric = (rv_metric)metric;
    opt.storage = (rv_flat_storage)storage;
    opt.rescore_factor = rescore;
    st = rv_flat_create(&opt, &ix);
    if (st) goto done;
    st = rv__flat_reserve(ix, (size_t)n); /* (n is bounded by the file's size) */
    if (st) goto done;
    ids = (int64_t *)rv__malloc((size_t)(n ? n : 1) * sizeof *ids);
    buf = (float *)rv__malloc((size_t)RV__BATCH * dim * sizeof *buf);
    if (!ids || !buf) {
        st = rv__nomem("the load buffers");
        goto done;
    }
    rv__sum64 ps;
    rv__sum64_init(&ps, 0);
    int swap = !rv__host_le(), bad_content = 0;
    char why[600];
    if (rv__src_read(src, ids, 8, (size_t)n) != (size_t)n) {
        st = rv__io_error("cannot read", path);
        goto done;
    }
    rv__sum64_update(&ps, ids, (size_t)n * 8);
    if (swap) rv__swap_items(ids, (size_t)n, 8);
    for (size_t r = 0; r < (size_t)n; r += RV__BATCH) {
        size_t m = (size_t)n - r < RV__BATCH ? (size_t)n - r : RV__BATCH;
        if (rv__src_read(src, buf, 4 * (size_t)dim, m) != m) {
            st = rv__io_error("cannot read", path);
            goto done;
        }
        rv__sum64_update(&ps, buf, m * dim * 4);
        if (swap) rv__swap_items(buf, m * dim, 4);
        if (bad_content) continue; /* keep reading: the checksum says more */
        st = rv__flat_add(ix, m, buf, ids + r, NULL, 1);
        if (st == RV_E_INVALID_ARG || st == RV_E_RANGE) {
            snprintf(why, sizeof why, "invalid content (%s)", rv_errmsg());
            bad_content = 1;
            st = RV_OK;
        }
        if (st) goto done;
    }
    if (rv__sum64_final(&ps) != want_sum) {
        st = rv__corrupt(path, "payload checksum mismatch");
        goto done;
    }
    if (bad_content) {
        st = rv__corrupt(path, why);
        goto done;
    }
    if ((int64_t)next_id > ix->next_id) ix->next_id = (int64_t)next_id;
done:
    rv__free(ids);
    rv__free(buf);
    if (st) {
        rv_flat_free(ix);
        return st;
    }
    *out = ix;
    return RV_OK;
}

rv_status rv_flat_load_fd(int fd, const char *name, rv_flat **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    if (fd < 0) return rv__error(RV_E_INVALID_ARG, "fd = %d is not a file descriptor", fd);
    char fdname[32];
    if (!name) {
        snprintf(fdname, sizeof fdname, "file descriptor %d", fd);
        name = fdname;
    }
    uint64_t size;
    rv_status st = rv__regular_size(fd, name, &size);
    if (st) return st;
    rv__source src = {fd, NULL, 0, 0, 0};
    st = rv__load_image(&src, name, size, out);
    if (st && src.err) /* a failing read, not a short file */
        return rv__error(RV_E_IO, "cannot read %s: %s", name, strerror(src.err));
    return st;
}

rv_status rv_flat_load(const char *path, rv_flat **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    RV__NOT_NULL(path, "path");
    int fd = rv__open_read(path);
    if (fd < 0) return rv__io_error("cannot open", path);
    rv_status st = rv_flat_load_fd(fd, path, out);
    close(fd);
    return st;
}

rv_status rv_flat_load_buffer(const void *buf, size_t size, rv_flat **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    if (!buf && size) return rv__error(RV_E_INVALID_ARG, "buf is NULL but size = %zu", size);
    RV__CHECK_SIZE(size, 1, "size");
    static const uint8_t none = 0;
    rv__source src = {-1, buf ? (const uint8_t *)buf : &none, size, 0, 0};
    return rv__load_image(&src, "flat index buffer", (uint64_t)size, out);
}
