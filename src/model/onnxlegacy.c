/* onnxlegacy.c — ONNX's removed experimental operators that files still
 * carry (docs/onnx.md, "Legacy operators"): ImageScaler and ConstantFill,
 * as their opset-1 schemas define them.  ONNX dropped its experimental
 * operators at opset 10; onnxruntime keeps ImageScaler for every opset ("for
 * backward compatibility", contrib_defs.cc), and rotor reads both names the
 * same way at any opset: the name has one meaning. */
#include "onnxir.h"

#include <string.h>

/* ImageScaler (input [N, C, H, W]): Y = scale * X + bias[c], bias one float
 * per channel; T is float16, float or double. */
rotor_status ox_infer_image_scaler(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st = ox_need(m, n, 1, err);
    if (st) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->onnx_type != T_FLOAT && x->onnx_type != T_FLOAT16 && x->onnx_type != T_DOUBLE)
        NFAIL("input '%s' is %s; ImageScaler's T is float16, float or double", x->name, ox_type_name(x->onnx_type));
    if (x->rank != 4) NFAIL("input '%s' has rank %d; ImageScaler needs [N, C, H, W]", x->name, x->rank);
    const Onnx__AttributeProto *b = ox_attr(n, "bias");
    if (!b || (int64_t)b->n_floats != x->shape[1])
        NFAIL("bias has %zu values for %lld channels", b ? b->n_floats : (size_t)0, (long long)x->shape[1]);
    return ox_set_out(m, n, 0, x->onnx_type, 4, x->shape, err);
}

/* ConstantFill: value (default 0) in dtype (float, int32, int64 or bool;
 * default float), shaped by the shape attribute without an input, else by
 * the input's shape (input_as_shape 0) or its values (input_as_shape 1,
 * then a known 1-D tensor), with extra_shape appended. */
rotor_status ox_infer_constant_fill(ox_model *m, ox_node *n, rotor_error *err) {
    int type = (int)ox_attr_int(n, "dtype", T_FLOAT);
    if (type != T_FLOAT && type != T_INT32 && type != T_INT64 && type != T_BOOL)
        NFAIL("dtype %d is not float, int32, int64 or bool", type);
    ox_val *x = ox_in(m, n, 0);
    int rank = 0, cnt = 0;
    int64_t shape[OX_MAX_RANK + 1];
    const int64_t *sa = ox_attr_ints(n, "shape", &cnt), *extra;
    rotor_status st;
    if (!x) {
        if (ox_attr(n, "extra_shape")) NFAIL("extra_shape needs an input to extend");
        if (cnt > OX_MAX_RANK) NFAIL("shape has %d entries; rotor handles rank %d at most", cnt, OX_MAX_RANK);
        for (rank = 0; rank < cnt; rank++) shape[rank] = sa[rank];
    } else if (ox_attr(n, "shape")) {
        NFAIL("takes the shape attribute or an input, not both");
    } else if (ox_attr_int(n, "input_as_shape", 0)) {
        if (x->rank != 1) NFAIL("input '%s' gives the shape (input_as_shape 1); it must be 1-D", x->name);
        if ((st = ox_const_ints(m, n, 0, "shape", shape, OX_MAX_RANK + 1, &rank, err))) return st;
    } else {
        rank = x->rank;
        memcpy(shape, x->shape, sizeof(int64_t) * (size_t)rank);
    }
    extra = ox_attr_ints(n, "extra_shape", &cnt);
    for (int i = 0; i < cnt; i++) {
        if (rank == OX_MAX_RANK + 1) NFAIL("the shape and extra_shape exceed rank %d", OX_MAX_RANK);
        shape[rank++] = extra[i];
    }
    if ((st = ox_set_out(m, n, 0, type, rank, shape, err))) return st;
    double fill = ox_attr_float(n, "value", 0);
    ox_val *o = ox_fold_target(m, n, 0);
    if (o)
        for (int64_t k = 0; k < o->elems; k++) ox_put(o, k, fill);
    return ROTOR_OK;
}
