/* rotor CLI — output files (README, "Output files").
 *
 * An output is checked and opened before the work starts, so that a bad
 * path fails in a second with the system's reason instead of after minutes
 * of work.  What happens next depends on what the path names:
 *   - "-" is standard output;
 *   - a directory is written into, under the subcommand's default name;
 *   - a symbolic link is followed, and what it names is treated as below
 *     (the link stays a link);
 *   - an existing file that is not a regular file (a character or block
 *     device, a FIFO, a socket) is written in place: opened for writing,
 *     never removed or replaced (/dev/null stays /dev/null);
 *   - a regular file, or a name that does not exist yet, is written to a
 *     temporary name beside it (TARGET.tmp.PID) and renamed over it only
 *     when complete and synced, so a failed or interrupted run never leaves
 *     a truncated file under the name asked for.  A lock file beside it
 *     (TARGET.rotor-lock, flock) is held from open to commit, so that a
 *     second run writing the same file is refused with the first one's PID
 *     instead of one run's output silently replacing the other's.
 * Every write is checked at the commit (the stream's error flag, fflush,
 * fsync, fclose, rename) and a failure is one line naming the path and the
 * system's reason, exit 2 (EXIT_BADINPUT, as every "cannot write" is).
 *
 * An output that names a file the run reads (`rotor compile m.onnx -o
 * m.onnx`, `rotor simulate p.json --trace p.json`) is refused before the
 * work: the rename at the commit would replace the input (until 2026-12-03
 * it did, exit 0; found by a review helper).  The inputs are the command
 * line's words that name an existing regular file (main notes them,
 * cli_args_note), the output's own word aside; an output named twice in one
 * run is told apart by its lock, which this process holds.
 *
 * The temporaries and lock files alive are kept in a small table, and a
 * handler of the signals that end a process removes them and dies of the
 * signal again (cli_signals_install).  That table and the command line's
 * words are the CLI's mutable global state: a signal handler has no other
 * way to find the files, and every output's check reads the same words.
 * SIGKILL cannot be caught; after one, a TARGET.tmp.PID may stay (never
 * under the name asked for) and a lock file may stay, which the next run
 * takes over: a flock dies with its process. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/jsontext.h"
#include "cli.h"
#include "rotor/model/onnx.h"

#define LOCK_SUFFIX ".rotor-lock"
#define LOCK_HELD (-1)    /* output_start: another run holds the lock */
#define WRITE_FAILED (-2) /* output_finish: a write failed earlier, its reason gone */

/* The reason the first failed write to standard output gave, where it was
 * caught as it happened (cli_puts); 0: not caught.  A stream keeps only
 * that a write failed, and the buffered data goes with it, so a failure
 * seen only at the end has no reason left to give. */
static int stdout_errno;
/* Set once a failure of standard output has been said, so that
 * cli_finish does not say it again. */
static bool stdout_reported;

static const char *reason(int e) { return e > 0 ? strerror(e) : "an earlier write failed"; }

void cli_puts(const char *text) {
    if (puts(text) == EOF && !stdout_errno) stdout_errno = errno;
}

int cli_print_json(const char *cmd, cJSON *root) {
    char *text = rotor_json_stamp(root) ? cJSON_Print(root) : NULL; /* with rotor's version */
    cJSON_Delete(root);
    if (!text) return cli_nomem(cmd);
    cli_puts(text);
    free(text);
    return 0;
}

bool cli_is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* ---- the command line's files ---------------------------------------------- */

static int args_n;
static char *const *args_v;

void cli_args_note(int argc, char *const *argv) {
    args_n = argc;
    args_v = argv;
}

/* Whether p points into command-line word w (its value: "-o X", "-oX",
 * "--output=X"). */
static bool within(const char *p, const char *w) { return p && p >= w && p <= w + strlen(w); }

/* Whether command-line word i is the value of an output option (-o X,
 * -oX, --output=X, --trace X, --report X).  Such a word is another output,
 * not an input: two outputs on one file are told apart by the lock the
 * first holds (cli_output_open_over), which names the clash rightly.  A
 * spelling missed here ("-qo X") is taken for an input: refused either
 * way, only in other words. */
static bool output_word(int i) {
    static const char *const opts[] = {"-o", "--output", "--trace", "--report"};
    const char *w = args_v[i], *prev = i > 1 ? args_v[i - 1] : "";
    if (w[0] == '-' && w[1] == 'o' && w[2]) return true;
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        size_t n = strlen(opts[k]);
        if (!strcmp(prev, opts[k]) || (!strncmp(w, opts[k], n) && w[n] == '=')) return true;
    }
    return false;
}

static bool same_file(const char *name, const struct stat *sb) {
    struct stat s;
    return stat(name, &s) == 0 && S_ISREG(s.st_mode) && s.st_dev == sb->st_dev && s.st_ino == sb->st_ino;
}

/* The command-line word (1..) that names the regular file sb describes, the
 * words `path` and `over` point into and other outputs' words aside (the
 * output option's own value; an input the output is meant to replace).  A
 * word names a file whole or after any '=' in it: "--model=FILE", and the
 * NAME=FILE of "--data x=FILE" and "--value s=FILE".  0: none. */
static int input_word(const char *path, const char *over, const struct stat *sb) {
    for (int i = 1; i < args_n; i++) {
        const char *w = args_v[i];
        if (within(path, w) || within(over, w) || output_word(i)) continue;
        if (same_file(w, sb)) return i;
        for (const char *eq = strchr(w, '='); eq; eq = strchr(eq + 1, '='))
            if (same_file(eq + 1, sb)) return i;
    }
    return 0;
}

/* ---- the live temporaries, removed on a signal ------------------------------ */

/* Room for every output one run holds at once (explore: a CSV, 72 heat
 * maps and a report, each a temporary and a lock) and a few side files. */
#define LIVE_MAX 256
static _Atomic(const char *) live[LIVE_MAX];

/* path (which must stay valid until live_drop) is removed if a signal
 * ends the run.  False: the table is full. */
static bool live_add(const char *path) {
    for (int i = 0; i < LIVE_MAX; i++) {
        const char *none = NULL;
        if (atomic_compare_exchange_strong(&live[i], &none, path)) return true;
    }
    return false;
}

static void live_drop(const char *path) {
    for (int i = 0; i < LIVE_MAX; i++) {
        const char *p = path;
        if (atomic_compare_exchange_strong(&live[i], &p, NULL)) return;
    }
}

/* Async-signal-safe: unlink, atomic loads and raise only.  Installed with
 * SA_RESETHAND | SA_NODEFER, so the raise meets the default action and the
 * process ends of the signal it got (the shell sees 128 + N). */
static void on_signal(int sig) {
    for (int i = 0; i < LIVE_MAX; i++) {
        const char *p = atomic_load(&live[i]);
        if (p) unlink(p);
    }
    raise(sig);
}

void cli_signals_install(void) {
    /* the signals whose default action ends the process and that a user, a
     * shell, a pipe or a limit sends; not the faults (SIGSEGV, ...), which
     * the sanitizers own and after which nothing is safe to do */
    static const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        /* a signal ignored at exec (nohup, a background job's SIGINT) stays ignored */
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- where an output goes ------------------------------------------------- */

static int copy_path(char *dst, size_t size, const char *src) {
    int n = snprintf(dst, size, "%s", src);
    return n < 0 || (size_t)n >= size ? ENAMETOOLONG : 0;
}

/* A symbolic link chain from path that ends at a name that does not exist:
 * that name, which the output creates (as a shell's > does). */
static int follow_dangling(const char *path, char *target, size_t size) {
    char cur[PATH_MAX], link[PATH_MAX];
    if (copy_path(cur, sizeof cur, path)) return ENAMETOOLONG;
    for (int hop = 0; hop < 40; hop++) { /* Linux's own limit on links in a path */
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) return errno == ENOENT || errno == EINVAL ? copy_path(target, size, cur) : errno;
        link[n] = '\0';
        if (link[0] == '/') {
            if (copy_path(cur, sizeof cur, link)) return ENAMETOOLONG;
            continue;
        }
        char *slash = strrchr(cur, '/'); /* relative: to the link's own directory */
        size_t dir = slash ? (size_t)(slash - cur) + 1 : 0;
        if (dir + (size_t)n >= sizeof cur) return ENAMETOOLONG;
        memcpy(cur + dir, link, (size_t)n + 1);
    }
    return ELOOP;
}

/* path with its symbolic links followed into target: the link's final
 * target for a regular file (realpath) or a name still to be created, path
 * itself otherwise (a device or FIFO is opened through the link).  *sb and
 * *exists describe what target names.  0 or errno. */
static int resolve(const char *path, char *target, size_t size, struct stat *sb, bool *exists) {
    *exists = false;
    if (lstat(path, sb) != 0) return errno == ENOENT ? copy_path(target, size, path) : errno;
    *exists = true;
    if (!S_ISLNK(sb->st_mode)) return copy_path(target, size, path);
    if (stat(path, sb) == 0) {
        if (!S_ISREG(sb->st_mode)) return copy_path(target, size, path);
        char real[PATH_MAX];
        return realpath(path, real) ? copy_path(target, size, real) : errno;
    }
    *exists = false;
    return errno == ENOENT ? follow_dangling(path, target, size) : errno;
}

/* ---- the lock beside a replaced file ---------------------------------------- */

/* The PID the lock's holder wrote into it (0: unknown).  The holder writes
 * it just after it takes the lock: an empty file is read again for up to
 * half a second. */
static long lock_holder(int fd) {
    for (int tries = 0; tries < 50; tries++) {
        char buf[32];
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        if (n > 0) {
            buf[n] = '\0';
            return strtol(buf, NULL, 10);
        }
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return 0;
}

/* Takes TARGET.rotor-lock for o: 0, errno, or LOCK_HELD with *holder. */
static int lock_take(cli_output *o, long *holder) {
    if (copy_path(o->lock, sizeof o->lock, o->target) ||
        strlen(o->lock) + sizeof LOCK_SUFFIX > sizeof o->lock) {
        o->lock[0] = '\0';
        return ENAMETOOLONG;
    }
    strcat(o->lock, LOCK_SUFFIX);
    int e = 0;
    for (int tries = 0; tries < 100 && !e; tries++) {
        int fd = open(o->lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
            e = errno;
            break;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            e = errno == EWOULDBLOCK ? LOCK_HELD : errno;
            if (e == LOCK_HELD) *holder = lock_holder(fd);
            close(fd);
            break;
        }
        /* The lock counts only if the file is still the one named: its last
         * holder unlinks it before it lets go, and a run that opened it in
         * between holds a lock nobody else can see. */
        struct stat mine, named;
        if (fstat(fd, &mine) == 0 && stat(o->lock, &named) == 0 && mine.st_dev == named.st_dev &&
            mine.st_ino == named.st_ino) {
            if (!live_add(o->lock)) {
                unlink(o->lock);
                close(fd);
                e = EMFILE;
                break;
            }
            char pid[32];
            int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            /* unwritten, the PID is only missing from the other run's refusal */
            if (ftruncate(fd, 0) != 0 || write(fd, pid, (size_t)n) != n) pid[0] = '\0';
            o->lock_fd = fd;
            return 0;
        }
        close(fd);
    }
    o->lock[0] = '\0';
    return e ? e : EAGAIN;
}

/* Out of the table first, then unlinked: a signal in between leaves the
 * file (harmless, the next run takes it over) rather than unlinking one
 * another run may have made since. */
static void lock_drop(cli_output *o) {
    if (!o->lock[0]) return;
    live_drop(o->lock);
    unlink(o->lock);
    close(o->lock_fd);
    o->lock[0] = '\0';
}

/* ---- opening and committing --------------------------------------------- */

static int open_in_place(cli_output *o) {
    int fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return errno;
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        return e;
    }
    o->in_place = true;
    return 0;
}

/* TARGET.TAG.PID, created (never an existing file: a stale temporary of
 * another process is not written into) with the mode of the file it
 * replaces, if any (a courtesy: a mode that cannot be set is not an error). */
static int open_temp(cli_output *o, const char *tag, const struct stat *old) {
    int n = snprintf(o->tmp, sizeof o->tmp, "%s.%s.%ld", o->target, tag, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof o->tmp || !live_add(o->tmp)) {
        int e = n < 0 || (size_t)n >= sizeof o->tmp ? ENAMETOOLONG : EMFILE;
        o->tmp[0] = '\0';
        return e;
    }
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666), e = errno;
    if (fd >= 0 && old && fchmod(fd, old->st_mode & 0777) != 0) {
        /* the new file keeps the default mode */
    }
    if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
        e = errno;
        close(fd);
        unlink(o->tmp);
        fd = -1;
    }
    if (fd < 0) {
        live_drop(o->tmp);
        o->tmp[0] = '\0';
        return e;
    }
    return 0;
}

/* o->path opened as the header says: 0, errno, or LOCK_HELD (*holder). */
static int output_start(cli_output *o, const char *tag, bool lock, long *holder) {
    struct stat sb;
    bool exists;
    int e = resolve(o->path, o->target, sizeof o->target, &sb, &exists);
    if (e) return e;
    if (exists && !S_ISREG(sb.st_mode)) return open_in_place(o);
    if (lock && (e = lock_take(o, holder))) return e;
    if ((e = open_temp(o, tag, exists ? &sb : NULL))) lock_drop(o);
    return e;
}

/* Flushes, syncs, closes and renames into place: 0, errno or WRITE_FAILED.  The
 * temporary is removed on failure; the lock is let go either way. */
static int output_finish(cli_output *o) {
    int e = 0;
    if (fflush(o->f) != 0) e = errno;
    else if (ferror(o->f)) e = WRITE_FAILED;
    /* fsync: a delayed allocation's ENOSPC or a network file system's
     * failure may only show here; a device or FIFO is not synced */
    if (!e && !o->in_place && fsync(fileno(o->f)) != 0 && errno != EINVAL) e = errno;
    if (fclose(o->f) != 0 && !e) e = errno;
    o->f = NULL;
    if (o->tmp[0]) {
        if (!e && rename(o->tmp, o->target) != 0) e = errno;
        if (e) unlink(o->tmp);
        live_drop(o->tmp); /* after: a signal before the rename still finds it */
        o->tmp[0] = '\0';
    }
    lock_drop(o);
    return e;
}

/* The line refusing output `file` (written for the word `path`) where it is
 * a file the command line reads, `over` aside; 0 where it is not. */
static int refuse_input(const char *cmd, const char *opt, const char *file, const char *path, const char *over) {
    struct stat sb;
    int at = stat(file, &sb) == 0 && S_ISREG(sb.st_mode) ? input_word(path, over, &sb) : 0;
    return at ? cli_usage_error(cmd, "%s: %s: is the file '%s' this run reads; the output would replace it", opt, file,
                                args_v[at])
              : 0;
}

int cli_output_check(const char *cmd, const char *opt, const char *path) {
    if (cli_is_dir(path)) return cli_usage_error(cmd, "%s: %s: is a directory", opt, path);
    return refuse_input(cmd, opt, path, path, NULL);
}

int cli_output_open(const char *cmd, const char *opt, const char *path, const char *default_name, cli_output *o) {
    return cli_output_open_over(cmd, opt, path, default_name, NULL, o);
}

int cli_output_open_over(const char *cmd, const char *opt, const char *path, const char *default_name,
                         const char *over, cli_output *o) {
    memset(o, 0, sizeof *o);
    if (!strcmp(path, "-")) {
        o->is_stdout = true;
        o->f = stdout;
        snprintf(o->path, sizeof o->path, "-");
        return 0;
    }
    int n = cli_is_dir(path) ? snprintf(o->path, sizeof o->path, "%s%s%s", path,
                                        path[strlen(path) - 1] == '/' ? "" : "/", default_name)
                             : snprintf(o->path, sizeof o->path, "%s", path);
    if (n < 0 || (size_t)n >= sizeof o->path) return cli_usage_error(cmd, "%s: path too long", opt);
    if (cli_is_dir(o->path)) return cli_usage_error(cmd, "%s: %s: is a directory", opt, o->path);
    int rc = refuse_input(cmd, opt, o->path, path, over);
    if (rc) return rc;
    long holder = 0;
    int e = output_start(o, "tmp", true, &holder);
    if (e == LOCK_HELD && holder == (long)getpid())
        return cli_usage_error(cmd, "%s: %s: another output of this run writes it already", opt, o->path);
    if (e == LOCK_HELD && holder > 0)
        return cli_usage_error(cmd, "%s: %s: another rotor run (PID %ld) is writing it", opt, o->path, holder);
    if (e == LOCK_HELD) return cli_usage_error(cmd, "%s: %s: another rotor run is writing it", opt, o->path);
    if (e) return cli_usage_error(cmd, "%s: %s: cannot write (%s)", opt, o->path, strerror(e));
    return 0;
}

int cli_output_commit(const char *cmd, const char *opt, cli_output *o) {
    if (!o->f) return 0;
    if (o->is_stdout) {
        bool bad = fflush(stdout) != 0;
        int e = bad ? errno : stdout_errno;
        o->f = NULL;
        if (!bad && !ferror(stdout)) return 0;
        stdout_reported = true;
        return cli_usage_error(cmd, "%s: standard output: cannot write (%s)", opt, reason(e));
    }
    int e = output_finish(o);
    return e ? cli_usage_error(cmd, "%s: %s: cannot write (%s)", opt, o->path, reason(e)) : 0;
}

void cli_output_abort(cli_output *o) {
    if (o->f && !o->is_stdout) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) {
        unlink(o->tmp);
        live_drop(o->tmp);
        o->tmp[0] = '\0';
    }
    lock_drop(o);
}

int cli_side_open(const char *path, cli_output *o) {
    memset(o, 0, sizeof *o);
    if (copy_path(o->path, sizeof o->path, path)) return ENAMETOOLONG;
    return output_start(o, "part", false, NULL);
}

int cli_side_commit(cli_output *o) {
    int e = o->f ? output_finish(o) : 0;
    return e == WRITE_FAILED ? EIO : e;
}

int cli_finish(const char *cmd, int rc) {
    for (int i = 0; i < LIVE_MAX; i++) { /* an output neither committed nor aborted: none should be */
        const char *p = atomic_exchange(&live[i], NULL);
        if (p) unlink(p);
    }
    bool bad = fflush(stdout) != 0;
    int e = bad ? errno : stdout_errno;
    bad |= ferror(stdout) != 0;
    /* a close that fails is an error too (a network file system may say so
     * only there), unless standard output was closed before rotor ran */
    if (fclose(stdout) != 0 && !bad && errno != EBADF) {
        bad = true;
        e = errno;
    }
    if (!bad || stdout_reported) return rc;
    fprintf(stderr, "rotor%s%s: standard output: cannot write (%s)\n", cmd ? " " : "", cmd ? cmd : "", reason(e));
    return rc ? rc : EXIT_BADINPUT;
}

/* ---- run -o: tensor files ---------------------------------------------------- */

int cli_output_tensor(const char *cmd, const char *opt, const char *path, const rotor_onnx_tensor *t) {
    cli_output o;
    int rc = cli_output_open(cmd, opt, path, "", &o);
    if (rc) return rc;
    /* The library writes a TensorProto to a path of its own choosing (and
     * its own PATH.tmp, renamed): a scratch file, registered with both
     * names, copied into the output.  Beside the target, or in TMPDIR for
     * a device or FIFO. */
    const char *tmpdir = getenv("TMPDIR");
    char scratch[4300], scratch_tmp[4310];
    if (o.in_place) snprintf(scratch, sizeof scratch, "%s/rotor-%ld.pb", tmpdir && *tmpdir ? tmpdir : "/tmp",
                             (long)getpid());
    else snprintf(scratch, sizeof scratch, "%s.part.%ld", o.target, (long)getpid());
    snprintf(scratch_tmp, sizeof scratch_tmp, "%s.tmp", scratch);
    if (!live_add(scratch) || !live_add(scratch_tmp)) {
        live_drop(scratch);
        cli_output_abort(&o);
        return cli_usage_error(cmd, "%s: %s: cannot write (%s)", opt, o.path, strerror(EMFILE));
    }
    rotor_error err = {{0}};
    rotor_status st = rotor_onnx_tensor_write(scratch, t, &err);
    FILE *in = st ? NULL : fopen(scratch, "rb");
    int e = st || in ? 0 : errno;
    char buf[1 << 16];
    size_t n;
    while (in && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, o.f);
    if (in && ferror(in)) e = EIO;
    if (in) fclose(in);
    unlink(scratch);
    live_drop(scratch);
    live_drop(scratch_tmp);
    if (st || e) cli_output_abort(&o);
    if (st == ROTOR_ERR_NOMEM) return cli_nomem(cmd);
    if (st) return cli_usage_error(cmd, "%s: %s: cannot write (%s)", opt, o.path, err.msg);
    if (e) return cli_usage_error(cmd, "%s: %s: cannot write (%s: %s)", opt, o.path, scratch, strerror(e));
    return cli_output_commit(cmd, opt, &o);
}

/* ---- default names -------------------------------------------------------- */

void cli_model_base(const char *input, char *buf, size_t size) {
    const char *base = input;
    size_t len = strlen(input);
    if (rotor_model_is_onnx(input)) {
        const char *slash = strrchr(input, '/');
        if (slash) base = slash + 1;
        len = strlen(base);
        if (len > 5 && !strcmp(base + len - 5, ".onnx")) len -= 5;
    }
    snprintf(buf, size, "%.*s", (int)len, base);
}

int cli_output_open_model(const char *cmd, const char *opt, const char *path, const char *input, const char *suffix,
                          cli_output *o) {
    char name[300], base[256];
    cli_model_base(input, base, sizeof base);
    snprintf(name, sizeof name, "%s%s", base, suffix);
    return cli_output_open(cmd, opt, path ? path : name, name, o);
}
