/*
** The durability helper (src/core/atomic_file.c): temp file, fsync, rename,
** fsync of the directory; file modes under the umask; stale temporaries;
** failure paths; and that the BM25 and flat saves go through it.
*/
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/core/atomic_file.h"
#include "rv_test.h"

static char tmpdir[256];

static void in_tmp(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static int count_entries(const char *prefix) {
    DIR *d = opendir(tmpdir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    size_t pl = strlen(prefix);
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, pl) == 0) n++;
    closedir(d);
    return n;
}

static int read_file(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (int)n;
}

static void touch(const char *path, time_t age) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs("partial", f);
        fclose(f);
    }
    if (age) {
        struct timespec t[2];
        t[0].tv_sec = t[1].tv_sec = time(NULL) - age;
        t[0].tv_nsec = t[1].tv_nsec = 0;
        utimensat(AT_FDCWD, path, t, 0);
    }
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The HOST part of this machine's temporaries, read off a real one. */
static void host_part(char *out, size_t cap) {
    char path[512];
    in_tmp(path, sizeof path, "probe");
    rv__atomic_file af;
    out[0] = '\0';
    if (rv__atomic_begin(&af, path) != RV_OK) return;
    const char *tag = strstr(af.tmp, ".tmp-") + 5;
    const char *last = strrchr(tag, '-');
    const char *mid = last - 1;
    while (mid > tag && *mid != '-') mid--;
    snprintf(out, cap, "%.*s", (int)(mid - tag), tag);
    rv__atomic_abort(&af);
}

/* ------------------------------------------------------------ round trip */

static void test_commit_and_abort(void) {
    char path[512], got[64];
    in_tmp(path, sizeof path, "data.bin");
    rv__atomic_file af;
    ASSERT_OK(rv__atomic_begin(&af, path));
    ASSERT_TRUE(af.fd >= 0);
    EXPECT_TRUE(strncmp(af.tmp, path, strlen(path)) == 0);
    EXPECT_TRUE(strstr(af.tmp, ".tmp-") != NULL);
    ASSERT_OK(rv__write_all(af.fd, "hello world", 11, af.tmp));
    ASSERT_OK(rv__write_at(af.fd, "J", 1, 0, af.tmp));
    EXPECT_TRUE(!exists(path)); /* nothing visible before the commit */
    ASSERT_OK(rv__atomic_commit(&af));
    EXPECT_EQ(af.fd, -1);
    EXPECT_TRUE(af.tmp == NULL);
    rv__atomic_abort(&af); /* a no-op after a commit */
    ASSERT_EQ(read_file(path, got, sizeof got), 11);
    ASSERT_STR_EQ(got, "Jello world");
    EXPECT_EQ(count_entries("data.bin.tmp-"), 0);

    /* abort: the temporary goes, the target keeps the old content */
    ASSERT_OK(rv__atomic_begin(&af, path));
    ASSERT_OK(rv__write_all(af.fd, "other", 5, af.tmp));
    EXPECT_EQ(count_entries("data.bin.tmp-"), 1);
    rv__atomic_abort(&af);
    rv__atomic_abort(&af); /* twice is fine */
    EXPECT_EQ(count_entries("data.bin.tmp-"), 0);
    ASSERT_EQ(read_file(path, got, sizeof got), 11);
    ASSERT_STR_EQ(got, "Jello world");

    /* two open temporaries of one path have distinct names */
    rv__atomic_file a, b;
    ASSERT_OK(rv__atomic_begin(&a, path));
    ASSERT_OK(rv__atomic_begin(&b, path));
    EXPECT_TRUE(strcmp(a.tmp, b.tmp) != 0);
    ASSERT_OK(rv__write_all(a.fd, "A", 1, a.tmp));
    ASSERT_OK(rv__write_all(b.fd, "B", 1, b.tmp));
    ASSERT_OK(rv__atomic_commit(&a));
    ASSERT_OK(rv__atomic_commit(&b));
    ASSERT_EQ(read_file(path, got, sizeof got), 1);
    ASSERT_STR_EQ(got, "B"); /* the last rename wins */
    EXPECT_EQ(count_entries("data.bin.tmp-"), 0);
    unlink(path);
}

/* ------------------------------------------------------------ file modes */

static mode_t mode_of(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return (mode_t)-1;
    return sb.st_mode & 0777;
}

static void test_modes_follow_umask(void) {
    static const mode_t masks[] = {022, 077, 002, 0};
    char path[512], bpath[512], fpath[512];
    in_tmp(path, sizeof path, "mode.bin");
    in_tmp(bpath, sizeof bpath, "mode.rvx");
    in_tmp(fpath, sizeof fpath, "mode.rvf");
    rv_bm25 *bm = NULL;
    ASSERT_OK(rv_bm25_create(NULL, NULL, &bm));
    const char *docs[] = {"alpha beta", "beta gamma"};
    size_t lens[] = {10, 10};
    int64_t assigned[2];
    ASSERT_OK(rv_bm25_add(bm, 2, docs, lens, NULL, NULL, NULL, assigned));
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = 3;
    rv_flat *fl = NULL;
    ASSERT_OK(rv_flat_create(&o, &fl));
    float v[6] = {1, 0, 0, 0, 1, 0};
    ASSERT_OK(rv_flat_add(fl, 2, v, NULL, NULL));
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        mode_t old = umask(masks[i]);
        rv__atomic_file af;
        rv_status st = rv__atomic_begin(&af, path);
        if (st == RV_OK) st = rv__atomic_commit(&af);
        rv_status sb = rv_bm25_save(bm, bpath);
        rv_status sf = rv_flat_save(fl, fpath);
        umask(old);
        ASSERT_OK(st);
        ASSERT_OK(sb);
        ASSERT_OK(sf);
        mode_t want = 0666 & ~masks[i];
        EXPECT_EQ(mode_of(path), want);
        EXPECT_EQ(mode_of(bpath), want);
        EXPECT_EQ(mode_of(fpath), want);
        unlink(path);
        unlink(bpath);
        unlink(fpath);
    }
    EXPECT_EQ(count_entries("mode."), 0); /* no temporaries left */
    rv_bm25_free(bm);
    rv_flat_free(fl);
}

/* The *_save_mode calls give exactly the mode asked for, whatever the
** umask (a private corpus's 0600 under umask 000 and 077 alike); a mode
** < 0 is the umask rule; bits above 0777 are refused before any file is
** made. */
static void test_exact_modes(void) {
    static const mode_t masks[] = {0, 022, 0277};
    static const long modes[] = {0600, 0640, 0644, 0400};
    char bpath[512], fpath[512], apath[512];
    in_tmp(bpath, sizeof bpath, "exact.rvx");
    in_tmp(fpath, sizeof fpath, "exact.rvf");
    in_tmp(apath, sizeof apath, "exact.bin");
    rv_bm25 *bm = NULL;
    ASSERT_OK(rv_bm25_create(NULL, NULL, &bm));
    const char *docs[] = {"alpha beta"};
    size_t lens[] = {10};
    int64_t assigned[1];
    ASSERT_OK(rv_bm25_add(bm, 1, docs, lens, NULL, NULL, NULL, assigned));
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = 2;
    rv_flat *fl = NULL;
    ASSERT_OK(rv_flat_create(&o, &fl));
    float v[2] = {1, 0};
    ASSERT_OK(rv_flat_add(fl, 1, v, NULL, NULL));
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        for (size_t j = 0; j < sizeof modes / sizeof modes[0]; j++) {
            mode_t old = umask(masks[i]);
            rv_status sb = rv_bm25_save_mode(bm, bpath, modes[j]);
            rv_status sf = rv_flat_save_mode(fl, fpath, modes[j]);
            rv__atomic_file af;
            rv_status sa = rv__atomic_begin_mode(&af, apath, modes[j]);
            if (sa == RV_OK) sa = rv__atomic_commit(&af);
            umask(old);
            ASSERT_OK(sb);
            ASSERT_OK(sf);
            ASSERT_OK(sa);
            EXPECT_EQ(mode_of(bpath), (mode_t)modes[j]);
            EXPECT_EQ(mode_of(fpath), (mode_t)modes[j]);
            EXPECT_EQ(mode_of(apath), (mode_t)modes[j]);
            unlink(bpath);
            unlink(fpath);
            unlink(apath);
        }
    }
    mode_t old = umask(022);
    ASSERT_OK(rv_bm25_save_mode(bm, bpath, -1));
    umask(old);
    EXPECT_EQ(mode_of(bpath), (mode_t)0644);
    unlink(bpath);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_save_mode(bm, bpath, 04755));
    EXPECT_STR_CONTAINS(rv_errmsg(), "permission bits only");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_save_mode(fl, fpath, 01000));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_save_mode(NULL, bpath, 0600));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_save_mode(fl, NULL, 0600));
    EXPECT_EQ(count_entries("exact."), 0); /* no file, no temporary left */
    rv_bm25_free(bm);
    rv_flat_free(fl);
}

/* ------------------------------------------------------- stale temporaries */

static void test_stale_temporaries(void) {
    char host[64];
    host_part(host, sizeof host);
    ASSERT_TRUE(host[0] != '\0');
    /* a pid that is certainly gone: a child we created and reaped */
    pid_t child = fork();
    ASSERT_TRUE(child >= 0);
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);

    char path[512], dead[700], live[700], parent[700], foreign_new[700], foreign_old[700],
        other_target[700], not_ours[700], short_rand[700];
    in_tmp(path, sizeof path, "ix.rvf");
    snprintf(dead, sizeof dead, "%s.tmp-%s-%ld-0123abcd", path, host, (long)child);
    snprintf(live, sizeof live, "%s.tmp-%s-%ld-0123abcd", path, host, (long)getpid());
    snprintf(parent, sizeof parent, "%s.tmp-%s-%ld-89abcdef", path, host, (long)getppid());
    snprintf(foreign_new, sizeof foreign_new, "%s.tmp-elsewhere-%ld-0123abcd", path, (long)child);
    snprintf(foreign_old, sizeof foreign_old, "%s.tmp-elsewhere-%ld-fedcba98", path, (long)child);
    snprintf(other_target, sizeof other_target, "%s/other.rvf.tmp-%s-%ld-0123abcd", tmpdir, host,
             (long)child);
    snprintf(not_ours, sizeof not_ours, "%s.tmp-%s-%ld-XYZ", path, host, (long)child);
    snprintf(short_rand, sizeof short_rand, "%s.tmp-%s-%ld-abc", path, host, (long)child);
    touch(dead, 0);
    touch(live, 0);
    touch(parent, 0);
    touch(foreign_new, 3600);
    touch(foreign_old, 2 * RV__ATOMIC_FOREIGN_AGE);
    touch(other_target, 0);
    touch(not_ours, 0);
    touch(short_rand, 0);

    /* a save to path removes exactly the stale temporaries of path */
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = 2;
    rv_flat *fl = NULL;
    ASSERT_OK(rv_flat_create(&o, &fl));
    ASSERT_OK(rv_flat_save(fl, path));
    rv_flat_free(fl);
    EXPECT_TRUE(!exists(dead));
    EXPECT_TRUE(!exists(foreign_old));
    EXPECT_TRUE(exists(live));
    EXPECT_TRUE(exists(parent));
    EXPECT_TRUE(exists(foreign_new));
    EXPECT_TRUE(exists(other_target));
    EXPECT_TRUE(exists(not_ours));
    EXPECT_TRUE(exists(short_rand));
    /* the standalone sweep of the other target */
    EXPECT_EQ(rv__atomic_clean_stale(other_target), 0u); /* not its own prefix */
    char other[700];
    snprintf(other, sizeof other, "%s/other.rvf", tmpdir);
    EXPECT_EQ(rv__atomic_clean_stale(other), 1u);
    EXPECT_TRUE(!exists(other_target));
    EXPECT_EQ(rv__atomic_clean_stale(NULL), 0u);
    unlink(live);
    unlink(parent);
    unlink(foreign_new);
    unlink(not_ours);
    unlink(short_rand);
    unlink(path);
}

/* ---------------------------------------------------------- failure paths */

static void test_failures(void) {
    rv__atomic_file af;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv__atomic_begin(NULL, "x"));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv__atomic_begin(&af, NULL));
    EXPECT_TRUE(af.tmp == NULL && af.fd == -1);
    /* a directory that does not exist: RV_E_IO naming it */
    EXPECT_STATUS(RV_E_IO, rv__atomic_begin(&af, "/nonexistent-rowvoi-dir/x.bin"));
    EXPECT_STR_CONTAINS(rv_errmsg(), "/nonexistent-rowvoi-dir");
    EXPECT_TRUE(af.tmp == NULL);
    rv__atomic_abort(&af); /* harmless on a released value */
    EXPECT_STATUS(RV_E_INVALID_ARG, rv__atomic_commit(&af));

    /* the rename fails (the target is a non-empty directory): RV_E_IO, the
    ** temporary is removed, the directory untouched */
    char dir[512], inside[600];
    in_tmp(dir, sizeof dir, "target_dir");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    snprintf(inside, sizeof inside, "%s/keep", dir);
    touch(inside, 0);
    ASSERT_OK(rv__atomic_begin(&af, dir));
    ASSERT_OK(rv__write_all(af.fd, "x", 1, af.tmp));
    EXPECT_STATUS(RV_E_IO, rv__atomic_commit(&af));
    EXPECT_STR_CONTAINS(rv_errmsg(), "cannot rename");
    EXPECT_EQ(count_entries("target_dir.tmp-"), 0);
    EXPECT_TRUE(exists(inside));
    unlink(inside);
    rmdir(dir);

    /* writes that fail: a full device, a closed descriptor */
    int full = open("/dev/full", O_WRONLY);
    if (full >= 0) {
        EXPECT_STATUS(RV_E_IO, rv__write_all(full, "abc", 3, "/dev/full"));
        EXPECT_STR_CONTAINS(rv_errmsg(), "/dev/full");
        close(full);
    }
    EXPECT_STATUS(RV_E_IO, rv__write_all(-1, "abc", 3, "nothing"));
    EXPECT_STATUS(RV_E_IO, rv__write_at(-1, "abc", 3, 0, "nothing"));
    EXPECT_OK(rv__write_all(-1, "", 0, "nothing")); /* nothing to write */

    /* a save into a missing directory fails cleanly for both indexes */
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = 2;
    rv_flat *fl = NULL;
    ASSERT_OK(rv_flat_create(&o, &fl));
    EXPECT_STATUS(RV_E_IO, rv_flat_save(fl, "/nonexistent-rowvoi-dir/x.rvf"));
    rv_flat_free(fl);

    /* allocation failures: NOMEM and nothing created */
    char path[512];
    in_tmp(path, sizeof path, "oom.bin");
    for (uint64_t n = 1; n <= 3; n++) {
        rv__test_fail_alloc_after(n);
        rv_status st = rv__atomic_begin(&af, path);
        rv__test_fail_alloc_after(0);
        if (st == RV_OK) {
            rv__atomic_abort(&af);
            break;
        }
        EXPECT_STATUS(RV_E_NOMEM, st);
        EXPECT_EQ(count_entries("oom.bin"), 0);
    }
    EXPECT_EQ(count_entries("oom.bin"), 0);
}

/* ------------------------------------------------- flat to and from memory */

static void test_flat_buffer_round_trip(void) {
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = 5;
    o.storage = RV_FLAT_I8;
    rv_flat *fl = NULL;
    ASSERT_OK(rv_flat_create(&o, &fl));
    float v[50];
    for (int i = 0; i < 50; i++) v[i] = (float)((i * 37) % 11) - 5.0f + 0.25f;
    int64_t ids[10] = {5, 9, 2, 40, 41, 7, 8, 100, 3, 1};
    ASSERT_OK(rv_flat_add(fl, 10, v, ids, NULL));
    int64_t gone = 9;
    ASSERT_OK(rv_flat_delete(fl, 1, &gone, NULL));
    size_t need = 0;
    EXPECT_STATUS(RV_E_SHAPE, rv_flat_save_buffer(fl, NULL, 0, &need));
    ASSERT_EQ(need, (size_t)(96 + 9 * (8 + 5 * 4)));
    unsigned char *buf = malloc(need), *file = malloc(need + 1);
    ASSERT_TRUE(buf && file);
    size_t got = 0;
    EXPECT_STATUS(RV_E_SHAPE, rv_flat_save_buffer(fl, buf, need - 1, &got));
    ASSERT_OK(rv_flat_save_buffer(fl, buf, need, &got));
    EXPECT_EQ(got, need);
    /* the buffer is the file, byte for byte */
    char path[512];
    in_tmp(path, sizeof path, "buf.rvf");
    ASSERT_OK(rv_flat_save(fl, path));
    FILE *f = fopen(path, "rb");
    ASSERT_TRUE(f != NULL);
    size_t fn = fread(file, 1, need + 1, f);
    fclose(f);
    EXPECT_EQ(fn, need);
    EXPECT_TRUE(memcmp(buf, file, need) == 0);
    rv_flat *back = NULL;
    ASSERT_OK(rv_flat_load_buffer(buf, need, &back));
    EXPECT_EQ(rv_flat_size(back), 9u);
    EXPECT_EQ(rv_flat_storage_kind(back), RV_FLAT_I8);
    EXPECT_TRUE(!rv_flat_contains(back, 9));
    EXPECT_TRUE(rv_flat_contains(back, 100));
    rv_flat_free(back);
    /* damaged and short buffers are RV_E_CORRUPT, never a crash */
    buf[120] ^= 1;
    EXPECT_STATUS(RV_E_CORRUPT, rv_flat_load_buffer(buf, need, &back));
    EXPECT_TRUE(back == NULL);
    for (size_t n = 0; n < need; n += 7)
        EXPECT_STATUS(RV_E_CORRUPT, rv_flat_load_buffer(file, n, &back));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_load_buffer(NULL, 4, &back));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_save_buffer(fl, NULL, 4, &got));
    unlink(path);
    free(buf);
    free(file);
    rv_flat_free(fl);
}

static void test_flat_check_queries(void) {
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = 2;
    rv_flat *fl = NULL;
    ASSERT_OK(rv_flat_create(&o, &fl));
    float good[4] = {1, 0, 0, 2}, nan_q[4] = {1, 0, NAN, 1}, zero[4] = {1, 1, 0, 0};
    float big[2] = {3e38f, 3e38f};
    EXPECT_OK(rv_flat_check_queries(fl, 2, good));
    EXPECT_OK(rv_flat_check_queries(fl, 0, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_check_queries(fl, 2, nan_q));
    EXPECT_STR_CONTAINS(rv_errmsg(), "queries[1][0] = nan: queries must be finite");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_check_queries(fl, 2, zero));
    EXPECT_STR_CONTAINS(rv_errmsg(), "queries[1] is a zero vector, which has no cosine");
    EXPECT_STATUS(RV_E_RANGE, rv_flat_check_queries(fl, 1, big));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_check_queries(NULL, 1, good));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_check_queries(fl, 1, NULL));
    rv_flat_free(fl);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rv_test_atomic_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN_TEST(test_commit_and_abort);
    RUN_TEST(test_modes_follow_umask);
    RUN_TEST(test_exact_modes);
    RUN_TEST(test_stale_temporaries);
    RUN_TEST(test_failures);
    RUN_TEST(test_flat_buffer_round_trip);
    RUN_TEST(test_flat_check_queries);
    rmdir(tmpdir);
    return RV_TEST_SUMMARY();
}
