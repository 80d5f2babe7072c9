/* fuzz.h — shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c, `make
 * fuzz`; docs/fuzzing.md).  Each harness feeds one parser bytes as a user or
 * a foreign file would, and checks what must hold whatever the bytes: the
 * call returns (the sanitizers catch the rest), a failure names what is
 * wrong in one non-empty line, and a success gives an object that frees. */
#ifndef ROTOR_FUZZ_H
#define ROTOR_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as a NUL-terminated string (a NUL inside ends it early, as a C
 * caller would see it); the caller frees. */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Every error is one line with something in it. */
static inline void fuzz_check_error(rotor_status st, const rotor_error *err) {
    if (st == ROTOR_OK) return;
    if (!err->msg[0] || strchr(err->msg, '\n')) abort();
}

#endif
