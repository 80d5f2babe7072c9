/* onnxfold.c — constant folding (docs/onnx.md): a node whose inputs are all
 * constant has its outputs computed at import, so Shape/Gather/Concat/
 * Reshape chains fold to the numbers a later Reshape or Slice needs.  Small
 * constants (<= OX_DATA_MAX elements) carry data; large ones keep only their
 * shape.  Each rule folds through ox_fold_target, element-wise ones with the
 * evaluator their registry row names (onnxops.c). */
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

/* Copies x's data into output 0 (a reshape of the same elements). */
void ox_fold_copy(ox_model *m, ox_node *n, const ox_val *x) {
    ox_val *o = ox_fold_target(m, n, 0);
    if (o)
        for (int64_t k = 0; k < o->elems && k < x->elems; k++) ox_put(o, k, ox_get(x, k));
}
