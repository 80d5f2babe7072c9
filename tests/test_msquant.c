/* test_msquant.c — onnxruntime's quantized com.microsoft operators
 * (src/model/onnxmsquant.c, src/run/kernmsquant.c; docs/onnx.md,
 * "onnxruntime's quantized operators") and the 4-bit element types.
 *
 * Each test builds the one node its rule needs (tests/onnxbuild.h): the
 * shapes, FLOPs and element types a planning import gives, the refusals
 * of what onnxruntime's schema forbids, and each kernel's result on small
 * inputs against a value computed by hand in the comment beside it
 * (onnxruntime's ContribOperators.md for the formulas). */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "onnxbuild.h"
#include "rotor/model/graph.h"
#include "rotor/model/onnx.h"
#include "rotor/run/run.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

enum { FLOAT = 1, UINT8 = 2, INT8 = 3, UINT4 = 21, INT4 = 22 };

static void input(mb *b, const char *name, int type, int rank, const int64_t *dims) {
    b->inputs[b->graph.n_input++] = mb_vi(b, name, type, rank, dims);
}

/* An initializer of `type` holding `len` raw bytes. */
static void init_raw(mb *b, const char *name, int type, int rank, const int64_t *dims, const void *raw, size_t len) {
    Onnx__TensorProto *t = mb_init_tensor(b, name, type, rank, dims, NULL);
    t->has_raw_data = 1;
    t->raw_data.data = mb_alloc(b, len);
    memcpy(t->raw_data.data, raw, len);
    t->raw_data.len = len;
}

static void init_f(mb *b, const char *name, int rank, const int64_t *dims, const float *v, size_t n) {
    init_raw(b, name, FLOAT, rank, dims, v, n * sizeof *v);
}

static Onnx__NodeProto *ms_node(mb *b, const char *op, const char *ins, const char *outs) {
    Onnx__NodeProto *n = mb_node(b, op, op, ins, outs);
    n->domain = mb_str(b, "com.microsoft");
    return n;
}

/* Loads b (keep_data: the run's import), runs it directly with the given
 * graph inputs (name, elements) and returns output y's elements in out. */
static void run_model(mb *b, int nin, const char *const *names, const double *const *data, const char *y, double *out,
                      int64_t n) {
    rotor_graph g;
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    const double **in = calloc((size_t)g.nvalues, sizeof *in);
    cr_assert(in);
    for (int i = 0; i < nin; i++) {
        int v = rotor_graph_find_value(&g, names[i]);
        cr_assert(v >= 0, "no value '%s'", names[i]);
        in[v] = data[i];
    }
    rotor_run_result r;
    cr_assert_eq(rotor_run(&g, in, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    int yv = rotor_graph_find_value(&g, y);
    cr_assert(yv >= 0 && g.values[yv].elements == n, "output '%s' has the wrong size", y);
    cr_assert_eq(r.ops_vendor, 1);
    memcpy(out, r.values[yv], sizeof *out * (size_t)n);
    rotor_run_result_free(&r);
    free(in);
    rotor_graph_free(&g);
}

/* ---- the 4-bit types ---------------------------------------------------------------------- */

Test(msquant, int4_bytes_are_half_the_elements_rounded_up) {
    int64_t bytes;
    cr_assert(rotor_dtype_storage(ROTOR_DTYPE_U4, 5, &bytes));
    cr_assert_eq(bytes, 3);
    cr_assert(rotor_dtype_storage(ROTOR_DTYPE_I4, 64, &bytes));
    cr_assert_eq(bytes, 32);
    cr_assert(rotor_dtype_storage(ROTOR_DTYPE_F32, 3, &bytes));
    cr_assert_eq(bytes, 12);
    cr_assert(!rotor_dtype_storage(ROTOR_DTYPE_F64, INT64_MAX / 4, &bytes));
    cr_assert_str_eq(rotor_dtype_name(ROTOR_DTYPE_I4), "i4");
    cr_assert_str_eq(rotor_dtype_name(ROTOR_DTYPE_U4), "u4");
    rotor_graph g;
    rotor_graph_init(&g, "int4");
    rotor_error err;
    int v;
    cr_assert_eq(rotor_graph_add_value(&g, "w", ROTOR_DTYPE_U4, 2, (int64_t[]){3, 5}, ROTOR_ROLE_WEIGHT, &v, &err),
                 ROTOR_OK);
    cr_assert_eq(g.values[v].bytes, 8); /* 15 elements, two per byte */
    rotor_graph_free(&g);
}

/* int4 [3] in raw_data 0x9F 0x03: low nibble first, so 0xF (-1), 0x9 (-7), 0x3
 * (3); the same as uint4: 15, 9, 3.  Cast to float and added to x = 0, the
 * Add reads them as its constant input. */
static void int4_case(int type, const double *want) {
    mb b;
    mb_init(&b, 21);
    input(&b, "x", FLOAT, DIMS(3));
    init_raw(&b, "q", type, DIMS(3), (const uint8_t[]){0x9F, 0x03}, 2);
    Onnx__NodeProto *c = mb_node(&b, "Cast", "c", "q", "qf");
    mb_attr_i(&b, c, "to", FLOAT);
    mb_node(&b, "Add", "a", "x qf", "y");
    mb_output(&b, "y");
    double out[3];
    rotor_graph g;
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    int qf = rotor_graph_find_value(&g, "qf");
    cr_assert(qf >= 0 && g.values[qf].data);
    memcpy(out, g.values[qf].data, sizeof out);
    for (int i = 0; i < 3; i++) cr_assert_eq(out[i], want[i], "element %d: %g", i, out[i]);
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(msquant, int4_and_uint4_initializers_unpack_low_nibble_first) {
    int4_case(INT4, (const double[]){-1, -7, 3});
    int4_case(UINT4, (const double[]){15, 9, 3});
}

Test(msquant, int4_raw_data_of_the_wrong_length_is_refused) {
    mb b;
    mb_init(&b, 21);
    input(&b, "x", FLOAT, DIMS(3));
    init_raw(&b, "q", INT4, DIMS(3), (const uint8_t[]){1, 2, 3}, 3);
    Onnx__NodeProto *c = mb_node(&b, "Cast", "c", "q", "qf");
    mb_attr_i(&b, c, "to", FLOAT);
    mb_node(&b, "Add", "a", "x qf", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "initializer 'q': raw_data holds 3 bytes, its shape needs 2");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* ---- planning: shapes, FLOPs, element types ---------------------------------------------- */

/* MatMulNBits, K 32, N 4, block 16, bits 4: A [2, 3, 32] -> [2, 3, 4];
 * 2·(2·3)·32·4 = 1536 FLOPs; B [4, 2, 8] (64 bytes) is the u4 weight
 * 'b.w' [4, 32], 64 bytes too; the scales are an input of the op. */
Test(msquant, matmulnbits_is_a_contraction_over_its_u4_weight) {
    mb b;
    mb_init(&b, 21);
    input(&b, "a", FLOAT, DIMS(2, 3, 32));
    mb_init_tensor(&b, "b", UINT8, DIMS(4, 2, 8), NULL);
    mb_init_tensor(&b, "scales", FLOAT, DIMS(4, 2), NULL);
    Onnx__NodeProto *n = ms_node(&b, "MatMulNBits", "a b scales", "y");
    mb_attr_i(&b, n, "K", 32);
    mb_attr_i(&b, n, "N", 4);
    mb_attr_i(&b, n, "block_size", 16);
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 1);
    const rotor_op *op = &g.ops[0];
    cr_assert_str_eq(op->expr.text, "Y[b0,m,n] += A[b0,m,k] * B[n,k]");
    cr_assert_eq(op->flops, 1536);
    int w = rotor_graph_find_value(&g, "b.w"), y = rotor_graph_find_value(&g, "y");
    cr_assert(w >= 0 && y >= 0);
    cr_assert_eq(g.values[w].dtype, ROTOR_DTYPE_U4);
    cr_assert_eq(g.values[w].bytes, 64);
    cr_assert_eq(g.values[w].role, ROTOR_ROLE_WEIGHT);
    cr_assert_eq(g.values[y].rank, 3);
    cr_assert_eq(g.values[y].shape[2], 4);
    cr_assert_eq(op->weight_bytes, 64 + 32); /* b.w and the 8 float scales */
    cr_assert(rotor_op_attr(op, "rotor.approximate") != NULL);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* MatMulIntegerToFloat in the default domain (as MIGraphX writes it): A
 * int8 [4, 3], B uint8 [3, 2], float scales, a bias: the contraction,
 * 2·4·3·2 = 48 FLOPs, then the bias Add, 8; the output is float. */
Test(msquant, matmulintegertofloat_in_the_default_domain_is_a_contraction_and_a_bias) {
    mb b;
    mb_init(&b, 19);
    input(&b, "a", INT8, DIMS(4, 3));
    input(&b, "b", UINT8, DIMS(3, 2));
    input(&b, "sa", FLOAT, DIMS(3));
    input(&b, "sb", FLOAT, DIMS(2));
    mb_init_tensor(&b, "bias", FLOAT, DIMS(2), NULL);
    mb_node(&b, "MatMulIntegerToFloat", "mm", "a b sa sb - - bias", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 2);
    cr_assert_str_eq(g.ops[0].expr.text, "Y[m,n] += A[m,k] * B[k,n]");
    cr_assert_eq(g.ops[0].flops, 48);
    cr_assert_str_eq(g.ops[1].expr.text, "Y[m,n] = X[m,n] + B[n]");
    cr_assert_eq(g.ops[1].flops, 8);
    int a = rotor_graph_find_value(&g, "a"), y = rotor_graph_find_value(&g, "y");
    cr_assert_eq(g.values[a].dtype, ROTOR_DTYPE_I8);
    cr_assert_eq(g.values[a].bytes, 12);
    cr_assert_eq(g.values[y].dtype, ROTOR_DTYPE_F32);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* QLinearAdd is a vendor op of its kernel: 64 + 64 + 64 elements read or
 * written, one vector FLOP each (docs/graph.md's vendor rule). */
Test(msquant, qlinearadd_is_a_vendor_op_of_its_kernel) {
    mb b;
    mb_init(&b, 19);
    input(&b, "A", UINT8, DIMS(64));
    input(&b, "B", UINT8, DIMS(1, 1, 64));
    float one = 1;
    uint8_t zero = 0;
    init_f(&b, "s", 0, NULL, &one, 1);
    init_raw(&b, "z", UINT8, 0, NULL, &zero, 1);
    ms_node(&b, "QLinearAdd", "A s z B s z s z", "C");
    mb_output(&b, "C");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 1);
    cr_assert(g.ops[0].vendor);
    cr_assert_eq(g.ops[0].kernel, ROTOR_KERNEL_QLINEAR_ADD);
    cr_assert_eq(g.ops[0].flops, 192);
    int c = rotor_graph_find_value(&g, "C");
    cr_assert_eq(g.values[c].rank, 3);
    cr_assert_eq(g.values[c].dtype, ROTOR_DTYPE_U8);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* channels_last: [N, H, W, C] = [1, 5, 5, 3], kernel 2, stride 2, ceil_mode:
 * ceil((5 - 2) / 2) + 1 = 3 per spatial dimension, C stays last. */
Test(msquant, qlinearaveragepool_channels_last_keeps_channels_last) {
    mb b;
    mb_init(&b, 19);
    input(&b, "x", UINT8, DIMS(1, 5, 5, 3));
    float one = 1;
    init_f(&b, "s", 0, NULL, &one, 1);
    Onnx__NodeProto *n = ms_node(&b, "QLinearAveragePool", "x s - s", "y");
    mb_attr_ints(&b, n, "kernel_shape", DIMS(2, 2));
    mb_attr_ints(&b, n, "strides", DIMS(2, 2));
    mb_attr_i(&b, n, "ceil_mode", 1);
    mb_attr_i(&b, n, "channels_last", 1);
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    int y = rotor_graph_find_value(&g, "y");
    const int64_t want[4] = {1, 3, 3, 3};
    for (int d = 0; d < 4; d++) cr_assert_eq(g.values[y].shape[d], want[d], "dimension %d", d);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* ---- what onnxruntime's schema forbids ---------------------------------------------------- */

static void refused(mb *b, const char *msg) {
    mb_output(b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, msg);
    rotor_graph_free(&g);
    mb_free(b);
}

/* MatMulNBits, K 16, N 4, A [2, 16], scales [4], with B and block_size given. */
static void nbits_refused(int64_t block, int rank, const int64_t *bdims, const char *msg) {
    mb b;
    mb_init(&b, 19);
    input(&b, "a", FLOAT, DIMS(2, 16));
    mb_init_tensor(&b, "b", UINT8, rank, bdims, NULL);
    mb_init_tensor(&b, "scales", FLOAT, DIMS(4), NULL);
    Onnx__NodeProto *n = ms_node(&b, "MatMulNBits", "a b scales", "y");
    mb_attr_i(&b, n, "K", 16);
    mb_attr_i(&b, n, "N", 4);
    mb_attr_i(&b, n, "block_size", block);
    refused(&b, msg);
}

Test(msquant, matmulnbits_block_size_must_be_a_power_of_two_of_at_least_16) {
    nbits_refused(20, DIMS(4, 1, 8), "block_size is 20; it must be a power of 2 of at least 16");
    nbits_refused(8, DIMS(4, 2, 4), "block_size is 8; it must be a power of 2 of at least 16");
}

Test(msquant, matmulnbits_b_must_be_n_by_blocks_by_blob) {
    nbits_refused(16, DIMS(4, 2, 8), "B 'b' is uint8 [4, 2, 8]; expected uint8 [N, k_blocks, blob_size] = [4, 1, 8]");
}

Test(msquant, matmulintegertofloat_scales_are_scalars_or_one_per_column) {
    mb b;
    mb_init(&b, 19);
    input(&b, "a", INT8, DIMS(4, 3));
    input(&b, "b", UINT8, DIMS(3, 2));
    input(&b, "sa", FLOAT, DIMS(4, 3));
    input(&b, "sb", FLOAT, DIMS(2));
    mb_node(&b, "MatMulIntegerToFloat", "mm", "a b sa sb", "y");
    refused(&b, "scale 'sa' has shape [4, 3]; expected a scalar or [3], one per column of 'a'");
}

Test(msquant, matmulbnb4_needs_its_n_attribute) {
    mb b;
    mb_init(&b, 19);
    input(&b, "A", FLOAT, DIMS(2, 8));
    input(&b, "B", UINT8, DIMS(16));
    input(&b, "absmax", FLOAT, DIMS(2));
    Onnx__NodeProto *n = mb_node(&b, "MatMulBnb4", "mm", "A B absmax", "y");
    mb_attr_i(&b, n, "K", 8);
    mb_attr_i(&b, n, "block_size", 16);
    mb_attr_i(&b, n, "quant_type", 0);
    refused(&b, "attribute 'N' is required and missing");
}

/* ---- the kernels, against values computed by hand ---------------------------------------- */

/* K 16 (one block), N 2, bits 4.  Row 0: every code 9 (bytes 0x99), zero
 * point 8, scale 1: weight 1.  Row 1: codes 0, 15, 0, 15, ... (bytes 0xF0,
 * low nibble first), zero point 7, scale 0.5: -3.5 and 4.  The zero points
 * packed one per row: 0x08, 0x07.  With a = 1 .. 16:
 * y0 = 136 + 0.5 (bias); y1 = -3.5 (1 + 3 + .. + 15) + 4 (2 + 4 + .. + 16)
 * = -224 + 288 = 64, - 1 (bias) = 63. */
Test(msquant, matmulnbits_kernel_dequantizes_low_nibble_first) {
    mb b;
    mb_init(&b, 21);
    input(&b, "a", FLOAT, DIMS(1, 16));
    uint8_t bw[16];
    for (int i = 0; i < 8; i++) bw[i] = 0x99, bw[8 + i] = 0xF0;
    init_raw(&b, "b", UINT8, DIMS(2, 1, 8), bw, sizeof bw);
    init_f(&b, "scales", DIMS(2), (const float[]){1, 0.5f}, 2);
    init_raw(&b, "zp", UINT8, DIMS(2), (const uint8_t[]){8, 7}, 2);
    init_f(&b, "bias", DIMS(2), (const float[]){0.5f, -1}, 2);
    Onnx__NodeProto *n = ms_node(&b, "MatMulNBits", "a b scales zp - bias", "y");
    mb_attr_i(&b, n, "K", 16);
    mb_attr_i(&b, n, "N", 2);
    mb_attr_i(&b, n, "bits", 4);
    mb_attr_i(&b, n, "block_size", 16);
    mb_output(&b, "y");
    double a[16], y[2];
    for (int i = 0; i < 16; i++) a[i] = i + 1;
    run_model(&b, 1, (const char *[]){"a"}, (const double *[]){a}, "y", y, 2);
    cr_assert_eq(y[0], 136.5);
    cr_assert_eq(y[1], 63);
    mb_free(&b);
}

/* NF4, K 16, N 2, block 16: the weight's first row is code 15 (1.0), the
 * second code 0 (-1.0), so B is 8 bytes 0xFF then 8 bytes 0x00; absmax 2 and
 * 0.5 give rows 2 and -0.5.  With a = 1 .. 16: y = 2·136 = 272 and
 * -0.5·136 = -68. */
Test(msquant, matmulbnb4_nf4_kernel_uses_the_code_book_times_absmax) {
    mb b;
    mb_init(&b, 21);
    input(&b, "a", FLOAT, DIMS(16));
    uint8_t bw[16];
    for (int i = 0; i < 8; i++) bw[i] = 0xFF, bw[8 + i] = 0x00;
    init_raw(&b, "b", UINT8, DIMS(16), bw, sizeof bw);
    init_f(&b, "absmax", DIMS(2), (const float[]){2, 0.5f}, 2);
    Onnx__NodeProto *n = ms_node(&b, "MatMulBnb4", "a b absmax", "y");
    mb_attr_i(&b, n, "K", 16);
    mb_attr_i(&b, n, "N", 2);
    mb_attr_i(&b, n, "block_size", 16);
    mb_attr_i(&b, n, "quant_type", 1);
    mb_output(&b, "y");
    double a[16], y[2];
    for (int i = 0; i < 16; i++) a[i] = i + 1;
    run_model(&b, 1, (const char *[]){"a"}, (const double *[]){a}, "y", y, 2);
    cr_assert_eq(y[0], 272);
    cr_assert_eq(y[1], -68);
    mb_free(&b);
}

/* FP4: code 0x3 is 1.0 and 0xA is -2/3 (onnxruntime's table); even flat
 * elements are high nibbles.  K 16, N 1, B bytes 0x3A: the weight alternates
 * 1, -2/3; absmax 3 gives 3, -2.  With a = 1, 2, 1, 2, ...: y = 8·3 - 8·2·2
 * = -8 (the nibbles the other way round would give 32). */
Test(msquant, matmulbnb4_fp4_kernel_reads_the_high_nibble_first) {
    mb b;
    mb_init(&b, 21);
    input(&b, "a", FLOAT, DIMS(1, 16));
    uint8_t bw[8];
    memset(bw, 0x3A, sizeof bw);
    init_raw(&b, "b", UINT8, DIMS(8), bw, sizeof bw);
    init_f(&b, "absmax", DIMS(1), (const float[]){3}, 1);
    Onnx__NodeProto *n = ms_node(&b, "MatMulBnb4", "a b absmax", "y");
    mb_attr_i(&b, n, "K", 16);
    mb_attr_i(&b, n, "N", 1);
    mb_attr_i(&b, n, "block_size", 16);
    mb_attr_i(&b, n, "quant_type", 0);
    mb_output(&b, "y");
    double a[16], y[1];
    for (int i = 0; i < 16; i++) a[i] = 1 + i % 2;
    run_model(&b, 1, (const char *[]){"a"}, (const double *[]){a}, "y", y, 1);
    cr_assert_float_eq(y[0], -8, 1e-6);
    mb_free(&b);
}

/* A uint8 [[10, 20], [30, 40]], zero point 10, scale 0.5: [[0, 5], [10, 15]].
 * B int8 [[1, -1], [2, 0]], scales per column 1 and 2: [[1, -2], [2, 0]].
 * A B = [[10, 0], [40, -20]], + bias 1: [[11, 1], [41, -19]]. */
Test(msquant, matmulintegertofloat_kernel_dequantizes_then_multiplies) {
    mb b;
    mb_init(&b, 19);
    input(&b, "a", UINT8, DIMS(2, 2));
    init_raw(&b, "b", INT8, DIMS(2, 2), (const int8_t[]){1, -1, 2, 0}, 4);
    init_f(&b, "sa", 0, NULL, (const float[]){0.5f}, 1);
    init_f(&b, "sb", DIMS(2), (const float[]){1, 2}, 2);
    init_raw(&b, "za", UINT8, 0, NULL, (const uint8_t[]){10}, 1);
    init_f(&b, "bias", DIMS(2), (const float[]){1, 1}, 2);
    ms_node(&b, "MatMulIntegerToFloat", "a b sa sb za - bias", "y");
    mb_output(&b, "y");
    double a[4] = {10, 20, 30, 40}, y[4];
    run_model(&b, 1, (const char *[]){"a"}, (const double *[]){a}, "y", y, 4);
    const double want[4] = {11, 1, 41, -19};
    for (int i = 0; i < 4; i++) cr_assert_eq(y[i], want[i], "element %d: %g", i, y[i]);
    mb_free(&b);
}

/* A {120, 128, 140} with scale 0.1, zero point 128: -0.8, 0, 1.2; B {100}
 * with zero point 100: 0.  C = round(sum / 0.05) + 10 = -6 (saturates to 0),
 * 10, 34. */
Test(msquant, qlinearadd_kernel_requantizes_and_saturates) {
    mb b;
    mb_init(&b, 19);
    input(&b, "A", UINT8, DIMS(3));
    init_raw(&b, "B", UINT8, DIMS(1), (const uint8_t[]){100}, 1);
    init_f(&b, "sa", 0, NULL, (const float[]){0.1f}, 1);
    init_f(&b, "sb", 0, NULL, (const float[]){0.2f}, 1);
    init_f(&b, "sc", 0, NULL, (const float[]){0.05f}, 1);
    init_raw(&b, "za", UINT8, 0, NULL, (const uint8_t[]){128}, 1);
    init_raw(&b, "zb", UINT8, 0, NULL, (const uint8_t[]){100}, 1);
    init_raw(&b, "zc", UINT8, 0, NULL, (const uint8_t[]){10}, 1);
    ms_node(&b, "QLinearAdd", "A sa za B sb zb sc zc", "C");
    mb_output(&b, "C");
    double a[3] = {120, 128, 140}, c[3];
    run_model(&b, 1, (const char *[]){"A"}, (const double *[]){a}, "C", c, 3);
    cr_assert_eq(c[0], 0);
    cr_assert_eq(c[1], 10);
    cr_assert_eq(c[2], 34);
    mb_free(&b);
}

/* int8 x {0, 2} (scale 1): sigmoid 0.5 and 0.880797; output scale 1/256,
 * zero point -128: 128 - 128 = 0 and round(225.48) - 128 = 97. */
Test(msquant, qlinearsigmoid_kernel) {
    mb b;
    mb_init(&b, 19);
    input(&b, "x", INT8, DIMS(2));
    init_f(&b, "sx", 0, NULL, (const float[]){1}, 1);
    init_f(&b, "sy", 0, NULL, (const float[]){1.0f / 256}, 1);
    init_raw(&b, "zx", INT8, 0, NULL, (const int8_t[]){0}, 1);
    init_raw(&b, "zy", INT8, 0, NULL, (const int8_t[]){-128}, 1);
    ms_node(&b, "QLinearSigmoid", "x sx zx sy zy", "y");
    mb_output(&b, "y");
    double x[2] = {0, 2}, y[2];
    run_model(&b, 1, (const char *[]){"x"}, (const double *[]){x}, "y", y, 2);
    cr_assert_eq(y[0], 0);
    cr_assert_eq(y[1], 97);
    mb_free(&b);
}

/* x -10 with scale 0.5 is -5; alpha 0.2 gives -1, /0.25 = -4. */
Test(msquant, qlinearleakyrelu_kernel) {
    mb b;
    mb_init(&b, 19);
    input(&b, "x", INT8, DIMS(2));
    init_f(&b, "sx", 0, NULL, (const float[]){0.5f}, 1);
    init_f(&b, "sy", 0, NULL, (const float[]){0.25f}, 1);
    Onnx__NodeProto *n = ms_node(&b, "QLinearLeakyRelu", "x sx - sy", "y");
    mb_attr_f(&b, n, "alpha", 0.2f);
    mb_output(&b, "y");
    double x[2] = {-10, 10}, y[2];
    run_model(&b, 1, (const char *[]){"x"}, (const double *[]){x}, "y", y, 2);
    cr_assert_eq(y[0], -4);
    cr_assert_eq(y[1], 20);
    mb_free(&b);
}

/* x 1 .. 9 as a 3 x 3 image, kernel 2, pads 1: the corner window holds x 1
 * alone; output scale 0.5.  count_include_pad divides by 4: 0.25 / 0.5 =
 * 0.5, which rounds half to even, to 0; without it, 1 / 0.5 = 2.  The centre
 * window (1, 1) holds 1, 2, 4, 5: 3 / 0.5 = 6 either way. */
static void avgpool_case(int include, double corner) {
    mb b;
    mb_init(&b, 19);
    input(&b, "x", UINT8, DIMS(1, 1, 3, 3));
    init_f(&b, "sx", 0, NULL, (const float[]){1}, 1);
    init_f(&b, "sy", 0, NULL, (const float[]){0.5f}, 1);
    Onnx__NodeProto *n = ms_node(&b, "QLinearAveragePool", "x sx - sy", "y");
    mb_attr_ints(&b, n, "kernel_shape", DIMS(2, 2));
    mb_attr_ints(&b, n, "pads", DIMS(1, 1, 1, 1));
    mb_attr_i(&b, n, "count_include_pad", include);
    mb_output(&b, "y");
    double x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y[16];
    run_model(&b, 1, (const char *[]){"x"}, (const double *[]){x}, "y", y, 16);
    cr_assert_eq(y[0], corner);
    cr_assert_eq(y[5], 6);
    mb_free(&b);
}

Test(msquant, qlinearaveragepool_kernel_counts_the_padding_only_when_asked) {
    avgpool_case(1, 0);
    avgpool_case(0, 2);
}

/* channels_last [1, 2, 2, 3]: x[h][w][c] = 10 c + (2 h + w); the means over
 * h, w are 10 c + 1.5, rounded half to even: 2, 12, 22. */
Test(msquant, qlinearglobalaveragepool_kernel_channels_last) {
    mb b;
    mb_init(&b, 19);
    input(&b, "x", UINT8, DIMS(1, 2, 2, 3));
    init_f(&b, "s", 0, NULL, (const float[]){1}, 1);
    Onnx__NodeProto *n = ms_node(&b, "QLinearGlobalAveragePool", "x s - s", "y");
    mb_attr_i(&b, n, "channels_last", 1);
    mb_output(&b, "y");
    double x[12], y[3];
    for (int p = 0; p < 4; p++)
        for (int c = 0; c < 3; c++) x[p * 3 + c] = 10 * c + p;
    run_model(&b, 1, (const char *[]){"x"}, (const double *[]){x}, "y", y, 3);
    cr_assert_eq(y[0], 2);
    cr_assert_eq(y[1], 12);
    cr_assert_eq(y[2], 22);
    mb_free(&b);
}

/* {10, 20} at scale 0.1: 1, 2; {-10} at scale 0.5, zero point 2: -6.
 * Joined and quantized at scale 0.25, zero point 1: 5, 9, -23. */
Test(msquant, qlinearconcat_kernel_requantizes_each_input) {
    mb b;
    mb_init(&b, 19);
    input(&b, "t0", INT8, DIMS(2));
    input(&b, "t1", INT8, DIMS(1));
    init_f(&b, "sy", 0, NULL, (const float[]){0.25f}, 1);
    init_f(&b, "s0", 0, NULL, (const float[]){0.1f}, 1);
    init_f(&b, "s1", 0, NULL, (const float[]){0.5f}, 1);
    init_raw(&b, "zy", INT8, 0, NULL, (const int8_t[]){1}, 1);
    init_raw(&b, "z0", INT8, 0, NULL, (const int8_t[]){0}, 1);
    init_raw(&b, "z1", INT8, 0, NULL, (const int8_t[]){2}, 1);
    Onnx__NodeProto *n = ms_node(&b, "QLinearConcat", "sy zy t0 s0 z0 t1 s1 z1", "y");
    mb_attr_i(&b, n, "axis", 0);
    mb_output(&b, "y");
    double t0[2] = {10, 20}, t1[1] = {-10}, y[3];
    run_model(&b, 2, (const char *[]){"t0", "t1"}, (const double *[]){t0, t1}, "y", y, 3);
    cr_assert_eq(y[0], 5);
    cr_assert_eq(y[1], 9);
    cr_assert_eq(y[2], -23);
    mb_free(&b);
}
