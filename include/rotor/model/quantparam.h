/* rotor — a quantized contraction's parameters as the lowering records
 * them (model/lower.c, quant_attrs: "@in", "rotor.quant.a", ".b", ".y"):
 * which input each is and along which tensor and dimension it is read.
 * rotor run reads them by this one reading (run/runquant.c), and
 * GraphTurbo's instances on an ICCA chip slice the ones that run along the
 * batch they split (compile/gticca.c, rotor_gticca_instance). */
#ifndef ROTOR_QUANTPARAM_H
#define ROTOR_QUANTPARAM_H

#include <stdbool.h>

#include "rotor/model/graph.h"

/* The parameters, in the order the run reads them (a run that finds two
 * faults names the first of this order). */
typedef enum rotor_quant_param {
    ROTOR_QP_A_ZERO,  /* A's zero point, along A */
    ROTOR_QP_B_ZERO,  /* B's zero point, along B */
    ROTOR_QP_A_SCALE, /* A's scale, along the output */
    ROTOR_QP_B_SCALE, /* B's scale, along the output */
    ROTOR_QP_Y_SCALE, /* the output's scale */
    ROTOR_QP_Y_ZERO,  /* the output's zero point */
    ROTOR_QP_BIAS,    /* QLinearConv's bias */
    ROTOR_QP_COUNT
} rotor_quant_param;

/* One parameter: ONNX input position pos (-1: absent), read along
 * expression tensor `tensor` (1: A, 2: B, 0: the output) with its first
 * dimension on that tensor's value's dimension `start` (trailing
 * dimensions follow; a one-element parameter is per tensor). */
typedef struct rotor_quant_lookup {
    int pos, tensor, start;
} rotor_quant_lookup;

/* Op's parameters into q; false when op is no quantized contraction (the
 * lowering marked neither side, or not both). */
bool rotor_quant_lookups(const rotor_op *op, rotor_quant_lookup q[ROTOR_QP_COUNT]);

#endif
