/* elemtype.c — which operators run on 8-bit integers, and each one's
 * element size (include/rotor/model/elemtype.h; docs/cost-model.md,
 * "Element types"). */
#include "rotor/model/elemtype.h"

bool rotor_dtype_is_quantized(rotor_dtype t) {
    return t == ROTOR_DTYPE_I8 || t == ROTOR_DTYPE_U8 || t == ROTOR_DTYPE_I16 || t == ROTOR_DTYPE_U16 ||
           t == ROTOR_DTYPE_I32;
}

int64_t rotor_value_elem_bytes(int64_t e, const rotor_value *v) {
    return rotor_dtype_is_quantized(v->dtype) ? rotor_dtype_bytes(v->dtype) : e;
}

/* Expression tensor t of op names an 8-bit integer value. */
static bool int8_input(const rotor_graph *g, const rotor_op *op, int t) {
    int v = op->tensor_value[t];
    return v >= 0 && rotor_dtype_is_quantized(g->values[v].dtype) && rotor_dtype_bytes(g->values[v].dtype) == 1;
}

rotor_op_elem rotor_op_elem_of(const rotor_graph *g, int o) {
    const rotor_op *op = &g->ops[o];
    rotor_op_elem d = {0, false};
    if (op->vendor) return d;
    /* the multiply-accumulates are the two inputs', whatever the output: a
     * fused epilogue may write a float (MatMulInteger -> Cast -> Mul) */
    d.int8 = op->expr.op_class == ROTOR_OP_CONTRACTION && op->expr.ntensors == 3 && int8_input(g, op, 1) &&
             int8_input(g, op, 2);
    int64_t widest = 0;
    for (int t = 0; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        if (v < 0 || !rotor_dtype_is_quantized(g->values[v].dtype)) return d; /* the chip's e */
        int64_t b = rotor_dtype_bytes(g->values[v].dtype);
        if (b > widest) widest = b;
    }
    d.bytes = widest;
    return d;
}

rotor_status rotor_graph_at_element_bytes(rotor_graph *g, int64_t e, rotor_error *err) {
    if (e < 1) return rotor_fail(err, ROTOR_ERR_INPUT, "element size %lld: expected at least 1", (long long)e);
    for (int v = 0; v < g->nvalues; v++) {
        rotor_value *x = &g->values[v];
        if (!rotor_mul_i64(x->elements, rotor_value_elem_bytes(e, x), &x->bytes))
            return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s': %lld elements of %lld bytes overflow 64 bits", x->name,
                              (long long)x->elements, (long long)rotor_value_elem_bytes(e, x));
    }
    for (int o = 0; o < g->nops; o++) {
        rotor_op *op = &g->ops[o];
        int64_t bytes = 0, wbytes = 0;
        bool ok = true;
        for (int i = 0; i < op->ninputs && ok; i++) {
            const rotor_value *x = &g->values[op->inputs[i]];
            ok = rotor_add_i64(bytes, x->bytes, &bytes) &&
                 (x->role != ROTOR_ROLE_WEIGHT || rotor_add_i64(wbytes, x->bytes, &wbytes));
        }
        for (int i = 0; i < op->noutputs && ok; i++) ok = rotor_add_i64(bytes, g->values[op->outputs[i]].bytes, &bytes);
        if (!ok) return rotor_fail(err, ROTOR_ERR_INPUT, "op '%s': byte count overflows 64 bits", op->name);
        op->bytes = bytes, op->weight_bytes = wbytes;
    }
    return ROTOR_OK;
}
