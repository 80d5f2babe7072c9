/* kerntrain.c — the reference kernels of the backward pass's vendor ops
 * (model/train.h, docs/training.md): each adds dY into the elements of the
 * forward input that made it.  Outputs start at zero (rotor_run allocates
 * them zeroed), so a kernel only adds. */
#include <stdio.h>
#include <string.h>

#include "runint.h"

/* ViewGrad: input P over its axes q (row-major, the point tensor the
 * gradient expression wrote), output the value: element k of P is added
 * at coordinate j = offset[j] + sum_q coef[j][q] idx_q, when every
 * coordinate is inside "shape" (outside: the padding the forward read as 0).
 * A value the forward tensor read row-major without a view has as "shape"
 * the tensor's own extents, which flatten to the same elements. */
rotor_status run_kernel_view_grad(const rotor_graph *g, int o, double *const *vals, rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    const rotor_attr *sh = rotor_op_attr(op, "shape"), *of = rotor_op_attr(op, "offset"), *co = rotor_op_attr(op, "coef");
    const rotor_value *p = &g->values[op->inputs[0]], *y = &g->values[op->outputs[0]];
    int r = sh ? sh->nints : -1, np = p->rank;
    if (!sh || !of || !co || of->nints != r || co->nints != r * np || r > ROTOR_MAX_DIMS)
        return run_op_fail(g, o, err, "needs attributes shape, offset and coef (rank x %d)", np);
    int64_t total = 1;
    for (int j = 0; j < r; j++) total *= sh->ints[j];
    if (total != y->elements)
        return run_op_fail(g, o, err, "its shape has %lld elements, its output %lld", (long long)total,
                           (long long)y->elements);
    const double *in = vals[op->inputs[0]];
    double *out = vals[op->outputs[0]];
    int64_t idx[ROTOR_GRAPH_MAX_RANK] = {0};
    for (int64_t k = 0; k < p->elements; k++) {
        int64_t flat = 0;
        bool inside = true;
        for (int j = 0; j < r && inside; j++) {
            int64_t c = of->ints[j];
            for (int q = 0; q < np; q++) c += co->ints[j * np + q] * idx[q];
            inside = c >= 0 && c < sh->ints[j];
            flat = flat * sh->ints[j] + c;
        }
        if (inside) out[flat] += in[k];
        for (int q = np - 1; q >= 0 && ++idx[q] == p->shape[q]; q--) idx[q] = 0;
    }
    return ROTOR_OK;
}

/* GatherGrad: ONNX Gather's adjoint along "axis": dY's slice at each index
 * position added into the table's slice that index names (an embedding's
 * repeated token adds twice).  Input 0 is dY, input 1 (or "@1") the indices. */
rotor_status run_kernel_gather_grad(const rotor_graph *g, int o, double *const *vals, rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    const rotor_value *x = &g->values[op->outputs[0]];
    const rotor_attr *ax = rotor_op_attr(op, "axis");
    int64_t axis = ax && ax->nints ? ax->ints[0] : 0;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return run_op_fail(g, o, err, "axis is out of range");
    int64_t nidx, outer = 1, inner = 1, ext = x->shape[axis];
    int value;
    double buf[64];
    const double *idx = run_op_param(g, o, vals, 1, buf, 64, &nidx, &value);
    if (!idx) return run_op_fail(g, o, err, "has no indices");
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = (int)axis + 1; d < x->rank; d++) inner *= x->shape[d];
    const double *dy = vals[op->inputs[0]];
    double *out = vals[op->outputs[0]];
    if (g->values[op->inputs[0]].elements != outer * nidx * inner)
        return run_op_fail(g, o, err, "dY has %lld elements, not %lld", (long long)g->values[op->inputs[0]].elements,
                           (long long)(outer * nidx * inner));
    for (int64_t a = 0; a < outer; a++)
        for (int64_t i = 0; i < nidx; i++) {
            int64_t j = (int64_t)idx[i];
            if (j < 0) j += ext;
            if (j < 0 || j >= ext) return run_op_fail(g, o, err, "index %lld is out of range", (long long)idx[i]);
            for (int64_t e = 0; e < inner; e++) out[(a * ext + j) * inner + e] += dy[(a * nidx + i) * inner + e];
        }
    return ROTOR_OK;
}

/* Broadcast: output element k (row-major over "outshape", rank n) reads
 * the input's element at coordinate j = offset[j] + sum_d coef[j][d] idx_d
 * over the input's "shape" ("offset" optional, 0): a gradient copied along
 * the axes it does not vary on, or one input's part of a Concat's dY. */
rotor_status run_kernel_broadcast(const rotor_graph *g, int o, double *const *vals, rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    const rotor_attr *sh = rotor_op_attr(op, "shape"), *os = rotor_op_attr(op, "outshape"), *co = rotor_op_attr(op, "coef");
    const rotor_attr *of = rotor_op_attr(op, "offset");
    if (!sh || !os || !co || co->nints != sh->nints * os->nints || os->nints > ROTOR_MAX_AXES ||
        (of && of->nints != sh->nints))
        return run_op_fail(g, o, err, "needs attributes shape, outshape and coef");
    int r = sh->nints, n = os->nints;
    int64_t total = 1, in_total = 1;
    for (int d = 0; d < n; d++) total *= os->ints[d];
    for (int j = 0; j < r; j++) in_total *= sh->ints[j];
    if (total != g->values[op->outputs[0]].elements || in_total != g->values[op->inputs[0]].elements)
        return run_op_fail(g, o, err, "its shapes do not match its values");
    const double *in = vals[op->inputs[0]];
    double *out = vals[op->outputs[0]];
    int64_t idx[ROTOR_MAX_AXES] = {0};
    for (int64_t k = 0; k < total; k++) {
        int64_t flat = 0;
        for (int j = 0; j < r; j++) {
            int64_t c = of ? of->ints[j] : 0;
            for (int d = 0; d < n; d++) c += co->ints[j * n + d] * idx[d];
            if (c < 0 || c >= sh->ints[j]) return run_op_fail(g, o, err, "reads outside its input");
            flat = flat * sh->ints[j] + c;
        }
        out[k] = in[flat];
        for (int d = n - 1; d >= 0 && ++idx[d] == os->ints[d]; d--) idx[d] = 0;
    }
    return ROTOR_OK;
}
