/* onnxops.c — the ONNX operator registry (docs/onnx.md, "The operator
 * registry"): one row per operator rotor imports, as base/chip.c's FIELDS[]
 * is one row per chip key.  A row names the operator (name, domain, the
 * opsets it covers) and what rotor does with it: the shape rule that infers
 * and folds it (onnxelem.c, onnxnn.c, onnxlayout.c, onnxms.c, ...), the
 * element evaluator the rule folds with, the lowering (lower*.c; none: a
 * vendor op, T10 §4.2's fallback) and the reference kernel that runs the
 * vendor op (rotor_kernel, src/run/kernels.c).  Inference finds the row
 * (ox_op_find) and keeps it on the node; folding and lowering read it from
 * there, so this is the one place operator names are listed.
 *
 * Decisions where ONNX leaves room:
 *  - Every row covers every opset: each rule reads an operator's version
 *    differences from its attributes and inputs (Clip's min and max
 *    attributes before opset 11, legacy broadcast before opset 7), so no
 *    operator changes rows at an opset today.  One whose meaning does is
 *    split into rows with adjacent ranges; the registry's test checks that
 *    the ranges of one name never overlap.
 *  - The element evaluators are here, beside the rows that name them: they
 *    are one line each, and ONNX defines them (Div and Mod of integers
 *    truncate, Mod follows the divisor's sign unless fmod=1). */
#include "lowerint.h"
#include "onnxmsquant.h"
#include "onnxops.h"

#include <math.h>
#include <string.h>

/* ---- element evaluators (the fold column) ---------------------------------------------------- */

static double ev_abs(double x) { return fabs(x); }
static double ev_neg(double x) { return -x; }
static double ev_sqrt(double x) { return sqrt(x); }
static double ev_exp(double x) { return exp(x); }
static double ev_log(double x) { return log(x); }
static double ev_floor(double x) { return floor(x); }
static double ev_ceil(double x) { return ceil(x); }
static double ev_round(double x) { return nearbyint(x); }
static double ev_recip(double x) { return 1.0 / x; }
static double ev_relu(double x) { return x < 0 ? 0 : x; } /* NaN stays NaN */
static double ev_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ev_tanh(double x) { return tanh(x); }
static double ev_erf(double x) { return erf(x); }
static double ev_sign(double x) { return (x > 0) - (x < 0); }
static double ev_not(double x) { return x == 0; }
static double ev_sin(double x) { return sin(x); }
static double ev_cos(double x) { return cos(x); }
static double ev_tan(double x) { return tan(x); }
static double ev_isnan(double x) { return x != x; }
static double ev_isinf(double x) { return isinf(x) != 0; }
static double ev_copy(double x) { return x; } /* Cast, CastLike, Identity: ox_put rounds into the type */

static double ev_add(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a + b; }
static double ev_sub(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a - b; }
static double ev_mul(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a * b; }
static double ev_div(double a, double b, bool isint, const ox_node *n) {
    (void)n;
    if (!isint) return a / b;
    return b == 0 ? 0 : trunc(a / b);
}
static double ev_pow(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return pow(a, b); }
static double ev_mod(double a, double b, bool isint, const ox_node *n) {
    if (b == 0) return 0;
    if (ox_attr_int(n, "fmod", 0) || !isint) return fmod(a, b);
    double r = fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static double ev_max(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a > b ? a : b; }
static double ev_min(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a < b ? a : b; }
static double ev_eq(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a == b; }
static double ev_lt(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a < b; }
static double ev_gt(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a > b; }
static double ev_le(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a <= b; }
static double ev_ge(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return a >= b; }
static double ev_and(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return (a != 0) && (b != 0); }
static double ev_or(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return (a != 0) || (b != 0); }
static double ev_xor(double a, double b, bool isint, const ox_node *n) { (void)isint, (void)n; return (a != 0) != (b != 0); }

/* ---- the table ------------------------------------------------------------------------------ */

/* A default-domain row (every opset), and a com.microsoft one (onnxruntime's
 * contrib operators: no fold, no kernel, their lowering takes any output). */
#define OP(name, infer, fold1, fold2, lower, kernel, flags) \
    {name, "ai.onnx", 0, OX_OPSET_OPEN, infer, fold1, fold2, lower, kernel, flags}
#define MS(name, infer, lower) \
    {name, "com.microsoft", 0, OX_OPSET_OPEN, infer, NULL, NULL, lower, ROTOR_KERNEL_NONE, OX_ANY_OUTPUT}
/* A com.microsoft row whose name no ONNX operator takes (OX_ALSO_DEFAULT). */
#define MSD(name, infer, lower) \
    {name, "com.microsoft", 0, OX_OPSET_OPEN, infer, NULL, NULL, lower, ROTOR_KERNEL_NONE, OX_ANY_OUTPUT | OX_ALSO_DEFAULT}
/* ... and whose vendor op rotor run computes with kernel (the quantized ones). */
#define MSDK(name, infer, lower, kernel) \
    {name, "com.microsoft", 0, OX_OPSET_OPEN, infer, NULL, NULL, lower, kernel, OX_ANY_OUTPUT | OX_ALSO_DEFAULT}

static const ox_opdef OPS[] = {
    OP("Abs", ox_infer_unary, ev_abs, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Acos", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Acosh", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Asin", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Asinh", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Atan", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Atanh", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Ceil", ox_infer_unary, ev_ceil, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Cos", ox_infer_unary, ev_cos, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Cosh", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Erf", ox_infer_unary, ev_erf, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Exp", ox_infer_unary, ev_exp, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Floor", ox_infer_unary, ev_floor, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Log", ox_infer_unary, ev_log, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Neg", ox_infer_unary, ev_neg, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Reciprocal", ox_infer_unary, ev_recip, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Relu", ox_infer_unary, ev_relu, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Round", ox_infer_unary, ev_round, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Sigmoid", ox_infer_unary, ev_sigmoid, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Sign", ox_infer_unary, ev_sign, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Sin", ox_infer_unary, ev_sin, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Sinh", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Sqrt", ox_infer_unary, ev_sqrt, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Tan", ox_infer_unary, ev_tan, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Tanh", ox_infer_unary, ev_tanh, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Not", ox_infer_unary, ev_not, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("IsNaN", ox_infer_unary, ev_isnan, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("IsInf", ox_infer_unary, ev_isinf, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Softplus", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Softsign", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Elu", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Selu", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("LeakyRelu", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("ThresholdedRelu", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("HardSigmoid", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("HardSwish", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Mish", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Celu", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Gelu", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Shrink", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("BitwiseNot", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Softmax", ox_infer_unary, NULL, NULL, lw_softmax, ROTOR_KERNEL_NONE, 0),
    OP("LogSoftmax", ox_infer_unary, NULL, NULL, lw_softmax, ROTOR_KERNEL_NONE, 0),
    OP("Hardmax", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("LRN", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("InstanceNormalization", ox_infer_instancenorm, NULL, NULL, NULL, ROTOR_KERNEL_INSTANCENORM, 0),
    OP("MeanVarianceNormalization", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("LpNormalization", ox_infer_lpnorm, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("CumSum", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_CUMSUM, 0),
    OP("Trilu", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_TRILU, 0),
    OP("Clip", ox_infer_unary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Dropout", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_DROPOUT, 0),
    OP("Identity", ox_infer_unary, ev_copy, NULL, NULL, ROTOR_KERNEL_IDENTITY, 0),
    OP("Cast", ox_infer_unary, ev_copy, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("CastLike", ox_infer_unary, ev_copy, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("RandomNormalLike", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, OX_RANDOM),
    OP("RandomUniformLike", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, OX_RANDOM),
    OP("Bernoulli", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, OX_RANDOM),
    OP("ScatterElements", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("ScatterND", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Scatter", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("ReverseSequence", ox_infer_unary, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Add", ox_infer_nary, NULL, ev_add, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Sub", ox_infer_nary, NULL, ev_sub, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Mul", ox_infer_nary, NULL, ev_mul, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Div", ox_infer_nary, NULL, ev_div, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Pow", ox_infer_nary, NULL, ev_pow, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Mod", ox_infer_nary, NULL, ev_mod, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Max", ox_infer_nary, NULL, ev_max, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Min", ox_infer_nary, NULL, ev_min, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Sum", ox_infer_nary, NULL, ev_add, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Mean", ox_infer_nary, NULL, ev_add, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Equal", ox_infer_nary, NULL, ev_eq, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Less", ox_infer_nary, NULL, ev_lt, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Greater", ox_infer_nary, NULL, ev_gt, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("LessOrEqual", ox_infer_nary, NULL, ev_le, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("GreaterOrEqual", ox_infer_nary, NULL, ev_ge, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("And", ox_infer_nary, NULL, ev_and, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Or", ox_infer_nary, NULL, ev_or, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Xor", ox_infer_nary, NULL, ev_xor, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("BitShift", ox_infer_nary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("BitwiseAnd", ox_infer_nary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("BitwiseOr", ox_infer_nary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("BitwiseXor", ox_infer_nary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("PRelu", ox_infer_nary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Where", ox_infer_nary, NULL, NULL, lw_elementwise, ROTOR_KERNEL_NONE, 0),
    OP("Constant", ox_infer_constant, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("ConstantOfShape", ox_infer_constant_of_shape, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Shape", ox_infer_shape_op, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Size", ox_infer_shape_op, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Range", ox_infer_range, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("MatMul", ox_infer_matmul, NULL, NULL, lw_matmul, ROTOR_KERNEL_NONE, 0),
    OP("MatMulInteger", ox_infer_matmul_integer, NULL, NULL, lw_quant_matmul, ROTOR_KERNEL_NONE, 0),
    OP("QLinearMatMul", ox_infer_qlinear_matmul, NULL, NULL, lw_quant_matmul, ROTOR_KERNEL_NONE, 0),
    OP("Gemm", ox_infer_gemm, NULL, NULL, lw_gemm, ROTOR_KERNEL_NONE, 0),
    OP("Conv", ox_infer_conv, NULL, NULL, lw_conv, ROTOR_KERNEL_NONE, 0),
    OP("ConvInteger", ox_infer_conv_integer, NULL, NULL, lw_quant_conv, ROTOR_KERNEL_NONE, 0),
    OP("QLinearConv", ox_infer_qlinear_conv, NULL, NULL, lw_quant_conv, ROTOR_KERNEL_NONE, 0),
    OP("ConvTranspose", ox_infer_conv, NULL, NULL, NULL, ROTOR_KERNEL_CONV_TRANSPOSE, 0),
    OP("MaxPool", ox_infer_pool, NULL, NULL, NULL, ROTOR_KERNEL_MAXPOOL, 0),
    OP("AveragePool", ox_infer_pool, NULL, NULL, lw_avgpool, ROTOR_KERNEL_AVERAGEPOOL, 0),
    OP("LpPool", ox_infer_pool, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("GlobalAveragePool", ox_infer_pool, NULL, NULL, lw_global_avg, ROTOR_KERNEL_NONE, 0),
    OP("GlobalMaxPool", ox_infer_pool, NULL, NULL, NULL, ROTOR_KERNEL_GLOBAL_MAXPOOL, 0),
    OP("GlobalLpPool", ox_infer_pool, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("BatchNormalization", ox_infer_batchnorm, NULL, NULL, lw_batchnorm, ROTOR_KERNEL_NONE, 0),
    OP("LayerNormalization", ox_infer_layernorm, NULL, NULL, lw_layernorm_node, ROTOR_KERNEL_LAYERNORM, 0),
    OP("GroupNormalization", ox_infer_groupnorm, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("NegativeLogLikelihoodLoss", ox_infer_loss, NULL, NULL, NULL, ROTOR_KERNEL_NLL_LOSS, 0),
    OP("SoftmaxCrossEntropyLoss", ox_infer_loss, NULL, NULL, NULL, ROTOR_KERNEL_SCE_LOSS, 0),
    OP("GridSample", ox_infer_gridsample, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Det", ox_infer_det, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("RoiAlign", ox_infer_roialign, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("MaxUnpool", ox_infer_maxunpool, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("DFT", ox_infer_dft, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Einsum", ox_infer_einsum, NULL, NULL, lw_einsum, ROTOR_KERNEL_NONE, 0),
    OP("TfIdfVectorizer", ox_infer_tfidf, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Compress", ox_infer_compress, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("LSTM", ox_infer_recurrent, NULL, NULL, lw_recurrent, ROTOR_KERNEL_NONE, OX_ANY_OUTPUT),
    OP("GRU", ox_infer_recurrent, NULL, NULL, lw_recurrent, ROTOR_KERNEL_NONE, OX_ANY_OUTPUT),
    OP("RNN", ox_infer_recurrent, NULL, NULL, lw_recurrent, ROTOR_KERNEL_NONE, OX_ANY_OUTPUT),
    OP("HannWindow", ox_infer_window, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("HammingWindow", ox_infer_window, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("BlackmanWindow", ox_infer_window, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("MelWeightMatrix", ox_infer_melweight, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("STFT", ox_infer_stft, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("ReduceSum", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_SUM, 0),
    OP("ReduceMean", ox_infer_reduce, NULL, NULL, lw_reduce_mean, ROTOR_KERNEL_REDUCE_MEAN, 0),
    OP("ReduceMax", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_MAX, 0),
    OP("ReduceMin", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_MIN, 0),
    OP("ReduceProd", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_PROD, 0),
    OP("ReduceL1", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_L1, 0),
    OP("ReduceL2", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_L2, 0),
    OP("ReduceLogSum", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_LOG_SUM, 0),
    OP("ReduceLogSumExp", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_LOG_SUM_EXP, 0),
    OP("ReduceSumSquare", ox_infer_reduce, NULL, NULL, lw_reduce, ROTOR_KERNEL_REDUCE_SUM_SQUARE, 0),
    OP("ArgMax", ox_infer_reduce, NULL, NULL, NULL, ROTOR_KERNEL_ARGMAX, 0),
    OP("ArgMin", ox_infer_reduce, NULL, NULL, NULL, ROTOR_KERNEL_ARGMIN, 0),
    OP("Reshape", ox_infer_reshape, NULL, NULL, lw_reshape, ROTOR_KERNEL_NONE, 0),
    OP("Flatten", ox_infer_flatten, NULL, NULL, lw_reshape, ROTOR_KERNEL_NONE, 0),
    OP("Squeeze", ox_infer_squeeze, NULL, NULL, lw_reshape, ROTOR_KERNEL_NONE, 0),
    OP("Unsqueeze", ox_infer_squeeze, NULL, NULL, lw_reshape, ROTOR_KERNEL_NONE, 0),
    OP("Transpose", ox_infer_transpose, NULL, NULL, lw_transpose, ROTOR_KERNEL_NONE, 0),
    OP("Concat", ox_infer_concat, NULL, NULL, NULL, ROTOR_KERNEL_CONCAT, 0),
    OP("Split", ox_infer_split, NULL, NULL, NULL, ROTOR_KERNEL_SPLIT, 0),
    OP("Slice", ox_infer_slice, NULL, NULL, lw_slice, ROTOR_KERNEL_NONE, 0),
    OP("Gather", ox_infer_gather, NULL, NULL, NULL, ROTOR_KERNEL_GATHER, 0),
    OP("GatherElements", ox_infer_gather, NULL, NULL, NULL, ROTOR_KERNEL_GATHER_ELEMENTS, 0),
    OP("GatherND", ox_infer_gather, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Expand", ox_infer_expand, NULL, NULL, lw_expand, ROTOR_KERNEL_EXPAND, 0),
    OP("Tile", ox_infer_tile, NULL, NULL, NULL, ROTOR_KERNEL_TILE, 0),
    OP("Pad", ox_infer_pad, NULL, NULL, NULL, ROTOR_KERNEL_PAD, 0),
    OP("Resize", ox_infer_resize, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Upsample", ox_infer_resize, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("DepthToSpace", ox_infer_depth_space, NULL, NULL, NULL, ROTOR_KERNEL_DEPTH_TO_SPACE, 0),
    OP("SpaceToDepth", ox_infer_depth_space, NULL, NULL, NULL, ROTOR_KERNEL_SPACE_TO_DEPTH, 0),
    OP("TopK", ox_infer_topk, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("OneHot", ox_infer_onehot, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("QuantizeLinear", ox_infer_qdq, NULL, NULL, NULL, ROTOR_KERNEL_QUANTIZE, 0),
    OP("DequantizeLinear", ox_infer_qdq, NULL, NULL, NULL, ROTOR_KERNEL_DEQUANTIZE, 0),
    OP("DynamicQuantizeLinear", ox_infer_qdq, NULL, NULL, NULL, ROTOR_KERNEL_DYNAMIC_QUANTIZE, 0),
    OP("EyeLike", ox_infer_eyelike, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("RandomNormal", ox_infer_random, NULL, NULL, NULL, ROTOR_KERNEL_NONE, OX_RANDOM),
    OP("RandomUniform", ox_infer_random, NULL, NULL, NULL, ROTOR_KERNEL_NONE, OX_RANDOM),
    MS("Attention", ox_infer_attention, lw_attention),
    MSD("MultiHeadAttention", ox_infer_attention, lw_attention),
    MSD("GroupQueryAttention", ox_infer_attention, lw_attention),
    MSD("SkipLayerNormalization", ox_infer_skipnorm, NULL),
    MSD("SkipSimplifiedLayerNormalization", ox_infer_skipnorm, NULL),
    MSD("EmbedLayerNormalization", ox_infer_embednorm, NULL),
    MSD("BiasGelu", ox_infer_ms_same, lw_ms_gelu),
    MSD("FastGelu", ox_infer_ms_same, lw_ms_gelu),
    MS("Gelu", ox_infer_ms_same, lw_ms_gelu),
    MSD("QuickGelu", ox_infer_ms_same, NULL),
    MS("RotaryEmbedding", ox_infer_ms_same, NULL),
    MSDK("MatMulIntegerToFloat", ox_infer_mm_to_float, lw_ms_qmatmul, ROTOR_KERNEL_MATMUL_INTEGER_TO_FLOAT),
    MSDK("MatMulNBits", ox_infer_mm_nbits, lw_ms_qmatmul, ROTOR_KERNEL_MATMUL_NBITS),
    MSDK("MatMulBnb4", ox_infer_mm_bnb4, lw_ms_qmatmul, ROTOR_KERNEL_MATMUL_BNB4),
    MSDK("QLinearAdd", ox_infer_qlinear_binary, NULL, ROTOR_KERNEL_QLINEAR_ADD),
    MSDK("QLinearMul", ox_infer_qlinear_binary, NULL, ROTOR_KERNEL_QLINEAR_MUL),
    MSDK("QLinearSigmoid", ox_infer_qlinear_unary, NULL, ROTOR_KERNEL_QLINEAR_SIGMOID),
    MSDK("QLinearLeakyRelu", ox_infer_qlinear_unary, NULL, ROTOR_KERNEL_QLINEAR_LEAKY_RELU),
    MSDK("QLinearAveragePool", ox_infer_qlinear_pool, NULL, ROTOR_KERNEL_QLINEAR_AVERAGEPOOL),
    MSDK("QLinearGlobalAveragePool", ox_infer_qlinear_pool, NULL, ROTOR_KERNEL_QLINEAR_GLOBAL_AVERAGEPOOL),
    MSDK("QLinearConcat", ox_infer_qlinear_concat, NULL, ROTOR_KERNEL_QLINEAR_CONCAT),
    MSD("SimplifiedLayerNormalization", ox_infer_simplenorm, NULL),
    MSD("GroupNorm", ox_infer_ms_groupnorm, NULL),
    MSD("BiasAdd", ox_infer_biasadd, lw_biasadd),
    MSD("BiasSplitGelu", ox_infer_splitgelu, lw_split_gelu),
    OP("ImageScaler", ox_infer_image_scaler, NULL, NULL, lw_image_scaler, ROTOR_KERNEL_NONE, 0),
    OP("ConstantFill", ox_infer_constant_fill, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("Multinomial", ox_infer_multinomial, NULL, NULL, NULL, ROTOR_KERNEL_NONE, OX_RANDOM),
    OP("SequenceConstruct", ox_infer_seq_construct, NULL, NULL, lw_seq_none, ROTOR_KERNEL_NONE, OX_ANY_OUTPUT),
    OP("SplitToSequence", ox_infer_split_to_seq, NULL, NULL, lw_seq_none, ROTOR_KERNEL_NONE, OX_ANY_OUTPUT),
    OP("ConcatFromSequence", ox_infer_concat_from_seq, NULL, NULL, lw_concat_from_seq, ROTOR_KERNEL_NONE, 0),
    OP("SequenceLength", ox_infer_seq_length, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0),
    OP("SequenceAt", ox_infer_seq_at, NULL, NULL, lw_seq_at, ROTOR_KERNEL_NONE, 0),
    {"Adagrad", "ai.onnx.preview.training", 0, OX_OPSET_OPEN, ox_infer_optimizer, NULL, NULL, lw_optimizer, ROTOR_KERNEL_NONE, 0},
    {"Momentum", "ai.onnx.preview.training", 0, OX_OPSET_OPEN, ox_infer_optimizer, NULL, NULL, lw_optimizer, ROTOR_KERNEL_NONE, 0},
    {"Adam", "ai.onnx.preview.training", 0, OX_OPSET_OPEN, ox_infer_optimizer, NULL, NULL, lw_optimizer, ROTOR_KERNEL_NONE, 0},
    {"Gradient", "ai.onnx.preview.training", 0, OX_OPSET_OPEN, ox_infer_gradient, NULL, NULL, NULL, ROTOR_KERNEL_NONE, 0},
};

#define NOPS ((int)(sizeof OPS / sizeof OPS[0]))

const ox_opdef *ox_op_find(const char *domain, const char *name, int64_t opset) {
    for (int i = 0; i < NOPS; i++)
        if (!strcmp(OPS[i].name, name) && !strcmp(OPS[i].domain, domain) && opset >= OPS[i].since &&
            opset <= OPS[i].until)
            return &OPS[i];
    if (!strcmp(domain, "ai.onnx"))
        for (int i = 0; i < NOPS; i++)
            if ((OPS[i].flags & OX_ALSO_DEFAULT) && !strcmp(OPS[i].name, name)) return &OPS[i];
    return NULL;
}

const ox_opdef *ox_op_rows(int *count) {
    *count = NOPS;
    return OPS;
}

rotor_kernel rotor_onnx_kernel(const char *type) {
    const ox_opdef *d = ox_op_find("ai.onnx", type, OX_OPSET_OPEN); /* an OX_ALSO_DEFAULT row answers too */
    return d ? d->kernel : ROTOR_KERNEL_NONE;
}
