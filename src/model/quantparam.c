/* quantparam.c — a quantized contraction's parameters as the lowering
 * records them (include/rotor/model/quantparam.h). */
#include "rotor/model/quantparam.h"

#include <limits.h>
#include <stddef.h>

static const int64_t *attr4(const rotor_op *op, const char *name) {
    const rotor_attr *a = rotor_op_attr(op, name);
    return a && a->nints == 4 ? a->ints : NULL;
}

static int position(int64_t p) { return p >= 0 && p <= INT_MAX ? (int)p : -1; }

static int dim(int64_t d) { return d >= 0 && d < ROTOR_GRAPH_MAX_RANK ? (int)d : 0; }

/* The layout (lower.c, quant_attrs): "rotor.quant.a" and ".b" hold {scale,
 * zero point, first dim on the input's value, first dim on the output's};
 * ".y" {scale, zero point, bias, the bias's first dim on the output}.  The
 * output's scale and zero point lie from its first dimension (the importer
 * takes them per tensor only today, model/onnxquant.c). */
bool rotor_quant_lookups(const rotor_op *op, rotor_quant_lookup q[ROTOR_QP_COUNT]) {
    const int64_t *qa = attr4(op, "rotor.quant.a"), *qb = attr4(op, "rotor.quant.b"), *qy = attr4(op, "rotor.quant.y");
    if (!qa || !qb) return false;
    q[ROTOR_QP_A_ZERO] = (rotor_quant_lookup){position(qa[1]), 1, dim(qa[2])};
    q[ROTOR_QP_B_ZERO] = (rotor_quant_lookup){position(qb[1]), 2, dim(qb[2])};
    q[ROTOR_QP_A_SCALE] = (rotor_quant_lookup){position(qa[0]), 0, dim(qa[3])};
    q[ROTOR_QP_B_SCALE] = (rotor_quant_lookup){position(qb[0]), 0, dim(qb[3])};
    q[ROTOR_QP_Y_SCALE] = (rotor_quant_lookup){qy ? position(qy[0]) : -1, 0, 0};
    q[ROTOR_QP_Y_ZERO] = (rotor_quant_lookup){qy ? position(qy[1]) : -1, 0, 0};
    q[ROTOR_QP_BIAS] = (rotor_quant_lookup){qy ? position(qy[2]) : -1, 0, qy ? dim(qy[3]) : 0};
    return true;
}
