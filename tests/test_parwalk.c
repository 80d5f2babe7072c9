/* test_parwalk.c — Algorithm 1's walk runs the searches one pass needs
 * together (src/compile/compile.c, walk_more and learn_batch; docs/
 * performance.md, "2026-11-30 (h-par, issue 45)"): only the searches the
 * serial walk (options.serial_walk: one search, then the pass again) is
 * sure to make next, each frontier's own, so the schedule, the frontiers'
 * points, the curve and the search count are the serial walk's, whatever
 * the thread count, and a plan cache written by the batched walk answers
 * every search of a warm compile.
 *
 * ResNet-50 cut to its first stage at batch 1: its walk's passes need up
 * to five searches at once (measured: batches of 1, 2, 3 and 5), 31
 * searches in all. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rotor/compile/compile.h"
#include "rotor/model/group.h"
#include "rotor/model/zoo.h"
#include "fixtures.h"

static void resnet50_stage(int64_t batch, rotor_graph *out) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_zoo_build("resnet-50", &(rotor_zoo_options){.batch = batch, .layers = 1}, &g, &err),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_group(&g, out, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&g);
}

static bool same_double(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static void assert_same_walk(const rotor_compile_result *x, const rotor_compile_result *y, const char *what) {
    cr_assert_eq(x->searches, y->searches, "%s: %d against %d searches", what, x->searches, y->searches);
    cr_assert_eq(x->nops, y->nops);
    for (int o = 0; o < x->nops; o++) {
        const rotor_op_schedule *a = &x->ops[o], *b = &y->ops[o];
        cr_assert(a->frontier == b->frontier && a->active == b->active && a->idle_base == b->idle_base &&
                      a->idle_split == b->idle_split && a->idle_bytes == b->idle_bytes &&
                      a->setup_bytes == b->setup_bytes && same_double(a->setup_s, b->setup_s) &&
                      same_double(a->exec_s, b->exec_s),
                  "%s: operator %d", what, o);
    }
    cr_assert(same_double(x->total_s, y->total_s), "%s: total %.9g against %.9g", what, x->total_s, y->total_s);
    cr_assert_eq(x->ncurve, y->ncurve, "%s: curve", what);
    for (int k = 0; k < x->ncurve; k++)
        cr_assert(x->curve[k].idle_bytes == y->curve[k].idle_bytes &&
                  same_double(x->curve[k].total_s, y->curve[k].total_s));
    cr_assert_eq(x->nfrontiers, y->nfrontiers);
    for (int i = 0; i < x->nfrontiers; i++) {
        const rotor_frontier *f = &x->frontiers[i], *h = &y->frontiers[i];
        cr_assert_eq(f->n, h->n, "%s: frontier %d has %d points against %d", what, i, f->n, h->n);
        cr_assert_eq(f->truncated, h->truncated);
        for (int j = 0; j < f->n; j++) {
            const rotor_candidate *a = &f->v[j], *b = &h->v[j];
            cr_assert(a->info.memory == b->info.memory && same_double(a->cost.total, b->cost.total) &&
                          !memcmp(a->plan.fop, b->plan.fop, sizeof a->plan.fop) &&
                          !memcmp(a->plan.ft, b->plan.ft, sizeof a->plan.ft) &&
                          !memcmp(a->plan.order, b->plan.order, sizeof a->plan.order),
                      "%s: frontier %d, point %d", what, i, j);
        }
    }
}

Test(parwalk, the_batched_walk_decides_and_searches_as_the_serial_one) {
    rotor_graph g;
    resnet50_stage(1, &g);
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    char *d = fixture_tmp_dir("parwalk");
    rotor_compile_result serial, two, one, warm;
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.serial_walk = true}, &serial, &err), ROTOR_OK,
                 "%s", err.msg);
    cr_assert_eq(serial.searches, 31, "the serial walk's count");
    /* batched, two search threads, into a plan cache */
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 2, .cache_dir = d}, &two, &err),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(two.cache_hits, 0);
    assert_same_walk(&serial, &two, "batched, 2 threads");
    /* batched, one thread: the batch's searches one after another */
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 1}, &one, &err), ROTOR_OK, "%s",
                 err.msg);
    assert_same_walk(&serial, &one, "batched, 1 thread");
    /* warm from the batched walk's cache: every search answered */
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 2, .cache_dir = d}, &warm, &err),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(warm.cache_hits, warm.searches, "warm: %d of %d searches from the cache", warm.cache_hits,
                 warm.searches);
    assert_same_walk(&serial, &warm, "warm");
    rotor_compile_result_free(&serial);
    rotor_compile_result_free(&two);
    rotor_compile_result_free(&one);
    rotor_compile_result_free(&warm);
    rotor_graph_free(&g);
    fixture_rm_dir(d);
}

/* The walk's per-operator memo (compile.c, setup_memo: hand-off parts,
 * setup seconds, and best_move's splits of each idle layout) answers as
 * pricing every setup afresh would (options.walk_unmemoised): the same
 * schedule, frontiers and curve.  BERT-Large at batch 1, whole: its walk
 * changes active plans under idle layouts that stand, so a split kept past
 * its active plan would move a different layout (checked: keying the kept
 * splits without the active plan changes its schedule; a cut of 1 to 12
 * layers, DenseNet-121 and GoogLeNet do not show it). */
Test(parwalk, the_walks_memo_decides_as_pricing_every_setup_afresh) {
    rotor_graph raw, g;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_zoo_build("bert-large", &(rotor_zoo_options){.batch = 1}, &raw, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(rotor_group(&raw, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&raw);
    rotor_chip chip = mk2();
    rotor_compile_result memo, afresh;
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 2}, &memo, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 2, .walk_unmemoised = true},
                               &afresh, &err),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_gt(memo.ncurve, 1, "the walk moved some idle layout");
    assert_same_walk(&memo, &afresh, "memoised against afresh");
    rotor_compile_result_free(&memo);
    rotor_compile_result_free(&afresh);
    rotor_graph_free(&g);
}

/* The walk's lone searches (frontier_learn, and a batch's only search left
 * after the plan cache) run a session's pass 2 on every thread: ResNet-50's
 * first stage at batch 8 makes 8 of them (measured: each keeps more than
 * one F_op for pass 2), in sessions that frontiers_search opened with one
 * thread, and which searched on that one thread before (issue 45).  Two
 * threads share the incumbent and each costs its own plans, so what each
 * prunes depends on timing; the schedule, the frontiers' points and the
 * search count may not. */
Test(parwalk, the_walks_lone_searches_on_two_threads_decide_as_on_one) {
    rotor_graph g;
    rotor_error err = {{0}};
    resnet50_stage(8, &g);
    rotor_chip chip = mk2();
    rotor_compile_result one, two;
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 1}, &one, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 2}, &two, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(one.searches, 46, "the walk's searches (the CLI's count)");
    assert_same_walk(&one, &two, "2 threads against 1");
    rotor_compile_result_free(&one);
    rotor_compile_result_free(&two);
    rotor_graph_free(&g);
}

/* The searches made ahead while the walk prices setups (compile.c,
 * "Searches ahead"; issue 45) answer the walk's next searches as the
 * searches would: the schedule, the frontiers' points and the search count
 * are those of the walk on one thread, which searches nothing ahead.  With
 * options.ahead_wait the searches ahead run to the end of what is foreseen,
 * so how many of the walk's searches they answer does not depend on timing:
 * on ResNet-50's first stage at batch 8, 37 of its 46. */
Test(parwalk, the_searches_made_ahead_answer_as_the_walks_own) {
    rotor_graph g;
    rotor_error err = {{0}};
    resnet50_stage(8, &g);
    rotor_chip chip = mk2();
    rotor_compile_result one, ahead, again;
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 1}, &one, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(one.searches_ahead, 0, "one thread searches nothing ahead");
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 2, .ahead_wait = true}, &ahead, &err),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(ahead.searches_ahead, 37, "the walk's searches answered ahead: %d", ahead.searches_ahead);
    assert_same_walk(&one, &ahead, "ahead against 1 thread");
    cr_assert_eq(rotor_compile(&g, &chip, &(rotor_compile_options){.threads = 3, .ahead_wait = true}, &again, &err),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(again.searches_ahead, ahead.searches_ahead, "the same at 3 threads");
    assert_same_walk(&one, &again, "ahead on 2 threads against 1 thread");
    rotor_compile_result_free(&one);
    rotor_compile_result_free(&ahead);
    rotor_compile_result_free(&again);
    rotor_graph_free(&g);
}
