/* readfile.c — a whole file into memory under a size limit
 * (include/rotor/base/readfile.h says why regular files, streams and devices
 * are read as they are). */
#include "rotor/base/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first buffer for a stream: 64 KiB, then doubling up to the limit. */
#define STREAM_FIRST ((size_t)1 << 16)

static rotor_status too_big(const char *path, int64_t max, int64_t size, rotor_error *err) {
    if (size >= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %lld bytes, over the limit of %lld bytes", path,
                          (long long)size, (long long)max);
    return rotor_fail(err, ROTOR_ERR_INPUT, "%s: a stream longer than the limit of %lld bytes", path,
                      (long long)max);
}

rotor_status rotor_read_fd(int fd, const char *path, int64_t max, char **out, size_t *len, rotor_error *err) {
    *out = NULL;
    *len = 0;
    struct stat sb;
    if (fstat(fd, &sb) != 0) return rotor_fail(err, ROTOR_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    if (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode))
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "%s: a %s device, not a file: rotor reads a regular file or a pipe of at most %lld bytes",
                          path, S_ISCHR(sb.st_mode) ? "character" : "block", (long long)max);
    bool regular = S_ISREG(sb.st_mode);
    if (max < 0) max = 0;
    if (regular && sb.st_size > max) return too_big(path, max, (int64_t)sb.st_size, err);
    size_t limit = (size_t)max + 1; /* one byte past the limit tells a longer stream */
    /* a regular file: its size and one byte more, where read(2) says EOF
     * (or, for a file that grew or a /proc file that gives no size, where
     * it goes on as a stream) */
    size_t cap = regular ? (size_t)sb.st_size + 1 : STREAM_FIRST < limit ? STREAM_FIRST : limit;
    char *buf = malloc(cap + 1);
    if (!buf) return rotor_nomem(err);
    size_t n = 0;
    rotor_status st = ROTOR_OK;
    for (;;) {
        if (n == cap) {
            if (n > (size_t)max) {
                st = too_big(path, max, -1, err);
                break;
            }
            size_t ncap = cap <= limit / 2 ? 2 * cap : limit;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                st = rotor_nomem(err);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            st = rotor_fail(err, ROTOR_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    if (st) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return ROTOR_OK;
}

rotor_status rotor_read_file(const char *path, int64_t max, char **out, size_t *len, rotor_error *err) {
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rotor_fail(err, ROTOR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    rotor_status st = rotor_read_fd(fd, path, max, out, len, err);
    close(fd);
    return st;
}
