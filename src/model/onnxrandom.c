/* onnxrandom.c — Multinomial's shape rule (ONNX operator docs, opset 7):
 * sample_size draws per batch row of class probabilities, their indices in
 * dtype.  The values are random, the shape is not: [batch, sample_size],
 * int32 (the default) or int64, from a float16, float or double input
 * [batch, classes].  A generator (OX_RANDOM in its registry row): never a
 * constant, a vendor op (docs/onnx.md).  The other generators'
 * rules are onnxlayout.c's ox_infer_random. */
#include "onnxir.h"

rotor_status ox_infer_multinomial(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st = ox_need(m, n, 1, err);
    if (st) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->onnx_type != T_FLOAT && x->onnx_type != T_FLOAT16 && x->onnx_type != T_DOUBLE)
        NFAIL("input '%s' is %s; Multinomial takes float16, float or double", x->name, ox_type_name(x->onnx_type));
    if (x->rank != 2) NFAIL("input '%s' has rank %d; Multinomial needs [batch, classes]", x->name, x->rank);
    int64_t dtype = ox_attr_int(n, "dtype", T_INT32), samples = ox_attr_int(n, "sample_size", 1);
    if (dtype != T_INT32 && dtype != T_INT64) NFAIL("dtype %lld is neither int32 (6) nor int64 (7)", (long long)dtype);
    if (samples < 1) NFAIL("sample_size %lld is not positive", (long long)samples);
    int64_t y[2] = {x->shape[0], samples};
    return ox_set_out(m, n, 0, (int)dtype, 2, y, err);
}
