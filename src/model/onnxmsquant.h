/* onnxmsquant.h — onnxruntime's quantized com.microsoft operators
 * (onnxmsquant.c; docs/onnx.md, "onnxruntime's quantized operators"): the
 * shape rules and the lowering the registry (onnxops.c) names.  Private to
 * the model stage. */
#ifndef ROTOR_MODEL_ONNXMSQUANT_H
#define ROTOR_MODEL_ONNXMSQUANT_H

#include "lowerint.h"

/* MatMulIntegerToFloat, MatMulNBits, MatMulBnb4. */
rotor_status ox_infer_mm_to_float(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_mm_nbits(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_mm_bnb4(ox_model *m, ox_node *n, rotor_error *err);
/* QLinearAdd and QLinearMul; QLinearSigmoid and QLinearLeakyRelu. */
rotor_status ox_infer_qlinear_binary(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_qlinear_unary(ox_model *m, ox_node *n, rotor_error *err);
/* QLinearAveragePool and QLinearGlobalAveragePool. */
rotor_status ox_infer_qlinear_pool(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_qlinear_concat(ox_model *m, ox_node *n, rotor_error *err);

/* The three matrix products: one contraction over the quantized codes (plus
 * the bias), or, for rotor run (keep_data), the vendor op its kernel runs. */
rotor_status lw_ms_qmatmul(lower_ctx *c, const ox_node *n);

#endif
