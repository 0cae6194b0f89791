/*
** Atomic file replacement: the one durability path of the engine.  Never
** installed.
**
** Every file the engine writes goes through these calls:
**
**   rv__atomic_file af;
**   rv_status st = rv__atomic_begin(&af, path);   // temp sibling, 0666 & ~umask
**   if (st) return st;
**   st = rv__write_all(af.fd, data, n, af.tmp);   // as often as needed
**   if (st) { rv__atomic_abort(&af); return st; }
**   return rv__atomic_commit(&af);                // fsync, rename, fsync dir
**
** The temporary is "PATH.tmp-HOST-PID-RAND" in the target's directory,
** created with O_EXCL|O_NOFOLLOW and mode 0666, so the process umask decides
** the final mode exactly as for any newly created file (rv__atomic_begin_mode
** gives an exact mode instead).  A crash before the rename
** leaves the previous file intact; the temporary it leaves is removed by
** the next rv__atomic_begin on the same path once it is stale: HOST is this
** machine (the host name reduced to [A-Za-z0-9_-], 32 characters) and no
** process PID exists (kill(PID, 0) fails with ESRCH), or HOST is another
** machine and the file is older than RV__ATOMIC_FOREIGN_AGE seconds.  Only
** names of exactly this pattern are considered.  The Python layer
** (rowvoi/_atomic.py) uses the same names and the same rule.
**
** Thread-safety: distinct rv__atomic_file values are independent; two saves
** to one path from two threads each get their own temporary, and the last
** rename wins.
*/
#ifndef ROWVOI_CORE_ATOMIC_FILE_H
#define ROWVOI_CORE_ATOMIC_FILE_H

#include <stddef.h>

#include "../internal.h"

/* Seconds after which another host's temporary counts as stale. */
#define RV__ATOMIC_FOREIGN_AGE (24 * 3600)

typedef struct rv__atomic_file {
    int fd;           /* open for writing, -1 once committed or aborted */
    char *tmp;        /* the temporary's path (owned) */
    char *dir;        /* the target's directory (owned) */
    const char *path; /* the target (borrowed for the duration) */
} rv__atomic_file;

/* Remove stale temporaries of path (see the top).  Best effort: never
** fails, allocates nothing through rv__malloc.  Returns how many it removed. */
size_t rv__atomic_clean_stale(const char *path);

/* Clean stale temporaries of path, then create a fresh temporary beside it.
** Returns RV_OK with af ready; RV_E_INVALID_ARG for NULL arguments;
** RV_E_NOMEM; RV_E_IO naming the directory and the system error (af is then
** released and needs no abort). */
rv_status rv__atomic_begin(rv__atomic_file *af, const char *path);

/* The same, with the new file's permission bits: mode < 0 gives
** 0666 & ~umask (as rv__atomic_begin); 0 <= mode <= 0777 gives exactly mode,
** whatever the umask (set on the temporary while it is still empty, so no
** byte is ever readable under another mode).  RV_E_INVALID_ARG for a mode
** above 0777. */
rv_status rv__atomic_begin_mode(rv__atomic_file *af, const char *path, long mode);

/* Write all n bytes at the current position, retrying short writes and
** EINTR.  RV_E_IO naming `what` (usually af->tmp) on failure. */
rv_status rv__write_all(int fd, const void *data, size_t n, const char *what);

/* Write n bytes at offset off (pwrite), retrying as rv__write_all. */
rv_status rv__write_at(int fd, const void *data, size_t n, uint64_t off, const char *what);

/* fsync and close the temporary, rename it over the target and fsync the
** directory (best effort: some file systems refuse to open directories).
** Always releases af; on failure the temporary is removed and the target is
** untouched.  RV_E_IO naming the file and the system error. */
rv_status rv__atomic_commit(rv__atomic_file *af);

/* Close and remove the temporary and release af.  Safe to call twice, and
** after rv__atomic_commit (then a no-op). */
void rv__atomic_abort(rv__atomic_file *af);

#endif /* ROWVOI_CORE_ATOMIC_FILE_H */
