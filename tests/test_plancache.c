/* test_plancache.c — the persistent plan cache (src/compile/plancache.c;
 * docs/compile.md, "Plan cache"): key sensitivity, exact round trips,
 * damage and collisions, eviction, and a warm compile that searches nothing
 * and decides exactly as the cold one. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/sealed.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/plancache.h"
#include "rotor/op/search.h"
#include "fixtures.h"

static const char *SHAPE = "C[m,n] += A[m,k] * B[k,n]|m=128,k=512,n=512,";

/* Every field of two candidates, doubles bit for bit (memcmp of the whole
 * struct would read its padding). */
static bool same_cand(const rotor_candidate *a, const rotor_candidate *b) {
    const rotor_plan *p = &a->plan, *q = &b->plan;
    const rotor_plan_info *x = &a->info, *y = &b->info;
    return !memcmp(p->fop, q->fop, sizeof p->fop) && !memcmp(p->ft, q->ft, sizeof p->ft) &&
           !memcmp(p->order, q->order, sizeof p->order) && p->overlap == q->overlap && x->cores == y->cores &&
           !memcmp(x->sharing, y->sharing, sizeof x->sharing) && !memcmp(x->ring_size, y->ring_size, sizeof x->ring_size) &&
           !memcmp(x->rings, y->rings, sizeof x->rings) && !memcmp(x->steps, y->steps, sizeof x->steps) &&
           x->total_steps == y->total_steps && !memcmp(x->padded, y->padded, sizeof x->padded) &&
           !memcmp(x->sub_op, y->sub_op, sizeof x->sub_op) && !memcmp(x->sub_task, y->sub_task, sizeof x->sub_task) &&
           !memcmp(x->part, y->part, sizeof x->part) && !memcmp(x->bytes, y->bytes, sizeof x->bytes) &&
           x->memory == y->memory && !memcmp(x->shifts, y->shifts, sizeof x->shifts) && x->rotates == y->rotates &&
           x->overlap == y->overlap && !memcmp(&x->padding_ratio, &y->padding_ratio, sizeof(double)) &&
           !memcmp(&a->cost, &b->cost, sizeof a->cost);
}

/* The frontier of m=128,k=512,n=512 on ipu-mk2. */
static rotor_search_result frontier(void) {
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_parse("C[m,n] += A[m,k] * B[k,n]", &e, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_expr_bind(&e, "m=128,k=512,n=512", &err), ROTOR_OK, "%s", err.msg);
    rotor_chip chip = mk2();
    rotor_search_options so = {.pareto = true};
    rotor_search_result r;
    cr_assert_eq(rotor_search(&e, &chip, &so, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(r.npareto, 3);
    return r;
}

Test(plancache, the_key_changes_with_every_field_the_cost_reads) {
    rotor_chip c = mk2();
    char *base = rotor_plancache_key(SHAPE, &c, ROTOR_SOLVER_EXACT, 2.0);
    char *same = rotor_plancache_key(SHAPE, &c, ROTOR_SOLVER_EXACT, 2.0);
    cr_assert_str_eq(base, same);
    char *p0 = rotor_plancache_path("/d", base), *p1 = rotor_plancache_path("/d", same);
    cr_assert_str_eq(p0, p1);
    cr_assert_eq(strlen(p0), strlen("/d/") + 16 + 4);
    free(same);
    free(p1);
    /* one field at a time, each a miss: a changed key and another file */
    rotor_chip v[8];
    for (int i = 0; i < 8; i++) v[i] = c;
    v[0].sram_bytes -= 1;
    v[1].link_gbps = nextafter(c.link_gbps, 0); /* one ulp */
    v[2].systolic_rows *= 2;
    v[3].compute_overlap = !c.compute_overlap;
    v[4].topology = ROTOR_TOPO_MESH;
    v[5].shift_buffer_bytes += 1;
    v[6].element_bytes = 4;
    v[7].link_latency_ns += 1;
    for (int i = 0; i < 8; i++) {
        char *k = rotor_plancache_key(SHAPE, &v[i], ROTOR_SOLVER_EXACT, 2.0);
        char *p = rotor_plancache_path("/d", k);
        cr_assert_str_neq(k, base, "chip change %d kept the key", i);
        cr_assert_str_neq(p, p0, "chip change %d kept the file", i);
        free(k);
        free(p);
    }
    const char *others[] = {"C[m,n] += A[m,k] * B[k,n]|m=64,k=256,n=512,", "C[m,n] += A[m,k] * B[n,k]|m=128,k=512,n=512,"};
    for (int i = 0; i < 2; i++) {
        char *k = rotor_plancache_key(others[i], &c, ROTOR_SOLVER_EXACT, 2.0);
        cr_assert_str_neq(k, base);
        free(k);
    }
    char *fast = rotor_plancache_key(SHAPE, &c, ROTOR_SOLVER_FAST, 2.0);
    char *ratio = rotor_plancache_key(SHAPE, &c, ROTOR_SOLVER_EXACT, 1.0);
    cr_assert_str_neq(fast, base);
    cr_assert_str_neq(ratio, base);
    /* the name and the energy coefficients do not cost anything */
    rotor_chip named = c;
    snprintf(named.name, sizeof named.name, "other");
    named.mac_pj *= 2;
    char *k = rotor_plancache_key(SHAPE, &named, ROTOR_SOLVER_EXACT, 2.0);
    cr_assert_str_eq(k, base);
    free(k);
    free(fast);
    free(ratio);
    free(base);
    free(p0);
}

Test(plancache, an_entry_reads_back_bit_for_bit) {
    rotor_search_result r = frontier();
    rotor_chip c = mk2();
    rotor_error err = {{0}};
    rotor_plancache_entry e = {.key = rotor_plancache_key(SHAPE, &c, ROTOR_SOLVER_EXACT, 2.0)};
    cr_assert_eq(rotor_plancache_set_first(&e, r.pareto, 2, true, r.pareto[1].cost.total * (1 + 1e-12), &err), ROTOR_OK);
    cr_assert_eq(rotor_plancache_note_point(&e, r.pareto[2].info.memory + 5, &r.pareto[2], &err), ROTOR_OK);
    cr_assert_eq(rotor_plancache_note_point(&e, 7, NULL, &err), ROTOR_OK);
    cr_assert_eq(rotor_plancache_note_tail(&e, r.pareto[1].info.memory - 1, r.pareto + 2, r.npareto - 2, &err), ROTOR_OK);
    size_t len;
    char *text = rotor_plancache_encode(&e, &len);
    cr_assert(text);
    rotor_plancache_entry back = {.key = strdup(e.key)};
    rotor_plancache_read how;
    cr_assert_eq(rotor_plancache_decode(text, len, e.key, &back, &how, &err), ROTOR_OK);
    cr_assert_eq(how, ROTOR_PLANCACHE_HIT);
    cr_assert(back.has_first && back.first_truncated);
    cr_assert_eq(back.nfirst, 2);
    cr_assert(!memcmp(&back.first_tcut, &e.first_tcut, sizeof(double)), "the cut is not bit-exact");
    for (int j = 0; j < 2; j++) cr_assert(same_cand(&back.first[j], &r.pareto[j]), "first point %d differs", j);
    cr_assert_eq(back.nanswers, 3);
    for (int a = 0; a < 3; a++) {
        cr_assert_eq(back.answers[a].kind, e.answers[a].kind);
        cr_assert_eq(back.answers[a].cap, e.answers[a].cap);
        cr_assert_eq(back.answers[a].n, e.answers[a].n);
        for (int j = 0; j < e.answers[a].n; j++) cr_assert(same_cand(&back.answers[a].v[j], &e.answers[a].v[j]));
    }
    /* what the answers tell: the point for every cap from its memory to
     * the cap searched, none up to 7, unknown between */
    rotor_candidate got;
    cr_assert_eq(rotor_plancache_point(&back, r.pareto[2].info.memory, &got), 1);
    cr_assert(same_cand(&got, &r.pareto[2]));
    cr_assert_eq(rotor_plancache_point(&back, r.pareto[2].info.memory + 6, &got), -1);
    cr_assert_eq(rotor_plancache_point(&back, r.pareto[2].info.memory - 1, &got), -1);
    cr_assert_eq(rotor_plancache_point(&back, 7, &got), 0);
    /* a tail under a smaller cap is the recorded tail's points under it */
    rotor_candidate *tv;
    int tn;
    cr_assert(rotor_plancache_tail(&back, r.pareto[3].info.memory, &tv, &tn));
    cr_assert_eq(tn, r.npareto - 3);
    for (int j = 0; j < tn; j++) cr_assert(same_cand(&tv[j], &r.pareto[3 + j]));
    free(tv);
    cr_assert_not(rotor_plancache_tail(&back, r.pareto[1].info.memory, &tv, &tn));
    /* the same entry encodes to the same bytes */
    size_t len2;
    char *text2 = rotor_plancache_encode(&back, &len2);
    cr_assert(len2 == len && !memcmp(text, text2, len));
    free(text2);
    /* every proper prefix is damage, and so is one changed digit */
    for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
        cr_assert_eq(rotor_plancache_decode(text, cut, e.key, &back, &how, &err), ROTOR_OK);
        cr_assert_eq(how, ROTOR_PLANCACHE_DAMAGED, "a prefix of %zu of %zu bytes read", cut, len);
    }
    char *flip = strstr(text, "\nc ") + 3;
    *flip = *flip == '1' ? '2' : '1';
    cr_assert_eq(rotor_plancache_decode(text, len, e.key, &back, &how, &err), ROTOR_OK);
    cr_assert_eq(how, ROTOR_PLANCACHE_DAMAGED);
    free(text);
    rotor_plancache_entry_free(&back);
    rotor_plancache_entry_free(&e);
    rotor_search_result_free(&r);
}

/* Writes a file of n bytes at path with modification time t. */
static void put_file(const char *path, size_t n, time_t t) {
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    for (size_t i = 0; i < n; i++) fputc('x', f);
    fclose(f);
    struct timespec ts[2] = {{.tv_sec = t}, {.tv_sec = t}};
    cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

Test(plancache, eviction_keeps_the_directory_under_its_limit_oldest_first) {
    char *d = fixture_tmp_dir("plancache");
    char p[256];
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/%016d.rpc", d, i);
        put_file(p, 1000, 1000000 + (time_t)(i * 7 % 10) * 60); /* ages shuffled */
    }
    snprintf(p, sizeof p, "%s/other.txt", d);
    put_file(p, 50000, 1); /* not an entry: never counted, never removed */
    cr_assert_eq(rotor_plancache_evict(d, 4500), 6);
    int left = 0;
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/%016d.rpc", d, i);
        bool kept = access(p, F_OK) == 0;
        left += kept;
        /* the four youngest (ages 6..9 of i*7 % 10) stay */
        cr_assert_eq(kept, i * 7 % 10 >= 6, "entry %d (age %d) kept %d", i, i * 7 % 10, kept);
    }
    cr_assert_eq(left, 4);
    snprintf(p, sizeof p, "%s/other.txt", d);
    cr_assert_eq(access(p, F_OK), 0);
    cr_assert_eq(rotor_plancache_evict(d, 4500), 0);
    fixture_rm_dir(d);
}

/* A compile with cache_dir d: the result, and each frontier's plans. */
static void compile_in(const char *d, rotor_graph *g, rotor_compile_result *r) {
    rotor_compile_options o = {.cache_dir = d};
    rotor_error err = {{0}};
    rotor_chip chip = mk2();
    cr_assert_eq(rotor_compile(g, &chip, &o, r, &err), ROTOR_OK, "%s", err.msg);
}

static void assert_same_compile(const rotor_compile_result *a, const rotor_compile_result *b) {
    cr_assert_eq(a->nops, b->nops);
    cr_assert_eq(a->searches, b->searches);
    cr_assert(!memcmp(&a->total_s, &b->total_s, sizeof(double)));
    cr_assert_eq(a->ncurve, b->ncurve);
    cr_assert_eq(a->nfrontiers, b->nfrontiers);
    for (int i = 0; i < a->nfrontiers; i++) {
        cr_assert_eq(a->frontiers[i].n, b->frontiers[i].n);
        cr_assert_eq(a->frontiers[i].truncated, b->frontiers[i].truncated);
        for (int j = 0; j < a->frontiers[i].n; j++) cr_assert(same_cand(&a->frontiers[i].v[j], &b->frontiers[i].v[j]));
    }
    for (int o = 0; o < a->nops; o++) {
        const rotor_op_schedule *x = &a->ops[o], *y = &b->ops[o];
        cr_assert(x->active == y->active && x->idle_base == y->idle_base && x->idle_split == y->idle_split);
        cr_assert(!memcmp(&x->setup_s, &y->setup_s, sizeof(double)) && !memcmp(&x->exec_s, &y->exec_s, sizeof(double)));
    }
}

/* The path of some entry of d. */
static void first_entry(const char *d, char *path, size_t size) {
    DIR *dir = opendir(d);
    cr_assert(dir);
    struct dirent *de;
    while ((de = readdir(dir)) && !strstr(de->d_name, ".rpc")) continue;
    cr_assert(de, "no entry in %s", d);
    cr_assert_lt((size_t)snprintf(path, size, "%s/%.255s", d, de->d_name), size);
    closedir(dir);
}

/* Cold, then warm, then with a truncated entry, then with another key's
 * entry in a file's place: the same compile every time; warm, every
 * search is answered by the cache. */
Test(plancache, a_warm_compile_searches_nothing_and_decides_the_same) {
    char *d = fixture_tmp_dir("plancache");
    rotor_graph g;
    ffn_stack(&g, 2, 128, 1024, 4096);
    rotor_compile_result none, cold, warm, fixed;
    rotor_error err = {{0}};
    rotor_chip chip = mk2();
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &none, &err), ROTOR_OK, "%s", err.msg);
    compile_in(d, &g, &cold);
    cr_assert_eq(cold.cache_hits, 0);
    cr_assert_eq(cold.searches, 4, "two shapes, each cut then whole");
    compile_in(d, &g, &warm);
    cr_assert_eq(warm.cache_hits, warm.searches, "warm: %d of %d searches from the cache", warm.cache_hits, warm.searches);
    cr_assert_eq(warm.cache_damaged, 0);
    assert_same_compile(&none, &cold);
    assert_same_compile(&cold, &warm);

    /* truncate one entry: detected, searched again, rewritten */
    char path[512];
    first_entry(d, path, sizeof path);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_eq(truncate(path, sb.st_size / 2), 0);
    compile_in(d, &g, &fixed);
    cr_assert_eq(fixed.cache_damaged, 1);
    cr_assert_eq(fixed.cache_hits, fixed.searches - 2, "the damaged shape searched again (cut, then whole)");
    assert_same_compile(&cold, &fixed);
    cr_assert_eq(stat(path, &sb), 0);
    rotor_compile_result again;
    compile_in(d, &g, &again);
    cr_assert_eq(again.cache_damaged, 0);
    cr_assert_eq(again.cache_hits, again.searches, "the entry was rewritten whole");
    rotor_compile_result_free(&again);

    /* a hash collision: another key's entry in the file's place is a miss */
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    rotor_plancache_entry other = {.key = strdup("another key")};
    size_t len;
    char *text = rotor_plancache_encode(&other, &len);
    fwrite(text, 1, len, f);
    fclose(f);
    free(text);
    compile_in(d, &g, &again);
    cr_assert_eq(again.cache_damaged, 0, "a collision is a miss, not damage");
    cr_assert_eq(again.cache_hits, again.searches - 2);
    assert_same_compile(&cold, &again);
    rotor_compile_result_free(&again);
    rotor_plancache_entry_free(&other);

    rotor_compile_result_free(&none);
    rotor_compile_result_free(&cold);
    rotor_compile_result_free(&warm);
    rotor_compile_result_free(&fixed);
    rotor_graph_free(&g);
    fixture_rm_dir(d);
}

/* The walk's time-capped searches (issue 45): one that finds every plan
 * under its cap slower than the time the walk needs is kept as a slow
 * answer, so a warm compile searches nothing there either.  Three 3x3
 * convolutions on 92 cores of the Mk2 with 4096 bytes of SRAM, where the
 * walk grows the cut frontiers point by point (test_compile). */
Test(plancache, a_time_capped_search_that_finds_nothing_is_kept_and_answers_warm) {
    char *d = fixture_tmp_dir("plancache");
    rotor_graph g;
    conv3_chain(&g);
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=92", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&chip, "sram_bytes=4096", &err), ROTOR_OK, "%s", err.msg);
    rotor_compile_options o = {.cache_dir = d};
    rotor_compile_result none, cold, warm;
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &none, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_compile(&g, &chip, &o, &cold, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_compile(&g, &chip, &o, &warm, &err), ROTOR_OK, "%s", err.msg);
    /* some entry holds a slow answer ("a 3 CAP TMAX 0") */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "grep -q '^a 3 ' '%s'/*.rpc", d);
    cr_assert_eq(system(cmd), 0, "no time-capped search found nothing: the test proves nothing");
    cr_assert_eq(warm.cache_hits, warm.searches, "warm: %d of %d searches from the cache", warm.cache_hits,
                 warm.searches);
    assert_same_compile(&none, &cold);
    assert_same_compile(&cold, &warm);
    rotor_compile_result_free(&none);
    rotor_compile_result_free(&cold);
    rotor_compile_result_free(&warm);
    rotor_graph_free(&g);
    fixture_rm_dir(d);
}

Test(plancache, a_slow_answer_covers_smaller_caps_and_shorter_times_only) {
    rotor_plancache_entry e = {0};
    rotor_error err;
    cr_assert(!rotor_plancache_slow(&e, 1000, 1e-6));
    cr_assert_eq(rotor_plancache_note_slow(&e, 1000, 2e-6, &err), ROTOR_OK);
    cr_assert(rotor_plancache_slow(&e, 1000, 2e-6));
    cr_assert(rotor_plancache_slow(&e, 512, 1e-6));
    cr_assert(!rotor_plancache_slow(&e, 1001, 1e-6), "a larger cap may hold a faster plan");
    cr_assert(!rotor_plancache_slow(&e, 512, 3e-6), "a longer time may admit a plan");
    /* it reads back bit for bit, in an entry with a first search (a file
     * that could hold no answer would be damage: counts are checked against
     * the file's size) */
    e.key = strdup("k");
    rotor_candidate c0;
    memset(&c0, 0, sizeof c0);
    c0.cost.total = 1e-6;
    cr_assert_eq(rotor_plancache_set_first(&e, &c0, 1, false, 0, &err), ROTOR_OK);
    size_t len;
    char *text = rotor_plancache_encode(&e, &len);
    cr_assert_not_null(text);
    cr_assert_not_null(strstr(text, "\na 3 1000 "));
    rotor_plancache_entry back = {0};
    rotor_plancache_read how;
    cr_assert_eq(rotor_plancache_decode(text, len, "k", &back, &how, &err), ROTOR_OK);
    cr_assert_eq(how, ROTOR_PLANCACHE_HIT);
    cr_assert_eq(back.nanswers, 1);
    cr_assert_eq(back.answers[0].kind, ROTOR_PLANCACHE_SLOW);
    cr_assert_eq(back.answers[0].cap, 1000);
    cr_assert_eq(back.answers[0].tmax, 2e-6);
    free(text);
    rotor_plancache_entry_free(&back);
    rotor_plancache_entry_free(&e);
}

/* compile_parse_i64, the caches' decimal reader: what strtoll reads in the
 * C locale, to the character, and false where strtoll reads no digits or
 * overflows. */
Test(plancache, the_decimal_reader_reads_what_strtoll_reads) {
    const char *cases[] = {"0", " 42 x", "\n\t-17,", "+5", "-", "+", "", "x1", " -0", "007",
                           "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                           "-9223372036854775809", "99999999999999999999", " 12 34", "1e3", "-x"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *p = cases[i];
        int64_t v = -1;
        bool ok = compile_parse_i64(&p, &v);
        char *end;
        errno = 0;
        long long want = strtoll(cases[i], &end, 10);
        bool want_ok = end != cases[i] && errno == 0;
        cr_assert_eq(ok, want_ok, "\"%s\": %d, strtoll %d", cases[i], ok, want_ok);
        if (ok) {
            cr_assert_eq(v, want, "\"%s\"", cases[i]);
            cr_assert_eq(p, end, "\"%s\": stopped at %td, strtoll at %td", cases[i], p - cases[i], end - cases[i]);
        } else {
            cr_assert_eq(p, cases[i], "\"%s\": moved on failure", cases[i]);
            cr_assert_eq(v, -1);
        }
    }
}
