/* handoffview.c — which output element of its producer each element of a
 * consumer's tensor is, from what the graph records (docs/compile.md,
 * "Hand-off").
 *
 * The graph gives each expression tensor either a view into its value
 * (rotor_view: slices, padded and strided windows, the heads of a fused
 * QKV projection) or none, which means the tensor reads its value's
 * elements in row-major order over its own dimensions.  A producer without
 * a view on its output writes its value the same way.  So the hand-off
 * needs the map from the consumer tensor's coordinates to the producer
 * output's, and two reshapes can stand between them:
 *  - value -> output: the output's dimensions merge runs of the value's
 *    (a [1, 128, 768] value computed as C[m,n] with m = 128);
 *  - tensor -> output, without a view: the tensor's dimensions split the
 *    output's (a [t, d] output read as X[b, s, d]).
 * A reshape that merges on the consumer's side, or splits on the
 * producer's, is not an affine map per dimension, and a merged value
 * dimension other than the outermost of its run must not pad (a padded
 * coordinate there would land on a neighbour's element): those keep the
 * even layout.  The decision is stated in docs/compile.md. */
#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/op/emu.h"
#include "rotor/op/handoff.h"

/* Groups the fine extents into runs whose products are the coarse ones, in
 * order (extent-1 dimensions on either side join any run): group[f] is
 * fine dimension f's coarse dimension and stride[f] the product of the
 * fine extents after f in its run.  False when the fine dimensions do not
 * refine the coarse ones. */
static bool refine(const int64_t *fine, int nf, const int64_t *coarse, int nc, int *group, int64_t *stride) {
    int j = 0;
    int64_t acc = 1;
    for (int f = 0; f < nf; f++) {
        while (j < nc && coarse[j] == 1 && acc == 1 && fine[f] != 1) j++;
        if (j == nc) {
            if (fine[f] != 1 || nc == 0) return false;
            group[f] = nc - 1; /* a trailing extent-1 dimension: its index is always 0 */
            continue;
        }
        group[f] = j;
        if (fine[f] > coarse[j] / acc || coarse[j] % (acc * fine[f])) return false;
        acc *= fine[f];
        if (acc == coarse[j]) {
            j++;
            acc = 1;
        }
    }
    if (acc != 1) return false;
    for (; j < nc; j++)
        if (coarse[j] != 1) return false;
    for (int f = nf - 1; f >= 0; f--) {
        stride[f] = 1;
        if (f + 1 < nf && group[f + 1] == group[f]) stride[f] = stride[f + 1] * fine[f + 1];
    }
    return true;
}

bool rotor_compile_handoff_view(const rotor_graph *g, int o, int t, rotor_view *view) {
    memset(view, 0, sizeof *view);
    const rotor_op *op = &g->ops[o];
    if (op->vendor || t < 1 || t >= op->expr.ntensors) return false;
    int v = op->tensor_value[t];
    if (v < 0 || g->values[v].role != ROTOR_ROLE_ACTIVATION || g->values[v].producer < 0) return false;
    const rotor_op *p = &g->ops[g->values[v].producer];
    if (p->vendor || p->tensor_value[0] != v || p->view[0].set || p->view[0].unknown || op->view[t].unknown)
        return false;
    const rotor_value *x = &g->values[v];
    const rotor_expr *pe = &p->expr, *ce = &op->expr;
    int ny = pe->tensors[0].ndims, nx = ce->tensors[t].ndims;
    int64_t gy[ROTOR_MAX_DIMS], gx[ROTOR_MAX_DIMS];
    if (rotor_emu_tensor_elems(pe, 0, gy) != x->elements) return false;
    int64_t n = rotor_emu_tensor_elems(ce, t, gx);
    int group[ROTOR_MAX_DIMS > ROTOR_GRAPH_MAX_RANK ? ROTOR_MAX_DIMS : ROTOR_GRAPH_MAX_RANK];
    int64_t stride[ROTOR_MAX_DIMS > ROTOR_GRAPH_MAX_RANK ? ROTOR_MAX_DIMS : ROTOR_GRAPH_MAX_RANK];
    if (!op->view[t].set) {
        if (n != x->elements) return false;
        bool same = nx == ny;
        for (int d = 0; same && d < nx; d++) same = gx[d] == gy[d];
        if (!same) {
            if (!refine(gx, nx, gy, ny, group, stride)) return false;
            view->set = true;
            for (int d = 0; d < nx; d++) view->dim[d] = (int8_t)group[d], view->step[d] = stride[d];
        }
        return rotor_handoff_fits(pe, ce, t, view);
    }
    /* the tensor's view into the value, carried onto the output's coordinates */
    const rotor_view *w = &op->view[t];
    if (!refine(x->shape, x->rank, gy, ny, group, stride)) return false;
    view->set = true;
    for (int d = 0; d < nx; d++) {
        int j = w->dim[d];
        view->dim[d] = (int8_t)group[j];
        view->step[d] = w->step[d] * stride[j];
    }
    for (int j = 0; j < x->rank; j++) {
        view->offset[group[j]] += w->offset[j] * stride[j];
        if (j == 0 || group[j - 1] != group[j]) continue; /* the outermost of its run may pad */
        int64_t lo = w->offset[j], hi = w->offset[j];
        for (int d = 0; d < nx; d++)
            if (w->dim[d] == j) {
                int64_t span = w->step[d] * (gx[d] - 1);
                if (span < 0) lo += span;
                else hi += span;
            }
        if (lo < 0 || hi >= x->shape[j]) return false;
    }
    return rotor_handoff_fits(pe, ce, t, view);
}

bool rotor_compile_handoff_applies(const rotor_graph *g, int o, int t) {
    rotor_view view;
    return rotor_compile_handoff_view(g, o, t, &view);
}
