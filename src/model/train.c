/* train.c — the training graph (include/rotor/model/train.h, docs/training.md):
 * the forward graph copied, the loss, the backward pass in reverse
 * operator order, the optimizer's update.
 *
 * The backward pass is reverse-mode differentiation over the lowered
 * graph.  For an expression operator Y[p] (+)= f(X1[p], ..., Xn[p]) over
 * iteration space p (T10 §4.2), the gradient of input Xt is
 *     dXt[idx_t(p)] += dY[idx_y(p)] * df/dXt(p)
 * summed over every p: again a tensor expression over the same axes (a
 * contraction when f is a product, so a MatMul's two gradients are the
 * MatMuls of the textbook), which the compile plans and rotor run evaluates
 * like any other.  Where Xt reads its value through a window (a
 * convolution's h+r) or an element view (padding, slices, strides), the
 * expression writes the gradient per point of Xt's own axes, and a ViewGrad
 * vendor op adds each element into the value element it read: the adjoint
 * of the view, one kernel for every window and view.  A value read by
 * several operators sums their contributions (Add).
 *
 * Decisions (docs/training.md): the loss is the mean squared error of each
 * float32 output against its target input, summed over outputs; the
 * optimizer's first step (Adam's bias correction at t = 1); Adam's moments
 * are weights (resident state, loaded from memory as parameters are). */
#include "rotor/model/train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/model/onnx.h"
#include "rotor/op/emu.h"
#include "trainint.h"

#define NAME_MAX_LEN 320

typedef struct tr {
    const rotor_graph *g;
    const rotor_train_options *opt;
    rotor_graph *out;
    rotor_train_info *info;
    rotor_error *err;
    bool *needs;        /* per value: depends on a parameter (float32) */
    int **contrib;      /* per value: its gradient contributions (values of out) */
    int *ncontrib, *capcontrib;
    int *grad;          /* per value: its gradient once summed, or -1 */
    bool *kept;         /* per value: a backward operator reads it */
    int seq;            /* a counter for unique names */
} tr;

static bool softmax_max(const rotor_graph *g, int o);

/* ---- building blocks ------------------------------------------------------------------------ */

static rotor_status new_value(tr *s, const char *name, const rotor_value *like, rotor_role role, int *out) {
    return rotor_graph_add_value(s->out, name, like->dtype, like->rank, like->shape, role, out, s->err);
}

/* Extents of the axes of `text` as dims, read from the forward expression e
 * (every axis of text is one of e's), or without e: `flat` for every axis
 * but u, which is 1. */
static rotor_status dims_of(const rotor_expr *parsed, const rotor_expr *e, int64_t flat, char *dims, size_t cap,
                            rotor_error *err) {
    size_t n = 0;
    dims[0] = 0;
    for (int a = 0; a < parsed->naxes; a++) {
        int64_t x = strcmp(parsed->axis_name[a], "u") ? flat : 1; /* u: a loss's one element */
        if (e) {
            int k = rotor_expr_axis(e, parsed->axis_name[a]);
            if (k < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "train: axis '%s' is not the operator's", parsed->axis_name[a]);
            x = e->extent[k];
        }
        int w = snprintf(dims + n, cap - n, "%s%s=%lld", a ? "," : "", parsed->axis_name[a], (long long)x);
        if (w < 0 || (size_t)w >= cap - n) return rotor_fail(err, ROTOR_ERR_INPUT, "train: dims too long");
        n += (size_t)w;
    }
    return ROTOR_OK;
}

typedef struct tmap {
    const char *name;
    int value;
    const rotor_view *view; /* NULL: none */
} tmap;

/* An expression operator from text, its tensors named by m[] (the output
 * is tensor 0, value outv); extents from e's axes (NULL: the flat axis i of
 * `flat` elements).  *idx gets the op (may be NULL). */
static rotor_status add_expr(tr *s, const char *name, const char *type, const char *text, const rotor_expr *e,
                             int64_t flat, const tmap *m, int nm, int outv, int *idx) {
    rotor_expr x;
    char dims[ROTOR_EXPR_TEXT_MAX];
    rotor_status st = rotor_expr_parse(text, &x, s->err);
    if (!st) st = dims_of(&x, e, flat, dims, sizeof dims, s->err);
    if (!st) st = rotor_expr_bind(&x, dims, s->err);
    if (st) {
        rotor_error_prefix(s->err, name);
        return st;
    }
    rotor_view views[ROTOR_MAX_TENSORS];
    memset(views, 0, sizeof views);
    int ins[ROTOR_MAX_TENSORS], nin = 0;
    rotor_op_desc d = {.name = name, .type = type, .outputs = &outv, .noutputs = 1, .view = views};
    d.tensor_value[0] = outv;
    for (int t = 1; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = -1;
    for (int t = 1; t < x.ntensors; t++) {
        int k = 0;
        while (k < nm && strcmp(m[k].name, x.tensors[t].name)) k++;
        if (k == nm) return rotor_fail(s->err, ROTOR_ERR_INPUT, "%s: tensor %s unnamed", name, x.tensors[t].name);
        d.tensor_value[t] = m[k].value;
        if (m[k].view) views[t] = *m[k].view;
        bool seen = false;
        for (int i = 0; i < nin; i++) seen |= ins[i] == m[k].value;
        if (!seen) ins[nin++] = m[k].value;
    }
    d.inputs = ins, d.ninputs = nin;
    return rotor_graph_add_bound_op(s->out, &d, &x, idx, s->err);
}

/* A vendor op of the backward pass: name, type, kind (ROTOR_KERNEL_NONE:
 * costed only), its values; *idx gets it. */
static rotor_status vendor_op(tr *s, const char *name, const char *type, rotor_kernel kind, const int *ins, int nin,
                              const int *outs, int nout, int *idx) {
    rotor_op_desc d = {.name = name, .type = type, .inputs = ins, .ninputs = nin, .outputs = outs, .noutputs = nout};
    for (int k = 0; k < ROTOR_MAX_TENSORS; k++) d.tensor_value[k] = -1;
    rotor_status st = rotor_graph_add_op(s->out, &d, idx, s->err);
    if (st) return st;
    s->out->ops[*idx].kernel = kind;
    s->info->backward_ops++;
    return ROTOR_OK;
}

/* Records contribution c to the gradient of forward value v. */
static rotor_status add_contrib(tr *s, int v, int c) {
    if (s->ncontrib[v] == s->capcontrib[v]) {
        int cap = s->capcontrib[v] ? 2 * s->capcontrib[v] : 2;
        int *p = realloc(s->contrib[v], sizeof *p * (size_t)cap);
        if (!p) return rotor_nomem(s->err);
        s->contrib[v] = p, s->capcontrib[v] = cap;
    }
    s->contrib[v][s->ncontrib[v]++] = c;
    return ROTOR_OK;
}

/* A new contribution value for forward value v ("grad.<v>.<k>"). */
static rotor_status contrib_value(tr *s, int v, int *out) {
    char name[NAME_MAX_LEN];
    snprintf(name, sizeof name, "grad.%s.%d", s->g->values[v].name, s->ncontrib[v]);
    rotor_status st = new_value(s, name, &s->g->values[v], ROTOR_ROLE_ACTIVATION, out);
    return st ? st : add_contrib(s, v, *out);
}

/* The gradient of forward value v: its one contribution, or their sum
 * (Add operators of up to four terms); -1 when none reached it. */
static rotor_status finalize(tr *s, int v) {
    if (s->grad[v] >= 0 || s->ncontrib[v] == 0) return ROTOR_OK;
    int n = s->ncontrib[v], *c = s->contrib[v];
    rotor_status st = ROTOR_OK;
    while (n > 1 && !st) {
        int k = n < 4 ? n : 4, sum;
        char name[NAME_MAX_LEN], text[128];
        snprintf(name, sizeof name, "grad.%s.sum%d", s->g->values[v].name, s->seq++);
        if ((st = new_value(s, name, &s->g->values[v], ROTOR_ROLE_ACTIVATION, &sum))) break;
        static const char *const names[4] = {"A", "B", "C", "D"};
        tmap m[4];
        size_t len = (size_t)snprintf(text, sizeof text, "S[i] = ");
        for (int j = 0; j < k; j++) {
            m[j] = (tmap){names[j], c[n - k + j], NULL};
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s[i]", j ? " + " : "", names[j]);
        }
        st = add_expr(s, name, "Add", text, NULL, s->g->values[v].elements, m, k, sum, NULL);
        if (!st) s->info->backward_ops++;
        c[n - k] = sum;
        n -= k - 1;
    }
    s->ncontrib[v] = 1;
    s->grad[v] = c[0];
    return st;
}

/* "op 'NAME' (TYPE): " before the message in err; returns st. */
static rotor_status op_prefix(tr *s, const rotor_op *op, rotor_status st) {
    char pre[NAME_MAX_LEN];
    snprintf(pre, sizeof pre, "op '%s' (%s)", op->name, op->type);
    rotor_error_prefix(s->err, pre);
    return st;
}

/* ---- the gradient of an expression operator ------------------------------------------------ */

/* Whether tensor t of op reads its value element for element over plain
 * axes (so its gradient can be written in place). */
static bool reads_plainly(const rotor_graph *g, const rotor_op *op, int t) {
    const rotor_tensor *x = &op->expr.tensors[t];
    if (op->view[t].set || op->view[t].unknown) return false;
    bool seen[ROTOR_MAX_AXES] = {false};
    for (int d = 0; d < x->ndims; d++) {
        if (x->dims[d].nterms != 1 || x->dims[d].coef[0] != 1 || seen[x->dims[d].axis[0]]) return false;
        seen[x->dims[d].axis[0]] = true;
    }
    int64_t ext[ROTOR_MAX_DIMS];
    return rotor_emu_tensor_elems(&op->expr, t, ext) == g->values[op->tensor_value[t]].elements;
}

/* The distinct axes of tensor t in order of first use. */
static int tensor_axes(const rotor_expr *e, int t, int *axes) {
    int n = 0;
    const rotor_tensor *x = &e->tensors[t];
    for (int d = 0; d < x->ndims; d++)
        for (int k = 0; k < x->dims[d].nterms; k++) {
            int a = x->dims[d].axis[k], j = 0;
            while (j < n && axes[j] != a) j++;
            if (j == n) axes[n++] = a;
        }
    return n;
}

/* The ViewGrad op: each element of p (over axes[0..np) of op's tensor t)
 * added into the element of contribution c it was read from.  Its map is
 * affine: value coordinate j = off[j] + sum_q coef[j][q] idx_q. */
static rotor_status view_grad(tr *s, int o, int t, const int *axes, int np, int p, int c) {
    const rotor_op *op = &s->g->ops[o];
    const rotor_expr *e = &op->expr;
    const rotor_tensor *x = &e->tensors[t];
    const rotor_view *w = &op->view[t];
    const rotor_value *val = &s->g->values[op->tensor_value[t]];
    int64_t ext[ROTOR_MAX_DIMS], shape[ROTOR_MAX_DIMS], off[ROTOR_MAX_DIMS] = {0};
    int64_t coef[ROTOR_MAX_DIMS * ROTOR_MAX_AXES] = {0};
    rotor_emu_tensor_elems(e, t, ext);
    int rank = w->set ? val->rank : x->ndims;
    for (int j = 0; j < rank; j++) {
        shape[j] = w->set ? val->shape[j] : ext[j];
        if (w->set) off[j] = w->offset[j];
    }
    for (int d = 0; d < x->ndims; d++) {
        int j = w->set ? w->dim[d] : d;
        int64_t step = w->set ? w->step[d] : 1;
        for (int k = 0; k < x->dims[d].nterms; k++)
            for (int q = 0; q < np; q++)
                if (axes[q] == x->dims[d].axis[k]) coef[j * np + q] += step * x->dims[d].coef[k];
    }
    char name[NAME_MAX_LEN];
    snprintf(name, sizeof name, "grad.%s.%d.view", op->name, t);
    int idx;
    rotor_status st = vendor_op(s, name, "ViewGrad", ROTOR_KERNEL_VIEW_GRAD, &p, 1, &c, 1, &idx);
    if (st) return st;
    if ((st = rotor_graph_add_attr(s->out, idx, "shape", shape, rank, NULL, 0, NULL, s->err)) ||
        (st = rotor_graph_add_attr(s->out, idx, "offset", off, rank, NULL, 0, NULL, s->err)))
        return st;
    return rotor_graph_add_attr(s->out, idx, "coef", coef, rank * np, NULL, 0, NULL, s->err);
}

/* The axes the gradient's right-hand side reads: dY's (unless a loss)
 * and those of the forward tensors the derivative names. */
static unsigned read_axes(const rotor_expr *e, bool dy, unsigned used) {
    unsigned m = 0;
    for (int u = 0; u < e->ntensors; u++)
        if ((u == 0 && dy) || (u > 0 && (used & (1u << u))))
            for (int a = 0; a < e->naxes; a++)
                if (e->tensors[u].has_axis[a]) m |= 1u << a;
    return m;
}

/* The gradient expression's text: "LHS (+)= DY[...] * (deriv)", times the
 * extents of the operator's axes in neither it nor `keep` (a sum over
 * them of a term that does not vary); "+=" when the right-hand side reads
 * an axis the left-hand side lacks. */
static void grad_text(const rotor_expr *e, const char *lhs, unsigned lhs_in, unsigned keep, const char *dy,
                      const char *deriv, int kind, unsigned rd, char *text, size_t cap) {
    int64_t scale = 1;
    bool acc = false;
    for (int a = 0; a < e->naxes; a++) {
        unsigned bit = 1u << a;
        if (!((rd | lhs_in | keep) & bit)) scale *= e->extent[a];
        if ((rd & bit) && !(lhs_in & bit)) acc = true;
    }
    size_t n = (size_t)snprintf(text, cap, "%s %s ", lhs, acc ? "+=" : "=");
    const char *sep = "";
    if (dy) n += (size_t)snprintf(text + n, cap - n, "%s", dy), sep = " * ";
    if (kind == 2) n += (size_t)snprintf(text + n, cap - n, "%s(%s)", sep, deriv), sep = " * ";
    if (scale != 1 || !*sep) snprintf(text + n, cap - n, "%s%lld", sep, (long long)scale);
}

/* The Broadcast op: value e (over axes ea[0..ne)) copied along the axes
 * it lacks into target (over axes la[0..nl), row-major). */
static rotor_status broadcast(tr *s, const rotor_expr *x, const char *name, int ev, const int *ea, int ne,
                              const int *la, int nl, int target) {
    int64_t shape[ROTOR_MAX_AXES], outshape[ROTOR_MAX_AXES], coef[ROTOR_MAX_AXES * ROTOR_MAX_AXES] = {0};
    for (int j = 0; j < ne; j++) shape[j] = x->extent[ea[j]];
    for (int d = 0; d < nl; d++) {
        outshape[d] = x->extent[la[d]];
        for (int j = 0; j < ne; j++)
            if (la[d] == ea[j]) coef[j * nl + d] = 1;
    }
    int idx;
    rotor_status st = vendor_op(s, name, "Broadcast", ROTOR_KERNEL_BROADCAST, &ev, 1, &target, 1, &idx);
    if (st) return st;
    if ((st = rotor_graph_add_attr(s->out, idx, "shape", shape, ne, NULL, 0, NULL, s->err)) ||
        (st = rotor_graph_add_attr(s->out, idx, "outshape", outshape, nl, NULL, 0, NULL, s->err)))
        return st;
    return rotor_graph_add_attr(s->out, idx, "coef", coef, ne * nl, NULL, 0, NULL, s->err);
}

/* "D[a,b,...]" over axes ax[0..n) of e. */
static void lhs_of(const rotor_expr *e, const int *ax, int n, char *out, size_t cap) {
    size_t len = (size_t)snprintf(out, cap, "D[");
    for (int q = 0; q < n; q++) len += (size_t)snprintf(out + len, cap - len, "%s%s", q ? "," : "", e->axis_name[ax[q]]);
    snprintf(out + len, cap - len, "]");
}

/* The value the gradient expression writes when it is not the
 * contribution itself: over axes ax[0..n) of e. */
static rotor_status temp_value(tr *s, const rotor_op *op, int t, const char *what, const int *ax, int n, int *out) {
    int64_t shape[ROTOR_GRAPH_MAX_RANK];
    char name[NAME_MAX_LEN];
    if (n > ROTOR_GRAPH_MAX_RANK || n < 1)
        return rotor_fail(s->err, ROTOR_ERR_INPUT, "op '%s' (%s): the gradient of tensor %s has %d axes", op->name,
                          op->type, op->expr.tensors[t].name, n);
    for (int q = 0; q < n; q++) shape[q] = op->expr.extent[ax[q]];
    snprintf(name, sizeof name, "grad.%s.%d.%s", op->name, t, what);
    return rotor_graph_add_value(s->out, name, s->g->values[op->tensor_value[t]].dtype, n, shape, ROTOR_ROLE_ACTIVATION,
                                 out, s->err);
}

/* The forward tensors the derivative reads (occ[u] times each), as m[]
 * entries after *nm, named in tn[]; each is kept for the backward pass. */
static rotor_status forward_maps(tr *s, const rotor_op *op, const int *occ, tmap *m, int *nm, char (*tn)[24]) {
    for (int u = 1; u < op->expr.ntensors; u++) {
        if (!occ[u]) continue;
        if (op->tensor_value[u] < 0)
            return rotor_fail(s->err, ROTOR_ERR_INPUT, "op '%s' (%s): the gradient reads tensor %s, which is no value",
                              op->name, op->type, op->expr.tensors[u].name);
        for (int k = 0; k < occ[u] && *nm < 2 * ROTOR_MAX_TENSORS; k++) {
            train_occurrence_name(u, k, tn[*nm], 24);
            m[*nm] = (tmap){tn[*nm], op->tensor_value[u], op->view[u].set ? &op->view[u] : NULL};
            (*nm)++;
        }
        s->kept[op->tensor_value[u]] = true;
    }
    return ROTOR_OK;
}

/* When dY and the derivative's tensors exceed T10's five (LayerNorm's
 * gradient by its variance reads X, M, V and G), the derivative becomes a
 * value of its own first, Q over the axes it reads, and the gradient reads
 * DY * Q: deriv is rewritten "Q[...]", *q gets Q (else -1). */
static rotor_status local_deriv(tr *s, int o, int t, char *deriv, size_t cap, int *occ, int *q) {
    const rotor_op *op = &s->g->ops[o];
    const rotor_expr *e = &op->expr;
    int total = 0, qa[ROTOR_MAX_AXES], nq = 0;
    unsigned rd = 0;
    *q = -1;
    for (int u = 1; u < ROTOR_MAX_TENSORS; u++) {
        total += occ[u];
        if (occ[u]) rd |= read_axes(e, false, 1u << u);
    }
    if (total + 2 <= ROTOR_MAX_TENSORS) return ROTOR_OK;
    if (total + 1 > ROTOR_MAX_TENSORS)
        return rotor_fail(s->err, ROTOR_ERR_INPUT, "op '%s' (%s): the gradient of tensor %s reads %d tensors", op->name,
                          op->type, e->tensors[t].name, total);
    for (int a = 0; a < e->naxes; a++)
        if (rd & (1u << a)) qa[nq++] = a;
    rotor_status st = temp_value(s, op, t, "local", qa, nq, q);
    char lhs[ROTOR_EXPR_TEXT_MAX], text[3 * ROTOR_EXPR_TEXT_MAX], name[NAME_MAX_LEN], type[ROTOR_OP_TYPE_MAX];
    char tn[2 * ROTOR_MAX_TENSORS][24];
    tmap m[2 * ROTOR_MAX_TENSORS];
    int nm = 0;
    if (!st) st = forward_maps(s, op, occ, m, &nm, tn);
    if (st) return st;
    lhs_of(e, qa, nq, lhs, sizeof lhs);
    snprintf(text, sizeof text, "%s = %s", lhs, deriv);
    snprintf(name, sizeof name, "grad.%s.%d.local", op->name, t);
    snprintf(type, sizeof type, "%.40sGrad", op->type);
    if ((st = add_expr(s, name, type, text, e, 0, m, nm, *q, NULL))) return st;
    s->info->backward_ops++;
    snprintf(deriv, cap, "Q%s", lhs + 1);
    memset(occ, 0, sizeof(int) * ROTOR_MAX_TENSORS);
    return ROTOR_OK;
}

/* The contribution of op o's tensor t to its value's gradient; gy the
 * gradient of o's output.  Written element for element when the tensor
 * reads its value plainly, else per point of its axes and then the view's
 * adjoint (ViewGrad); an axis of the tensor the right-hand side does not
 * read (a broadcast: the mean's gradient) is copied along (Broadcast),
 * since T10 plans no output axis that no input reads. */
static rotor_status expr_grad(tr *s, int o, int t, int gy) {
    const rotor_op *op = &s->g->ops[o];
    const rotor_expr *e = &op->expr;
    char deriv[ROTOR_EXPR_TEXT_MAX], text[2 * ROTOR_EXPR_TEXT_MAX], lhs[ROTOR_EXPR_TEXT_MAX], dy[ROTOR_EXPR_TEXT_MAX];
    char name[NAME_MAX_LEN];
    int occ[ROTOR_MAX_TENSORS], kind, q = -1;
    unsigned used = 0;
    rotor_status st = train_diff(e, t, deriv, sizeof deriv, occ, &kind, s->err);
    if (st) return op_prefix(s, op, st);
    if (kind == 0) return ROTOR_OK;
    for (int u = 1; u < ROTOR_MAX_TENSORS; u++)
        if (occ[u]) used |= 1u << u;
    int axes[ROTOR_MAX_AXES], np = tensor_axes(e, t, axes), ra[ROTOR_MAX_AXES], nr = 0;
    unsigned rd = read_axes(e, true, used), all = 0;
    for (int k = 0; k < np; k++) {
        all |= 1u << axes[k];
        if (rd & (1u << axes[k])) ra[nr++] = axes[k];
    }
    bool plain = reads_plainly(s->g, op, t), bcast = nr < np;
    int c, p = -1, ev = -1;
    if ((st = local_deriv(s, o, t, deriv, sizeof deriv, occ, &q))) return st;
    if ((st = contrib_value(s, op->tensor_value[t], &c))) return st;
    if (!plain && (st = temp_value(s, op, t, "points", axes, np, &p))) return st;
    if (bcast && (st = temp_value(s, op, t, "reduced", ra, nr, &ev))) return st;
    if (plain && !bcast) train_tensor_ref(e, t, "D", lhs, sizeof lhs);
    else lhs_of(e, bcast ? ra : axes, bcast ? nr : np, lhs, sizeof lhs);
    train_tensor_ref(e, 0, "DY", dy, sizeof dy);
    unsigned lhs_in = 0;
    for (int k = 0; k < (bcast ? nr : np); k++) lhs_in |= 1u << (bcast ? ra[k] : axes[k]);
    grad_text(e, lhs, lhs_in, all, dy, deriv, kind, rd, text, sizeof text);
    if (strlen(text) >= ROTOR_EXPR_TEXT_MAX)
        return rotor_fail(s->err, ROTOR_ERR_INPUT, "op '%s' (%s): the gradient of tensor %s is too long an expression",
                          op->name, op->type, e->tensors[t].name);
    tmap m[2 * ROTOR_MAX_TENSORS];
    int nm = 0;
    char tn[2 * ROTOR_MAX_TENSORS][24];
    m[nm++] = (tmap){"DY", gy, op->view[0].set ? &op->view[0] : NULL};
    if (q >= 0) m[nm++] = (tmap){"Q", q, NULL};
    if ((st = forward_maps(s, op, occ, m, &nm, tn))) return st;
    snprintf(name, sizeof name, "grad.%s.%d", op->name, t);
    char type[ROTOR_OP_TYPE_MAX];
    snprintf(type, sizeof type, "%.40sGrad", op->type);
    int target = plain ? c : p;
    if ((st = add_expr(s, name, type, text, e, 0, m, nm, bcast ? ev : target, NULL))) return st;
    s->info->backward_ops++;
    snprintf(name, sizeof name, "grad.%s.%d.broadcast", op->name, t);
    if (bcast && (st = broadcast(s, e, name, ev, ra, nr, axes, np, target))) return st;
    return plain ? ROTOR_OK : view_grad(s, o, t, axes, np, p, c);
}

/* ---- vendor ops ------------------------------------------------------------------------------- */

/* A softmax's stabiliser: the ReduceMax the lowering subtracts before exp
 * (model/lower.c, lw_softmax, "<softmax>.max").  The softmax does not
 * depend on it, so its gradient is exactly 0 and none is passed. */
static bool softmax_max(const rotor_graph *g, int o) {
    const rotor_op *op = &g->ops[o];
    size_t n = strlen(op->name);
    if (n < 5 || strcmp(op->name + n - 4, ".max") || op->noutputs != 1) return false;
    for (int k = o + 1; k < g->nops; k++) {
        const rotor_op *c = &g->ops[k];
        bool reads = false;
        for (int i = 0; i < c->ninputs; i++) reads |= c->inputs[i] == op->outputs[0];
        if (!reads) continue;
        bool same = !strncmp(c->name, op->name, n - 4) && (c->name[n - 4] == 0 || !strcmp(c->name + n - 4, ".sum"));
        if (!same || (strcmp(c->type, "Softmax") && strcmp(c->type, "LogSoftmax") && strcmp(c->type, "ReduceSum")))
            return false;
    }
    return true;
}

/* A vendor gradient op: type, inputs (dY first, then forward values at
 * ONNX positions 1, ...: "@in"), the forward op's attributes but "@in". */
static rotor_status vendor_grad_op(tr *s, int o, const char *type, rotor_kernel kind, const int *ins, int nin, int c) {
    const rotor_op *op = &s->g->ops[o];
    char name[NAME_MAX_LEN];
    snprintf(name, sizeof name, "grad.%s", op->name);
    int idx;
    rotor_status st = vendor_op(s, name, type, kind, ins, nin, &c, 1, &idx);
    if (st) return st;
    int64_t pos[2] = {0, 1};
    for (int a = 0; a < op->nattrs && !st; a++) {
        const rotor_attr *at = &op->attrs[a];
        if (strcmp(at->name, "@in"))
            st = rotor_graph_add_attr(s->out, idx, at->name, at->ints, at->nints, at->floats, at->nfloats, at->str, s->err);
    }
    for (int i = 1; i < nin; i++) s->kept[ins[i]] = true;
    return st ? st : rotor_graph_add_attr(s->out, idx, "@in", pos, nin, NULL, 0, NULL, s->err);
}

/* Vendor ops whose gradient rotor costs but does not compute: the zoo's
 * normalisations, softmax and pools (an ONNX file lowers them to
 * expressions, differentiated exactly).  Their gradient is one vendor op
 * "<Type>Grad" reading dY, the forward inputs and output, writing each
 * input's gradient, with no kernel: rotor run refuses it naming it. */
static const char *const COST_ONLY[] = {"LayerNormalization", "RMSNormalization", "SimplifiedLayerNormalization",
                                        "Softmax", "LogSoftmax", "BatchNormalization", "GlobalAveragePool",
                                        "AveragePool", "Add", "Mul", "Sub", "Concat", "Split",
                                        "Gather"}; /* the zoo's embedding: rows of three tables summed */

static rotor_status cost_grad(tr *s, int o, int gy) {
    const rotor_op *op = &s->g->ops[o];
    bool known = false;
    for (size_t k = 0; k < sizeof COST_ONLY / sizeof COST_ONLY[0]; k++) known |= !strcmp(op->type, COST_ONLY[k]);
    if (!known || op->ninputs + 2 > 64)
        return rotor_fail(s->err, ROTOR_ERR_INPUT, "op '%s' (%s): rotor has no gradient for this operator "
                          "(docs/training.md lists the ones it has)", op->name, op->type);
    int ins[64], outs[64], nin = 0, nout = 0;
    rotor_status st = ROTOR_OK;
    ins[nin++] = gy;
    for (int i = 0; i < op->ninputs; i++) ins[nin++] = op->inputs[i];
    ins[nin++] = op->outputs[0];
    for (int i = 0; i < op->ninputs && !st; i++) {
        s->kept[op->inputs[i]] = true;
        bool dup = false;
        for (int j = 0; j < i; j++) dup |= op->inputs[j] == op->inputs[i];
        if (s->needs[op->inputs[i]] && !dup) st = contrib_value(s, op->inputs[i], &outs[nout++]);
    }
    s->kept[op->outputs[0]] = true;
    if (st || nout == 0) return st;
    char name[NAME_MAX_LEN], type[ROTOR_OP_TYPE_MAX];
    snprintf(name, sizeof name, "grad.%s", op->name);
    snprintf(type, sizeof type, "%.40sGrad", op->type);
    int idx;
    return vendor_op(s, name, type, ROTOR_KERNEL_NONE, ins, nin, outs, nout, &idx);
}

/* Concat's gradient: each input's part of dY, a Broadcast op reading dY at
 * the input's offset along the axis (identity otherwise). */
static rotor_status concat_grad(tr *s, int o, int gy) {
    const rotor_op *op = &s->g->ops[o];
    const rotor_value *y = &s->g->values[op->outputs[0]];
    const rotor_attr *ax = rotor_op_attr(op, "axis");
    int64_t axis = ax && ax->nints ? ax->ints[0] : 0, at = 0;
    if (axis < 0) axis += y->rank;
    rotor_status st = ROTOR_OK;
    for (int i = 0; i < op->ninputs && !st; i++) {
        int v = op->inputs[i], c, idx;
        const rotor_value *x = &s->g->values[v];
        int64_t ext = x->shape[axis], off[ROTOR_GRAPH_MAX_RANK] = {0}, coef[ROTOR_GRAPH_MAX_RANK * ROTOR_GRAPH_MAX_RANK] = {0};
        if (s->needs[v]) { /* an input given twice gets both parts */
            char name[NAME_MAX_LEN];
            snprintf(name, sizeof name, "grad.%s.%d", op->name, i);
            for (int d = 0; d < y->rank; d++) coef[d * y->rank + d] = 1;
            off[axis] = at;
            if ((st = contrib_value(s, v, &c)) ||
                (st = vendor_op(s, name, "ConcatGrad", ROTOR_KERNEL_BROADCAST, &gy, 1, &c, 1, &idx)) ||
                (st = rotor_graph_add_attr(s->out, idx, "shape", y->shape, y->rank, NULL, 0, NULL, s->err)) ||
                (st = rotor_graph_add_attr(s->out, idx, "outshape", x->shape, x->rank, NULL, 0, NULL, s->err)) ||
                (st = rotor_graph_add_attr(s->out, idx, "offset", off, y->rank, NULL, 0, NULL, s->err)))
                break;
            st = rotor_graph_add_attr(s->out, idx, "coef", coef, y->rank * y->rank, NULL, 0, NULL, s->err);
        }
        at += ext;
    }
    return st;
}

/* Whether op is a Concat the exact rule takes: every input a value of the
 * output's rank (none kept as a constant attribute), its axis in range. */
static bool plain_concat(const rotor_graph *g, const rotor_op *op) {
    const rotor_value *y = &g->values[op->outputs[0]];
    const rotor_attr *ax = rotor_op_attr(op, "axis");
    int64_t axis = ax && ax->nints ? ax->ints[0] : 0;
    if (axis < 0) axis += y->rank;
    if (axis < 0 || axis >= y->rank || op->noutputs != 1) return false;
    for (int a = 0; a < op->nattrs; a++)
        if (op->attrs[a].name[0] == '@' && strcmp(op->attrs[a].name, "@in")) return false;
    const rotor_attr *in = rotor_op_attr(op, "@in");
    for (int i = 0; in && i < op->ninputs; i++)
        if (in->nints != op->ninputs || in->ints[i] != i) return false;
    for (int i = 0; i < op->ninputs; i++)
        if (g->values[op->inputs[i]].rank != y->rank) return false;
    return true;
}

static rotor_status vendor_grad(tr *s, int o, int gy) {
    const rotor_op *op = &s->g->ops[o];
    rotor_kernel kind = op->kernel != ROTOR_KERNEL_NONE ? op->kernel : rotor_onnx_kernel(op->type);
    if (kind == ROTOR_KERNEL_CONCAT && plain_concat(s->g, op)) return concat_grad(s, o, gy);
    int x = rotor_op_input_at(op, 0), c;
    rotor_status st;
    if (kind == ROTOR_KERNEL_REDUCE_MAX && softmax_max(s->g, o)) return ROTOR_OK;
    bool other = false; /* an input that needs a gradient this rule does not give */
    for (int i = 0; i < op->ninputs; i++) other |= op->inputs[i] != x && s->needs[op->inputs[i]];
    if (x < 0 || other) kind = ROTOR_KERNEL_NONE;
    /* nothing to give when neither the data input nor another needs one
     * (a weight read beside a model input: until 2026-12-03 it was left
     * untrained without a word, found by an audit helper) */
    if (x >= 0 && !s->needs[x] && !other) return ROTOR_OK;
    switch (kind) {
    case ROTOR_KERNEL_IDENTITY:
    case ROTOR_KERNEL_DROPOUT: { /* Dropout as inference runs it: the identity */
        if ((st = contrib_value(s, x, &c))) return st;
        char name[NAME_MAX_LEN];
        snprintf(name, sizeof name, "grad.%s", op->name);
        tmap m = {"DY", gy, NULL};
        if ((st = add_expr(s, name, "IdentityGrad", "D[i] = DY[i]", NULL, s->g->values[x].elements, &m, 1, c, NULL)))
            return st;
        s->info->backward_ops++;
        return ROTOR_OK;
    }
    case ROTOR_KERNEL_GATHER: { /* an embedding: dY's rows added into the rows they read */
        int ins[2] = {gy, rotor_op_input_at(op, 1)};
        if ((st = contrib_value(s, x, &c))) return st;
        return vendor_grad_op(s, o, "GatherGrad", ROTOR_KERNEL_GATHER_GRAD, ins, ins[1] >= 0 ? 2 : 1, c);
    }
    case ROTOR_KERNEL_MAXPOOL: { /* dY to the window's first maximum */
        int ins[2] = {gy, x};
        if ((st = contrib_value(s, x, &c))) return st;
        return vendor_grad_op(s, o, "MaxPoolGrad", ROTOR_KERNEL_MAXPOOL_GRAD, ins, 2, c);
    }
    default:
        return cost_grad(s, o, gy);
    }
}

/* ---- the passes --------------------------------------------------------------------------------- */

/* Split's gradient: each output's dY added into its slice of the input
 * (a ViewGrad at the output's offset along the axis, the extents of the
 * outputs before it); an output without a gradient adds nothing. */
static rotor_status split_grad(tr *s, int o) {
    const rotor_op *op = &s->g->ops[o];
    int xv = rotor_op_input_at(op, 0);
    const rotor_value *x = &s->g->values[xv];
    const rotor_attr *ax = rotor_op_attr(op, "axis");
    int64_t axis = ax && ax->nints ? ax->ints[0] : 0, at = 0;
    if (axis < 0) axis += x->rank;
    rotor_status st = ROTOR_OK;
    for (int k = 0; k < op->noutputs && !st; k++) {
        int yk = op->outputs[k], c, idx;
        const rotor_value *y = &s->g->values[yk];
        if ((st = finalize(s, yk)) || y->rank != x->rank) break;
        if (s->grad[yk] >= 0) {
            int64_t off[ROTOR_GRAPH_MAX_RANK] = {0}, coef[ROTOR_GRAPH_MAX_RANK * ROTOR_GRAPH_MAX_RANK] = {0};
            char name[NAME_MAX_LEN];
            snprintf(name, sizeof name, "grad.%s.%d", op->name, k);
            for (int d = 0; d < x->rank; d++) coef[d * x->rank + d] = 1;
            off[axis] = at;
            if ((st = contrib_value(s, xv, &c)) ||
                (st = vendor_op(s, name, "SplitGrad", ROTOR_KERNEL_VIEW_GRAD, &s->grad[yk], 1, &c, 1, &idx)) ||
                (st = rotor_graph_add_attr(s->out, idx, "shape", x->shape, x->rank, NULL, 0, NULL, s->err)) ||
                (st = rotor_graph_add_attr(s->out, idx, "offset", off, x->rank, NULL, 0, NULL, s->err)))
                break;
            st = rotor_graph_add_attr(s->out, idx, "coef", coef, x->rank * x->rank, NULL, 0, NULL, s->err);
        }
        at += y->shape[axis];
    }
    return st;
}

/* Whether op is a Split the exact rule takes: one data input whose
 * gradient is needed, every output of its rank, the axis in range. */
static bool plain_split(const tr *s, const rotor_op *op) {
    rotor_kernel kind = op->kernel != ROTOR_KERNEL_NONE ? op->kernel : rotor_onnx_kernel(op->type);
    int xv = rotor_op_input_at(op, 0);
    if (kind != ROTOR_KERNEL_SPLIT || !op->vendor || xv < 0 || !s->needs[xv]) return false;
    const rotor_attr *ax = rotor_op_attr(op, "axis");
    int64_t axis = ax && ax->nints ? ax->ints[0] : 0, r = s->g->values[xv].rank;
    if (axis < 0) axis += r;
    for (int k = 0; k < op->noutputs; k++)
        if (s->g->values[op->outputs[k]].rank != r) return false;
    return axis >= 0 && axis < r;
}

static rotor_status backward(tr *s) {
    const rotor_graph *g = s->g;
    rotor_status st = ROTOR_OK;
    for (int o = g->nops - 1; o >= 0 && !st; o--) {
        const rotor_op *op = &g->ops[o];
        if (plain_split(s, op)) {
            st = split_grad(s, o);
            continue;
        }
        int y = op->vendor ? op->outputs[0] : op->tensor_value[0];
        if (y < 0 || (st = finalize(s, y))) continue;
        for (int i = 1; i < op->noutputs && !st; i++)
            if ((st = finalize(s, op->outputs[i])) || s->grad[op->outputs[i]] >= 0)
                st = st ? st : rotor_fail(s->err, ROTOR_ERR_INPUT, "op '%s' (%s): rotor has no gradient for its "
                                          "output %d", op->name, op->type, i + 1);
        int gy = s->grad[y];
        if (st || gy < 0) continue;
        bool any = false;
        for (int i = 0; i < op->ninputs; i++) any |= s->needs[op->inputs[i]];
        if (!any) continue;
        if (op->vendor) {
            st = vendor_grad(s, o, gy);
            continue;
        }
        for (int t = 1; t < op->expr.ntensors && !st; t++) {
            int v = op->tensor_value[t];
            if (v >= 0 && s->needs[v]) st = expr_grad(s, o, t, gy);
        }
    }
    return st;
}

/* Mean squared error of each float32 output that depends on a parameter
 * against its target, L = sum_outputs sum_i (Y_i - T_i)^2 / N, and its
 * gradient dY = (Y - T) 2/N seeds the backward pass. */
static rotor_status loss(tr *s) {
    const rotor_graph *g = s->g;
    int parts[ROTOR_MAX_TENSORS], nparts = 0;
    rotor_status st = ROTOR_OK;
    int64_t one = 1;
    /* a graph that marks no output (the zoo's): the values no operator reads */
    bool any_output = false;
    for (int v = 0; v < g->nvalues; v++) any_output |= g->values[v].is_output && s->needs[v];
    for (int v = 0; v < g->nvalues && !st; v++) {
        const rotor_value *y = &g->values[v];
        bool sink = !any_output && y->producer >= 0 && y->consumers == 0;
        if (!(y->is_output || sink) || !s->needs[v]) continue;
        if (nparts == 4) return rotor_fail(s->err, ROTOR_ERR_INPUT, "train: more than 4 outputs to take a loss of");
        char name[NAME_MAX_LEN], text[160];
        int t, l, c;
        snprintf(name, sizeof name, "%s.target", y->name);
        if ((st = new_value(s, name, y, ROTOR_ROLE_ACTIVATION, &t))) break;
        s->info->target[s->info->ntargets++] = t;
        snprintf(name, sizeof name, "loss.%s", y->name);
        if ((st = rotor_graph_add_value(s->out, name, y->dtype, 1, &one, ROTOR_ROLE_ACTIVATION, &l, s->err))) break;
        tmap m[2] = {{"Y", v, NULL}, {"T", t, NULL}};
        snprintf(text, sizeof text, "L[u] += square(Y[u,i] - T[u,i]) / %lld", (long long)y->elements);
        if ((st = add_expr(s, name, "MSELoss", text, NULL, y->elements, m, 2, l, NULL))) break;
        s->info->loss_ops++;
        parts[nparts++] = l;
        snprintf(name, sizeof name, "grad.loss.%s", y->name);
        if ((st = contrib_value(s, v, &c))) break;
        snprintf(text, sizeof text, "D[i] = (Y[i] - T[i]) * %.17g", 2.0 / (double)y->elements);
        if ((st = add_expr(s, name, "MSELossGrad", text, NULL, y->elements, m, 2, c, NULL))) break;
        s->info->backward_ops++;
        s->kept[v] = true;
    }
    if (st) return st;
    if (!nparts) return rotor_fail(s->err, ROTOR_ERR_INPUT, "train: no floating-point output depends on a parameter");
    s->info->loss = parts[0];
    if (nparts == 1) return rotor_graph_set_output(s->out, parts[0], s->err);
    static const char *const names[4] = {"A", "B", "C", "D"};
    tmap m[4];
    char text[128];
    size_t len = (size_t)snprintf(text, sizeof text, "L[u] = ");
    for (int j = 0; j < nparts; j++) {
        m[j] = (tmap){names[j], parts[j], NULL};
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s[u]", j ? " + " : "", names[j]);
    }
    if ((st = rotor_graph_add_value(s->out, "loss", s->out->values[parts[0]].dtype, 1, &one, ROTOR_ROLE_ACTIVATION,
                                    &s->info->loss, s->err)) ||
        (st = add_expr(s, "loss", "Add", text, NULL, 1, m, nparts, s->info->loss, NULL)))
        return st;
    s->info->loss_ops++;
    return rotor_graph_set_output(s->out, s->info->loss, s->err);
}

/* One operator of the update, flat over the parameter's N elements. */
static rotor_status update_op(tr *s, const char *name, const char *type, const char *text, const tmap *m, int nm,
                              int p, int outv) {
    rotor_status st = add_expr(s, name, type, text, NULL, s->g->values[p].elements, m, nm, outv, NULL);
    if (!st) s->info->update_ops++, s->info->write_elements += s->g->values[p].elements;
    return st ? st : rotor_graph_set_output(s->out, outv, s->err);
}

/* A zero-initialised state tensor of parameter p (Adam's moments). */
static rotor_status state_value(tr *s, int p, const char *suffix, int *out) {
    const rotor_value *w = &s->g->values[p];
    char name[NAME_MAX_LEN];
    snprintf(name, sizeof name, "%s.%s", w->name, suffix);
    rotor_status st = new_value(s, name, w, ROTOR_ROLE_WEIGHT, out);
    s->info->state_bytes += w->bytes;
    if (st || !w->data) return st;
    double *z = calloc((size_t)w->elements, sizeof *z);
    if (!z) return rotor_nomem(s->err);
    st = rotor_graph_set_data(s->out, *out, z, s->err);
    free(z);
    return st;
}

/* SGD: W' = W - lr G.  Adam (Kingma & Ba, Algorithm 1, its first step):
 * M' = b1 M + (1 - b1) G, V' = b2 V + (1 - b2) G^2,
 * W' = W - lr (M' / (1 - b1)) / (sqrt(V' / (1 - b2)) + eps). */
static rotor_status update(tr *s, int p, int gp) {
    const rotor_train_options *o = s->opt;
    double lr = o->lr > 0 ? o->lr : 1e-3, b1 = o->beta1 > 0 ? o->beta1 : 0.9, b2 = o->beta2 > 0 ? o->beta2 : 0.999;
    double eps = o->eps > 0 ? o->eps : 1e-8;
    const rotor_value *w = &s->g->values[p];
    char name[NAME_MAX_LEN], text[ROTOR_EXPR_TEXT_MAX];
    int next, m0, v0, m1, v1;
    rotor_status st;
    snprintf(name, sizeof name, "%s.next", w->name);
    if ((st = new_value(s, name, w, ROTOR_ROLE_ACTIVATION, &next))) return st;
    if (o->optimizer == ROTOR_OPTIM_SGD) {
        tmap m[2] = {{"P", p, NULL}, {"G", gp, NULL}};
        snprintf(text, sizeof text, "W[i] = P[i] - G[i] * %.17g", lr);
        snprintf(name, sizeof name, "sgd.%s", w->name);
        return update_op(s, name, "SGD", text, m, 2, p, next);
    }
    if ((st = state_value(s, p, "adam_m", &m0)) || (st = state_value(s, p, "adam_v", &v0))) return st;
    snprintf(name, sizeof name, "%s.adam_m.next", w->name);
    if ((st = new_value(s, name, w, ROTOR_ROLE_ACTIVATION, &m1))) return st;
    snprintf(name, sizeof name, "%s.adam_v.next", w->name);
    if ((st = new_value(s, name, w, ROTOR_ROLE_ACTIVATION, &v1))) return st;
    tmap mm[2] = {{"A", m0, NULL}, {"G", gp, NULL}}, mv[2] = {{"B", v0, NULL}, {"G", gp, NULL}};
    tmap mw[3] = {{"P", p, NULL}, {"M", m1, NULL}, {"V", v1, NULL}};
    snprintf(text, sizeof text, "M[i] = A[i] * %.17g + G[i] * %.17g", b1, 1 - b1);
    snprintf(name, sizeof name, "adam.%s.m", w->name);
    if ((st = update_op(s, name, "Adam", text, mm, 2, p, m1))) return st;
    snprintf(text, sizeof text, "V[i] = B[i] * %.17g + square(G[i]) * %.17g", b2, 1 - b2);
    snprintf(name, sizeof name, "adam.%s.v", w->name);
    if ((st = update_op(s, name, "Adam", text, mv, 2, p, v1))) return st;
    snprintf(text, sizeof text, "W[i] = P[i] - M[i] * %.17g / (sqrt(V[i] * %.17g) + %.17g)", lr / (1 - b1),
             1 / (1 - b2), eps);
    snprintf(name, sizeof name, "adam.%s", w->name);
    return update_op(s, name, "Adam", text, mw, 3, p, next);
}

/* g's values and operators into s->out with the same indices. */
static rotor_status copy_forward(tr *s) {
    const rotor_graph *g = s->g;
    rotor_status st = ROTOR_OK;
    for (int v = 0; v < g->nvalues && !st; v++) {
        const rotor_value *x = &g->values[v];
        int idx;
        st = rotor_graph_add_value(s->out, x->name, x->dtype, x->rank, x->shape, x->role, &idx, s->err);
        if (!st && x->data) st = rotor_graph_set_data(s->out, idx, x->data, s->err);
    }
    for (int o = 0; o < g->nops && !st; o++) {
        const rotor_op *op = &g->ops[o];
        rotor_op_desc d = {.name = op->name, .type = op->type, .inputs = op->inputs, .ninputs = op->ninputs,
                           .outputs = op->outputs, .noutputs = op->noutputs, .view = op->view};
        memcpy(d.tensor_value, op->tensor_value, sizeof d.tensor_value);
        int idx;
        if ((st = rotor_graph_add_bound_op(s->out, &d, op->vendor ? NULL : &op->expr, &idx, s->err))) break;
        rotor_op *n = &s->out->ops[idx];
        n->flops = op->flops, n->kernel = op->kernel, n->nfused = op->nfused;
        memcpy(n->fused, op->fused, sizeof n->fused);
        for (int a = 0; a < op->nattrs && !st; a++) {
            const rotor_attr *at = &op->attrs[a];
            st = rotor_graph_add_attr(s->out, idx, at->name, at->ints, at->nints, at->floats, at->nfloats, at->str, s->err);
        }
    }
    for (int v = 0; v < g->nvalues && !st; v++)
        if (g->values[v].is_output && !g->values[v].alias_only) st = rotor_graph_set_output(s->out, v, s->err);
    for (int i = 0; i < g->naliases && !st; i++)
        st = rotor_graph_add_output_alias(s->out, g->aliases[i].name, g->aliases[i].value, s->err);
    return st;
}

static bool is_real(rotor_dtype t) {
    return t == ROTOR_DTYPE_F32 || t == ROTOR_DTYPE_F16 || t == ROTOR_DTYPE_BF16 || t == ROTOR_DTYPE_F64;
}

/* needs[v]: v is floating-point and depends on a parameter (a
 * floating-point weight). */
static void mark_needs(tr *s) {
    const rotor_graph *g = s->g;
    for (int v = 0; v < g->nvalues; v++)
        s->needs[v] = g->values[v].role == ROTOR_ROLE_WEIGHT && is_real(g->values[v].dtype) && g->values[v].consumers > 0;
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        bool any = false;
        for (int i = 0; i < op->ninputs; i++) any |= s->needs[op->inputs[i]];
        /* a softmax's stabiliser carries no gradient (softmax_max) */
        if (op->vendor && !strcmp(op->type, "ReduceMax") && softmax_max(g, o)) any = false;
        for (int i = 0; i < op->noutputs; i++)
            s->needs[op->outputs[i]] = any && is_real(g->values[op->outputs[i]].dtype);
    }
}

static rotor_status params_and_updates(tr *s) {
    const rotor_graph *g = s->g;
    rotor_train_info *in = s->info;
    rotor_status st = ROTOR_OK;
    for (int v = 0; v < g->nvalues && !st; v++) {
        if (g->values[v].role != ROTOR_ROLE_WEIGHT || !s->needs[v]) continue;
        if ((st = finalize(s, v)) || s->grad[v] < 0) continue;
        in->param[in->nparams] = v;
        in->grad[in->nparams++] = s->grad[v];
        in->param_bytes += g->values[v].bytes;
        in->grad_bytes += g->values[v].bytes;
    }
    for (int k = 0; k < in->nparams && !st && !s->opt->no_update; k++) st = update(s, in->param[k], in->grad[k]);
    for (int v = 0; v < g->nvalues; v++)
        if (s->kept[v] && g->values[v].role == ROTOR_ROLE_ACTIVATION) {
            in->kept_bytes += g->values[v].bytes;
            in->kept_values++;
        }
    return st;
}

static void tr_free(tr *s) {
    for (int v = 0; s->contrib && v < s->g->nvalues; v++) free(s->contrib[v]);
    free(s->contrib), free(s->ncontrib), free(s->capcontrib), free(s->needs), free(s->grad), free(s->kept);
}

rotor_status rotor_train(const rotor_graph *g, const rotor_train_options *opt, rotor_graph *out,
                         rotor_train_info *info, rotor_error *err) {
    static const rotor_train_options defaults = {.optimizer = ROTOR_OPTIM_SGD};
    memset(info, 0, sizeof *info);
    rotor_graph_init(out, g->name);
    size_t nv = (size_t)(g->nvalues ? g->nvalues : 1);
    tr s = {.g = g, .opt = opt ? opt : &defaults, .out = out, .info = info, .err = err};
    s.needs = calloc(nv, sizeof *s.needs);
    s.kept = calloc(nv, sizeof *s.kept);
    s.contrib = calloc(nv, sizeof *s.contrib);
    s.ncontrib = calloc(nv, sizeof *s.ncontrib);
    s.capcontrib = calloc(nv, sizeof *s.capcontrib);
    s.grad = malloc(nv * sizeof *s.grad);
    info->param = malloc(nv * sizeof *info->param);
    info->grad = malloc(nv * sizeof *info->grad);
    info->target = malloc(ROTOR_MAX_TENSORS * sizeof *info->target);
    rotor_status st = ROTOR_OK;
    if (!s.needs || !s.kept || !s.contrib || !s.ncontrib || !s.capcontrib || !s.grad || !info->param || !info->grad ||
        !info->target)
        st = rotor_nomem(err);
    for (size_t v = 0; !st && v < nv; v++) s.grad[v] = -1;
    info->loss = -1;
    info->forward_ops = g->nops;
    info->optimizer = s.opt->optimizer;
    info->no_update = s.opt->no_update || s.opt->loss_only;
    if (!st) {
        mark_needs(&s);
        st = copy_forward(&s);
    }
    if (!st) st = loss(&s);
    if (!st && !s.opt->loss_only) st = backward(&s);
    if (!st && !s.opt->loss_only) st = params_and_updates(&s);
    if (!st && !s.opt->loss_only && info->nparams == 0) st = rotor_fail(err, ROTOR_ERR_INPUT, "train: no parameter reaches the loss");
    tr_free(&s);
    if (st) {
        rotor_train_info_free(info);
        rotor_graph_free(out);
        rotor_graph_init(out, g->name);
    }
    return st;
}

void rotor_train_info_free(rotor_train_info *info) {
    if (!info) return;
    free(info->param), free(info->grad), free(info->target);
    memset(info, 0, sizeof *info);
}

bool rotor_optimizer_parse(const char *name, rotor_optimizer *out) {
    if (!strcmp(name, "sgd")) *out = ROTOR_OPTIM_SGD;
    else if (!strcmp(name, "adam")) *out = ROTOR_OPTIM_ADAM;
    else return false;
    return true;
}

const char *rotor_optimizer_name(rotor_optimizer o) { return o == ROTOR_OPTIM_ADAM ? "adam" : "sgd"; }
