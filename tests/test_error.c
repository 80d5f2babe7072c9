/* Tests of error.c: the one out-of-memory failure and message prefixes. */
#include <criterion/criterion.h>
#include <string.h>

#include "rotor/base/error.h"

Test(error, nomem_says_out_of_memory_and_returns_its_own_status) {
    rotor_error err = {{0}};
    cr_assert_eq(rotor_nomem(&err), ROTOR_ERR_NOMEM);
    cr_assert_str_eq(err.msg, "out of memory");
    cr_assert_eq(rotor_nomem(NULL), ROTOR_ERR_NOMEM); /* a caller may pass no buffer */
    cr_assert_str_eq(rotor_status_name(ROTOR_ERR_NOMEM), "out of memory");
}

Test(error, prefix_puts_the_context_before_the_message) {
    rotor_error err = {{0}};
    rotor_fail(&err, ROTOR_ERR_INPUT, "dims: '%s' is not a number", "x");
    rotor_error_prefix(&err, "chip.json");
    cr_assert_str_eq(err.msg, "chip.json: dims: 'x' is not a number");
}

/* Found by fuzz_chip: a chip file's key with a newline in it was quoted
 * verbatim, and the error took two lines. */
Test(error, control_characters_a_message_quotes_are_escaped_to_keep_one_line) {
    rotor_error err = {{0}};
    rotor_fail(&err, ROTOR_ERR_INPUT, "unknown key '%s'", "a\nb\tc\x01");
    cr_assert_str_eq(err.msg, "unknown key 'a\\nb\\tc\\x01'");
    rotor_error_prefix(&err, "x\ny.json");
    cr_assert_str_eq(err.msg, "x\\ny.json: unknown key 'a\\nb\\tc\\x01'");
}

/* The message msg prefixed with prefix reads want. */
static void assert_prefixed(const char *msg, const char *prefix, const char *want) {
    rotor_error err;
    rotor_fail(&err, ROTOR_ERR_INPUT, "%s", msg);
    rotor_error_prefix(&err, prefix);
    cr_assert_str_eq(err.msg, want);
}

Test(error, an_option_prefix_replaces_the_word_it_repeats) {
    assert_prefixed("dims: m: expected a positive integer", "--dims", "--dims: m: expected a positive integer");
    assert_prefixed("dimsx: kept", "--dims", "--dims: dimsx: kept");
    assert_prefixed("dims: kept without dashes", "dims", "dims: dims: kept without dashes");
}

/* issue 24: the option is --dim, the library's word "dims" */
Test(error, an_option_prefix_replaces_its_plural_too) {
    assert_prefixed("dims: m: expected a positive integer", "--dim", "--dim: m: expected a positive integer");
    assert_prefixed("dimx: kept", "--dim", "--dim: dimx: kept");
}
