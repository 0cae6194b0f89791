/*
** Atomic file replacement (temporary sibling, fsync, rename, fsync of the
** directory) and the removal of stale temporaries.  See atomic_file.h.
*/
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"

#define RV__HOST_MAX 32
#define RV__TMP_MARK ".tmp-"

/* This machine's name reduced to [A-Za-z0-9_-] and RV__HOST_MAX characters
** (rowvoi/_atomic.py reduces it the same way). */
static void rv__host_tag(char out[RV__HOST_MAX + 1]) {
    char name[256];
    if (gethostname(name, sizeof name) != 0) name[0] = '\0';
    name[sizeof name - 1] = '\0';
    size_t n = 0;
    for (const char *p = name; *p && n < RV__HOST_MAX; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-';
        out[n++] = ok ? c : '_';
    }
    if (n == 0) {
        memcpy(out, "host", 5);
        return;
    }
    out[n] = '\0';
}

/* Split path into a freshly allocated directory string and a pointer to
** the base name inside path.  NULL on allocation failure. */
static char *rv__dir_of(const char *path, const char **base) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    if (slash == path) n = 1;
    char *dir = (char *)rv__malloc(n + 1);
    if (!dir) return NULL;
    if (!slash)
        memcpy(dir, ".", 2);
    else if (slash == path)
        memcpy(dir, "/", 2);
    else {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    *base = slash ? slash + 1 : path;
    return dir;
}

/* Parse "HOST-PID-RAND" (HOST may hold '-'); 1 when it has that shape. */
static int rv__parse_tag(const char *tag, size_t *host_len, long long *pid) {
    const char *last = strrchr(tag, '-');
    if (!last || last == tag) return 0;
    size_t rl = strlen(last + 1);
    if (rl < 8 || rl > 16) return 0;
    for (const char *p = last + 1; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    const char *mid = last - 1;
    while (mid > tag && *mid != '-') mid--;
    if (mid == tag || mid + 1 == last) return 0;
    long long v = 0;
    for (const char *p = mid + 1; p < last; p++) {
        if (*p < '0' || *p > '9' || v > 1000000000000LL) return 0;
        v = v * 10 + (*p - '0');
    }
    for (const char *p = tag; p < mid; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    *host_len = (size_t)(mid - tag);
    *pid = v;
    return 1;
}

static int rv__pid_gone(long long pid) {
    if (pid <= 0 || pid != (long long)(pid_t)pid) return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static size_t rv__clean_in(const char *dir, const char *base) {
    size_t blen = strlen(base), mlen = strlen(RV__TMP_MARK), removed = 0;
    if (blen == 0) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int dfd = dirfd(d);
    char host[RV__HOST_MAX + 1];
    rv__host_tag(host);
    size_t hlen = strlen(host);
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strncmp(name, base, blen) != 0 || strncmp(name + blen, RV__TMP_MARK, mlen) != 0)
            continue;
        const char *tag = name + blen + mlen;
        size_t tl;
        long long pid;
        if (!rv__parse_tag(tag, &tl, &pid)) continue;
        struct stat sb;
        if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode)) continue;
        int stale;
        if (tl == hlen && memcmp(tag, host, hlen) == 0)
            stale = rv__pid_gone(pid);
        else
            stale = now - sb.st_mtime > RV__ATOMIC_FOREIGN_AGE;
        if (stale && unlinkat(dfd, name, 0) == 0) removed++;
    }
    closedir(d);
    return removed;
}

size_t rv__atomic_clean_stale(const char *path) {
    if (!path) return 0;
    const char *base;
    char *dir = rv__dir_of(path, &base);
    if (!dir) return 0;
    size_t n = rv__clean_in(dir, base);
    rv__free(dir);
    return n;
}

static void rv__sync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

rv_status rv__atomic_begin(rv__atomic_file *af, const char *path) {
    return rv__atomic_begin_mode(af, path, -1);
}

rv_status rv__atomic_begin_mode(rv__atomic_file *af, const char *path, long mode) {
    if (!af) return rv__error(RV_E_INVALID_ARG, "af must not be NULL");
    af->fd = -1;
    af->tmp = af->dir = NULL;
    af->path = path;
    if (!path) return rv__error(RV_E_INVALID_ARG, "path must not be NULL");
    if (mode > 0777)
        return rv__error(RV_E_INVALID_ARG, "mode %#lo: give permission bits only (at most 0777)",
                         (unsigned long)mode);
    const char *base;
    char *dir = rv__dir_of(path, &base);
    if (!dir) return rv__nomem("a directory name");
    rv__clean_in(dir, base);
    char host[RV__HOST_MAX + 1];
    rv__host_tag(host);
    size_t cap = strlen(path) + strlen(RV__TMP_MARK) + RV__HOST_MAX + 48;
    char *tmp = (char *)rv__malloc(cap);
    if (!tmp) {
        rv__free(dir);
        return rv__nomem("a temporary file name");
    }
    struct timespec ts = {0, 0};
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t salt = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^
                    ((uint64_t)(uintptr_t)&ts << 7) ^ ((uint64_t)getpid() << 40);
    int fd = -1, err = 0;
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        uint32_t r = (uint32_t)rv__mix64(salt + attempt);
        snprintf(tmp, cap, "%s%s%s-%ld-%08x", path, RV__TMP_MARK, host, (long)getpid(),
                 (unsigned)r);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  mode < 0 ? 0666 : (mode_t)mode);
        if (fd >= 0) break;
        err = errno;
        if (err != EEXIST) break;
    }
    if (fd < 0) {
        rv_status st = rv__error(RV_E_IO, "cannot create a temporary file in %s: %s", dir,
                                 strerror(err ? err : EEXIST));
        rv__free(tmp);
        rv__free(dir);
        return st;
    }
    /* an exact mode is set while the new file is still empty (the umask may
    ** have cleared bits of it): no byte is ever readable under another mode */
    if (mode >= 0 && fchmod(fd, (mode_t)mode) != 0) {
        rv_status st = rv__error(RV_E_IO, "cannot set the mode of %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        rv__free(tmp);
        rv__free(dir);
        return st;
    }
    af->fd = fd;
    af->tmp = tmp;
    af->dir = dir;
    return RV_OK;
}

/* Write all n bytes, at offset off (pwrite) or, when off < 0, at the
** current position; retry short writes and EINTR. */
static rv_status rv__write_loop(int fd, const void *data, size_t n, int64_t off, const char *what) {
    const unsigned char *p = (const unsigned char *)data;
    while (n) {
        ssize_t w = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, (off_t)off);
        if (w < 0) {
            if (errno == EINTR) continue;
            return rv__error(RV_E_IO, "cannot write %s: %s", what, strerror(errno));
        }
        if (w == 0) return rv__error(RV_E_IO, "cannot write %s: no progress", what);
        p += w;
        n -= (size_t)w;
        if (off >= 0) off += w;
    }
    return RV_OK;
}

rv_status rv__write_all(int fd, const void *data, size_t n, const char *what) {
    return rv__write_loop(fd, data, n, -1, what);
}

rv_status rv__write_at(int fd, const void *data, size_t n, uint64_t off, const char *what) {
    if (off > (uint64_t)INT64_MAX)
        return rv__error(RV_E_RANGE, "cannot write %s at offset %llu", what,
                         (unsigned long long)off);
    return rv__write_loop(fd, data, n, (int64_t)off, what);
}

rv_status rv__atomic_commit(rv__atomic_file *af) {
    if (!af || af->fd < 0 || !af->tmp)
        return rv__error(RV_E_INVALID_ARG, "no temporary file is open");
    rv_status st = RV_OK;
    if (fsync(af->fd) != 0)
        st = rv__error(RV_E_IO, "cannot write %s: %s", af->tmp, strerror(errno));
    if (close(af->fd) != 0 && st == RV_OK)
        st = rv__error(RV_E_IO, "cannot close %s: %s", af->tmp, strerror(errno));
    af->fd = -1;
    if (st == RV_OK && rename(af->tmp, af->path) != 0)
        st = rv__error(RV_E_IO, "cannot rename %s to %s: %s", af->tmp, af->path, strerror(errno));
    if (st != RV_OK) {
        rv__atomic_abort(af);
        return st;
    }
    rv__sync_dir(af->dir);
    rv__free(af->tmp);
    rv__free(af->dir);
    af->tmp = af->dir = NULL;
    return RV_OK;
}

void rv__atomic_abort(rv__atomic_file *af) {
    if (!af) return;
    if (af->fd >= 0) close(af->fd);
    af->fd = -1;
    if (af->tmp) unlink(af->tmp);
    rv__free(af->tmp);
    rv__free(af->dir);
    af->tmp = af->dir = NULL;
}
