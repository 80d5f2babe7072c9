/* test_run.c — a whole graph on real data (src/run/run.c, src/run/kernels.c;
 * docs/run.md): the planned run equals the direct one, a program without
 * the hand-off its plans need fails naming the operator, the compiler's
 * SRAM promise is checked, and element views read the right elements. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/program.h"
#include "rotor/compile/segment.h"
#include "rotor/op/search.h"
#include "rotor/run/run.h"

/* X[64x32] -> MatMul(W[32x48]) -> Relu -> Y: the Relu reads the MatMul's
 * output element for element, so the compiler hands it off. */
static void chain(rotor_graph *g, int *x) {
    rotor_error err = {{0}};
    int w, h, y;
    rotor_graph_init(g, "chain");
    cr_assert_eq(rotor_graph_add_value(g, "x", ROTOR_DTYPE_F32, 2, (int64_t[]){64, 32}, ROTOR_ROLE_ACTIVATION, x,
                                       &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(g, "w", ROTOR_DTYPE_F32, 2, (int64_t[]){32, 48}, ROTOR_ROLE_WEIGHT, &w, &err),
                 ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(g, "h", ROTOR_DTYPE_F32, 2, (int64_t[]){64, 48}, ROTOR_ROLE_ACTIVATION, &h,
                                       &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(g, "y", ROTOR_DTYPE_F32, 2, (int64_t[]){64, 48}, ROTOR_ROLE_ACTIVATION, &y,
                                       &err), ROTOR_OK);
    double wd[32 * 48];
    for (int k = 0; k < 32 * 48; k++) wd[k] = sin(k * 0.37);
    cr_assert_eq(rotor_graph_set_data(g, w, wd, &err), ROTOR_OK);
    rotor_op_desc mm = {.name = "mm", .type = "MatMul", .expr = "Y[m,n] += A[m,k] * B[k,n]", .dims = "m=64,k=32,n=48",
                        .tensor_value = {h, *x, w}, .inputs = (int[]){*x, w}, .ninputs = 2, .outputs = &h,
                        .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(g, &mm, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_op_desc relu = {.name = "act", .type = "Relu", .expr = "Y[m,n] = relu(X[m,n])", .dims = "m=64,n=48",
                          .tensor_value = {y, h, -1}, .inputs = &h, .ninputs = 1, .outputs = &y, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(g, &relu, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_set_output(g, y, &err), ROTOR_OK);
}

static void program_of(const rotor_graph *g, const rotor_chip *chip, rotor_program *p) {
    rotor_error err = {{0}};
    rotor_compile_result r;
    cr_assert_eq(rotor_compile(g, chip, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    char *text = NULL;
    cr_assert_eq(rotor_program_write(g, chip, &r, &text, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_parse(text, "chain", chip, p, &err), ROTOR_OK, "%s", err.msg);
    free(text);
    rotor_compile_result_free(&r);
}

static double *inputs_for(const rotor_graph *g, int x, double **in) {
    double *d = malloc(sizeof *d * 64 * 32);
    for (int k = 0; k < 64 * 32; k++) d[k] = cos(k * 0.11);
    for (int v = 0; v < g->nvalues; v++) in[v] = v == x ? d : NULL;
    return d;
}

/* The chain compiled for ipu-mk2, its program, and the input x. */
typedef struct compiled {
    rotor_chip chip;
    rotor_graph g;
    rotor_program p;
    double *in[8];
    double *x;
} compiled;

static void compiled_make(compiled *c) {
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c->chip, &err), ROTOR_OK);
    int x;
    chain(&c->g, &x);
    program_of(&c->g, &c->chip, &c->p);
    c->x = inputs_for(&c->g, x, c->in);
}

static void compiled_free(compiled *c) {
    free(c->x);
    rotor_program_free(&c->p);
    rotor_graph_free(&c->g);
}

Test(run, planned_run_equals_direct_and_the_program_hands_off) {
    compiled c;
    compiled_make(&c);
    rotor_graph *const g = &c.g;
    double **in = c.in;
    rotor_error err = {{0}};
    cr_assert_eq(c.p.ops[1].handoff[1], 1, "the Relu takes the MatMul's output where it lies");
    rotor_run_options ro = {.program = &c.p, .chip = &c.chip};
    rotor_run_result planned, direct;
    cr_assert_eq(rotor_run(g, (const double *const *)in, &ro, &planned, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_run(g, (const double *const *)in, NULL, &direct, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(planned.ops_emulated, 2);
    cr_assert_eq(direct.ops_direct, 2);
    int y = rotor_graph_find_value(g, "y");
    double worst = 0;
    for (int k = 0; k < 64 * 48; k++) {
        double e = fabs(planned.values[y][k] - direct.values[y][k]);
        worst = e > worst ? e : worst;
        cr_assert_geq(direct.values[y][k], 0.0);
    }
    cr_assert_lt(worst, 1e-4, "largest error %g", worst);
    /* the value itself, straight from the definition */
    double ref = 0;
    for (int k = 0; k < 32; k++) ref += cos((5 * 32 + k) * 0.11) * sin((k * 48 + 7) * 0.37);
    cr_assert_float_eq(direct.values[y][5 * 48 + 7], ref > 0 ? ref : 0, 1e-9);
    rotor_run_result_free(&planned);
    rotor_run_result_free(&direct);
    compiled_free(&c);
}

Test(run, a_program_without_its_hand_off_fails_naming_the_operator) {
    compiled c;
    compiled_make(&c);
    c.p.ops[1].handoff[1] = 0; /* edited away: the Relu now reads an even layout nothing wrote */
    rotor_run_options ro = {.program = &c.p, .chip = &c.chip};
    rotor_run_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_run(&c.g, (const double *const *)c.in, &ro, &r, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "op 'act' (Relu): tensor X gathers 'h' from the even layout, but op 'mm' left it"),
              "%s", err.msg);
    cr_assert_null(r.values);
    compiled_free(&c);
}

Test(run, a_plan_that_outgrows_the_sram_the_compiler_left_fails_naming_it) {
    compiled c;
    compiled_make(&c);
    /* claim the others' idle layouts fill the SRAM but 64 bytes */
    c.p.idle_bytes = c.p.ops[0].idle_bytes + c.chip.sram_bytes - c.p.ops[0].live_bytes - 64;
    rotor_run_options ro = {.program = &c.p, .chip = &c.chip};
    rotor_run_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_run(&c.g, (const double *const *)c.in, &ro, &r, &err), ROTOR_ERR_NOFIT);
    cr_assert(strstr(err.msg, "op 'mm' (MatMul)"), "%s", err.msg);
    compiled_free(&c);
}

Test(run, a_view_reads_a_reversed_strided_slice_and_padding) {
    /* Y[i] = X[i] over X[10] with offset 8, step -3: X[8], X[5], X[2]; and a
     * window starting one before X (padding reads 0) */
    rotor_error err = {{0}};
    rotor_graph g;
    rotor_graph_init(&g, "views");
    int x, y, z;
    cr_assert_eq(rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 1, (int64_t[]){10}, ROTOR_ROLE_ACTIVATION, &x, &err),
                 ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 1, (int64_t[]){3}, ROTOR_ROLE_ACTIVATION, &y, &err),
                 ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "z", ROTOR_DTYPE_F32, 1, (int64_t[]){10}, ROTOR_ROLE_ACTIVATION, &z, &err),
                 ROTOR_OK);
    rotor_view v[ROTOR_MAX_TENSORS] = {{0}};
    v[1] = (rotor_view){.set = true, .dim = {0}, .step = {-3}, .offset = {8}};
    rotor_op_desc s = {.name = "slice", .type = "Slice", .expr = "Y[i] = X[i]", .dims = "i=3",
                       .tensor_value = {y, x}, .inputs = &x, .ninputs = 1, .outputs = &y, .noutputs = 1, .view = v};
    cr_assert_eq(rotor_graph_add_op(&g, &s, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_view w[ROTOR_MAX_TENSORS] = {{0}};
    w[1] = (rotor_view){.set = true, .dim = {0}, .step = {1}, .offset = {-1}};
    rotor_op_desc sh = {.name = "shift", .type = "Pad", .expr = "Y[i] = X[i]", .dims = "i=10",
                        .tensor_value = {z, x}, .inputs = &x, .ninputs = 1, .outputs = &z, .noutputs = 1, .view = w};
    cr_assert_eq(rotor_graph_add_op(&g, &sh, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_set_output(&g, y, &err);
    rotor_graph_set_output(&g, z, &err);
    double xd[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    double *in[3] = {xd, NULL, NULL};
    rotor_run_result r;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.values[y][0], 8);
    cr_assert_eq(r.values[y][1], 5);
    cr_assert_eq(r.values[y][2], 2);
    cr_assert_eq(r.values[z][0], 0);
    cr_assert_eq(r.values[z][1], 0);
    cr_assert_eq(r.values[z][9], 8);
    rotor_run_result_free(&r);
    /* a view naming a dimension the value lacks is refused when added */
    rotor_view bad[ROTOR_MAX_TENSORS] = {{0}};
    bad[1] = (rotor_view){.set = true, .dim = {1}, .step = {1}};
    s.name = "bad";
    s.view = bad;
    int y2;
    cr_assert_eq(rotor_graph_add_value(&g, "y2", ROTOR_DTYPE_F32, 1, (int64_t[]){3}, ROTOR_ROLE_ACTIVATION, &y2, &err),
                 ROTOR_OK);
    s.tensor_value[0] = y2;
    s.outputs = &y2;
    cr_assert_eq(rotor_graph_add_op(&g, &s, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "maps dimension 0 to value dimension 1 of 'x', which has rank 1"), "%s", err.msg);
    rotor_graph_free(&g);
}

Test(run, a_vendor_op_without_a_kernel_is_refused_by_type) {
    rotor_error err = {{0}};
    rotor_graph g;
    rotor_graph_init(&g, "k");
    int x, y;
    rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 1, (int64_t[]){4}, ROTOR_ROLE_ACTIVATION, &x, &err);
    rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 1, (int64_t[]){4}, ROTOR_ROLE_ACTIVATION, &y, &err);
    rotor_op_desc d = {.name = "nms", .type = "Frobnicate", .inputs = &x, .ninputs = 1, .outputs = &y, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &d, NULL, &err), ROTOR_OK);
    rotor_graph_set_output(&g, y, &err);
    double xd[4] = {1, 2, 3, 4};
    double *in[2] = {xd, NULL};
    rotor_run_result r;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, NULL, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "op 'nms' (Frobnicate): rotor has no reference kernel for this vendor op");
    cr_assert(!rotor_run_has_kernel("Frobnicate"));
    cr_assert(rotor_run_has_kernel("MaxPool"));
    rotor_graph_free(&g);
}

/* A kernel reads a small float constant parameter from the attribute "@K"
 * the ONNX lowering keeps it in: LayerNormalization over rows of 4, eps 0,
 * scale 2 and bias 0.5 as "@1" and "@2".  Row [1, 2, 3, 4]: mean 2.5,
 * variance 1.25, so y0 = -1.5 / sqrt(1.25) * 2 + 0.5.  (The bias was
 * silently dropped before.) */
Test(run, a_kernel_reads_constant_parameters_from_their_attributes) {
    rotor_error err = {{0}};
    rotor_graph g;
    rotor_graph_init(&g, "ln");
    int x, y, op;
    cr_assert_eq(rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 4}, ROTOR_ROLE_ACTIVATION, &x, &err),
                 ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 4}, ROTOR_ROLE_ACTIVATION, &y, &err),
                 ROTOR_OK);
    rotor_op_desc d = {.name = "ln", .type = "LayerNormalization", .inputs = &x, .ninputs = 1, .outputs = &y,
                       .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &d, &op, &err), ROTOR_OK, "%s", err.msg);
    const double scale[4] = {2, 2, 2, 2}, bias[4] = {0.5, 0.5, 0.5, 0.5}, eps = 0;
    const int64_t pos[1] = {0};
    cr_assert_eq(rotor_graph_add_attr(&g, op, "@1", NULL, 0, scale, 4, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_add_attr(&g, op, "@2", NULL, 0, bias, 4, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_add_attr(&g, op, "@in", pos, 1, NULL, 0, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_add_attr(&g, op, "epsilon", NULL, 0, &eps, 1, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_set_output(&g, y, &err);
    double xd[8] = {1, 2, 3, 4, 0, 0, 0, 8};
    double *in[2] = {xd, NULL};
    rotor_run_result r;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(r.values[y][0], -1.5 / sqrt(1.25) * 2 + 0.5, 1e-12);
    cr_assert_float_eq(r.values[y][3], 1.5 / sqrt(1.25) * 2 + 0.5, 1e-12);
    /* row [0, 0, 0, 8]: mean 2, variance 12 */
    cr_assert_float_eq(r.values[y][7], 6 / sqrt(12.0) * 2 + 0.5, 1e-12);
    rotor_run_result_free(&r);
    rotor_graph_free(&g);
}

/* ---- pipelined segments (docs/run.md, "Pipelined segments") ---------------- */

static void mlp_program(const rotor_graph *g, const rotor_chip *chip, bool pipeline, rotor_program *p) {
    rotor_compile_options piped = MLP_PIPELINE, flat = {0};
    compiled_program(g, chip, pipeline ? &piped : &flat, NULL, p);
}

/* Issue 25: a pipelined program gives the outputs of the unpipelined one.
 * On a 256-core IPU the compiler streams the MLP's layers in micro-batches
 * (segments of MatMul, Add and Relu over the columns or rows); every stage
 * runs its stage plan run by run on its group, and the outputs match the
 * unpipelined program's and the direct execution's. */
Test(run, a_pipelined_program_gives_the_unpipelined_outputs) {
    rotor_error err = {{0}};
    rotor_chip chip;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=256", &err), ROTOR_OK, "%s", err.msg);
    rotor_graph g;
    int x;
    mlp_graph(&g, &x);
    rotor_program flat, piped;
    mlp_program(&g, &chip, false, &flat);
    mlp_program(&g, &chip, true, &piped);
    cr_assert_eq(flat.nsegments, 0);
    cr_assert_geq(piped.nsegments, 1);
    /* not vacuous: some stage streams in more than one run */
    int64_t runs = 0, most = 0;
    for (int s = 0; s < piped.nsegments; s++)
        for (int k = 0; k < piped.segments[s].nstages; k++) {
            runs += piped.segments[s].stages[k].runs;
            if (piped.segments[s].stages[k].runs > most) most = piped.segments[s].stages[k].runs;
        }
    cr_assert_gt(most, 1, "no stage runs in micro-batches");
    double *xd = malloc(sizeof *xd * 512 * 64);
    for (int k = 0; k < 512 * 64; k++) xd[k] = cos(k * 0.013);
    double **in = calloc((size_t)g.nvalues, sizeof *in);
    in[x] = xd;
    rotor_run_options ro = {.program = &flat, .chip = &chip};
    rotor_run_result a, b, direct;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, &ro, &a, &err), ROTOR_OK, "%s", err.msg);
    ro.program = &piped;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, &ro, &b, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_run(&g, (const double *const *)in, NULL, &direct, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(a.segments_run, 0);
    cr_assert_eq(a.stage_runs, 0);
    cr_assert_eq(b.segments_run, piped.nsegments);
    cr_assert_eq(b.stage_runs, runs, "every run of every stage emulated");
    cr_assert_eq(b.ops_emulated, 8);
    int y = rotor_graph_find_value(&g, "add3");
    cr_assert_eq(rotor_run_compare(b.values[y], a.values[y], 512 * 4, false).bad, 0, "pipelined vs unpipelined");
    cr_assert_eq(rotor_run_compare(a.values[y], direct.values[y], 512 * 4, false).bad, 0, "unpipelined vs direct");
    cr_assert_eq(rotor_run_compare(b.values[y], direct.values[y], 512 * 4, false).bad, 0, "pipelined vs direct");
    /* and every intermediate value the segments wrote, element for element */
    for (int v = 0; v < g.nvalues; v++)
        if (g.values[v].producer >= 0)
            cr_assert_eq(rotor_run_compare(b.values[v], direct.values[v], g.values[v].elements, false).bad, 0, "'%s'",
                         g.values[v].name);
    /* the emulated time follows the segments' recursion: the model's total */
    cr_assert_float_eq(b.emulated_s, piped.total_s, 1e-3 * piped.total_s);
    rotor_run_result_free(&a);
    rotor_run_result_free(&b);
    rotor_run_result_free(&direct);
    free(in);
    free(xd);
    rotor_program_free(&flat);
    rotor_program_free(&piped);
    rotor_graph_free(&g);
}

/* The pipeline starts a streamed stage's run i after its producer's run i
 * alone, so a run must read nothing else.  Edited so that the MLP's second
 * Add (streamed over the columns, as the MatMul before it) runs over rows
 * instead, its run 1 reads columns the MatMul writes in later runs: the run
 * refuses the program, naming the tensor, the run and the element. */
Test(run, a_stage_reading_what_its_producer_has_not_written_yet_is_refused) {
    rotor_error err = {{0}};
    rotor_chip chip;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=256", &err), ROTOR_OK, "%s", err.msg);
    rotor_graph g;
    int x;
    mlp_graph(&g, &x);
    rotor_program p;
    mlp_program(&g, &chip, true, &p);
    /* the segment mm2 .. add2, add2 streamed from mm2 over the columns */
    cr_assert_geq(p.nsegments, 1);
    rotor_segment *sg = &p.segments[0];
    cr_assert_eq(sg->first, 3);
    cr_assert_eq(sg->dim, 1);
    cr_assert_gt(sg->micro, 1);
    rotor_stage *add = &sg->stages[1];
    cr_assert(add->streamed[1], "add2 reads mm2 run for run");
    const rotor_expr *e = &g.ops[4].expr;
    add->axis = rotor_expr_axis(e, "m");
    cr_assert_eq(rotor_segment_micro_expr(e, add->axis, sg->micro, &add->micro, &err), ROTOR_OK, "%s", err.msg);
    rotor_chip gc = rotor_segment_group_chip(&chip, add->cores);
    rotor_search_options so = {0};
    rotor_search_result r;
    cr_assert_eq(rotor_search(&add->micro, &gc, &so, &r, &err), ROTOR_OK, "%s", err.msg);
    add->plan = r.best;
    rotor_search_result_free(&r);
    double *xd = calloc(512 * 64, sizeof *xd);
    double **in = calloc((size_t)g.nvalues, sizeof *in);
    in[x] = xd;
    rotor_run_options ro = {.program = &p, .chip = &chip};
    rotor_run_result res;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, &ro, &res, &err), ROTOR_ERR_INPUT);
    /* run 1 holds the first 512 / micro rows: their column 0 came in mm2's run 1, column
     * 256 / micro in its run 2 */
    char want[200];
    snprintf(want, sizeof want, "op 'add2' (Add): the segment streams tensor A run for run, but run 1 reads element "
             "%lld of 'mm2', which its producer wrote in run 2", (long long)(256 / sg->micro));
    cr_assert_str_eq(err.msg, want);
    cr_assert_null(res.values);
    free(in);
    free(xd);
    rotor_program_free(&p);
    rotor_graph_free(&g);
}
