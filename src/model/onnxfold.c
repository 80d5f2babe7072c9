/* onnxfold.c — constant folding (docs/onnx.md): a node whose inputs are all
 * constant has its outputs computed at import, so Shape/Gather/Concat/
 * Reshape chains fold to the numbers a later Reshape or Slice needs.  Small
 * constants (<= OX_DATA_MAX elements) carry data; large ones keep only their
 * shape.  The element-wise evaluators are here; each rule folds through
 * them and ox_fold_target. */
#include "onnxir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ox_all_data(ox_model *m, const ox_node *n) {
    for (int i = 0; i < n->nin; i++) {
        ox_val *x = ox_in(m, n, i);
        if (x && (x->kind != OX_CONST || !x->has_data)) return false;
    }
    return true;
}

/* Output i gets data storage when the node folds and it is small. */
ox_val *ox_fold_target(ox_model *m, ox_node *n, int i) {
    ox_val *o = ox_out(m, n, i);
    if (!o || o->elems > m->data_max || !ox_all_data(m, n)) return NULL;
    if (o->onnx_type == T_COMPLEX64 || o->onnx_type == T_COMPLEX128 || o->onnx_type >= T_F8_E4M3FN) return NULL;
    return ox_alloc_data(o) ? o : NULL;
}

/* ---- element-wise ----------------------------------------------------------- */

double ox_unary_eval(const char *op, double x) {
    if (!strcmp(op, "Abs")) return fabs(x);
    if (!strcmp(op, "Neg")) return -x;
    if (!strcmp(op, "Sqrt")) return sqrt(x);
    if (!strcmp(op, "Exp")) return exp(x);
    if (!strcmp(op, "Log")) return log(x);
    if (!strcmp(op, "Floor")) return floor(x);
    if (!strcmp(op, "Ceil")) return ceil(x);
    if (!strcmp(op, "Round")) return nearbyint(x);
    if (!strcmp(op, "Reciprocal")) return 1.0 / x;
    if (!strcmp(op, "Relu")) return x > 0 ? x : 0;
    if (!strcmp(op, "Sigmoid")) return 1.0 / (1.0 + exp(-x));
    if (!strcmp(op, "Tanh")) return tanh(x);
    if (!strcmp(op, "Erf")) return erf(x);
    if (!strcmp(op, "Sign")) return (x > 0) - (x < 0);
    if (!strcmp(op, "Not")) return x == 0;
    if (!strcmp(op, "Sin")) return sin(x);
    if (!strcmp(op, "Cos")) return cos(x);
    if (!strcmp(op, "Tan")) return tan(x);
    if (!strcmp(op, "IsNaN")) return x != x;
    if (!strcmp(op, "IsInf")) return isinf(x) != 0;
    if (!strcmp(op, "Cast") || !strcmp(op, "CastLike") || !strcmp(op, "Identity")) return x;
    return NAN;
}

bool ox_unary_has_eval(const char *op) {
    static const char *const names[] = {"Abs", "Neg", "Sqrt", "Exp", "Log", "Floor", "Ceil", "Round",
                                        "Reciprocal", "Relu", "Sigmoid", "Tanh", "Erf", "Sign", "Not",
                                        "Sin", "Cos", "Tan", "IsNaN", "IsInf", "Cast", "CastLike", "Identity"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(op, names[i])) return true;
    return false;
}

double ox_binary_eval(const char *op, double a, double b, bool isint, const ox_node *n) {
    if (!strcmp(op, "Add") || !strcmp(op, "Sum")) return a + b;
    if (!strcmp(op, "Sub")) return a - b;
    if (!strcmp(op, "Mul")) return a * b;
    if (!strcmp(op, "Div")) {
        if (!isint) return a / b;
        return b == 0 ? 0 : trunc(a / b);
    }
    if (!strcmp(op, "Pow")) return pow(a, b);
    if (!strcmp(op, "Mod")) {
        if (b == 0) return 0;
        if (ox_attr_int(n, "fmod", 0) || !isint) return fmod(a, b);
        double r = fmod(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    if (!strcmp(op, "Max")) return a > b ? a : b;
    if (!strcmp(op, "Min")) return a < b ? a : b;
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "Less")) return a < b;
    if (!strcmp(op, "Greater")) return a > b;
    if (!strcmp(op, "LessOrEqual")) return a <= b;
    if (!strcmp(op, "GreaterOrEqual")) return a >= b;
    if (!strcmp(op, "And")) return (a != 0) && (b != 0);
    if (!strcmp(op, "Or")) return (a != 0) || (b != 0);
    if (!strcmp(op, "Xor")) return (a != 0) != (b != 0);
    return NAN;
}

/* Copies x's data into output 0 (a reshape of the same elements). */
void ox_fold_copy(ox_model *m, ox_node *n, const ox_val *x) {
    ox_val *o = ox_fold_target(m, n, 0);
    if (o)
        for (int64_t k = 0; k < o->elems && k < x->elems; k++) ox_put(o, k, ox_get(x, k));
}
