/* test_warm.c — the warm path's shortcuts (issue 45: a warm compile, every
 * search answered by the plan cache, is what hand-off pricing and
 * placement cost; docs/performance.md, "Warm compiles"):
 *  - the hand-off memo (src/compile/handoffcache.c) places each plan once
 *    while it stays among the last used, and gives the traffic a fresh
 *    placement gives;
 *  - a placement's step-0 partitions (src/op/place.c) are the loop's,
 *    without walking it;
 *  - a hand-off's holders by cell (src/op/handoff.c's grid) are the ones
 *    the origins say;
 *  - a setup asked again where the caller keeps its plans is answered by
 *    what is there now (handoffcache.c's front memo);
 *  - a placement's summary (rotor_place_summarize, what a program records)
 *    is the whole placement's chains and ring counts. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "rotor/op/emu.h"
#include "rotor/op/handoff.h"
#include "rotor/op/place.h"
#include "rotor/op/search.h"
#include "compile/handoffcache.h"
#include "fixtures.h"

/* The traffic of one hand-off placed afresh, as the memo computed it
 * before it kept placements. */
static void fresh(const rotor_expr *ep, const rotor_plan *pp, const rotor_expr *ec, const rotor_plan *pc,
                  const rotor_chip *chip, int64_t *recv, int64_t *max_recv, int64_t *send, int64_t *max_send) {
    rotor_error err;
    rotor_plan_info ip, ic;
    rotor_place *lp, *lc;
    rotor_handoff *h;
    cr_assert_eq(rotor_plan_derive(ep, chip, pp, &ip, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_plan_derive(ec, chip, pc, &ic, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_place_make(ep, pp, &ip, &lp, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_place_make(ec, pc, &ic, &lc, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_handoff_make(lp, &h, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_handoff_traffic(h, lc, 1, NULL, recv, max_recv, send, max_send), ROTOR_OK);
    rotor_handoff_free(h);
    rotor_place_free(lp);
    rotor_place_free(lc);
}

/* Elements per core of one side (dense or sparse) into v[0..n). */
static void spread(const handoff_counts *c, int64_t n, int64_t *v) {
    memset(v, 0, (size_t)n * sizeof *v);
    for (int64_t i = 0; i < c->nz; i++) v[c->core ? c->core[i] : i] = handoff_cache_counts_at(c, i);
}

/* One producer plan meets every consumer candidate (Algorithm 1 trying
 * active plans against an operator's chosen input): the producer is
 * placed once, each consumer once, and every traffic is a fresh count's,
 * core by core. */
Test(warm, the_memo_places_a_producer_once_and_counts_as_afresh) {
    rotor_chip chip = mk2();
    rotor_expr ep = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=256,k=512,n=512");
    rotor_expr ec = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=256,k=512,n=256");
    rotor_search_result rp = pareto_frontier(&ep, &chip), rc = pareto_frontier(&ec, &chip);
    int nc = rc.npareto < 6 ? rc.npareto : 6;
    handoff_cache *hc = handoff_cache_new(&chip);
    rotor_error err;
    int64_t n = rotor_chip_cores(&chip);
    int64_t *recv = malloc((size_t)n * sizeof *recv), *send = malloc((size_t)n * sizeof *send);
    int64_t *v = malloc((size_t)n * sizeof *v);
    for (int k = 0; k < nc; k++) {
        const rotor_plan *pp = &rp.pareto[0].plan, *pc = &rc.pareto[k].plan;
        const handoff_traffic *tr;
        cr_assert_eq(handoff_cache_traffic(hc, 0, &ep, pp, 1, &ec, pc, 1, NULL, &chip, &chip, &tr, &err), ROTOR_OK,
                     "%s", err.msg);
        int64_t mr, ms;
        fresh(&ep, pp, &ec, pc, &chip, recv, &mr, send, &ms);
        cr_assert_eq(tr->max_recv, mr, "candidate %d", k);
        cr_assert_eq(tr->max_send, ms, "candidate %d", k);
        cr_assert_eq(tr->nrecv, rc.pareto[k].info.cores);
        spread(&tr->recv, tr->nrecv, v);
        cr_assert_arr_eq(v, recv, (size_t)tr->nrecv * sizeof *v, "candidate %d: receives core by core", k);
        spread(&tr->send, tr->nsend, v);
        cr_assert_arr_eq(v, send, (size_t)tr->nsend * sizeof *v, "candidate %d: sends core by core", k);
    }
    cr_assert_eq(handoff_cache_counted(hc), nc);
    cr_assert_eq(handoff_cache_placements(hc), 1 + nc, "the producer once, each consumer once");
    /* asked again: nothing counted, nothing placed */
    const handoff_traffic *tr;
    cr_assert_eq(handoff_cache_traffic(hc, 0, &ep, &rp.pareto[0].plan, 1, &ec, &rc.pareto[0].plan, 1, NULL, &chip,
                                       &chip, &tr, &err),
                 ROTOR_OK);
    cr_assert_eq(handoff_cache_counted(hc), nc);
    cr_assert_eq(handoff_cache_placements(hc), 1 + nc);
    /* the consumer's plan producing in its turn is not placed again */
    cr_assert_eq(handoff_cache_traffic(hc, 1, &ec, &rc.pareto[0].plan, 2, &ec, &rc.pareto[0].plan, 1, NULL, &chip,
                                       &chip, &tr, &err),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(handoff_cache_counted(hc), nc + 1);
    cr_assert_eq(handoff_cache_placements(hc), 1 + nc + 1, "only shape 2's plan is new");
    free(recv), free(send), free(v);
    handoff_cache_free(hc);
    rotor_search_result_free(&rp);
    rotor_search_result_free(&rc);
}

/* The memo keeps a bounded number of placements (128 of an IPU's small
 * plans, handoffcache.c's PLACED_SLOTS): 200 distinct consumer shapes push
 * the producer's out, and its traffic is still right when it comes back
 * (placed again). */
Test(warm, the_memo_forgets_placements_beyond_its_bound_and_stays_exact) {
    rotor_chip chip = mk2();
    rotor_expr ep = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=32,n=64");
    rotor_expr ec = make_expr("Y[m,n] = relu(X[m,n])", "m=64,n=64");
    rotor_plan pp, pc;
    rotor_plan_init(&ep, &pp);
    rotor_plan_init(&ec, &pc);
    pp.fop[0] = 4;
    pc.fop[1] = 8;
    handoff_cache *hc = handoff_cache_new(&chip);
    rotor_error err;
    const handoff_traffic *tr;
    for (int f = 1; f <= 40; f++)
        cr_assert_eq(handoff_cache_traffic(hc, 0, &ep, &pp, f, &ec, &pc, 1, NULL, &chip, &chip, &tr, &err), ROTOR_OK,
                     "%s", err.msg);
    cr_assert_eq(handoff_cache_placements(hc), 41, "one producer, 40 consumer shapes");
    for (int f = 41; f <= 200; f++) /* another producer shape: shape 0's placement goes */
        cr_assert_eq(handoff_cache_traffic(hc, 100, &ep, &pp, f, &ec, &pc, 1, NULL, &chip, &chip, &tr, &err),
                     ROTOR_OK);
    int64_t before = handoff_cache_placements(hc);
    cr_assert_eq(before, 41 + 1 + 160, "nothing placed twice yet");
    cr_assert_eq(handoff_cache_traffic(hc, 0, &ep, &pp, 201, &ec, &pc, 1, NULL, &chip, &chip, &tr, &err), ROTOR_OK);
    cr_assert_eq(handoff_cache_placements(hc), before + 2, "shape 0's plan placed again, and shape 201's");
    /* the producer's 4 cores hold bands of 16 rows, the consumer's 8 cores
     * need bands of 8 columns (test_compile's numbers) */
    cr_assert_eq(tr->max_recv, 512);
    cr_assert_eq(tr->max_send, 7 * 16 * 8);
    handoff_cache_free(hc);
}

/* Step 0's partitions without the loop: for every plan of a frontier,
 * every tensor and every core, the partition is the one the loop counter
 * at step 0 and rotor_place_subtask give. */
Test(warm, step_0_partitions_are_the_loops) {
    rotor_chip chip = mk2();
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=256,k=512,n=512");
    rotor_search_result r = pareto_frontier(&e, &chip);
    rotor_error err;
    int checked = 0;
    for (int k = 0; k < r.npareto; k++) {
        rotor_place *pl;
        cr_assert_eq(rotor_place_make(&e, &r.pareto[k].plan, &r.pareto[k].info, &pl, &err), ROTOR_OK, "%s", err.msg);
        const rotor_plan_info *info = rotor_place_info(pl);
        for (int t = 0; t < e.ntensors; t++)
            for (int64_t c = 0; c < info->cores; c++) {
                int64_t i[ROTOR_MAX_AXES], j[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES], coord[ROTOR_MAX_AXES];
                int64_t got[ROTOR_MAX_DIMS], want[ROTOR_MAX_DIMS];
                rotor_place_loop(pl, 0, i);
                rotor_place_coords(pl, c, coord);
                rotor_place_subtask(pl, c, i, j);
                rotor_place_block(pl, t, j, blk);
                for (int d = 0; d < e.tensors[t].ndims; d++) { /* GEMM dimensions are plain axes */
                    int a = e.tensors[t].dims[d].axis[0];
                    int64_t L = info->sub_op[a];
                    want[d] = coord[a] * L + blk[a] * (L / r.pareto[k].plan.ft[t][a]);
                }
                rotor_place_partition(pl, t, c, 0, got);
                cr_assert_arr_eq(got, want, (size_t)e.tensors[t].ndims * sizeof *got, "plan %d tensor %d core %lld",
                                 k, t, (long long)c);
                checked++;
            }
        rotor_place_free(pl);
    }
    cr_assert_gt(checked, 1000);
    rotor_search_result_free(&r);
}

/* Holders by cell: every output element's holder has the element inside
 * its final partition, and every core of a group of R_Y copies holds its
 * own chunk: the elements each core holds add up to the output, for
 * every plan of a frontier (reductions included). */
Test(warm, every_output_element_has_one_holder_by_cell) {
    rotor_chip chip = mk2();
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=48,k=512,n=40");
    rotor_search_result r = pareto_frontier(&e, &chip);
    rotor_error err;
    for (int k = 0; k < r.npareto; k++) {
        rotor_place *pl;
        rotor_handoff *h;
        cr_assert_eq(rotor_place_make(&e, &r.pareto[k].plan, &r.pareto[k].info, &pl, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_handoff_make(pl, &h, &err), ROTOR_OK, "%s", err.msg);
        const rotor_plan_info *info = rotor_place_info(pl);
        int64_t *held = calloc((size_t)info->cores, sizeof *held);
        for (int64_t m = 0; m < 48; m++)
            for (int64_t n = 0; n < 40; n++) {
                int64_t x[2] = {m, n}, o[2];
                int64_t c = rotor_handoff_holder(h, x);
                cr_assert(c >= 0 && c < info->cores, "plan %d: (%lld, %lld) has a holder", k, (long long)m,
                          (long long)n);
                rotor_place_partition(pl, 0, c, info->total_steps - 1, o);
                for (int d = 0; d < 2; d++) cr_assert(x[d] >= o[d] && x[d] < o[d] + info->part[0][d]);
                held[c]++;
            }
        int64_t lo[2] = {0, 0}, hi[2] = {48, 40};
        for (int64_t c = 0; c < info->cores; c++)
            cr_assert_eq(rotor_handoff_held_box(h, c, lo, hi), held[c], "plan %d core %lld", k, (long long)c);
        free(held);
        rotor_handoff_free(h);
        rotor_place_free(pl);
    }
    rotor_search_result_free(&r);
}

/* The setup memo finds a setup by where the caller keeps its plans, and
 * answers by what is there: a plan overwritten in place (a frontier that
 * gained points) is priced afresh, and the same content at another address
 * is the same setup.  The matmul's 4 cores hold bands of 16 rows of a 64 x
 * 64 output; the relu's 8 cores by columns need bands of 8 columns: each
 * receives 8 x 64 less its own core's share. */
Test(warm, the_setup_memo_answers_by_the_plans_content) {
    rotor_chip chip = mk2();
    rotor_expr ep = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=32,n=64");
    rotor_expr ec = make_expr("Y[m,n] = relu(X[m,n])", "m=64,n=64");
    rotor_plan pp, pc, by_rows, copy;
    rotor_plan_init(&ep, &pp);
    rotor_plan_init(&ec, &pc);
    pp.fop[0] = 4;
    pc.fop[1] = 8;
    by_rows = pc;
    by_rows.fop[1] = 1;
    by_rows.fop[0] = 8;
    handoff_cache *hc = handoff_cache_new(&chip), *afresh = handoff_cache_new(&chip);
    rotor_error err;
    handoff_input in = {.f = 0, .e = &ep, .p = &pp, .t = 1, .view = NULL, .chip = &chip};
    int64_t most, rows_most;
    cr_assert_eq(handoff_cache_setup(hc, &in, 1, 1, &ec, &pc, &chip, &most, NULL, NULL, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(most, 7 * 16 * 8, "the busiest port sends 16 rows to 7 other cores' columns");
    cr_assert_eq(handoff_cache_counted(hc), 1);
    cr_assert_eq(handoff_cache_setup(afresh, &in, 1, 1, &ec, &by_rows, &chip, &rows_most, NULL, NULL, &err),
                 ROTOR_OK);
    cr_assert_neq(rows_most, most, "the two plans must differ for the test to tell");
    rotor_plan kept = pc;
    pc = by_rows; /* overwritten where it was */
    cr_assert_eq(handoff_cache_setup(hc, &in, 1, 1, &ec, &pc, &chip, &most, NULL, NULL, &err), ROTOR_OK);
    cr_assert_eq(most, rows_most);
    cr_assert_eq(handoff_cache_counted(hc), 2, "the new plan's hand-off counted");
    pc = kept;
    copy = kept; /* the first plan again, in place and elsewhere: memoised */
    cr_assert_eq(handoff_cache_setup(hc, &in, 1, 1, &ec, &pc, &chip, &most, NULL, NULL, &err), ROTOR_OK);
    cr_assert_eq(most, 7 * 16 * 8);
    cr_assert_eq(handoff_cache_setup(hc, &in, 1, 1, &ec, &copy, &chip, &most, NULL, NULL, &err), ROTOR_OK);
    cr_assert_eq(most, 7 * 16 * 8);
    cr_assert_eq(handoff_cache_counted(hc), 2);
    handoff_cache_free(hc);
    handoff_cache_free(afresh);
}

/* The program's placement summary without the rings: every frontier plan
 * of a GEMM, a batched attention product and a convolution gives the chains
 * and ring counts of the whole placement. */
Test(warm, a_placement_summary_is_the_placements_chains_and_rings) {
    rotor_chip chip = mk2();
    const char *ex[][2] = {
        {"C[m,n] += A[m,k] * B[k,n]", "m=256,k=512,n=512"},
        {"S[b,i,j] += Q[b,i,d] * K[b,j,d]", "b=16,i=128,j=128,d=64"},
        {"Y[n,o,y,x] += X[n,c,y+r,x+s] * W[o,c,r,s]", "n=1,o=64,c=64,y=28,x=28,r=3,s=3"},
    };
    rotor_error err;
    int checked = 0;
    for (size_t x = 0; x < sizeof ex / sizeof ex[0]; x++) {
        rotor_expr e = make_expr(ex[x][0], ex[x][1]);
        rotor_search_result r = pareto_frontier(&e, &chip);
        for (int k = 0; k < r.npareto; k++) {
            rotor_place *pl;
            rotor_place_summary ps;
            cr_assert_eq(rotor_place_make(&e, &r.pareto[k].plan, &r.pareto[k].info, &pl, &err), ROTOR_OK, "%s",
                         err.msg);
            cr_assert_eq(rotor_place_summarize(&e, &r.pareto[k].plan, &r.pareto[k].info, &ps, &err), ROTOR_OK);
            for (int a = 0; a < e.naxes; a++) {
                int64_t radix[ROTOR_MAX_TENSORS + 1];
                int q = rotor_place_digits(pl, a, radix);
                cr_assert_eq(ps.ndigits[a], q, "%s plan %d axis %d", ex[x][0], k, a);
                cr_assert_arr_eq(ps.radix[a], radix, (size_t)q * sizeof *radix);
            }
            for (int t = 0; t < e.ntensors; t++) cr_assert_eq(ps.rings[t], rotor_place_ring_count(pl, t));
            rotor_place_free(pl);
            checked++;
        }
        rotor_search_result_free(&r);
    }
    cr_assert_gt(checked, 10);
}
