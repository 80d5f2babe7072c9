/* onnxlayout.c — shape rules (onnxshape.c) of the layout operators:
 * Reshape, Flatten, Squeeze/Unsqueeze, Transpose, Concat, Split, Slice,
 * Gather, Expand, Tile, Pad, Resize, DepthToSpace/SpaceToDepth, and the
 * rest whose output shape follows from attributes (TopK, OneHot,
 * EyeLike, the random generators). */
#include "onnxir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rotor_status ox_infer_reshape(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int64_t want[OX_MAX_RANK * 2], shape[OX_MAX_RANK];
    int r;
    if (ox_in(m, n, 1)) {
        if ((st = ox_const_ints(m, n, 1, "shape", want, OX_MAX_RANK * 2, &r, err))) return st;
    } else {
        const int64_t *v = ox_attr_ints(n, "shape", &r); /* opset 1-4 */
        if (!v) NFAIL("has no shape input");
        if (r > OX_MAX_RANK * 2) NFAIL("shape has %d entries", r);
        memcpy(want, v, sizeof(int64_t) * (size_t)r);
    }
    if (r > OX_MAX_RANK) NFAIL("target shape has rank %d; rotor handles at most %d", r, OX_MAX_RANK);
    bool allowzero = ox_attr_int(n, "allowzero", 0) != 0;
    int infer_at = -1;
    int64_t known = 1;
    for (int d = 0; d < r; d++) {
        int64_t e = want[d];
        if (e == 0 && !allowzero) {
            if (d >= x->rank) NFAIL("shape entry %d is 0 (copy) but the input has rank %d", d, x->rank);
            e = x->shape[d];
        }
        if (e == -1) {
            if (infer_at >= 0) NFAIL("shape has more than one -1");
            infer_at = d;
            shape[d] = 1;
            continue;
        }
        if (e < 0) NFAIL("shape entry %d is %lld", d, (long long)e);
        shape[d] = e;
        if (!rotor_mul_i64(known, e, &known)) NFAIL("target shape overflows 64 bits");
    }
    if (infer_at >= 0) {
        if (known == 0 || x->elems % known) NFAIL("cannot infer the -1 of the shape: %lld elements into %lld",
                                                  (long long)x->elems, (long long)known);
        shape[infer_at] = x->elems / known;
    } else if (known != x->elems) {
        NFAIL("cannot reshape %lld elements into %lld", (long long)x->elems, (long long)known);
    }
    if ((st = ox_set_out(m, n, 0, x->onnx_type, r, shape, err))) return st;
    ox_fold_copy(m, n, x);
    return ROTOR_OK;
}

rotor_status ox_infer_flatten(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int64_t a = ox_attr_int(n, "axis", 1);
    if (a < 0) a += x->rank;
    if (a < 0 || a > x->rank) NFAIL("axis is out of range for rank %d", x->rank);
    int64_t shape[2] = {1, 1};
    for (int d = 0; d < x->rank; d++) shape[d < a ? 0 : 1] *= x->shape[d];
    if ((st = ox_set_out(m, n, 0, x->onnx_type, 2, shape, err))) return st;
    ox_fold_copy(m, n, x);
    return ROTOR_OK;
}

rotor_status ox_infer_squeeze(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    bool un = !strcmp(n->p->op_type, "Unsqueeze");
    int64_t ax[OX_MAX_RANK * 2];
    int cnt = 0;
    if (ox_in(m, n, 1)) {
        if ((st = ox_const_ints(m, n, 1, "axes", ax, OX_MAX_RANK * 2, &cnt, err))) return st;
    } else {
        const int64_t *v = ox_attr_ints(n, "axes", &cnt);
        if (cnt > OX_MAX_RANK * 2) NFAIL("axes has %d entries", cnt);
        for (int i = 0; i < cnt; i++) ax[i] = v[i];
    }
    int64_t shape[OX_MAX_RANK * 2];
    int r = 0;
    if (un) {
        int outr = x->rank + cnt;
        if (outr > OX_MAX_RANK) NFAIL("output would have rank %d; rotor handles at most %d", outr, OX_MAX_RANK);
        bool ins[OX_MAX_RANK] = {false};
        for (int i = 0; i < cnt; i++) {
            int a;
            if (!ox_norm_axis(ax[i], outr, &a) || ins[a]) NFAIL("axis %lld is out of range or repeated", (long long)ax[i]);
            ins[a] = true;
        }
        int src = 0;
        for (int d = 0; d < outr; d++) shape[r++] = ins[d] ? 1 : x->shape[src++];
    } else {
        bool drop[OX_MAX_RANK] = {false};
        for (int i = 0; i < cnt; i++) {
            int a;
            if (!ox_norm_axis(ax[i], x->rank, &a)) NFAIL("axis %lld is out of range for rank %d", (long long)ax[i], x->rank);
            if (x->shape[a] != 1) NFAIL("cannot squeeze axis %d of extent %lld", a, (long long)x->shape[a]);
            drop[a] = true;
        }
        for (int d = 0; d < x->rank; d++)
            if (!(cnt ? drop[d] : x->shape[d] == 1)) shape[r++] = x->shape[d];
    }
    if ((st = ox_set_out(m, n, 0, x->onnx_type, r, shape, err))) return st;
    ox_fold_copy(m, n, x);
    return ROTOR_OK;
}

rotor_status ox_infer_transpose(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int cnt;
    const int64_t *p = ox_attr_ints(n, "perm", &cnt);
    int perm[OX_MAX_RANK];
    bool seen[OX_MAX_RANK] = {false};
    if (p && cnt != x->rank) NFAIL("perm has %d entries for rank %d", cnt, x->rank);
    for (int d = 0; d < x->rank; d++) {
        int64_t v = p ? p[d] : x->rank - 1 - d;
        if (v < 0 || v >= x->rank || seen[v]) NFAIL("perm is not a permutation of 0..%d", x->rank - 1);
        seen[v] = true;
        perm[d] = (int)v;
    }
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) shape[d] = x->shape[perm[d]];
    if ((st = ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err))) return st;
    ox_val *o = ox_fold_target(m, n, 0);
    if (!o) return ROTOR_OK;
    int64_t idx[OX_MAX_RANK] = {0}, stride[OX_MAX_RANK];
    for (int d = x->rank - 1, s = 1; d >= 0; s *= (int)x->shape[d], d--) stride[d] = s;
    for (int64_t k = 0; k < o->elems; k++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++) off += idx[d] * stride[perm[d]];
        ox_put(o, k, ox_get(x, off));
        ox_idx_next(x->rank, shape, idx);
    }
    return ROTOR_OK;
}

rotor_status ox_infer_concat(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if (n->nin < 1) NFAIL("has no inputs");
    if ((st = ox_need(m, n, n->nin, err))) return st;
    ox_val *x0 = ox_in(m, n, 0);
    int axis;
    if (!ox_norm_axis(ox_attr_int(n, "axis", 0), x0->rank, &axis) || x0->rank == 0)
        NFAIL("axis is out of range for rank %d", x0->rank);
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x0->shape, sizeof shape);
    shape[axis] = 0;
    for (int i = 0; i < n->nin; i++) {
        ox_val *x = ox_in(m, n, i);
        if (x->rank != x0->rank) NFAIL("input '%s' has rank %d, '%s' has %d", x->name, x->rank, x0->name, x0->rank);
        for (int d = 0; d < x->rank; d++)
            if (d != axis && x->shape[d] != x0->shape[d])
                NFAIL("input '%s' has extent %lld in dimension %d, '%s' has %lld", x->name, (long long)x->shape[d], d,
                      x0->name, (long long)x0->shape[d]);
        shape[axis] += x->shape[axis];
    }
    if ((st = ox_set_out(m, n, 0, x0->onnx_type, x0->rank, shape, err))) return st;
    ox_val *o = ox_fold_target(m, n, 0);
    if (!o) return ROTOR_OK;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= shape[d];
    for (int d = axis + 1; d < x0->rank; d++) inner *= shape[d];
    int64_t k = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int i = 0; i < n->nin; i++) {
            ox_val *x = ox_in(m, n, i);
            int64_t len = x->shape[axis] * inner;
            for (int64_t j = 0; j < len; j++) ox_put(o, k++, ox_get(x, a * len + j));
        }
    return ROTOR_OK;
}

rotor_status ox_infer_split(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int axis;
    if (!ox_norm_axis(ox_attr_int(n, "axis", 0), x->rank, &axis) || x->rank == 0)
        NFAIL("axis is out of range for rank %d", x->rank);
    int64_t sizes[64];
    int cnt = 0;
    if (n->nout > 64) NFAIL("%d outputs; at most 64 are supported", n->nout);
    /* opset 18: num_outputs, or the split input, not both */
    const Onnx__AttributeProto *no = ox_attr(n, "num_outputs");
    if (no && ox_in(m, n, 1)) NFAIL("both the split input and num_outputs are given; ONNX takes one of them");
    if (no && no->i != n->nout) NFAIL("num_outputs is %lld but the node has %d outputs", (long long)no->i, n->nout);
    if (ox_in(m, n, 1)) {
        if ((st = ox_const_ints(m, n, 1, "split", sizes, 64, &cnt, err))) return st;
    } else {
        const int64_t *v = ox_attr_ints(n, "split", &cnt);
        if (cnt > 64) NFAIL("split has %d entries", cnt);
        for (int i = 0; i < cnt; i++) sizes[i] = v[i];
    }
    int64_t ext = x->shape[axis];
    if (cnt) {
        if (cnt != n->nout) NFAIL("split has %d entries for %d outputs", cnt, n->nout);
        int64_t tot = 0;
        for (int i = 0; i < cnt; i++) {
            if (sizes[i] < 0) NFAIL("split entry %d is negative", i);
            tot += sizes[i];
        }
        if (tot != ext) NFAIL("split sums to %lld but the axis has %lld", (long long)tot, (long long)ext);
    } else {
        int64_t parts = n->nout, each = (ext + parts - 1) / parts;
        for (int i = 0; i < n->nout; i++) {
            int64_t left = ext - each * i;
            sizes[i] = left < 0 ? 0 : left < each ? left : each;
        }
    }
    for (int i = 0; i < n->nout; i++) {
        int64_t shape[OX_MAX_RANK];
        memcpy(shape, x->shape, sizeof shape);
        shape[axis] = sizes[i];
        if ((st = ox_set_out(m, n, i, x->onnx_type, x->rank, shape, err))) return st;
    }
    return ROTOR_OK;
}

rotor_status ox_slice_geom(ox_model *m, const ox_node *n, const ox_val *x, int64_t *lo, int64_t *step,
                           int64_t *shape, rotor_error *err) {
    rotor_status st;
    int64_t starts[OX_MAX_RANK], ends[OX_MAX_RANK], axes[OX_MAX_RANK], steps[OX_MAX_RANK];
    int ns, ne, na = 0, nst = 0;
    if (n->nin >= 3) {
        if ((st = ox_const_ints(m, n, 1, "starts", starts, OX_MAX_RANK, &ns, err))) return st;
        if ((st = ox_const_ints(m, n, 2, "ends", ends, OX_MAX_RANK, &ne, err))) return st;
        if (ox_in(m, n, 3) && (st = ox_const_ints(m, n, 3, "axes", axes, OX_MAX_RANK, &na, err))) return st;
        if (ox_in(m, n, 4) && (st = ox_const_ints(m, n, 4, "steps", steps, OX_MAX_RANK, &nst, err))) return st;
    } else {
        const int64_t *v;
        v = ox_attr_ints(n, "starts", &ns);
        if (ns > OX_MAX_RANK) NFAIL("starts has %d entries", ns);
        for (int i = 0; i < ns; i++) starts[i] = v[i];
        v = ox_attr_ints(n, "ends", &ne);
        if (ne > OX_MAX_RANK) NFAIL("ends has %d entries", ne);
        for (int i = 0; i < ne; i++) ends[i] = v[i];
        v = ox_attr_ints(n, "axes", &na);
        if (na > OX_MAX_RANK) NFAIL("axes has %d entries", na);
        for (int i = 0; i < na; i++) axes[i] = v[i];
    }
    if (ns != ne || (na && na != ns) || (nst && nst != ns))
        NFAIL("starts, ends, axes and steps differ in length (%d, %d, %d, %d)", ns, ne, na, nst);
    for (int d = 0; d < x->rank; d++) lo[d] = 0, step[d] = 1, shape[d] = x->shape[d];
    bool seen[OX_MAX_RANK] = {false};
    for (int i = 0; i < ns; i++) {
        int a;
        if (!ox_norm_axis(na ? axes[i] : i, x->rank, &a) || seen[a]) NFAIL("axis %lld is out of range or repeated",
                                                                        (long long)(na ? axes[i] : i));
        seen[a] = true;
        int64_t dim = x->shape[a], s = nst ? steps[i] : 1, b = starts[i], e = ends[i];
        if (s == 0) NFAIL("step is 0");
        /* ONNX clamping: negative indices count from the end; starts clamp to
         * [0, dim] ([0, dim-1] for negative steps), ends to [-1, dim]. */
        if (b < 0) b = b < -dim ? 0 : b + dim;
        if (e < 0) e = e < -dim ? -1 : e + dim;
        if (s > 0) {
            b = b > dim ? dim : b;
            e = e > dim ? dim : e < 0 ? 0 : e;
        } else {
            b = b > dim - 1 ? dim - 1 : b;
            e = e > dim - 1 ? dim - 1 : e;
        }
        int64_t len = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e + (-s) - 1) / (-s) : 0);
        lo[a] = b;
        step[a] = s;
        shape[a] = len;
    }
    return ROTOR_OK;
}

rotor_status ox_infer_slice(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int64_t lo[OX_MAX_RANK], step[OX_MAX_RANK], shape[OX_MAX_RANK];
    if ((st = ox_slice_geom(m, n, x, lo, step, shape, err))) return st;
    if ((st = ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err))) return st;
    ox_val *o = x->has_data ? ox_fold_target(m, n, 0) : NULL;
    if (!o) return ROTOR_OK;
    int64_t idx[OX_MAX_RANK] = {0};
    for (int64_t k = 0; k < o->elems; k++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++) off = off * x->shape[d] + lo[d] + idx[d] * step[d];
        ox_put(o, k, ox_get(x, off));
        ox_idx_next(x->rank, shape, idx);
    }
    return ROTOR_OK;
}

rotor_status ox_infer_gather(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0), *ix = ox_in(m, n, 1);
    const char *op = n->p->op_type;
    if (ix->onnx_type != T_INT64 && ix->onnx_type != T_INT32)
        NFAIL("indices '%s' are %s; ONNX takes int32 or int64", ix->name, ox_type_name(ix->onnx_type));
    int axis;
    if (!ox_norm_axis(ox_attr_int(n, "axis", 0), x->rank, &axis) || x->rank == 0)
        NFAIL("axis is out of range for rank %d", x->rank);
    int64_t shape[OX_MAX_RANK * 2];
    int r = 0;
    if (!strcmp(op, "GatherElements")) {
        if (ix->rank != x->rank) NFAIL("indices have rank %d, data %d", ix->rank, x->rank);
        return ox_set_out(m, n, 0, x->onnx_type, ix->rank, ix->shape, err);
    }
    if (!strcmp(op, "GatherND")) {
        int64_t b = ox_attr_int(n, "batch_dims", 0);
        if (ix->rank < 1) NFAIL("indices must have rank >= 1");
        int64_t last = ix->shape[ix->rank - 1];
        if (b < 0 || b >= ix->rank || last < 1 || b + last > x->rank) NFAIL("indices do not fit the data's rank");
        for (int d = 0; d < ix->rank - 1; d++) shape[r++] = ix->shape[d];
        for (int64_t d = b + last; d < x->rank; d++) shape[r++] = x->shape[d];
        return ox_set_out(m, n, 0, x->onnx_type, r, shape, err);
    }
    for (int d = 0; d < axis; d++) shape[r++] = x->shape[d];
    for (int d = 0; d < ix->rank; d++) shape[r++] = ix->shape[d];
    for (int d = axis + 1; d < x->rank; d++) shape[r++] = x->shape[d];
    if ((st = ox_set_out(m, n, 0, x->onnx_type, r, shape, err))) return st;
    ox_val *o = ox_fold_target(m, n, 0);
    if (!o) return ROTOR_OK;
    int64_t outer = 1, inner = 1, dim = x->shape[axis];
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    int64_t k = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int64_t j = 0; j < ix->elems; j++) {
            int64_t i = ox_get_i(ix, j);
            if (i < 0) i += dim;
            if (i < 0 || i >= dim) {
                ox_free_data(o);
                NFAIL("index %lld is out of range for extent %lld", (long long)ox_get_i(ix, j), (long long)dim);
            }
            for (int64_t b = 0; b < inner; b++) ox_put(o, k++, ox_get(x, (a * dim + i) * inner + b));
        }
    return ROTOR_OK;
}

rotor_status ox_infer_expand(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int64_t want[OX_MAX_RANK + 1];
    int r;
    if ((st = ox_const_ints(m, n, 1, "shape", want, OX_MAX_RANK + 1, &r, err))) return st;
    if (r > OX_MAX_RANK) NFAIL("target shape has rank %d", r);
    int outr = r > x->rank ? r : x->rank;
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < outr; d++) {
        int dx = d - (outr - x->rank), dw = d - (outr - r);
        int64_t ex = dx >= 0 ? x->shape[dx] : 1, ew = dw >= 0 ? want[dw] : 1;
        if (ex != ew && ex != 1 && ew != 1) NFAIL("cannot expand extent %lld to %lld", (long long)ex, (long long)ew);
        shape[d] = ex == 1 ? ew : ex;
    }
    if ((st = ox_set_out(m, n, 0, x->onnx_type, outr, shape, err))) return st;
    ox_val *o = x->has_data ? ox_fold_target(m, n, 0) : NULL;
    if (!o) return ROTOR_OK;
    int64_t idx[OX_MAX_RANK] = {0};
    for (int64_t k = 0; k < o->elems; k++) {
        ox_put(o, k, ox_get(x, ox_bcast_offset(x, outr, idx)));
        ox_idx_next(outr, shape, idx);
    }
    return ROTOR_OK;
}

rotor_status ox_infer_tile(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int64_t rep[OX_MAX_RANK];
    int r;
    if ((st = ox_const_ints(m, n, 1, "repeats", rep, OX_MAX_RANK, &r, err))) return st;
    if (r != x->rank) NFAIL("repeats has %d entries for rank %d", r, x->rank);
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < r; d++) {
        if (rep[d] < 0 || !rotor_mul_i64(x->shape[d], rep[d], &shape[d])) NFAIL("repeat %d is out of range", d);
    }
    return ox_set_out(m, n, 0, x->onnx_type, r, shape, err);
}

rotor_status ox_infer_pad(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int64_t pads[2 * OX_MAX_RANK], axes[OX_MAX_RANK];
    int cnt, na = 0;
    if (ox_in(m, n, 1)) {
        if ((st = ox_const_ints(m, n, 1, "pads", pads, 2 * OX_MAX_RANK, &cnt, err))) return st;
    } else {
        const int64_t *v = ox_attr_ints(n, "pads", &cnt);
        if (cnt > 2 * OX_MAX_RANK) NFAIL("pads has %d entries", cnt);
        for (int i = 0; i < cnt; i++) pads[i] = v[i];
    }
    if (ox_in(m, n, 3) && (st = ox_const_ints(m, n, 3, "axes", axes, OX_MAX_RANK, &na, err))) return st;
    int nax = na ? na : x->rank;
    if (cnt != 2 * nax) NFAIL("pads has %d entries for %d axes", cnt, nax);
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    for (int i = 0; i < nax; i++) {
        int a;
        if (!ox_norm_axis(na ? axes[i] : i, x->rank, &a)) NFAIL("axis out of range");
        shape[a] += pads[i] + pads[nax + i];
        if (shape[a] < 0 || pads[i] > (1 << 30) || pads[nax + i] > (1 << 30)) NFAIL("pads out of range");
    }
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}

rotor_status ox_infer_resize(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    bool upsample = !strcmp(n->p->op_type, "Upsample");
    int64_t shape[OX_MAX_RANK];
    int64_t sizes[OX_MAX_RANK];
    int cnt = 0;
    /* Resize-10 is (X, scales); from opset 11 (X, roi, scales, sizes) */
    int si = upsample || m->opset < 11 ? 1 : 2, zi = 3;
    ox_val *sc = ox_in(m, n, si), *sz = upsample || m->opset < 11 ? NULL : ox_in(m, n, zi);
    if (sz && sz->elems > 0) {
        if (ox_attr(n, "axes")) NFAIL("the axes attribute is not supported");
        if ((st = ox_const_ints(m, n, zi, "sizes", sizes, OX_MAX_RANK, &cnt, err))) return st;
        if (cnt != x->rank) NFAIL("sizes has %d entries for rank %d", cnt, x->rank);
        for (int d = 0; d < cnt; d++) shape[d] = sizes[d];
    } else {
        double scales[OX_MAX_RANK];
        if (sc) {
            if (sc->kind == OX_INPUT)
                NFAIL("scales '%s' are a graph input; rotor needs their value to know the shapes (give it with "
                      "--value %s=...)", sc->name, sc->name);
            const char *src = sc->kind != OX_CONST ? ox_source_input(m, sc) : NULL;
            if (src)
                NFAIL("scales '%s' are computed at run time from graph input '%s' (give it with --value %s=...)",
                      sc->name, src, src);
            if (sc->kind != OX_CONST || !sc->has_data) NFAIL("scales '%s' are computed at run time", sc->name);
            if (sc->elems != x->rank) NFAIL("scales has %lld entries for rank %d", (long long)sc->elems, x->rank);
            for (int d = 0; d < x->rank; d++) scales[d] = ox_get(sc, d);
        } else {
            const Onnx__AttributeProto *a = ox_attr(n, "scales");
            if (!a || (int)a->n_floats != x->rank) NFAIL("needs scales or sizes");
            for (int d = 0; d < x->rank; d++) scales[d] = a->floats[d];
        }
        for (int d = 0; d < x->rank; d++) {
            double e = floor((double)x->shape[d] * scales[d]);
            if (!(e >= 0 && e < 1e12)) NFAIL("scale %g is out of range", scales[d]);
            shape[d] = (int64_t)e;
        }
    }
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}

rotor_status ox_infer_depth_space(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int64_t b = ox_attr_int(n, "blocksize", 0);
    if (x->rank != 4 || b < 1 || b > (1 << 20)) NFAIL("needs a rank-4 input and a positive blocksize");
    int64_t shape[4];
    memcpy(shape, x->shape, sizeof shape);
    if (!strcmp(n->p->op_type, "DepthToSpace")) {
        if (x->shape[1] % (b * b)) NFAIL("channels %lld are not a multiple of blocksize^2", (long long)x->shape[1]);
        shape[1] /= b * b, shape[2] *= b, shape[3] *= b;
    } else {
        if (x->shape[2] % b || x->shape[3] % b) NFAIL("spatial extents are not multiples of the blocksize");
        shape[1] *= b * b, shape[2] /= b, shape[3] /= b;
    }
    return ox_set_out(m, n, 0, x->onnx_type, 4, shape, err);
}

rotor_status ox_infer_topk(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int axis;
    if (!ox_norm_axis(ox_attr_int(n, "axis", -1), x->rank, &axis) || x->rank == 0) NFAIL("axis is out of range");
    int64_t k;
    if (ox_in(m, n, 1)) {
        int cnt;
        if ((st = ox_const_ints(m, n, 1, "k", &k, 1, &cnt, err))) return st;
        if (cnt != 1) NFAIL("k must have one entry");
    } else {
        k = ox_attr_int(n, "k", -1);
    }
    if (k < 0 || k > x->shape[axis]) NFAIL("k = %lld is out of range for extent %lld", (long long)k,
                                           (long long)x->shape[axis]);
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = k;
    if ((st = ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err))) return st;
    return ox_set_out(m, n, 1, T_INT64, x->rank, shape, err);
}

rotor_status ox_infer_onehot(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err))) return st;
    ox_val *ix = ox_in(m, n, 0), *depth = ox_in(m, n, 1), *vals = ox_in(m, n, 2);
    const char *src = depth->kind != OX_CONST ? ox_source_input(m, depth) : NULL;
    if (src && depth->kind == OX_INPUT)
        NFAIL("depth '%s' is a graph input; rotor needs its value to know the shapes (give it with --value %s=N)",
              depth->name, src);
    if (src)
        NFAIL("depth '%s' is computed at run time from graph input '%s'; rotor needs it constant to know the shapes "
              "(give it with --value %s=...)", depth->name, src, src);
    if (depth->kind != OX_CONST || !depth->has_data || depth->elems != 1) NFAIL("depth must be a constant scalar");
    int64_t dd = (int64_t)ox_get(depth, 0);
    if (dd < 1 || dd > (1 << 30)) NFAIL("depth %lld is out of range", (long long)dd);
    int axis;
    if (!ox_norm_axis(ox_attr_int(n, "axis", -1), ix->rank + 1, &axis)) NFAIL("axis is out of range");
    int64_t shape[OX_MAX_RANK + 1];
    for (int d = 0, s = 0; d <= ix->rank; d++) shape[d] = d == axis ? dd : ix->shape[s++];
    return ox_set_out(m, n, 0, vals->onnx_type, ix->rank + 1, shape, err);
}

rotor_status ox_infer_eyelike(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->rank != 2) NFAIL("input must be a matrix");
    return ox_set_out(m, n, 0, (int)ox_attr_int(n, "dtype", x->onnx_type), 2, x->shape, err);
}

rotor_status ox_infer_random(ox_model *m, ox_node *n, rotor_error *err) {
    int cnt;
    const int64_t *s = ox_attr_ints(n, "shape", &cnt);
    if (!s && cnt == 0 && !ox_attr(n, "shape")) NFAIL("attribute 'shape' is missing");
    return ox_set_out(m, n, 0, (int)ox_attr_int(n, "dtype", T_FLOAT), cnt, s, err);
}
