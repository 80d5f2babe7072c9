/* test_searchfast.c — the pruning that made convolution frontiers fast
 * (issue 45) returns what the search returned without it:
 *
 *  - the shift buffer in an F_op's cheap memory floor (fopwalk.c): under a
 *    cap below B_buf only plans without rotation fit, so the fastest plan
 *    is the fastest all-ones plan that fits, found here by enumerating
 *    every F_op of a ResNet-50 3x3 convolution on the IPU Mk2 and costing
 *    its all-ones plan; the search keeps almost no F_op for pass 2;
 *  - a session's search capped by time (rotor_search_session_within, which
 *    the compiler's walk asks for a frontier's next leaner point): the same
 *    plan as the uncapped search when it runs in at most the time, else
 *    none, for fewer plans costed. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/op/cost.h"
#include "rotor/op/search.h"

#define CONV3X3 "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]"
/* ResNet-50's first 3x3 convolution (layer1), batch 1 */
#define CONV3X3_DIMS "b=1,c=64,h=56,kh=3,w=56,kw=3,f=64"

typedef struct ones_ref {
    const rotor_expr *e;
    const rotor_chip *chip;
    int64_t cap;
    int64_t fop[ROTOR_MAX_AXES];
    bool have;
    rotor_candidate best;
    int64_t fitting; /* all-ones plans that fit the cap */
} ones_ref;

/* Every F_op (F_a <= E_a, product <= N) from axis a with `room` cores left:
 * its all-ones plan costed, the fastest that fits kept (ties: memory, then
 * plan order, as the search breaks them). */
static void ones_walk(ones_ref *r, int a, int64_t room) {
    if (a == r->e->naxes) {
        rotor_candidate c;
        rotor_plan_init(r->e, &c.plan);
        memcpy(c.plan.fop, r->fop, sizeof c.plan.fop);
        rotor_error err;
        if (rotor_cost_plan(rotor_cost_model_default(), r->e, r->chip, &c.plan, &c.info, &c.cost, &err)) return;
        if (c.info.memory > r->cap) return;
        r->fitting++;
        if (!r->have || rotor_candidate_compare(r->e, &c, &r->best) < 0) {
            r->best = c;
            r->have = true;
        }
        return;
    }
    int64_t hi = r->e->extent[a] < room ? r->e->extent[a] : room;
    for (int64_t f = 1; f <= hi; f++) {
        r->fop[a] = f;
        ones_walk(r, a + 1, room / f);
    }
    r->fop[a] = 1;
}

static void assert_same(const rotor_expr *e, const rotor_candidate *got, const rotor_candidate *want,
                        const char *what) {
    cr_assert(memcmp(&got->plan, &want->plan, sizeof got->plan) == 0, "%s: another plan", what);
    cr_assert_eq(got->cost.total, want->cost.total, "%s: %.17g s, want %.17g s", what, got->cost.total,
                 want->cost.total);
    cr_assert_eq(got->info.memory, want->info.memory, "%s: %lld B, want %lld B", what,
                 (long long)got->info.memory, (long long)want->info.memory);
    (void)e;
}

/* Caps below B_buf = 8192: 7359 (a plan fits: ResNet-50's compile asks this
 * cap of this shape) and 6437 (the leanest plan needs 6438 B: none fits). */
Test(searchfast, under_the_shift_buffer_the_search_finds_the_fastest_all_ones_plan, .timeout = 120) {
    rotor_expr e = make_expr(CONV3X3, CONV3X3_DIMS);
    rotor_chip chip = mk2();
    cr_assert_eq(chip.shift_buffer_bytes, 8192);
    const int64_t caps[] = {7359, 6437};
    for (int k = 0; k < 2; k++) {
        ones_ref r = {.e = &e, .chip = &chip, .cap = caps[k]};
        ones_walk(&r, 0, rotor_chip_cores(&chip));
        rotor_search_options so = {.threads = 2, .constraints = {.memory_cap = caps[k]}};
        rotor_search_result res;
        rotor_error err = {{0}};
        rotor_status st = rotor_search(&e, &chip, &so, &res, &err);
        if (k == 0) {
            cr_assert(r.have, "cap 7359: some all-ones plan fits");
            cr_assert_eq(r.fitting, 218, "cap 7359: %lld all-ones plans fit", (long long)r.fitting);
            cr_assert_eq(st, ROTOR_OK, "cap 7359: %s", err.msg);
            assert_same(&e, &res.best, &r.best, "cap 7359");
            cr_assert_eq(res.best.info.memory, 6928);
        } else {
            cr_assert(!r.have, "cap 6437: no all-ones plan fits (%lld do)", (long long)r.fitting);
            cr_assert_eq(st, ROTOR_ERR_NOFIT, "cap 6437: %s", err.msg);
        }
        /* the counter: without B_buf in the cheap floor 2458 F_op reached
         * pass 2 under 7359 B (each costing its strong floor and knapsack);
         * now only those whose all-ones plan fits can */
        cr_assert_leq(res.stats.fops_searched, r.fitting, "cap %lld: %lld F_op kept for pass 2",
                      (long long)caps[k], (long long)res.stats.fops_searched);
        rotor_search_result_free(&res);
    }
}

/* The compiler's order of questions: the fastest plan, then the fastest
 * under a cap near the frontier's lean end (ResNet-50's compile asks
 * 10551 B of this 1x1 convolution, whose fastest plan then needs 10402 B),
 * each asked of a fresh session also with a time cap above, at, and just
 * below that plan's time. */
Test(searchfast, a_time_capped_session_finds_the_same_plan_or_none, .timeout = 120) {
    rotor_expr e = make_expr(CONV3X3, "b=1,c=256,h=56,kh=1,w=56,kw=1,f=128");
    rotor_chip chip = mk2();
    rotor_search_options so = {.threads = 2};
    rotor_error err = {{0}};
    rotor_search_session *s;
    cr_assert_eq(rotor_search_session_open(&e, &chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
    rotor_candidate fastest, lean;
    rotor_search_stats full;
    cr_assert_eq(rotor_search_session_best(s, 0, 0, &fastest, NULL, &err), ROTOR_OK, "%s", err.msg);
    const int64_t cap = 10551;
    cr_assert_eq(rotor_search_session_best(s, cap, 0, &lean, &full, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(lean.info.memory, 10402);
    cr_assert_gt(lean.cost.total, fastest.cost.total);
    rotor_search_session_close(s);

    const double tmax[] = {INFINITY, 2 * lean.cost.total, lean.cost.total, nextafter(lean.cost.total, 0),
                           fastest.cost.total};
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(rotor_search_session_open(&e, &chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
        rotor_candidate got;
        cr_assert_eq(rotor_search_session_best(s, 0, 0, &got, NULL, &err), ROTOR_OK, "%s", err.msg);
        assert_same(&e, &got, &fastest, "the fastest plan");
        rotor_search_stats st;
        rotor_status rs = rotor_search_session_within(s, cap, tmax[k], 0, &got, &st, &err);
        if (k < 3) {
            cr_assert_eq(rs, ROTOR_OK, "time cap %d: %s", k, err.msg);
            assert_same(&e, &got, &lean, "under the cap, within the time");
        } else {
            cr_assert_eq(rs, ROTOR_ERR_NOFIT, "time cap %d: a plan faster than the fastest under the cap", k);
            cr_assert(strstr(err.msg, "runs in"), "the message says why: %s", err.msg);
            /* the counter: pruned by time from the start, it costs fewer plans */
            cr_assert_lt(st.plans, full.plans, "time cap %d: %lld plans costed, %lld without it", k,
                         (long long)st.plans, (long long)full.plans);
        }
        /* the session is unchanged by the time cap: the next answer is exact */
        cr_assert_eq(rotor_search_session_best(s, cap, 0, &got, NULL, &err), ROTOR_OK, "%s", err.msg);
        assert_same(&e, &got, &lean, "after a time-capped search");
        rotor_search_session_close(s);
    }
}

/* A progress callback that gives the search up at its `after`-th call. */
typedef struct stopper {
    _Atomic bool *stop;
    int after, calls;
} stopper;

static void stop_after(void *ctx, int done, int total) {
    (void)done, (void)total;
    stopper *s = ctx;
    if (++s->calls >= s->after) atomic_store(s->stop, true);
}

/* A session search given up part way (rotor_search_session_until, which the
 * compiler's searches ahead of its walk use) says so, and leaves the session
 * exact: the next searches give the plans a fresh session gives.  The
 * search is given up from its progress callback, after 1, 3 and 30 of its
 * pass 2's F_op, on one thread, so where it stops, and the plans it costs,
 * do not depend on timing. */
Test(searchfast, a_search_given_up_says_so_and_leaves_the_session_exact, .timeout = 120) {
    rotor_expr e = make_expr(CONV3X3, "b=1,c=256,h=56,kh=1,w=56,kw=1,f=128");
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_search_session *s;
    rotor_candidate fastest, lean, got;
    cr_assert_eq(rotor_search_session_open(&e, &chip, &(rotor_search_options){.threads = 1}, &s, &err), ROTOR_OK,
                 "%s", err.msg);
    cr_assert_eq(rotor_search_session_best(s, 0, 0, &fastest, NULL, &err), ROTOR_OK, "%s", err.msg);
    const int64_t cap = 10551;
    rotor_search_stats full;
    cr_assert_eq(rotor_search_session_best(s, cap, 0, &lean, &full, &err), ROTOR_OK, "%s", err.msg);
    rotor_search_session_close(s);
    cr_assert_gt(full.fops_searched, 30, "pass 2 keeps %lld F_op", (long long)full.fops_searched);

    const int after[] = {1, 3, 30};
    for (int k = 0; k < 3; k++) {
        _Atomic bool stop = false;
        stopper sp = {.stop = &stop, .after = after[k]};
        rotor_search_options so = {.threads = 1, .progress = stop_after, .progress_ctx = &sp};
        cr_assert_eq(rotor_search_session_open(&e, &chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
        /* not given up: no flag */
        cr_assert_eq(rotor_search_session_best(s, 0, 0, &got, NULL, &err), ROTOR_OK, "%s", err.msg);
        assert_same(&e, &got, &fastest, "the fastest plan");
        atomic_store(&stop, false);
        sp.calls = 0;
        bool stopped = false;
        rotor_search_stats st;
        cr_assert_eq(rotor_search_session_until(s, cap, INFINITY, 0, &stop, &stopped, &got, &st, &err), ROTOR_OK,
                     "%s", err.msg);
        cr_assert(stopped, "given up after %d F_op", after[k]);
        /* no F_op after the one that gave it up: the next ones are passed over */
        cr_assert_eq(sp.calls, after[k], "%d F_op searched, given up after %d", sp.calls, after[k]);
        cr_assert_lt(st.plans, full.plans, "after %d F_op: %lld plans costed, %lld in full", after[k],
                     (long long)st.plans, (long long)full.plans);
        /* a flag never raised: a whole search */
        _Atomic bool never = false;
        cr_assert_eq(rotor_search_session_until(s, cap, INFINITY, 0, &never, &stopped, &got, NULL, &err), ROTOR_OK,
                     "%s", err.msg);
        cr_assert(!stopped);
        assert_same(&e, &got, &lean, "after a search given up");
        cr_assert_eq(rotor_search_session_best(s, 0, 0, &got, NULL, &err), ROTOR_OK, "%s", err.msg);
        assert_same(&e, &got, &fastest, "the fastest plan again");
        rotor_search_session_close(s);
    }
}
