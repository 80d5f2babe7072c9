/* test_simplify.c — inference graph simplification (src/model/simplify.c,
 * simplifyconst.c; docs/simplify.md): BatchNormalization folded into its
 * convolution on the zoo and on ONNX files with real data (the simplified
 * graph computes the imported one's outputs), left alone where folding
 * would change the value, and constants folded. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnxbuild.h"
#include "rotor/model/group.h"
#include "rotor/model/simplify.h"
#include "rotor/model/zoo.h"
#include "rotor/run/run.h"

/* ResNet-50 (He et al. 2016): 53 convolutions, each followed by a BN. */
Test(simplify, resnet50_loses_all_53_batchnorms_and_grouping_then_fuses_them) {
    rotor_graph g, s, gr;
    rotor_error err = {{0}};
    rotor_zoo_options zo = {.batch = 1};
    cr_assert_eq(rotor_zoo_build("resnet-50", &zo, &g, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 175);
    cr_assert_eq(rotor_graph_count_type(&g, "BatchNormalization"), 53);
    rotor_simplify_stats st;
    cr_assert_eq(rotor_simplify(&g, &s, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_validate(&s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.bn_folded, 53);
    cr_assert_eq(st.bias_added, 53);
    cr_assert_eq(st.const_folded, 0);
    /* each BN becomes its conv's bias Add: 175 operators still, none vendor but
     * MaxPool and GlobalAveragePool */
    cr_assert_eq(s.nops, 175);
    cr_assert_eq(rotor_graph_count_type(&s, "BatchNormalization"), 0);
    cr_assert_eq(rotor_graph_count_type(&s, "Add"), 17 + 53);
    rotor_graph_totals t0, t1;
    rotor_graph_totals_of(&g, &t0);
    rotor_graph_totals_of(&s, &t1);
    cr_assert_eq(t0.vendor_ops, 55);
    cr_assert_eq(t1.vendor_ops, 2);
    /* gamma goes: 26,560 channels of BN over the 53 */
    cr_assert_eq(t0.weight_params - t1.weight_params, 26560);
    rotor_group_stats gs;
    cr_assert_eq(rotor_group(&s, &gr, &gs, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(gr.nops, 56); /* 53 Conv (bias, ReLU, residual fused), MaxPool, GAP, fc */
    rotor_graph_free(&gr);
    rotor_graph_free(&s);
    rotor_graph_free(&g);
}

Test(simplify, a_graph_with_nothing_to_fold_comes_out_equal) {
    rotor_graph g, s;
    rotor_error err = {{0}};
    rotor_zoo_options zo = {.batch = 1, .layers = 1};
    cr_assert_eq(rotor_zoo_build("bert-base", &zo, &g, &err), ROTOR_OK, "%s", err.msg);
    rotor_simplify_stats st;
    cr_assert_eq(rotor_simplify(&g, &s, &st, &err), ROTOR_OK, "%s", err.msg);
    char *a = rotor_graph_to_json(&g), *b = rotor_graph_to_json(&s);
    cr_assert_str_eq(a, b);
    cr_assert_eq(st.ops_before, st.ops_after);
    free(a), free(b);
    rotor_graph_free(&s);
    rotor_graph_free(&g);
}

/* ---- ONNX files with data ------------------------------------------------------------------- */

/* A float32 initializer with elements from a fixed LCG in [lo, lo + 1). */
static void init_f(mb *b, const char *name, int rank, const int64_t *dims, double lo, uint64_t seed) {
    mb_init_random(b, name, rank, dims, lo, 1, &seed);
}

/* x [1,3,6,6] -> Conv (4 3x3 filters, pads 1, a bias when `bias`) -> BN -> Relu -> y;
 * with `second`, the conv's output is also a model output `c`. */
static void conv_bn_model(mb *b, bool bias, bool second) {
    mb_init(b, 13);
    mb_input(b, "x", DIMS(1, 3, 6, 6));
    mb_output(b, "y");
    if (second) mb_output(b, "c");
    init_f(b, "W", DIMS(4, 3, 3, 3), -0.5, 1);
    init_f(b, "cb", DIMS(4), -0.5, 2);
    init_f(b, "sc", DIMS(4), 0.5, 3);
    init_f(b, "bi", DIMS(4), -0.5, 4);
    init_f(b, "mn", DIMS(4), -0.5, 5);
    init_f(b, "vr", DIMS(4), 0.5, 6);
    Onnx__NodeProto *c = mb_node(b, "Conv", "conv", bias ? "x W cb" : "x W", "c");
    mb_attr_ints(b, c, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    mb_node(b, "BatchNormalization", "bn", "c sc bi mn vr", "bn_out");
    mb_node(b, "Relu", "relu", "bn_out", "y");
}

/* Runs g and its simplification directly on the same pseudo-random input x
 * and returns the largest elements beyond run's tolerance over output y. */
static int64_t beyond_tolerance(const rotor_graph *g, const rotor_graph *s) {
    rotor_error err = {{0}};
    int x = rotor_graph_find_value(g, "x");
    double *xin = malloc(sizeof(double) * (size_t)g->values[x].elements);
    for (int64_t k = 0; k < g->values[x].elements; k++) xin[k] = sin((double)k);
    double **in_g = calloc((size_t)g->nvalues, sizeof *in_g), **in_s = calloc((size_t)s->nvalues, sizeof *in_s);
    in_g[x] = xin;
    in_s[rotor_graph_find_value(s, "x")] = xin;
    rotor_run_result rg, rs;
    cr_assert_eq(rotor_run(g, (const double *const *)in_g, NULL, &rg, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_run(s, (const double *const *)in_s, NULL, &rs, &err), ROTOR_OK, "%s", err.msg);
    int yg = rotor_graph_find_value(g, "y"), ys = rotor_graph_find_value(s, "y");
    rotor_run_cmp c = rotor_run_compare(rs.values[ys], rg.values[yg], g->values[yg].elements, false);
    cr_assert_gt(c.max_abs, 0.0); /* the folded weights are rounded to float32 by the run */
    rotor_run_result_free(&rg);
    rotor_run_result_free(&rs);
    free(in_g), free(in_s), free(xin);
    return c.bad;
}

static void load_simplified(mb *b, rotor_graph *g, rotor_graph *s, rotor_simplify_stats *st) {
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(b, &o, g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_simplify(g, s, st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_validate(s, &err), ROTOR_OK, "%s", err.msg);
}

Test(simplify, conv_bias_bn_relu_with_data_folds_and_computes_the_imported_outputs) {
    for (int bias = 0; bias < 2; bias++) {
        mb b;
        conv_bn_model(&b, bias, false);
        rotor_graph g, s;
        rotor_simplify_stats st;
        load_simplified(&b, &g, &s, &st);
        cr_assert_eq(rotor_graph_count_type(&g, "BatchNormalization"), 1);
        cr_assert_eq(rotor_graph_count_type(&s, "BatchNormalization"), 0);
        cr_assert_eq(st.bn_folded, 1);
        cr_assert_eq(st.bias_added, !bias);
        /* Conv, its bias Add, Relu: the BN and (with a bias) the old Add go */
        cr_assert_eq(s.nops, 3);
        cr_assert_str_eq(s.ops[1].type, "Add");
        cr_assert_str_eq(s.ops[1].expr.text, "Y[b,f,h,w] = X[b,f,h,w] + B[f]");
        cr_assert_str_eq(s.ops[1].name, "conv.bias", "the Conv's own bias Add, folded away, leaves its name free");
        cr_assert_eq(beyond_tolerance(&g, &s), 0);
        rotor_graph_free(&s);
        rotor_graph_free(&g);
        mb_free(&b);
    }
}

Test(simplify, a_conv_output_with_a_second_reader_keeps_its_bn) {
    mb b;
    conv_bn_model(&b, true, true);
    rotor_graph g, s;
    rotor_simplify_stats st;
    load_simplified(&b, &g, &s, &st);
    cr_assert_eq(st.bn_folded, 0);
    cr_assert_eq(s.nops, g.nops);
    cr_assert_eq(rotor_graph_count_type(&s, "BatchNormalization"), 1);
    rotor_graph_free(&s);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* A graph by hand: conv O[b,f,h,w] then an affine "BatchNormalization"
 * over the w axis (not the channels): scaling W per f would be wrong. */
Test(simplify, a_bn_scaling_a_non_channel_axis_is_left_alone) {
    rotor_graph g, s;
    rotor_error err = {{0}};
    rotor_graph_init(&g, "hand");
    int x, w, y, sc, sh, z;
    cr_assert_eq(rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 4, (const int64_t[]){1, 3, 4, 4}, ROTOR_ROLE_ACTIVATION, &x, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "w", ROTOR_DTYPE_F32, 4, (const int64_t[]){8, 3, 1, 1}, ROTOR_ROLE_WEIGHT, &w, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 4, (const int64_t[]){1, 8, 4, 4}, ROTOR_ROLE_ACTIVATION, &y, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "s", ROTOR_DTYPE_F32, 1, (const int64_t[]){4}, ROTOR_ROLE_WEIGHT, &sc, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "t", ROTOR_DTYPE_F32, 1, (const int64_t[]){4}, ROTOR_ROLE_WEIGHT, &sh, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "z", ROTOR_DTYPE_F32, 4, (const int64_t[]){1, 8, 4, 4}, ROTOR_ROLE_ACTIVATION, &z, &err), ROTOR_OK);
    rotor_op_desc c = {.name = "conv", .type = "Conv", .expr = "O[b,f,h,w] += I[b,c,h,w] * W[f,c]",
                       .dims = "b=1,f=8,c=3,h=4,w=4", .tensor_value = {y, x, w, -1, -1},
                       .inputs = (const int[]){x, w}, .ninputs = 2, .outputs = &y, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &c, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_op_desc bn = {.name = "bn", .type = "BatchNormalization", .expr = "Y[b,f,h,w] = X[b,f,h,w] * S[w] + T[w]",
                        .dims = "b=1,f=8,h=4,w=4", .tensor_value = {z, y, sc, sh, -1},
                        .inputs = (const int[]){y, sc, sh}, .ninputs = 3, .outputs = &z, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &bn, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_set_output(&g, z, &err);
    rotor_simplify_stats st;
    cr_assert_eq(rotor_simplify(&g, &s, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.bn_folded, 0);
    cr_assert_eq(s.nops, 2);
    cr_assert_str_eq(s.ops[1].type, "BatchNormalization");
    rotor_graph_free(&s);
    rotor_graph_free(&g);
}

/* Y = X (A * B): the product of two weights with data is computed once. */
Test(simplify, a_product_of_two_weights_with_data_folds_to_a_weight) {
    rotor_graph g, s;
    rotor_error err = {{0}};
    rotor_graph_init(&g, "cf");
    int x, a, bw, p, y;
    cr_assert_eq(rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 2, (const int64_t[]){2, 3}, ROTOR_ROLE_ACTIVATION, &x, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "a", ROTOR_DTYPE_F32, 2, (const int64_t[]){3, 2}, ROTOR_ROLE_WEIGHT, &a, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "b", ROTOR_DTYPE_F32, 2, (const int64_t[]){3, 2}, ROTOR_ROLE_WEIGHT, &bw, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "p", ROTOR_DTYPE_F32, 2, (const int64_t[]){3, 2}, ROTOR_ROLE_ACTIVATION, &p, &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 2, (const int64_t[]){2, 2}, ROTOR_ROLE_ACTIVATION, &y, &err), ROTOR_OK);
    double da[6] = {1, 2, 3, 4, 5, 6}, db[6] = {0.5, -1, 2, 0.25, -3, 1};
    rotor_graph_set_data(&g, a, da, &err);
    rotor_graph_set_data(&g, bw, db, &err);
    rotor_op_desc mul = {.name = "mul", .type = "Mul", .expr = "P[k,n] = A[k,n] * B[k,n]", .dims = "k=3,n=2",
                         .tensor_value = {p, a, bw, -1, -1}, .inputs = (const int[]){a, bw}, .ninputs = 2,
                         .outputs = &p, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &mul, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_op_desc mm = {.name = "mm", .type = "MatMul", .expr = "Y[m,n] += X[m,k] * P[k,n]", .dims = "m=2,k=3,n=2",
                        .tensor_value = {y, x, p, -1, -1}, .inputs = (const int[]){x, p}, .ninputs = 2,
                        .outputs = &y, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &mm, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_set_output(&g, y, &err);
    rotor_simplify_stats st;
    cr_assert_eq(rotor_simplify(&g, &s, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_validate(&s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.const_folded, 1);
    cr_assert_eq(s.nops, 1);
    int sp = rotor_graph_find_value(&s, "p");
    cr_assert_eq(s.values[sp].role, ROTOR_ROLE_WEIGHT);
    cr_assert_eq(rotor_graph_find_value(&s, "a"), -1); /* read only by the folded Mul */
    for (int k = 0; k < 6; k++) cr_assert_float_eq(s.values[sp].data[k], da[k] * db[k], 1e-12);
    /* the run computes the same y */
    double xin[6] = {1, -1, 2, 0.5, 3, -2};
    const double *in_g[5] = {xin}, *in_s[4] = {NULL};
    in_s[rotor_graph_find_value(&s, "x")] = xin;
    rotor_run_result rg, rs;
    cr_assert_eq(rotor_run(&g, in_g, NULL, &rg, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_run(&s, in_s, NULL, &rs, &err), ROTOR_OK, "%s", err.msg);
    rotor_run_cmp c = rotor_run_compare(rs.values[rotor_graph_find_value(&s, "y")], rg.values[y], 4, false);
    cr_assert_eq(c.bad, 0);
    rotor_run_result_free(&rg);
    rotor_run_result_free(&rs);
    rotor_graph_free(&s);
    rotor_graph_free(&g);
}

/* Without data the same product folds structurally: a weight of its shape. */
Test(simplify, without_data_a_product_of_weights_folds_to_a_weight_of_its_shape) {
    rotor_graph g, s;
    rotor_error err = {{0}};
    rotor_graph_init(&g, "cf");
    int a, bw, p, x, y;
    rotor_graph_add_value(&g, "a", ROTOR_DTYPE_F16, 1, (const int64_t[]){8}, ROTOR_ROLE_WEIGHT, &a, &err);
    rotor_graph_add_value(&g, "b", ROTOR_DTYPE_F16, 1, (const int64_t[]){8}, ROTOR_ROLE_WEIGHT, &bw, &err);
    rotor_graph_add_value(&g, "p", ROTOR_DTYPE_F16, 1, (const int64_t[]){8}, ROTOR_ROLE_ACTIVATION, &p, &err);
    rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F16, 1, (const int64_t[]){8}, ROTOR_ROLE_ACTIVATION, &x, &err);
    rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F16, 1, (const int64_t[]){8}, ROTOR_ROLE_ACTIVATION, &y, &err);
    rotor_op_desc mul = {.name = "mul", .type = "Mul", .inputs = (const int[]){a, bw}, .ninputs = 2, .outputs = &p,
                         .noutputs = 1, .tensor_value = {-1, -1, -1, -1, -1}};
    cr_assert_eq(rotor_graph_add_op(&g, &mul, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_op_desc add = {.name = "add", .type = "Add", .expr = "Y[i] = X[i] + P[i]", .dims = "i=8",
                         .tensor_value = {y, x, p, -1, -1}, .inputs = (const int[]){x, p}, .ninputs = 2,
                         .outputs = &y, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &add, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_simplify_stats st;
    cr_assert_eq(rotor_simplify(&g, &s, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.const_folded, 1);
    cr_assert_eq(s.nops, 1);
    cr_assert_eq(s.values[rotor_graph_find_value(&s, "p")].role, ROTOR_ROLE_WEIGHT);
    cr_assert_null(s.values[rotor_graph_find_value(&s, "p")].data);
    rotor_graph_free(&s);
    rotor_graph_free(&g);
}

/* ---- what does not fold (a review's findings, 2026-12-02) ------------------------------------ */

/* conv_bn_model's graph with the BN's attributes and inputs varied by `v`:
 *  1 training_mode = 1 (opset 15): the batch's statistics, not the running ones;
 *  2 the mean and variance are model inputs, not initializers;
 *  3 the conv's weight W is also a model output;
 *  4 a zero variance with epsilon 0: an infinite scale. */
static void bn_variant(mb *b, int v) {
    mb_init(b, v == 1 ? 15 : 13);
    mb_input(b, "x", DIMS(2, 3, 6, 6));
    if (v == 2) mb_input(b, "mn", DIMS(4)), mb_input(b, "vr", DIMS(4));
    mb_output(b, "y");
    if (v == 3) mb_output(b, "W");
    init_f(b, "W", DIMS(4, 3, 3, 3), -0.5, 1);
    init_f(b, "sc", DIMS(4), 0.5, 3);
    init_f(b, "bi", DIMS(4), -0.5, 4);
    if (v != 2) init_f(b, "mn", DIMS(4), -0.5, 5);
    uint64_t seed = 6;
    if (v == 4) mb_init_random(b, "vr", DIMS(4), 0.0, 0.0, &seed); /* zeros */
    else if (v != 2) init_f(b, "vr", DIMS(4), 0.5, 6);
    Onnx__NodeProto *c = mb_node(b, "Conv", "conv", "x W", "c");
    mb_attr_ints(b, c, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    Onnx__NodeProto *n = mb_node(b, "BatchNormalization", "bn", "c sc bi mn vr", "y");
    if (v == 1) mb_attr_i(b, n, "training_mode", 1);
    if (v == 4) mb_attr_f(b, n, "epsilon", 0.0f);
}

Test(simplify, a_bn_that_is_no_constant_affine_map_of_its_input_stays) {
    for (int v = 1; v <= 4; v++) {
        mb b;
        bn_variant(&b, v);
        rotor_graph g, s;
        rotor_simplify_stats st;
        rotor_error err = {{0}};
        /* with the data where there is data; v 2's statistics have none */
        rotor_onnx_options o = {.keep_data = v != 2};
        cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "variant %d: %s", v, err.msg);
        cr_assert_eq(rotor_simplify(&g, &s, &st, &err), ROTOR_OK, "variant %d: %s", v, err.msg);
        cr_assert_eq(st.bn_folded, 0, "variant %d", v);
        if (v == 2) { /* the statistics stay the model's inputs */
            cr_assert_geq(rotor_graph_find_value(&s, "mn"), 0);
            cr_assert_geq(rotor_graph_find_value(&s, "vr"), 0);
        }
        if (v == 3) { /* the output W keeps its elements */
            int w = rotor_graph_find_value(&g, "W"), sw = rotor_graph_find_value(&s, "W");
            for (int64_t k = 0; k < g.values[w].elements; k++) cr_assert_eq(s.values[sw].data[k], g.values[w].data[k]);
        }
        rotor_graph_free(&s);
        rotor_graph_free(&g);
        mb_free(&b);
    }
}

/* training_mode = 1 normalizes by the batch's own mean and variance (over
 * n, h, w per channel), whatever the running statistics hold: lowered as
 * inference it gave the running statistics' answer. */
Test(simplify, a_bn_in_training_mode_normalizes_by_the_batch) {
    mb b;
    mb_init(&b, 15);
    mb_input(&b, "x", DIMS(2, 3, 2, 2));
    mb_output(&b, "y");
    init_f(&b, "sc", DIMS(3), 0.5, 3);
    init_f(&b, "bi", DIMS(3), -0.5, 4);
    init_f(&b, "mn", DIMS(3), 5.0, 5); /* far from the batch's: a wrong answer shows */
    init_f(&b, "vr", DIMS(3), 9.0, 6);
    Onnx__NodeProto *n = mb_node(&b, "BatchNormalization", "bn", "x sc bi mn vr", "y");
    mb_attr_i(&b, n, "training_mode", 1);
    rotor_graph g;
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    int x = rotor_graph_find_value(&g, "x"), y = rotor_graph_find_value(&g, "y");
    int sc = rotor_graph_find_value(&g, "sc"), bi = rotor_graph_find_value(&g, "bi");
    cr_assert(x >= 0 && y >= 0 && sc >= 0 && bi >= 0, "the batch's statistics read the scale and shift as given");
    double xin[24];
    for (int k = 0; k < 24; k++) xin[k] = sin(1.7 * k) * (1 + k % 3);
    double **in = calloc((size_t)g.nvalues, sizeof *in);
    in[x] = xin;
    rotor_run_result r;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    for (int c = 0; c < 3; c++) {
        double m = 0, var = 0;
        for (int n2 = 0; n2 < 2; n2++)
            for (int k = 0; k < 4; k++) m += xin[n2 * 12 + c * 4 + k] / 8;
        for (int n2 = 0; n2 < 2; n2++)
            for (int k = 0; k < 4; k++) var += pow(xin[n2 * 12 + c * 4 + k] - m, 2) / 8;
        for (int n2 = 0; n2 < 2; n2++)
            for (int k = 0; k < 4; k++) {
                int at = n2 * 12 + c * 4 + k;
                double want = (xin[at] - m) / sqrt(var + 1e-5) * g.values[sc].data[c] + g.values[bi].data[c];
                cr_assert_float_eq(r.values[y][at], want, 1e-5, "y[%d] %.9g, want %.9g", at, r.values[y][at], want);
            }
    }
    rotor_run_result_free(&r);
    free(in);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* An op of more inputs than the copy once held (64): a Concat of 70. */
Test(simplify, an_op_of_seventy_inputs_is_copied) {
    rotor_graph g, s;
    rotor_error err = {{0}};
    rotor_graph_init(&g, "cat70");
    int in[70], y;
    for (int i = 0; i < 70; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "x%d", i);
        cr_assert_eq(rotor_graph_add_value(&g, nm, ROTOR_DTYPE_F32, 2, (const int64_t[]){1, 2}, ROTOR_ROLE_ACTIVATION,
                                           &in[i], &err), ROTOR_OK);
    }
    cr_assert_eq(rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 2, (const int64_t[]){1, 140}, ROTOR_ROLE_ACTIVATION,
                                       &y, &err), ROTOR_OK);
    rotor_op_desc cat = {.name = "cat", .type = "Concat", .inputs = in, .ninputs = 70, .outputs = &y, .noutputs = 1,
                         .tensor_value = {-1, -1, -1, -1, -1}};
    cr_assert_eq(rotor_graph_add_op(&g, &cat, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_set_output(&g, y, &err), ROTOR_OK);
    rotor_simplify_stats st;
    cr_assert_eq(rotor_simplify(&g, &s, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(s.nops, 1);
    cr_assert_eq(s.ops[0].ninputs, 70);
    cr_assert_eq(s.nvalues, 71);
    rotor_graph_free(&s);
    rotor_graph_free(&g);
}

/* The zoo's vendor BatchNormalization (x, gamma, beta: its statistics are
 * no inputs) folds as the cost it is when nothing has data, never as
 * values: with data, gamma and beta alone are not its map (y gamma + beta
 * was folded in, the mean and variance dropped). */
Test(simplify, a_vendor_bn_folds_only_without_data) {
    for (int data = 0; data < 2; data++) {
        rotor_graph g, s;
        rotor_error err = {{0}};
        rotor_graph_init(&g, "vbn");
        int x, w, y, ga, be, z;
        rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 4, (const int64_t[]){1, 3, 4, 4}, ROTOR_ROLE_ACTIVATION, &x,
                              &err);
        rotor_graph_add_value(&g, "w", ROTOR_DTYPE_F32, 4, (const int64_t[]){8, 3, 1, 1}, ROTOR_ROLE_WEIGHT, &w, &err);
        rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 4, (const int64_t[]){1, 8, 4, 4}, ROTOR_ROLE_ACTIVATION, &y,
                              &err);
        rotor_graph_add_value(&g, "gamma", ROTOR_DTYPE_F32, 1, (const int64_t[]){8}, ROTOR_ROLE_WEIGHT, &ga, &err);
        rotor_graph_add_value(&g, "beta", ROTOR_DTYPE_F32, 1, (const int64_t[]){8}, ROTOR_ROLE_WEIGHT, &be, &err);
        rotor_graph_add_value(&g, "z", ROTOR_DTYPE_F32, 4, (const int64_t[]){1, 8, 4, 4}, ROTOR_ROLE_ACTIVATION, &z,
                              &err);
        if (data) {
            double dw[24], dg[8], db[8];
            for (int k = 0; k < 24; k++) dw[k] = 0.1 * k;
            for (int k = 0; k < 8; k++) dg[k] = 1 + k, db[k] = -k;
            rotor_graph_set_data(&g, w, dw, &err);
            rotor_graph_set_data(&g, ga, dg, &err);
            rotor_graph_set_data(&g, be, db, &err);
        }
        rotor_op_desc c = {.name = "conv", .type = "Conv", .expr = "O[b,f,h,w] += I[b,c,h,w] * W[f,c]",
                           .dims = "b=1,f=8,c=3,h=4,w=4", .tensor_value = {y, x, w, -1, -1},
                           .inputs = (const int[]){x, w}, .ninputs = 2, .outputs = &y, .noutputs = 1};
        cr_assert_eq(rotor_graph_add_op(&g, &c, NULL, &err), ROTOR_OK, "%s", err.msg);
        rotor_op_desc bn = {.name = "bn", .type = "BatchNormalization", .inputs = (const int[]){y, ga, be},
                            .ninputs = 3, .outputs = &z, .noutputs = 1, .tensor_value = {-1, -1, -1, -1, -1}};
        cr_assert_eq(rotor_graph_add_op(&g, &bn, NULL, &err), ROTOR_OK, "%s", err.msg);
        rotor_graph_set_output(&g, z, &err);
        rotor_simplify_stats st;
        cr_assert_eq(rotor_simplify(&g, &s, &st, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(st.bn_folded, !data, "with data %d", data);
        if (data) { /* the weight's elements as given */
            int sw = rotor_graph_find_value(&s, "w");
            for (int k = 0; k < 24; k++) cr_assert_eq(s.values[sw].data[k], 0.1 * k);
        }
        rotor_graph_free(&s);
        rotor_graph_free(&g);
    }
}

/* The folded BN's bias Add is named "<conv>.bias", or "<conv>.bias#2" when
 * the model has an operator of that name already (two operators of one name
 * came out). */
Test(simplify, the_new_bias_takes_a_name_no_operator_has) {
    mb b;
    conv_bn_model(&b, false, false);
    b.nodes[2]->name = "conv.bias"; /* the model's Relu */
    rotor_graph g, s;
    rotor_simplify_stats st;
    load_simplified(&b, &g, &s, &st);
    cr_assert_eq(st.bn_folded, 1);
    int named = 0;
    for (int o = 0; o < s.nops; o++) named += !strcmp(s.ops[o].name, "conv.bias");
    cr_assert_eq(named, 1, "the Relu keeps its name");
    cr_assert_str_eq(s.ops[1].name, "conv.bias#2");
    rotor_graph_free(&s);
    rotor_graph_free(&g);
    mb_free(&b);
}
