/* test_hashtab.c — the hash table keyed by byte strings (src/base/hashtab.c):
 *  - keys found with their values, absent and near-miss keys not, a key
 *    added twice kept once with its first value;
 *  - growth doubles the slots before an add would pass half full, and
 *    keeps every key and every value written in place;
 *  - colliding keys (a constant hash, FNV-1a's low bits alike) are all
 *    found, and the walk is in slot order (the order the energy store's and
 *    the hand-off store's files are written in);
 *  - absurd sizes are errors with a message, nothing allocated, the table
 *    unchanged. */
#include <criterion/criterion.h>

#include <stdint.h>
#include <string.h>

#include "rotor/base/hashtab.h"

static rotor_hashtab *new_tab(int64_t vsize, int64_t first, rotor_hashtab_hash hash) {
    rotor_hashtab *t = NULL;
    rotor_error err;
    cr_assert_eq(rotor_hashtab_new(vsize, first, hash, &t, &err), ROTOR_OK);
    cr_assert(t);
    return t;
}

static void add_str(rotor_hashtab *t, const char *k, int64_t v) {
    bool added = false;
    cr_assert_eq(rotor_hashtab_add(t, k, (int64_t)strlen(k), &v, NULL, &added, NULL), ROTOR_OK, "%s", k);
    cr_assert(added, "%s", k);
}

static const int64_t *find_str(const rotor_hashtab *t, const char *k) {
    return rotor_hashtab_find(t, k, (int64_t)strlen(k));
}

Test(hashtab, added_keys_are_found_with_their_values_and_others_are_not) {
    rotor_hashtab *t = new_tab(sizeof(int64_t), 64, NULL);
    cr_assert_null(find_str(t, "a")); /* no slots yet */
    cr_assert_eq(rotor_hashtab_slots(t), 0);
    add_str(t, "alpha", 11);
    add_str(t, "beta", 22);
    add_str(t, "gamma", 33);
    cr_assert_eq(rotor_hashtab_count(t), 3);
    cr_assert_eq(rotor_hashtab_slots(t), 64);
    cr_assert_eq(*find_str(t, "alpha"), 11);
    cr_assert_eq(*find_str(t, "beta"), 22);
    cr_assert_eq(*find_str(t, "gamma"), 33);
    cr_assert_null(find_str(t, "delta"));
    cr_assert_null(rotor_hashtab_find(t, "alphabet", 4)); /* "alph": a prefix is another key */
    cr_assert_null(rotor_hashtab_find(t, "alpha", 6));    /* with the NUL: another length */
    cr_assert_null(rotor_hashtab_find(t, "alpha", -1));
    rotor_hashtab_free(t);
}

Test(hashtab, a_key_added_twice_keeps_its_first_value) {
    rotor_hashtab *t = new_tab(sizeof(int64_t), 64, NULL);
    add_str(t, "k", 5);
    int64_t v = 9;
    void *at = NULL;
    bool added = true;
    cr_assert_eq(rotor_hashtab_add(t, "k", 1, &v, &at, &added, NULL), ROTOR_OK);
    cr_assert_not(added);
    cr_assert_eq(*(int64_t *)at, 5);
    cr_assert_eq(rotor_hashtab_count(t), 1);
    rotor_hashtab_free(t);
}

Test(hashtab, the_empty_key_and_a_null_value_are_a_key_and_zeros) {
    rotor_hashtab *t = new_tab(3 * sizeof(int64_t), 1, NULL);
    cr_assert_eq(rotor_hashtab_add(t, "", 0, NULL, NULL, NULL, NULL), ROTOR_OK);
    const int64_t *z = rotor_hashtab_find(t, "", 0);
    cr_assert(z);
    cr_assert(z[0] == 0 && z[1] == 0 && z[2] == 0);
    cr_assert_null(rotor_hashtab_find(t, "x", 1)); /* ends: one slot is still empty */
    cr_assert_eq(rotor_hashtab_slots(t), 2);       /* 1 slot would be full */
    rotor_hashtab_free(t);
}

Test(hashtab, slots_double_before_an_add_would_pass_half_full) {
    rotor_hashtab *t = new_tab(sizeof(int64_t), 3, NULL); /* 3 rounds up to 4 */
    int64_t expect[] = {4, 4, 8, 8, 16}; /* after the 1st..5th add: 2 keys fill 4 slots half, the 3rd grows */
    for (int64_t i = 0; i < 5; i++) {
        cr_assert_eq(rotor_hashtab_add(t, &i, sizeof i, &i, NULL, NULL, NULL), ROTOR_OK);
        cr_assert_eq(rotor_hashtab_slots(t), expect[i], "after %lld adds: %lld slots", (long long)i + 1,
                     (long long)rotor_hashtab_slots(t));
    }
    rotor_hashtab_free(t);
}

Test(hashtab, a_thousand_keys_survive_growth_with_values_written_in_place) {
    rotor_hashtab *t = new_tab(2 * sizeof(int64_t), 64, NULL);
    for (int64_t i = 0; i < 1000; i++) {
        int64_t key[2] = {i, -i}, val[2] = {i * i, 0};
        void *at;
        cr_assert_eq(rotor_hashtab_add(t, key, sizeof key, val, &at, NULL, NULL), ROTOR_OK);
        ((int64_t *)at)[1] = 7 * i; /* written after the add: must move with the value */
    }
    cr_assert_eq(rotor_hashtab_count(t), 1000);
    cr_assert_eq(rotor_hashtab_slots(t), 2048); /* the least power of two with 1000 at most half of it */
    for (int64_t i = 0; i < 1000; i++) {
        int64_t key[2] = {i, -i};
        const int64_t *v = rotor_hashtab_find(t, key, sizeof key);
        cr_assert(v, "key %lld", (long long)i);
        cr_assert_eq(v[0], i * i);
        cr_assert_eq(v[1], 7 * i);
    }
    int64_t miss[2] = {1000, -1000};
    cr_assert_null(rotor_hashtab_find(t, miss, sizeof miss));
    rotor_hashtab_free(t);
}

static uint64_t hash_const(const void *key, int64_t len) {
    (void)key;
    (void)len;
    return 7;
}

Test(hashtab, keys_that_all_collide_are_all_found_and_walked_in_insertion_order) {
    /* one hash for all: every key probes from slot 7, so the 40 keys sit in
     * slots 7..46 in the order they came, through both growths */
    rotor_hashtab *t = new_tab(sizeof(int64_t), 64, hash_const);
    for (int64_t i = 0; i < 40; i++) {
        int64_t k = 3 * i, v = i * i;
        cr_assert_eq(rotor_hashtab_add(t, &k, sizeof k, &v, NULL, NULL, NULL), ROTOR_OK);
    }
    cr_assert_eq(rotor_hashtab_slots(t), 128);
    for (int64_t i = 0; i < 40; i++) {
        int64_t k = 3 * i;
        const int64_t *v = rotor_hashtab_find(t, &k, sizeof k);
        cr_assert(v && *v == i * i, "key %lld", (long long)k);
        k++; /* same hash, not the key */
        cr_assert_null(rotor_hashtab_find(t, &k, sizeof k));
    }
    int64_t pos = 0, len, i = 0;
    const void *key;
    void *val;
    while (rotor_hashtab_next(t, &pos, &key, &len, &val)) {
        int64_t k;
        memcpy(&k, key, sizeof k);
        cr_assert_eq(len, 8);
        cr_assert_eq(k, 3 * i, "walk step %lld: key %lld", (long long)i, (long long)k);
        cr_assert_eq(*(int64_t *)val, i * i);
        i++;
    }
    cr_assert_eq(i, 40);
    cr_assert_eq(pos, 128);
    rotor_hashtab_free(t);
}

/* FNV-1a 64 (base/hash.h) of "a", "b", "c", "e": ...ec8c, ...f1a5, ...eff2,
 * ...e5c0, so slots 12, 37, 50 and 0 of 64; of 4 slots "a" and "e" both
 * want slot 0, of 8 slot 4 and 0. */
Test(hashtab, the_walk_is_in_slot_order_of_fnv1a) {
    rotor_hashtab *t = new_tab(sizeof(int64_t), 64, NULL);
    add_str(t, "c", 3);
    add_str(t, "a", 1);
    add_str(t, "e", 5);
    add_str(t, "b", 2);
    const char *want = "eabc"; /* slots 0, 12, 37, 50 */
    int64_t pos = 0, len, n = 0;
    const void *key;
    void *val;
    while (rotor_hashtab_next(t, &pos, &key, &len, &val)) {
        cr_assert_eq(len, 1);
        cr_assert_eq(*(const char *)key, want[n], "walk step %lld", (long long)n);
        cr_assert_eq(*(int64_t *)val, want[n] - 'a' + 1);
        n++;
    }
    cr_assert_eq(n, 4);
    rotor_hashtab_free(t);
}

Test(hashtab, fnv1a_collisions_of_a_small_table_probe_and_regrow_in_slot_order) {
    rotor_hashtab *t = new_tab(sizeof(int64_t), 4, NULL);
    add_str(t, "a", 1); /* slot 0 of 4 */
    add_str(t, "e", 5); /* wants 0 too: slot 1 */
    cr_assert_eq(*find_str(t, "a"), 1);
    cr_assert_eq(*find_str(t, "e"), 5);
    add_str(t, "b", 2); /* 8 slots: "a" to 4, "e" to 0, "b" to 5 */
    const char *want = "eab";
    int64_t pos = 0, n = 0;
    const void *key;
    while (rotor_hashtab_next(t, &pos, &key, NULL, NULL)) cr_assert_eq(*(const char *)key, want[n++]);
    cr_assert_eq(n, 3);
    rotor_hashtab_free(t);
}

Test(hashtab, clear_empties_the_table_and_it_fills_again) {
    rotor_hashtab *t = new_tab(sizeof(int64_t), 4, NULL);
    for (int64_t i = 0; i < 10; i++) cr_assert_eq(rotor_hashtab_add(t, &i, sizeof i, &i, NULL, NULL, NULL), ROTOR_OK);
    cr_assert_eq(rotor_hashtab_slots(t), 32);
    rotor_hashtab_clear(t);
    cr_assert_eq(rotor_hashtab_count(t), 0);
    cr_assert_eq(rotor_hashtab_slots(t), 0);
    int64_t k = 3, pos = 0;
    cr_assert_null(rotor_hashtab_find(t, &k, sizeof k));
    cr_assert_not(rotor_hashtab_next(t, &pos, NULL, NULL, NULL));
    add_str(t, "again", 42);
    cr_assert_eq(rotor_hashtab_slots(t), 4); /* the first slots again */
    cr_assert_eq(*find_str(t, "again"), 42);
    rotor_hashtab_free(t);
    rotor_hashtab_free(NULL);
}

Test(hashtab, absurd_sizes_at_creation_are_errors_with_a_message) {
    rotor_hashtab *t = (rotor_hashtab *)&t; /* set to NULL on every error */
    rotor_error err;
    cr_assert_eq(rotor_hashtab_new(0, 64, NULL, &t, &err), ROTOR_ERR_INPUT);
    cr_assert_null(t);
    cr_assert_str_eq(err.msg, "hash table: value size 0: expected 1 byte or more");
    cr_assert_eq(rotor_hashtab_new(-8, 64, NULL, &t, &err), ROTOR_ERR_INPUT);
    cr_assert_eq(rotor_hashtab_new(8, 0, NULL, &t, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "hash table: first slots 0: expected 1 to 1099511627776");
    cr_assert_eq(rotor_hashtab_new(8, ROTOR_HASHTAB_SLOTS_MAX + 1, NULL, &t, &err), ROTOR_ERR_INPUT);
    cr_assert_eq(rotor_hashtab_new(8, INT64_MAX, NULL, &t, &err), ROTOR_ERR_INPUT);
    /* 5 slots round up to 8, and 8 values of 2^61 bytes are 2^64 */
    cr_assert_eq(rotor_hashtab_new((int64_t)1 << 61, 5, NULL, &t, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "hash table: 8 values of 2305843009213693952 bytes overflow");
    cr_assert_eq(rotor_hashtab_new(INT64_MAX, 2, NULL, &t, &err), ROTOR_ERR_INPUT);
    cr_assert_null(t);
    /* the largest table that can be described: created, nothing allocated until an add */
    cr_assert_eq(rotor_hashtab_new(1, ROTOR_HASHTAB_SLOTS_MAX, NULL, &t, &err), ROTOR_OK);
    cr_assert_eq(rotor_hashtab_slots(t), 0);
    rotor_hashtab_free(t);
}

Test(hashtab, absurd_key_lengths_are_errors_and_leave_the_table_unchanged) {
    rotor_hashtab *t = new_tab(sizeof(int64_t), 64, NULL);
    add_str(t, "kept", 1);
    rotor_error err;
    int64_t v = 2;
    void *at = &v;
    bool added = true;
    cr_assert_eq(rotor_hashtab_add(t, "x", -1, &v, &at, &added, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "hash table: key of -1 bytes: expected 0 to 4294967296");
    cr_assert_null(at);
    cr_assert_not(added);
    /* never read: the length is refused before the key is hashed or copied */
    cr_assert_eq(rotor_hashtab_add(t, "x", INT64_MAX, &v, NULL, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert_eq(rotor_hashtab_add(t, "x", ROTOR_HASHTAB_KEY_MAX + 1, &v, NULL, NULL, NULL), ROTOR_ERR_INPUT);
    cr_assert_eq(rotor_hashtab_count(t), 1);
    cr_assert_eq(rotor_hashtab_slots(t), 64);
    cr_assert_eq(*find_str(t, "kept"), 1);
    rotor_hashtab_free(t);
}
