/* test_runcheck.c — how rotor run compares an output with its reference
 * (rotor_run_compare and rotor_run_count_nonfinite in src/run/run.c;
 * docs/run.md, "Tolerance").  The rule is numpy's assert_allclose, which
 * ONNX's backend test runner calls (equal_nan true, infinities where the
 * reference has them): NaN matches only NaN, an infinity only the same
 * infinity, and the tolerance |x - r| <= 1e-5 + 1e-3 |r| applies to finite
 * pairs alone. */
#include <criterion/criterion.h>

#include <math.h>

#include "rotor/run/run.h"

Test(runcheck, finite_elements_pass_within_the_stated_tolerance_and_fail_beyond_it) {
    /* at r = 100 the tolerance is 1e-5 + 0.1 */
    const double ref[3] = {100, 100, 0};
    const double in[3] = {100.1, 100.1000101, 1e-5};
    rotor_run_cmp c = rotor_run_compare(in, ref, 2, false);
    cr_assert_eq(c.bad, 1, "100.1 is within 0.10001 of 100, 100.1000101 is not");
    cr_assert_eq(c.nonfinite, 0);
    cr_assert_float_eq(c.max_abs, 0.1000101, 1e-9);
    c = rotor_run_compare(in + 2, ref + 2, 1, false);
    cr_assert_eq(c.bad, 0, "1e-5 from 0 is the absolute tolerance");
    c = rotor_run_compare(in + 2, ref + 2, 1, true);
    cr_assert_eq(c.bad, 1, "an exact comparison has no tolerance");
}

Test(runcheck, a_reference_of_nan_fails_every_number_against_it) {
    const double ref[4] = {NAN, NAN, NAN, NAN};
    const double in[4] = {0, 1e30, INFINITY, -2};
    rotor_run_cmp c = rotor_run_compare(in, ref, 4, false);
    cr_assert_eq(c.bad, 4);
    cr_assert_eq(c.nonfinite, 4);
    cr_assert(isinf(c.max_abs));
    c = rotor_run_compare(in, ref, 4, true);
    cr_assert_eq(c.bad, 4, "exact comparisons too");
}

Test(runcheck, nan_against_nan_is_equal_and_nan_against_a_number_is_not) {
    const double ref[3] = {NAN, 1, NAN};
    const double in[3] = {NAN, NAN, -NAN};
    rotor_run_cmp c = rotor_run_compare(in, ref, 3, false);
    cr_assert_eq(c.bad, 1, "only the NaN against 1 differs");
    cr_assert_eq(c.nonfinite, 1);
    c = rotor_run_compare(in, in, 3, false);
    cr_assert_eq(c.bad, 0, "an all-NaN output equals itself");
    cr_assert_eq(c.max_abs, 0.0);
}

Test(runcheck, an_infinity_must_equal_the_same_infinity_exactly) {
    const double ref[4] = {INFINITY, INFINITY, -INFINITY, 1e308};
    const double in[4] = {INFINITY, -INFINITY, 1e308, INFINITY};
    rotor_run_cmp c = rotor_run_compare(in, ref, 4, false);
    /* +inf = +inf; -inf against +inf, a finite value against -inf, and
     * +inf against the largest finite reference all differ, though the
     * tolerance at |r| = inf would be infinite */
    cr_assert_eq(c.bad, 3);
    cr_assert_eq(c.nonfinite, 3);
    cr_assert(isinf(c.max_abs));
}

Test(runcheck, a_difference_that_overflows_is_beyond_any_tolerance) {
    const double ref[1] = {-1.5e308};
    const double in[1] = {1.5e308};
    rotor_run_cmp c = rotor_run_compare(in, ref, 1, false);
    cr_assert_eq(c.bad, 1);
    cr_assert_eq(c.nonfinite, 0, "both are finite");
}

Test(runcheck, nonfinite_elements_are_counted_by_kind) {
    const double x[6] = {NAN, INFINITY, -INFINITY, 0, -NAN, 3};
    int64_t nan, inf;
    rotor_run_count_nonfinite(x, 6, &nan, &inf);
    cr_assert_eq(nan, 2);
    cr_assert_eq(inf, 2);
    rotor_run_count_nonfinite(x, 0, &nan, &inf);
    cr_assert_eq(nan + inf, 0);
}
