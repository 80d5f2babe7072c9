/* rotor — errors and checked arithmetic shared by every module.
 *
 * The library never prints and never exits: a function that can fail returns a
 * rotor_status and fills a caller-owned rotor_error with one line of text.  Only
 * src/cli/ turns that into stderr and an exit status (house style). */
#ifndef ROTOR_ERROR_H
#define ROTOR_ERROR_H

#include <stdbool.h>
#include <stdint.h>

typedef enum rotor_status {
    ROTOR_OK = 0,
    ROTOR_ERR_INPUT,   /* malformed or out-of-range input: the CLI exits 2 */
    ROTOR_ERR_NOFIT,   /* well-formed, but no plan fits the chip: exit 1 */
    ROTOR_ERR_NOMEM,   /* allocation failed: exit 3 */
    ROTOR_ERR_IO       /* a file could not be read or written: exit 2 */
} rotor_status;

#define ROTOR_ERROR_MAX 512

typedef struct rotor_error {
    char msg[ROTOR_ERROR_MAX];
} rotor_error;

/* Formats the message into err (if err is non-NULL) and returns code, so that
 * callers can write `return rotor_fail(err, ROTOR_ERR_INPUT, "...", ...)`.
 *
 * The convention of every function that returns a rotor_status: on ROTOR_OK
 * its outputs hold the result; on an error err holds one line and its
 * outputs hold what its header says (most: zeroed or NULL, nothing to free). */
rotor_status rotor_fail(rotor_error *err, rotor_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The one out-of-memory failure (as Lua's luaM_error, SQLite's
 * SQLITE_NOMEM_BKPT): writes "out of memory" into err and returns
 * ROTOR_ERR_NOMEM.  Every allocation failure in the library reports through
 * it; the CLI maps ROTOR_ERR_NOMEM to its own exit status (3). */
rotor_status rotor_nomem(rotor_error *err);

/* Prefixes the message already in err with "prefix: ".  An option prefix
 * ("--dims") replaces the same word starting the message ("dims: ..."), so
 * that nothing is named twice. */
void rotor_error_prefix(rotor_error *err, const char *prefix);

/* A non-negative sum of bytes kept in a double, as int64_t: held at
 * INT64_MAX from 9.2e18 on (a double past 2^63 has no int64_t value). */
static inline int64_t rotor_i64_held(double x) { return x < 9.2e18 ? (int64_t)x : INT64_MAX; }

/* Checked int64 arithmetic: false on overflow (*out is then unspecified). */

static inline bool rotor_mul_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool rotor_add_i64(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

/* Short text for a status code ("bad input", "no plan fits", ...). */
const char *rotor_status_name(rotor_status s);

#endif
