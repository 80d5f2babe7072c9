/* test_onnx.c — the ONNX importer (src/model/onnx.c, src/model/lower.c; docs/onnx.md).
 *
 * Real files from ../shared/onnx (skipped with a message when absent): every
 * file of real/ imports with its histogram, FLOPs and weights pinned; every
 * file of bad/ is refused.  Small models built here with protobuf-c check one
 * rule each: sorting, folding, lowering, binding, refusals. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/program.h"
#include "rotor/sim/replay.h"
#include "rotor/hbm/schedule.h"
#include "rotor/model/group.h"
#include "rotor/model/onnx.h"
#include "rotor/run/run.h"
#include "fixtures.h"
#include "onnxbuild.h"
#include "model/lowerint.h"
#include "model/onnxops.h"

#define SHARED "../shared/onnx"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* Skips the calling test, with one line naming the file, when a file of
 * ../shared/onnx is absent (a user's clone has no ../shared; CI has it).  A
 * warning alone would not do: Criterion exits 1 after a run that logged one. */
#define need(path)                                                                                   \
    do {                                                                                             \
        if (access(path, R_OK) != 0) cr_skip_test("%s is absent (it comes with ../shared)", path);   \
    } while (0)

/* ---- real files ---------------------------------------------------------------- */

typedef struct real_case {
    const char *file, *dims, *inputs;
    int ops, vendor;
    double flops;
    int64_t weights;
    const char *histogram;
    int layernorms;
} real_case;

/* Pinned from the importer and checked by hand where noted in the tests below. */
static const real_case real_cases[] = {
    {"attention_distilbert.onnx", NULL, "input_1=1x3x8", 27, 0, 2538, 322,
     "Add 6, MatMul 6, Reshape 4, Transpose 4, ReduceMean 2, Div 1, LayerNormalization 1, ReduceSum 1, "
     "Softmax 1, Where 1", 0},
    {"bert_toy_optimized.onnx", "batch=2,max_seq_len_in_batch=16", NULL, 237, 3, 3005444, 44223,
     "Add 69, MatMul 42, ReduceMean 24, Reshape 20, Transpose 20, Mul 13, LayerNormalization 12, Div 11, Erf 6, "
     "ReduceSum 5, Softmax 5, Gather 3, Gemm 2, Unsqueeze 2, Cast 1, Sub 1, Tanh 1", 12},
    {"gpt2_megatron.onnx", "batch_size=2,seq_len=16,past_seq_len=16", NULL, 78, 7, 146064, 1560,
     "Add 12, Mul 11, Cast 10, MatMul 7, ReduceMean 6, Transpose 5, Reshape 4, Concat 3, LayerNormalization 3, "
     "Div 2, Gather 2, Slice 2, Split 2, Squeeze 2, Sub 2, Unsqueeze 2, ReduceSum 1, Softmax 1, Tanh 1", 3},
    {"gpt2_past.onnx", "batch_size=2,seq_len=4", NULL, 707, 74, 29294, 3092,
     "Reshape 146, Add 123, Transpose 72, ReduceMean 50, Gemm 48, Mul 48, Concat 36, Gather 26, "
     "LayerNormalization 25, MatMul 24, Unsqueeze 24, Div 12, Pow 12, ReduceSum 12, Softmax 12, Split 12, "
     "Tanh 12, Where 12, Slice 1", 25},
    {"hello_deepa.onnx", NULL, NULL, 18, 0, 159010, 78049,
     "Add 5, ReduceMean 4, Gemm 3, LayerNormalization 2, Relu 2, Flatten 1, Sigmoid 1", 2},
    {"light_resnet50.onnx", NULL, NULL, 178, 1, 8216935816.0, 25610152,
     "BatchNormalization 53, Conv 53, Relu 49, Sum 16, Add 1, AveragePool 1, Gemm 1, MaxPool 1, ReduceSum 1, "
     "Reshape 1, Softmax 1", 0},
    {"light_shufflenet.onnx", NULL, NULL, 206, 4, 265441096, 1420152,
     "BatchNormalization 49, Conv 49, Relu 33, Reshape 33, Transpose 16, Sum 13, AveragePool 4, Concat 3, Add 2, "
     "Gemm 1, MaxPool 1, ReduceSum 1, Softmax 1", 0},
    {"light_squeezenet.onnx", NULL, NULL, 92, 11, 708418112, 1235496,
     "Add 26, Conv 26, Relu 26, Concat 8, MaxPool 3, GlobalAveragePool 1, ReduceSum 1, Softmax 1", 0},
    {"mnist.onnx", NULL, NULL, 11, 2, 1603434, 5994, "Add 3, Conv 2, MaxPool 2, Relu 2, MatMul 1, Reshape 1", 0},
};

static rotor_status load_real(const real_case *c, rotor_graph *g, rotor_onnx_stats *st, rotor_error *err) {
    char path[256];
    snprintf(path, sizeof path, SHARED "/real/%s", c->file);
    rotor_onnx_options o = {.dims = c->dims, .input_shapes = c->inputs};
    return rotor_onnx_load(path, &o, g, st, err);
}

Test(onnx, every_real_file_imports_with_its_histogram_flops_and_weights) {
    need(SHARED "/real/mnist.onnx");
    for (size_t i = 0; i < sizeof real_cases / sizeof real_cases[0]; i++) {
        const real_case *c = &real_cases[i];
        rotor_graph g;
        rotor_onnx_stats st;
        rotor_error err = {{0}};
        cr_assert_eq(load_real(c, &g, &st, &err), ROTOR_OK, "%s: %s", c->file, err.msg);
        cr_assert_eq(rotor_graph_validate(&g, &err), ROTOR_OK, "%s: %s", c->file, err.msg);
        rotor_graph_totals t;
        rotor_graph_totals_of(&g, &t);
        char *h = rotor_graph_histogram(&g);
        cr_expect_str_eq(h, c->histogram, "%s", c->file);
        cr_expect_eq(t.ops, c->ops, "%s: %d operators", c->file, t.ops);
        cr_expect_eq(t.vendor_ops, c->vendor, "%s: %d vendor", c->file, t.vendor_ops);
        cr_expect_eq(t.flops, c->flops, "%s: %.0f FLOPs", c->file, t.flops);
        cr_expect_eq(t.weight_params, c->weights, "%s: %lld weights", c->file, (long long)t.weight_params);
        cr_expect_eq(st.layernorms_matched, c->layernorms, "%s", c->file);
        free(h);
        /* grouping keeps the FLOPs (docs/group.md) */
        rotor_graph gg;
        cr_assert_eq(rotor_group(&g, &gg, NULL, &err), ROTOR_OK, "%s: %s", c->file, err.msg);
        rotor_graph_totals t2;
        rotor_graph_totals_of(&gg, &t2);
        /* grouping keeps every FLOP but the copies of the layout ops it folds */
        double layout = 0;
        static const char *const lay[] = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten"};
        for (int o = 0; o < g.nops; o++)
            for (size_t k = 0; k < 5; k++)
                if (!strcmp(g.ops[o].type, lay[k])) layout += g.ops[o].flops;
        cr_expect(t2.flops <= t.flops && t2.flops >= t.flops - layout, "%s: %.0f of %.0f", c->file, t2.flops,
                  t.flops);
        cr_expect_leq(t2.ops, t.ops);
        rotor_graph_free(&gg);
        rotor_graph_free(&g);
    }
}

/* By hand: conv 1->8 5x5 SAME on 28x28: 2*8*28*28*25 = 313600; conv 8->16 5x5
 * on 14x14: 2*16*14*14*25*8 = 1254400; 256x10 MatMul: 5120; bias adds 6272 +
 * 3136 + 10; ReLUs 6272 + 3136; max pools (vendor: read + write) 7840 + 3392;
 * the Reshape copy 256.  Weights 8*25 + 8 + 16*8*25 + 16 + 256*10 + 10. */
Test(onnx, mnist_flops_and_weights_match_a_hand_count) {
    need(SHARED "/real/mnist.onnx");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_onnx_load(SHARED "/real/mnist.onnx", NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_totals t;
    rotor_graph_totals_of(&g, &t);
    cr_assert_eq(t.flops, 313600.0 + 1254400 + 5120 + 6272 + 3136 + 10 + 6272 + 3136 + 7840 + 3392 + 256);
    cr_assert_eq(t.weight_params, 8 * 25 + 8 + 16 * 8 * 25 + 16 + 256 * 10 + 10);
    rotor_graph_free(&g);
}

/* torchvision's ResNet-50 has 25,557,032 parameters; the Caffe2 export also
 * holds BatchNorm's running mean and variance, 2 x 26,560 channels. */
Test(onnx, resnet50_weights_are_the_published_count_plus_running_statistics) {
    need(SHARED "/real/light_resnet50.onnx");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_onnx_load(SHARED "/real/light_resnet50.onnx", NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_totals t;
    rotor_graph_totals_of(&g, &t);
    cr_assert_eq(t.weight_params, 25557032 + 2 * 26560);
    int conv = -1;
    for (int i = 0; i < g.nops && conv < 0; i++)
        if (!strcmp(g.ops[i].type, "Conv")) conv = i;
    cr_assert_str_eq(g.ops[conv].expr.text, "Y[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]");
    char dims[128];
    rotor_expr_dims_string(&g.ops[conv].expr, dims, sizeof dims);
    cr_assert_str_eq(dims, "b=1,c=3,h=112,kh=7,w=112,kw=7,f=64");
    rotor_graph_free(&g);
}

Test(onnx, symbolic_dimensions_must_be_bound_and_names_must_exist) {
    need(SHARED "/real/bert_toy_optimized.onnx");
    const char *path = SHARED "/real/bert_toy_optimized.onnx";
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_onnx_load(path, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "input 'input_ids' dimension 0 is symbolic ('batch'): bind it with --dim batch=N");
    rotor_graph_free(&g);
    rotor_onnx_options o = {.dims = "batch=2,max_seq_len_in_batch=16,seq=9"};
    cr_assert_eq(rotor_onnx_load(path, &o, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "--dim: 'seq' is not a symbolic dimension of any input");
    rotor_graph_free(&g);
    o.dims = "batch=two";
    cr_assert_eq(rotor_onnx_load(path, &o, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "--dim: batch: expected a positive integer");
    rotor_graph_free(&g);
}

Test(onnx, every_bad_file_is_refused_with_a_reason) {
    need(SHARED "/bad/corrupt-model.onnx");
    static const struct {
        const char *file, *why;
    } bad[] = {
        {"corrupt-model.onnx", "not a valid ONNX model (the protobuf does not decode)"},
        {"icm-31000000518082.onnx", "not a valid ONNX model"},
        {"matmulinteger_dyn_error.onnx", "input '1' dimension 0 has no size"},
        {"matmulinteger_int8_uint8_one_zp_error_test.onnx",
         "node 'MatMulInteger_0' (op MatMulInteger, domain ai.onnx): input '3' is int8 but input '1' is uint8"},
        {"matmulinteger_invalid_type_error.onnx", "input '1' dimension 0 has no size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, SHARED "/bad/%s", bad[i].file);
        rotor_graph g;
        rotor_error err = {{0}};
        cr_assert_eq(rotor_onnx_load(path, NULL, &g, NULL, &err), ROTOR_ERR_INPUT, "%s", bad[i].file);
        assert_msg_has(err, path);
        assert_msg_has(err, bad[i].why);
        rotor_graph_free(&g);
    }
}

Test(onnx, a_missing_file_is_an_io_error) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_onnx_load("no/such/model.onnx", NULL, &g, NULL, &err), ROTOR_ERR_IO);
    assert_msg_has(err, "no/such/model.onnx: No such file or directory");
    rotor_graph_free(&g);
}

/* Property: every prefix of a real model, and the model with bytes flipped,
 * imports or is refused; nothing crashes (the sanitizer build checks leaks). */
Test(onnx, truncated_and_corrupted_files_are_refused_or_imported_never_crash) {
    need(SHARED "/real/mnist.onnx");
    FILE *f = fopen(SHARED "/real/mnist.onnx", "rb");
    cr_assert(f);
    static uint8_t buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    int refused = 0, imported = 0;
    for (size_t cut = 0; cut < len; cut += 97) {
        rotor_graph g;
        rotor_error err = {{0}};
        rotor_status st = rotor_onnx_load_buffer(buf, cut, "cut", NULL, &g, NULL, &err);
        cr_assert(st == ROTOR_OK || st == ROTOR_ERR_INPUT, "cut at %zu: status %d", cut, st);
        if (st) cr_assert(strncmp(err.msg, "cut: ", 5) == 0, "cut at %zu: %s", cut, err.msg);
        st ? refused++ : imported++;
        rotor_graph_free(&g);
    }
    uint32_t seed = 12345;
    for (int trial = 0; trial < 300; trial++) {
        static uint8_t copy[1 << 16];
        memcpy(copy, buf, len);
        for (int k = 0; k < 4; k++) {
            seed = seed * 1664525u + 1013904223u;
            copy[(seed >> 8) % len] ^= (uint8_t)(1u << (seed % 8));
        }
        rotor_graph g;
        rotor_error err = {{0}};
        rotor_status st = rotor_onnx_load_buffer(copy, len, "flip", NULL, &g, NULL, &err);
        cr_assert(st == ROTOR_OK || st == ROTOR_ERR_INPUT, "trial %d (seed 12345): status %d: %s", trial, st, err.msg);
        rotor_graph_free(&g);
    }
    cr_assert_gt(refused, 0);
}

/* ---- small models built here ---------------------------------------------------------------- */

static const rotor_op *find_op(const rotor_graph *g, const char *name) {
    for (int i = 0; i < g->nops; i++)
        if (!strcmp(g->ops[i].name, name)) return &g->ops[i];
    cr_assert_fail("no operator '%s'", name);
    return NULL;
}

static void expect_expr(const rotor_graph *g, const char *op, const char *text, const char *dims) {
    const rotor_op *o = find_op(g, op);
    cr_assert(!o->vendor, "%s is a vendor op", op);
    cr_assert_str_eq(o->expr.text, text, "%s: %s", op, o->expr.text);
    char d[256];
    rotor_expr_dims_string(&o->expr, d, sizeof d);
    cr_assert_str_eq(d, dims, "%s: %s", op, d);
}

Test(onnx, gemm_with_transposed_b_and_bias_is_a_contraction_then_an_add) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(4, 8));
    mb_init_tensor(&b, "w", 1, DIMS(16, 8), NULL);
    mb_init_tensor(&b, "c", 1, DIMS(16), NULL);
    Onnx__NodeProto *n = mb_node(&b, "Gemm", "fc", "x w c", "y");
    mb_attr_i(&b, n, "transB", 1);
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "fc", "Y[m,n] += A[m,k] * B[n,k]", "m=4,k=8,n=16");
    expect_expr(&g, "fc.bias", "Y[d0,d1] = X[d0,d1] + B[d1]", "d0=4,d1=16");
    rotor_graph_totals t;
    rotor_graph_totals_of(&g, &t);
    cr_assert_eq(t.flops, 2.0 * 4 * 8 * 16 + 4 * 16);
    cr_assert_eq(t.weight_params, 16 * 8 + 16);
    cr_assert(g.values[g.ops[1].outputs[0]].is_output);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* ONNX Conv output extent: floor((H + pads - dilation*(k-1) - 1) / stride) + 1. */
Test(onnx, grouped_strided_dilated_conv_has_the_onnx_output_shape_and_expression) {
    mb b;
    mb_init(&b, 11);
    mb_input(&b, "x", DIMS(2, 8, 17, 17));
    mb_init_tensor(&b, "w", 1, DIMS(12, 4, 3, 3), NULL);
    Onnx__NodeProto *n = mb_node(&b, "Conv", "conv", "x w", "y");
    mb_attr_i(&b, n, "group", 2);
    mb_attr_ints(&b, n, "strides", 2, (const int64_t[]){2, 2});
    mb_attr_ints(&b, n, "dilations", 2, (const int64_t[]){2, 1});
    mb_attr_ints(&b, n, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    /* h: (17 + 2 - 2*2 - 1)/2 + 1 = 8; w: (17 + 2 - 2 - 1)/2 + 1 = 9 */
    const rotor_value *y = &g.values[g.ops[0].outputs[0]];
    cr_assert_eq(y->rank, 4);
    cr_assert(y->shape[0] == 2 && y->shape[1] == 12 && y->shape[2] == 8 && y->shape[3] == 9);
    expect_expr(&g, "conv", "Y[b,g,f,h,w] += I[b,g,c,2*h+2*kh,2*w+kw] * W[g,f,c,kh,kw]",
                "b=2,g=2,c=4,h=8,kh=3,w=9,kw=3,f=6");
    cr_assert_eq(g.ops[0].flops, 2.0 * 2 * 12 * 8 * 9 * 4 * 9);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape: the shape arithmetic of
 * a PyTorch export folds to constants; only the Reshape remains. */
Test(onnx, shape_subgraph_folds_to_a_constant_reshape) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 6, 4));
    mb_init_tensor(&b, "i0", 7, 0, NULL, (const int64_t[]){0});
    mb_init_tensor(&b, "ax", 7, DIMS(1), (const int64_t[]){0});
    mb_init_tensor(&b, "minus1", 7, DIMS(1), (const int64_t[]){-1});
    mb_node(&b, "Shape", "shape", "x", "s");
    mb_node(&b, "Gather", "gather", "s i0", "b0");
    mb_node(&b, "Unsqueeze", "unsq", "b0 ax", "b1");
    Onnx__NodeProto *cat = mb_node(&b, "Concat", "cat", "b1 minus1", "shp");
    mb_attr_i(&b, cat, "axis", 0);
    mb_node(&b, "Reshape", "reshape", "x shp", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_onnx_stats st;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 1);
    cr_assert_eq(st.folded, 4);
    const rotor_value *y = &g.values[g.ops[0].outputs[0]];
    cr_assert(y->rank == 2 && y->shape[0] == 2 && y->shape[1] == 24);
    expect_expr(&g, "reshape", "Y[i] = X[i]", "i=48");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* Nodes listed consumers-first import to the same graph as the sorted file. */
Test(onnx, unsorted_nodes_give_the_same_graph_as_sorted_ones) {
    char *json[2];
    for (int order = 0; order < 2; order++) {
        mb b;
        mb_init(&b, 13);
        mb_input(&b, "x", DIMS(4, 8));
        mb_init_tensor(&b, "w", 1, DIMS(8, 8), NULL);
        if (order == 0) {
            mb_node(&b, "MatMul", "mm", "x w", "h");
            mb_node(&b, "Relu", "act", "h", "y");
        } else {
            mb_node(&b, "Relu", "act", "h", "y");
            mb_node(&b, "MatMul", "mm", "x w", "h");
        }
        mb_output(&b, "y");
        rotor_graph g;
        rotor_error err = {{0}};
        cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
        json[order] = rotor_graph_to_json(&g);
        rotor_graph_free(&g);
        mb_free(&b);
    }
    cr_assert_str_eq(json[0], json[1]);
    free(json[0]);
    free(json[1]);
}

/* ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta. */
Test(onnx, spelled_out_layernorm_becomes_mean_variance_normalise_and_beta) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(3, 16));
    mb_init_tensor(&b, "gamma", 1, DIMS(16), NULL);
    mb_init_tensor(&b, "beta", 1, DIMS(16), NULL);
    Onnx__TensorProto *two = mb_init_tensor(&b, "two", 1, 0, NULL, NULL);
    two->n_float_data = 1;
    two->float_data = mb_alloc(&b, sizeof(float));
    two->float_data[0] = 2;
    Onnx__TensorProto *eps = mb_init_tensor(&b, "eps", 1, 0, NULL, NULL);
    eps->n_float_data = 1;
    eps->float_data = mb_alloc(&b, sizeof(float));
    eps->float_data[0] = 1e-5f;
    Onnx__NodeProto *r1 = mb_node(&b, "ReduceMean", "mean", "x", "m");
    mb_attr_ints(&b, r1, "axes", 1, (const int64_t[]){-1});
    mb_node(&b, "Sub", "sub", "x m", "d");
    mb_node(&b, "Pow", "pow", "d two", "p");
    Onnx__NodeProto *r2 = mb_node(&b, "ReduceMean", "var", "p", "v");
    mb_attr_ints(&b, r2, "axes", 1, (const int64_t[]){-1});
    mb_node(&b, "Add", "addeps", "v eps", "ve");
    mb_node(&b, "Sqrt", "sqrt", "ve", "sd");
    mb_node(&b, "Div", "div", "d sd", "nrm");
    mb_node(&b, "Mul", "scale", "nrm gamma", "sc");
    mb_node(&b, "Add", "shift", "sc beta", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_onnx_stats st;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.layernorms_matched, 1);
    char *h = rotor_graph_histogram(&g);
    cr_assert_str_eq(h, "ReduceMean 2, Add 1, LayerNormalization 1");
    free(h);
    expect_expr(&g, "shift.mean", "M[d0] += X[d0,d1] / 16", "d0=3,d1=16");
    expect_expr(&g, "shift.var", "V[d0] += square(X[d0,d1] - M[d0]) / 16", "d0=3,d1=16");
    expect_expr(&g, "shift", "Y[d0,d1] = (X[d0,d1] - M[d0]) * rsqrt(V[d0] + 9.99999975e-06) * G[d1]", "d0=3,d1=16");
    expect_expr(&g, "shift.beta", "Y[d0,d1] = N[d0,d1] + B[d1]", "d0=3,d1=16");
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(onnx, softmax_of_opset_13_is_a_sum_of_exponentials_then_a_division) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 5, 7));
    Onnx__NodeProto *n = mb_node(&b, "Softmax", "sm", "x", "y");
    mb_attr_i(&b, n, "axis", 1);
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "sm.sum", "S[d0,d2] += exp(X[d0,d1,d2])", "d0=2,d1=5,d2=7");
    expect_expr(&g, "sm", "Y[d0,d1,d2] = exp(X[d0,d1,d2]) / S[d0,d2]", "d0=2,d1=5,d2=7");
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(onnx, broadcasting_add_with_a_scalar_constant_writes_the_number) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(4, 1, 6));
    mb_input(&b, "z", DIMS(3, 1));
    Onnx__TensorProto *c = mb_init_tensor(&b, "half", 1, 0, NULL, NULL);
    c->n_float_data = 1;
    c->float_data = mb_alloc(&b, sizeof(float));
    c->float_data[0] = 0.5f;
    mb_node(&b, "Add", "add", "x z", "s");
    mb_node(&b, "Mul", "mul", "s half", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "add", "Y[d0,d1,d2] = X0[d0,d2] + X1[d1]", "d0=4,d2=6,d1=3");
    expect_expr(&g, "mul", "Y[d0,d1,d2] = X0[d0,d1,d2] * 0.5", "d0=4,d1=3,d2=6");
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(onnx, unsupported_operators_and_domains_are_refused_naming_the_node) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(4));
    mb_node(&b, "Relu", "r", "x", "h");
    mb_node(&b, "FancyOp", "fancy", "h", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "m.onnx: node 'fancy' (op FancyOp, domain ai.onnx): operator is not supported by "
                              "rotor's importer");
    rotor_graph_free(&g);
    b.nodes[1]->op_type = "Relu";
    b.nodes[1]->domain = "com.example";
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "m.onnx: node 'fancy' (op Relu, domain com.example): operators outside the default "
                              "ONNX domain, com.microsoft and ai.onnx.preview.training are not supported");
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(onnx, cycles_undefined_inputs_and_bad_tensors_are_refused) {
    rotor_graph g;
    rotor_error err = {{0}};
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(4));
    mb_node(&b, "Add", "a", "x q", "p");
    mb_node(&b, "Relu", "b", "p", "q");
    mb_output(&b, "q");
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "node 'a' (op Add, domain ai.onnx): the graph has a cycle");
    rotor_graph_free(&g);
    mb_free(&b);

    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(4));
    mb_node(&b, "Add", "a", "x nowhere", "y");
    mb_output(&b, "y");
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "input 'nowhere' is not defined by any node, input or initializer");
    rotor_graph_free(&g);
    mb_free(&b);

    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 2));
    Onnx__TensorProto *w = mb_init_tensor(&b, "w", 1, DIMS(2, 2), NULL);
    w->has_raw_data = 1;
    w->raw_data.len = 12; /* a 2x2 float tensor needs 16 */
    w->raw_data.data = mb_alloc(&b, 12);
    mb_node(&b, "MatMul", "mm", "x w", "y");
    mb_output(&b, "y");
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "initializer 'w': raw_data holds 12 bytes, its shape needs 16");
    rotor_graph_free(&g);
    mb_free(&b);

    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1000000, 1000000, 1000000, 1000000));
    mb_node(&b, "Relu", "r", "x", "y");
    mb_output(&b, "y");
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "input 'x': element count overflows 64 bits");
    rotor_graph_free(&g);
    mb_free(&b);

    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 2, 8, 8));
    mb_init_tensor(&b, "w", 1, DIMS(2, 3, 3, 3), NULL);
    Onnx__NodeProto *ct = mb_node(&b, "ConvTranspose", "up", "x w", "y");
    mb_attr_ints(&b, ct, "strides", 2, (const int64_t[]){(int64_t)1 << 40, 1});
    mb_output(&b, "y");
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "node 'up' (op ConvTranspose, domain ai.onnx): stride 1099511627776");
    rotor_graph_free(&g);
    mb_free(&b);

    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 3));
    mb_init_tensor(&b, "shape", 7, DIMS(2), (const int64_t[]){4, 4});
    mb_node(&b, "Reshape", "rs", "x shape", "y");
    mb_output(&b, "y");
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "node 'rs' (op Reshape, domain ai.onnx): cannot reshape 6 elements into 16");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* External-data weights keep their shape; a symbolic input binds via --dim;
 * --input replaces a declared shape. */
Test(onnx, external_weights_symbolic_inputs_and_shape_overrides) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(-1, 64));
    Onnx__TensorProto *w = mb_init_tensor(&b, "w", 1, DIMS(64, 32), NULL);
    w->has_data_location = 1;
    w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    mb_node(&b, "MatMul", "mm", "x w", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    rotor_onnx_options o = {.dims = "s1=5"};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "mm", "Y[m,n] += A[m,k] * B[k,n]", "m=5,k=64,n=32");
    int wv = rotor_graph_find_value(&g, "w");
    cr_assert_eq(g.values[wv].role, ROTOR_ROLE_WEIGHT);
    cr_assert_eq(g.values[wv].bytes, 64 * 32 * 4);
    rotor_graph_free(&g);
    rotor_onnx_options o2 = {.input_shapes = "x=7x64"};
    cr_assert_eq(mb_load(&b, &o2, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "mm", "Y[m,n] += A[m,k] * B[k,n]", "m=7,k=64,n=32");
    rotor_graph_free(&g);
    rotor_onnx_options o3 = {.dims = "s1=5", .input_shapes = "z=7x64"};
    cr_assert_eq(mb_load(&b, &o3, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "--input: 'z' is not an input of the graph");
    rotor_graph_free(&g);
    /* a value is read whole, however long: not cut to its first 31
     * characters (800 read as 8, "8junk" as 8 until 2026-12-03) */
    rotor_onnx_options o4 = {.dims = "s1=000000000000000000000000000000800"};
    cr_assert_eq(mb_load(&b, &o4, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "mm", "Y[m,n] += A[m,k] * B[k,n]", "m=800,k=64,n=32");
    rotor_graph_free(&g);
    rotor_onnx_options o6 = {.input_shapes = "x=7x64,x=8x64"};
    cr_assert_eq(mb_load(&b, &o6, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "--input: x is given twice");
    rotor_onnx_options o7 = {.input_shapes = "x=7x64x"};
    cr_assert_eq(mb_load(&b, &o7, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "--input: x: expected extents like 1x3x8");
    rotor_onnx_options o5 = {.dims = "s1=0000000000000000000000000000008junk"};
    cr_assert_eq(mb_load(&b, &o5, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "--dim: s1: expected a positive integer up to 2^32, got '0000000000000000000000000000008junk'");
    mb_free(&b);
}

/* Dead nodes (reaching no output) and Identity/Dropout are not planned. */
Test(onnx, identity_dropout_and_dead_nodes_cost_nothing) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(8));
    mb_node(&b, "Identity", "id", "x", "a");
    mb_node(&b, "Dropout", "drop", "a", "c");
    mb_node(&b, "Exp", "dead", "x", "unused");
    mb_node(&b, "Relu", "act", "c", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 1);
    expect_expr(&g, "act", "Y[d0] = relu(X0[d0])", "d0=8");
    cr_assert_str_eq(g.values[g.ops[0].inputs[0]].name, "x");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* ---- Einsum, losses, GridSample, Resize-10 (issue 20) ------------------------- */

/* One Einsum over inputs of the given shapes (x: r0 dims, y: r1 dims or none). */
static rotor_status einsum(const char *eq, int r0, const int64_t *d0, int r1, const int64_t *d1, rotor_graph *g,
                           rotor_error *err) {
    mb b;
    mb_init(&b, 12);
    mb_input(&b, "x", r0, d0);
    if (r1 >= 0) mb_input(&b, "y", r1, d1);
    Onnx__NodeProto *n = mb_node(&b, "Einsum", "es", r1 >= 0 ? "x y" : "x", "z");
    mb_attr_s(&b, n, "equation", eq);
    mb_output(&b, "z");
    rotor_status st = mb_load(&b, NULL, g, NULL, err);
    mb_free(&b);
    return st;
}

static const rotor_value *out_value(const rotor_graph *g) {
    for (int v = 0; v < g->nvalues; v++)
        if (g->values[v].is_output) return &g->values[v];
    cr_assert_fail("no output");
    return NULL;
}

Test(onnx, einsum_is_lowered_to_the_tensor_expression_it_spells) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(einsum("bij,bjk->bik", DIMS(2, 3, 4), DIMS(2, 4, 5), &g, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "es", "Y[b,i,k] += A[b,i,j] * B[b,j,k]", "b=2,i=3,j=4,k=5");
    rotor_graph_free(&g);
    /* implicit output: the labels used once, in ASCII order (upper case first) */
    cr_assert_eq(einsum("ik,kJ", DIMS(3, 4), DIMS(4, 6), &g, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "es", "Y[J,i] += A[i,k] * B[k,J]", "i=3,k=4,J=6");
    rotor_graph_free(&g);
    /* a permutation is an '=' copy, a dropped label a sum */
    cr_assert_eq(einsum("ij->ji", DIMS(3, 4), -1, NULL, &g, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "es", "Y[j,i] = A[i,j]", "i=3,j=4");
    rotor_graph_free(&g);
    cr_assert_eq(einsum("ij->i", DIMS(3, 4), -1, NULL, &g, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "es", "Y[i] += A[i,j]", "i=3,j=4");
    rotor_graph_free(&g);
}

Test(onnx, einsum_ellipsis_broadcasts_from_the_right) {
    rotor_graph g;
    rotor_error err = {{0}};
    /* ONNX: every "..." stands for as many dimensions (test_onnxvalid.c) */
    cr_assert_eq(einsum("...ij,...jk->...ik", DIMS(5, 1, 3, 4), DIMS(1, 2, 4, 6), &g, &err), ROTOR_OK, "%s", err.msg);
    const rotor_value *z = out_value(&g);
    cr_assert_eq(z->rank, 4);
    cr_assert(z->shape[0] == 5 && z->shape[1] == 2 && z->shape[2] == 3 && z->shape[3] == 6);
    expect_expr(&g, "es", "Y[e0,e1,i,k] += A[e0,i,j] * B[e1,j,k]", "e0=5,i=3,j=4,e1=2,k=6");
    rotor_graph_free(&g);
}

Test(onnx, einsum_with_a_repeated_label_is_a_vendor_op_of_the_right_shape) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(einsum("bii->bi", DIMS(2, 3, 3), -1, NULL, &g, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(find_op(&g, "es")->vendor);
    const rotor_value *z = out_value(&g);
    cr_assert(z->rank == 2 && z->shape[0] == 2 && z->shape[1] == 3);
    rotor_graph_free(&g);
}

Test(onnx, malformed_einsum_equations_are_refused_naming_the_node_and_the_fault) {
    static const struct {
        const char *eq;
        const char *msg;
    } bad[] = {
        {"ij,jk->iz", "output label 'z' is in no input"},
        {"ijk,jk->ik", "term 1 names 3 dimensions, input 'x' has 2"},
        {"ij,kl->ii", "output label 'i' appears twice"},
        {"ij,jk,k->ik", "has 3 terms for 2 inputs"},
        {"i1,jk->ik", "term 1: labels must be letters"},
        {"..i.,jk->ik", "an ellipsis must be exactly '...'"},
        {"ij,ij->ij", "label 'j' is 4 in input 'y' but 3 elsewhere"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rotor_graph g;
        rotor_error err = {{0}};
        bool same = !strcmp(bad[i].eq, "ij,ij->ij");
        cr_assert_eq(einsum(bad[i].eq, DIMS(2, 3), DIMS(same ? 2 : 3, same ? 4 : 5), &g, &err), ROTOR_ERR_INPUT, "%s", bad[i].eq);
        assert_msg_has(err, "node 'es' (op Einsum, domain ai.onnx)");
        assert_msg_has(err, bad[i].msg);
        rotor_graph_free(&g);
    }
}

static rotor_status loss(const char *op, const char *reduction, int nout, rotor_graph *g, rotor_error *err) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(4, 5, 6));
    b.inputs[b.graph.n_input++] = mb_vi(&b, "t", 7, DIMS(4, 6));
    Onnx__NodeProto *n = mb_node(&b, op, "loss", "x t", nout > 1 ? "l p" : "l");
    if (reduction) mb_attr_s(&b, n, "reduction", reduction);
    mb_output(&b, "l");
    if (nout > 1) mb_output(&b, "p");
    rotor_status st = mb_load(&b, NULL, g, NULL, err);
    mb_free(&b);
    return st;
}

Test(onnx, loss_operators_are_scalar_when_reduced_and_target_shaped_otherwise) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(loss("NegativeLogLikelihoodLoss", NULL, 1, &g, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.values[rotor_graph_find_value(&g, "l")].rank, 0); /* mean by default */
    rotor_graph_free(&g);
    cr_assert_eq(loss("NegativeLogLikelihoodLoss", "none", 1, &g, &err), ROTOR_OK, "%s", err.msg);
    const rotor_value *l = &g.values[rotor_graph_find_value(&g, "l")];
    cr_assert(l->rank == 2 && l->shape[0] == 4 && l->shape[1] == 6);
    rotor_graph_free(&g);
    cr_assert_eq(loss("SoftmaxCrossEntropyLoss", "sum", 2, &g, &err), ROTOR_OK, "%s", err.msg);
    const rotor_value *p = &g.values[rotor_graph_find_value(&g, "p")];
    cr_assert(p->rank == 3 && p->shape[1] == 5, "log_prob is shaped like the scores");
    rotor_graph_free(&g);
    cr_assert_eq(loss("SoftmaxCrossEntropyLoss", "average", 1, &g, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "reduction 'average' is not none, sum or mean");
    rotor_graph_free(&g);
}

Test(onnx, gridsample_takes_the_grid_spatial_shape_and_resize10_reads_scales_at_input_1) {
    mb b;
    mb_init(&b, 16);
    mb_input(&b, "x", DIMS(2, 3, 8, 8));
    mb_input(&b, "grid", DIMS(2, 5, 7, 2));
    mb_node(&b, "GridSample", "gs", "x grid", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    const rotor_value *y = out_value(&g);
    cr_assert(y->rank == 4 && y->shape[0] == 2 && y->shape[1] == 3 && y->shape[2] == 5 && y->shape[3] == 7);
    rotor_graph_free(&g);
    mb_free(&b);

    mb_init(&b, 10);
    mb_input(&b, "x", DIMS(1, 2, 4, 6));
    Onnx__TensorProto *s = mb_init_tensor(&b, "scales", 1, DIMS(4), NULL);
    static float sv[4] = {1, 1, 2, 0.5f};
    s->n_float_data = 4;
    s->float_data = sv;
    mb_node(&b, "Resize", "rs", "x scales", "y");
    mb_output(&b, "y");
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    y = out_value(&g);
    cr_assert(y->rank == 4 && y->shape[2] == 8 && y->shape[3] == 3, "%lldx%lld", (long long)y->shape[2],
              (long long)y->shape[3]);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* repeat_kv of grouped-query attention: Unsqueeze -> Expand -> Reshape.
 * The Expand creates an axis its input lacks, which no T10 expression can
 * write: it imports as a vendor op (a broadcast copy) of the right shape. */
Test(onnx, an_expand_that_broadcasts_is_a_vendor_op_so_repeat_kv_imports) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "k", DIMS(1, 2, 8, 16));
    mb_init_tensor(&b, "ax", 7, DIMS(1), (const int64_t[]){2});
    mb_init_tensor(&b, "to", 7, DIMS(5), (const int64_t[]){1, 2, 3, 8, 16});
    mb_init_tensor(&b, "shp", 7, DIMS(4), (const int64_t[]){1, 6, 8, 16});
    mb_node(&b, "Unsqueeze", "unsq", "k ax", "k5");
    mb_node(&b, "Expand", "rep", "k5 to", "k6");
    mb_node(&b, "Reshape", "merge", "k6 shp", "kr");
    mb_output(&b, "kr");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    const rotor_op *rep = find_op(&g, "rep");
    cr_assert(rep->vendor);
    const rotor_value *y = &g.values[rep->outputs[0]];
    cr_assert(y->rank == 5 && y->shape[2] == 3 && y->elements == 1 * 2 * 3 * 8 * 16);
    const rotor_value *kr = out_value(&g);
    cr_assert(kr->rank == 4 && kr->shape[1] == 6);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* An LSTM of 3 steps unrolls into the ONNX definition's operators: one input
 * projection for every step, a recurrent product from the second step on
 * (no initial_h: the first step's is zero), the gates, the cell and the
 * hidden state per step, and Y_h as a copy of the last step's. */
Test(onnx, an_lstm_unrolls_into_its_matmuls_and_gates) {
    mb b;
    mb_init(&b, 14);
    mb_input(&b, "x", DIMS(3, 2, 4));
    mb_init_tensor(&b, "w", 1, DIMS(1, 20, 4), NULL);
    mb_init_tensor(&b, "r", 1, DIMS(1, 20, 5), NULL);
    mb_init_tensor(&b, "bias", 1, DIMS(1, 40), NULL);
    Onnx__NodeProto *n = mb_node(&b, "LSTM", "lstm", "x w r bias", "- yh");
    mb_attr_i(&b, n, "hidden_size", 5);
    mb_output(&b, "yh");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    /* xw, xwb; step 0: i f cand c o h (6); steps 1-2: q + 6 each; y_h */
    cr_assert_eq(g.nops, 2 + 6 + 2 * 7 + 1, "%d operators", g.nops);
    expect_expr(&g, "lstm.d0.xw", "Y[s,b,g] += X[s,b,i] * W[g,i]", "s=3,b=2,i=4,g=20");
    expect_expr(&g, "lstm.d0.t1.q", "Y[b,g] += H[b,h] * R[g,h]", "b=2,h=5,g=20");
    expect_expr(&g, "lstm.d0.t1.c", "Y[b,h] = F[b,h] * C[b,h] + I[b,h] * G[b,h]", "b=2,h=5");
    expect_expr(&g, "lstm.d0.t2.h", "Y[b,h] = O[b,h] * tanh(C[b,h])", "b=2,h=5");
    double mm = 0;
    for (int i = 0; i < g.nops; i++)
        if (!strcmp(g.ops[i].type, "MatMul")) mm += g.ops[i].flops;
    cr_assert_float_eq(mm, 2.0 * 3 * 2 * 20 * 4 + 2.0 * 2 * 2 * 20 * 5, 1e-9, "MatMul FLOPs %g", mm);
    const rotor_value *yh = out_value(&g);
    cr_assert(yh->rank == 3 && yh->shape[0] == 1 && yh->shape[1] == 2 && yh->shape[2] == 5);
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(onnx, recurrent_forms_the_unrolling_cannot_express_are_refused_by_name) {
    mb b;
    mb_init(&b, 14);
    mb_input(&b, "x", DIMS(3, 2, 4));
    mb_init_tensor(&b, "w", 1, DIMS(1, 15, 4), NULL);
    mb_init_tensor(&b, "r", 1, DIMS(1, 15, 5), NULL);
    Onnx__NodeProto *n = mb_node(&b, "GRU", "gru", "x w r", "y");
    mb_attr_i(&b, n, "hidden_size", 5);
    Onnx__AttributeProto *a = mb_alloc(&b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(&b, "activations");
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    a->n_strings = 2;
    a->strings = mb_alloc(&b, 2 * sizeof *a->strings);
    a->strings[0] = (ProtobufCBinaryData){6, (uint8_t *)mb_str(&b, "Affine")};
    a->strings[1] = (ProtobufCBinaryData){4, (uint8_t *)mb_str(&b, "Tanh")};
    n->attribute[n->n_attribute++] = a;
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "node 'gru' (op GRU, domain ai.onnx): activation 'Affine' is not supported in the unrolled form");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* Compress's output extent is its condition's count of true entries: known
 * once --value gives the condition. */
Test(onnx, compress_needs_its_condition_and_takes_its_count) {
    mb b;
    mb_init(&b, 11);
    mb_input(&b, "x", DIMS(3, 4));
    b.inputs[b.graph.n_input++] = mb_vi(&b, "cond", 9, DIMS(3));
    Onnx__NodeProto *n = mb_node(&b, "Compress", "cp", "x cond", "y");
    mb_attr_i(&b, n, "axis", 0);
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "condition 'cond' decides the output's shape and comes from graph input 'cond' (give it with "
                        "--value cond=...)");
    rotor_graph_free(&g);
    static const char *const v[1] = {"cond=1,0,1"};
    rotor_onnx_options o = {.values = v, .nvalues = 1};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    const rotor_value *y = out_value(&g);
    cr_assert(y->rank == 2 && y->shape[0] == 2 && y->shape[1] == 4);
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(onnx, bad_values_are_refused_naming_the_input) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 6));
    b.inputs[b.graph.n_input++] = mb_vi(&b, "shp", 7, DIMS(2));
    mb_node(&b, "Reshape", "rs", "x shp", "y");
    mb_output(&b, "y");
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"nope=1,2", "m.onnx: --value: 'nope' is not an input of the graph"},
        {"shp=3,x", "m.onnx: --value shp: expected numbers separated by commas, got '3,x'"},
        {"shp=3.5,4", "m.onnx: --value shp: 3.5 is not an integer, and the input is declared int64"},
        {"shp", "m.onnx: --value: expected NAME=FILE.pb or NAME=1,2,3 in 'shp'"},
        {"shp=/nonexistent/v.pb", "m.onnx: --value shp: /nonexistent/v.pb: No such file or directory"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *v[1] = {bad[i].spec};
        rotor_onnx_options o = {.values = v, .nvalues = 1};
        rotor_graph g;
        rotor_error err = {{0}};
        cr_assert_neq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", bad[i].spec);
        assert_msg_has(err, bad[i].msg);
        rotor_graph_free(&g);
    }
    const char *v2[2] = {"shp=3,4", "shp=4,3"};
    rotor_onnx_options o2 = {.values = v2, .nvalues = 2};
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, &o2, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "--value: 'shp' is given twice, or is an initializer");
    rotor_graph_free(&g);
    const char *v3[1] = {"shp=3,4"};
    rotor_onnx_options o3 = {.values = v3, .nvalues = 1};
    cr_assert_eq(mb_load(&b, &o3, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    const rotor_value *y = out_value(&g);
    cr_assert(y->rank == 2 && y->shape[0] == 3 && y->shape[1] == 4);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* The model replayed on ipu-mk2 over its compiled prediction. */
static double compile_and_replay(rotor_graph *g) {
    rotor_graph grouped;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_group(g, &grouped, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_chip mk = mk2();
    rotor_compile_result r;
    cr_assert_eq(rotor_compile(&grouped, &mk, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    char *text;
    rotor_program prog;
    rotor_replay_result rr;
    cr_assert_eq(rotor_program_write(&grouped, &mk, &r, &text, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_parse(text, "p.json", &mk, &prog, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_replay(&prog, &mk, NULL, &rr, NULL, &err), ROTOR_OK, "%s", err.msg);
    double ratio = rr.simulated_s / r.total_s;
    rotor_replay_result_free(&rr);
    rotor_program_free(&prog);
    free(text);
    rotor_compile_result_free(&r);
    rotor_graph_free(&grouped);
    return ratio;
}

/* ---- a Llama-style decoder layer with grouped-query attention ---------------- */

/* One Llama decoder layer as PyTorch exports it: spelled-out RMSNorm,
 * q/k/v projections, heads by Reshape and Transpose, repeat_kv
 * (Unsqueeze, Expand, Reshape) of kv_heads < heads, scaled scores, Softmax,
 * the context, o_proj and the residual, then a SwiGLU MLP and its residual.
 * Sizes: seq s, hidden 4 * hd, 4 heads over 2 KV heads. */
static void llama_gqa_layer(mb *b, int64_t s, int64_t hd) {
    int64_t d = 4 * hd, kv = 2 * hd, f = 2 * d;
    mb_init(b, 13);
    mb_input(b, "x", DIMS(1, s, d));
    /* RMSNorm: x / sqrt(mean(x^2) + eps) * g */
    mb_init_tensor(b, "g1", 1, DIMS(d), NULL);
    mb_init_tensor(b, "g2", 1, DIMS(d), NULL);
    static float two = 2, eps = 1e-6f, scale = 4;
    Onnx__TensorProto *t2 = mb_init_tensor(b, "c2", 1, DIMS(1), NULL);
    t2->n_float_data = 1, t2->float_data = &two;
    Onnx__TensorProto *te = mb_init_tensor(b, "eps", 1, DIMS(1), NULL);
    te->n_float_data = 1, te->float_data = &eps;
    Onnx__TensorProto *ts = mb_init_tensor(b, "scale", 1, DIMS(1), NULL);
    ts->n_float_data = 1, ts->float_data = &scale;
    const char *norm_in[2] = {"x", "h1"}, *norm_out[2] = {"xn", "hn"}, *gain[2] = {"g1", "g2"};
    for (int i = 0; i < 2; i++) {
        char ins[64], out[32], nm[32];
        snprintf(nm, sizeof nm, "n%d.pow", i);
        snprintf(ins, sizeof ins, "%s c2", norm_in[i]);
        snprintf(out, sizeof out, "n%d.sq", i);
        mb_node(b, "Pow", nm, ins, out);
        snprintf(nm, sizeof nm, "n%d.mean", i);
        snprintf(ins, sizeof ins, "n%d.sq", i);
        snprintf(out, sizeof out, "n%d.ms", i);
        Onnx__NodeProto *rm = mb_node(b, "ReduceMean", nm, ins, out);
        mb_attr_ints(b, rm, "axes", 1, (const int64_t[]){-1});
        snprintf(nm, sizeof nm, "n%d.add", i);
        snprintf(ins, sizeof ins, "n%d.ms eps", i);
        snprintf(out, sizeof out, "n%d.mse", i);
        mb_node(b, "Add", nm, ins, out);
        snprintf(nm, sizeof nm, "n%d.sqrt", i);
        snprintf(ins, sizeof ins, "n%d.mse", i);
        snprintf(out, sizeof out, "n%d.rms", i);
        mb_node(b, "Sqrt", nm, ins, out);
        snprintf(nm, sizeof nm, "n%d.div", i);
        snprintf(ins, sizeof ins, "%s n%d.rms", norm_in[i], i);
        snprintf(out, sizeof out, "n%d.y", i);
        mb_node(b, "Div", nm, ins, out);
        snprintf(nm, sizeof nm, "n%d.gain", i);
        snprintf(ins, sizeof ins, "n%d.y %s", i, gain[i]);
        mb_node(b, "Mul", nm, ins, norm_out[i]);
        if (i == 0) {
            /* attention */
            mb_init_tensor(b, "wq", 1, DIMS(d, d), NULL);
            mb_init_tensor(b, "wk", 1, DIMS(d, kv), NULL);
            mb_init_tensor(b, "wv", 1, DIMS(d, kv), NULL);
            mb_init_tensor(b, "wo", 1, DIMS(d, d), NULL);
            mb_init_tensor(b, "sh_q", 7, DIMS(4), (const int64_t[]){1, s, 4, hd});
            mb_init_tensor(b, "sh_kv", 7, DIMS(4), (const int64_t[]){1, s, 2, hd});
            mb_init_tensor(b, "ax2", 7, DIMS(1), (const int64_t[]){2});
            mb_init_tensor(b, "to5", 7, DIMS(5), (const int64_t[]){1, 2, 2, s, hd});
            mb_init_tensor(b, "sh_rep", 7, DIMS(4), (const int64_t[]){1, 4, s, hd});
            mb_init_tensor(b, "sh_out", 7, DIMS(3), (const int64_t[]){1, s, d});
            mb_node(b, "MatMul", "q_proj", "xn wq", "q");
            mb_node(b, "MatMul", "k_proj", "xn wk", "k");
            mb_node(b, "MatMul", "v_proj", "xn wv", "v");
            mb_node(b, "Reshape", "q_heads", "q sh_q", "q4");
            mb_attr_ints(b, mb_node(b, "Transpose", "q_t", "q4", "qh"), "perm", 4, (const int64_t[]){0, 2, 1, 3});
            const char *kvn[2] = {"k", "v"};
            for (int j = 0; j < 2; j++) {
                char a[32], o2[32], nm2[32];
                snprintf(nm2, sizeof nm2, "%s_heads", kvn[j]);
                snprintf(a, sizeof a, "%s sh_kv", kvn[j]);
                snprintf(o2, sizeof o2, "%s4", kvn[j]);
                mb_node(b, "Reshape", nm2, a, o2);
                snprintf(nm2, sizeof nm2, "%s_t", kvn[j]);
                snprintf(a, sizeof a, "%s4", kvn[j]);
                snprintf(o2, sizeof o2, "%sh", kvn[j]);
                mb_attr_ints(b, mb_node(b, "Transpose", nm2, a, o2), "perm", 4, (const int64_t[]){0, 2, 1, 3});
                snprintf(nm2, sizeof nm2, "%s_unsq", kvn[j]);
                snprintf(a, sizeof a, "%sh ax2", kvn[j]);
                snprintf(o2, sizeof o2, "%s5", kvn[j]);
                mb_node(b, "Unsqueeze", nm2, a, o2);
                snprintf(nm2, sizeof nm2, "%s_repeat", kvn[j]);
                snprintf(a, sizeof a, "%s5 to5", kvn[j]);
                snprintf(o2, sizeof o2, "%sx", kvn[j]);
                mb_node(b, "Expand", nm2, a, o2);
                snprintf(nm2, sizeof nm2, "%s_merge", kvn[j]);
                snprintf(a, sizeof a, "%sx sh_rep", kvn[j]);
                snprintf(o2, sizeof o2, "%sr", kvn[j]);
                mb_node(b, "Reshape", nm2, a, o2);
            }
            mb_attr_ints(b, mb_node(b, "Transpose", "k_tt", "kr", "kt"), "perm", 4, (const int64_t[]){0, 1, 3, 2});
            mb_node(b, "MatMul", "scores", "qh kt", "sc");
            mb_node(b, "Div", "scale_div", "sc scale", "scs");
            mb_attr_i(b, mb_node(b, "Softmax", "softmax", "scs", "p"), "axis", -1);
            mb_node(b, "MatMul", "context", "p vr", "ctx");
            mb_attr_ints(b, mb_node(b, "Transpose", "ctx_t", "ctx", "ctxt"), "perm", 4, (const int64_t[]){0, 2, 1, 3});
            mb_node(b, "Reshape", "ctx_merge", "ctxt sh_out", "ctxm");
            mb_node(b, "MatMul", "o_proj", "ctxm wo", "o");
            mb_node(b, "Add", "residual1", "x o", "h1");
        }
    }
    /* SwiGLU MLP */
    mb_init_tensor(b, "wg", 1, DIMS(d, f), NULL);
    mb_init_tensor(b, "wu", 1, DIMS(d, f), NULL);
    mb_init_tensor(b, "wd", 1, DIMS(f, d), NULL);
    mb_node(b, "MatMul", "gate_proj", "hn wg", "gt");
    mb_node(b, "MatMul", "up_proj", "hn wu", "up");
    mb_node(b, "Sigmoid", "sig", "gt", "sg");
    mb_node(b, "Mul", "silu", "gt sg", "si");
    mb_node(b, "Mul", "glu", "si up", "gu");
    mb_node(b, "MatMul", "down_proj", "gu wd", "dn");
    mb_node(b, "Add", "residual2", "h1 dn", "out");
    mb_output(b, "out");
}

Test(onnx, a_gqa_llama_layer_imports_compiles_on_mk2_and_schedules_on_pod4, .timeout = 120) {
    mb b;
    llama_gqa_layer(&b, 128, 64);
    rotor_graph g, grouped;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(find_op(&g, "k_repeat")->vendor, "repeat_kv's Expand is a broadcast copy");
    expect_expr(&g, "q_proj", "Y[m,n] += A[m,k] * B[k,n]", "m=128,k=256,n=256");
    const rotor_value *out = out_value(&g);
    cr_assert(out->rank == 3 && out->shape[1] == 128 && out->shape[2] == 256);
    /* it simulates: +5.8% when written.  This small layer's hand-offs are
     * many small exchanges, which the replay's list schedule packs less
     * tightly than the model's busiest-port bound (docs/simulator.md,
     * "Hand-off schedule"); BERT-Large's agree within 1% */
    double ratio = compile_and_replay(&g);
    cr_assert(fabs(ratio - 1) < 0.08, "simulated / model = %g", ratio);
    cr_assert_eq(rotor_group(&g, &grouped, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_chip p4 = pod4();
    rotor_schedule *s;
    cr_assert_eq(rotor_schedule_build(&grouped, &p4, NULL, &s, &err), ROTOR_OK, "%s", err.msg);
    rotor_schedule_free(s);
    rotor_graph_free(&grouped);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* ---- an onnxruntime-optimised BERT layer (com.microsoft operators) ------------ */

static Onnx__NodeProto *ms_node(mb *b, const char *op, const char *name, const char *ins, const char *outs) {
    Onnx__NodeProto *n = mb_node(b, op, name, ins, outs);
    n->domain = mb_str(b, "com.microsoft");
    return n;
}

/* Attention (qkv weights and bias, 4 heads), the output projection,
 * SkipLayerNormalization, the FFN with BiasGelu, SkipLayerNormalization:
 * what onnxruntime's transformer optimiser makes of a BERT layer. */
static void ort_bert_layer(mb *b, int64_t s, int64_t h) {
    mb_init(b, 13);
    mb_input(b, "x", DIMS(1, s, h));
    mb_init_tensor(b, "wqkv", 1, DIMS(h, 3 * h), NULL);
    mb_init_tensor(b, "bqkv", 1, DIMS(3 * h), NULL);
    mb_init_tensor(b, "wo", 1, DIMS(h, h), NULL);
    mb_init_tensor(b, "w1", 1, DIMS(h, 4 * h), NULL);
    mb_init_tensor(b, "b1", 1, DIMS(4 * h), NULL);
    mb_init_tensor(b, "w2", 1, DIMS(4 * h, h), NULL);
    const char *ln[2][3] = {{"g1", "be1", "bo"}, {"g2", "be2", "b2"}};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) mb_init_tensor(b, ln[i][j], 1, DIMS(h), NULL);
    mb_attr_i(b, ms_node(b, "Attention", "attn", "x wqkv bqkv", "a"), "num_heads", 4);
    mb_node(b, "MatMul", "attn_out", "a wo", "o");
    ms_node(b, "SkipLayerNormalization", "ln1", "o x g1 be1 bo", "h1");
    mb_node(b, "MatMul", "ffn_up", "h1 w1", "u");
    ms_node(b, "BiasGelu", "gelu", "u b1", "gu");
    mb_node(b, "MatMul", "ffn_down", "gu w2", "d");
    ms_node(b, "SkipLayerNormalization", "ln2", "d h1 g2 be2 b2", "y");
    mb_output(b, "y");
}

Test(onnx, an_onnxruntime_optimised_bert_layer_imports_compiles_and_simulates, .timeout = 120) {
    mb b;
    ort_bert_layer(&b, 128, 256);
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "attn.qkv", "Y[m,n] += A[m,k] * B[k,n]", "m=128,k=256,n=768");
    expect_expr(&g, "attn.scores", "S[b,g,r,m,n] += Q[b,g,r,m,k] * K[b,g,n,k]", "b=1,g=4,r=1,m=128,k=64,n=128");
    expect_expr(&g, "attn.context", "O[b,g,r,m,k] += P[b,g,r,m,n] * V[b,g,n,k]", "b=1,g=4,r=1,m=128,n=128,k=64");
    cr_assert(find_op(&g, "attn.softmax")->vendor);
    cr_assert(find_op(&g, "ln1")->vendor);
    expect_expr(&g, "gelu", "Y[d1,d2] = gelu(X0[d1,d2] + X1[d2])", "d1=128,d2=1024");
    /* the attention's FLOPs: the QKV projection, the scores and the context */
    double f = find_op(&g, "attn.qkv")->flops + find_op(&g, "attn.scores")->flops + find_op(&g, "attn.context")->flops;
    cr_assert_float_eq(f, 2.0 * 128 * 256 * 768 + 2 * 2.0 * 4 * 128 * 128 * 64, 1, "%g", f);
    const rotor_value *y = out_value(&g);
    cr_assert(y->rank == 3 && y->shape[1] == 128 && y->shape[2] == 256);
    double ratio = compile_and_replay(&g);
    cr_assert(fabs(ratio - 1) < 0.05, "simulated / model = %g", ratio);
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(onnx, other_domains_are_refused_and_unknown_com_microsoft_operators_named) {
    /* the same message in both domains the registry knows (onnxops.c) */
    static const char *const msg[2] = {
        "node 'ff' (op FancyFusedThing, domain com.microsoft): operator is not supported by rotor's importer",
        "node 'ff' (op FancyFusedThing, domain ai.onnx): operator is not supported by rotor's importer"};
    for (int d = 0; d < 2; d++) {
        mb b;
        mb_init(&b, 13);
        mb_input(&b, "x", DIMS(2, 3));
        if (d == 0) ms_node(&b, "FancyFusedThing", "ff", "x", "y");
        else mb_node(&b, "FancyFusedThing", "ff", "x", "y");
        mb_output(&b, "y");
        rotor_graph g;
        rotor_error err = {{0}};
        cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
        assert_msg_has(err, msg[d]);
        rotor_graph_free(&g);
        mb_free(&b);
    }
}

Test(onnx, an_einsum_model_and_an_lstm_model_compile_and_simulate, .timeout = 120) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(einsum("bij,bjk->bik", DIMS(8, 64, 128), DIMS(8, 128, 96), &g, &err), ROTOR_OK, "%s", err.msg);
    double e = compile_and_replay(&g);
    cr_assert(fabs(e - 1) < 0.03, "einsum: simulated / model = %g", e);
    rotor_graph_free(&g);
    mb b;
    mb_init(&b, 14);
    mb_input(&b, "x", DIMS(4, 8, 64));
    mb_init_tensor(&b, "w", 1, DIMS(1, 256, 64), NULL);
    mb_init_tensor(&b, "r", 1, DIMS(1, 256, 64), NULL);
    mb_init_tensor(&b, "bias", 1, DIMS(1, 512), NULL);
    mb_attr_i(&b, mb_node(&b, "LSTM", "lstm", "x w r bias", "y"), "hidden_size", 64);
    mb_output(&b, "y");
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    double l = compile_and_replay(&g);
    cr_assert(fabs(l - 1) < 0.08, "lstm: simulated / model = %g", l);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* Opset 6's Add with broadcast=1 and an axis: B's dimensions align with A's
 * from the axis on, not from the right. */
Test(onnx, legacy_broadcast_aligns_b_at_its_axis) {
    mb b;
    mb_init(&b, 6);
    mb_input(&b, "a", DIMS(2, 3, 4, 5));
    mb_input(&b, "bb", DIMS(3, 4));
    Onnx__NodeProto *n = mb_node(&b, "Add", "add", "a bb", "y");
    mb_attr_i(&b, n, "broadcast", 1);
    mb_attr_i(&b, n, "axis", 1);
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_expr(&g, "add", "Y[d0,d1,d2,d3] = X0[d0,d1,d2,d3] + X1[d1,d2]", "d0=2,d1=3,d2=4,d3=5");
    rotor_graph_free(&g);
    n->attribute[1]->i = 2; /* B [3, 4] does not fit A's [4, 5] */
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "node 'add' (op Add, domain ai.onnx): input 'bb' does not fit input 'a' from axis 2 (legacy "
                        "broadcast)");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* An If on a known condition folds into its branch; on a graph input it is
 * refused naming the input to bind. */
static Onnx__GraphProto *branch(mb *b, const char *op, const char *out) {
    Onnx__GraphProto *g = mb_alloc(b, sizeof *g);
    onnx__graph_proto__init(g);
    g->node = mb_alloc(b, sizeof(void *));
    Onnx__NodeProto *n = mb_alloc(b, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = mb_str(b, op);
    n->name = mb_str(b, op);
    n->n_input = n->n_output = 1;
    n->input = mb_alloc(b, sizeof(char *));
    n->output = mb_alloc(b, sizeof(char *));
    n->input[0] = mb_str(b, "x");
    n->output[0] = mb_str(b, out);
    g->node[g->n_node++] = n;
    g->output = mb_alloc(b, sizeof(void *));
    g->output[g->n_output++] = mb_vi(b, out, 1, 0, NULL);
    return g;
}

Test(onnx, an_if_on_a_known_condition_folds_into_its_branch) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 3));
    Onnx__TensorProto *c = mb_init_tensor(&b, "c", 9, 0, NULL, NULL);
    static int32_t truth = 1;
    c->n_int32_data = 1;
    c->int32_data = &truth;
    Onnx__NodeProto *n = mb_node(&b, "If", "if", "c", "y");
    const char *names[2] = {"then_branch", "else_branch"};
    Onnx__GraphProto *gs[2] = {branch(&b, "Relu", "t"), branch(&b, "Sigmoid", "e")};
    for (int i = 0; i < 2; i++) {
        Onnx__AttributeProto *a = mb_alloc(&b, sizeof *a);
        onnx__attribute_proto__init(a);
        a->name = mb_str(&b, names[i]);
        a->has_type = 1;
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
        a->g = gs[i];
        n->attribute[n->n_attribute++] = a;
    }
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 1);
    cr_assert_str_eq(g.ops[0].type, "Relu");
    rotor_graph_free(&g);
    truth = 0;
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(g.ops[0].type, "Sigmoid");
    rotor_graph_free(&g);
    /* the condition as a graph input */
    b.graph.n_initializer = 0;
    b.inputs[b.graph.n_input++] = mb_vi(&b, "c", 9, 0, NULL);
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "node 'if' (op If, domain ai.onnx): the condition 'c' comes from graph input 'c'; an If "
                        "folds only on a condition known at import (give it with --value c=1 or 0)");
    rotor_graph_free(&g);
    static const char *const v[1] = {"c=1"};
    rotor_onnx_options o = {.values = v, .nvalues = 1};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(g.ops[0].type, "Relu");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* Scan and Loop with lengths known at import unroll into their bodies'
 * operators, one copy per step (ONNX's own test models). */
#define TESTDATA_NODE "/usr/share/libonnx-testdata/data/node"

Test(onnx, a_scan_and_a_loop_with_known_lengths_unroll) {
    rotor_graph g;
    rotor_error err = {{0}};
    /* Scan over x [3, 2]: per step a Gather of the slice and the body's Add;
     * the scan output stacks the three sums */
    cr_assert_eq(rotor_onnx_load(TESTDATA_NODE "/test_scan9_sum/model.onnx", NULL, &g, NULL, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(rotor_graph_count_type(&g, "Add"), 3);
    cr_assert_eq(rotor_graph_count_type(&g, "Gather"), 3);
    cr_assert_eq(rotor_graph_count_type(&g, "Concat"), 1);
    rotor_graph_free(&g);
    /* Loop: refused until its trip count and condition are known */
    cr_assert_eq(rotor_onnx_load(TESTDATA_NODE "/test_loop11/model.onnx", NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "the trip count 'trip_count' comes from graph input 'trip_count'; a Loop unrolls only when "
                        "its trip count and condition are known at import (give it with --value trip_count=N)");
    rotor_graph_free(&g);
    static const char *const v[2] = {"trip_count=5", "cond=1"};
    rotor_onnx_options o = {.values = v, .nvalues = 2};
    cr_assert_eq(rotor_onnx_load(TESTDATA_NODE "/test_loop11/model.onnx", &o, &g, NULL, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(rotor_graph_count_type(&g, "Add"), 5, "one body Add per iteration");
    rotor_graph_free(&g);
}

/* ---- the operator registry (src/model/onnxops.c; docs/onnx.md, "The operator registry") ---- */

Test(onnxops, every_row_has_a_name_a_known_domain_a_shape_rule_and_a_well_formed_opset_range) {
    int n;
    const ox_opdef *rows = ox_op_rows(&n);
    cr_assert_gt(n, 150, "the registry holds every operator rotor imports");
    for (int i = 0; i < n; i++) {
        const ox_opdef *r = &rows[i];
        cr_assert(r->name && *r->name, "row %d has no name", i);
        cr_assert(r->domain && (!strcmp(r->domain, "ai.onnx") || !strcmp(r->domain, "com.microsoft") ||
                                !strcmp(r->domain, "ai.onnx.preview.training")),
                  "%s: domain", r->name);
        cr_assert_not_null(r->infer, "%s has no shape rule", r->name);
        cr_assert(r->since >= 0 && r->since <= r->until, "%s: opsets %lld..%lld", r->name, (long long)r->since,
                  (long long)r->until);
        cr_assert(!(r->fold1 && r->fold2), "%s folds as unary and binary", r->name);
    }
}

Test(onnxops, a_name_has_one_row_per_domain_and_opset) {
    int n;
    const ox_opdef *rows = ox_op_rows(&n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            const ox_opdef *a = &rows[i], *b = &rows[j];
            if (strcmp(a->name, b->name) || strcmp(a->domain, b->domain)) continue;
            cr_assert(a->until < b->since || b->until < a->since, "%s (%s): two rows cover one opset", a->name,
                      a->domain);
        }
}

Test(onnxops, every_kernel_kind_is_named_by_a_row_and_filled_in_runs_table) {
    int n;
    const ox_opdef *rows = ox_op_rows(&n);
    for (int k = ROTOR_KERNEL_NONE + 1; k < ROTOR_KERNEL_COUNT; k++) {
        bool named = false;
        for (int i = 0; i < n; i++) named |= rows[i].kernel == (rotor_kernel)k;
        cr_assert(named || k >= ROTOR_KERNEL_TRAIN_FIRST, "kernel kind %d is named by no row", k);
        cr_assert(rotor_run_kernel_kind((rotor_kernel)k), "run has no kernel for kind %d", k);
    }
    cr_assert(!rotor_run_kernel_kind(ROTOR_KERNEL_NONE));
    for (int i = 0; i < n; i++) {
        const ox_opdef *r = &rows[i];
        if (r->kernel == ROTOR_KERNEL_NONE) continue;
        cr_assert(!strcmp(r->domain, "ai.onnx") || (r->flags & OX_ALSO_DEFAULT), "%s: a kernel its type does not find", r->name);
        /* by type, as rotor run finds the kernel of an operator the lowering did not make */
        cr_assert_eq(rotor_onnx_kernel(r->name), r->kernel, "%s", r->name);
        cr_assert(rotor_run_has_kernel(r->name), "%s", r->name);
    }
    cr_assert_eq(rotor_onnx_kernel("Frobnicate"), ROTOR_KERNEL_NONE);
    cr_assert_eq(rotor_onnx_kernel("MatMul"), ROTOR_KERNEL_NONE, "MatMul is an expression, not a vendor op");
}

Test(onnxops, lookups_take_the_domain_and_return_the_operators_row) {
    const ox_opdef *mm = ox_op_find("ai.onnx", "MatMul", 13);
    cr_assert(mm && !strcmp(mm->name, "MatMul") && mm->infer == ox_infer_matmul && mm->lower == lw_matmul);
    const ox_opdef *at = ox_op_find("com.microsoft", "Attention", 13);
    cr_assert(at && at->infer == ox_infer_attention && at->lower == lw_attention);
    cr_assert_null(ox_op_find("ai.onnx", "Attention", 13), "Attention is com.microsoft's");
    /* Gelu is in both domains, with different rules */
    const ox_opdef *g1 = ox_op_find("ai.onnx", "Gelu", 20), *g2 = ox_op_find("com.microsoft", "Gelu", 20);
    cr_assert(g1 && g2 && g1 != g2 && g1->infer == ox_infer_unary && g2->lower == lw_ms_gelu);
    cr_assert_null(ox_op_find("ai.onnx", "Frobnicate", 13));
    cr_assert_null(ox_op_find("ai.onnx", "matmul", 13), "names are case-sensitive, as in ONNX");
    const ox_opdef *rm = ox_op_find("ai.onnx", "ReduceMax", 18);
    cr_assert(rm && rm->kernel == ROTOR_KERNEL_REDUCE_MAX && rm->lower == lw_reduce);
    cr_assert(ox_op_find("ai.onnx", "Abs", 1)->fold1 != NULL && ox_op_find("ai.onnx", "Mod", 13)->fold2 != NULL);
    cr_assert(ox_op_find("ai.onnx", "RandomNormal", 1)->flags & OX_RANDOM);
}

Test(onnxops, a_vendor_op_carries_its_rows_kernel_and_an_expression_none) {
    rotor_graph g;
    rotor_error err = {{0}};
    /* Scan unrolled: a Gather and a Concat (vendor ops) and the body's Adds (expressions) */
    cr_assert_eq(rotor_onnx_load(TESTDATA_NODE "/test_scan9_sum/model.onnx", NULL, &g, NULL, &err), ROTOR_OK, "%s",
                 err.msg);
    int vendors = 0;
    for (int o = 0; o < g.nops; o++) {
        const rotor_op *op = &g.ops[o];
        if (!op->vendor) {
            cr_assert_eq(op->kernel, ROTOR_KERNEL_NONE, "%s", op->name);
            continue;
        }
        vendors++;
        cr_assert_eq(op->kernel, rotor_onnx_kernel(op->type), "%s (%s)", op->name, op->type);
        cr_assert_neq(op->kernel, ROTOR_KERNEL_NONE, "%s (%s)", op->name, op->type);
    }
    cr_assert_geq(vendors, 4);
    rotor_graph_free(&g);
}
