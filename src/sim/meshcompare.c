/* meshcompare.c — rotor's own plan beside the mesh baselines (issue 41,
 * acceptance "GEMM and GEMV on a 32 x 32 mesh"; docs/mesh.md, "rotor
 * against the baselines on 32 x 32"; include/rotor/sim/meshbase.h).
 *
 * Decisions (docs/mesh.md gives the reasons):
 *  - rotor's plan is the exact search's fastest on the chip, laid on the
 *    mesh by op/meshmap.c (the search prices every plan there), replayed by
 *    rotor_replay_plan from its step-0 layout with no setup, as each
 *    baseline starts in its own layout.  Its transfers move whole (packet
 *    0), as the baselines' do.  That start may hold replicas (R_X > 1
 *    rings of an input): T10's premise, which the baselines do not get,
 *    since they build their copies by broadcasts.  So, with with_setup:
 *  - the same GEMM compiled as a one-operator program whose two inputs
 *    are activations in the even layout (each element once, spread over
 *    every core; no weight is pre-placed, so nothing starts replicated),
 *    replayed with its setup by rotor_replay: what rotor does when it has
 *    to build its layout, as SUMMA and Cannon do.
 *  - Each baseline runs on the grid its own prediction chooses
 *    (rotor_meshbase_run); "faster" compares simulated makespans to the
 *    picosecond. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/compile/program.h"
#include "rotor/model/graph.h"
#include "rotor/sim/meshbase.h"
#include "rotor/sim/replay.h"

/* The one-operator graph of e: every tensor a value of its dimensions'
 * extents (FP16: the chip's element size is what floats are costed at,
 * compile/opelem.c), the inputs activations, the output the model's. */
static rotor_status one_op_graph(const rotor_expr *e, rotor_graph *g, rotor_error *err) {
    int tv[ROTOR_MAX_TENSORS], in[ROTOR_MAX_TENSORS];
    rotor_status st = ROTOR_OK;
    for (int t = 0; t < e->ntensors && !st; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t shape[ROTOR_MAX_DIMS];
        for (int d = 0; d < x->ndims; d++) shape[d] = e->extent[x->dims[d].axis[0]];
        st = rotor_graph_add_value(g, x->name, ROTOR_DTYPE_F16, x->ndims, shape, ROTOR_ROLE_ACTIVATION, &tv[t], err);
        if (t) in[t - 1] = tv[t];
    }
    rotor_op_desc d = {.name = "gemm", .type = "MatMul", .inputs = in, .ninputs = e->ntensors - 1,
                       .outputs = &tv[0], .noutputs = 1};
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = t < e->ntensors ? tv[t] : -1;
    if (!st) st = rotor_graph_add_bound_op(g, &d, e, NULL, err);
    if (!st) st = rotor_graph_set_output(g, tv[0], err);
    return st;
}

/* The one-operator program compiled and replayed with its setup. */
static rotor_status compiled_run(const rotor_expr *e, const rotor_chip *chip, int threads,
                                 rotor_meshbase_compiled *out, rotor_error *err) {
    rotor_graph g;
    rotor_graph_init(&g, "gemm");
    rotor_compile_options co = {.threads = threads};
    rotor_compile_result cr = {0};
    rotor_program prog = {0};
    rotor_replay_result rr = {0};
    rotor_status st = one_op_graph(e, &g, err);
    if (!st) st = rotor_compile(&g, chip, &co, &cr, err);
    if (!st) st = rotor_program_roundtrip(&g, chip, &cr, "the GEMM's program", &prog, err);
    if (!st) st = rotor_replay(&prog, chip, NULL, &rr, NULL, err);
    if (!st) {
        *out = (rotor_meshbase_compiled){.plan = prog.ops[0].active, .info = prog.ops[0].active_info,
                                         .predicted_s = rr.predicted_s, .simulated_s = rr.simulated_s,
                                         .setup_s = rr.ops[0].simulated_setup_s};
    } else {
        rotor_error_prefix(err, "rotor's program");
    }
    rotor_replay_result_free(&rr);
    rotor_program_free(&prog);
    rotor_compile_result_free(&cr);
    rotor_graph_free(&g);
    return st;
}

/* rotor's plan: the search, its mesh layout and its replay from step 0. */
static rotor_status plan_run(const rotor_expr *e, const rotor_chip *chip, int threads, rotor_meshbase_compare *out,
                             int64_t *ps, rotor_error *err) {
    rotor_search_options so = {.threads = threads};
    rotor_search_result sr;
    rotor_status st = rotor_search(e, chip, &so, &sr, err);
    if (st) {
        rotor_error_prefix(err, "rotor's plan");
        return st;
    }
    out->rotor = sr.best;
    rotor_search_result_free(&sr);
    const rotor_candidate *r = &out->rotor;
    out->predicted_s = r->cost.total;
    st = rotor_mesh_map_plan(e, chip, &r->plan, &r->info, &out->map, err);
    if (!st) st = rotor_replay_plan(e, &r->plan, &r->info, chip, 0, ps, &out->link_busy_ps, err);
    out->simulated_s = (double)*ps * 1e-12;
    return st;
}

rotor_status rotor_meshbase_compare_run(const rotor_expr *e, const rotor_chip *chip,
                                        const rotor_meshbase_compare_options *opt, rotor_meshbase_compare *out,
                                        rotor_error *err) {
    memset(out, 0, sizeof *out);
    rotor_meshbase_compare_options o = opt ? *opt : (rotor_meshbase_compare_options){0};
    int64_t ps = 0;
    rotor_status st = rotor_meshbase_check(e, chip, "baselines", err);
    if (!st) st = plan_run(e, chip, o.threads, out, &ps, err);
    if (!st && o.with_setup) st = compiled_run(e, chip, o.threads, &out->compiled, err);
    int64_t cps = llround(out->compiled.simulated_s * 1e12);
    for (int k = 0; k < ROTOR_MESHBASE_NKINDS && !st; k++) {
        rotor_meshbase_entry *x = &out->base[k];
        rotor_error be = {{0}};
        x->status = rotor_meshbase_run(e, chip, (rotor_meshbase_kind)k, NULL, &x->res, &be);
        if (x->status == ROTOR_ERR_NOMEM) st = rotor_nomem(err);
        if (x->status) {
            snprintf(x->why, sizeof x->why, "%s", be.msg);
            continue;
        }
        int64_t b = x->res.stats.makespan_ps;
        out->applied++;
        out->faster += b < ps;
        out->faster_than_compiled += o.with_setup && b < cps;
    }
    if (st) memset(out, 0, sizeof *out);
    return st;
}
