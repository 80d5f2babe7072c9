/* test_divisors.c — base/divisors.h: the divisors of n, ascending, as the
 * linear scan k = 1..n would list them (the walk's splits rely on the
 * order: the first of equal ratios wins). */
#include <criterion/criterion.h>
#include <stdint.h>

#include "rotor/base/divisors.h"

static void expect(int64_t n, const int64_t *want, int nwant) {
    int64_t got[ROTOR_MAX_DIVISORS];
    int k = rotor_divisors(n, got, ROTOR_MAX_DIVISORS);
    cr_assert_eq(k, nwant, "n=%lld: %d divisors, want %d", (long long)n, k, nwant);
    for (int i = 0; i < k; i++) cr_assert_eq(got[i], want[i], "n=%lld, divisor %d", (long long)n, i);
}

Test(divisors, small_numbers_squares_and_primes_in_ascending_order) {
    expect(1, (int64_t[]){1}, 1);
    expect(12, (int64_t[]){1, 2, 3, 4, 6, 12}, 6);
    expect(36, (int64_t[]){1, 2, 3, 4, 6, 9, 12, 18, 36}, 9);
    expect(1472, (int64_t[]){1, 2, 4, 8, 16, 23, 32, 46, 64, 92, 184, 368, 736, 1472}, 14);
    expect(1000003, (int64_t[]){1, 1000003}, 2);
}

Test(divisors, every_n_up_to_5000_lists_what_the_linear_scan_lists) {
    int64_t got[ROTOR_MAX_DIVISORS];
    for (int64_t n = 1; n <= 5000; n++) {
        int k = rotor_divisors(n, got, ROTOR_MAX_DIVISORS), i = 0;
        for (int64_t d = 1; d <= n; d++)
            if (n % d == 0) {
                cr_assert_lt(i, k, "n=%lld: %lld missing", (long long)n, (long long)d);
                cr_assert_eq(got[i], d, "n=%lld, divisor %d", (long long)n, i);
                i++;
            }
        cr_assert_eq(i, k, "n=%lld: %d listed, %d divide", (long long)n, k, i);
    }
}

Test(divisors, the_cap_holds_the_most_divisors_up_to_2_to_the_32) {
    int64_t got[ROTOR_MAX_DIVISORS];
    cr_assert_eq(rotor_divisors(3491888400, got, ROTOR_MAX_DIVISORS), 1920);
    cr_assert_eq(ROTOR_MAX_DIVISORS, 1920);
    cr_assert_eq(got[0], 1);
    cr_assert_eq(got[1919], 3491888400);
    for (int i = 1; i < 1920; i++) cr_assert_lt(got[i - 1], got[i]);
    cr_assert_eq(rotor_divisors(2095133040, got, ROTOR_MAX_DIVISORS), 1600);
}

Test(divisors, too_small_a_cap_or_n_below_1_is_refused) {
    int64_t got[5];
    cr_assert_eq(rotor_divisors(12, got, 5), -1); /* six divisors */
    cr_assert_eq(rotor_divisors(12, got, 6 - 1), -1);
    cr_assert_eq(rotor_divisors(0, got, 5), -1);
    cr_assert_eq(rotor_divisors(-4, got, 5), -1);
    cr_assert_eq(rotor_divisors(16, got, 5), 5); /* 1 2 4 8 16: exactly fits */
    cr_assert_eq(got[2], 4);
    cr_assert_eq(got[4], 16);
}

/* rotor_gcd is the largest common entry of the two divisor lists, and
 * gcd(a, 0) = a (the hand-off's sums fold it over counts from 0). */
Test(divisors, the_gcd_is_the_largest_divisor_the_two_share) {
    cr_assert_eq(rotor_gcd(12, 18), 6);
    cr_assert_eq(rotor_gcd(18, 12), 6);
    cr_assert_eq(rotor_gcd(7, 0), 7);
    cr_assert_eq(rotor_gcd(0, 7), 7);
    cr_assert_eq(rotor_gcd(1472, 1344), 64);
    for (int64_t a = 1; a <= 60; a++)
        for (int64_t b = 1; b <= 60; b++) {
            int64_t da[ROTOR_MAX_DIVISORS], db[ROTOR_MAX_DIVISORS], best = 0;
            int na = rotor_divisors(a, da, ROTOR_MAX_DIVISORS), nb = rotor_divisors(b, db, ROTOR_MAX_DIVISORS);
            for (int i = 0; i < na; i++)
                for (int j = 0; j < nb; j++)
                    if (da[i] == db[j] && da[i] > best) best = da[i];
            cr_assert_eq(rotor_gcd(a, b), best, "gcd(%lld, %lld)", (long long)a, (long long)b);
        }
}
