/* criterion_git.c — Criterion's libgit2, started when it is first used.
 *
 * Criterion 2.4 starts libgit2 (git_libgit2_init) in every process it runs:
 * its runner, and each test, which it runs in a fresh exec of this binary.
 * It uses libgit2 for one thing, git_diff_buffers, to show the difference
 * when an assertion on two strings fails; but Debian's libgit2 loads the
 * system's CA certificates when it starts (mbedtls: some 220,000
 * allocations), about 15 ms of CPU per test in the plain build and 40 ms
 * under ASan, whose allocator takes each of them and whose leak check scans
 * them: a quarter of a short test's time, 610 times per run
 * (docs/performance.md, "CI").
 *
 * The executable's definitions come first in the dynamic linker's lookup, so
 * Criterion's calls land here: git_libgit2_init does nothing, and the first
 * git_diff_buffers starts the real libgit2 (the next definition, RTLD_NEXT)
 * before it diffs; git_libgit2_shutdown stops it only if it was started.
 * A test's result does not depend on it.  The prototypes are libgit2's
 * (git2/global.h, git2/diff.h) with its pointer types spelled void *, the
 * same on the ABI. */
#include <dlfcn.h>
#include <stddef.h>

int git_libgit2_init(void);
int git_libgit2_shutdown(void);
int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path, const void *new_buffer,
                     size_t new_len, const char *new_as_path, const void *options, void *file_cb, void *binary_cb,
                     void *hunk_cb, void *line_cb, void *payload);

typedef int (*git_void_fn)(void);
typedef int (*git_diff_fn)(const void *, size_t, const char *, const void *, size_t, const char *, const void *,
                           void *, void *, void *, void *, void *);

/* whether this process started the real libgit2 (Criterion's processes
 * are single-threaded where they report a failure) */
static int started;

/* The next definition of `name`: libgit2's.  NULL if it is not there, which
 * makes the caller's diff fail as a missing libgit2 would. */
static void *real(const char *name) {
    return dlsym(RTLD_NEXT, name);
}

int git_libgit2_init(void) {
    return 1;
}

int git_libgit2_shutdown(void) {
    if (!started) return 0;
    started = 0;
    git_void_fn f;
    *(void **)&f = real("git_libgit2_shutdown");
    return f ? f() : 0;
}

int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path, const void *new_buffer,
                     size_t new_len, const char *new_as_path, const void *options, void *file_cb, void *binary_cb,
                     void *hunk_cb, void *line_cb, void *payload) {
    git_diff_fn diff;
    *(void **)&diff = real("git_diff_buffers");
    if (!diff) return -1;
    if (!started) {
        git_void_fn init;
        *(void **)&init = real("git_libgit2_init");
        if (!init || init() < 0) return -1;
        started = 1;
    }
    return diff(old_buffer, old_len, old_as_path, new_buffer, new_len, new_as_path, options, file_cb, binary_cb,
                hunk_cb, line_cb, payload);
}
