/* quantbuild.h — small quantized ONNX models for the tests of GraphTurbo's
 * runs on real data (test_gtrun.c: instances on a chip with a GB;
 * test_gticcarun.c: instances on an ICCA chip's core groups). */
#ifndef ROTOR_TEST_QUANTBUILD_H
#define ROTOR_TEST_QUANTBUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "onnxbuild.h"

/* An integer initializer (ONNX type `type`: 2 uint8, 3 int8, 6 int32) of
 * n elements, element k = lo + (k * 37 + phase) % span. */
static inline void ints(mb *b, const char *name, int type, int64_t n, int rank, const int64_t *dims, int phase, int lo,
                 int span) {
    Onnx__TensorProto *t = mb_init_tensor(b, name, type, rank, dims, NULL);
    t->int32_data = mb_alloc(b, sizeof(int32_t) * (size_t)n);
    for (t->n_int32_data = 0; t->n_int32_data < (size_t)n; t->n_int32_data++)
        t->int32_data[t->n_int32_data] = lo + (int32_t)(((int64_t)t->n_int32_data * 37 + phase) % span);
}

/* A float32 initializer of the n values v. */
static inline void floats(mb *b, const char *name, int rank, const int64_t *dims, int n, const float *v) {
    Onnx__TensorProto *t = mb_init_tensor(b, name, 1, rank, dims, NULL);
    t->float_data = mb_alloc(b, sizeof(float) * (size_t)n);
    for (t->n_float_data = 0; t->n_float_data < (size_t)n; t->n_float_data++)
        t->float_data[t->n_float_data] = v[t->n_float_data];
}

/* The scalars both quantized models below read. */
static inline void quant_scalars(mb *b) {
    ints(b, "xz", 2, 1, 0, NULL, 0, 128, 1);
    ints(b, "hz", 2, 1, 0, NULL, 0, 120, 1);
    ints(b, "yz", 2, 1, 0, NULL, 0, 131, 1);
    floats(b, "xs", 0, NULL, 1, (const float[]){0.02f});
    floats(b, "ys", 0, NULL, 1, (const float[]){0.04f});
}

/* x (uint8 [batch,4,16,16]) -> QLinearConv 3x3 (pads 1; int8 weights with
 * per-channel scales and zero points, an int32 bias) -> h (uint8) ->
 * QLinearConv 3x3 -> y (uint8); when integer, x -> ConvInteger 3x3 (its
 * zero points, no scale) -> y, the int32 accumulator; when computed, h's
 * scale is hs0 x two, two a model input (so an operator before the
 * convolutions computes it). */
static inline void quant_convs_model(mb *b, int64_t batch, bool integer, bool computed) {
    mb_init(b, 13);
    b->inputs[b->graph.n_input++] = mb_vi(b, "x", 2, DIMS(batch, 4, 16, 16));
    b->outputs[b->graph.n_output++] = mb_vi(b, "y", integer ? 6 : 2, 0, NULL);
    ints(b, "w1", 3, 144, DIMS(4, 4, 3, 3), 5, -60, 121);
    ints(b, "w2", 3, 144, DIMS(4, 4, 3, 3), 9, -60, 121);
    ints(b, "wz", 3, 4, DIMS(4), 0, -2, 5); /* -2, 0, 2, -1: per output channel */
    ints(b, "b1", 6, 4, DIMS(4), 3, -900, 1801);
    quant_scalars(b);
    floats(b, "ws", 1, (const int64_t[]){4}, 4, (const float[]){0.007f, 0.008f, 0.006f, 0.009f});
    if (computed) {
        b->inputs[b->graph.n_input++] = mb_vi(b, "two", 1, 0, NULL); /* a model input: hs is not folded */
        floats(b, "hs0", 0, NULL, 1, (const float[]){0.025f});
        mb_node(b, "Mul", "hs_mul", "hs0 two", "hs");
    } else {
        floats(b, "hs", 0, NULL, 1, (const float[]){0.05f});
    }
    const char *op = integer ? "ConvInteger" : "QLinearConv";
    Onnx__NodeProto *c[2] = {mb_node(b, op, "conv1", integer ? "x w1 xz wz" : "x xs xz w1 ws wz hs hz b1",
                                     integer ? "y" : "h"),
                             integer ? NULL : mb_node(b, op, "conv2", "h hs hz w2 ws wz ys yz", "y")};
    for (int k = 0; k < 2 && c[k]; k++) {
        mb_attr_ints(b, c[k], "pads", 4, (const int64_t[]){1, 1, 1, 1});
        mb_attr_ints(b, c[k], "kernel_shape", 2, (const int64_t[]){3, 3});
    }
}

/* x (uint8 [64,16]) -> QLinearMatMul -> h (uint8) -> QLinearMatMul, its
 * A's zero point and scale per row of h and B's per column -> y (uint8
 * [64,16]); when integer, x -> MatMulInteger (x's zero point, w1's per
 * column) -> y, the int32 accumulator. */
static inline void quant_matmuls_model(mb *b, bool integer) {
    mb_init(b, 13);
    b->inputs[b->graph.n_input++] = mb_vi(b, "x", 2, DIMS(64, 16));
    b->outputs[b->graph.n_output++] = mb_vi(b, "y", integer ? 6 : 2, 0, NULL);
    ints(b, "w1", 3, 256, DIMS(16, 16), 5, -60, 121);
    ints(b, "w2", 3, 256, DIMS(16, 16), 9, -60, 121);
    ints(b, "wz", 3, 1, 0, NULL, 0, 1, 1);
    ints(b, "hrz", 2, 64, DIMS(64), 0, 100, 41); /* 100 .. 140, row by row */
    ints(b, "wcz", 3, 16, DIMS(16), 3, -3, 7);   /* per column of w2 */
    quant_scalars(b);
    floats(b, "hs", 0, NULL, 1, (const float[]){0.05f});
    floats(b, "ws", 0, NULL, 1, (const float[]){0.009f});
    float hrs[64], wcs[16];
    for (int k = 0; k < 64; k++) hrs[k] = 0.04f + 0.0003f * (float)k;
    for (int k = 0; k < 16; k++) wcs[k] = 0.006f + 0.0002f * (float)k;
    floats(b, "hrs", 1, (const int64_t[]){64}, 64, hrs); /* per row, as its zero point */
    floats(b, "wcs", 1, (const int64_t[]){16}, 16, wcs);
    if (integer) {
        mb_node(b, "MatMulInteger", "mm", "x w1 xz wcz", "y");
    } else {
        mb_node(b, "QLinearMatMul", "mm1", "x xs xz w1 ws wz hs hz", "h");
        mb_node(b, "QLinearMatMul", "mm2", "h hrs hrz w2 wcs wcz ys yz", "y");
    }
}

#endif
