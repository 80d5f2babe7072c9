/* test_suggest.c — "did you mean" (src/base/suggest.c). */
#include <criterion/criterion.h>

#include <string.h>

#include "rotor/base/suggest.h"

static const char *const ZOO[] = {"bert-base", "bert-large", "resnet-18", "resnet-50", "llama2-13b", "llama2-70b"};
#define NZOO ((int)(sizeof ZOO / sizeof ZOO[0]))

Test(suggest, misspellings_find_the_known_name) {
    cr_assert_str_eq(rotor_suggest("resnet50", ZOO, NZOO), "resnet-50");          /* a missing dash */
    cr_assert_str_eq(rotor_suggest("Resnet_50", ZOO, NZOO), "resnet-50");         /* case and '_' fold */
    cr_assert_str_eq(rotor_suggest("rsenet-50", ZOO, NZOO), "resnet-50");         /* two letters swapped */
    cr_assert_str_eq(rotor_suggest("bert-larg", ZOO, NZOO), "bert-large");        /* a letter short */
    cr_assert_str_eq(rotor_suggest("llama2-13", ZOO, NZOO), "llama2-13b");
}

Test(suggest, unrelated_words_get_no_suggestion) {
    cr_assert_null(rotor_suggest("gpt", ZOO, NZOO));
    cr_assert_null(rotor_suggest("bert-huge", ZOO, NZOO)); /* three letters off bert-base */
    cr_assert_null(rotor_suggest("mobilenet", ZOO, NZOO));
    cr_assert_null(rotor_suggest("", ZOO, NZOO));
    cr_assert_null(rotor_suggest(NULL, ZOO, NZOO));
    cr_assert_null(rotor_suggest("x", ZOO, 0));
}

Test(suggest, ties_go_to_the_first_and_the_phrase_is_empty_without_one) {
    static const char *const two[] = {"full", "fall"};
    cr_assert_str_eq(rotor_suggest("fell", two, 2), "full");
    char buf[64];
    cr_assert_str_eq(rotor_suggest_phrase("ful", two, 2, buf, sizeof buf), " (did you mean 'full'?)");
    cr_assert_str_eq(rotor_suggest_phrase("zzzzzz", two, 2, buf, sizeof buf), "");
}
