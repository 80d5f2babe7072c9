/* test_replay.c — replaying programs on the simulator (src/sim/replay.c,
 * docs/simulator.md "Replay"): hand-computed single operators, the 1%
 * agreement of model and simulation on contention-free single operators
 * (issue "simulator", Model vs. simulation), bytes conserved over a compiled
 * model, the mesh, the trace and bad input; and HBM schedules (Elk) replayed
 * with their preloads: hand-computed picoseconds, bytes conserved, the 3%
 * agreement with the analytical timing, errors naming the operator. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "san.h"
#include "rotor/compile/compile.h"
#include "rotor/op/cost.h"
#include "rotor/op/handoff.h"
#include "rotor/op/place.h"
#include "rotor/model/group.h"
#include "rotor/compile/program.h"
#include "rotor/compile/segment.h"
#include "rotor/hbm/schedreplay.h"
#include "rotor/sim/replay.h"
#include "rotor/hbm/schedule.h"
#include "rotor/op/search.h"
#include "rotor/model/zoo.h"
#include "rotor/pipeline/pipeline.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

static const char *MATMUL = "C[m,n] += A[m,k] * B[k,n]";

/* A 4-core chip whose numbers make every duration a whole number of ps:
 * R_mm = 4.096e12 / 4 = 1.024e12 FLOP/s per core, beta = 2.56e9 B/s. */
static rotor_chip tiny(double latency_ns) {
    rotor_chip c;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    char lat[64];
    snprintf(lat, sizeof lat, "link_latency_ns=%g", latency_ns);
    const char *sets[] = {"cores_per_chip=4", "matrix_tflops=4.096", "link_gbps=2.56", lat};
    rotor_error err;
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        cr_assert_eq(rotor_chip_set(&c, sets[i], &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

/* A one-operator program running plan pl of (text, dims) on chip. */
static void one_op(rotor_program *p, const rotor_chip *chip, const char *text, const char *dims,
                   const rotor_plan *pl, int64_t setup_bytes, int64_t setup_rounds) {
    memset(p, 0, sizeof *p);
    snprintf(p->model, sizeof p->model, "one-op");
    snprintf(p->chip, sizeof p->chip, "%s", chip->name);
    p->cores = rotor_chip_cores(chip);
    p->nops = 1;
    p->ops = calloc(1, sizeof *p->ops);
    rotor_program_op *o = &p->ops[0];
    o->name = strdup("op");
    snprintf(o->type, sizeof o->type, "MatMul");
    rotor_error err;
    cr_assert_eq(rotor_expr_make(text, dims, &o->expr, &err), ROTOR_OK, "%s", err.msg);
    o->active = *pl;
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), &o->expr, chip, &o->active, &o->active_info,
                                 &o->active_cost, &err),
                 ROTOR_OK, "%s", err.msg);
    o->setup_bytes = setup_bytes;
    o->setup_rounds = setup_rounds;
    o->setup_s = rotor_compile_setup_s(chip, setup_bytes, setup_rounds);
    o->exec_s = o->active_cost.total;
    p->total_s = o->setup_s + o->exec_s;
}

static void set_plan(const rotor_expr *e, rotor_plan *p, const char *fop, const char *tensor_axis_ft) {
    rotor_plan_init(e, p);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", fop);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char name[16];
        long long v;
        cr_assert_eq(sscanf(tok, "%15[^=]=%lld", name, &v), 2);
        p->fop[rotor_expr_axis(e, name)] = v;
    }
    if (!tensor_axis_ft) return;
    /* "A.k=4" */
    char t;
    char axis[16];
    long long v;
    cr_assert_eq(sscanf(tensor_axis_ft, "%c.%15[^=]=%lld", &t, axis, &v), 3);
    for (int x = 0; x < e->ntensors; x++)
        if (e->tensors[x].name[0] == t) p->ft[x][rotor_expr_axis(e, axis)] = v;
}

/* The 16x32x16 MatMul of the hand-computed cases as a one-operator program
 * with F_op fop and one temporal factor ft ("A.k=4", or NULL). */
static void tiny_matmul(rotor_program *p, const rotor_chip *chip, const char *fop, const char *ft,
                        int64_t setup_bytes, int64_t setup_rounds) {
    rotor_expr e;
    cr_assert_eq(rotor_expr_make(MATMUL, "m=16,k=32,n=16", &e, NULL), ROTOR_OK);
    rotor_plan pl;
    set_plan(&e, &pl, fop, ft);
    one_op(p, chip, MATMUL, "m=16,k=32,n=16", &pl, setup_bytes, setup_rounds);
}

static rotor_replay_result replay(const rotor_program *p, const rotor_chip *chip) {
    rotor_replay_result r;
    rotor_error err;
    cr_assert_eq(rotor_replay(p, chip, NULL, &r, NULL, &err), ROTOR_OK, "%s", err.msg);
    return r;
}

/* The replay of tiny_matmul (fop, ft, setup) on tiny(alpha_ns). */
static rotor_replay_result replay_tiny(double alpha_ns, const char *fop, const char *ft, int64_t setup_bytes,
                                       int64_t setup_rounds) {
    rotor_chip chip = tiny(alpha_ns);
    rotor_program p;
    tiny_matmul(&p, &chip, fop, ft, setup_bytes, setup_rounds);
    rotor_replay_result r = replay(&p, &chip);
    rotor_program_free(&p);
    return r;
}

/* 16x32x16 MatMul, F_op n=4: A (16x32) is shared by all 4 cores and rotates
 * in a ring of 4 along k (f_t^A[k] = 4), so T = 4 steps.  Sub-task m16 k8 n4:
 * 2 * 16 * pad16(8) * pad16(4) = 8192 FLOP = 8000 ps; an A partition is
 * 16 x 8 x 2 B = 256 B = 100000 ps.  4 * 8000 + 3 * 100000 = 332000 ps. */
Test(replay, a_rotating_input_costs_t_subtasks_and_t_minus_1_shifts) {
    rotor_replay_result r = replay_tiny(0, "n=4", "A.k=4", 0, 0);
    cr_assert_eq(r.stats.makespan_ps, 332000);
    cr_assert_eq(r.stats.transfers, 3 * 4, "one shift per core per transition");
    cr_assert_eq(r.stats.bytes, 3 * 4 * 256);
    cr_assert_float_eq(r.ops[0].predicted_s, 332e-9, 1e-18);
    cr_assert_float_eq(r.ops[0].simulated_s, 332e-9, 1e-18);
    rotor_replay_result_free(&r);
}

/* rotor_replay_plan: the same plan alone, no program.  On the all-to-all
 * chip 332,000 ps as above, also in packets of 128 B (each shift two chained
 * halves of 50,000 ps).  With 10 ns links: 362,000 ps all-to-all (one hop
 * per shift).  On a 4 x 1 mesh the ring's wrap-around shift runs back along
 * the row, 3 hops (30,000 ps of latency instead of 10,000), and only the
 * cores downstream of it wait: slower than all-to-all, faster than every
 * transition waiting for it (4 * 8,000 + 3 * 130,000 = 422,000 ps), and
 * exactly what rotor_replay gives for the same plan as a program. */
Test(replay, a_plan_replayed_alone_takes_the_models_time_and_longer_on_a_mesh) {
    rotor_chip chip = tiny(0), slow = tiny(10), mesh = slow;
    rotor_error err;
    cr_assert_eq(rotor_chip_set(&mesh, "topology=mesh", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&mesh, "mesh_width=4", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&mesh, "mesh_height=1", &err), ROTOR_OK);
    rotor_program p;
    tiny_matmul(&p, &chip, "n=4", "A.k=4", 0, 0);
    const rotor_program_op *o = &p.ops[0];
    int64_t ps = 0;
    cr_assert_eq(rotor_replay_plan(&o->expr, &o->active, &o->active_info, &chip, 0, &ps, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(ps, 332000);
    cr_assert_eq(rotor_replay_plan(&o->expr, &o->active, &o->active_info, &chip, 128, &ps, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(ps, 332000);
    cr_assert_eq(rotor_replay_plan(&o->expr, &o->active, &o->active_info, &slow, 0, &ps, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(ps, 362000);
    cr_assert_eq(rotor_replay_plan(&o->expr, &o->active, &o->active_info, &mesh, 0, &ps, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(ps, 362000);
    cr_assert_lt(ps, 422000);
    rotor_replay_result whole = replay(&p, &mesh);
    cr_assert_eq(whole.stats.makespan_ps, ps);
    rotor_replay_result_free(&whole);
    rotor_chip two = chip;
    cr_assert_eq(rotor_chip_set(&two, "cores_per_chip=2", &err), ROTOR_OK);
    cr_assert_eq(rotor_replay_plan(&o->expr, &o->active, &o->active_info, &two, 0, &ps, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "the plan uses 4 cores; chip");
    rotor_program_free(&p);
}

/* What the schedule measures on a mesh (docs/preload.md, "Edge ports"):
 * ipu-pod4 as a 32 x 46 mesh, 5.5 GB/s links, one edge port per edge link.
 * 8 KiB more per group or per core costs, at the busiest link, 8 KiB over
 * 5.5 GB/s (1,489,455 ps) times what the geometry puts on that link:
 *  - a preload into single cores: the ports in the middle of the long sides
 *    feed 16 cores each, x 16;
 *  - into groups of 32, a row each: every row has its own port, x 1;
 *  - into groups of 16, half a row each: every half-row's path starts at its
 *    own edge (west or east), x 1;
 *  - into groups of 27, which straddle rows: each group's path runs through
 *    its cores row by row and enters at the end nearer an edge; the paths
 *    share no link, but groups 5 and 6 (cores 135..161 and 162..188) both
 *    enter at row 5's west port, x 2 (as trees, the routes from the first
 *    core back along its row crossed the neighbours' links: x 10);
 *  - a distribution round at distance 32 (a row down): one flow per vertical
 *    link, x 1; at 16: 16 flows on the links in the middle of each row; at
 *    736 (23 rows down): 23 flows on each vertical link.
 * The slope (16 KiB minus 8 KiB) leaves out the first piece's way in. */
Test(replay, on_a_mesh_a_preload_or_a_distribution_round_loads_its_busiest_link) {
    rotor_chip c;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &c, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&c, "chips=1", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&c, "topology=mesh", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&c, "mesh_width=32", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&c, "mesh_height=46", &err), ROTOR_OK);
    const double unit = 8192 / 5.5e9 * 1e12;
    static const struct {
        int64_t m;
        double load;
    } pre[] = {{1, 16}, {32, 1}, {16, 1}, {27, 2}};
    for (size_t k = 0; k < sizeof pre / sizeof pre[0]; k++) {
        int64_t g = (1472 + pre[k].m - 1) / pre[k].m, t1, t2;
        cr_assert_eq(rotor_replay_preload(&c, g * 8192, pre[k].m, &t1, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_replay_preload(&c, g * 16384, pre[k].m, &t2, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_float_eq((double)(t2 - t1), pre[k].load * unit, 0.002 * pre[k].load * unit, "m %lld: %lld ps",
                           (long long)pre[k].m, (long long)(t2 - t1));
    }
    static const struct {
        int64_t d;
        double load;
    } sh[] = {{32, 1}, {16, 16}, {736, 23}};
    for (size_t k = 0; k < sizeof sh / sizeof sh[0]; k++) {
        int64_t t1, t2;
        cr_assert_eq(rotor_replay_shift(&c, sh[k].d, 8192, &t1, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_replay_shift(&c, sh[k].d, 16384, &t2, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_float_eq((double)(t2 - t1), sh[k].load * unit, 0.002 * sh[k].load * unit, "d %lld: %lld ps",
                           (long long)sh[k].d, (long long)(t2 - t1));
    }
    int64_t ps;
    cr_assert_eq(rotor_replay_shift(&c, 0, 8192, &ps, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "shift distance: expected 1..1471 cores, got 0");
    cr_assert_eq(rotor_replay_preload(&c, 8192, 1473, &ps, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "preload group: expected 1..1472 cores, got 1473");
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, &err), ROTOR_OK);
    cr_assert_eq(rotor_replay_preload(&c, 8192, 1, &ps, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "has no HBM");
}

/* With alpha = 10 ns every shift pays one latency, as the model's
 * alpha * (T - 1): 332000 + 3 * 10000 ps. */
Test(replay, link_latency_is_paid_once_per_transition) {
    rotor_replay_result r = replay_tiny(10, "n=4", "A.k=4", 0, 0);
    cr_assert_eq(r.stats.makespan_ps, 362000);
    cr_assert_float_eq(r.ops[0].predicted_s, 362e-9, 1e-18);
    rotor_replay_result_free(&r);
}

/* F_op k=4: each core holds a 16x16 partial sum of C (512 B), R_C = 4.  One
 * step of m16 k8 n16 (8000 ps), then a ring reduce-scatter: 3 rounds of
 * 128 B = 50000 ps, 158000 ps in all, the model's (R-1)/R * 512 / beta. */
Test(replay, partial_sums_are_reduced_in_r_minus_1_ring_rounds) {
    rotor_chip chip = tiny(0);
    rotor_program p;
    tiny_matmul(&p, &chip, "k=4", NULL, 0, 0);
    cr_assert_eq(p.ops[0].active_info.rings[0], 4);
    rotor_replay_result r = replay(&p, &chip);
    cr_assert_eq(r.stats.makespan_ps, 158000);
    cr_assert_eq(r.stats.transfers, 3 * 4);
    cr_assert_float_eq(r.ops[0].simulated_reduction_s, 150e-9, 1e-18);
    cr_assert_float_eq(r.ops[0].predicted_reduction_s, 150e-9, 1e-15);
    rotor_replay_result_free(&r);
    rotor_program_free(&p);
}

/* Setup of 1024 B in 2 rounds: two 512 B transfers into every core, each
 * round a permutation, 2 * 200000 ps before the 8000 ps of compute. */
Test(replay, setup_arrives_in_its_rounds_before_the_first_subtask) {
    rotor_replay_result r = replay_tiny(0, "n=4", NULL, 1024, 2);
    /* sub-task m16 k32 n4: 2 * 16 * 32 * 16 = 16384 FLOP = 16000 ps */
    cr_assert_eq(r.stats.makespan_ps, 400000 + 16000);
    cr_assert_eq(r.stats.exposed_ps[ROTOR_SIM_SETUP], 400000);
    cr_assert_float_eq(r.ops[0].simulated_setup_s, 400e-9, 1e-18);
    cr_assert_eq(r.stats.stall_ps, 0, "each round is a permutation and follows the last: no transfer waits");
    rotor_replay_result_free(&r);
}

/* The acceptance: on contention-free cases (one operator on the
 * all-to-all chip) model and simulation agree within 1%.  Every plan of the
 * T10 benchmark MatMul's Pareto frontier (T10 §6.2; 32 x 5120 x 15360 on
 * IPU Mk2), with and without setup; under the sanitizers every third plan
 * from the fastest on, alternately with and without setup (tests/san.h). */
Test(replay, every_frontier_plan_of_the_t10_matmul_agrees_with_the_model_within_1_percent,
     .timeout = 120) {
    rotor_chip chip = mk2();
    const char *dims = "m=32,k=5120,n=15360";
    rotor_expr e;
    rotor_error err;
    cr_assert_eq(rotor_expr_make(MATMUL, dims, &e, &err), ROTOR_OK);
    rotor_search_options so = {.pareto = true};
    rotor_search_result sr;
    cr_assert_eq(rotor_search(&e, &chip, &so, &sr, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(sr.npareto, 3);
    for (int i = 0; i < sr.npareto; i += ROTOR_TEST_SAN ? 3 : 1) {
        rotor_program p;
        one_op(&p, &chip, MATMUL, dims, &sr.pareto[i].plan, i % 2 ? 40000 : 0, i % 2 ? 3 : 0);
        rotor_replay_result r = replay(&p, &chip);
        double ratio = r.simulated_s / r.predicted_s;
        cr_assert(fabs(ratio - 1) < 0.01, "frontier plan %d: simulated %.6g s, model %.6g s", i, r.simulated_s,
                  r.predicted_s);
        rotor_replay_result_free(&r);
        rotor_program_free(&p);
    }
    rotor_search_result_free(&sr);
}

/* A compiled FFN with a vendor op between its MatMuls (as test_program.c). */
static void ffn_program(const rotor_chip *chip, rotor_program *p) {
    rotor_graph g;
    ffn_gelu(&g);
    compiled_program(&g, chip, NULL, NULL, p);
    rotor_graph_free(&g);
}

/* Bytes conserved: the simulator moves exactly the bytes the placement
 * prescribes: per core, shifts(X) * bytes(X) for every tensor (the closed
 * form of cost-model-v1), the reduce-scatter's R_Y (R_Y - 1) pieces per
 * group, and setup_bytes. */
Test(replay, the_simulator_moves_exactly_the_planned_bytes) {
    rotor_chip chip = mk2();
    rotor_program p;
    ffn_program(&chip, &p);
    int64_t want = 0;
    for (int o = 0; o < p.nops; o++) {
        const rotor_program_op *x = &p.ops[o];
        if (x->vendor) continue;
        const rotor_plan_info *in = &x->active_info;
        for (int t = 0; t < x->expr.ntensors; t++) want += in->cores * in->shifts[t] * in->bytes[t];
        int64_t R = in->rings[0];
        if (R > 1) want += in->cores * (R - 1) * ((in->bytes[0] + R - 1) / R);
        want += in->cores * x->setup_bytes;
    }
    rotor_replay_result r = replay(&p, &chip);
    cr_assert_eq(r.stats.bytes, want);
    cr_assert_gt(want, 0);
    rotor_replay_result_free(&r);
    rotor_program_free(&p);
}

/* The hand-off: an FFN whose down projection reads the up projection's
 * output (no operator between).  The replay moves, into every core of the
 * down projection's plan and from every core of the up projection's, the
 * bytes the hand-off names (rotor_handoff_sources), and nothing else by
 * hand-off; the program's setup_bytes is the busiest port's share plus the
 * weights' gather, and the operator replays within 3% of the model. */
static rotor_status tally_src(void *ctx, int64_t src, int64_t elems) {
    int64_t *row = ctx;
    row[src] += elems;
    return ROTOR_OK;
}

/* Checks that replaying p moves into every core of op o's plan, and from
 * every core of its tensor t's producer, the bytes the hand-off names
 * (through the program's view of it), and nothing else by hand-off beyond
 * the uniform gather of the rest of its setup; and, with tol > 0, that o
 * replays within tol of the model. */
static void check_handoff_bytes(const rotor_program *p, int o, int t, const rotor_chip *chip, double tol) {
    rotor_error err;
    const rotor_program_op *up = &p->ops[p->ops[o].handoff[t] - 1], *down = &p->ops[o];
    const rotor_view *view = &down->handoff_view[t];
    int64_t n = rotor_chip_cores(chip), cu = up->active_info.cores, cd = down->active_info.cores;
    int64_t elem = chip->element_bytes;
    rotor_place *lu, *ld;
    rotor_handoff *h;
    cr_assert_eq(rotor_place_make(&up->expr, &up->active, &up->active_info, &lu, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_place_make(&down->expr, &down->active, &down->active_info, &ld, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_handoff_make(lu, &h, &err), ROTOR_OK, "%s", err.msg);
    int64_t *want = calloc((size_t)(n * n), sizeof *want), *got = calloc((size_t)(n * n), sizeof *got);
    for (int64_t c = 0; c < cd; c++) {
        int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS];
        if (rotor_handoff_need(ld, t, c, lo, hi)) {
            rotor_handoff_set set;
            rotor_handoff_map(h, view, down->expr.tensors[t].ndims, lo, hi, &set);
            cr_assert_eq(rotor_handoff_sources(h, &set, tally_src, want + c * n), ROTOR_OK);
        }
        want[c * n + c] = 0; /* held */
    }
    int64_t *recv = malloc((size_t)cd * sizeof *recv), *send = malloc((size_t)cu * sizeof *send), mr, ms;
    cr_assert_eq(rotor_handoff_traffic(h, ld, t, view, recv, &mr, send, &ms), ROTOR_OK);
    cr_assert_gt(mr, 0, "the two plans lay the tensor out differently");

    rotor_replay_result r;
    rotor_sim *sim;
    cr_assert_eq(rotor_replay(p, chip, NULL, &r, &sim, &err), ROTOR_OK, "%s", err.msg);
    for (int64_t id = 0; id < rotor_sim_task_count(sim); id++) {
        rotor_sim_task_info ti;
        cr_assert_eq(rotor_sim_task_info_of(sim, id, &ti, &err), ROTOR_OK);
        if (!ti.transfer || ti.op != o || ti.category != ROTOR_SIM_SETUP) continue;
        got[ti.dst * n + ti.src] += ti.amount;
    }
    /* the rest of setup (weights, even-layout gathers) moves (setup_bytes -
     * the hand-off's busiest port) into every core, in rounds from
     * (c + k) mod N: subtract it */
    int64_t hand = elem * (mr > ms ? mr : ms), uniform = down->setup_bytes - hand;
    cr_assert_geq(uniform, 0);
    for (int64_t c = 0; c < cd && uniform > 0; c++)
        for (int64_t k = 1; k <= down->setup_rounds; k++) {
            int64_t piece = uniform / down->setup_rounds + (k <= uniform % down->setup_rounds ? 1 : 0);
            got[c * n + (c + k) % n] -= piece;
        }
    for (int64_t c = 0; c < n; c++)
        for (int64_t s2 = 0; s2 < n; s2++)
            cr_assert_eq(got[c * n + s2], elem * want[c * n + s2],
                         "core %lld from %lld: %lld bytes, the hand-off names %lld", (long long)c, (long long)s2,
                         (long long)got[c * n + s2], (long long)(elem * want[c * n + s2]));
    cr_assert(tol <= 0 || fabs(r.ops[o].simulated_s / r.ops[o].predicted_s - 1) < tol, "%s: %.6g vs %.6g s", down->name,
              r.ops[o].simulated_s, r.ops[o].predicted_s);
    rotor_sim_free(sim);
    rotor_replay_result_free(&r);
    free(want);
    free(got);
    free(recv);
    free(send);
    rotor_handoff_free(h);
    rotor_place_free(lu);
    rotor_place_free(ld);
}

Test(replay, a_hand_off_moves_the_named_bytes_between_the_named_cores, .timeout = 60) {
    rotor_chip chip = mk2();
    rotor_graph g;
    rotor_graph_init(&g, "ffn2");
    int64_t shapes[5][2] = {{128, 1024}, {1024, 4096}, {128, 4096}, {4096, 1024}, {128, 1024}};
    const char *names[5] = {"x", "w_up", "h", "w_down", "y"};
    rotor_role roles[5] = {ROTOR_ROLE_ACTIVATION, ROTOR_ROLE_WEIGHT, ROTOR_ROLE_ACTIVATION, ROTOR_ROLE_WEIGHT,
                           ROTOR_ROLE_ACTIVATION};
    int v[5];
    rotor_error err;
    for (int i = 0; i < 5; i++)
        cr_assert_eq(rotor_graph_add_value(&g, names[i], ROTOR_DTYPE_F16, 2, shapes[i], roles[i], &v[i], &err),
                     ROTOR_OK, "%s", err.msg);
    for (int i = 0; i < 2; i++) {
        int in[2] = {v[2 * i], v[2 * i + 1]}, outv[1] = {v[2 * i + 2]};
        rotor_op_desc d = {.name = i ? "down" : "up", .type = "MatMul", .expr = MATMUL,
                           .dims = i ? "m=128,k=4096,n=1024" : "m=128,k=1024,n=4096", .inputs = in, .ninputs = 2,
                           .outputs = outv, .noutputs = 1};
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = -1;
        d.tensor_value[0] = outv[0];
        d.tensor_value[1] = in[0];
        d.tensor_value[2] = in[1];
        cr_assert_eq(rotor_graph_add_op(&g, &d, NULL, &err), ROTOR_OK, "%s", err.msg);
    }
    g.values[v[4]].is_output = true;
    rotor_compile_result res;
    char *text;
    rotor_program p;
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &res, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_write(&g, &chip, &res, &text, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(strstr(text, "\"handoff\"") != NULL, "the program names the hand-off");
    cr_assert_eq(rotor_program_parse(text, "ffn2.json", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    free(text);
    rotor_compile_result_free(&res);
    rotor_graph_free(&g);
    cr_assert_eq(p.ops[1].handoff[1], 1, "down's A comes from op 0");

    check_handoff_bytes(&p, 1, 1, &chip, 0.03);
    rotor_program_free(&p);
}

/* The same through a view: BERT's attention reads Q and K, and the context
 * V, as column blocks of the QKV projection's output (zoo.c). */
/* A BERT-Base of `layers` layers (8 tokens of one sequence: the views of
 * qkv's output and the hand-offs through them are those of 32 tokens of
 * two, and the plans still lay V out differently) compiled for chip and
 * read back as a program. */
static void small_bert_program(int layers, const rotor_chip *chip, rotor_program *p) {
    rotor_graph g;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("bert-base", &(rotor_zoo_options){.layers = layers, .seq = 8, .batch = 1}, &g,
                                 &err),
                 ROTOR_OK, "%s", err.msg);
    compiled_program(&g, chip, NULL, NULL, p);
    rotor_graph_free(&g);
}

/* The index of p's operator `name`, which must exist. */
static int op_named(const rotor_program *p, const char *name) { return OP_NAMED(p->ops, p->nops, name); }

Test(replay, a_hand_off_through_a_view_moves_the_named_bytes, .timeout = 60) {
    rotor_chip chip = mk2();
    rotor_program p;
    small_bert_program(1, &chip, &p);
    int ctx = op_named(&p, "l0.context");
    cr_assert(p.ops[ctx].handoff[2] && p.ops[ctx].handoff_view[2].set, "V comes from l0.qkv through a view");
    cr_assert_eq(p.ops[ctx].handoff_view[2].offset[1], 1536);
    /* a 0.2 us operator: its exchange's packet grain is a tenth of it, so
     * only the bytes are checked here (BERT-Large b8's agreement is in
     * cli_simulate.sh) */
    check_handoff_bytes(&p, ctx, 2, &chip, 0);
    rotor_program_free(&p);
}

/* Repeated layers share their hand-off's schedule (the replay finds it by
 * what the pieces are computed from, not by computing them): the second
 * layer's context still moves exactly the bytes its own hand-off names, and
 * so does it with other setup bytes, which must not find the first layer's
 * schedule. */
Test(replay, a_repeated_hand_off_moves_its_own_bytes, .timeout = 60) {
    rotor_chip chip = mk2();
    rotor_program p;
    small_bert_program(2, &chip, &p);
    int ctx[2] = {op_named(&p, "l0.context"), op_named(&p, "l1.context")};
    const rotor_program_op *a = &p.ops[ctx[0]], *b = &p.ops[ctx[1]];
    cr_assert(b->handoff[2] && b->setup_bytes == a->setup_bytes && b->setup_rounds == a->setup_rounds &&
              !memcmp(&a->active, &b->active, sizeof a->active),
              "the layers' contexts are alike");
    check_handoff_bytes(&p, ctx[1], 2, &chip, 0);
    p.ops[ctx[1]].setup_bytes += 64 * b->setup_rounds; /* more to gather: another exchange */
    check_handoff_bytes(&p, ctx[1], 2, &chip, 0);
    rotor_program_free(&p);
}

/* The whole compiled model on the all-to-all chip: every operator agrees
 * with its prediction within 1%, and the vendor op takes exactly exec_s. */
Test(replay, a_compiled_model_replays_within_1_percent_per_operator) {
    rotor_chip chip = mk2();
    rotor_program p;
    ffn_program(&chip, &p);
    rotor_replay_result r = replay(&p, &chip);
    cr_assert_eq(r.nops, 3);
    for (int o = 0; o < r.nops; o++)
        cr_assert(fabs(r.ops[o].simulated_s / r.ops[o].predicted_s - 1) < 0.01, "%s: %.6g vs %.6g s",
                  p.ops[o].name, r.ops[o].simulated_s, r.ops[o].predicted_s);
    cr_assert(p.ops[1].vendor);
    cr_assert_float_eq(r.ops[1].simulated_s, p.ops[1].exec_s, 1e-12);
    double sum = 0;
    for (int o = 0; o < r.nops; o++) sum += r.ops[o].simulated_s;
    cr_assert_float_eq(sum, r.simulated_s, 1e-15, "operators are separated by barriers");
    char why[128];
    rotor_replay_explain(&r.ops[0], why, sizeof why);
    cr_assert_str_eq(why, "agrees");
    rotor_replay_result_free(&r);
    rotor_program_free(&p);
}

/* A hand-off's packets into one core pay the link latency once, as the
 * model's setup does: a port takes the next packet as soon as the last
 * one's bytes have left it (docs/simulator.md, "Pipelined links").
 * nerf-t10 on stcp920 (alpha 20 ns, 64 GB/s): fc1 hands 1,536 B a port off
 * in six 256 B packets, 24 + 20 = 44 ns of setup in the model; until
 * 2026-12-04 each packet waited for the one before it to arrive, 6 x 24 =
 * 144 ns, and the model replayed 58 % over (1.195 us against 0.755). */
Test(replay, a_hand_offs_packets_pay_the_latency_once) {
    rotor_chip chip;
    cr_assert_eq(rotor_chip_preset("stcp920", &chip, NULL), ROTOR_OK);
    rotor_graph g;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("nerf-t10", &(rotor_zoo_options){.batch = 1}, &g, &err), ROTOR_OK, "%s", err.msg);
    rotor_program p;
    compiled_program(&g, &chip, NULL, NULL, &p);
    rotor_replay_result r = replay(&p, &chip);
    int fc1 = 0;
    while (fc1 < p.nops && strcmp(p.ops[fc1].name, "fc1")) fc1++;
    cr_assert_lt(fc1, p.nops);
    cr_assert(p.ops[fc1].handoff[1], "fc1 gathers its input from fc0's layout");
    cr_assert_float_eq(p.ops[fc1].setup_s, 44e-9, 1e-15);
    cr_assert(fabs(r.ops[fc1].simulated_setup_s - 44e-9) < 0.5e-9, "fc1's setup replayed in %.4g s", r.ops[fc1].simulated_setup_s);
    cr_assert(fabs(r.simulated_s / r.predicted_s - 1) < 0.005, "%.6g vs %.6g s", r.simulated_s, r.predicted_s);
    rotor_replay_result_free(&r);
    rotor_program_free(&p);
    rotor_graph_free(&g);
}

/* On a 32 x 46 mesh rings are laid over cores that are not neighbours: a
 * transfer pays one latency per hop and shares links, so the same program
 * takes longer, and the report names the phase. */
Test(replay, a_mesh_is_slower_than_all_to_all_and_the_report_says_where) {
    rotor_chip chip, mesh;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, NULL), ROTOR_OK);
    mesh = chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_set(&mesh, "topology=mesh", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&mesh, "mesh_width=32", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&mesh, "mesh_height=46", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_validate(&mesh, &err), ROTOR_OK, "%s", err.msg);
    rotor_program p;
    ffn_program(&chip, &p);
    rotor_replay_result a = replay(&p, &chip), m = replay(&p, &mesh);
    cr_assert_gt(m.simulated_s, a.simulated_s);
    cr_assert_gt(m.stats.stall_ps, 0);
    int worst = 0;
    for (int o = 1; o < m.nops; o++)
        if (m.ops[o].simulated_s / m.ops[o].predicted_s > m.ops[worst].simulated_s / m.ops[worst].predicted_s)
            worst = o;
    char why[128];
    rotor_replay_explain(&m.ops[worst], why, sizeof why);
    cr_assert(strstr(why, "setup") || strstr(why, "compute+shifts") || strstr(why, "reduction"), "%s", why);
    rotor_replay_result_free(&a);
    rotor_replay_result_free(&m);
    rotor_program_free(&p);
}

/* The trace of a replay is valid JSON with one event per task, operator
 * names in its args. */
Test(replay, the_trace_of_a_replay_parses_and_names_the_operators) {
    rotor_chip chip = tiny(0);
    rotor_program p;
    tiny_matmul(&p, &chip, "n=4", "A.k=4", 0, 0);
    rotor_replay_result r;
    rotor_sim *sim;
    rotor_error err;
    cr_assert_eq(rotor_replay(&p, &chip, NULL, &r, &sim, &err), ROTOR_OK, "%s", err.msg);
    char *text = rotor_sim_trace_json(sim, &err);
    cr_assert_not_null(text, "%s", err.msg);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    int complete = 0, named = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, ev) {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(x, "ph");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X")) continue;
        complete++;
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(x, "args");
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(args, "operator");
        if (cJSON_IsString(op) && !strcmp(op->valuestring, "op")) named++;
    }
    /* 4 cores x 4 runs, 12 shifts, 1 barrier */
    cr_assert_eq(complete, (int)r.stats.tasks);
    cr_assert_eq(complete, 16 + 12 + 1);
    cr_assert_eq(named, complete);
    cJSON_Delete(root);
    free(text);
    rotor_sim_free(sim);
    rotor_replay_result_free(&r);
    rotor_program_free(&p);
}

Test(replay, a_chip_with_another_core_count_is_refused) {
    rotor_chip chip = tiny(0), pod;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &pod, NULL), ROTOR_OK);
    rotor_program p;
    tiny_matmul(&p, &chip, "n=4", NULL, 0, 0);
    rotor_replay_result r;
    rotor_error err;
    cr_assert_eq(rotor_replay(&p, &pod, NULL, &r, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "chip ipu-mk2 has 1472 cores; the program was compiled for 4");
    cr_assert_null(r.ops);
    rotor_program_free(&p);
}

/* ---- replaying an HBM schedule (docs/simulator.md, "Replaying an HBM schedule") ---- */

/* The tiny chip with one HBM controller of 10.24 GB/s: 4 lanes of
 * 2.56 GB/s, so 1,024 B take 400,000 ps on a lane and on a link. */
static rotor_chip tiny_hbm(void) {
    rotor_chip c = tiny(0);
    const char *sets[] = {"hbm_bytes=1073741824", "hbm_gbps=10.24", "hbm_controllers=1"};
    rotor_error err;
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        cr_assert_eq(rotor_chip_set(&c, sets[i], &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

/* A schedule of n identical operators C[m,n] += A[m,k] * B[k,n] of extents
 * dims, one plan F_op fop each, B in HBM, built by hand as
 * rotor_schedule_build would, on chip (hbm_bw: the scheduler's HBM bytes/s). */
static rotor_schedule *hand_schedule(const rotor_chip *chip, int n, const char *dims, const char *fop,
                                     int64_t hbm_bw) {
    rotor_schedule *s = calloc(1, sizeof *s);
    s->chip = *chip;
    s->tensor_parallel = 1;
    s->pchip = (rotor_preload_chip){.cores = rotor_chip_cores(chip), .sram_bytes = chip->sram_bytes,
                                    .hbm_bw = hbm_bw, .link_bw = 2560000000, .sram_blocking = true};
    s->nops = n;
    s->ops = calloc((size_t)n, sizeof *s->ops);
    rotor_preload_op_desc *desc = calloc((size_t)n, sizeof *desc);
    rotor_error err;
    rotor_chip flat = *chip;
    flat.topology = ROTOR_TOPO_ALL_TO_ALL;
    for (int i = 0; i < n; i++) {
        rotor_schedule_op *o = &s->ops[i];
        snprintf(o->name, sizeof o->name, "mm%d", i);
        cr_assert_eq(rotor_expr_make(MATMUL, dims, &o->expr, &err), ROTOR_OK, "%s", err.msg);
        o->hbm_tensor = 2;
        o->hbm_bytes = rotor_tensor_elements(&o->expr, 2) * 2;
        o->nplans = 1;
        o->cands = calloc(1, sizeof *o->cands);
        o->plans = calloc(1, sizeof *o->plans);
        set_plan(&o->expr, &o->cands[0].plan, fop, NULL);
        /* priced as on all-to-all: F_op m=9 has no layout on the 3 x 3 mesh of
         * the paced-ports test, which is about the HBM ports, and the replay
         * runs such a plan in row-major order (rotor_mesh_map_cores) */
        cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), &o->expr, &flat, &o->cands[0].plan,
                                     &o->cands[0].info, &o->cands[0].cost, &err),
                     ROTOR_OK, "%s", err.msg);
        o->plans[0] = (rotor_preload_plan){.time_ps = (int64_t)llround(o->cands[0].cost.total * 1e12),
                                           .space_bytes = o->cands[0].info.memory,
                                           .share = o->cands[0].info.rings[2]};
        desc[i] = (rotor_preload_op_desc){.name = o->name, .hbm_bytes = o->hbm_bytes, .nplans = 1, .plans = o->plans};
    }
    cr_assert_eq(rotor_preload_model_create(&s->pchip, desc, n, &s->model, &err), ROTOR_OK, "%s", err.msg);
    free(desc);
    return s;
}

/* 16x64x32, B (4,096 B) in HBM, one plan F_op m=4: every core holds all of B
 * (P = 4) and computes one sub-task m4 k64 n32, padded to 2 * 16 * 64 * 32 =
 * 65,536 FLOP = 64,000 ps; no shifts. */
static rotor_schedule *tiny_schedule(const rotor_chip *chip, int n) {
    rotor_schedule *s = hand_schedule(chip, n, "m=16,k=64,n=32", "m=4", 10240000000);
    cr_assert_eq(s->ops[0].hbm_bytes, 4096);
    cr_assert_eq(s->ops[0].plans[0].time_ps, 64000);
    cr_assert_eq(s->ops[0].plans[0].share, 4);
    return s;
}

/* The report of a given schedule: state index and preload number per op. */
static rotor_schedule_report tiny_report(const rotor_schedule *s, const int *state, const int *pnum) {
    rotor_preload_choice ch[8];
    for (int i = 0; i < s->nops; i++) ch[i] = (rotor_preload_choice){.plan = 0, .state = state[i], .preload_number = pnum[i]};
    rotor_schedule_report rep = {0};
    rotor_error err;
    cr_assert_eq(rotor_preload_evaluate(s->model, ch, NULL, ROTOR_PRELOAD_DYN, &rep.result, &err), ROTOR_OK, "%s", err.msg);
    rep.latency_s = (double)rep.result.latency_ps * 1e-12;
    return rep;
}

static rotor_schedule_replay_result sched_replay(const rotor_schedule *s, const rotor_schedule_report *rep,
                                                 const rotor_chip *chip) {
    rotor_schedule_replay_result r;
    rotor_error err;
    cr_assert_eq(rotor_schedule_replay(s, rep, chip, true, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    return r;
}

/* A tiny schedule of n operators (tiny_schedule) on tiny_hbm(), its report
 * for the given states and preload numbers (tiny_report), and its replay. */
typedef struct tiny_run {
    rotor_schedule *s;
    rotor_schedule_report rep;
    rotor_schedule_replay_result r;
} tiny_run;

static void tiny_replay(tiny_run *t, int n, const int *state, const int *pnum) {
    rotor_chip chip = tiny_hbm();
    t->s = tiny_schedule(&chip, n);
    t->rep = tiny_report(t->s, state, pnum);
    t->r = sched_replay(t->s, &t->rep, NULL);
}

/* One operator in preload state `state`: the model gives it `chunks`
 * chunks and a latency of `ps`, and the replay simulates exactly `ps`. */
static void tiny_exact(tiny_run *t, int state, int chunks, int64_t ps) {
    tiny_replay(t, 1, (int[]){state}, (int[]){0});
    cr_assert_eq(t->rep.result.ops[0].chunks, chunks);
    cr_assert_eq(t->rep.result.latency_ps, ps);
    cr_assert_eq(t->r.simulated_ps, ps);
}

static void tiny_free(tiny_run *t) {
    rotor_schedule_replay_result_free(&t->r);
    rotor_schedule_report_free(&t->rep);
    rotor_schedule_free(t->s);
}

/* One chunk (c = 1): the 4,096 B datum goes to the group of all 4 cores as
 * one stream of 4 multicast pieces of 1,024 B, 400,000 ps each: 1.6 us,
 * HBM reading 4,096 B once (the model: max(4096 B / 10.24 GB/s,
 * 4096 B / 2.56 GB/s) = 1.6 us).  Then 64,000 ps of compute. */
Test(replay, a_preload_broadcast_to_every_core_then_its_execution_in_exact_picoseconds) {
    tiny_run t;
    tiny_exact(&t, 0, 1, 1664000);
    cr_assert_eq(t.r.analytical_ps, 1664000);
    cr_assert_float_eq(t.r.error, 0, 1e-15);
    ASSERT_TIMES(t.r.ops[0], 0, 1600000, 1600000, 1664000);
    cr_assert_eq(t.r.stats.hbm_bytes, 4096, "HBM reads the datum once");
    cr_assert_eq(t.r.stats.bytes, 4096, "a multicast's bytes count once");
    cr_assert_eq(t.r.stats.transfers, 4);
    cr_assert_eq(t.r.stats.pause_ps, 4 * 4 * 400000, "every core paused while every piece lands");
    tiny_free(&t);
}

/* The same with a link latency of 100 ns: the stream keeps 2 pieces in
 * flight (1 + ceil(100,000 / 400,000 ps)), so the pieces follow one another
 * as their bytes free the in ports and the preload pays the latency once:
 * 100,000 + 4 x 400,000 ps, then the compute.  One in flight, each piece
 * waited for the one before to arrive: 4 x 500,000 ps (2,064,000 in all).
 * The model prices no latency in a preload (docs/schedule.md, "Link
 * latency"): 1,664,000 ps. */
Test(replay, a_preload_stream_pays_the_latency_once) {
    rotor_chip chip = tiny_hbm();
    chip.link_latency_ns = 100;
    rotor_schedule *s = tiny_schedule(&chip, 1);
    rotor_schedule_report rep = tiny_report(s, (int[]){0}, (int[]){0});
    rotor_schedule_replay_result r = sched_replay(s, &rep, NULL);
    cr_assert_eq(rep.result.ops[0].chunks, 1);
    cr_assert_eq(rep.result.latency_ps, 1664000);
    cr_assert_eq(r.simulated_ps, 100000 + 1664000);
    rotor_schedule_replay_result_free(&r);
    rotor_schedule_report_free(&rep);
    rotor_schedule_free(s);
}

/* Four chunks (c = 4): each core receives its own 1,024 B (4 streams, one
 * per lane, in parallel: 400,000 ps; HBM still reads 4,096 B), then fetches
 * the other 3,072 B from its peers in 3 rounds of 1,024 B (1.2 us), then
 * computes: 400,000 + 1,200,000 + 64,000 ps, the model's preload +
 * distribution + time. */
Test(replay, chunks_trade_preload_time_for_distribution_in_exact_picoseconds) {
    tiny_run t;
    tiny_exact(&t, 2, 4, 1664000);
    ASSERT_TIMES(t.r.ops[0], ANY_PS, 400000, ANY_PS, ANY_PS);
    cr_assert_eq(t.r.stats.hbm_bytes, 4096);
    cr_assert_eq(t.r.stats.bytes, 4096 + 4 * 3072);
    cr_assert_eq(t.r.stats.exposed_ps[ROTOR_SIM_SETUP], 1200000);
    cr_assert_eq(t.r.stats.stall_ps, 0, "the streams take separate lanes; each round is a permutation");
    tiny_free(&t);
}

/* Two chunks (c = 2): two groups of 2 cores, 2,048 B each, two streams at
 * once, 2 pieces of 400,000 ps: 800,000 ps.  Each core then fetches the
 * 2,048 B it lacks from the other group in one round, moved as 2 chained
 * packets of 1,024 B (a schedule replay moves every transfer in packets of
 * at most a piece, so that pieces and shifts take turns on an in port):
 * 800,000 ps.  Compute: 64,000 ps.  The model's 1.664 us again. */
Test(replay, a_transfer_larger_than_a_piece_moves_in_chained_packets_in_exact_picoseconds) {
    tiny_run t;
    tiny_exact(&t, 1, 2, 1664000);
    cr_assert_eq(t.r.stats.bytes, 4096 + 4 * 2048);
    ASSERT_TIMES(t.r.ops[0], ANY_PS, 800000, ANY_PS, ANY_PS);
    cr_assert_eq(t.r.stats.transfers, 2 * 2 + 4 * 2, "4 pieces, then 2 packets into each core");
    cr_assert_eq(t.r.stats.exposed_ps[ROTOR_SIM_SETUP], 800000);
    tiny_free(&t);
}

/* Two operators, op 1 preloaded while op 0 executes (preload number 1).
 * Its pieces land from 1.6 us to 3.2 us, each pausing every core for
 * 400,000 ps.  The model (a fluid): op 0's 64,000 ps of compute and the
 * link-bound preload share the link half and half, so op 0 ends at
 * 1.728 us and the preload, slowed by 64,000 ps, at 3.264 us; op 1 ends at
 * 3.328 us.  The simulation: op 0's compute fits between the first two
 * pauses (2.0 to 2.064 us) and the later pauses queue behind it, so op 1
 * starts computing when the last pause ends, 3.264 us, and also ends at
 * 3.328 us: the pause time is conserved, only its place differs. */
Test(replay, a_preload_overlapping_an_execution_pauses_it_as_the_fluid_model_does) {
    tiny_run t;
    tiny_replay(&t, 2, (int[]){0, 0}, (int[]){1, 0});
    ASSERT_TIMES(t.rep.result.ops[0], ANY_PS, ANY_PS, ANY_PS, 1728000);
    ASSERT_TIMES(t.rep.result.ops[1], ANY_PS, 3264000, ANY_PS, ANY_PS);
    cr_assert_eq(t.rep.result.latency_ps, 3328000);
    cr_assert_eq(t.r.simulated_ps, 3328000);
    ASSERT_TIMES(t.r.ops[0], ANY_PS, ANY_PS, 1600000, 2064000);
    ASSERT_TIMES(t.r.ops[1], 1600000, 3200000, 3200000, 3328000);
    cr_assert_eq(t.r.stats.hbm_bytes, 2 * 4096);
    tiny_free(&t);
}

/* Without SRAM blocking the pieces only take the in ports: op 0 computes
 * at once, op 1 when its preload is done. */
Test(replay, without_sram_blocking_a_preload_does_not_pause_the_cores) {
    rotor_chip chip = tiny_hbm();
    rotor_schedule *s = tiny_schedule(&chip, 2);
    s->pchip.sram_blocking = false;
    rotor_preload_model_free(s->model);
    rotor_preload_op_desc desc[2];
    for (int i = 0; i < 2; i++)
        desc[i] = (rotor_preload_op_desc){.name = s->ops[i].name, .hbm_bytes = 4096, .nplans = 1, .plans = s->ops[i].plans};
    cr_assert_eq(rotor_preload_model_create(&s->pchip, desc, 2, &s->model, NULL), ROTOR_OK);
    rotor_schedule_report rep = tiny_report(s, (int[]){0, 0}, (int[]){1, 0});
    cr_assert_eq(rep.result.latency_ps, 3264000);
    rotor_schedule_replay_result r = sched_replay(s, &rep, NULL);
    cr_assert_eq(r.simulated_ps, 3264000);
    cr_assert_eq(r.ops[0].exe_end_ps, 1664000);
    cr_assert_eq(r.stats.pause_ps, 0);
    rotor_schedule_replay_result_free(&r);
    rotor_schedule_report_free(&rep);
    rotor_schedule_free(s);
}

/* The same two preloads on a 2 x 2 mesh (docs/simulator.md, "HBM on the
 * mesh"): 8 edge ports, all of the one controller; every core is on the
 * edge.  One chunk: the group of all 4 cores is one stream through the port
 * nearest core 0, north of (0,0); each piece is one tree from there
 * ((0,0)->(1,0)->(1,1), (0,0)->(0,1)), 1.6 us as on all-to-all (latency 0).
 * Four chunks: each core's piece enters through its own port (north of
 * (0,0) and (1,0), south of (0,1), east of (1,1)), four streams at once,
 * 400,000 ps; the distribution's three rounds share no link (round 1: 1->0,
 * 2->1 over (1,1), 3->2, 0->3 over (1,0)), 1.2 us.  Both are the model's
 * 1.664 us. */
Test(replay, on_a_2x2_mesh_every_core_has_an_edge_port_and_preloads_take_the_models_time) {
    rotor_chip chip = tiny_hbm(), m = chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_set(&m, "topology=mesh", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&m, "mesh_width=2", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&m, "mesh_height=2", &err), ROTOR_OK);
    rotor_schedule *s = tiny_schedule(&chip, 1);
    for (int state = 0; state <= 2; state += 2) {
        rotor_schedule_report rep = tiny_report(s, (int[]){state}, (int[]){0});
        rotor_schedule_replay_result r = sched_replay(s, &rep, &m);
        cr_assert_eq(rotor_sim_hbm_ports(r.sim), 8);
        cr_assert_eq(r.simulated_ps, 1664000, "state %d", state);
        cr_assert_eq(r.ops[0].pre_end_ps, state ? 400000 : 1600000);
        cr_assert_eq(r.stats.hbm_bytes, 4096);
        cr_assert_eq(r.stats.stall_ps, 0, "state %d: one port per stream, no shared link", state);
        rotor_schedule_replay_result_free(&r);
        rotor_schedule_report_free(&rep);
    }
    rotor_schedule_free(s);
}

/* Paced ports (docs/simulator.md, "Paced ports").  A 3 x 3 mesh, one
 * operator C[m,n] += A[m,k] * B[k,n], 18x64x144, F_op m=9: every core holds
 * all of B (P = 9, 18,432 B), preloaded in 9 chunks, one per core: 2,048 B
 * each, 2 pieces of 1,024 B (400,000 ps at 2.56 GB/s); HBM at 40.96 GB/s
 * (16 lanes) sends all 9 at once.  Every core's
 * nearest port is its own, except the centre's: (1,1) ties between its four
 * neighbours' ports and takes the first in ring order, the north port of
 * (1,0), which so feeds two groups (cores 1 and 4) and sets the pace.  Items
 * go out round by round (task id = 9 r + g): the pacing port sends core 1's
 * piece 0 over [0, 400,000], core 4's over [400,000, 800,000]; every other
 * port sends piece 0 at once, but piece 1 only after the pacing port's
 * round 0, [800,000, 1,200,000], not back to back at 400,000 (a corner
 * core would otherwise take its whole preload at the full link rate and,
 * with SRAM blocking, queue its executions behind the pauses).  The preload
 * ends with the pacing port's round 1 at 1,600,000. */
Test(replay, on_a_mesh_every_port_keeps_the_pace_of_the_port_feeding_the_most_groups) {
    rotor_chip chip = tiny_hbm();
    rotor_error err;
    const char *sets[] = {"cores_per_chip=9", "topology=mesh", "mesh_width=3", "mesh_height=3", "hbm_gbps=40.96"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        cr_assert_eq(rotor_chip_set(&chip, sets[i], &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_validate(&chip, &err), ROTOR_OK, "%s", err.msg);
    rotor_schedule *s = hand_schedule(&chip, 1, "m=18,k=64,n=144", "m=9", 40960000000);
    cr_assert_eq(s->ops[0].hbm_bytes, 18432);
    cr_assert_eq(s->ops[0].plans[0].share, 9);
    rotor_schedule_report rep = tiny_report(s, (int[]){1}, (int[]){0});
    cr_assert_eq(rep.result.ops[0].chunks, 9);
    rotor_schedule_replay_result r = sched_replay(s, &rep, NULL);
    cr_assert_eq(rotor_sim_hbm_port_nearest(r.sim, 4, NULL), rotor_sim_hbm_port_nearest(r.sim, 1, NULL));
    rotor_sim_timing t;
    for (int64_t g = 0; g < 9; g++) {
        bool pacing = g == 1 || g == 4;
        cr_assert_eq(rotor_sim_task_timing(r.sim, g, &t, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(t.start_ps, g == 4 ? 400000 : 0, "core %lld, piece 0", (long long)g);
        cr_assert_eq(rotor_sim_task_timing(r.sim, 9 + g, &t, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(t.start_ps, pacing ? (g == 1 ? 800000 : 1200000) : 800000, "core %lld, piece 1: %lld", (long long)g, (long long)t.start_ps);
        cr_assert_eq(t.end_ps, t.start_ps + 400000);
    }
    cr_assert_eq(r.ops[0].pre_end_ps, 1600000);
    cr_assert_eq(r.stats.hbm_bytes, 18432);
    rotor_schedule_replay_result_free(&r);
    rotor_schedule_report_free(&rep);
    rotor_schedule_free(s);
}

/* A Llama2-13B decode step of `layers` layers (batch 8, KV cache 2048) on
 * one IPU-POD4 chip: the HBM bytes the simulator moves are exactly the
 * operators' hbm_bytes; the Elk-Full schedule's simulated latency is within
 * 3% of its analytical one (the acceptance, on two layers); the
 * mesh is slower. */
static rotor_schedule *llama_layers(int64_t layers) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &chip, &err), ROTOR_OK);
    rotor_zoo_options zo = {.batch = 8, .seq = 2048, .layers = layers, .phase = ROTOR_PHASE_DECODE};
    rotor_graph raw, g;
    rotor_group_stats gs;
    cr_assert_eq(rotor_zoo_build("llama2-13b", &zo, &raw, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_group(&raw, &g, &gs, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&raw);
    rotor_schedule *s = NULL;
    cr_assert_eq(rotor_schedule_build(&g, &chip, NULL, &s, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&g);
    return s;
}

/* llama_layers(layers) scheduled by `design`: the schedule in *s, its
 * report in *rep. */
static void llama_scheduled(int64_t layers, rotor_preload_design design, rotor_schedule **s,
                            rotor_schedule_report *rep) {
    *s = llama_layers(layers);
    rotor_error err;
    cr_assert_eq(rotor_schedule_run(*s, design, rep, &err), ROTOR_OK, "%s", err.msg);
}

/* The same, replayed on the schedule's own chip. */
static rotor_schedule_replay_result llama_replayed(int64_t layers, rotor_preload_design design,
                                                   rotor_schedule **s, rotor_schedule_report *rep) {
    llama_scheduled(layers, design, s, rep);
    return sched_replay(*s, rep, NULL);
}

/* The schedule's chip as a 32 x 46 mesh of its 1472 cores. */
static rotor_chip mesh_of(const rotor_schedule *s) {
    rotor_chip mesh = s->chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_set(&mesh, "topology=mesh", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&mesh, "mesh_width=32", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&mesh, "mesh_height=46", &err), ROTOR_OK);
    return mesh;
}

/* The schedule replay streamed (preloads in flight carried from one
 * operator to the next, finished tasks retired) equals the whole run to the
 * picosecond: every operator's preload and execution span and every
 * statistic, on the all-to-all chip and on a mesh (path multicasts, ports).
 * One layer (13 operators, 1.29 M events, 431 k tasks, an 85 MB trace)
 * suffices: it still crosses 2^20 events (one progress call), retires
 * finished tasks mid-run and overlaps 10 preloads with earlier executions;
 * two layers proved the same at twice the trace. */
/* A trace's task events ("ph":"X" lines) as they are written: each line's
 * length and 64-bit FNV-1a hash, in order, and the bytes written.  The
 * streamed and the whole trace are 85 MB each: kept as text, their buffers'
 * growth (copied, zeroed and page-faulted, twice a chip) took 40 % of the
 * test's CPU time under ASan (21 s before, 13 s after, on a loaded machine);
 * a differing line still names its event, and two different lines of the
 * same length collide with odds of 2^-64. */
typedef struct trace_lines {
    int64_t n, cap, bytes;
    size_t *len;
    uint64_t *hash;
    char *line; /* the line being written, up to its newline */
    size_t linelen, linecap;
    bool keep;  /* the text too, in text (NUL-terminated) */
    char *text; /* reserved at its expected size: an open_memstream's growth */
    size_t textcap; /* took 2.5 s of the plain build's 9 s test */
} trace_lines;

static void trace_line_end(trace_lines *t) {
    static const char x[] = "\"ph\":\"X\"";
    if (t->linelen && memmem(t->line, t->linelen, x, sizeof x - 1)) {
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 1 << 16;
            t->len = realloc(t->len, (size_t)t->cap * sizeof *t->len);
            t->hash = realloc(t->hash, (size_t)t->cap * sizeof *t->hash);
            cr_assert(t->len && t->hash);
        }
        uint64_t h = 14695981039346656037ull;
        for (size_t i = 0; i < t->linelen; i++) h = (h ^ (unsigned char)t->line[i]) * 1099511628211ull;
        t->len[t->n] = t->linelen;
        t->hash[t->n++] = h;
    }
    t->linelen = 0;
}

static ssize_t trace_lines_write(void *cookie, const char *buf, size_t size) {
    trace_lines *t = cookie;
    if (t->keep) {
        if ((size_t)t->bytes + size + 1 > t->textcap) {
            t->textcap = 2 * ((size_t)t->bytes + size + 1);
            t->text = realloc(t->text, t->textcap);
            cr_assert_not_null(t->text);
        }
        memcpy(t->text + t->bytes, buf, size);
        t->text[(size_t)t->bytes + size] = '\0';
    }
    t->bytes += (int64_t)size;
    for (const char *p = buf, *end = buf + size; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        if (t->linelen + n > t->linecap) {
            t->linecap = 2 * (t->linelen + n);
            t->line = realloc(t->line, t->linecap);
            cr_assert_not_null(t->line);
        }
        memcpy(t->line + t->linelen, p, n);
        t->linelen += n;
        if (nl) trace_line_end(t);
        p += n + (nl != NULL);
    }
    return (ssize_t)size;
}

/* Telling the position only: the trace writer's summary counts its bytes by
 * ftell. */
static int trace_lines_seek(void *cookie, off64_t *off, int whence) {
    if (whence != SEEK_CUR || *off != 0) return -1;
    *off = ((trace_lines *)cookie)->bytes;
    return 0;
}

static int trace_lines_close(void *cookie) {
    trace_line_end(cookie); /* a last line without its newline */
    return 0;
}

/* A FILE that records its task events into *t (zeroed first), and its
 * text when keep is above 0, in a buffer of keep bytes to begin with. */
static FILE *trace_lines_open(trace_lines *t, size_t keep) {
    *t = (trace_lines){.keep = keep > 0, .textcap = keep};
    if (keep) {
        t->text = malloc(keep);
        cr_assert_not_null(t->text);
        t->text[0] = '\0';
    }
    FILE *f = fopencookie(t, "w", (cookie_io_functions_t){.write = trace_lines_write, .seek = trace_lines_seek, .close = trace_lines_close});
    cr_assert_not_null(f);
    return f;
}

static void trace_lines_free(trace_lines *t) {
    free(t->len);
    free(t->hash);
    free(t->line);
    free(t->text);
}

/* A replay's progress calls: operators, simulated time and events never go
 * back, and one comes for every 2^20 events. */
typedef struct ticks {
    int n, done, total;
    int64_t now, events;
    bool monotone;
} ticks;

static void tick(void *ctx, int done, int total, int64_t now_ps, int64_t events) {
    ticks *t = ctx;
    t->monotone &= done >= t->done && now_ps >= t->now && events > t->events && done < total;
    t->n++;
    t->done = done;
    t->total = total;
    t->now = now_ps;
    t->events = events;
}

/* cJSON's allocations while it parses a streamed trace, from 64 MiB chunks
 * kept for the next parse, freed together: parsed with malloc's nodes the
 * two 85 MB traces took 3.5 s of the plain build's 9 s test (a node and a
 * string or two for each of some 5 M values, then each freed).  The same
 * parser decides whether the text is JSON. */
#define ARENA_CHUNK ((size_t)64 << 20)
static struct {
    char *chunk[64];
    int n, k; /* chunks allocated, the one in use */
    size_t off;
} arena;

static void *arena_alloc(size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size > ARENA_CHUNK) return NULL;
    if (arena.n == 0 || arena.off + size > ARENA_CHUNK) {
        if (arena.n > 0 && arena.k + 1 < arena.n) {
            arena.k++;
        } else {
            if (arena.n == 64 || !(arena.chunk[arena.n] = malloc(ARENA_CHUNK))) return NULL;
            arena.k = arena.n++;
        }
        arena.off = 0;
    }
    void *p = arena.chunk[arena.k] + arena.off;
    arena.off += size;
    return p;
}

static void arena_free(void *p) { (void)p; }

/* Whether text is JSON, by cJSON_Parse on the arena (emptied first). */
static bool is_json(const char *text) {
    arena.k = 0;
    arena.off = 0;
    cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = arena_alloc, .free_fn = arena_free});
    bool ok = cJSON_Parse(text) != NULL; /* the tree is the arena's */
    cJSON_InitHooks(NULL);
    return ok;
}

static void arena_release(void) {
    for (int k = 0; k < arena.n; k++) free(arena.chunk[k]);
    arena.n = arena.k = 0;
    arena.off = 0;
}

Test(replay, a_schedule_streamed_equals_the_whole_replay_to_the_picosecond, .timeout = 120) {
    rotor_schedule *s;
    rotor_schedule_report rep;
    rotor_error err;
    llama_scheduled(1, ROTOR_PRELOAD_FULL, &s, &rep);
    rotor_chip mesh = mesh_of(s);
    const rotor_chip *chips[2] = {NULL, &mesh};
    int overlapped = 0;
    /* Under the sanitizers (tests/san.h) the mesh only: the same streaming
     * code, with the mesh's path multicasts and ports; the plain build
     * replays both chips. */
    for (int c = ROTOR_TEST_SAN ? 1 : 0; c < 2; c++) {
        rotor_schedule_replay_result a, b;
        cr_assert_eq(rotor_schedule_replay(s, &rep, chips[c], true, NULL, &a, &err), ROTOR_OK, "%s", err.msg);
        trace_lines ws, ss;
        FILE *wf = trace_lines_open(&ws, 0);
        cr_assert_eq(rotor_sim_trace_write(a.sim, NULL, wf, NULL, &err), ROTOR_OK, "%s", err.msg);
        fclose(wf);
        ticks tk = {.monotone = true};
        /* Under the sanitizers the streamed text is not kept and parsed:
         * cJSON is not instrumented, so parsing checks the text's form only,
         * which the plain build does (tests/san.h).  Kept, its buffer is
         * reserved at the whole trace's size and a little more (the two
         * differ in their counters). */
        size_t keep = ROTOR_TEST_SAN ? 0 : (size_t)ws.bytes + (size_t)ws.bytes / 8 + 4096;
        FILE *tf = trace_lines_open(&ss, keep);
        rotor_replay_options opt = {.progress = {tick, &tk}, .trace = tf};
        cr_assert_eq(rotor_schedule_replay(s, &rep, chips[c], false, &opt, &b, &err), ROTOR_OK, "%s", err.msg);
        fclose(tf);
        /* the streamed trace's task events are the whole run's, line for line */
        cr_assert_eq(b.trace.kept, b.stats.tasks);
        cr_assert_eq(b.trace.bytes, ss.bytes);
        for (int64_t i = 0; i < ws.n && i < ss.n; i++)
            cr_assert(ws.len[i] == ss.len[i] && ws.hash[i] == ss.hash[i], "event %lld differs", (long long)i);
        cr_assert_eq(ws.n, ss.n, "one trace ends early: %lld task events whole, %lld streamed", (long long)ws.n,
                     (long long)ss.n);
        cr_assert_eq(ss.n, b.stats.tasks);
        if (ss.keep) {
            cr_assert_eq((size_t)b.trace.bytes, strlen(ss.text));
            cr_assert(is_json(ss.text), "the streamed trace is JSON");
        }
        trace_lines_free(&ws);
        trace_lines_free(&ss);
        cr_assert_geq(tk.n, (int)(b.stats.events >> 20), "a call every 2^20 events: %d calls, %lld events", tk.n,
                      (long long)b.stats.events);
        cr_assert_gt(tk.n, 0);
        cr_assert(tk.monotone);
        cr_assert_eq(tk.total, s->nops);
        cr_assert_not_null(a.sim);
        cr_assert_null(b.sim, "a streamed replay keeps no simulator");
        cr_assert_eq(a.nops, b.nops);
        for (int i = 0; i < a.nops; i++) {
            const rotor_schedule_replay_op *x = &a.ops[i], *y = &b.ops[i];
            cr_assert(x->pre_start_ps == y->pre_start_ps && x->pre_end_ps == y->pre_end_ps &&
                          x->exe_start_ps == y->exe_start_ps && x->exe_end_ps == y->exe_end_ps && x->tasks == y->tasks,
                      "op %d: preload %lld-%lld, execution %lld-%lld whole; %lld-%lld, %lld-%lld streamed", i,
                      (long long)x->pre_start_ps, (long long)x->pre_end_ps, (long long)x->exe_start_ps,
                      (long long)x->exe_end_ps, (long long)y->pre_start_ps, (long long)y->pre_end_ps,
                      (long long)y->exe_start_ps, (long long)y->exe_end_ps);
            if (i > 0) overlapped += x->pre_start_ps < a.ops[i - 1].exe_end_ps && x->pre_end_ps > x->pre_start_ps;
        }
        cr_assert(memcmp(&a.stats, &b.stats, sizeof a.stats) == 0, "every statistic: makespan %lld vs %lld",
                  (long long)a.stats.makespan_ps, (long long)b.stats.makespan_ps);
        cr_assert_eq(a.simulated_ps, b.simulated_ps);
        rotor_schedule_replay_result_free(&a);
        rotor_schedule_replay_result_free(&b);
    }
    cr_assert_gt(overlapped, 0, "preloads run during earlier executions");
    arena_release();
    rotor_schedule_report_free(&rep);
    rotor_schedule_free(s);
}

/* Under the sanitizers (tests/san.h) one layer: the same schedule's code,
 * half the events and half the trace text; the plain build replays two. */
Test(replay, a_two_layer_llama2_13b_schedule_replays_within_3_percent, .timeout = 120) {
    rotor_schedule *s;
    rotor_schedule_report rep;
    rotor_schedule_replay_result r = llama_replayed(ROTOR_TEST_SAN ? 1 : 2, ROTOR_PRELOAD_FULL, &s, &rep);
    cr_assert_eq(r.stats.hbm_bytes, s->hbm_bytes, "HBM bytes conserved");
    cr_assert_eq(r.hbm_bytes, s->hbm_bytes);
    cr_assert_lt(fabs(r.error), 0.03, "full: simulated %.4f ms vs analytical %.4f ms", r.simulated_ps * 1e-9,
                 r.analytical_ps * 1e-9);
    cr_assert_eq(r.nops, s->nops);
    for (int i = 0; i < r.nops; i++) {
        cr_assert_geq(r.ops[i].exe_start_ps, r.ops[i].pre_end_ps, "op %d starts after its preload", i);
        if (i) cr_assert_geq(r.ops[i].exe_start_ps, r.ops[i - 1].exe_end_ps, "op %d after op %d", i, i - 1);
    }
    cr_assert_eq(r.ops[r.nops - 1].exe_end_ps, r.simulated_ps);
    cr_assert_gt(r.stats.hbm_util, 0.9);
    rotor_error err;
    char *json = rotor_sim_trace_json(r.sim, &err);
    cr_assert(json && strstr(json, "\"operator\":\"preload l0.qkv\""));
    free(json);
    rotor_schedule_replay_result_free(&r);
    rotor_schedule_report_free(&rep);
    rotor_schedule_free(s);
}

Test(replay, a_schedule_on_a_mesh_is_slower_and_bad_input_names_the_operator, .timeout = 120) {
    rotor_schedule_report rep;
    rotor_schedule *s;
    llama_scheduled(1, ROTOR_PRELOAD_BASIC, &s, &rep);
    rotor_schedule_replay_result a = sched_replay(s, &rep, NULL);
    rotor_chip mesh = mesh_of(s);
    rotor_error err;
    rotor_schedule_replay_result m = sched_replay(s, &rep, &mesh);
    cr_assert_gt(m.simulated_ps, a.simulated_ps);
    cr_assert_eq(m.stats.hbm_bytes, a.stats.hbm_bytes);
    rotor_schedule_replay_result_free(&a);
    rotor_schedule_replay_result_free(&m);
    /* a chip of another size, a chip without HBM */
    rotor_chip other = s->chip;
    other.cores_per_chip = 1024;
    rotor_schedule_replay_result r;
    cr_assert_eq(rotor_schedule_replay(s, &rep, &other, false, NULL, &r, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "has 1024 cores; the schedule runs on one chip of 1472");
    other = s->chip;
    other.hbm_gbps = 0;
    other.hbm_controllers = 0;
    other.hbm_bytes = 0;
    cr_assert_eq(rotor_schedule_replay(s, &rep, &other, false, NULL, &r, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "no HBM controllers");
    /* a preload number that issues fewer preloads than the operator before */
    int i = 3;
    rep.result.ops[i].preload_number = -2;
    cr_assert_eq(rotor_schedule_replay(s, &rep, NULL, false, NULL, &r, &err), ROTOR_ERR_INPUT);
    char want[128];
    snprintf(want, sizeof want, "schedule replay: operator 3 '%s'", s->ops[3].name);
    assert_msg_has(err, want);
    rotor_schedule_report_free(&rep);
    rotor_schedule_free(s);
}

/* Operator `name` replayed whole (a) and streamed (b) took the same time,
 * phase by phase, in as many tasks. */
static void assert_same_phases(const rotor_replay_op *a, const rotor_replay_op *b, const char *name) {
    cr_assert_eq(a->simulated_s, b->simulated_s, "%s: %.12g vs %.12g s", name, a->simulated_s, b->simulated_s);
    cr_assert_eq(a->simulated_setup_s, b->simulated_setup_s, "%s", name);
    cr_assert_eq(a->simulated_main_s, b->simulated_main_s, "%s", name);
    cr_assert_eq(a->wait_s, b->wait_s, "%s", name);
    cr_assert_eq(a->tasks, b->tasks, "%s", name);
}

/* Streaming (docs/simulator.md, "Streaming"): rotor_replay without a
 * simulator to return runs each operator to its barrier and drops its tasks.
 * A small BERT (hand-offs, vendor operators, reductions) replayed whole and
 * streamed agrees in every operator's phases and every statistic, to the
 * picosecond, on the all-to-all chip and on a mesh where links contend. */
Test(replay, a_program_streamed_operator_by_operator_equals_the_whole_run_to_the_picosecond, .timeout = 120) {
    rotor_chip chip, mesh;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, NULL), ROTOR_OK);
    mesh = chip;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_set(&mesh, "topology=mesh", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&mesh, "mesh_width=32", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&mesh, "mesh_height=46", &err), ROTOR_OK);
    rotor_pipeline_options po = {.model = "bert-base", .zoo = {.layers = 1, .seq = 16, .batch = 2}, .t10 = true,
                                 .program = true};
    rotor_pipeline pp;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &pp, &err), ROTOR_OK, "%s", err.msg);
    const rotor_program *p = &pp.program;
    int handoffs = 0, vendors = 0;
    for (int o = 0; o < p->nops; o++) {
        vendors += p->ops[o].vendor;
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++) handoffs += p->ops[o].handoff[t] >= 0;
    }
    cr_assert_gt(handoffs, 0);
    cr_assert_gt(vendors, 0);
    const rotor_chip *chips[2] = {&chip, &mesh};
    for (int k = 0; k < 2; k++) {
        rotor_replay_result whole, streamed;
        rotor_sim *sim;
        int64_t busy[1472];
        rotor_replay_options opt = {.core_busy_ps = busy};
        cr_assert_eq(rotor_replay(p, chips[k], NULL, &whole, &sim, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_replay(p, chips[k], &opt, &streamed, NULL, &err), ROTOR_OK, "%s", err.msg);
        /* each core's busy time, kept while streaming, is the sum of its
         * compute tasks' times in the whole run */
        int64_t *sum = calloc(1472, sizeof *sum), total = 0;
        for (int64_t id = 0; id < whole.stats.tasks; id++) {
            rotor_sim_task_info ti;
            rotor_sim_timing tm;
            cr_assert_eq(rotor_sim_task_info_of(sim, id, &ti, &err), ROTOR_OK, "%s", err.msg);
            cr_assert_eq(rotor_sim_task_timing(sim, id, &tm, &err), ROTOR_OK, "%s", err.msg);
            if (!ti.transfer) sum[ti.src] += tm.end_ps - tm.start_ps;
        }
        for (int c = 0; c < 1472; c++) {
            cr_assert_eq(busy[c], sum[c], "core %d: %lld ps busy, tasks say %lld", c, (long long)busy[c],
                         (long long)sum[c]);
            cr_assert_eq(rotor_sim_core_busy_ps(sim, c), sum[c]);
            total += busy[c];
        }
        cr_assert_gt(total, 0);
        free(sum);
        cr_assert_eq(whole.nops, p->nops);
        cr_assert_eq(streamed.nops, p->nops);
        double end = 0;
        for (int o = 0; o < p->nops; o++) {
            const rotor_replay_op *a = &whole.ops[o], *b = &streamed.ops[o];
            assert_same_phases(a, b, p->ops[o].name);
            cr_assert_eq(a->simulated_reduction_s, b->simulated_reduction_s, "%s", p->ops[o].name);
            /* the operator's span in the whole run ends where the streamed one does */
            int64_t s0, s1;
            rotor_sim_op_span(sim, o, &s0, &s1);
            end += b->simulated_s;
            cr_assert(fabs((double)s1 * 1e-12 - end) <= 1e-9 * end, "%s ends at %lld ps", p->ops[o].name,
                      (long long)s1);
        }
        if (k == 1) cr_assert_gt(whole.stats.stall_ps, 0, "the mesh contends");
        int64_t guess = rotor_replay_task_estimate(p);
        cr_assert(guess >= whole.stats.tasks / 2 && guess <= 4 * whole.stats.tasks,
                  "the task estimate %lld is within a factor of the %lld tasks", (long long)guess,
                  (long long)whole.stats.tasks);
        const rotor_sim_stats *x = &whole.stats, *y = &streamed.stats;
        cr_assert_eq(x->makespan_ps, y->makespan_ps);
        cr_assert_eq(x->tasks, y->tasks);
        cr_assert_eq(x->events, y->events);
        cr_assert_eq(x->transfers, y->transfers);
        cr_assert_eq(x->bytes, y->bytes);
        cr_assert_eq(x->stall_ps, y->stall_ps);
        cr_assert_eq(x->contended_ps, y->contended_ps);
        cr_assert_eq(x->compute_wait_ps, y->compute_wait_ps);
        cr_assert_eq(x->idle_ps, y->idle_ps);
        for (int c = 0; c < ROTOR_SIM_NCATS; c++) {
            cr_assert_eq(x->busy_ps[c], y->busy_ps[c]);
            cr_assert_eq(x->active_ps[c], y->active_ps[c]);
            cr_assert_eq(x->exposed_ps[c], y->exposed_ps[c]);
        }
        cr_assert_eq(x->link_util_mean, y->link_util_mean);
        cr_assert_eq(x->link_util_peak, y->link_util_peak);
        cr_assert_eq(whole.simulated_s, streamed.simulated_s);
        cr_assert(memcmp(x, y, sizeof *x) == 0, "every statistic agrees");
        rotor_sim_free(sim);
        rotor_replay_result_free(&whole);
        rotor_replay_result_free(&streamed);
    }
    rotor_pipeline_free(&pp);
}

/* An operator whose inputs are handed off, but whose cores already hold
 * every element they need (ResNet-18's second residual Add of each stage:
 * its plan keeps the producer's layout), still gathers its other setup
 * bytes: that setup joins the exchange's schedule and must be sent once,
 * not also in rounds (it was sent twice: sim/model 1.25-1.29).  Under the
 * sanitizers the first stage alone (zoo layers = 1: a third of the
 * searches), whose Add is such an operator too (tests/san.h). */
Test(replay, a_hand_off_with_nothing_to_move_sends_the_rest_of_the_setup_once, .timeout = 120) {
    rotor_chip chip;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, NULL), ROTOR_OK);
    rotor_error err = {{0}};
    const int stages = ROTOR_TEST_SAN ? 1 : 4;
    rotor_pipeline_options po = {.model = "resnet-18",
                                 .zoo = {.batch = 4, .layers = ROTOR_TEST_SAN ? 1 : 0},
                                 .t10 = true,
                                 .program = true};
    rotor_pipeline pp;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &pp, &err), ROTOR_OK, "%s", err.msg);
    rotor_replay_result r;
    cr_assert_eq(rotor_replay(&pp.program, &chip, NULL, &r, NULL, &err), ROTOR_OK, "%s", err.msg);
    int checked = 0;
    for (int o = 0; o < r.nops; o++) {
        const rotor_program_op *op = &pp.program.ops[o];
        if (!strstr(op->name, ".b1.add")) continue;
        bool handed = false;
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++) handed |= op->handoff[t] > 0;
        cr_assert(handed && op->setup_bytes > 0, "%s has a hand-off and setup bytes", op->name);
        cr_assert(fabs(r.ops[o].simulated_s / r.ops[o].predicted_s - 1) < 0.01, "%s: simulated %.6g, model %.6g s",
                  op->name, r.ops[o].simulated_s, r.ops[o].predicted_s);
        checked++;
    }
    cr_assert_eq(checked, stages, "one per stage");
    rotor_replay_result_free(&r);
    rotor_pipeline_free(&pp);
}

/* ---- pipelined segments (docs/simulator.md, "Replay", "Segments") ---------- */

/* NeRF at batch 1's side-by-side segment replays to the picosecond: its
 * test is tests/test_segment.c's nerf_at_batch_1_runs_sigma_and_feature_side_by_side,
 * which checks the segment the compiler picks and replays that one compile
 * (the compile is the cost: it was done twice, here and there). */

/* A streamed segment replays step by step as its model (segment.h): moves
 * and runs in separate phases, so no port is shared with a plan's shifts.
 * What is left between the two: a move's pieces from several senders into
 * one receiver, and the barriers.  Issue 25's acceptance: within 5 % per
 * segment; and contention only delays, so never below the model (but for
 * the simulator's whole picoseconds). */
Test(replay, a_streamed_segment_replays_within_5_percent_of_its_model, .timeout = 120) {
    rotor_chip chip;
    rotor_graph g;
    rotor_program p;
    mlp_pipelined(&chip, &g, NULL, &p);
    cr_assert_geq(p.nsegments, 1);
    bool streamed = false;
    for (int i = 0; i < p.nsegments; i++)
        for (int k = 0; k < p.segments[i].nstages; k++) streamed |= p.segments[i].stages[k].streamed[1];
    cr_assert(streamed, "some stage reads its producer run by run");
    rotor_replay_result r = replay(&p, &chip);
    for (int i = 0; i < p.nsegments; i++) {
        const rotor_replay_op *x = &r.ops[p.segments[i].first];
        cr_assert_eq(x->segment, i + 1);
        cr_assert_eq(x->predicted_s, p.segments[i].total_s);
        cr_assert(x->simulated_s >= x->predicted_s * (1 - 1e-5) && x->simulated_s <= 1.05 * x->predicted_s,
                  "segment %d: simulated %.6g, model %.6g s", i + 1, x->simulated_s, x->predicted_s);
    }
    cr_assert(fabs(r.predicted_s - p.total_s) <= 1e-12 * p.total_s, "the entries sum to the program's total");
    rotor_replay_result_free(&r);
    rotor_program_free(&p);
    rotor_graph_free(&g);
}

/* Streaming goes segment by segment as operator by operator: a pipelined
 * program replayed whole and streamed agrees in every entry and every
 * statistic, to the picosecond; and the task estimate (which sizes the
 * trace's default filter) counts the segments' tasks. */
Test(replay, a_pipelined_program_streamed_equals_the_whole_run_to_the_picosecond, .timeout = 120) {
    rotor_chip chip;
    rotor_graph g;
    rotor_program prog;
    rotor_error err = {{0}};
    mlp_pipelined(&chip, &g, NULL, &prog);
    const rotor_program *p = &prog;
    cr_assert_gt(p->nsegments, 0);
    rotor_replay_result whole, streamed;
    rotor_sim *sim;
    cr_assert_eq(rotor_replay(p, &chip, NULL, &whole, &sim, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_replay(p, &chip, NULL, &streamed, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(whole.nops, streamed.nops);
    for (int o = 0; o < p->nops; o++) {
        const rotor_replay_op *a = &whole.ops[o], *b = &streamed.ops[o];
        cr_assert_eq(a->segment, b->segment, "%s", p->ops[o].name);
        assert_same_phases(a, b, p->ops[o].name);
        cr_assert_eq(a->predicted_s, b->predicted_s, "%s", p->ops[o].name);
    }
    cr_assert(memcmp(&whole.stats, &streamed.stats, sizeof whole.stats) == 0, "every statistic agrees");
    cr_assert_eq(whole.simulated_s, streamed.simulated_s);
    int64_t guess = rotor_replay_task_estimate(p);
    cr_assert(guess >= whole.stats.tasks / 2 && guess <= 4 * whole.stats.tasks,
              "the task estimate %lld is within a factor of the %lld tasks", (long long)guess,
              (long long)whole.stats.tasks);
    rotor_sim_free(sim);
    rotor_replay_result_free(&whole);
    rotor_replay_result_free(&streamed);
    rotor_program_free(&prog);
    rotor_graph_free(&g);
}

/* An operator over quantized integers replays on its own chip, as the
 * compiler priced it (rotor_chip_for_op): an FFN stack of uint8 values on
 * ipu-mk2 with int8_tops 500 replays as the float stack on a chip of
 * 1-byte elements at 500 TFLOP/s, to the picosecond and byte for byte in
 * its SRAM counts.  The replay took the chip's FP16 rate and 2 bytes
 * until 2026-12-02 (four QLinearMatMuls: +45 % against the model). */
Test(replay, an_8_bit_operator_replays_at_its_own_rate_and_element_size) {
    rotor_graph q, f;
    rotor_chip chip, same;
    ffn_uint8_pair(&q, &f, &chip, &same);
    rotor_compile_options o = {0};
    rotor_program pq, pf;
    compiled_program(&q, &chip, &o, NULL, &pq);
    compiled_program(&f, &same, &o, NULL, &pf);
    rotor_replay_result rq, rf;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_replay(&pq, &chip, NULL, &rq, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_replay(&pf, &same, NULL, &rf, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rq.predicted_s, rf.predicted_s);
    cr_assert_eq(rq.simulated_s, rf.simulated_s, "%.9g against %.9g us", rq.simulated_s * 1e6, rf.simulated_s * 1e6);
    cr_assert_float_eq(rq.simulated_s, rq.predicted_s, 0.05 * rq.predicted_s);
    rotor_energy_counts eq = rotor_sim_energy_counts(&rq.stats), ef = rotor_sim_energy_counts(&rf.stats);
    cr_assert_eq(eq.sram_read_bytes, ef.sram_read_bytes);
    cr_assert_eq(eq.sram_write_bytes, ef.sram_write_bytes);
    cr_assert_gt(eq.sram_read_bytes, 0);
    rotor_replay_result_free(&rq);
    rotor_replay_result_free(&rf);
    rotor_program_free(&pq);
    rotor_program_free(&pf);
    rotor_graph_free(&q);
    rotor_graph_free(&f);
}
