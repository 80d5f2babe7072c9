/* divisors.h — the divisors of an integer, ascending, the greatest
 * common divisor of two, and division rounded toward minus infinity.
 *
 * Several stages walk the divisors of a count (a temporal step's choices,
 * a ring's splits, a random draw).  A scan k = 1..n with a remainder test
 * costs n divisions; pairing d with n/d up to sqrt(n) costs sqrt(n) and
 * gives the same divisors in the same (ascending) order, so a caller's
 * first-wins tie-breaks are unchanged.  Static inline: one loop, no state. */
#ifndef ROTOR_BASE_DIVISORS_H
#define ROTOR_BASE_DIVISORS_H

#include <stdint.h>

/* Enough for every n <= 2^32, the largest extent (ROTOR_EXTENT_MAX):
 * 3,491,888,400 has the most, 1,920. */
#define ROTOR_MAX_DIVISORS 1920

/* The divisors of n into out[0..cap), ascending; their count, or -1 when
 * n < 1 or there are more than cap of them (out is then unspecified). */
static inline int rotor_divisors(int64_t n, int64_t *out, int cap) {
    if (n < 1 || cap < 1) return -1;
    int k = 0, nbig = 0;
    /* the large partners n/d wait at the end of out, the largest last */
    for (int64_t d = 1; d <= n / d; d++) {
        if (n % d) continue;
        int need = d == n / d ? 1 : 2;
        if (k + nbig + need > cap) return -1;
        out[k++] = d;
        if (need == 2) out[cap - ++nbig] = n / d;
    }
    for (int i = 0; i < nbig; i++) out[k + i] = out[cap - nbig + i]; /* source >= destination */
    return k + nbig;
}

/* The greatest common divisor of a and b (Euclid's; gcd(a, 0) = a). */
static inline int64_t rotor_gcd(int64_t a, int64_t b) {
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* a / b rounded down (C's / truncates toward zero), for any signs; b != 0. */
static inline int64_t rotor_floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

#endif
