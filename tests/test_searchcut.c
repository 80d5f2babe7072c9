/* test_searchcut.c — issue 45, thirty-fourth session: pass 2's cut
 * (op/bound.c, search_fop_options_cut), which prunes an F_op by the sum
 * over its tensors of each one's fastest option under the cap
 * (search_cap_time_sum_floor) before the knapsack of search_cap_time_floor.
 *
 * For every F_op of a small convolution and a matmul on an IPU Mk2 cut to
 * 16 cores, under caps from loose to below the shift buffer's reach, the
 * test enumerates every choice of one option per tensor (the knapsack's
 * space, brute force: the options' bytes summing to at most cap - B_buf)
 * and the plan without rotation (the all-ones plan, when it fits), and
 * checks that the sum floor is at most the least time over both, and at
 * most search_cap_time_floor.  A sum floor made too strong (a tensor's
 * slowest option, or its fastest over options the cap filtered out, or the
 * sums taken with a tensor's fastest option chosen per budget of the
 * others' least bytes and without the plan that does not rotate) fails it;
 * the test also asserts the floor is often exact, so that one returning 0
 * would not pass unnoticed. */
#include <criterion/criterion.h>

#include <string.h>

#include "fixtures.h"
#include "searchfix.h"
#include "rotor/op/cost.h"

typedef struct cut_walk {
    ctx *c;
    knap_scratch *ks;
    int64_t fop[ROTOR_MAX_AXES];
    int64_t fops, exact, positive;
} cut_walk;

/* the least time over every choice of one option per tensor from t on,
 * their bytes summing with `bytes` to at most budget (INFINITY: none) */
static double brute_knap(const knap_scratch *ks, int nt, int t, int64_t bytes, double time, int64_t budget) {
    if (t == nt) return bytes <= budget ? time : INFINITY;
    double best = INFINITY;
    for (int j = 0; j < ks->nopt[t]; j++) {
        double v = brute_knap(ks, nt, t + 1, bytes + ks->po[t][j].bytes, time + ks->po[t][j].time, budget);
        if (v < best) best = v;
    }
    return best;
}

static void check_fop(cut_walk *w) {
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    bool ready;
    search_fop_strong_floor(c, w->ks, w->fop, -1, &ready);
    cr_assert(ready);
    double sum = search_cap_time_sum_floor(w->ks, e->ntensors);
    double best = INFINITY;
    int64_t budget = c->cap - c->chip->shift_buffer_bytes;
    if (budget >= 0) best = brute_knap(w->ks, e->ntensors, 0, 0, 0, budget);
    if (search_fop_all_ones_bytes(c, w->fop) <= (double)c->cap) {
        double t1 = 0;
        for (int t = 0; t < e->ntensors; t++) {
            int64_t share = 1;
            for (int a = 0; a < e->naxes; a++)
                if (!e->tensors[t].has_axis[a]) share *= w->fop[a];
            int64_t b = (int64_t)search_all_ones_bytes_of(c, w->fop, t);
            t1 += c->m->tensor_bound(c->m, e, c->chip, t, b, 1, share);
        }
        if (t1 < best) best = t1;
    }
    double floor = search_cap_time_floor(c, w->ks, w->fop, true, NULL);
    cr_assert(sum <= best || (isinf(sum) && isinf(best)), "cap %lld: sum floor %.17g above the least %.17g",
              (long long)c->cap, sum, best);
    cr_assert(sum <= floor || (isinf(sum) && isinf(floor)), "cap %lld: sum floor %.17g above the knapsack's %.17g",
              (long long)c->cap, sum, floor);
    w->exact += sum == best;
    w->positive += sum > 0 && sum != INFINITY;
    w->fops++;
}

/* fixture_each_fop's visit */
static void walk_fops_visit(void *arg) { check_fop(arg); }

static void sum_floor_holds(const char *expr, const char *dims) {
    rotor_expr e = make_expr(expr, dims);
    rotor_chip chip = mk2_small(16, 1 << 20, 4096);
    ctx c;
    searchfix_ctx(&c, &e, &chip, rotor_chip_cores(&chip));
    knap_scratch *ks = aligned_alloc(_Alignof(knap_scratch), sizeof *ks);
    cr_assert_not_null(ks);
    memset(ks, 0, sizeof *ks);
    ks->no_memo = true;
    cut_walk w = {.c = &c, .ks = ks};
    const int64_t caps[] = {1 << 20, 65536, 16384, 8192, 6000, 4000};
    for (int k = 0; k < 6; k++) {
        c.cap = caps[k];
        fixture_each_fop(w.c->e, w.fop, 0, c.cores, walk_fops_visit, &w);
    }
    cr_assert_gt(w.fops, 500, "%lld F_op checked", (long long)w.fops);
    cr_assert_gt(w.positive, 100, "%lld F_op with a sum floor above 0", (long long)w.positive);
    cr_assert_gt(w.exact, 100, "%lld F_op whose sum floor is the least time", (long long)w.exact);
    free(ks);
}

Test(searchcut, sum_floor_is_below_the_knapsack_conv, .timeout = 240) {
    sum_floor_holds("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=4,c=16,h=8,kh=3,w=8,kw=1,f=24");
}

Test(searchcut, sum_floor_is_below_the_knapsack_matmul, .timeout = 240) {
    sum_floor_holds("C[m,n] += A[m,k] * B[k,n]", "m=64,k=96,n=128");
}
