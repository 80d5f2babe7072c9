/* FNV-1a, 64-bit: the one hash rotor's tables, memos and cache keys use.
 *
 * Written once here because six modules in four stages need it (ONNX name
 * tables, the KAPLA memos, the plan cache's file names and checksums, the
 * sweep memo).  FNV-1a is not cryptographic: each user either compares the
 * full key after a hash match or, for the plan cache's checksum, only needs
 * to catch damage, not an adversary (docs/compile.md, "Plan cache").
 * Static inline: a one-line loop per byte, and no state. */
#ifndef ROTOR_BASE_HASH_H
#define ROTOR_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define ROTOR_FNV1A_SEED 0xcbf29ce484222325ull /* the offset basis */
#define ROTOR_FNV1A_PRIME 0x100000001b3ull

/* h with one more 64-bit word folded in (a whole word per step, as the
 * memos keyed by integer factors use it). */
static inline uint64_t rotor_fnv1a_word(uint64_t h, uint64_t v) { return (h ^ v) * ROTOR_FNV1A_PRIME; }

/* The hash of n bytes at p, continuing from h (ROTOR_FNV1A_SEED to start). */
static inline uint64_t rotor_fnv1a_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * ROTOR_FNV1A_PRIME;
    return h;
}

/* The hash of a NUL-terminated string. */
static inline uint64_t rotor_fnv1a_str(const char *s) {
    uint64_t h = ROTOR_FNV1A_SEED;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * ROTOR_FNV1A_PRIME;
    return h;
}

#endif
