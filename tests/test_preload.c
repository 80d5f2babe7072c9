/* test_preload.c — Elk's HBM preload scheduling (src/hbm/preload.c; Elk §4.2-§4.5,
 * §6.1; docs/preload.md).
 *
 * The hand-computed cases use one core, hbm_bw = 1e12 B/s (1 byte of weights
 * takes 1 ps to load) and link_bw = 1e16 B/s (up to 10,000 bytes take 1 ps
 * over a link, so links never limit them).  Times are in ps. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/hbm/preload.h"
#include "fixtures.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* ---- helpers ------------------------------------------------------------- */

static rotor_preload_chip unit_chip(int64_t sram) {
    return (rotor_preload_chip){.cores = 1, .sram_bytes = sram, .hbm_bw = 1000000000000, .link_bw = 10000000000000000};
}

static rotor_preload_model *make(const rotor_preload_chip *c, const rotor_preload_op_desc *ops, int n) {
    rotor_preload_model *m;
    rotor_error err;
    cr_assert_eq(rotor_preload_model_create(c, ops, n, &m, &err), ROTOR_OK, "%s", err.msg);
    return m;
}

static rotor_preload_result run(const rotor_preload_model *m, rotor_preload_design d) {
    rotor_preload_result r;
    rotor_error err;
    cr_assert_eq(rotor_preload_schedule(m, d, NULL, &r, &err), ROTOR_OK, "%s: %s", rotor_preload_designs[d].name,
                 err.msg);
    return r;
}

/* Elk alone: the induction's schedule without the refinement against the
 * forward timing, as the paper's figures work it out. */
static rotor_preload_result run_elk(const rotor_preload_model *m, rotor_preload_design d) {
    rotor_preload_result r;
    rotor_error err;
    rotor_preload_options opt = {.no_refine = true};
    cr_assert_eq(rotor_preload_schedule(m, d, &opt, &r, &err), ROTOR_OK, "%s: %s", rotor_preload_designs[d].name,
                 err.msg);
    cr_assert_eq(r.refine_moves, 0);
    return r;
}

static rotor_preload_result eval(const rotor_preload_model *m, const rotor_preload_choice *c, const int *order) {
    rotor_preload_result r;
    rotor_error err;
    cr_assert_eq(rotor_preload_evaluate(m, c, order, ROTOR_PRELOAD_DYN, &r, &err), ROTOR_OK, "%s", err.msg);
    return r;
}

/* The first n operators of r have the preload numbers pn[0 .. n). */
static void assert_preload_numbers(const rotor_preload_result *r, int n, const int *pn) {
    for (int i = 0; i < n; i++)
        cr_assert_eq(r->ops[i].preload_number, pn[i], "op %d: p = %d", i, r->ops[i].preload_number);
}

static int64_t bd_sum(const rotor_preload_breakdown *b) {
    return b->preload_ps + b->execute_ps + b->overlap_ps + b->stall_ps + b->idle_ps;
}

/* ---- §4.3: preload states --------------------------------------------------- */

Test(preload, a_datum_shared_by_4_cores_splits_into_1_2_4_chunks) {
    /* 8 cores, 800 bytes of weights, P = 4: a core holds d = 800*4/8 = 400
     * bytes in execute state.  Chunks 1, 2, 4 leave 400, 200, 100 on a core at
     * preload and 0, 200, 300 to fetch at distribution (§4.3).  link 1e9 B/s:
     * 1 byte = 1000 ps; HBM 1e12 B/s: 800 ps, below every link time. */
    rotor_preload_chip c = {.cores = 8, .sram_bytes = 1000, .hbm_bw = 1000000000000, .link_bw = 1000000000};
    rotor_preload_plan p[2] = {{.time_ps = 10, .space_bytes = 400, .share = 4},
                               {.time_ps = 20, .space_bytes = 600, .share = 6}};
    rotor_preload_op_desc op = {.name = "mm", .hbm_bytes = 800, .nplans = 2, .plans = p};
    rotor_preload_model *m = make(&c, &op, 1);
    int n;
    const rotor_preload_state *s = rotor_preload_model_states(m, 0, 0, &n);
    cr_assert_eq(n, 3);
    int64_t chunks[3] = {1, 2, 4}, space[3] = {400, 200, 100}, dist[3] = {0, 200, 300};
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(s[k].chunks, chunks[k]);
        cr_assert_eq(s[k].space_bytes, space[k]);
        cr_assert_eq(s[k].dist_bytes, dist[k]);
        cr_assert_eq(s[k].dist_ps, dist[k] * 1000);
        cr_assert_eq(s[k].preload_ps, space[k] * 1000);
    }
    /* P = 6: chunks 1, 2 and 6 (4 does not divide 6); d = 800*6/8 = 600 */
    s = rotor_preload_model_states(m, 0, 1, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(s[1].chunks, 2);
    cr_assert_eq(s[2].chunks, 6);
    cr_assert_eq(s[0].space_bytes, 600);
    cr_assert_eq(s[2].space_bytes, 100);
    cr_assert_eq(s[2].dist_bytes, 500);
    rotor_preload_model_free(m);
}

/* A chip's mesh loads for the edge-port tests: port[m] for groups of m,
 * shift[d] for distribution rounds at distance d. */
typedef struct mesh_table {
    double port[9], shift[9];
} mesh_table;

static rotor_status table_port(void *ctx, int64_t m, double *load, rotor_error *err) {
    const mesh_table *t = ctx;
    if (m == 8) return rotor_fail(err, ROTOR_ERR_INPUT, "no port serves a group of 8");
    *load = t->port[m];
    return ROTOR_OK;
}

static rotor_status table_shift(void *ctx, int64_t d, double *load, rotor_error *err) {
    (void)err;
    *load = ((const mesh_table *)ctx)->shift[d];
    return ROTOR_OK;
}

/* The same operator with its HBM behind edge ports (a mesh, docs/preload.md
 * "Edge ports"): the chip says a preload into single cores costs 3 times a
 * core's link, groups of 2 cost 2.5 times (rows straddled) and groups of 4
 * once.  A preload state with chunks c sends groups of m = P / c = 4, 2, 1
 * cores, so its link time is space x port[m]: 400 x 1, 200 x 2.5, 100 x 3
 * bytes at 1 byte per 1000 ps.  Its distribution fetches the other c - 1
 * chunks in rounds at distances m, 2m, ...: c = 2 one round of 200 bytes at
 * distance 2 (x 2), c = 4 three of 100 at distances 1, 2, 3 (x 1.5, 2, 3),
 * so 400 and 650 bytes' worth.  Ideal's smallest footprint (100 B, one core
 * per group) pays the same 3 x and no distribution.  A load that is not
 * positive, or a chip that cannot say, is an error naming the group. */
Test(preload, behind_edge_ports_a_preload_and_its_distribution_pay_the_mesh_loads) {
    mesh_table t = {.port = {0, 3, 2.5, 2, 1, 1, 1, 1, 1}, .shift = {0, 1.5, 2, 3, 1, 1, 1, 1, 1}};
    rotor_preload_chip c = {.cores = 8, .sram_bytes = 1000, .hbm_bw = 1000000000000, .link_bw = 1000000000,
                            .port_load = table_port, .shift_load = table_shift, .mesh_ctx = &t};
    rotor_preload_plan p = {.time_ps = 10, .space_bytes = 400, .share = 4};
    rotor_preload_op_desc op = {.name = "mm", .hbm_bytes = 800, .nplans = 1, .plans = &p};
    rotor_preload_model *m = make(&c, &op, 1);
    int n;
    const rotor_preload_state *s = rotor_preload_model_states(m, 0, 0, &n);
    cr_assert_eq(n, 3);
    int64_t preload[3] = {400000, 500000, 300000}, intake[3] = {400, 500, 300};
    int64_t dist[3] = {0, 200, 300}, dist_in[3] = {0, 400, 650};
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(s[k].preload_ps, preload[k], "chunks %lld", (long long)s[k].chunks);
        cr_assert_eq(s[k].intake_bytes, intake[k], "chunks %lld", (long long)s[k].chunks);
        cr_assert_eq(s[k].dist_bytes, dist[k], "chunks %lld", (long long)s[k].chunks);
        cr_assert_eq(s[k].dist_intake_bytes, dist_in[k], "chunks %lld", (long long)s[k].chunks);
        cr_assert_eq(s[k].dist_ps, dist_in[k] * 1000, "chunks %lld", (long long)s[k].chunks);
    }
    rotor_preload_result r = run(m, ROTOR_PRELOAD_IDEAL);
    cr_assert_eq(r.latency_ps, 300000 + 10);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
    rotor_error err;
    t.port[2] = 0;
    cr_assert_eq(rotor_preload_model_create(&c, &op, 1, &m, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "chip: port_load(2): expected a positive number, got 0");
    t.port[2] = 2.5;
    t.shift[3] = -1;
    cr_assert_eq(rotor_preload_model_create(&c, &op, 1, &m, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "chip: shift_load(3): expected a positive number, got -1");
    t.shift[3] = 3;
    p.share = 8;
    p.space_bytes = 800;
    cr_assert_eq(rotor_preload_model_create(&c, &op, 1, &m, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "no port serves a group of 8");
}

Test(preload, weightless_operators_have_one_empty_preload_state) {
    rotor_preload_chip c = unit_chip(100);
    rotor_preload_plan p = {.time_ps = 5, .space_bytes = 10, .share = 1};
    rotor_preload_op_desc op = {.hbm_bytes = 0, .nplans = 1, .plans = &p};
    rotor_preload_model *m = make(&c, &op, 1);
    int n;
    const rotor_preload_state *s = rotor_preload_model_states(m, 0, 0, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(s[0].space_bytes, 0);
    cr_assert_eq(s[0].preload_ps, 0);
    rotor_preload_model_free(m);
}

/* ---- §4.2: Figure 10 -------------------------------------------------------- */

/* Figure 10 rebuilt: ops A, B, C stand for Op5, Op6, Op7; SRAM 100 bytes.
 *   A: 10 bytes of weights; plans fast (10 ps, 85 B), mid (15 ps, 60 B), slow (30 ps, 20 B)
 *   B: 25 bytes; one plan (40 ps, 50 B)      C: 30 bytes; one plan (20 ps, 30 B)
 * With one core every preload state is the whole weights (P = 1). */
static rotor_preload_model *fig10(void) {
    static const rotor_preload_plan a[3] = {
        {.time_ps = 10, .space_bytes = 85, .share = 1},
        {.time_ps = 15, .space_bytes = 60, .share = 1},
        {.time_ps = 30, .space_bytes = 20, .share = 1}};
    static const rotor_preload_plan b = {.time_ps = 40, .space_bytes = 50, .share = 1};
    static const rotor_preload_plan c = {.time_ps = 20, .space_bytes = 30, .share = 1};
    rotor_preload_op_desc ops[3] = {{.name = "A", .hbm_bytes = 10, .nplans = 3, .plans = a},
                                    {.name = "B", .hbm_bytes = 25, .nplans = 1, .plans = &b},
                                    {.name = "C", .hbm_bytes = 30, .nplans = 1, .plans = &c}};
    rotor_preload_chip chip = unit_chip(100);
    return make(&chip, ops, 3);
}

Test(preload, fig10_op5_picks_preload_number_1) {
    /* Backwards, times relative to the end (Theorem 4.2):
     *   C: p = 0 (Lemma 4.1), executes in [-20, 0].
     *   B: p = 1 overlaps C's preload: ends at -20, starts at -60 (B 50 B + C 30 B fit).
     *      p = 0 would end before C's preload, at -20 - 30 = -50: worse.
     *   A (Op5): B's preload is as late as possible at [-85, -60], C's at [-50, -20].
     *      p = 0: A ends before B's preload, at -85, fast plan: current-to-end 85 + 10 = 95
     *      p = 1: A ends at -60; 85 + 25 > 100 B, so A steps to mid:  60 + 15 = 75
     *      p = 2: A ends at -60; 60 + 55 > 100, so A steps to slow:   60 + 30 = 90
     *   so A picks p = 1 and the mid plan; plus A's own preload (10): 85 ps. */
    rotor_preload_model *m = fig10();
    rotor_preload_result r = run_elk(m, ROTOR_PRELOAD_DYN);
    cr_assert_eq(r.ops[0].plan, 1);
    assert_preload_numbers(&r, 3, (int[]){1, 1, 0});
    /* forwards: pre A [0,10], pre B [10,35], exe A [10,25], pre C [35,65]
     * (issued after exe A), exe B [35,75], exe C [75,95] */
    cr_assert_eq(r.latency_ps, 95);
    ASSERT_TIMES(r.ops[0], ANY_PS, ANY_PS, 10, 25);
    ASSERT_TIMES(r.ops[1], ANY_PS, ANY_PS, 35, ANY_PS);
    ASSERT_TIMES(r.ops[2], 35, 65, 75, ANY_PS);
    /* one allocation per preload number: C 1, B 2 (p = 0, 1), A 3 (p = 0, 1, 2);
     * A steps once for p = 1 (fast -> mid) and once more for p = 2 (mid -> slow) */
    cr_assert_eq(r.alloc_calls, 6);
    cr_assert_eq(r.alloc_steps, 2);
    /* Figure 18a categories: overlap = A with pre B [10,25] + B with pre C
     * [35,65] = 45; execute alone 75 - 45 = 30; preload alone [0,10] + [25,35] = 20 */
    cr_assert_eq(r.breakdown.overlap_ps, 45);
    cr_assert_eq(r.breakdown.execute_ps, 30);
    cr_assert_eq(r.breakdown.preload_ps, 20);
    cr_assert_eq(r.breakdown.stall_ps, 0);
    cr_assert_eq(r.breakdown.idle_ps, 0);
    cr_assert_float_eq(r.hbm_util, 65.0 / 95.0, 1e-12);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
}

Test(preload, fig10_the_other_preload_numbers_are_slower) {
    /* The same schedule with A at p = 0 (fast plan) and p = 2 (slow plan),
     * timed forwards by the three rules of §4.5:
     *   p = 0: pre A [0,10], exe A [10,20], pre B [20,45], exe B [45,85],
     *          pre C [45,75], exe C [85,105]                         -> 105
     *   p = 2: pre A [0,10], pre B [10,35], pre C [35,65], exe A [10,40],
     *          exe B [40,80], exe C [80,100]                         -> 100 */
    rotor_preload_model *m = fig10();
    rotor_preload_choice c0[3] = {{0, 0, 0}, {0, 0, 1}, {0, 0, 0}};
    rotor_preload_choice c2[3] = {{2, 0, 2}, {0, 0, 1}, {0, 0, 0}};
    rotor_preload_result r0 = eval(m, c0, NULL), r2 = eval(m, c2, NULL);
    cr_assert_eq(r0.latency_ps, 105);
    cr_assert_eq(r0.ops[2].pre_start_ps, 45);
    cr_assert_eq(r2.latency_ps, 100);
    cr_assert_eq(r2.ops[0].exe_end_ps, 40);
    cr_assert_eq(bd_sum(&r0.breakdown), 105);
    cr_assert_eq(bd_sum(&r2.breakdown), 100);
    rotor_preload_result_free(&r0);
    rotor_preload_result_free(&r2);
    rotor_preload_model_free(m);
}

Test(preload, inductive_scheduling_runs_one_allocation_per_preload_number) {
    /* 10 equal ops, 3 fit on chip (SRAM 3 bytes, each op 1 byte per core in
     * both states): preload numbers 0..2.  Preloading more never hurts here,
     * so every op takes the largest it may: p_9 = 0, p_8 = 1, the rest 2.
     * Allocations: op 9 one (p = 0), op 8 two, ops 7..0 three each = 27 <= K N = 30. */
    rotor_preload_chip c = {.cores = 10, .sram_bytes = 3, .hbm_bw = 1000000000000, .link_bw = 10000000000000000};
    rotor_preload_plan p = {.time_ps = 10, .space_bytes = 1, .share = 1};
    rotor_preload_op_desc ops[10];
    for (int i = 0; i < 10; i++) ops[i] = (rotor_preload_op_desc){.hbm_bytes = 10, .nplans = 1, .plans = &p};
    rotor_preload_model *m = make(&c, ops, 10);
    rotor_preload_result r = run_elk(m, ROTOR_PRELOAD_DYN);
    for (int i = 0; i < 10; i++) cr_assert_eq(r.ops[i].preload_number, i == 9 ? 0 : i == 8 ? 1 : 2, "op %d", i);
    cr_assert_eq(r.alloc_calls, 27);
    cr_assert_leq(r.alloc_calls, 3 * 10);
    /* pre 0 [0,10], then every preload back to back: op i's ends at 10 (i+1);
     * exe i starts when its preload is done and exe i-1 ends: [10(i+1), 10(i+2)] */
    cr_assert_eq(r.latency_ps, 110);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
}

/* ---- §4.4: Figure 13 and Figure 14 ------------------------------------------ */

/* Figure 13 rebuilt, SRAM 60 bytes, one layer: Op5 (no weights; fast plan
 * 10 ps in 50 B = 5/6, slow 40 ps in 30 B = 1/2), Op6 (20 B of weights),
 * Op7 (10 B), Op8 (no weights).  Op6 and Op7 are HBM-heavy (above the
 * average 30 / 4 = 7.5 B). */
static rotor_preload_model *fig13(void) {
    static const rotor_preload_plan p5[2] = {{.time_ps = 10, .space_bytes = 50, .share = 1},
                                             {.time_ps = 40, .space_bytes = 30, .share = 1}};
    static const rotor_preload_plan p6 = {.time_ps = 1, .space_bytes = 20, .share = 1};
    static const rotor_preload_plan p7 = {.time_ps = 1, .space_bytes = 10, .share = 1};
    static const rotor_preload_plan p8 = {.time_ps = 1, .space_bytes = 1, .share = 1};
    rotor_preload_op_desc ops[4] = {
        {.name = "Op5", .hbm_bytes = 0, .layer = 1, .nplans = 2, .plans = p5},
        {.name = "Op6", .hbm_bytes = 20, .layer = 1, .nplans = 1, .plans = &p6},
        {.name = "Op7", .hbm_bytes = 10, .layer = 1, .nplans = 1, .plans = &p7},
        {.name = "Op8", .hbm_bytes = 0, .layer = 1, .nplans = 1, .plans = &p8}};
    rotor_preload_chip chip = unit_chip(60);
    return make(&chip, ops, 4);
}

Test(preload, fig13_reordering_grows_the_execution_space_from_1_2_to_5_6) {
    rotor_preload_model *m = fig13();
    cr_assert(rotor_preload_model_heavy(m, 1) && rotor_preload_model_heavy(m, 2));
    cr_assert(!rotor_preload_model_heavy(m, 0) && !rotor_preload_model_heavy(m, 3));
    /* in order, with Op6 and Op7 both preloaded while Op5 runs, 20 + 10 = 30
     * bytes are taken: Op5 has 30 = 1/2 of the SRAM and must run slow */
    rotor_preload_choice slow[4] = {{1, 0, 2}, {0, 0, 2}, {0, 0, 1}, {0, 0, 0}};
    rotor_preload_result r = eval(m, slow, NULL);
    cr_assert_eq(r.ops[0].resident_bytes, 30);
    cr_assert_eq(r.ops[0].exec_space, 30);
    /* pre 6 [0,20], pre 7 [20,30], exe 5 [0,40], 6 [40,41], 7 [41,42], 8 [42,43] */
    cr_assert_eq(r.latency_ps, 43);
    rotor_preload_result_free(&r);
    rotor_preload_choice fast[4] = {{0, 0, 2}, {0, 0, 2}, {0, 0, 1}, {0, 0, 0}};
    rotor_error err;
    cr_assert_eq(rotor_preload_evaluate(m, fast, NULL, ROTOR_PRELOAD_DYN, &r, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 0 (Op5): SRAM overflow");
    /* preloading Op7 before Op6 leaves only Op7 (10 = 1/6) on chip while Op5
     * runs: Op5 has 50 = 5/6 and runs fast.  Forwards: pre 7 [0,10], exe 5
     * [0,10], pre 6 [10,30], exe 6 [30,31], exe 7 [31,32], exe 8 [32,33] */
    int order[4] = {0, 2, 1, 3};
    rotor_preload_choice re[4] = {{0, 0, 1}, {0, 0, 2}, {0, 0, 1}, {0, 0, 0}};
    r = eval(m, re, order);
    cr_assert_eq(r.ops[0].resident_bytes, 10);
    cr_assert_eq(r.ops[0].exec_space, 50);
    cr_assert_eq(r.latency_ps, 33);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
}

Test(preload, fig13_full_finds_the_reordering_dyn_cannot) {
    /* dyn (in order) runs the induction of §4.2 backwards:
     *   Op8 [-1,0]; Op7 p = 1 [-2,-1]; Op6 p = 2 [-3,-2]
     *   Op5: p = 0 fast, ends before Op6's preload [-32,-12]:  32 + 10 = 42
     *        p = 1 (Op6 on chip, 40 B left) slow, ends at -12: 12 + 40 = 52
     *        p = 2, 3 slow, end at -3:                          3 + 40 = 43
     *   -> p = 0, 42 ps.  Forwards: exe 5 [0,10], pre 6 [10,30], exe 6
     *   [30,31], pre 7 [30,40], exe 7 [40,41], exe 8 [41,42].
     * full also tries Op7 before Op6 (the only other order of the two heavy
     * ops), where Op5 at p = 1 runs fast with Op7 on chip: 33 ps (above). */
    rotor_preload_model *m = fig13();
    rotor_preload_result dyn = run_elk(m, ROTOR_PRELOAD_DYN), full = run_elk(m, ROTOR_PRELOAD_FULL);
    cr_assert_eq(dyn.latency_ps, 42);
    cr_assert_eq(dyn.ops[0].preload_number, 0);
    cr_assert_eq(full.latency_ps, 33);
    cr_assert_eq(full.schedules, 2);
    int want[4] = {0, 2, 1, 3};
    cr_assert_arr_eq(full.order, want, sizeof want);
    cr_assert_eq(full.ops[0].plan, 0);
    cr_assert_eq(full.ops[0].exec_space * 6, 60 * 5);
    cr_assert_eq(full.ops[0].resident_bytes * 6, 60);
    rotor_preload_result_free(&dyn);
    rotor_preload_result_free(&full);
    rotor_preload_model_free(m);
}

typedef struct collect {
    int64_t n;
    int last[16], second[16][16]; /* counts by the last op, and by (last, second to last) */
} collect;

static bool collect_order(const int *order, int n, void *ctx) {
    collect *c = ctx;
    c->n++;
    c->last[order[n - 1]]++;
    c->second[order[n - 1]][order[n - 2]]++;
    return true;
}

static rotor_preload_model *unit_ops(int n, int64_t sram) {
    rotor_preload_chip c = unit_chip(sram);
    static const rotor_preload_plan p = {.time_ps = 1, .space_bytes = 1, .share = 1};
    rotor_preload_op_desc ops[16];
    for (int i = 0; i < n; i++) ops[i] = (rotor_preload_op_desc){.hbm_bytes = 1, .nplans = 1, .plans = &p};
    return make(&c, ops, n);
}

Test(preload, fig14_nine_operators_two_fit_have_256_valid_orders) {
    /* Figure 14: 9 ops, room for 2.  Filling positions from the last, exactly
     * two choices keep the ops forced on chip within 2 at every step (the
     * paper's two branches: the last preload is Op8 or Op9; under Op8 the
     * next is Op7 or Op9, under Op9 it is Op7 or Op8), and the first position
     * takes what is left: 2^8 = 256 of the 9! = 362880 orders. */
    rotor_preload_model *m = unit_ops(9, 2);
    collect c = {0};
    int64_t count;
    rotor_error err;
    cr_assert_eq(rotor_preload_orders(m, 0, NULL, 0, collect_order, &c, &count, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(count, 256);
    cr_assert_eq(c.n, 256);
    /* 0-based: Op8 is 7, Op9 is 8 */
    for (int x = 0; x < 9; x++) cr_assert_eq(c.last[x], x >= 7 ? 128 : 0, "last %d", x);
    cr_assert_eq(c.second[7][6], 64);
    cr_assert_eq(c.second[7][8], 64);
    cr_assert_eq(c.second[8][6], 64);
    cr_assert_eq(c.second[8][7], 64);
    cr_assert_eq(c.second[7][5] + c.second[8][5], 0); /* Op6 next to last: Op6, Op7, Op9 on chip */
    rotor_preload_model_free(m);
    /* room for 3: three choices a step, two at the second to last position: 2 * 3^7 */
    m = unit_ops(9, 3);
    cr_assert_eq(rotor_preload_orders(m, 0, NULL, 0, NULL, NULL, &count, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(count, 4374);
    rotor_preload_model_free(m);
}

Test(preload, pruned_orders_permute_heavy_ops_alike_in_every_identical_layer) {
    /* two identical layers [light, heavy 20, heavy 10, light]; SRAM large:
     * the 2 heavy ops of a layer have 2 orders, applied to both layers */
    rotor_preload_chip c = unit_chip(1000);
    static const rotor_preload_plan p20 = {.time_ps = 1, .space_bytes = 20, .share = 1};
    static const rotor_preload_plan p10 = {.time_ps = 1, .space_bytes = 10, .share = 1};
    static const rotor_preload_plan p1 = {.time_ps = 1, .space_bytes = 1, .share = 1};
    rotor_preload_op_desc ops[8];
    for (int l = 0; l < 2; l++) {
        ops[4 * l + 0] = (rotor_preload_op_desc){.layer = 7, .layer_begin = true, .nplans = 1, .plans = &p1};
        ops[4 * l + 1] = (rotor_preload_op_desc){.hbm_bytes = 20, .layer = 7, .nplans = 1, .plans = &p20};
        ops[4 * l + 2] = (rotor_preload_op_desc){.hbm_bytes = 10, .layer = 7, .nplans = 1, .plans = &p10};
        ops[4 * l + 3] = (rotor_preload_op_desc){.layer = 7, .nplans = 1, .plans = &p1};
    }
    rotor_preload_model *m = make(&c, ops, 8);
    collect col = {0};
    int64_t count;
    rotor_error err;
    cr_assert_eq(rotor_preload_orders(m, 7, NULL, 0, collect_order, &col, &count, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(count, 2);
    cr_assert_eq(rotor_preload_orders(m, 3, NULL, 0, NULL, NULL, &count, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "layer: no operator has layer id 3");
    rotor_preload_model_free(m);
}

/* ---- §4.5: contention ----------------------------------------------------------- */

Test(preload, a_link_bound_preload_shares_the_link_with_a_blocking_core_not_a_bare_one) {
    /* link 1e12 B/s (1 byte = 1 ps), HBM 1e13 B/s.  Op1's 100 bytes take
     * max(10, 100) = 100 ps to preload, all through the core's link (alone it
     * takes the whole link).  Issued before Op0 runs (p_0 = 1), it starts at
     * 0.  Op0 computes 10 ps and moves no bytes: on a non-blocking core it
     * does not want the link, exe 0 [0, 10], the preload runs alone [0, 100]
     * and exe 1 waits for it, [100, 105].  With blocking SRAM the incoming
     * writes pause the core, so Op0 needs 10 ps of the link: the two share it
     * half and half, Op0 ends at 20 (a stall of 10) with 10 of the preload's
     * bytes landed, the other 90 take [20, 110]; exe 1 [110, 115]. */
    rotor_preload_chip c = {.cores = 1, .sram_bytes = 200, .hbm_bw = 10000000000000, .link_bw = 1000000000000};
    static const rotor_preload_plan p0 = {.time_ps = 10, .space_bytes = 10, .share = 1};
    static const rotor_preload_plan p1 = {.time_ps = 5, .space_bytes = 100, .share = 1};
    rotor_preload_op_desc ops[2] = {{.hbm_bytes = 0, .nplans = 1, .plans = &p0},
                                    {.hbm_bytes = 100, .nplans = 1, .plans = &p1}};
    rotor_preload_model *m = make(&c, ops, 2);
    rotor_preload_choice ch[2] = {{0, 0, 1}, {0, 0, 0}};
    rotor_preload_result r = eval(m, ch, NULL);
    cr_assert_eq(r.ops[0].stall_ps, 0);
    cr_assert_eq(r.ops[0].exe_end_ps, 10);
    cr_assert_eq(r.ops[1].pre_end_ps, 100);
    cr_assert_eq(r.latency_ps, 105);
    /* breakdown: busy [0,10] under the preload (overlap 10), preload alone
     * [10,100], exe 1 alone 5 */
    cr_assert_eq(r.breakdown.overlap_ps, 10);
    cr_assert_eq(r.breakdown.stall_ps, 0);
    cr_assert_eq(r.breakdown.execute_ps, 5);
    cr_assert_eq(r.breakdown.preload_ps, 90);
    cr_assert_eq(bd_sum(&r.breakdown), 105);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
    c.sram_blocking = true;
    m = make(&c, ops, 2);
    r = eval(m, ch, NULL);
    cr_assert_eq(r.ops[0].exe_end_ps, 20);
    cr_assert_eq(r.ops[0].stall_ps, 10);
    cr_assert_eq(r.ops[1].pre_end_ps, 110);
    cr_assert_eq(r.ops[1].exe_start_ps, 110);
    cr_assert_eq(r.latency_ps, 115);
    rotor_preload_result_free(&r);
    /* Elk's Ideal has a separate interconnect, but the preload still writes
     * its 100 bytes into the blocking SRAM (contention 3 of Elk Figure 2,
     * which Ideal does not remove): the same halves, exe 1 at 110.  The
     * roofline removes that too: no stall, exe 1 at 100. */
    rotor_error err;
    cr_assert_eq(rotor_preload_evaluate(m, ch, NULL, ROTOR_PRELOAD_IDEAL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.design, ROTOR_PRELOAD_IDEAL);
    cr_assert_eq(r.ops[0].stall_ps, 10);
    cr_assert_eq(r.ops[1].exe_start_ps, 110);
    cr_assert_eq(r.latency_ps, 115);
    rotor_preload_result_free(&r);
    cr_assert_eq(rotor_preload_evaluate(m, ch, NULL, ROTOR_PRELOAD_ROOFLINE, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.design, ROTOR_PRELOAD_ROOFLINE);
    cr_assert_eq(r.ops[0].stall_ps, 0);
    cr_assert_eq(r.latency_ps, 105);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
}

Test(preload, a_preload_state_with_more_chunks_halves_a_blocking_stall_and_frees_the_hbm_sooner) {
    /* 2 cores, blocking SRAM, link and HBM 1e12 B/s (1 byte = 1 ps), 320
     * bytes of SRAM.  Op0: no weights, 100 ps, 100 bytes of space.  Op1: 100
     * weight bytes shared by both cores (P = 2, d = 100), 10 ps in 110 bytes.
     * Op2: 400 weight bytes split over the cores (P = 1, d = 200), 10 ps in
     * 210 bytes: HBM-bound, 400 ps for 200 bytes per core, half the link
     * (fc = 200 / 400).  Op1's preload runs beside Op0 (p_0 = 1); Op2's cannot
     * (100 + 50 + 200 > 320), so it is issued when Op0 ends, and runs beside
     * Op1 (110 + 200 <= 320).
     *  - Op1 in one chunk (100 bytes, 100 ps, fc = 1): Op0 and the preload
     *    share the core half and half, both end at 200 (a stall of 100);
     *    Op2's preload [200, 600]; exe 1 beside it at half rate [200, 220];
     *    exe 2 [600, 610].
     *  - Op1 in two chunks (50 bytes, still 100 ps of HBM, fc = 1/2): the
     *    preload keeps its rate and ends at 100, Op0 gets the other half,
     *    then the whole core: [0, 150], a stall of 50.  Op2's preload
     *    [150, 550]; exe 1 distributes the other 50 bytes and computes, 60
     *    ps at half rate, [150, 270]; exe 2 [550, 560].
     * Every byte written into a blocking core costs it the same time, in a
     * preload or a distribution; the second state moves 50 of them out of
     * the window that holds back Op2's preload (rule 1: an execution delays
     * every later issue), so the HBM starts 50 ps sooner.  The schedulers
     * find it. */
    rotor_preload_chip c = {.cores = 2, .sram_bytes = 320, .hbm_bw = 1000000000000, .link_bw = 1000000000000,
                            .sram_blocking = true};
    static const rotor_preload_plan p0 = {.time_ps = 100, .space_bytes = 100, .share = 1};
    static const rotor_preload_plan p1 = {.time_ps = 10, .space_bytes = 110, .share = 2};
    static const rotor_preload_plan p2 = {.time_ps = 10, .space_bytes = 210, .share = 1};
    rotor_preload_op_desc ops[3] = {{.hbm_bytes = 0, .nplans = 1, .plans = &p0},
                                    {.hbm_bytes = 100, .nplans = 1, .plans = &p1},
                                    {.hbm_bytes = 400, .nplans = 1, .plans = &p2}};
    rotor_preload_model *m = make(&c, ops, 3);
    int ns;
    const rotor_preload_state *st = rotor_preload_model_states(m, 1, 0, &ns);
    cr_assert_eq(ns, 2);
    static const int chunks[2] = {1, 2};
    static const int64_t space[2] = {100, 50};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(st[k].chunks, chunks[k]);
        cr_assert_eq(st[k].space_bytes, space[k]);
    }
    cr_assert_eq(st[1].dist_ps, 50);
    /* Op1 in state 0 (one chunk), then 1 (two) */
    static const struct {
        int64_t exe0_end, stall0, pre2_start, exe1_end, latency;
    } want[2] = {{200, 100, 200, 220, 610}, {150, 50, 150, 270, 560}};
    for (int k = 0; k < 2; k++) {
        rotor_preload_choice ch[3] = {{0, 0, 1}, {0, k, 1}, {0, 0, 0}};
        rotor_preload_result r = eval(m, ch, NULL);
        ASSERT_TIMES(r.ops[0], ANY_PS, ANY_PS, ANY_PS, want[k].exe0_end);
        cr_assert_eq(r.ops[0].stall_ps, want[k].stall0, "state %d", k);
        ASSERT_TIMES(r.ops[2], want[k].pre2_start, ANY_PS, ANY_PS, ANY_PS);
        ASSERT_TIMES(r.ops[1], ANY_PS, ANY_PS, ANY_PS, want[k].exe1_end);
        cr_assert_eq(r.latency_ps, want[k].latency, "state %d", k);
        rotor_preload_result_free(&r);
    }
    for (int d = ROTOR_PRELOAD_DYN; d <= ROTOR_PRELOAD_FULL; d++) {
        rotor_preload_result r = run(m, (rotor_preload_design)d);
        cr_assert_eq(r.ops[1].chunks, 2, "%s", rotor_preload_designs[d].name);
        cr_assert_eq(r.latency_ps, 560, "%s", rotor_preload_designs[d].name);
        rotor_preload_result_free(&r);
    }
    rotor_preload_model_free(m);
}

/* Op0 (no weights, plan p0) runs while Op1's hbm1 bytes preload (p_0 = 1);
 * Op1 computes 5 ps in 100 bytes of space.  The forward timing of that. */
static rotor_preload_result overlap_run(const rotor_preload_chip *c, const rotor_preload_plan *p0, int64_t hbm1) {
    static const rotor_preload_plan p1 = {.time_ps = 5, .space_bytes = 100, .share = 1};
    rotor_preload_op_desc ops[2] = {{.hbm_bytes = 0, .nplans = 1, .plans = p0},
                                    {.hbm_bytes = hbm1, .nplans = 1, .plans = &p1}};
    rotor_preload_model *m = make(c, ops, 2);
    rotor_preload_choice ch[2] = {{0, 0, 1}, {0, 0, 0}};
    rotor_preload_result r = eval(m, ch, NULL);
    rotor_preload_model_free(m);
    return r;
}

Test(preload, shifts_share_the_link_fairly_with_a_link_bound_or_an_hbm_bound_preload) {
    /* Op0 computes 10 ps (non-blocking) and receives `traffic` bytes of
     * shifts while Op1's 100 bytes preload (p_0 = 1); link 1e12 B/s.
     *  - HBM 1e13 B/s: the preload is link-bound (100 ps, the whole link).
     *    Both flows want the whole link and get half each.  50 bytes of
     *    shifts take [0, 100] while 50 preload bytes land (a stall of 50:
     *    alone, the shifts would take 50 ps, longer than the compute; their
     *    own 40 ps beyond it are execution, not stall); the
     *    other 50 go alone [100, 150]; exe 1 [150, 155].  (Were the preload
     *    never slowed, exe 0 would be [0, 150] and the latency the same.)
     *    300 bytes: 200 ps shared (100 each), then 200 alone: exe 0 [0, 400],
     *    a stall of 400 - 300, pre 1 ends at 200, exe 1 [400, 405].
     *  - HBM 5e11 B/s: the preload is HBM-bound, max(200, 100) = 200 ps at
     *    half the link, which is also its fair share: never slowed, [0, 200].
     *    50 bytes at the other half: exe 0 [0, 100]; exe 1 [200, 205].
     *    300 bytes: 100 by 200 ps, the last 200 alone: exe 0 [0, 400]. */
    static const struct {
        int64_t hbm_bw, traffic, exe0_end, stall0, pre1_end, latency;
    } rows[] = {
        {10000000000000, 50, 100, 50, 150, 155},
        {10000000000000, 300, 400, 100, 200, 405},
        {500000000000, 50, 100, 50, 200, 205},
        {500000000000, 300, 400, 100, 200, 405},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        rotor_preload_chip c = {.cores = 1, .sram_bytes = 200, .hbm_bw = rows[k].hbm_bw, .link_bw = 1000000000000};
        rotor_preload_plan p0 = {.time_ps = 10, .space_bytes = 10, .share = 1, .traffic_bytes = rows[k].traffic};
        rotor_preload_result r = overlap_run(&c, &p0, 100);
        cr_assert_eq(r.ops[0].exe_end_ps, rows[k].exe0_end, "row %zu", k);
        cr_assert_eq(r.ops[0].stall_ps, rows[k].stall0, "row %zu", k);
        cr_assert_eq(r.ops[1].pre_end_ps, rows[k].pre1_end, "row %zu", k);
        cr_assert_eq(r.latency_ps, rows[k].latency, "row %zu", k);
        rotor_preload_result_free(&r);
    }
}

Test(preload, a_plan_whose_own_shifts_outlast_its_compute_executes_without_a_stall) {
    /* One operator, no weights, no preload: 10 ps of compute and 100 bytes
     * of shifts over a 1e12 B/s link take 100 ps, all of it execution (the
     * breakdown called 90 of it stall, contention with nothing; found by an
     * audit helper) */
    rotor_preload_chip c = {.cores = 1, .sram_bytes = 200, .hbm_bw = 1000000000000, .link_bw = 1000000000000,
                            .sram_blocking = true};
    rotor_preload_plan p = {.time_ps = 10, .space_bytes = 10, .share = 1, .traffic_bytes = 100};
    rotor_preload_op_desc op = {.name = "shifts", .nplans = 1, .plans = &p};
    rotor_preload_model *m = make(&c, &op, 1);
    for (int d = ROTOR_PRELOAD_BASIC; d <= ROTOR_PRELOAD_FULL; d++) {
        rotor_preload_result r = run(m, (rotor_preload_design)d);
        cr_assert_eq(r.latency_ps, 100, "%s", rotor_preload_designs[d].name);
        cr_assert_eq(r.ops[0].stall_ps, 0, "%s", rotor_preload_designs[d].name);
        cr_assert_eq(r.breakdown.stall_ps, 0, "%s", rotor_preload_designs[d].name);
        cr_assert_eq(r.breakdown.execute_ps, 100, "%s", rotor_preload_designs[d].name);
        rotor_preload_result_free(&r);
    }
    rotor_preload_model_free(m);
}

Test(preload, on_a_mesh_shifts_share_the_busiest_link_with_the_edge_ports_preload) {
    /* Two cores, link 1e12 B/s, HBM 1e13 B/s.  Op1's 200 bytes give each
     * core 100 (share 1, one group per core).  All-to-all the preload takes
     * 100 ps, the whole of a core's link.  Behind an edge port that feeds
     * both cores (port load 2) it takes 200 ps: half of each core's link but
     * the whole of the port's path.  Op0 computes 10 ps (non-blocking) and
     * moves no bytes through its own port, but its shifts keep the busiest
     * link busy for `link` ps.  The preload and the shifts share that link
     * half and half (the preload is capped by its tighter share):
     *  - link 0: nothing shared; exe 0 [0, 10], pre 1 [0, 200], exe 1 ends 205;
     *  - link 50: 50 ps of shifts at half rate, exe 0 [0, 100] with 50 of the
     *    preload's 200 done, the other 150 alone: pre 1 ends 250, exe 1 255;
     *  - link 300: the preload's 200 at half rate end at 400 with 200 of the
     *    shifts done, the last 100 alone: exe 0 [0, 500], exe 1 ends 505;
     *  - all-to-all, link 50: the preload needs the whole core link, so the
     *    same halving: exe 0 [0, 100], pre 1 ends 150 (50 + 50 alone). */
    static const struct {
        bool mesh;
        int64_t link, exe0_end, pre1_end, latency;
    } rows[] = {
        {true, 0, 10, 200, 205},
        {true, 50, 100, 250, 255},
        {true, 300, 500, 400, 505},
        {false, 50, 100, 150, 155},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        mesh_table t = {.port = {0, 2, 2}, .shift = {1, 1, 1}};
        rotor_preload_chip c = {.cores = 2, .sram_bytes = 200, .hbm_bw = 10000000000000, .link_bw = 1000000000000};
        if (rows[k].mesh) c.port_load = table_port, c.mesh_ctx = &t;
        rotor_preload_plan p0 = {.time_ps = 10, .space_bytes = 10, .share = 1, .link_bytes = rows[k].link};
        rotor_preload_result r = overlap_run(&c, &p0, 200);
        cr_assert_eq(r.ops[0].exe_end_ps, rows[k].exe0_end, "row %zu", k);
        cr_assert_eq(r.ops[1].pre_end_ps, rows[k].pre1_end, "row %zu", k);
        cr_assert_eq(r.latency_ps, rows[k].latency, "row %zu", k);
        rotor_preload_result_free(&r);
    }
}

Test(preload, distribution_precedes_local_execution) {
    /* §4.5: execute = distribute_data, then local_execute.  2 cores, P = 2,
     * 200 bytes of weights: d = 200 per core; 2 chunks leave 100 to fetch,
     * 100 ps over a 1e12 B/s link: the execution takes 50 + 100 = 150. */
    rotor_preload_chip c = {.cores = 2, .sram_bytes = 1000, .hbm_bw = 1000000000000, .link_bw = 1000000000000};
    static const rotor_preload_plan p = {.time_ps = 50, .space_bytes = 200, .share = 2};
    rotor_preload_op_desc op = {.hbm_bytes = 200, .nplans = 1, .plans = &p};
    rotor_preload_model *m = make(&c, &op, 1);
    rotor_preload_choice ch = {0, 1, 0};
    rotor_preload_result r = eval(m, &ch, NULL);
    /* preload: max(200 ps of HBM, 100 bytes = 100 ps of link) = 200 */
    cr_assert_eq(r.ops[0].chunks, 2);
    ASSERT_TIMES(r.ops[0], ANY_PS, ANY_PS, 200, ANY_PS);
    cr_assert_eq(r.latency_ps, 350);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
}

/* ---- designs (§6.1) ---------------------------------------------------------------- */

Test(preload, designs_are_named_basic_static_dyn_full_ideal_roofline) {
    const char *names[] = {"basic", "static", "dyn", "full", "ideal", "roofline"};
    for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++) {
        cr_assert_str_eq(rotor_preload_designs[d].name, names[d]);
        cr_assert_eq((int)rotor_preload_designs[d].design, d);
        rotor_preload_design got;
        cr_assert_eq(rotor_preload_design_parse(names[d], &got, NULL), ROTOR_OK);
        cr_assert_eq((int)got, d);
    }
    rotor_error err;
    rotor_preload_design got;
    cr_assert_eq(rotor_preload_design_parse("elk", &got, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "design: unknown 'elk'");
}

Test(preload, basic_preloads_only_the_next_operator_with_the_fastest_plans) {
    /* Figure 10's model: fastest plans are A fast (85 B), B, C.  Next to A's
     * 85 bytes only 15 are left, too few for B's 25: p_A = 0.  C's 30 fit
     * next to B's 50: p_B = 1.  Forwards: pre A [0,10], exe A [10,20], pre B
     * [20,45], exe B [45,85], pre C [45,75], exe C [85,105]. */
    rotor_preload_model *m = fig10();
    rotor_preload_result r = run(m, ROTOR_PRELOAD_BASIC);
    assert_preload_numbers(&r, 2, (int[]){0, 1});
    cr_assert_eq(r.ops[0].plan, 0);
    ASSERT_TIMES(r.ops[2], 45, ANY_PS, ANY_PS, ANY_PS);
    cr_assert_eq(r.latency_ps, 105);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
}

Test(preload, static_keeps_one_split_for_the_whole_model) {
    /* Figure 10's model.  Splits are the plans' spaces 85, 60, 50, 30, 20
     * (those >= 50, B's only plan): X = 85 leaves 15 for preloads (none fit:
     * every p = 0): 10 + 10 + 25 + 40 + 30 + 20 = 135.  X = 60: A mid, 40
     * left: p_A = 1 (B's 25), p_B = 1 (C's 30): pre A [0,10], pre B [10,35],
     * exe A [10,25], pre C [35,65], exe B [35,75], exe C [75,95] = 95.
     * X = 50: A slow (30 ps), 50 left, B and C together need 55: p_A = 1;
     * exe A [10,40], pre C [40,70], exe B [40,80], exe C [80,100] = 100. */
    rotor_preload_model *m = fig10();
    rotor_preload_result r = run(m, ROTOR_PRELOAD_STATIC);
    cr_assert_eq(r.exec_cap_bytes, 60);
    cr_assert_eq(r.latency_ps, 95);
    for (int i = 0; i < 3; i++) {
        cr_assert_leq(r.ops[i].exec_space, r.exec_cap_bytes);
        cr_assert_leq(r.ops[i].resident_bytes, 100 - r.exec_cap_bytes);
    }
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
}

Test(preload, static_with_one_split_to_try_takes_the_largest) {
    /* max_splits = 1 of Figure 10's three spaces (85, 60, 50): X = 85, 135 ps
     * (above); it divided by zero, spreading one try over three */
    rotor_preload_model *m = fig10();
    rotor_preload_options o = {.max_splits = 1};
    rotor_preload_result r;
    rotor_error err;
    cr_assert_eq(rotor_preload_schedule(m, ROTOR_PRELOAD_STATIC, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.exec_cap_bytes, 85);
    cr_assert_eq(r.latency_ps, 135);
    rotor_preload_result_free(&r);
    cr_assert_eq(rotor_preload_schedule(m, ROTOR_PRELOAD_FULL, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
}

/* ---- properties over random models ------------------------------------------------- */

static int64_t rnd(uint64_t *x, int64_t lo, int64_t hi) { return lo + (int64_t)(next_rand(x) % (uint64_t)(hi - lo + 1)); }

typedef struct rmodel {
    rotor_preload_chip chip;
    int n;
    rotor_preload_op_desc ops[24];
    rotor_preload_plan plans[24][4];
} rmodel;

static void random_op(uint64_t *x, const rotor_preload_chip *c, rotor_preload_op_desc *d, rotor_preload_plan *p) {
    int64_t w = rnd(x, 0, 3) == 0 ? 0 : rnd(x, 1, c->sram_bytes * c->cores / 3);
    d->hbm_bytes = w;
    d->nplans = (int)rnd(x, 1, 4);
    d->plans = p;
    for (int k = 0; k < d->nplans; k++) {
        int64_t share = k == 0 ? 1 : rnd(x, 1, c->cores);
        int64_t dd = (w * share + c->cores - 1) / c->cores;
        if (dd > c->sram_bytes) share = 1, dd = (w + c->cores - 1) / c->cores;
        p[k].share = share;
        p[k].space_bytes = dd + rnd(x, 1, c->sram_bytes / 3);
        if (p[k].space_bytes > c->sram_bytes) p[k].space_bytes = c->sram_bytes;
        p[k].time_ps = rnd(x, 1, 4000) * (1 + (c->sram_bytes - p[k].space_bytes) / 64);
        p[k].traffic_bytes = rnd(x, 0, dd);
    }
}

/* N ops with two identical layers of `len` ops between unlayered ops. */
static void random_model(uint64_t seed, rmodel *r) {
    uint64_t x = seed;
    memset(r, 0, sizeof *r);
    r->chip = (rotor_preload_chip){.cores = rnd(&x, 1, 8), .sram_bytes = rnd(&x, 600, 4000),
                                   .hbm_bw = rnd(&x, 1, 20) * 100000000000, .link_bw = rnd(&x, 1, 20) * 10000000000,
                                   .sram_blocking = rnd(&x, 0, 1)};
    int pre = (int)rnd(&x, 0, 3), len = (int)rnd(&x, 2, 5), post = (int)rnd(&x, 0, 3);
    int n = 0;
    for (int i = 0; i < pre; i++, n++) random_op(&x, &r->chip, &r->ops[n], r->plans[n]);
    for (int i = 0; i < len; i++, n++) {
        random_op(&x, &r->chip, &r->ops[n], r->plans[n]);
        r->ops[n].layer = 1;
    }
    r->ops[pre].layer_begin = true;
    for (int i = 0; i < len; i++, n++) {
        r->ops[n] = r->ops[pre + i];
        memcpy(r->plans[n], r->plans[pre + i], sizeof r->plans[n]);
        r->ops[n].plans = r->plans[n];
    }
    for (int i = 0; i < post; i++, n++) random_op(&x, &r->chip, &r->ops[n], r->plans[n]);
    r->n = n;
}

/* Every rule of §4.5 and the SRAM, recomputed from the result alone. */
static void check_schedule(const rotor_preload_model *m, const rotor_preload_result *r, bool ideal, uint64_t seed) {
    int n = r->nops;
    int64_t sram = rotor_preload_model_chip(m)->sram_bytes;
    for (int k = 1; k < n; k++) /* preloads one at a time, in order */
        cr_assert_geq(r->ops[r->order[k]].pre_start_ps, r->ops[r->order[k - 1]].pre_end_ps, "seed %llu",
                      (unsigned long long)seed);
    for (int i = 0; i < n; i++) {
        const rotor_preload_op_result *o = &r->ops[i];
        cr_assert_geq(o->exe_start_ps, o->pre_end_ps, "seed %llu: op %d before its preload", (unsigned long long)seed, i);
        if (i > 0) cr_assert_geq(o->exe_start_ps, r->ops[i - 1].exe_end_ps, "seed %llu", (unsigned long long)seed);
        int q = i + 1 + o->preload_number;
        int64_t resident = 0;
        for (int j = i + 1; j < n; j++) {
            const rotor_preload_op_result *y = &r->ops[j];
            if (y->preload_pos >= q) {
                /* issued after execute(i): starts after it ends */
                cr_assert_geq(y->pre_start_ps, o->exe_end_ps, "seed %llu", (unsigned long long)seed);
                continue;
            }
            int ns;
            const rotor_preload_state *s = rotor_preload_model_states(m, j, y->plan, &ns);
            cr_assert_not_null(s);
            cr_assert_lt(y->state, ns);
            resident += s[y->state].space_bytes;
        }
        if (!ideal) {
            cr_assert_eq(resident, o->resident_bytes, "seed %llu op %d", (unsigned long long)seed, i);
            cr_assert_leq(o->exec_space + resident, sram, "seed %llu: op %d overflows the SRAM",
                          (unsigned long long)seed, i);
        } else {
            cr_assert_leq(o->resident_bytes, sram, "seed %llu", (unsigned long long)seed);
        }
    }
    cr_assert_eq(r->latency_ps, r->ops[n - 1].exe_end_ps);
    cr_assert_eq(bd_sum(&r->breakdown), r->latency_ps, "seed %llu", (unsigned long long)seed);
    cr_assert_eq(r->breakdown.idle_ps, 0, "seed %llu", (unsigned long long)seed);
}

#define NSEEDS 300

Test(preload, no_schedule_of_any_design_overflows_the_sram) {
    for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
        rmodel rm;
        random_model(seed, &rm);
        rotor_preload_model *m;
        rotor_error err;
        cr_assert_eq(rotor_preload_model_create(&rm.chip, rm.ops, rm.n, &m, &err), ROTOR_OK, "seed %llu: %s",
                     (unsigned long long)seed, err.msg);
        for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++) {
            rotor_preload_result r;
            cr_assert_eq(rotor_preload_schedule(m, (rotor_preload_design)d, NULL, &r, &err), ROTOR_OK,
                         "seed %llu %s: %s", (unsigned long long)seed, rotor_preload_designs[d].name, err.msg);
            check_schedule(m, &r, d == ROTOR_PRELOAD_IDEAL || d == ROTOR_PRELOAD_ROOFLINE, seed);
            rotor_preload_result_free(&r);
        }
        rotor_preload_model_free(m);
    }
}

Test(preload, ideal_bounds_every_design_and_full_never_loses_to_dyn) {
    /* full <= dyn: dyn's order (the execution order) is full's first
     * candidate, scheduled the same way, and full keeps the best.
     * ideal <= any: every design's schedule is one the ideal machine can run
     * (its SRAM holds the preloads alone, at no more than their footprint),
     * with every duration at most as long, and ideal takes the most preloads
     * ahead on every order full tries.  A real design's preload writes at
     * least the smallest footprint into a blocking SRAM, as Ideal's does, so
     * that contention does not break the bound.  roofline <= ideal: the same
     * schedules with the SRAM access contention taken away.  Nothing orders
     * basic, static and dyn: each is a heuristic over a different space. */
    int full_wins = 0;
    for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
        rmodel rm;
        random_model(seed, &rm);
        rotor_preload_model *m;
        rotor_error err;
        cr_assert_eq(rotor_preload_model_create(&rm.chip, rm.ops, rm.n, &m, &err), ROTOR_OK, "%s", err.msg);
        int64_t lat[ROTOR_PRELOAD_NDESIGNS];
        for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++) {
            rotor_preload_result r = run(m, (rotor_preload_design)d);
            lat[d] = r.latency_ps;
            rotor_preload_result_free(&r);
        }
        cr_assert_leq(lat[ROTOR_PRELOAD_FULL], lat[ROTOR_PRELOAD_DYN], "seed %llu", (unsigned long long)seed);
        cr_assert_leq(lat[ROTOR_PRELOAD_ROOFLINE], lat[ROTOR_PRELOAD_IDEAL], "seed %llu", (unsigned long long)seed);
        for (int d = 0; d < ROTOR_PRELOAD_IDEAL; d++)
            cr_assert_leq(lat[ROTOR_PRELOAD_IDEAL], lat[d], "seed %llu: ideal %lld > %s %lld",
                          (unsigned long long)seed, (long long)lat[ROTOR_PRELOAD_IDEAL], rotor_preload_designs[d].name,
                          (long long)lat[d]);
        full_wins += lat[ROTOR_PRELOAD_FULL] < lat[ROTOR_PRELOAD_DYN];
        rotor_preload_model_free(m);
    }
    cr_assert_gt(full_wins, 0, "reordering never helped on %d models", NSEEDS);
}

Test(preload, refined_schedules_never_lose_and_report_their_own_forward_time) {
    /* The refinement keeps a move only when the forward latency falls, so
     * dyn <= Elk's induction alone; dyn also times the best static split, so
     * dyn <= static, and equal when it reports that split's schedule; full
     * polishes the in-order schedule first, so full <= dyn; and the latency
     * reported is the forward timing of the reported choices and order. */
    int improved = 0;
    for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
        rmodel rm;
        random_model(seed, &rm);
        rotor_preload_model *m = make(&rm.chip, rm.ops, rm.n);
        rotor_preload_result elk = run_elk(m, ROTOR_PRELOAD_DYN), dyn = run(m, ROTOR_PRELOAD_DYN),
                             full = run(m, ROTOR_PRELOAD_FULL);
        cr_assert_leq(dyn.latency_ps, elk.latency_ps, "seed %llu", (unsigned long long)seed);
        cr_assert_leq(full.latency_ps, dyn.latency_ps, "seed %llu", (unsigned long long)seed);
        if (dyn.latency_ps < elk.latency_ps)
            cr_assert(dyn.refine_moves > 0 || dyn.static_kept, "seed %llu", (unsigned long long)seed);
        if (dyn.refine_moves == 0 && !dyn.static_kept)
            cr_assert_eq(dyn.latency_ps, elk.latency_ps, "seed %llu", (unsigned long long)seed);
        rotor_preload_result st = run(m, ROTOR_PRELOAD_STATIC);
        cr_assert_leq(dyn.latency_ps, st.latency_ps, "seed %llu: dyn is never slower than static", (unsigned long long)seed);
        if (dyn.static_kept) cr_assert_eq(dyn.latency_ps, st.latency_ps, "seed %llu", (unsigned long long)seed);
        rotor_preload_result_free(&st);
        improved += dyn.refine_moves > 0 && dyn.latency_ps < elk.latency_ps;
        rotor_preload_choice ch[24];
        for (int i = 0; i < rm.n; i++)
            ch[i] = (rotor_preload_choice){full.ops[i].plan, full.ops[i].state, full.ops[i].preload_number};
        rotor_preload_result again = eval(m, ch, full.order);
        cr_assert_eq(again.latency_ps, full.latency_ps, "seed %llu", (unsigned long long)seed);
        rotor_preload_result_free(&again);
        rotor_preload_result_free(&elk);
        rotor_preload_result_free(&dyn);
        rotor_preload_result_free(&full);
        rotor_preload_model_free(m);
    }
    cr_assert_gt(improved, 0, "the refinement improved none of %d models", NSEEDS);
}

Test(preload, the_same_input_gives_the_same_schedule) {
    rmodel rm;
    random_model(77, &rm);
    rotor_preload_model *m = make(&rm.chip, rm.ops, rm.n);
    rotor_preload_result a = run(m, ROTOR_PRELOAD_FULL), b = run(m, ROTOR_PRELOAD_FULL);
    cr_assert_eq(a.latency_ps, b.latency_ps);
    cr_assert_eq(memcmp(a.ops, b.ops, sizeof *a.ops * (size_t)a.nops), 0);
    cr_assert_eq(memcmp(a.order, b.order, sizeof *a.order * (size_t)a.nops), 0);
    cr_assert_eq(a.alloc_calls, b.alloc_calls);
    rotor_preload_result_free(&a);
    rotor_preload_result_free(&b);
    rotor_preload_model_free(m);
}

/* ---- bad input ------------------------------------------------------------------------ */

static void refuse(const rotor_preload_chip *c, const rotor_preload_op_desc *ops, int n, rotor_status want,
                   const char *text) {
    rotor_preload_model *m = (rotor_preload_model *)1;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_preload_model_create(c, ops, n, &m, &err), want, "expected refusal with \"%s\", got \"%s\"",
                 text, err.msg);
    cr_assert_null(m);
    assert_msg_has(err, text);
}

Test(preload, bad_input_is_refused_with_a_message_naming_the_field) {
    rotor_preload_plan p = {.time_ps = 10, .space_bytes = 100, .share = 1};
    rotor_preload_op_desc op = {.name = "mm", .hbm_bytes = 50, .nplans = 1, .plans = &p};
    rotor_preload_chip ok = unit_chip(1000), c;
    c = ok, c.cores = 0;
    refuse(&c, &op, 1, ROTOR_ERR_INPUT, "chip: cores: expected a positive count, got 0");
    c = ok, c.sram_bytes = -1;
    refuse(&c, &op, 1, ROTOR_ERR_INPUT, "chip: sram_bytes");
    c = ok, c.hbm_bw = 0;
    refuse(&c, &op, 1, ROTOR_ERR_INPUT, "chip: hbm_bw");
    c = ok, c.link_bw = 0;
    refuse(&c, &op, 1, ROTOR_ERR_INPUT, "chip: link_bw");
    refuse(&ok, &op, 0, ROTOR_ERR_INPUT, "model: nops");

    rotor_preload_op_desc o = op;
    o.hbm_bytes = -5;
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): hbm_bytes: expected a size >= 0, got -5");
    o = op, o.nplans = 0;
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): nplans");
    o = op, o.layer = -2;
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): layer");

    rotor_preload_plan q = p;
    o = op, o.plans = &q;
    q.time_ps = 0;
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): plan 0: time_ps");
    q = p, q.space_bytes = 0;
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): plan 0: space_bytes: expected a positive size");
    q = p, q.share = 2;
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): plan 0: share: expected 1..1 (the cores), got 2");
    q = p, q.traffic_bytes = -1;
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): plan 0: traffic_bytes");
    q = p, q.space_bytes = 40; /* the 50 bytes of weights do not fit their own plan */
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): plan 0: space_bytes: 40 is less than the 50 bytes");
    q = p, q.space_bytes = 2000;
    refuse(&ok, &o, 1, ROTOR_ERR_NOFIT, "op 0 (mm): no plan fits in the 1000 bytes of SRAM per core");
    q = p, q.time_ps = INT64_MAX / 2;
    refuse(&ok, &o, 1, ROTOR_ERR_INPUT, "op 0 (mm): times overflow");

    /* identical layers must be identical */
    rotor_preload_op_desc l[5] = {op, op, op, op, op};
    for (int i = 0; i < 5; i++) l[i].layer = 3;
    l[2].layer_begin = true;
    refuse(&ok, l, 5, ROTOR_ERR_INPUT, "op 2 (mm): layer 3: this instance has 3 operators, the first (op 0) has 2");
    l[4].layer = 0;
    l[3].hbm_bytes = 60;
    refuse(&ok, l, 5, ROTOR_ERR_INPUT, "op 3 (mm): layer 3: hbm_bytes 60 differs from 50");
}

Test(preload, a_schedule_that_breaks_a_rule_is_refused) {
    rotor_preload_model *m = fig10();
    rotor_preload_result r;
    rotor_error err;
    rotor_preload_choice c[3] = {{1, 0, 1}, {0, 0, 1}, {0, 0, 1}};
    cr_assert_eq(rotor_preload_evaluate(m, c, NULL, ROTOR_PRELOAD_DYN, &r, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 2 (C): preload_number: 1 reaches past the last operator");
    rotor_preload_choice d[3] = {{1, 0, 2}, {0, 0, 0}, {0, 0, 0}};
    cr_assert_eq(rotor_preload_evaluate(m, d, NULL, ROTOR_PRELOAD_DYN, &r, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 1 (B): preload_number: 0 issues fewer preloads than op 0");
    int order[3] = {1, 0, 2};
    rotor_preload_choice e[3] = {{1, 0, 0}, {0, 0, 1}, {0, 0, 0}};
    cr_assert_eq(rotor_preload_evaluate(m, e, order, ROTOR_PRELOAD_DYN, &r, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 0 (A): preload_number: 0 issues 1 preloads before it executes, but the preload order needs 2");
    int dup[3] = {0, 0, 2};
    cr_assert_eq(rotor_preload_evaluate(m, e, dup, ROTOR_PRELOAD_DYN, &r, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "order: op 0 appears at positions 0 and 1");
    rotor_preload_choice f[3] = {{3, 0, 1}, {0, 0, 1}, {0, 0, 0}};
    cr_assert_eq(rotor_preload_evaluate(m, f, NULL, ROTOR_PRELOAD_DYN, &r, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 0 (A): plan: 3");
    rotor_preload_model_free(m);
}

Test(preload, refinement_undoes_a_preload_the_estimate_thought_free) {
    /* 2 cores, 70 bytes of SRAM, HBM and link 1e12 B/s (1 byte = 1 ps),
     * non-blocking.  Op0: 20 weight bytes, P = 2 (d = 20), 5 ps, 40 bytes of
     * shifts.  Op1: no weights, 35 ps.  Op2: 40 weight bytes, P = 2 (d = 40),
     * 5 ps, 20 bytes of shifts.  Preloads: op0 20 ps, op2 40 ps, both
     * link-bound.
     * Elk's induction charges an execution only with the preload of the next
     * operator (op1: 0 bytes), so preloading op2 during op0 (p_0 = 2) looks
     * free: pre 0 [0,20]; exe 0 and pre 2 share the link from 20, 40 bytes
     * each at half rate, both end at 100; exe 1 [100,135], exe 2 [135,155].
     * The refinement tries p_0 = 1: exe 0 alone [20,60]; op2's preload is
     * issued before op1 executes and runs alone beside op1's compute
     * [60,100]; exe 1 [60,95], exe 2 [100,120]: 120 ps, one move. */
    rotor_preload_chip c = {.cores = 2, .sram_bytes = 70, .hbm_bw = 1000000000000, .link_bw = 1000000000000};
    static const rotor_preload_plan p0 = {.time_ps = 5, .space_bytes = 30, .share = 2, .traffic_bytes = 40};
    static const rotor_preload_plan p1 = {.time_ps = 35, .space_bytes = 30, .share = 1};
    static const rotor_preload_plan p2 = {.time_ps = 5, .space_bytes = 50, .share = 2, .traffic_bytes = 20};
    rotor_preload_op_desc ops[3] = {{.hbm_bytes = 20, .nplans = 1, .plans = &p0},
                                    {.hbm_bytes = 0, .nplans = 1, .plans = &p1},
                                    {.hbm_bytes = 40, .nplans = 1, .plans = &p2}};
    rotor_preload_model *m = make(&c, ops, 3);
    rotor_preload_result elk = run_elk(m, ROTOR_PRELOAD_DYN), dyn = run(m, ROTOR_PRELOAD_DYN);
    cr_assert_eq(elk.ops[0].preload_number, 2);
    ASSERT_TIMES(elk.ops[0], ANY_PS, ANY_PS, ANY_PS, 100);
    ASSERT_TIMES(elk.ops[2], ANY_PS, 100, ANY_PS, ANY_PS);
    cr_assert_eq(elk.latency_ps, 155);
    cr_assert_eq(dyn.ops[0].preload_number, 1);
    ASSERT_TIMES(dyn.ops[0], ANY_PS, ANY_PS, ANY_PS, 60);
    ASSERT_TIMES(dyn.ops[2], 60, 100, ANY_PS, ANY_PS);
    cr_assert_eq(dyn.latency_ps, 120);
    cr_assert_eq(dyn.refine_moves, 1);
    /* the reported time is the forward timing of the reported choices */
    rotor_preload_choice ch[3];
    for (int i = 0; i < 3; i++) ch[i] = (rotor_preload_choice){dyn.ops[i].plan, dyn.ops[i].state, dyn.ops[i].preload_number};
    rotor_preload_result again = eval(m, ch, dyn.order);
    cr_assert_eq(again.latency_ps, 120);
    /* full starts from the same polished schedule, so it is never worse */
    rotor_preload_result full = run(m, ROTOR_PRELOAD_FULL);
    cr_assert_leq(full.latency_ps, dyn.latency_ps);
    rotor_preload_result_free(&again);
    rotor_preload_result_free(&full);
    rotor_preload_result_free(&elk);
    rotor_preload_result_free(&dyn);
    rotor_preload_model_free(m);
}
