/* A test that leaks on purpose, when asked (ROTOR_TEST_LEAK=1): the proof
 * that `make SAN=1 test` fails on a leak (tests/cli_leakcheck.sh runs it
 * under the sanitizers and checks the run fails, naming it; why that needs
 * tests/sanreport.sh is said there).  Skipped in every other run. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(leakcheck, a_test_that_leaks_when_asked_fails_the_sanitizer_run) {
    const char *ask = getenv("ROTOR_TEST_LEAK");
    if (!ask || strcmp(ask, "1") != 0) cr_skip_test("leaks only for tests/cli_leakcheck.sh (ROTOR_TEST_LEAK=1)");
    char *volatile lost = malloc(77); /* volatile: not optimised away */
    cr_assert_not_null(lost);
    lost[0] = 1;
    lost = NULL;
}
