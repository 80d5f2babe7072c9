/* test_searchfast2.c — issue 45, second round: each search worker's memo of
 * tensor options (op/bound.c, tensor_options; op/searchint.h, opt_memo)
 * returns exactly what the dynamic program computes afresh.
 *
 * A tensor's options are a function of its own axes' factors and of the
 * product of the others (share), and the cap only filters them; the memo is
 * keyed on (tensor, those factors, share) and keeps the uncapped front, of
 * which a search takes the prefix under its cap.  The test walks every F_op
 * of a convolution (and a matmul) on the IPU Mk2 through one memo kept
 * across several caps, as a session's capped searches do, and compares
 * each F_op's strong memory floor, its time floor under the cap and every
 * tensor's options with those of a scratch that never memoises (the
 * unmemoised answer).  A memo keyed without share, or without a tensor's
 * factor, or not filtered by the cap, fails it. */
#include <criterion/criterion.h>

#include <string.h>

#include "fixtures.h"
#include "searchfix.h"
#include "rotor/op/cost.h"

typedef struct walk {
    ctx *c;
    knap_scratch *memo, *fresh;
    int64_t fop[ROTOR_MAX_AXES];
    int64_t fops, options; /* F_op compared, options compared */
} walk;

static knap_scratch *scratch(bool no_memo) {
    knap_scratch *ks = aligned_alloc(_Alignof(knap_scratch), sizeof *ks);
    cr_assert_not_null(ks);
    for (int k = 0; k < LAT_SLOTS; k++) ks->lat[k].share = 0;
    for (int k = 0; k < MEMO_SLOTS; k++) ks->memo[k].t = -1;
    ks->no_memo = no_memo;
    return ks;
}

static void compare_fop(walk *w) {
    const ctx *c = w->c;
    bool r1, r2;
    int64_t m1 = search_fop_strong_floor(c, w->memo, w->fop, -1, &r1);
    int64_t m2 = search_fop_strong_floor(c, w->fresh, w->fop, -1, &r2);
    cr_assert_eq(m1, m2, "cap %lld: strong floor %lld, afresh %lld", (long long)c->cap, (long long)m1,
                 (long long)m2);
    for (int t = 0; t < c->e->ntensors; t++) {
        cr_assert_eq(w->memo->nopt[t], w->fresh->nopt[t], "cap %lld tensor %d: %d options, afresh %d",
                     (long long)c->cap, t, w->memo->nopt[t], w->fresh->nopt[t]);
        for (int j = 0; j < w->memo->nopt[t]; j++) {
            cr_assert_eq(w->memo->po[t][j].bytes, w->fresh->po[t][j].bytes);
            cr_assert_eq(w->memo->po[t][j].time, w->fresh->po[t][j].time);
        }
        w->options += w->memo->nopt[t];
    }
    double t1 = search_cap_time_floor(c, w->memo, w->fop, r1);
    double t2 = search_cap_time_floor(c, w->fresh, w->fop, r2);
    cr_assert(t1 == t2 || (isinf(t1) && isinf(t2)), "cap %lld: time floor %g, afresh %g", (long long)c->cap, t1, t2);
    w->fops++;
}

/* fixture_each_fop's visit */
static void walk_fops_visit(void *arg) { compare_fop(arg); }

/* every F_op under each cap, the memo kept across caps (largest first and
 * then back up, as a session's searches go) */
static void memo_matches(const char *expr, const char *dims, int64_t min_options) {
    rotor_expr e = make_expr(expr, dims);
    rotor_chip chip = mk2();
    ctx c;
    searchfix_ctx(&c, &e, &chip, rotor_chip_cores(&chip));
    walk w = {.c = &c, .memo = scratch(false), .fresh = scratch(true)};
    const int64_t caps[] = {rotor_chip_sram(&chip), 65536, 12000, 6437, 200000};
    for (int k = 0; k < 5; k++) {
        c.cap = caps[k];
        fixture_each_fop(w.c->e, w.fop, 0, c.cores, walk_fops_visit, &w);
    }
    cr_assert_gt(w.fops, 1000, "%lld F_op compared", (long long)w.fops);
    cr_assert_geq(w.options, min_options, "%lld options compared", (long long)w.options);
    free(w.memo);
    free(w.fresh);
}

Test(searchfast2, memoised_tensor_options_match_a_fresh_conv, .timeout = 240) {
    /* a small 3x3 convolution: every F_op of it, five caps */
    memo_matches("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=2,c=16,h=14,kh=3,w=14,kw=3,f=32", 100000);
}

Test(searchfast2, memoised_tensor_options_match_a_fresh_matmul, .timeout = 240) {
    memo_matches("C[m,n] += A[m,k] * B[k,n]", "m=64,k=96,n=128", 10000);
}
