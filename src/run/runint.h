/* runint.h — what the run stage's files share (private): errors that name
 * the operator, "op 'n3' (MaxPool): ...", an operator's inputs by ONNX
 * position (runop.c), the quantized operators' kernels (kernquant.c) and
 * steps (runquant.c). */
#ifndef ROTOR_RUN_RUNINT_H
#define ROTOR_RUN_RUNINT_H

#include <stdarg.h>

#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/model/quantparam.h"
#include "rotor/run/run.h"

/* Sub-graph s of rotor_run_options.gticca run as its instances
 * (gticcarun.c): out->values as rotor_run keeps them, every value its
 * operators produce allocated; fills their slices and adds to out's
 * counts, emulated time and peak. */
rotor_status run_gticca_subgraph(const rotor_graph *g, const rotor_run_options *opt, const rotor_gticca_sg *s,
                                 rotor_run_result *out, rotor_error *err);

rotor_status run_op_vfail(const rotor_graph *g, int o, rotor_error *err, rotor_status code, const char *fmt,
                          va_list ap) __attribute__((format(printf, 5, 0)));

/* run_op_vfail's ROTOR_ERR_INPUT, with its arguments. */
rotor_status run_op_fail(const rotor_graph *g, int o, rotor_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Puts "op 'NAME' (TYPE): " before the message already in err. */
void run_op_prefix(const rotor_graph *g, int o, rotor_error *err);

/* The vendor kernels of onnxruntime's quantized operators (kernmsquant.c):
 * at[p] is the graph value at ONNX input position p (-1: absent, or kept as
 * the attribute "@p"), for p < RUN_MSQ_MAX_IN. */
#define RUN_MSQ_MAX_IN 64
rotor_status run_msquant_kernel(const rotor_graph *g, int op, rotor_kernel kind, const int *at, double *const *vals,
                                rotor_error *err);
/* The elements of ONNX input pos of op o: its graph value's (vals; *value
 * the value), else those of attribute "@pos" (floats as they are, ints
 * copied into buf, at most cap; *value -1); NULL and *n 0 when absent. */
const double *run_op_param(const rotor_graph *g, int o, double *const *vals, int pos, double *buf, int cap,
                           int64_t *n, int *value);

/* Element k (row-major) of a tensor of shape ts[0..tr) reads element
 * run_param_index(...) of a parameter of shape ps[0..pr) whose dimension j
 * runs along the tensor's dimension start + j: the coordinate where the
 * extents agree, 0 where the parameter's is 1, the coordinate / block where
 * it is smaller (blocked quantization).  Per tensor, per axis, per row or
 * column and blocked scales and zero points are all this. */
int64_t run_param_index(const int64_t *ts, int tr, const int64_t *ps, int pr, int start, int64_t block, int64_t k);

/* The backward pass's vendor ops (kerntrain.c; model/train.h): ViewGrad,
 * GatherGrad, Broadcast; vals as rotor_run_kernel's, outputs zeroed. */
rotor_status run_kernel_view_grad(const rotor_graph *g, int o, double *const *vals, rotor_error *err);
rotor_status run_kernel_gather_grad(const rotor_graph *g, int o, double *const *vals, rotor_error *err);
rotor_status run_kernel_broadcast(const rotor_graph *g, int o, double *const *vals, rotor_error *err);

/* ---- quantized operators (docs/run.md, "Quantized operators") ---- */

/* QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (kernquant.c),
 * by kind; vals as rotor_run_kernel's. */
rotor_status run_kernel_quant(const rotor_graph *g, int o, rotor_kernel kind, double *const *vals, rotor_error *err);

/* An expression operator over integer values (runquant.c): what the run
 * does around the emulator.  run_quant_takes says whether op o may name
 * values other than float32: a quantized contraction (the lowering's
 * "rotor.quant.a") or a copy of integers.  run_quant_begin checks its
 * inputs' values (vals) and gives the sources the emulator reads in their
 * place (src[t], NULL: the value itself): a quantized contraction's
 * zero-point-shifted integers.  run_quant_check proves, on the emulator's
 * inputs in[] (t >= 1), that float32 (planned) or double computes the
 * contraction exactly, or refuses it.  run_quant_end turns the output
 * value y (the accumulators, or a copy) into the operator's: the
 * requantization, the int32 accumulator, or ONNX's Cast into an integer
 * type.  run_quant_free frees it (also after an error). */
typedef struct run_quant {
    int kind;                          /* 0: none, 1: a quantized contraction, 2: a copy */
    double *src[ROTOR_MAX_TENSORS];
    double bound;                      /* K max|a'| max|b'| */
} run_quant;
bool run_quant_takes(const rotor_graph *g, int o);
/* Whether op o is a copy (its right side one tensor, read as it is: Cast,
 * Reshape, Unsqueeze, ...) over float32, integer or boolean values, the
 * copies of integers run_quant_takes takes beside the quantized
 * contractions. */
bool run_copy_takes(const rotor_graph *g, int o);
rotor_status run_quant_begin(const rotor_graph *g, int o, double *const *vals, run_quant *q, rotor_error *err);
rotor_status run_quant_check(const run_quant *q, const rotor_graph *g, int o, const float *const *in, bool planned,
                             rotor_error *err);
rotor_status run_quant_end(const run_quant *q, const rotor_graph *g, int o, double *const *vals, double *y,
                           rotor_error *err);
void run_quant_free(run_quant *q);
/* A quantized contraction's parameters, read once, for a run that takes
 * its elements one at a time (GraphTurbo's instances, gtrun.c; the whole
 * tensors of run_quant above use it too).  run_qop_zero is input t's (1:
 * A, 2: B) zero point at element k (row-major) of its value; run_qop_out
 * turns output element k's accumulator *y into the operator's output (the
 * requantization, or the int32 accumulator); run_qop_exact_f64 refuses an
 * operator whose sums of |a'| |b'|, by its types' ranges, could pass 2^53,
 * where double stops holding every integer. */
#define RUN_QPARAM_ATTR_MAX 64
typedef struct run_qparam {
    const double *d; /* NULL: absent */
    int64_t n;
    const int64_t *shape; /* NULL: one element */
    int rank;
    double buf[RUN_QPARAM_ATTR_MAX];
} run_qparam;
typedef struct run_qop {
    const rotor_graph *g;
    int o;
    bool quant; /* the lowering marked it (rotor_quant_lookups) */
    rotor_quant_lookup look[ROTOR_QP_COUNT];
    const rotor_value *x[3], *y; /* x[1] A, x[2] B */
    run_qparam p[ROTOR_QP_COUNT];
} run_qop;
rotor_status run_qop_begin(const rotor_graph *g, int o, double *const *vals, run_qop *q, rotor_error *err);
double run_qop_zero(const run_qop *q, int t, int64_t k);
rotor_status run_qop_out(const run_qop *q, int64_t k, double *y, rotor_error *err);
rotor_status run_qop_exact_f64(const run_qop *q, rotor_error *err);

/* 2^24: float32, the emulated cores' type, holds every integer up to it;
 * a copy of a larger integer is refused (runquant.c, gtrun.c). */
#define RUN_EXACT_F32 16777216.0
#define RUN_EXACT_F32_WHY "the emulated cores copy integers in float32, exact only up to 2^24"

/* One element x of a copy into type t as ONNX's Cast makes it: an integer
 * type truncates toward zero, a boolean is x != 0, float32 and the rest
 * keep x; false when x (a NaN, or outside the integer type's range) has no
 * value there, which ONNX leaves undefined. */
bool run_cast_one(rotor_dtype t, double *x);

#endif
