/* test_quant.c — ONNX's quantized operators (docs/onnx.md, docs/run.md and
 * docs/cost-model.md, "Quantized operators", "Element types"): the
 * acceptance sets of libonnx-testdata run exactly through rotor run's
 * library API, the float32 exactness bound of a planned quantized
 * contraction, ONNX's rounding and saturation, the checks of scales and
 * zero points, and the cost of an int8 contraction against a float one. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "onnxbuild.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/opelem.h"
#include "rotor/compile/program.h"
#include "rotor/op/cost.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/run/run.h"

#define TESTDATA "/usr/share/libonnx-testdata/data/node"

/* ---- building quantized models ------------------------------------------------------------------ */

enum { U8 = ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, I8 = ONNX__TENSOR_PROTO__DATA_TYPE__INT8,
       I32 = ONNX__TENSOR_PROTO__DATA_TYPE__INT32, F32 = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT };

static void q_input(mb *b, const char *name, int type, int rank, const int64_t *dims) {
    b->inputs[b->graph.n_input++] = mb_vi(b, name, type, rank, dims);
}

/* An initializer of type u8, i8, i32 or f32 with its values as raw_data. */
static void q_init(mb *b, const char *name, int type, int rank, const int64_t *dims, const double *v) {
    Onnx__TensorProto *t = mb_init_tensor(b, name, type, rank, dims, NULL);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    size_t w = type == U8 || type == I8 ? 1 : 4;
    uint8_t *raw = mb_alloc(b, w * (size_t)(n ? n : 1));
    for (int64_t k = 0; k < n; k++) {
        if (type == U8) raw[k] = (uint8_t)v[k];
        else if (type == I8) raw[k] = (uint8_t)(int8_t)v[k];
        else if (type == I32) {
            int32_t x = (int32_t)v[k];
            memcpy(raw + 4 * k, &x, 4);
        } else {
            float x = (float)v[k];
            memcpy(raw + 4 * k, &x, 4);
        }
    }
    t->has_raw_data = 1;
    t->raw_data.len = w * (size_t)n;
    t->raw_data.data = raw;
}

/* ipu-mk2, rotor run's default chip. */
static rotor_chip q_chip(void) {
    rotor_chip chip;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK);
    return chip;
}

/* Loads b with the weights' elements (rotor run's import). */
static rotor_status q_load(mb *b, rotor_graph *g, rotor_error *err) {
    rotor_onnx_options o = {.keep_data = true};
    rotor_onnx_stats st;
    return mb_load(b, &o, g, &st, err);
}

/* Ends b with node `op` named name (inputs ins, output Y) and loads it into
 * g, which must import. */
static void q_finish(mb *b, const char *op, const char *name, const char *ins, rotor_graph *g) {
    mb_node(b, op, name, ins, "Y");
    mb_output(b, "Y");
    rotor_error err = {{0}};
    cr_assert_eq(q_load(b, g, &err), ROTOR_OK, "%s", err.msg);
    mb_free(b);
}

/* ---- the acceptance sets (libonnx-testdata) -------------------------------------------------------- */

/* Runs set 0 of testdata model `name` planned (ipu-mk2) and directly through
 * the library, as rotor run --check does, and requires every output to
 * equal its reference: exactly for integers, within run's tolerance for
 * float32.  Returns the number of reference elements compared. */
static int64_t check_set(const char *name) {
    char dir[512], path[600];
    snprintf(dir, sizeof dir, TESTDATA "/%s", name);
    if (access(dir, R_OK)) cr_skip_test("%s is absent (apt-get install libonnx-testdata)", dir);
    rotor_error err = {{0}};
    rotor_chip chip = q_chip();
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    rotor_pipeline_options po = {.model = path, .zoo = {.batch = 1}, .no_group = true, .t10 = true, .program = true};
    po.onnx.keep_data = true;
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    const rotor_graph *g = &p.graph;
    double **in = calloc((size_t)g->nvalues, sizeof *in);
    rotor_onnx_tensor t[16];
    int nin = 0;
    for (; nin < 16; nin++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, nin);
        if (access(path, R_OK)) break;
        cr_assert_eq(rotor_onnx_tensor_read(path, &t[nin], &err), ROTOR_OK, "%s", err.msg);
        int v = rotor_graph_find_value(g, t[nin].name);
        cr_assert_geq(v, 0, "%s: input '%s'", name, t[nin].name);
        in[v] = t[nin].data;
    }
    rotor_run_options ro = {.program = &p.program, .chip = &chip};
    rotor_run_result planned, direct;
    cr_assert_eq(rotor_run(g, (const double *const *)in, &ro, &planned, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(planned.ops_emulated + planned.ops_vendor, g->nops, "%s: every operator ran", name);
    ro.program = NULL;
    cr_assert_eq(rotor_run(g, (const double *const *)in, &ro, &direct, &err), ROTOR_OK, "%s", err.msg);
    int64_t compared = 0;
    bool *claimed = calloc((size_t)g->nvalues, sizeof *claimed);
    for (int i = 0; i < 16; i++) {
        rotor_onnx_tensor ref;
        snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", dir, i);
        if (access(path, R_OK)) break;
        cr_assert_eq(rotor_onnx_tensor_read(path, &ref, &err), ROTOR_OK, "%s", err.msg);
        /* by name, else (an output the file renames through an Identity) the
         * first graph output of its size not matched yet, in graph order */
        int v = rotor_graph_find_value(g, ref.name);
        for (int w = 0; v < 0 && w < g->nvalues; w++)
            if (g->values[w].is_output && !claimed[w] && g->values[w].elements == ref.elements) v = w;
        cr_assert_geq(v, 0, "%s: output '%s'", name, ref.name);
        claimed[v] = true;
        bool exact = g->values[v].dtype != ROTOR_DTYPE_F32;
        for (int64_t k = 0; k < ref.elements; k++) {
            double x = planned.values[v][k], d = direct.values[v][k], r = ref.data[k];
            if (exact) cr_assert(x == r && d == r, "%s: %s[%lld] is %g (direct %g), not %g", name, ref.name,
                                 (long long)k, x, d, r);
            else cr_assert_leq(fabs(x - r), 1e-5 + 1e-3 * fabs(r), "%s: %s[%lld]", name, ref.name, (long long)k);
        }
        compared += ref.elements;
        rotor_onnx_tensor_free(&ref);
    }
    for (int i = 0; i < nin; i++) rotor_onnx_tensor_free(&t[i]);
    free(claimed);
    free(in);
    rotor_run_result_free(&planned);
    rotor_run_result_free(&direct);
    rotor_pipeline_free(&p);
    return compared;
}

Test(quant, testdata_qlinearmatmul_2d_equals_its_reference_planned_and_direct) {
    cr_assert_eq(check_set("test_qlinearmatmul_2D"), 6);
}

Test(quant, testdata_qlinearmatmul_3d_equals_its_reference) { cr_assert_eq(check_set("test_qlinearmatmul_3D"), 12); }

Test(quant, testdata_qlinearconv_equals_its_reference) { cr_assert_eq(check_set("test_qlinearconv"), 49); }

Test(quant, testdata_matmulinteger_equals_its_reference) { cr_assert_eq(check_set("test_matmulinteger"), 8); }

Test(quant, testdata_convinteger_sets_equal_their_references) {
    cr_assert_eq(check_set("test_convinteger_with_padding"), 16);
    cr_assert_eq(check_set("test_convinteger_without_padding"), 4);
    cr_assert_eq(check_set("test_basic_convinteger"), 4);
}

Test(quant, testdata_dequantizelinear_sets_equal_their_references) {
    cr_assert_eq(check_set("test_dequantizelinear"), 4);
    cr_assert_eq(check_set("test_dequantizelinear_axis"), 18);
}

Test(quant, testdata_quantizelinear_sets_equal_their_references) {
    cr_assert_eq(check_set("test_quantizelinear"), 6);
    cr_assert_eq(check_set("test_quantizelinear_axis"), 18);
}

Test(quant, testdata_dynamicquantizelinear_and_its_expanded_form_equal_their_references) {
    cr_assert_eq(check_set("test_dynamicquantizelinear"), 8);
    cr_assert_eq(check_set("test_dynamicquantizelinear_max_adjusted"), 8);
    cr_assert_eq(check_set("test_dynamicquantizelinear_min_adjusted_expanded"), 14);
}

/* ---- exactness of a planned quantized contraction ------------------------------------------------- */

/* MatMulInteger Y[1,1] = A[1,K] B[K,1], uint8, zero points 0, B all 255
 * (an initializer), A a graph input. */
static void matmul_integer(rotor_graph *g, int64_t k) {
    mb b;
    mb_init(&b, 10);
    q_input(&b, "A", U8, DIMS(1, k));
    double *w = malloc(sizeof *w * (size_t)k);
    for (int64_t i = 0; i < k; i++) w[i] = 255;
    q_init(&b, "B", U8, DIMS(k, 1), w);
    q_finish(&b, "MatMulInteger", "mmi", "A B", g);
    free(w);
}

/* matmul_integer(k) run on A all 255: planned (status *planned_st, its
 * message in *perr) and directly (exact: its result in *y). */
static void run_both(int64_t k, rotor_status *planned_st, rotor_error *perr, double *y) {
    rotor_error err = {{0}};
    rotor_chip chip = q_chip();
    rotor_graph g;
    matmul_integer(&g, k);
    rotor_program p;
    compiled_program(&g, &chip, NULL, NULL, &p);
    double *a = malloc(sizeof *a * (size_t)k), *in[8] = {NULL};
    for (int64_t i = 0; i < k; i++) a[i] = 255;
    in[rotor_graph_find_value(&g, "A")] = a;
    rotor_run_options ro = {.program = &p, .chip = &chip};
    rotor_run_result r;
    *planned_st = rotor_run(&g, (const double *const *)in, &ro, &r, perr);
    if (!*planned_st) rotor_run_result_free(&r);
    ro.program = NULL;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, &ro, &r, &err), ROTOR_OK, "%s", err.msg);
    *y = r.values[rotor_graph_find_value(&g, "Y")][0];
    rotor_run_result_free(&r);
    rotor_program_free(&p);
    rotor_graph_free(&g);
    free(a);
}

/* 256 * 255 * 255 = 16,646,400 <= 2^24: every partial sum is exact in float32. */
Test(quant, a_contraction_within_2_pow_24_runs_planned_and_exact) {
    rotor_status st;
    rotor_error err = {{0}};
    double y;
    run_both(256, &st, &err, &y);
    cr_assert_eq(st, ROTOR_OK, "%s", err.msg);
    cr_assert_eq(y, 16646400.0);
}

/* 300 * 255 * 255 = 19,507,500 > 2^24: float32 could round a partial sum,
 * so the planned run refuses the operator, naming the bound; the direct
 * run (double) gives the exact int32. */
Test(quant, a_contraction_beyond_2_pow_24_is_refused_planned_and_exact_direct) {
    rotor_status st;
    rotor_error err = {{0}};
    double y;
    run_both(300, &st, &err, &y);
    cr_assert_eq(st, ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "op 'mmi' (MatMulInteger): the planned run cannot be exact") &&
                  strstr(err.msg, "19507500") && strstr(err.msg, "2^24"),
              "%s", err.msg);
    cr_assert_eq(y, 19507500.0);
}

/* A zero point that is a graph input and not given is refused, never read
 * as 0. */
Test(quant, a_zero_point_input_without_data_is_refused_not_taken_as_zero) {
    mb b;
    mb_init(&b, 10);
    q_input(&b, "A", U8, DIMS(2, 3));
    q_input(&b, "az", U8, 0, NULL);
    q_init(&b, "B", U8, DIMS(3, 2), (double[]){1, 2, 3, 4, 5, 6});
    rotor_graph g;
    q_finish(&b, "MatMulInteger", "mmi", "A B az", &g);
    rotor_error err = {{0}};
    double a[6] = {1, 2, 3, 4, 5, 6}, *in[8] = {NULL};
    in[rotor_graph_find_value(&g, "A")] = a;
    rotor_run_result r;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, NULL, &r, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "op 'mmi' (MatMulInteger): 'az' has no data (an input not given)"), "%s", err.msg);
    rotor_graph_free(&g);
}

/* QLinearMatMul's requantization, by hand: a = [2, 4] (zp 1), b = [3; 5]
 * (zp 2): acc = 1*1 + 3*3 = 10; M = 0.5 * 0.25 / 0.5 = 0.25; 10 * 0.25 =
 * 2.5 rounds to even, 2, plus y_zero_point 3: 5.  With y_zero_point 254 the
 * sum 256 saturates to 255. */
static double qlinear(int64_t yzp) {
    mb b;
    mb_init(&b, 10);
    q_input(&b, "a", U8, DIMS(1, 2));
    q_init(&b, "as", F32, 0, NULL, (double[]){0.5});
    q_init(&b, "az", U8, 0, NULL, (double[]){1});
    q_init(&b, "b", U8, DIMS(2, 1), (double[]){3, 5});
    q_init(&b, "bs", F32, 0, NULL, (double[]){0.25});
    q_init(&b, "bz", U8, 0, NULL, (double[]){2});
    q_init(&b, "ys", F32, 0, NULL, (double[]){0.5});
    q_init(&b, "yz", U8, 0, NULL, (double[]){(double)yzp});
    rotor_graph g;
    q_finish(&b, "QLinearMatMul", "qmm", "a as az b bs bz ys yz", &g);
    rotor_error err = {{0}};
    rotor_chip chip = q_chip();
    rotor_program p;
    compiled_program(&g, &chip, NULL, NULL, &p);
    double a[2] = {2, 4}, *in[16] = {NULL};
    in[rotor_graph_find_value(&g, "a")] = a;
    rotor_run_options ro = {.program = &p, .chip = &chip};
    rotor_run_result r;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, &ro, &r, &err), ROTOR_OK, "%s", err.msg);
    double y = r.values[rotor_graph_find_value(&g, "Y")][0];
    rotor_run_result_free(&r);
    rotor_program_free(&p);
    rotor_graph_free(&g);
    return y;
}

Test(quant, qlinearmatmul_rounds_ties_to_even_then_adds_the_zero_point_and_saturates) {
    cr_assert_eq(qlinear(3), 5.0);
    cr_assert_eq(qlinear(254), 255.0);
}

/* ONNX QuantizeLinear: saturate(round(x / scale) + zero_point), ties to even. */
Test(quant, the_rounding_rule_is_ties_to_even_then_the_zero_point_then_the_range) {
    cr_assert_eq(rotor_onnx_quantize(0.5, 0, ROTOR_DTYPE_U8), 0.0);
    cr_assert_eq(rotor_onnx_quantize(1.5, 0, ROTOR_DTYPE_U8), 2.0);
    cr_assert_eq(rotor_onnx_quantize(2.5, 0, ROTOR_DTYPE_U8), 2.0);
    cr_assert_eq(rotor_onnx_quantize(-2.5, 0, ROTOR_DTYPE_I8), -2.0);
    cr_assert_eq(rotor_onnx_quantize(0.5, 1, ROTOR_DTYPE_U8), 1.0); /* round first: 0 + 1, not round(1.5) */
    cr_assert_eq(rotor_onnx_quantize(300, 0, ROTOR_DTYPE_I8), 127.0);
    cr_assert_eq(rotor_onnx_quantize(-300, 0, ROTOR_DTYPE_I8), -128.0);
    cr_assert_eq(rotor_onnx_quantize(-1, 0, ROTOR_DTYPE_U8), 0.0);
    cr_assert_eq(rotor_onnx_quantize(70000, 0, ROTOR_DTYPE_U16), 65535.0);
    /* the 4-bit types saturate at their own range (int4 [-8, 7], uint4 [0, 15]) */
    cr_assert_eq(rotor_onnx_quantize(100, 0, ROTOR_DTYPE_I4), 7.0);
    cr_assert_eq(rotor_onnx_quantize(-100, 0, ROTOR_DTYPE_I4), -8.0);
    cr_assert_eq(rotor_onnx_quantize(100, 0, ROTOR_DTYPE_U4), 15.0);
    cr_assert_eq(rotor_onnx_quantize(-3, 0, ROTOR_DTYPE_U4), 0.0);
}

/* ---- validation ------------------------------------------------------------------------------------ */

/* A one-node Q or DQ model: x (type xt, shape xr/xd), scale (st_/sr/sd),
 * zero point (zt/zr/zd; zt 0: none), attributes axis and block_size (-1:
 * absent).  Returns the import's status, the message in err. */
static rotor_status qdq(const char *op, int xt, int xr, const int64_t *xd, int sr, const int64_t *sd, int zt, int zr,
                        const int64_t *zd, int64_t axis, int64_t block, rotor_graph *g, rotor_error *err) {
    mb b;
    mb_init(&b, 21);
    q_input(&b, "x", xt, xr, xd);
    q_input(&b, "s", F32, sr, sd);
    if (zt) q_input(&b, "z", zt, zr, zd);
    Onnx__NodeProto *n = mb_node(&b, op, "q", zt ? "x s z" : "x s", "y");
    if (axis >= 0) mb_attr_i(&b, n, "axis", axis);
    if (block >= 0) mb_attr_i(&b, n, "block_size", block);
    mb_output(&b, "y");
    rotor_status st = q_load(&b, g, err);
    mb_free(&b);
    return st;
}

/* The import was refused with a message holding want. */
static void refused(rotor_status st, rotor_graph *g, const rotor_error *err, const char *want) {
    cr_assert_eq(st, ROTOR_ERR_INPUT, "%s", err->msg);
    cr_assert(strstr(err->msg, want), "%s", err->msg);
    rotor_graph_free(g);
}

/* qdq(...) is refused with a message holding want. */
#define qdq_refused(want, ...)                                                     \
    do {                                                                           \
        rotor_graph g_;                                                            \
        rotor_error e_ = {{0}};                                                    \
        refused(qdq(__VA_ARGS__, &g_, &e_), &g_, &e_, want);                        \
    } while (0)

Test(quant, dequantize_blocked_with_a_runt_block_imports_with_its_input_shape) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(qdq("DequantizeLinear", I8, DIMS(2, 5, 2), DIMS(2, 2, 2), I8, DIMS(2, 2, 2), 1, 3, &g, &err),
                 ROTOR_OK, "%s", err.msg);
    const rotor_value *y = &g.values[rotor_graph_find_value(&g, "y")];
    cr_assert(y->rank == 3 && y->shape[0] == 2 && y->shape[1] == 5 && y->shape[2] == 2);
    cr_assert_eq(y->dtype, ROTOR_DTYPE_F32);
    cr_assert_eq(g.ops[0].kernel, ROTOR_KERNEL_DEQUANTIZE);
    rotor_graph_free(&g);
}

Test(quant, a_zero_point_of_another_type_than_x_is_refused) {
    /* the schema's type rule (onnxschema.c) answers before the operator's own */
    qdq_refused("node 'q' (op DequantizeLinear, domain ai.onnx): input 'z' is uint8 but input 'x' is int8",
                "DequantizeLinear", I8, DIMS(2, 2), DIMS(2, 2), U8, DIMS(2, 2), 0, 1);
}

Test(quant, a_block_count_that_does_not_cover_the_axis_is_refused) {
    qdq_refused("block_size 3: scale 's' (3x3) has 3 blocks along axis 1, where the 5 elements of 'x' make 2",
                "QuantizeLinear", F32, DIMS(3, 5), DIMS(3, 3), 0, 0, NULL, 1, 3);
}

Test(quant, a_per_axis_scale_of_the_wrong_length_is_refused) {
    qdq_refused("scale 's' (4) is neither per tensor (one element) nor per axis (1-D of 5",
                "QuantizeLinear", F32, DIMS(3, 5), DIMS(4), 0, 0, NULL, 1, -1);
}

Test(quant, scale_and_zero_point_of_different_shapes_are_refused) {
    qdq_refused("scale 's' (2x2) and zero point 'z' (1x2) differ in shape",
                "QuantizeLinear", F32, DIMS(6, 2), DIMS(2, 2), I8, DIMS(1, 2), 0, 3);
}

Test(quant, dequantize_with_one_input_is_refused) {
    mb b;
    mb_init(&b, 19);
    q_input(&b, "x", I8, DIMS(2, 2));
    mb_node(&b, "DequantizeLinear", "q", "x", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    refused(q_load(&b, &g, &err), &g, &err, "1 input; DequantizeLinear at opset 19 takes 2 to 3");
    mb_free(&b);
}

/* ---- the cost of an int8 contraction (docs/cost-model.md, "Element types") ---------------------------- */

/* Y[m,n] += A[m,k] * B[k,n] at the spec's worked size, A and B of type t,
 * Y of type yt. */
static void contraction_to(rotor_graph *g, rotor_dtype t, rotor_dtype yt) {
    rotor_error err = {{0}};
    int a, b, y;
    rotor_graph_init(g, "mm");
    cr_assert_eq(rotor_graph_add_value(g, "a", t, 2, (int64_t[]){32, 5120}, ROTOR_ROLE_ACTIVATION, &a, &err), 0);
    cr_assert_eq(rotor_graph_add_value(g, "b", t, 2, (int64_t[]){5120, 15360}, ROTOR_ROLE_WEIGHT, &b, &err), 0);
    cr_assert_eq(rotor_graph_add_value(g, "y", yt, 2, (int64_t[]){32, 15360}, ROTOR_ROLE_ACTIVATION, &y, &err), 0);
    rotor_op_desc d = {.name = "mm", .type = "MatMulInteger", .expr = "Y[m,n] += A[m,k] * B[k,n]",
                       .dims = "m=32,k=5120,n=15360", .tensor_value = {y, a, b}, .inputs = (int[]){a, b},
                       .ninputs = 2, .outputs = &y, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(g, &d, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_set_output(g, y, &err), ROTOR_OK);
}

/* ... over values of type t alone. */
static void contraction(rotor_graph *g, rotor_dtype t) { contraction_to(g, t, t); }

/* cost-model-v1's F_op = [1, 4, 368] with A split 2-way along k (test_cost.c
 * pins its float figures): at e = 1 every tensor's bytes, the shifts and
 * the reduction halve, and at int8_tops = 2 x matrix_tflops the compute. */
Test(quant, an_int8_contraction_moves_and_stores_half_of_e_2_and_computes_at_the_int8_rate) {
    rotor_error err = {{0}};
    rotor_chip chip = q_chip();
    cr_assert_eq(rotor_chip_set(&chip, "int8_tops=500", &err), ROTOR_OK, "%s", err.msg);
    rotor_graph gf, gq;
    contraction(&gf, ROTOR_DTYPE_F16);
    contraction(&gq, ROTOR_DTYPE_U8);
    rotor_op_elem df = rotor_op_elem_of(&gf, 0), dq = rotor_op_elem_of(&gq, 0);
    cr_assert(df.bytes == 0 && !df.int8, "a float operator keeps the chip's e and rate");
    cr_assert(dq.bytes == 1 && dq.int8);
    rotor_chip cf = rotor_chip_for_op(&chip, df), cq = rotor_chip_for_op(&chip, dq);
    cr_assert_eq(memcmp(&cf, &chip, sizeof chip), 0);
    cr_assert(cq.element_bytes == 1 && cq.matrix_tflops == 500.0);
    const rotor_expr *e = &gq.ops[0].expr;
    rotor_plan p;
    rotor_plan_init(e, &p);
    p.fop[0] = 1, p.fop[1] = 4, p.fop[2] = 368;
    p.ft[1][1] = 2;
    rotor_plan_info fi, qi;
    rotor_cost fc, qc;
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), e, &cf, &p, &fi, &fc, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), e, &cq, &p, &qi, &qc, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(fi.bytes[0] == 2688 && fi.bytes[1] == 40960 && fi.bytes[2] == 107520);
    cr_assert(qi.bytes[0] == 1344 && qi.bytes[1] == 20480 && qi.bytes[2] == 53760);
    cr_assert_eq(qi.memory, 1344 + 20480 + 53760 + 8192); /* the shift buffer is the chip's */
    cr_assert_eq(qc.comm, fc.comm / 2);
    cr_assert_eq(qc.reduction, fc.reduction / 2);
    cr_assert_eq(qc.compute, fc.compute / 2);
    rotor_graph_free(&gf);
    rotor_graph_free(&gq);
}

/* g compiled on chip into *r, its program written (returned, the caller's
 * to free) and read back into *p. */
static char *program_text(const rotor_graph *g, const rotor_chip *chip, rotor_compile_result *r, rotor_program *p) {
    rotor_error err = {{0}};
    compiled_program(g, chip, NULL, r, p);
    char *text = NULL;
    cr_assert_eq(rotor_program_write(g, chip, r, &text, &err), ROTOR_OK, "%s", err.msg);
    return text;
}

/* Without int8_tops the int8 operator computes at matrix_tflops; its program
 * records its element size and rate, and the reader costs it with them. */
Test(quant, a_program_records_an_int8_operators_element_size_and_reads_it_back) {
    rotor_error err = {{0}};
    rotor_chip chip = q_chip();
    rotor_graph g;
    contraction(&g, ROTOR_DTYPE_U8);
    cr_assert_eq(rotor_chip_for_op(&chip, rotor_op_elem_of(&g, 0)).matrix_tflops, 250.0);
    rotor_compile_result r;
    rotor_program p;
    char *text = program_text(&g, &chip, &r, &p);
    cr_assert(p.ops[0].elem.bytes == 1 && p.ops[0].elem.int8);
    cr_assert(strstr(text, "\"element_bytes\":\t1,") && strstr(text, "\"int8_rate\":\ttrue"), "%s", text);
    rotor_program_free(&p);
    char *bad = strstr(text, "\"element_bytes\":\t1");
    bad[strlen("\"element_bytes\":\t")] = '3';
    cr_assert_eq(rotor_program_parse(text, "q.json", &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "q.json: operators[0].element_bytes: expected 1, 2, 4 or 8"), "%s", err.msg);
    free(text);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
}

/* An 8-bit contraction whose fused epilogue writes a float (MatMulInteger
 * -> Cast -> Mul, grouped into one operator): its multiply-accumulates are
 * the 8-bit inputs', so it computes at int8_tops, with the chip's e (not
 * every tensor is an integer); its program records the rate alone, and the
 * reader costs it with it. */
Test(quant, an_int8_contraction_with_a_float_output_keeps_the_int8_rate) {
    rotor_error err = {{0}};
    rotor_chip chip = q_chip();
    cr_assert_eq(rotor_chip_set(&chip, "int8_tops=500", &err), ROTOR_OK, "%s", err.msg);
    rotor_graph g;
    contraction_to(&g, ROTOR_DTYPE_U8, ROTOR_DTYPE_F16);
    rotor_op_elem d = rotor_op_elem_of(&g, 0);
    cr_assert(d.bytes == 0 && d.int8, "bytes %lld, int8 %d", (long long)d.bytes, d.int8);
    rotor_chip c = rotor_chip_for_op(&chip, d);
    cr_assert(c.element_bytes == chip.element_bytes && c.matrix_tflops == 500.0);
    rotor_compile_result r;
    rotor_program p;
    char *text = program_text(&g, &chip, &r, &p);
    cr_assert(p.ops[0].elem.bytes == 0 && p.ops[0].elem.int8);
    const char *ops = strstr(text, "\"operators\""); /* the chip_file above names the chip's */
    cr_assert(ops && !strstr(ops, "\"element_bytes\"") && strstr(ops, "\"int8_rate\":\ttrue"), "%s", text);
    rotor_program_free(&p);
    free(text);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
}
