/* gtaxes.c — the range of an operator's input that a range of its output
 * needs (GraphTurbo §3.1, line 10 of Algorithm 1: "match_dim").  A split of
 * a sub-graph's output reaches back through its operators by these ranges;
 * a window (a convolution's kh, a strided 2*h+kh) makes the input range
 * longer than the output's: the halo an instance computes again
 * (docs/graphturbo.md, "Ranges").
 *
 * A tensor expression names its tensors' dimensions by axis; a graph value
 * may hold them merged (tokens = b x s), permuted or offset through an
 * element view (attention reads its heads out of the QKV projection so).
 * The output range becomes a range of every expression axis (an axis the
 * output lacks, a reduced one, is whole), and each input dimension's range
 * follows from its terms; back in the input value, a view or a run of
 * merged dimensions gives the bounding box.  What cannot be told (an
 * unknown view, a reshape that splits a dimension across value axes, a
 * vendor op the table does not know) needs the whole input, which is
 * always right, only not always cheapest. */
#include "gtint.h"

#include <string.h>

/* One value axis as a run of expression dimensions [first, last). */
typedef struct run {
    int first, last;
} run;

/* The extent a tensor dimension covers: a window 2*h+kh spans
 * 2*(E_h - 1) + E_kh rows. */
static int64_t dim_extent(const rotor_expr *e, const rotor_dim *d) {
    int64_t x = 1;
    for (int i = 0; i < d->nterms; i++) x += d->coef[i] * (e->extent[d->axis[i]] - 1);
    return x;
}

/* The runs of expression tensor t over value v when it has no view; false
 * when a dimension straddles value axes. */
static bool tensor_runs(const rotor_op *op, int t, const rotor_value *v, run *r) {
    const rotor_tensor *tn = &op->expr.tensors[t];
    int d = 0;
    for (int i = 0; i < v->rank; i++) {
        int64_t prod = 1;
        r[i].first = d;
        while (prod < v->shape[i] && d < tn->ndims) prod *= dim_extent(&op->expr, &tn->dims[d++]);
        r[i].last = d;
        if (prod != v->shape[i]) return false;
    }
    for (; d < tn->ndims; d++) /* trailing extent-1 dimensions */
        if (dim_extent(&op->expr, &tn->dims[d]) != 1) return false;
    return true;
}

static void whole(const rotor_value *v, int64_t *lo, int64_t *hi) {
    for (int a = 0; a < v->rank; a++) lo[a] = 0, hi[a] = v->shape[a];
}

/* Axis ranges from a range [lo, hi) of a run of plain dimensions merged
 * row-major: the outer dimension's range, and inside it the next one's when
 * the range stays within one outer index. */
static void split_run(const rotor_expr *e, const rotor_tensor *tn, run r, int64_t lo, int64_t hi, int64_t *alo,
                      int64_t *ahi) {
    for (int d = r.first; d < r.last && lo < hi; d++) {
        const rotor_dim *dm = &tn->dims[d];
        if (dm->nterms != 1 || dm->coef[0] != 1) return; /* the axes stay whole */
        int64_t inner = 1;
        for (int j = d + 1; j < r.last; j++) inner *= dim_extent(e, &tn->dims[j]);
        int a = dm->axis[0];
        int64_t first = lo / inner, last = (hi - 1) / inner;
        alo[a] = first, ahi[a] = last + 1;
        if (first != last) return;
        lo -= first * inner, hi -= first * inner;
    }
}

/* The same for dimensions dims[0..n) of a view that lay one value axis out
 * with falling steps: a step must cover the span of the dimensions inside
 * it (no overlap), else the axes stay whole. */
static void view_run(const rotor_expr *e, const rotor_tensor *tn, const rotor_view *vw, const int *dims, int n,
                     int64_t lo, int64_t hi, int64_t *alo, int64_t *ahi) {
    for (int i = 0; i < n; i++) {
        const rotor_dim *dm = &tn->dims[dims[i]];
        if (dm->nterms != 1 || dm->coef[0] != 1 || vw->step[dims[i]] <= 0) return;
        if (i + 1 < n && vw->step[dims[i + 1]] * dim_extent(e, &tn->dims[dims[i + 1]]) > vw->step[dims[i]]) return;
    }
    for (int i = 0; i < n && lo < hi; i++) {
        int a = tn->dims[dims[i]].axis[0];
        int64_t s = vw->step[dims[i]], first = lo / s, last = (hi - 1) / s;
        if (lo < 0) first = 0;
        if (last >= e->extent[a]) last = e->extent[a] - 1;
        if (first > last) return;
        alo[a] = first, ahi[a] = last + 1;
        if (first != last) return;
        lo -= first * s, hi -= first * s;
    }
}

/* The expression axes' ranges for the output value range [vlo, vhi). */
static void output_axes(const rotor_graph *g, const rotor_op *op, const int64_t *vlo, const int64_t *vhi,
                        int64_t *alo, int64_t *ahi) {
    const rotor_expr *e = &op->expr;
    for (int a = 0; a < e->naxes; a++) alo[a] = 0, ahi[a] = e->extent[a];
    const rotor_tensor *tn = &e->tensors[0];
    const rotor_view *vw = &op->view[0];
    const rotor_value *v = &g->values[op->outputs[0]];
    if (op->tensor_value[0] != op->outputs[0] || vw->unknown) return;
    if (vw->set) { /* each value axis: its dimensions by falling step, inverted as a run */
        for (int j = 0; j < v->rank; j++) {
            int dims[ROTOR_MAX_DIMS], n = 0;
            for (int d = 0; d < tn->ndims; d++)
                if (vw->dim[d] == j) dims[n++] = d;
            for (int x = 1; x < n; x++) /* insertion sort by step, largest first */
                for (int y = x; y > 0 && vw->step[dims[y]] > vw->step[dims[y - 1]]; y--) {
                    int t = dims[y];
                    dims[y] = dims[y - 1], dims[y - 1] = t;
                }
            view_run(e, tn, vw, dims, n, vlo[j] - vw->offset[j], vhi[j] - vw->offset[j], alo, ahi);
        }
        return;
    }
    run r[ROTOR_GRAPH_MAX_RANK];
    if (!tensor_runs(op, 0, v, r)) return;
    for (int j = 0; j < v->rank; j++) split_run(e, tn, r[j], vlo[j], vhi[j], alo, ahi);
}

/* The range of value v expression tensor t reads for axis ranges
 * [alo, ahi), into [lo, hi) (a union with what is there when merge). */
static void tensor_range(const rotor_graph *g, const rotor_op *op, int t, const int64_t *alo, const int64_t *ahi,
                         int64_t *lo, int64_t *hi) {
    const rotor_tensor *tn = &op->expr.tensors[t];
    const rotor_view *vw = &op->view[t];
    const rotor_value *v = &g->values[op->tensor_value[t]];
    int64_t dlo[ROTOR_MAX_DIMS], dhi[ROTOR_MAX_DIMS];
    for (int d = 0; d < tn->ndims; d++) {
        dlo[d] = 0, dhi[d] = 1;
        for (int i = 0; i < tn->dims[d].nterms; i++) {
            int a = tn->dims[d].axis[i];
            dlo[d] += tn->dims[d].coef[i] * alo[a];
            dhi[d] += tn->dims[d].coef[i] * (ahi[a] - 1);
        }
    }
    if (vw->unknown) return whole(v, lo, hi);
    if (vw->set) {
        for (int j = 0; j < v->rank; j++) lo[j] = vw->offset[j], hi[j] = vw->offset[j] + 1;
        for (int d = 0; d < tn->ndims; d++) {
            int j = vw->dim[d];
            if (j < 0 || j >= v->rank) continue;
            if (vw->step[d] < 0) {
                lo[j] = 0, hi[j] = v->shape[j];
                continue;
            }
            lo[j] += vw->step[d] * dlo[d], hi[j] += vw->step[d] * (dhi[d] - 1);
        }
        return;
    }
    run r[ROTOR_GRAPH_MAX_RANK];
    if (!tensor_runs(op, t, v, r)) return whole(v, lo, hi);
    for (int j = 0; j < v->rank; j++) {
        int64_t stride = 1;
        lo[j] = 0, hi[j] = 1;
        for (int d = r[j].last - 1; d >= r[j].first; d--) {
            lo[j] += stride * dlo[d], hi[j] += stride * (dhi[d] - 1);
            stride *= dim_extent(&op->expr, &tn->dims[d]);
        }
    }
}

/* An input no expression tensor names is a fused epilogue's (a bias, a
 * residual: group.c fuses only element-wise epilogues that keep the
 * output's shape), so it follows the output as broadcasting aligns it;
 * anything else is read whole. */
static void epilogue_range(const rotor_graph *g, const rotor_op *op, int k, const int64_t *olo, const int64_t *ohi,
                           int64_t *lo, int64_t *hi) {
    const rotor_value *vi = &g->values[op->inputs[k]], *vo = &g->values[op->outputs[0]];
    int shift = vo->rank - vi->rank;
    whole(vi, lo, hi);
    if (op->nfused == 0 || shift < 0) return;
    for (int i = 0; i < vi->rank; i++)
        if (vi->shape[i] == vo->shape[i + shift] && vi->shape[i] > 1) lo[i] = olo[i + shift], hi[i] = ohi[i + shift];
}

static void expr_range(const rotor_graph *g, const rotor_op *op, int k, const int64_t *olo, const int64_t *ohi,
                       int64_t *lo, int64_t *hi) {
    const rotor_value *v = &g->values[op->inputs[k]];
    int64_t alo[ROTOR_MAX_AXES], ahi[ROTOR_MAX_AXES];
    output_axes(g, op, olo, ohi, alo, ahi);
    bool any = false;
    for (int t = 1; t < op->expr.ntensors; t++) {
        if (op->tensor_value[t] != op->inputs[k]) continue;
        int64_t l[ROTOR_GRAPH_MAX_RANK], h[ROTOR_GRAPH_MAX_RANK];
        tensor_range(g, op, t, alo, ahi, l, h);
        for (int j = 0; j < v->rank; j++) {
            if (!any || l[j] < lo[j]) lo[j] = l[j];
            if (!any || h[j] > hi[j]) hi[j] = h[j];
        }
        any = true;
    }
    if (!any) epilogue_range(g, op, k, olo, ohi, lo, hi);
}

/* Vendor ops by type: what each keeps of its input's axes. */
typedef enum { V_NONE, V_ELEMENTWISE, V_ROWWISE, V_POOL, V_CONCAT } vkind;

static vkind vendor_kind(const char *type) {
    static const struct {
        const char *type;
        vkind kind;
    } rows[] = {
        {"BatchNormalization", V_ELEMENTWISE}, {"Relu", V_ELEMENTWISE}, {"Add", V_ELEMENTWISE},
        {"Sub", V_ELEMENTWISE}, {"Mul", V_ELEMENTWISE}, {"Div", V_ELEMENTWISE}, {"Gelu", V_ELEMENTWISE},
        {"Erf", V_ELEMENTWISE}, {"Tanh", V_ELEMENTWISE}, {"Sigmoid", V_ELEMENTWISE}, {"Clip", V_ELEMENTWISE},
        {"HardSwish", V_ELEMENTWISE}, {"HardSigmoid", V_ELEMENTWISE}, {"LeakyRelu", V_ELEMENTWISE},
        {"Swish", V_ELEMENTWISE}, {"Silu", V_ELEMENTWISE}, {"Relu6", V_ELEMENTWISE}, {"Dropout", V_ELEMENTWISE},
        {"Identity", V_ELEMENTWISE}, {"Cast", V_ELEMENTWISE},
        /* normalised along the last axis (their ONNX default) */
        {"LayerNormalization", V_ROWWISE}, {"RMSNormalization", V_ROWWISE}, {"Softmax", V_ROWWISE},
        {"LogSoftmax", V_ROWWISE}, {"SimplifiedLayerNormalization", V_ROWWISE},
        /* [N, C, spatial...]: batch and channels pass; the window is not read here */
        {"MaxPool", V_POOL}, {"AveragePool", V_POOL}, {"GlobalAveragePool", V_POOL}, {"GlobalMaxPool", V_POOL},
        {"Concat", V_CONCAT},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(type, rows[i].type) == 0) return rows[i].kind;
    return V_NONE;
}

static void vendor_range(const rotor_graph *g, const rotor_op *op, int k, const int64_t *olo, const int64_t *ohi,
                         int64_t *lo, int64_t *hi) {
    vkind kind = vendor_kind(op->type);
    const rotor_value *vi = &g->values[op->inputs[k]], *vo = &g->values[op->outputs[0]];
    whole(vi, lo, hi);
    if (kind == V_POOL || kind == V_CONCAT) {
        if (vi->rank != vo->rank) return;
        int keep = kind == V_POOL ? (vi->rank < 2 ? vi->rank : 2) : vi->rank;
        for (int i = 0; i < keep; i++)
            if (vi->shape[i] == vo->shape[i]) lo[i] = olo[i], hi[i] = ohi[i];
        return;
    }
    int shift = vo->rank - vi->rank; /* broadcasting aligns the trailing axes (ONNX, numpy) */
    if (kind == V_NONE || shift < 0) return;
    for (int i = 0; i < vi->rank; i++) {
        int j = i + shift;
        if (kind == V_ROWWISE && j == vo->rank - 1) continue;
        if (vi->shape[i] == vo->shape[j] && vi->shape[i] > 1) lo[i] = olo[j], hi[i] = ohi[j];
    }
}

void rotor_gt_input_range(const rotor_graph *g, int op, int k, const int64_t *olo, const int64_t *ohi, int64_t *lo,
                          int64_t *hi) {
    const rotor_op *o = &g->ops[op];
    whole(&g->values[o->inputs[k]], lo, hi);
    if (o->noutputs != 1) return;
    if (o->vendor) vendor_range(g, o, k, olo, ohi, lo, hi);
    else expr_range(g, o, k, olo, ohi, lo, hi);
}

bool rotor_gt_aligned_input(const rotor_graph *g, int op, int k) {
    const rotor_op *o = &g->ops[op];
    if (o->noutputs != 1 || k < 0 || k >= o->ninputs) return false;
    const rotor_value *vi = &g->values[o->inputs[k]], *vo = &g->values[o->outputs[0]];
    if (vi->rank != vo->rank || vi->bytes != vo->bytes) return false;
    for (int a = 0; a < vo->rank; a++)
        if (vi->shape[a] != vo->shape[a]) return false;
    /* each half of each axis (the others whole) reads exactly that box: the
     * index map is the identity, with no window, offset, broadcast or
     * reduction over the axis (a value of one element passes trivially:
     * whatever reads it reads that element) */
    int64_t olo[GT_R], ohi[GT_R], lo[GT_R], hi[GT_R];
    for (int a = 0; a < vo->rank; a++) {
        if (vo->shape[a] < 2) continue;
        for (int half = 0; half < 2; half++) {
            for (int b = 0; b < vo->rank; b++) olo[b] = 0, ohi[b] = vo->shape[b];
            int64_t mid = vo->shape[a] / 2;
            olo[a] = half ? mid : 0, ohi[a] = half ? vo->shape[a] : mid;
            rotor_gt_input_range(g, op, k, olo, ohi, lo, hi);
            for (int b = 0; b < vo->rank; b++)
                if (lo[b] != olo[b] || hi[b] != ohi[b]) return false;
        }
    }
    return true;
}
