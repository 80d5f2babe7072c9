/* onnxelem.c — shape rules (onnxshape.c) of the element-wise operators
 * (unary and broadcasting n-ary), the constants and shape producers
 * (Constant, ConstantOfShape, Shape, Range) and the reductions. */
#include "onnxops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rotor_status ox_infer_unary(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    const char *op = n->p->op_type;
    int type = x->onnx_type;
    if (!strcmp(op, "Cast")) {
        const Onnx__AttributeProto *a = ox_attr(n, "to");
        if (!a || !a->has_i) NFAIL("attribute 'to' is missing");
        type = (int)a->i;
    } else if (!strcmp(op, "CastLike")) {
        ox_val *t = ox_in(m, n, 1);
        if (!t) NFAIL("input 1 (target_type) is missing");
        type = t->onnx_type;
    } else if (!strcmp(op, "Not") || !strcmp(op, "IsNaN") || !strcmp(op, "IsInf")) {
        type = T_BOOL;
    } else if (!strcmp(op, "Bernoulli")) {
        type = (int)ox_attr_int(n, "dtype", type); /* the output type, if given (ONNX Bernoulli) */
    }
    if ((st = ox_set_out(m, n, 0, type, x->rank, x->shape, err))) return st;
    ox_fold1_fn fold = n->def->fold1; /* the registry's fold column */
    ox_val *o = fold ? ox_fold_target(m, n, 0) : NULL;
    if (o)
        for (int64_t k = 0; k < o->elems; k++) ox_put(o, k, fold(ox_get(x, k)));
    /* Dropout's mask, LayerNormalization's statistics and the like: other
     * outputs of a same-shape operator get the input's shape.  Dropout's
     * mask is bool from opset 10, the data's type before (ONNX Dropout-7). */
    int other = !strcmp(op, "Dropout") && m->opset >= 10 ? T_BOOL : type;
    for (int i = 1; i < n->nout; i++)
        if ((st = ox_set_out(m, n, i, other, x->rank, x->shape, err))) return st;
    return ROTOR_OK;
}

static bool is_compare(const char *op) {
    return !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") ||
           !strcmp(op, "LessOrEqual") || !strcmp(op, "GreaterOrEqual") || !strcmp(op, "And") ||
           !strcmp(op, "Or") || !strcmp(op, "Xor");
}

bool ox_prelu_per_channel(const ox_model *m, const ox_node *n) {
    if (n->nin < 2 || n->in[0] < 0 || n->in[1] < 0) return false;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *sl = &m->vals[ox_resolve(m, n->in[1])];
    return sl->rank == 1 && x->rank > 2 && sl->shape[0] == x->shape[1] && sl->shape[0] != x->shape[x->rank - 1];
}

int ox_legacy_axis(const ox_model *m, const ox_node *n) {
    if (m->opset >= 7 || n->nin != 2 || !ox_attr_int(n, "broadcast", 0) || !ox_attr(n, "axis")) return -1;
    const ox_val *a = &m->vals[ox_resolve(m, n->in[0])], *b = &m->vals[ox_resolve(m, n->in[1])];
    int64_t axis = ox_attr_int(n, "axis", 0);
    if (axis < 0) axis += a->rank;
    if (axis < 0 || axis + b->rank > a->rank) return -2;
    for (int d = 0; d < b->rank; d++)
        if (b->shape[d] != a->shape[axis + d] && b->shape[d] != 1) return -2;
    return (int)axis;
}

rotor_status ox_infer_nary(ox_model *m, ox_node *n, rotor_error *err) {
    const char *op = n->p->op_type;
    bool where = !strcmp(op, "Where");
    bool variadic = !strcmp(op, "Sum") || !strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Mean");
    int nin = n->nin;
    if (nin < (variadic ? 1 : where ? 3 : 2)) NFAIL("needs %d inputs, has %d", where ? 3 : 2, nin);
    rotor_status st;
    if ((st = ox_need(m, n, nin, err))) return st;
    if (!strcmp(op, "PRelu") && ox_prelu_per_channel(m, n)) return ox_same_as(m, n, 0, ox_in(m, n, 0), err);
    /* opset <= 6, broadcast=1 with an axis: B's dimensions align with A's
     * from that axis on (not from the right); the output is A's shape */
    int legacy = ox_legacy_axis(m, n);
    if (legacy == -2) NFAIL("input '%s' does not fit input '%s' from axis %lld (legacy broadcast)", ox_in(m, n, 1)->name,
                            ox_in(m, n, 0)->name, (long long)ox_attr_int(n, "axis", 0));
    if (legacy >= 0) return ox_set_out(m, n, 0, is_compare(op) ? T_BOOL : ox_in(m, n, 0)->onnx_type,
                                       ox_in(m, n, 0)->rank, ox_in(m, n, 0)->shape, err);
    int r = 0;
    int64_t shape[OX_MAX_RANK * 2];
    if ((st = ox_broadcast_shape(m, n, 0, nin, &r, shape, err))) return st;
    ox_val *x0 = ox_in(m, n, where ? 1 : 0);
    int type = is_compare(op) ? T_BOOL : x0->onnx_type;
    if ((st = ox_set_out(m, n, 0, type, r, shape, err))) return st;
    ox_val *o = ox_fold_target(m, n, 0);
    ox_fold2_fn fold = n->def->fold2; /* the registry's fold column; Mean folds as Add */
    if (!o || (!where && !fold)) {
        if (o) ox_free_data(o);
        return ROTOR_OK;
    }
    bool isint = !ox_is_float_type(x0->onnx_type);
    int64_t idx[OX_MAX_RANK] = {0};
    for (int64_t k = 0; k < o->elems; k++) {
        double acc;
        if (where) {
            double c = ox_get(ox_in(m, n, 0), ox_bcast_offset(ox_in(m, n, 0), r, idx));
            ox_val *pick = ox_in(m, n, c != 0 ? 1 : 2);
            acc = ox_get(pick, ox_bcast_offset(pick, r, idx));
        } else {
            acc = ox_get(ox_in(m, n, 0), ox_bcast_offset(ox_in(m, n, 0), r, idx));
            for (int i = 1; i < nin; i++)
                acc = fold(acc, ox_get(ox_in(m, n, i), ox_bcast_offset(ox_in(m, n, i), r, idx)), isint, n);
            if (!strcmp(op, "Mean")) acc /= nin;
        }
        ox_put(o, k, acc);
        ox_idx_next(r, shape, idx);
    }
    return ROTOR_OK;
}

/* ---- constants and shapes ----------------------------------------------------- */

rotor_status ox_infer_constant(ox_model *m, ox_node *n, rotor_error *err) {
    ox_val *o = ox_out(m, n, 0);
    if (!o) NFAIL("has no output");
    const Onnx__AttributeProto *a;
    if ((a = ox_attr(n, "value")) && a->t) {
        char what[160];
        snprintf(what, sizeof what, "node '%s' attribute 'value'", n->name);
        return ox_decode_tensor(m, a->t, o, what, err);
    }
    int64_t len = 1;
    int type = T_FLOAT, rank = 0;
    if ((a = ox_attr(n, "value_float")) && a->has_f) type = T_FLOAT;
    else if ((a = ox_attr(n, "value_int")) && a->has_i) type = T_INT64;
    else if ((a = ox_attr(n, "value_floats"))) type = T_FLOAT, rank = 1, len = (int64_t)a->n_floats;
    else if ((a = ox_attr(n, "value_ints"))) type = T_INT64, rank = 1, len = (int64_t)a->n_ints;
    else NFAIL("has no value attribute rotor reads (value, value_float(s), value_int(s)); "
               "sparse and string constants are not supported");
    if (len > OX_DATA_MAX) NFAIL("constant has %lld entries; at most %d are read", (long long)len, OX_DATA_MAX);
    rotor_status st;
    if ((st = ox_set_out(m, n, 0, type, rank, &len, err))) return st;
    if (!ox_alloc_data(o)) return rotor_nomem(err);
    for (int64_t k = 0; k < len; k++) {
        if (!strcmp(a->name, "value_float")) ox_put(o, k, a->f);
        else if (!strcmp(a->name, "value_int")) ox_put(o, k, (double)a->i), o->iv[k] = a->i;
        else if (!strcmp(a->name, "value_floats")) ox_put(o, k, a->floats[k]);
        else o->iv[k] = a->ints[k];
    }
    return ROTOR_OK;
}

rotor_status ox_infer_constant_of_shape(ox_model *m, ox_node *n, rotor_error *err) {
    int64_t shape[OX_MAX_RANK + 1];
    int r;
    rotor_status st;
    if ((st = ox_const_ints(m, n, 0, "shape", shape, OX_MAX_RANK + 1, &r, err))) return st;
    int type = T_FLOAT;
    double fill = 0;
    const Onnx__AttributeProto *a = ox_attr(n, "value");
    ox_val tmp;
    memset(&tmp, 0, sizeof tmp);
    if (a && a->t) {
        char what[160];
        snprintf(what, sizeof what, "node '%s' attribute 'value'", n->name);
        if ((st = ox_decode_tensor(m, a->t, &tmp, what, err))) return st;
        type = tmp.onnx_type;
        if (tmp.has_data && tmp.elems >= 1) fill = ox_get(&tmp, 0);
        ox_free_data(&tmp);
    }
    if ((st = ox_set_out(m, n, 0, type, r, shape, err))) return st;
    ox_val *o = ox_fold_target(m, n, 0);
    if (o)
        for (int64_t k = 0; k < o->elems; k++) ox_put(o, k, fill);
    return ROTOR_OK;
}

rotor_status ox_infer_shape_op(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    bool size = !strcmp(n->p->op_type, "Size");
    int64_t start = 0, end = x->rank;
    if (!size) {
        start = ox_attr_int(n, "start", 0);
        end = ox_attr_int(n, "end", x->rank);
        if (start < 0) start += x->rank;
        if (end < 0) end += x->rank;
        start = start < 0 ? 0 : start > x->rank ? x->rank : start;
        end = end < 0 ? 0 : end > x->rank ? x->rank : end;
        if (end < start) end = start;
    }
    int64_t len = end - start;
    if ((st = ox_set_out(m, n, 0, T_INT64, size ? 0 : 1, &len, err))) return st;
    ox_val *o = ox_out(m, n, 0);
    if (!o) return ROTOR_OK;
    /* Shape and Size are constant whenever the shape is known, which it
     * always is here: this is what folds shape subgraphs. */
    if (!ox_alloc_data(o)) return rotor_nomem(err);
    o->kind = OX_CONST;
    if (size) o->iv[0] = x->elems;
    else
        for (int64_t k = 0; k < len; k++) o->iv[k] = x->shape[start + k];
    return ROTOR_OK;
}

rotor_status ox_infer_range(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err))) return st;
    for (int i = 0; i < 3; i++) {
        ox_val *x = ox_in(m, n, i);
        if (x->kind == OX_INPUT)
            NFAIL("input '%s' is a graph input; Range needs constant scalar start, limit and delta (give it with "
                  "--value %s=N)", x->name, x->name);
        const char *src = x->kind != OX_CONST ? ox_source_input(m, x) : NULL;
        if (src)
            NFAIL("input '%s' is computed at run time from graph input '%s'; Range needs constant scalar start, "
                  "limit and delta (give it with --value %s=...)", x->name, src, src);
        if (x->kind != OX_CONST || !x->has_data || x->elems != 1)
            NFAIL("input '%s' is computed at run time; Range needs constant scalar start, limit and delta",
                  x->name);
    }
    double s = ox_get(ox_in(m, n, 0), 0), l = ox_get(ox_in(m, n, 1), 0), d = ox_get(ox_in(m, n, 2), 0);
    if (d == 0) NFAIL("delta is 0");
    double cnt = ceil((l - s) / d);
    if (!(cnt >= 0)) cnt = 0;
    if (cnt > (double)INT32_MAX) NFAIL("range of %.0f elements is absurd", cnt);
    int64_t len = (int64_t)cnt;
    if ((st = ox_set_out(m, n, 0, ox_in(m, n, 0)->onnx_type, 1, &len, err))) return st;
    ox_val *o = ox_fold_target(m, n, 0);
    if (o)
        for (int64_t k = 0; k < len; k++) ox_put(o, k, s + (double)k * d);
    return ROTOR_OK;
}

/* ---- reductions ----------------------------------------------------------------- */

/* The reduced axes of a Reduce* / ArgMax node: from the axes input (ReduceSum
 * opset 13, all of them from opset 18) or the axes attribute. */
rotor_status ox_reduce_axes(ox_model *m, const ox_node *n, const ox_val *x, bool *red, rotor_error *err) {
    int64_t ax[OX_MAX_RANK * 2];
    int cnt = 0;
    rotor_status st;
    bool arg = !strncmp(n->p->op_type, "Arg", 3);
    for (int d = 0; d < x->rank; d++) red[d] = false;
    if (arg) {
        ax[0] = ox_attr_int(n, "axis", 0);
        cnt = 1;
    } else if (ox_in(m, n, 1)) {
        if ((st = ox_const_ints(m, n, 1, "axes", ax, OX_MAX_RANK * 2, &cnt, err))) return st;
    } else {
        int c;
        const int64_t *v = ox_attr_ints(n, "axes", &c);
        if (c > OX_MAX_RANK * 2) NFAIL("axes has %d entries", c);
        for (int i = 0; i < c; i++) ax[i] = v[i];
        cnt = c;
    }
    if (cnt == 0) {
        bool noop = ox_attr_int(n, "noop_with_empty_axes", 0) != 0;
        for (int d = 0; d < x->rank; d++) red[d] = !noop;
        return ROTOR_OK;
    }
    for (int i = 0; i < cnt; i++) {
        int a;
        if (!ox_norm_axis(ax[i], x->rank, &a)) NFAIL("axis %lld is out of range for rank %d", (long long)ax[i], x->rank);
        red[a] = true;
    }
    return ROTOR_OK;
}

rotor_status ox_infer_reduce(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    bool red[OX_MAX_RANK];
    if ((st = ox_reduce_axes(m, n, x, red, err))) return st;
    bool keep = ox_attr_int(n, "keepdims", 1) != 0;
    int64_t shape[OX_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!red[d]) shape[r++] = x->shape[d];
        else if (keep) shape[r++] = 1;
    }
    const char *op = n->p->op_type;
    bool arg = !strncmp(op, "Arg", 3);
    if ((st = ox_set_out(m, n, 0, arg ? T_INT64 : x->onnx_type, r, shape, err))) return st;
    ox_val *o = arg ? NULL : ox_fold_target(m, n, 0);
    if (!o) return ROTOR_OK;
    bool sum = !strcmp(op, "ReduceSum"), mean = !strcmp(op, "ReduceMean"), prod = !strcmp(op, "ReduceProd"),
         mx = !strcmp(op, "ReduceMax"), mn = !strcmp(op, "ReduceMin");
    if (!(sum || mean || prod || mx || mn)) {
        ox_free_data(o);
        return ROTOR_OK;
    }
    int64_t cnt = x->elems / (o->elems ? o->elems : 1);
    for (int64_t k = 0; k < o->elems; k++) ox_put(o, k, prod ? 1 : mx ? -INFINITY : mn ? INFINITY : 0);
    int64_t idx[OX_MAX_RANK] = {0};
    for (int64_t k = 0; k < x->elems; k++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++)
            if (!red[d]) off = off * x->shape[d] + idx[d];
        double v = ox_get(x, k), a = ox_get(o, off);
        ox_put(o, off, sum || mean ? a + v : prod ? a * v : mx ? (v > a ? v : a) : (v < a ? v : a));
        ox_idx_next(x->rank, x->shape, idx);
    }
    if (mean && cnt)
        for (int64_t k = 0; k < o->elems; k++) ox_put(o, k, ox_get(o, k) / (double)cnt);
    return ROTOR_OK;
}
