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
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flat_internal.h"

#define RV__HDR 96u
#define RV__BATCH 256u
static const uint8_t rv__magic[8] = {0x89, 'R', 'V', 'F', 'L', 'A', 'T', '\n'};

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint64_t get64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static int host_is_le(void) {
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Reverse the bytes of each `width`-byte item in place (big-endian hosts). */
static void swap_items(void *data, size_t count, size_t width) {
    uint8_t *p = (uint8_t *)data;
    for (size_t i = 0; i < count; i++, p += width)
        for (size_t a = 0, b = width - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

static rv_status io_error(const char *what, const char *path) {
    return rv__error(RV_E_IO, "%s %s: %s", what, path, strerror(errno));
}

/* fsync the directory holding path, so the rename itself is durable.  Best
** effort: some file systems refuse to open directories. */
static void sync_parent(const char *path) {
    size_t len = strlen(path);
    char *dir = (char *)rv__malloc(len + 2);
    if (!dir) return;
    memcpy(dir, path, len + 1);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    rv__free(dir);
}

static void fill_header(uint8_t *h, const rv_flat *ix, uint64_t payload,
                        uint64_t sum) {
    memset(h, 0, RV__HDR);
    memcpy(h, rv__magic, 8);
    put32(h + 8, RV_FLAT_FORMAT_VERSION);
    put32(h + 12, RV__HDR);
    put32(h + 16, ix->dim);
    put32(h + 20, (uint32_t)ix->metric);
    put32(h + 24, (uint32_t)ix->storage);
    put32(h + 28, ix->rescore_factor);
    put64(h + 32, ix->n_live);
    put64(h + 40, (uint64_t)ix->next_id);
    put64(h + 48, payload);
    put64(h + 56, sum);
    rv__sum64 hs;
    rv__sum64_init(&hs, 0);
    rv__sum64_update(&hs, h, 88);
    put64(h + 88, rv__sum64_final(&hs));
}

rv_status rv_flat_save(const rv_flat *ix, const char *path) {
    if (!ix || !path)
        return rv__error(RV_E_INVALID_ARG, "index and path must not be NULL");
    size_t dim = ix->dim, n = ix->n_live;
    uint64_t payload = (uint64_t)n * 8 + (uint64_t)n * dim * 4;
    size_t plen = strlen(path);
    char *tmp = (char *)rv__malloc(plen + 16);
    float *buf = (float *)rv__malloc(RV__BATCH * dim * sizeof *buf);
    int64_t *idb = (int64_t *)rv__malloc(RV__BATCH * sizeof *idb);
    if (!tmp || !buf || !idb) {
        rv__free(tmp);
        rv__free(buf);
        rv__free(idb);
        return rv__nomem("the save buffers");
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp-XXXXXX", 12);
    rv_status st = RV_OK;
    FILE *f = NULL;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        st = io_error("cannot create a temporary file beside", path);
        goto done;
    }
    f = fdopen(fd, "wb");
    if (!f) {
        st = io_error("cannot open a temporary file beside", path);
        close(fd);
        goto fail;
    }
    uint8_t hdr[RV__HDR];
    fill_header(hdr, ix, payload, 0); /* placeholder, rewritten below */
    if (fwrite(hdr, 1, RV__HDR, f) != RV__HDR) {
        st = io_error("cannot write", tmp);
        goto fail;
    }
    rv__sum64 ps;
    rv__sum64_init(&ps, 0);
    int swap = !host_is_le();
    /* ids, in row order */
    size_t m = 0;
    for (size_t r = 0; r <= ix->n_rows; r++) {
        if (r < ix->n_rows && ix->dead[r]) continue;
        if (r < ix->n_rows) idb[m++] = ix->row_id[r];
        if (m == RV__BATCH || (r == ix->n_rows && m)) {
            if (swap) swap_items(idb, m, 8);
            rv__sum64_update(&ps, idb, m * 8);
            if (fwrite(idb, 8, m, f) != m) {
                st = io_error("cannot write", tmp);
                goto fail;
            }
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
            if (swap) swap_items(buf, m * dim, 4);
            rv__sum64_update(&ps, buf, m * dim * 4);
            if (fwrite(buf, 4 * dim, m, f) != m) {
                st = io_error("cannot write", tmp);
                goto fail;
            }
            m = 0;
        }
    }
    fill_header(hdr, ix, payload, rv__sum64_final(&ps));
    if (fseek(f, 0, SEEK_SET) != 0 || fwrite(hdr, 1, RV__HDR, f) != RV__HDR ||
        fflush(f) != 0 || fsync(fileno(f)) != 0) {
        st = io_error("cannot write", tmp);
        goto fail;
    }
    if (fclose(f) != 0) {
        f = NULL;
        st = io_error("cannot close", tmp);
        goto fail;
    }
    f = NULL;
    if (rename(tmp, path) != 0) {
        st = io_error("cannot rename the temporary file onto", path);
        goto fail;
    }
    sync_parent(path);
    goto done;
fail:
    if (f) fclose(f);
    unlink(tmp);
done:
    rv__free(tmp);
    rv__free(buf);
    rv__free(idb);
    return st;
}

static rv_status corrupt(const char *path, const char *why) {
    return rv__error(RV_E_CORRUPT, "%s: %s", path, why);
}

rv_status rv_flat_load(const char *path, rv_flat **out) {
    if (!out) return rv__error(RV_E_INVALID_ARG, "out must not be NULL");
    *out = NULL;
    if (!path) return rv__error(RV_E_INVALID_ARG, "path must not be NULL");
    FILE *f = fopen(path, "rb");
    if (!f) return io_error("cannot open", path);
    rv_status st = RV_OK;
    rv_flat *ix = NULL;
    int64_t *ids = NULL;
    float *buf = NULL;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0) {
        st = io_error("cannot stat", path);
        goto done;
    }
    if (S_ISDIR(sb.st_mode)) {
        errno = EISDIR;
        st = io_error("cannot read", path);
        goto done;
    }
    uint64_t fsize = (uint64_t)sb.st_size;
    uint8_t h[RV__HDR];
    size_t got = fread(h, 1, RV__HDR, f);
    if (got < 12) {
        st = corrupt(path, "too short to be a rowvoi flat index");
        goto done;
    }
    if (memcmp(h, rv__magic, 8) != 0) {
        st = corrupt(path, "not a rowvoi flat index (bad magic number)");
        goto done;
    }
    uint32_t version = get32(h + 8);
    if (version != RV_FLAT_FORMAT_VERSION) {
        st = rv__error(RV_E_VERSION,
                       "%s: flat index format version %u; this library reads "
                       "version %u",
                       path, (unsigned)version, (unsigned)RV_FLAT_FORMAT_VERSION);
        goto done;
    }
    if (got < RV__HDR) {
        st = corrupt(path, "truncated header");
        goto done;
    }
    rv__sum64 hs;
    rv__sum64_init(&hs, 0);
    rv__sum64_update(&hs, h, 88);
    if (rv__sum64_final(&hs) != get64(h + 88)) {
        st = corrupt(path, "header checksum mismatch");
        goto done;
    }
    uint32_t hsize = get32(h + 12), dim = get32(h + 16), metric = get32(h + 20),
             storage = get32(h + 24), rescore = get32(h + 28);
    uint64_t n = get64(h + 32), next_id = get64(h + 40), payload = get64(h + 48),
             want_sum = get64(h + 56);
    for (int i = 64; i < 88; i++)
        if (h[i]) {
            st = corrupt(path, "reserved header bytes are not zero");
            goto done;
        }
    if (hsize != RV__HDR || dim == 0 || dim > RV_FLAT_MAX_DIM ||
        metric > RV_METRIC_L2 || storage > RV_FLAT_I8 || rescore == 0 ||
        rescore > 1024 || next_id > (uint64_t)RV_FLAT_MAX_ID + 1) {
        st = corrupt(path, "header field out of range");
        goto done;
    }
    uint64_t row_bytes = 8 + (uint64_t)dim * 4;
    if (n > (UINT64_MAX - RV__HDR) / row_bytes || payload != n * row_bytes) {
        st = corrupt(path, "payload size does not match the vector count");
        goto done;
    }
    if (fsize != RV__HDR + payload) {
        st = rv__error(RV_E_CORRUPT,
                       "%s: truncated or extended: the header promises %llu "
                       "bytes, the file has %llu",
                       path, (unsigned long long)(RV__HDR + payload),
                       (unsigned long long)fsize);
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
    ids = (int64_t *)rv__malloc((size_t)(n ? n : 1) * sizeof *ids);
    buf = (float *)rv__malloc((size_t)RV__BATCH * dim * sizeof *buf);
    if (!ids || !buf) {
        st = rv__nomem("the load buffers");
        goto done;
    }
    rv__sum64 ps;
    rv__sum64_init(&ps, 0);
    int swap = !host_is_le(), bad_content = 0;
    char why[600];
    if (fread(ids, 8, (size_t)n, f) != (size_t)n) {
        st = io_error("cannot read", path);
        goto done;
    }
    rv__sum64_update(&ps, ids, (size_t)n * 8);
    if (swap) swap_items(ids, (size_t)n, 8);
    for (size_t r = 0; r < (size_t)n; r += RV__BATCH) {
        size_t m = (size_t)n - r < RV__BATCH ? (size_t)n - r : RV__BATCH;
        if (fread(buf, 4 * (size_t)dim, m, f) != m) {
            st = io_error("cannot read", path);
            goto done;
        }
        rv__sum64_update(&ps, buf, m * dim * 4);
        if (swap) swap_items(buf, m * dim, 4);
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
        st = corrupt(path, "payload checksum mismatch");
        goto done;
    }
    if (bad_content) {
        st = corrupt(path, why);
        goto done;
    }
    if ((int64_t)next_id > ix->next_id) ix->next_id = (int64_t)next_id;
done:
    fclose(f);
    rv__free(ids);
    rv__free(buf);
    if (st) {
        rv_flat_free(ix);
        return st;
    }
    *out = ix;
    return RV_OK;
}
