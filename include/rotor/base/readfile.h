/* rotor — a whole file into memory under a size limit (issue 47, "Bounded
 * work"): the one reader of the chip file (base/chip.c), the plan and
 * program files (op/planfile.c) and the ONNX model and TensorProto files
 * (model/onnxval.c, ox_read_file).
 *
 * A regular file is read by its size: fstat gives it, a size over the limit
 * is refused before anything is allocated, and one read of that size fills
 * the buffer (read(2) is repeated only where it returns less).  A pipe or a
 * FIFO has no size: it is read into a buffer that doubles up to max + 1
 * bytes, and refused when byte max + 1 arrives.  A character or block device
 * is refused unread: it has no size, and the devices a path names by mistake
 * (/dev/zero, /dev/urandom, a terminal) never end; reading one to a limit of
 * gigabytes would cost that much memory and time (4.2 s per GiB from
 * /dev/zero on the CI machine) for an answer known before the first byte. */
#ifndef ROTOR_READFILE_H
#define ROTOR_READFILE_H

#include <stddef.h>
#include <stdint.h>

#include "rotor/base/error.h"

/* The contents of open descriptor fd (named path in messages), at most max
 * bytes, into *out (malloc'd, NUL-terminated after *len bytes; the caller
 * frees).  fd is left open.  Errors: "PATH: 5000 bytes, over the limit of
 * 1000 bytes", "PATH: a stream longer than the limit of 1000
 * bytes", "PATH: a character device, not a file: rotor reads a regular file
 * or a pipe of at most 1000 bytes" (ROTOR_ERR_INPUT); "PATH: cannot read:
 * Is a directory" (ROTOR_ERR_IO).  After an error *out is NULL, *len 0. */
rotor_status rotor_read_fd(int fd, const char *path, int64_t max, char **out, size_t *len, rotor_error *err);

/* The same after opening path; a file that does not open is "PATH: cannot
 * open: No such file or directory" (ROTOR_ERR_IO). */
rotor_status rotor_read_file(const char *path, int64_t max, char **out, size_t *len, rotor_error *err);

#endif
