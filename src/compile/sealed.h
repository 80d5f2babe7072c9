/* sealed.h — a keyed text file sealed by a checksum, the envelope the
 * hand-off store (.rho) and the energy store (.ren) share (private to the
 * compile stage; docs/compile.md, "Plan cache"), and the reader their
 * bodies are parsed with. */
#ifndef ROTOR_COMPILE_SEALED_H
#define ROTOR_COMPILE_SEALED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads dir's file of key with extension ext: 1 with *body (malloc'd,
 * NUL-terminated, *blen bytes before the NUL) when it read back whole; 0
 * when there is none, or it is another key's (a miss: its name, the key's
 * hash, collided); -1 when damaged (truncated, edited, another format or
 * version).  Out of memory reads as a miss. */
int compile_sealed_read(const char *dir, const char *ext, const char *format, int version, const char *key,
                        char **body, size_t *blen);

/* Writes body[0..blen) as key's file (a temporary name, then a rename:
 * rotor_plancache_write).  False when it could not. */
bool compile_sealed_write(const char *dir, const char *ext, const char *format, int version, const char *key,
                          const char *body, size_t blen);

/* A reader over NUL-terminated text; bad once anything did not parse (every
 * later read then fails too, so a parser checks once at the end). */
typedef struct compile_reader {
    const char *p;
    bool bad;
} compile_reader;

/* A decimal integer. */
int64_t compile_reader_i64(compile_reader *r);

/* The decimal integer at *p after any white space, with an optional sign,
 * as strtoll reads it in the C locale, *p moved past it; false (and *p
 * unmoved) when there are no digits or it overflows int64_t.  The caches'
 * readers parse hundreds of thousands of these on a warm compile, and
 * strtoll's locale and base handling cost several times the digits. */
bool compile_parse_i64(const char **p, int64_t *v);

/* The word w, after any blanks and newlines. */
void compile_reader_word(compile_reader *r, const char *w);

#endif
