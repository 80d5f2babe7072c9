/* test_speed45.c — issue 45's warm path, second round (docs/performance.md,
 * "Warm compiles"):
 *  - the hand-offs' setup prices kept in the plan cache's directory
 *    (src/compile/handoffstore.c): a hit gives the integers a miss
 *    computes, with nothing counted; a truncated or corrupt file is
 *    detected, ignored and rewritten; a compile reads them back and
 *    decides the same;
 *  - the energy model counts a repeated operator once
 *    (src/compile/energy.c): the totals are the sum of every operator's
 *    own events;
 *  - the search reads memoised tensor options in place (src/op/bound.c):
 *    a session's capped searches give the answers of fresh searches. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/handoffcache.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/energy.h"
#include "rotor/compile/plancache.h"
#include "rotor/compile/planstore.h"
#include "rotor/compile/program.h"
#include "rotor/op/search.h"
#include "fixtures.h"

static char *tmp_dir(void) {
    char *d = strdup("/tmp/rotor-speed45-XXXXXX");
    cr_assert(d && mkdtemp(d));
    return d;
}

static void rm_dir(char *d) {
    DIR *dir = opendir(d);
    struct dirent *de;
    char p[512];
    while (dir && (de = readdir(dir)))
        if (de->d_name[0] != '.' || strncmp(de->d_name, ".tmp", 4) == 0) {
            snprintf(p, sizeof p, "%s/%.255s", d, de->d_name);
            unlink(p);
        }
    if (dir) closedir(dir);
    rmdir(d);
    free(d);
}

/* How many files of d end in ext; the last one's path into path. */
static int files_of(const char *d, const char *ext, char *path, size_t size) {
    DIR *dir = opendir(d);
    cr_assert(dir);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(dir))) {
        size_t l = strlen(de->d_name);
        if (l < strlen(ext) || strcmp(de->d_name + l - strlen(ext), ext) != 0) continue;
        n++;
        if (path) snprintf(path, size, "%s/%.255s", d, de->d_name);
    }
    closedir(dir);
    return n;
}


typedef struct setup_case {
    rotor_chip chip;
    rotor_expr ep, ec;
    rotor_search_result rp, rc;
    char *keys[2];
    rotor_chip fchip[2];
} setup_case;

/* Two GEMM shapes, the first feeding the second's A (tensor 1). */
static void setup_case_init(setup_case *s) {
    s->chip = mk2();
    s->ep = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=256,k=512,n=512");
    s->ec = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=256,k=512,n=256");
    s->rp = pareto_frontier(&s->ep, &s->chip);
    s->rc = pareto_frontier(&s->ec, &s->chip);
    s->keys[0] = "C[m,n] += A[m,k] * B[k,n]|m=256,k=512,n=512,";
    s->keys[1] = "C[m,n] += A[m,k] * B[k,n]|m=256,k=512,n=256,";
    s->fchip[0] = s->fchip[1] = s->chip;
}

static void setup_case_free(setup_case *s) {
    rotor_search_result_free(&s->rp);
    rotor_search_result_free(&s->rc);
}

/* Every (producer point i, consumer point j) pair's price through hc, into
 * out[i][j][0..3). */
#define NPTS 3
static void price_all(setup_case *s, handoff_cache *hc, int64_t out[NPTS][NPTS][3]) {
    rotor_error err = {{0}};
    for (int i = 0; i < NPTS; i++)
        for (int j = 0; j < NPTS; j++) {
            handoff_input in = {.f = 0, .e = &s->ep, .p = &s->rp.pareto[i].plan, .t = 1, .chip = &s->chip};
            cr_assert_eq(handoff_cache_setup(hc, &in, 1, 1, &s->ec, &s->rc.pareto[j].plan, &s->chip, &out[i][j][0],
                                             &out[i][j][1], &out[i][j][2], &err),
                         ROTOR_OK, "%s", err.msg);
        }
}

/* A cache with the store of d attached; *damaged its files that did not
 * read back. */
static handoff_cache *attached(setup_case *s, const char *d, int *damaged) {
    handoff_cache *hc = handoff_cache_new(&s->chip);
    rotor_error err = {{0}};
    cr_assert_eq(handoff_cache_persist(hc, d, NULL, 2, s->keys, s->fchip, damaged, &err), ROTOR_OK, "%s", err.msg);
    return hc;
}

/* Priced afresh, then through the store: the same integers, and the second
 * time nothing is counted (every answer read back); a truncated file is
 * damage, priced again the same and rewritten whole. */
Test(speed45, a_kept_hand_off_price_is_the_computed_one_and_damage_is_rewritten) {
    setup_case s;
    setup_case_init(&s);
    char *d = tmp_dir();
    int64_t fresh[NPTS][NPTS][3], cold[NPTS][NPTS][3], warm[NPTS][NPTS][3], fixed[NPTS][NPTS][3];
    handoff_cache *none = handoff_cache_new(&s.chip);
    price_all(&s, none, fresh);
    cr_assert_eq(handoff_cache_counted(none), NPTS * NPTS);
    handoff_cache_free(none);
    cr_assert_gt(fresh[0][0][0], 0, "the hand-off moves something");

    int damaged = -1;
    handoff_cache *hc = attached(&s, d, &damaged);
    cr_assert_eq(damaged, 0);
    price_all(&s, hc, cold);
    cr_assert_eq(handoff_cache_counted(hc), NPTS * NPTS, "an empty store answers nothing");
    cr_assert(handoff_cache_save(hc));
    handoff_cache_free(hc);
    char path[512];
    cr_assert_eq(files_of(d, ".rho", path, sizeof path), 1, "one file, the consumer shape's");

    hc = attached(&s, d, &damaged);
    cr_assert_eq(damaged, 0);
    price_all(&s, hc, warm);
    cr_assert_eq(handoff_cache_counted(hc), 0, "every price read back, none counted");
    cr_assert_not(handoff_cache_save(hc), "nothing learned, nothing written");
    handoff_cache_free(hc);
    cr_assert_arr_eq(cold, fresh, sizeof fresh);
    cr_assert_arr_eq(warm, fresh, sizeof fresh);

    /* every cut of the file is damage; the last one is rewritten whole */
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    for (off_t cut = 0; cut < sb.st_size; cut += sb.st_size / 7 + 1) {
        cr_assert_eq(truncate(path, cut), 0);
        hc = attached(&s, d, &damaged);
        cr_assert_eq(damaged, 1, "a prefix of %lld of %lld bytes read", (long long)cut, (long long)sb.st_size);
        price_all(&s, hc, fixed);
        cr_assert_eq(handoff_cache_counted(hc), NPTS * NPTS, "a damaged file answers nothing");
        cr_assert_arr_eq(fixed, fresh, sizeof fresh);
        cr_assert(handoff_cache_save(hc), "rewritten");
        handoff_cache_free(hc);
    }
    struct stat again;
    cr_assert_eq(stat(path, &again), 0);
    cr_assert_eq(again.st_size, sb.st_size, "rewritten to the same bytes' length");
    hc = attached(&s, d, &damaged);
    cr_assert_eq(damaged, 0);
    price_all(&s, hc, warm);
    cr_assert_eq(handoff_cache_counted(hc), 0);
    cr_assert_arr_eq(warm, fresh, sizeof fresh);
    handoff_cache_free(hc);

    /* one changed digit in a record is damage too (the checksum) */
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    char *text = calloc(1, (size_t)sb.st_size + 1);
    cr_assert_eq(fread(text, 1, (size_t)sb.st_size, f), (size_t)sb.st_size);
    char *rec = strstr(text, "\nr ");
    cr_assert(rec);
    rec[3] = rec[3] == '1' ? '2' : '1';
    rewind(f);
    fwrite(text, 1, (size_t)sb.st_size, f);
    fclose(f);
    free(text);
    hc = attached(&s, d, &damaged);
    cr_assert_eq(damaged, 1);
    handoff_cache_free(hc);

    /* eviction counts the hand-off files with the plan cache's entries */
    cr_assert_eq(rotor_plancache_evict(d, 1), 1);
    cr_assert_eq(files_of(d, ".rho", NULL, 0), 0);
    rm_dir(d);
    setup_case_free(&s);
}

/* A cache whose memos are lent from the plan store's shelf (no directory). */
static handoff_cache *shelved_on(setup_case *s, rotor_plan_store *ps) {
    handoff_cache *hc = handoff_cache_new(&s->chip);
    rotor_error err = {{0}};
    int damaged = -1;
    cr_assert_eq(handoff_cache_persist(hc, NULL, ps, 2, s->keys, s->fchip, &damaged, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(damaged, 0);
    return hc;
}

/* The compiles that share a plan store share their hand-off prices through
 * its shelf (compile/planshelf.h): a compile that ends leaves its memos
 * there and the next one prices nothing again; a memo is lent to one
 * compile at a time, so a compile beside a borrower prices afresh (the
 * same integers), and when both end the memo with more records stays. */
Test(speed45, the_compiles_of_one_plan_store_price_each_hand_off_once) {
    setup_case s;
    setup_case_init(&s);
    rotor_plan_store *ps = rotor_plan_store_new();
    cr_assert(ps);
    int64_t fresh[NPTS][NPTS][3], got[NPTS][NPTS][3];
    handoff_cache *none = handoff_cache_new(&s.chip);
    price_all(&s, none, fresh);
    handoff_cache_free(none);

    handoff_cache *a = shelved_on(&s, ps);
    price_all(&s, a, got);
    cr_assert_eq(handoff_cache_counted(a), NPTS * NPTS, "an empty shelf answers nothing");
    cr_assert_arr_eq(got, fresh, sizeof fresh);
    /* beside a, which holds the consumer's memo: b prices afresh */
    handoff_cache *b = shelved_on(&s, ps);
    int64_t one[3], link, hops;
    rotor_error err = {{0}};
    handoff_input in = {.f = 0, .e = &s.ep, .p = &s.rp.pareto[0].plan, .t = 1, .chip = &s.chip};
    cr_assert_eq(handoff_cache_setup(b, &in, 1, 1, &s.ec, &s.rc.pareto[0].plan, &s.chip, &one[0], &link, &hops, &err),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(handoff_cache_counted(b), 1, "the memo is lent to a, not to b");
    cr_assert_eq(one[0], fresh[0][0][0]);
    handoff_cache_free(a); /* NPTS^2 records back on the shelf */
    handoff_cache_free(b); /* 1 record: the heavier stays */
    handoff_cache *c = shelved_on(&s, ps);
    price_all(&s, c, got);
    cr_assert_eq(handoff_cache_counted(c), 0, "every price from the shelf");
    cr_assert_arr_eq(got, fresh, sizeof fresh);
    handoff_cache_free(c);
    /* and after c, again */
    c = shelved_on(&s, ps);
    price_all(&s, c, got);
    cr_assert_eq(handoff_cache_counted(c), 0);
    handoff_cache_free(c);
    /* the memo learned without a directory carries that its file lacks it:
     * a compile with the directory that learns nothing more writes it */
    char *d = tmp_dir();
    handoff_cache *w = handoff_cache_new(&s.chip);
    int damaged = -1;
    cr_assert_eq(handoff_cache_persist(w, d, ps, 2, s.keys, s.fchip, &damaged, &err), ROTOR_OK, "%s", err.msg);
    price_all(&s, w, got);
    cr_assert_eq(handoff_cache_counted(w), 0);
    cr_assert(handoff_cache_save(w), "the shelf's records, written");
    handoff_cache_free(w);
    cr_assert_eq(files_of(d, ".rho", NULL, 0), 1);
    w = attached(&s, d, &damaged); /* the file alone, no shelf */
    price_all(&s, w, got);
    cr_assert_eq(handoff_cache_counted(w), 0, "every price read from the file");
    cr_assert_arr_eq(got, fresh, sizeof fresh);
    handoff_cache_free(w);
    rm_dir(d);
    rotor_plan_store_free(ps);
    setup_case_free(&s);
}

/* A compile through the cache directory: cold, warm (every hand-off price
 * read back) and without a cache, the same decisions bit for bit; the
 * warm compile writes nothing new. */
Test(speed45, a_warm_compile_reads_the_hand_offs_back_and_decides_the_same) {
    char *d = tmp_dir();
    rotor_graph g;
    ffn_stack(&g, 3, 128, 1024, 4096);
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_compile_options o = {.cache_dir = d};
    rotor_compile_result none, cold, warm;
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &none, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_compile(&g, &chip, &o, &cold, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_geq(files_of(d, ".rho", NULL, 0), 1, "the hand-offs' prices kept");
    cr_assert_eq(rotor_compile(&g, &chip, &o, &warm, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(warm.cache_damaged, 0);
    const rotor_compile_result *r[3] = {&none, &cold, &warm};
    for (int k = 1; k < 3; k++) {
        cr_assert_eq(r[k]->nops, none.nops);
        cr_assert(!memcmp(&r[k]->total_s, &none.total_s, sizeof(double)), "result %d's time", k);
        for (int op = 0; op < none.nops; op++) {
            const rotor_op_schedule *x = &none.ops[op], *y = &r[k]->ops[op];
            cr_assert(x->active == y->active && x->idle_base == y->idle_base && x->idle_split == y->idle_split);
            cr_assert(!memcmp(&x->setup_s, &y->setup_s, sizeof(double)), "op %d's setup, result %d", op, k);
        }
    }
    char *a = NULL, *b = NULL;
    cr_assert_eq(rotor_program_write(&g, &chip, &none, &a, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_write(&g, &chip, &warm, &b, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(a, b, "the warm program is the uncached one, byte for byte");
    free(a);
    free(b);
    rotor_compile_result_free(&none);
    rotor_compile_result_free(&cold);
    rotor_compile_result_free(&warm);
    rotor_graph_free(&g);
    rm_dir(d);
}

/* The energy model's totals over a stack of identical layers (whose
 * operators repeat) are the sum of each operator's own counts: every
 * operator alone, as a one-operator program (its hand-off producers kept
 * before it), gives the events the whole program adds for it. */
Test(speed45, the_energy_of_repeated_operators_is_each_ones_own) {
    rotor_graph g;
    ffn_stack(&g, 4, 128, 1024, 4096);
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_compile_result r;
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    char *text = NULL;
    cr_assert_eq(rotor_program_write(&g, &chip, &r, &text, &err), ROTOR_OK, "%s", err.msg);
    rotor_program p;
    cr_assert_eq(rotor_program_parse(text, "ffn", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    rotor_energy_counts all;
    cr_assert_eq(rotor_energy_program(&p, &chip, &all, &err), ROTOR_OK, "%s", err.msg);
    /* the layers repeat (the first gathers from the model's input): each
     * of layers 2, 3 and 4 adds the same events, layer 2's counted afresh
     * and the later ones' from the memo */
    int nops = p.nops, per = nops / 4;
    cr_assert_eq(per * 4, nops, "4 layers of %d operators", per);
    rotor_energy_counts c[5];
    for (int k = 1; k <= 4; k++) {
        p.nops = per * k;
        cr_assert_eq(rotor_energy_program(&p, &chip, &c[k], &err), ROTOR_OK, "%s", err.msg);
    }
    p.nops = nops;
    cr_assert_arr_eq(&c[4], &all, sizeof all);
    for (int k = 3; k <= 4; k++) {
        cr_assert_eq(c[k].matrix_flops - c[k - 1].matrix_flops, c[2].matrix_flops - c[1].matrix_flops);
        cr_assert_eq(c[k].vector_flops - c[k - 1].vector_flops, c[2].vector_flops - c[1].vector_flops);
        cr_assert_eq(c[k].sram_read_bytes - c[k - 1].sram_read_bytes, c[2].sram_read_bytes - c[1].sram_read_bytes);
        cr_assert_eq(c[k].sram_write_bytes - c[k - 1].sram_write_bytes, c[2].sram_write_bytes - c[1].sram_write_bytes);
        cr_assert_eq(c[k].byte_hops - c[k - 1].byte_hops, c[2].byte_hops - c[1].byte_hops, "layer %d", k);
    }
    cr_assert_gt(c[2].byte_hops - c[1].byte_hops, 0, "a layer moves data");
    rotor_program_free(&p);
    free(text);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
}

/* A session's capped searches on a 3x3 convolution (the tensor options
 * read from the memo in place, across caps) answer as fresh searches do,
 * plan for plan. */
Test(speed45, a_sessions_capped_searches_equal_fresh_ones_on_a_convolution) {
    rotor_chip chip = mk2();
    rotor_expr e = make_expr("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]",
                             "b=1,f=64,c=64,h=28,w=28,kh=3,kw=3");
    rotor_search_options so = {.threads = 2};
    rotor_search_session *s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search_session_open(&e, &chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
    int64_t caps[] = {0, 200000, 60000, 20000, 9000, 60000};
    for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
        rotor_candidate got;
        rotor_search_result want;
        rotor_search_options fo = {.threads = 1, .constraints = {.memory_cap = caps[i]}};
        rotor_status a = rotor_search_session_best(s, caps[i], 2, &got, NULL, &err);
        rotor_status b = rotor_search(&e, &chip, &fo, &want, &err);
        cr_assert_eq(a, b, "cap %lld", (long long)caps[i]);
        if (a) continue;
        cr_assert(!memcmp(&got.cost.total, &want.best.cost.total, sizeof(double)), "cap %lld: %g against %g",
                  (long long)caps[i], got.cost.total, want.best.cost.total);
        cr_assert_eq(got.info.memory, want.best.info.memory, "cap %lld", (long long)caps[i]);
        cr_assert_arr_eq(got.plan.fop, want.best.plan.fop, sizeof got.plan.fop, "cap %lld", (long long)caps[i]);
        rotor_search_result_free(&want);
    }
    rotor_search_session_close(s);
}
