/* test_wafersim.c — a wafer-scale program on the simulator (issue 41,
 * deliverable 5; docs/simulator.md, "Streaming a long reduction"): the
 * stream's stop before a range of tasks finishes (rotor_sim_advance_before)
 * and its retirement of the finished prefix (rotor_sim_retire_finished),
 * each against the whole run to the picosecond; and a replay whose
 * reduction is added and run round by round, which equals the replay that
 * adds it group by group in every number, on all-to-all and on a mesh. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/compile/program.h"
#include "rotor/op/cost.h"
#include "rotor/sim/replay.h"
#include "rotor/sim/sim.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* ipu-mk2 cut to `cores` cores, on a w x h mesh when w > 0: 5.5 GB/s links,
 * no latency, so 1,100 B take 200,000 ps. */
static rotor_chip chip_of(int64_t cores, int64_t w, int64_t h) {
    rotor_chip c;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    rotor_error err = {{0}};
    char set[64];
    snprintf(set, sizeof set, "cores_per_chip=%lld", (long long)cores);
    cr_assert_eq(rotor_chip_set(&c, set, &err), ROTOR_OK, "%s", err.msg);
    if (w > 0) {
        cr_assert_eq(rotor_chip_set(&c, "topology=mesh", &err), ROTOR_OK, "%s", err.msg);
        snprintf(set, sizeof set, "mesh_width=%lld", (long long)w);
        cr_assert_eq(rotor_chip_set(&c, set, &err), ROTOR_OK, "%s", err.msg);
        snprintf(set, sizeof set, "mesh_height=%lld", (long long)h);
        cr_assert_eq(rotor_chip_set(&c, set, &err), ROTOR_OK, "%s", err.msg);
    }
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

static int64_t xfer(rotor_sim *s, int64_t src, int64_t dst, int64_t bytes, int64_t dep) {
    rotor_error err = {{0}};
    int64_t id, deps[1] = {dep};
    rotor_sim_transfer x = {.src = src, .dst = dst, .bytes = bytes, .category = ROTOR_SIM_COMM, .op = -1,
                            .deps = deps, .ndeps = dep >= 0};
    cr_assert_eq(rotor_sim_add_transfer(s, &x, &id, &err), ROTOR_OK, "%s", err.msg);
    return id;
}

/* Two rounds of two transfers on 4 all-to-all cores, each transfer of round
 * 2 waiting for one of round 1, then a fifth task: 0->1 1,100 B (200,000
 * ps) and 2->3 2,200 B (400,000 ps); 1->2 after the first and 3->0 after
 * the second, 1,100 B each; 0->1 after 1->2.  The stream adds each round
 * only after advancing to just before the previous one's first finish. */
Test(wafersim, advancing_before_a_round_finishes_lets_the_next_round_join_and_equals_the_whole_run) {
    rotor_chip chip = chip_of(4, 0, 0);
    rotor_error err = {{0}};
    rotor_sim *whole, *s;
    cr_assert_eq(rotor_sim_create(&chip, &whole, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_sim_create(&chip, &s, &err), ROTOR_OK, "%s", err.msg);
    int64_t a = xfer(whole, 0, 1, 1100, -1), b = xfer(whole, 2, 3, 2200, -1);
    int64_t c = xfer(whole, 1, 2, 1100, a);
    xfer(whole, 3, 0, 1100, b);
    xfer(whole, 0, 1, 1100, c);
    rotor_sim_stats ws, ss;
    cr_assert_eq(rotor_sim_run(whole, &ws, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(ws.makespan_ps, 600000, "3->0 ends at 400,000 + 200,000 ps");

    cr_assert_eq(rotor_sim_advance_before(s, 0, 0, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: advance before: not streaming");
    cr_assert_eq(rotor_sim_stream_begin(s, &err), ROTOR_OK, "%s", err.msg);
    a = xfer(s, 0, 1, 1100, -1);
    b = xfer(s, 2, 3, 2200, -1);
    cr_assert_eq(rotor_sim_advance_before(s, a, b + 2, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: advance before: tasks 0..2 are not kept (tasks 0..1)");
    cr_assert_eq(rotor_sim_advance_before(s, a, b + 1, &err), ROTOR_OK, "%s", err.msg);
    /* both started at 0; neither has finished */
    rotor_sim_timing t;
    cr_assert_eq(rotor_sim_task_timing(s, a, &t, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "task 0 has not finished yet");
    c = xfer(s, 1, 2, 1100, a);
    int64_t d = xfer(s, 3, 0, 1100, b);
    /* stops before 1->2 finishes at 400,000 ps: 0->1 and 2->3 are done */
    cr_assert_eq(rotor_sim_advance_before(s, c, d + 1, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_sim_task_timing(s, b, &t, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(t.end_ps, 400000);
    cr_assert_eq(rotor_sim_task_timing(s, c, &t, &err), ROTOR_ERR_INPUT, "1->2 is held at its finish");
    /* the finished two are as many as the two kept after them: dropped */
    cr_assert_eq(rotor_sim_retire_finished(s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_sim_task_timing(s, a, &t, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "task 0 was retired (tasks kept: 2..3)");
    xfer(s, 0, 1, 1100, c);
    cr_assert_eq(rotor_sim_stream_end(s, &ss, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(memcmp(&ws, &ss, sizeof ws), 0, "the stream's statistics are the whole run's");
    rotor_sim_free(whole);
    rotor_sim_free(s);
}

/* A one-operator program: C[m,n] += A[m,k] * B[k,n] at m=16, k=64, n=16
 * under F_op fop, no setup. */
static void reduce_program(rotor_program *p, const rotor_chip *chip, int64_t fm, int64_t fk, int64_t fn) {
    memset(p, 0, sizeof *p);
    snprintf(p->model, sizeof p->model, "reduce");
    snprintf(p->chip, sizeof p->chip, "%.*s", (int)sizeof p->chip - 1, chip->name);
    p->cores = rotor_chip_cores(chip);
    p->nops = 1;
    p->ops = calloc(1, sizeof *p->ops);
    rotor_program_op *o = &p->ops[0];
    o->name = strdup("mm");
    snprintf(o->type, sizeof o->type, "MatMul");
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_make("C[m,n] += A[m,k] * B[k,n]", "m=16,k=64,n=16", &o->expr, &err), ROTOR_OK, "%s",
                 err.msg);
    rotor_plan_init(&o->expr, &o->active);
    o->active.fop[rotor_expr_axis(&o->expr, "m")] = fm;
    o->active.fop[rotor_expr_axis(&o->expr, "k")] = fk;
    o->active.fop[rotor_expr_axis(&o->expr, "n")] = fn;
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), &o->expr, chip, &o->active, &o->active_info,
                                 &o->active_cost, &err),
                 ROTOR_OK, "%s", err.msg);
    o->exec_s = o->active_cost.total;
    p->total_s = o->exec_s;
}

/* The program streamed with reduction_hold `hold` (0: the default); its
 * trace's transfers as (src, dst) pairs in the order written, into pairs. */
static rotor_replay_result replay_with(const rotor_program *p, const rotor_chip *chip, int64_t hold, int64_t *pairs,
                                       int npairs) {
    char *text = NULL;
    size_t len = 0;
    FILE *tf = open_memstream(&text, &len);
    rotor_replay_options opt = {.trace = tf, .reduction_hold = hold};
    rotor_replay_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_replay(p, chip, &opt, &r, NULL, &err), ROTOR_OK, "%s", err.msg);
    fclose(tf);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "the trace is JSON");
    int n = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "traceEvents")) {
        const cJSON *args = cJSON_GetObjectItem(ev, "args"), *src = args ? cJSON_GetObjectItem(args, "src") : NULL;
        if (!src || n >= npairs) continue;
        pairs[2 * n] = (int64_t)src->valuedouble;
        pairs[2 * n + 1] = (int64_t)cJSON_GetObjectItem(args, "dst")->valuedouble;
        n++;
    }
    cr_assert_eq(n, npairs, "%d transfers in the trace", n);
    cJSON_Delete(root);
    free(text);
    return r;
}

/* Whether the first 2R transfers written are the first group's round 1 then
 * the second group's (round by round), rather than the first group's rounds
 * 1 and 2 (the same R pairs twice: group by group). */
static bool by_rounds(const int64_t *pairs, int64_t R) {
    return memcmp(pairs, pairs + 2 * R, (size_t)(2 * R) * sizeof *pairs) != 0;
}

/* F_op k=8, n=4 on 32 cores: 4 groups of R = 8 cores hold copies of one
 * output partition (16 x 4 x 2 B = 128 B), 7 rounds of 16 B each, 224
 * transfers.  On all-to-all the groups share no port; on an 8 x 4 mesh k
 * lies along X, each group a row, its ring folded (every hop at most 2
 * links, each link used once a round).  With a hold of 1 transfer the
 * reduction goes round by round (the trace shows it); every number is the
 * group-by-group replay's.  A round of 16 B at 5.5 GB/s is 2,909 ps
 * (2,909.09 rounded), 7 rounds 20,363 ps, with no wait. */
Test(wafersim, a_reduction_streamed_round_by_round_equals_it_group_by_group_on_all_to_all_and_a_mesh) {
    rotor_chip chips[2] = {chip_of(32, 0, 0), chip_of(32, 8, 4)};
    for (int k = 0; k < 2; k++) {
        rotor_program p;
        reduce_program(&p, &chips[k], 1, 8, 4);
        cr_assert_eq(p.ops[0].active_info.rings[0], 8);
        int64_t ga[2 * 224], ro[2 * 224];
        rotor_replay_result a = replay_with(&p, &chips[k], 0, ga, 224), b = replay_with(&p, &chips[k], 1, ro, 224);
        cr_assert(!by_rounds(ga, 8), "chip %d: the default adds 224 transfers group by group", k);
        cr_assert(by_rounds(ro, 8), "chip %d: a hold of 1 adds them round by round", k);
        cr_assert_eq(memcmp(&a.stats, &b.stats, sizeof a.stats), 0, "chip %d: the statistics agree", k);
        const rotor_replay_op *x = &a.ops[0], *y = &b.ops[0];
        cr_assert_eq(x->simulated_s, y->simulated_s);
        cr_assert_eq(x->simulated_setup_s, y->simulated_setup_s);
        cr_assert_eq(x->simulated_main_s, y->simulated_main_s);
        cr_assert_eq(x->simulated_reduction_s, y->simulated_reduction_s);
        cr_assert_eq(x->wait_s, y->wait_s);
        cr_assert_eq(x->tasks, y->tasks);
        cr_assert_eq(a.stats.tasks, 32 + 224 + 1, "a compute task a core, the reduction, the barrier");
        cr_assert_eq(llround(x->simulated_reduction_s * 1e12), 20363, "chip %d: %.15g s", k,
                     x->simulated_reduction_s);
        cr_assert_eq(x->wait_s, 0);
        rotor_replay_result_free(&a);
        rotor_replay_result_free(&b);
        rotor_program_free(&p);
    }
}

/* Rings that share a resource stay group by group: on two all-to-all chips
 * of 4 cores (the inter-chip pool at 5.5 GB/s), F_op k=4, n=2 makes groups
 * {0, 2, 4, 6} and {1, 3, 5, 7}, whose rings both cross the chips and
 * contend for the pool.  Round by round would change which claims it
 * first, so a hold of 1 adds them group by group too: the trace's order
 * and every number are the default's (reduction 139,632 ps, measured, with
 * waits). */
Test(wafersim, rings_that_share_a_resource_stay_group_by_group) {
    rotor_chip c = chip_of(4, 0, 0);
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_set(&c, "chips=2", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&c, "interchip_gbps=5.5", &err), ROTOR_OK, "%s", err.msg);
    rotor_program p;
    reduce_program(&p, &c, 1, 4, 2);
    int64_t ga[2 * 24], ro[2 * 24];
    rotor_replay_result a = replay_with(&p, &c, 0, ga, 24), b = replay_with(&p, &c, 1, ro, 24);
    cr_assert_eq(ga[0], 0);
    cr_assert_eq(ga[1], 2, "group {0, 2, 4, 6}");
    cr_assert_eq(memcmp(ga, ro, sizeof ga), 0, "the same order");
    cr_assert_eq(memcmp(&a.stats, &b.stats, sizeof a.stats), 0);
    cr_assert_gt(a.stats.stall_ps, 0, "the groups contend");
    cr_assert_eq(llround(a.ops[0].simulated_reduction_s * 1e12), 139632, "%.15g", a.ops[0].simulated_reduction_s);
    rotor_replay_result_free(&a);
    rotor_replay_result_free(&b);
    rotor_program_free(&p);
}
