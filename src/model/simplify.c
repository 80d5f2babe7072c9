/* simplify.c — inference graph simplification (docs/simplify.md): a
 * BatchNormalization folds into the contraction before it, and the graph is
 * rebuilt without the operators the passes removed (constant folding is
 * simplifyconst.c's).
 *
 * A contraction Y[b,f,...] += I[...] * W[f,...] followed by y' = y S[f] + B[f]
 * computes y' = I * (W S[f]) + B[f]: the weight scaled per output channel,
 * and the BN's shift as the contraction's bias epilogue, an Add that
 * grouping fuses as it fuses the ONNX lowering's Conv bias.  With an old
 * bias b0 (the lowering's Add after the Conv), (y + b0) S + B =
 * y S + (B + S b0).  The BN may be the zoo's vendor op (x, gamma, beta) or
 * the lowering's per-channel affine expression X * S[c] + B[c]. */
#include "simplifyint.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double *rotor_simplify_data(const simp *s, int v) {
    return s->data[v] ? s->data[v] : s->g->values[v].data;
}

static int64_t ext(const rotor_expr *e, const rotor_tensor *t, int d) {
    return e->extent[t->dims[d].axis[0]];
}

/* Elements of a tensor of plain dimensions. */
static int64_t tensor_elems(const rotor_expr *e, const rotor_tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->ndims; d++) n *= ext(e, t, d);
    return n;
}

static bool plain_dims(const rotor_tensor *t) {
    for (int d = 0; d < t->ndims; d++)
        if (t->dims[d].nterms != 1 || t->dims[d].coef[0] != 1) return false;
    return true;
}

static bool has_view(const rotor_op *op, int t) {
    return op->view[t].set || op->view[t].unknown;
}

/* Value v is a constant: a weight, or one constant folding made a weight
 * (a weight computed from weights may be what a BN scales). */
static bool is_weight(const simp *s, int v) {
    return v >= 0 && (s->g->values[v].role == ROTOR_ROLE_WEIGHT || s->to_weight[v]);
}

/* The dimensions [*first, *last] of expression tensor t that are value v's
 * dimension 1, its channels, when t reads v row-major (no view): the
 * dimensions after them multiply to v's inner extent, theirs to its
 * channels.  Extent-1 dimensions at the run's edges are left out. */
static bool channel_run(const rotor_expr *e, int t, const rotor_value *v, int *first, int *last) {
    const rotor_tensor *x = &e->tensors[t];
    if (v->rank < 2 || v->shape[1] < 2 || !plain_dims(x)) return false;
    int64_t inner = 1, p = 1, c = 1;
    for (int d = 2; d < v->rank; d++) inner *= v->shape[d];
    int d = x->ndims - 1;
    while (d >= 0 && p < inner) p *= ext(e, x, d--);
    if (p != inner) return false;
    while (d >= 0 && ext(e, x, d) == 1) d--;
    *last = d;
    while (d >= 0 && c < v->shape[1]) c *= ext(e, x, d--);
    *first = d + 1;
    return c == v->shape[1] && *first <= *last;
}

/* Tensor t of op is a weight of one element per channel of op's output,
 * indexed by the output's one channel axis. */
static bool per_channel(const simp *s, const rotor_op *op, int t) {
    const rotor_graph *g = s->g;
    const rotor_expr *e = &op->expr;
    const rotor_value *y = &g->values[op->outputs[0]];
    int v = op->tensor_value[t], first, last;
    if (!is_weight(s, v) || g->values[v].elements != y->shape[1] || has_view(op, t))
        return false;
    const rotor_tensor *x = &e->tensors[t];
    return x->ndims == 1 && plain_dims(x) && channel_run(e, 0, y, &first, &last) && first == last &&
           e->tensors[0].dims[first].axis[0] == x->dims[0].axis[0];
}

/* An element-wise op whose tensor 1 reads its input as its output is laid
 * out (same dimensions, no views), with right-hand side `pattern` over
 * tensors (e.g. {1, 2, MUL, 3, ADD} as node codes, tensors as t + 100). */
static bool same_layout_ew(const rotor_op *op, const int *pattern, int n) {
    const rotor_expr *e = &op->expr;
    if (op->vendor || e->op_class != ROTOR_OP_ELEMENTWISE || e->accumulate || e->ntensors != 4 - (n == 3) ||
        e->nnodes != n || op->noutputs != 1)
        return false;
    for (int t = 0; t < e->ntensors; t++)
        if (has_view(op, t)) return false;
    for (int k = 0; k < n; k++) {
        const rotor_node *nd = &e->rhs[k];
        if (pattern[k] >= 100 ? nd->op != ROTOR_NODE_TENSOR || nd->arg != pattern[k] - 100 : nd->op != pattern[k])
            return false;
    }
    const rotor_tensor *y = &e->tensors[0], *x = &e->tensors[1];
    return y->ndims == x->ndims && !memcmp(y->dims, x->dims, sizeof y->dims[0] * (size_t)y->ndims);
}

/* A BatchNormalization op o in inference form: its input *x, scale *s and
 * shift *b; *exact when S and B are the whole map (the lowering without
 * data names scale and bias in place of the folded ones, with the
 * statistics as further inputs: a cost, not the value).  Every input but
 * x is a constant: statistics that are the model's inputs are known only
 * when it runs, and folding them away dropped two of its inputs. */
static bool bn_params(const simp *sp, int o, int *x, int *s, int *b, bool *exact) {
    const rotor_graph *g = sp->g;
    const rotor_op *op = &g->ops[o];
    if (strcmp(op->type, "BatchNormalization") || op->noutputs != 1 || op->ninputs < 3) return false;
    if (op->vendor) { /* the zoo's: x, gamma, beta */
        const rotor_value *xv = &g->values[op->inputs[0]];
        /* its mean and variance are not inputs: without data it folds as
         * the cost it is, never as values (gamma and beta alone are not
         * the map) */
        *x = op->inputs[0], *s = op->inputs[1], *b = op->inputs[2], *exact = false;
        for (int k = 1; k < 3; k++) {
            const rotor_value *p = &g->values[op->inputs[k]];
            if (!is_weight(sp, op->inputs[k]) || p->rank != 1 || xv->rank < 2 || p->elements != xv->shape[1])
                return false;
        }
        return op->ninputs == 3 && g->values[op->outputs[0]].elements == xv->elements;
    }
    static const int mul_add[5] = {101, 102, ROTOR_NODE_MUL, 103, ROTOR_NODE_ADD};
    if (!same_layout_ew(op, mul_add, 5) || !per_channel(sp, op, 2) || !per_channel(sp, op, 3)) return false;
    *x = op->tensor_value[1], *s = op->tensor_value[2], *b = op->tensor_value[3];
    for (int k = 0; k < op->ninputs; k++)
        if (op->inputs[k] != *x && !is_weight(sp, op->inputs[k])) return false;
    *exact = op->ninputs == 3;
    return *x >= 0;
}

/* Op p is a bias Add (X + B[c]) of the ONNX lowering: its bias value, or -1. */
static int bias_of(const simp *s, int p) {
    static const int add[3] = {101, 102, ROTOR_NODE_ADD};
    const rotor_op *op = &s->g->ops[p];
    if (strcmp(op->type, "Add") || !same_layout_ew(op, add, 3) || !per_channel(s, op, 2)) return -1;
    return op->tensor_value[1] >= 0 ? op->tensor_value[2] : -1;
}

/* The tensor of contraction c that is its weight, scalable per output
 * channel: a weight only c reads and no output names (its elements are
 * scaled in place), laid out row-major, whose dimensions include each
 * output channel axis once; -1 when there is none. */
static int conv_weight(const simp *s, int c) {
    const rotor_graph *g = s->g;
    const rotor_op *op = &g->ops[c];
    const rotor_expr *e = &op->expr;
    int first, last;
    if (op->vendor || e->op_class != ROTOR_OP_CONTRACTION || !e->accumulate || e->ntensors != 3 ||
        op->noutputs != 1 || op->nattrs || has_view(op, 0) ||
        !channel_run(e, 0, &g->values[op->outputs[0]], &first, &last))
        return -1;
    for (int t = 1; t < 3; t++) {
        int v = op->tensor_value[t];
        const rotor_tensor *w = &e->tensors[t];
        if (!is_weight(s, v) || g->values[v].consumers != 1 || g->values[v].is_output || has_view(op, t) ||
            !plain_dims(w) || tensor_elems(e, w) != g->values[v].elements)
            continue;
        bool ok = true;
        for (int j = first; j <= last && ok; j++) {
            int seen = 0;
            for (int d = 0; d < w->ndims; d++) seen += w->dims[d].axis[0] == e->tensors[0].dims[j].axis[0];
            ok = seen == 1;
        }
        if (ok) return t;
    }
    return -1;
}

/* W'[...] = W[...] * S[channel of the element], in double: the channel is
 * the output channel axes' indices (row-major over their run in Y). */
static rotor_status scale_weight(const simp *s, const simp_bn *f, int wt, double **out, rotor_error *err) {
    const rotor_graph *g = s->g;
    const rotor_expr *e = &g->ops[f->conv].expr;
    const rotor_tensor *w = &e->tensors[wt], *y = &e->tensors[0];
    int first, last;
    channel_run(e, 0, &g->values[f->conv_out], &first, &last);
    int64_t mult[ROTOR_MAX_DIMS] = {0}, idx[ROTOR_MAX_DIMS] = {0}, stride = 1;
    for (int j = last; j >= first; j--) {
        for (int d = 0; d < w->ndims; d++)
            if (w->dims[d].axis[0] == y->dims[j].axis[0]) mult[d] = stride;
        stride *= ext(e, y, j);
    }
    const rotor_value *wv = &g->values[f->w];
    const double *src = rotor_simplify_data(s, f->w), *sc = rotor_simplify_data(s, f->s);
    double *dst = malloc(sizeof *dst * (size_t)wv->elements);
    if (!dst) return rotor_nomem(err);
    for (int64_t k = 0; k < wv->elements; k++) {
        int64_t ch = 0;
        for (int d = 0; d < w->ndims; d++) ch += idx[d] * mult[d];
        dst[k] = src[k] * sc[ch];
        for (int d = w->ndims - 1; d >= 0 && ++idx[d] == ext(e, w, d); d--) idx[d] = 0; /* odometer */
    }
    *out = dst;
    return ROTOR_OK;
}

/* B' = B + S b0, the shift's new elements (the old bias b0 is dropped). */
static rotor_status combine_bias(const simp *s, const simp_bn *f, double **out, rotor_error *err) {
    int64_t c = s->g->values[f->b].elements;
    const double *b = rotor_simplify_data(s, f->b), *sc = rotor_simplify_data(s, f->s), *b0 = rotor_simplify_data(s, f->b0);
    double *dst = malloc(sizeof *dst * (size_t)c);
    if (!dst) return rotor_nomem(err);
    for (int64_t k = 0; k < c; k++) dst[k] = b[k] + sc[k] * b0[k];
    *out = dst;
    return ROTOR_OK;
}

/* The n elements are finite and within float32, as the run rounds them: a
 * fold of a zero variance (S infinite) or of a product past FLT_MAX gives
 * other non-finite values than the unfolded graph, so it is not made. */
static bool float_finite(const double *v, int64_t n) {
    for (int64_t k = 0; k < n; k++)
        if (!(fabs(v[k]) <= FLT_MAX)) return false;
    return true;
}

/* How many of the values have data: 0, all (n), or some. */
static int with_data(const simp *s, const int *v, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) k += v[i] >= 0 && rotor_simplify_data(s, v[i]) != NULL;
    return k;
}

/* BN op o's fold, when it folds: its contraction and the values it uses. */
static bool find_fold(const simp *s, int o, simp_bn *f, int *wt) {
    const rotor_graph *g = s->g;
    int x, sv, b;
    bool exact;
    if (s->drop_op[o] || !bn_params(s, o, &x, &sv, &b, &exact)) return false;
    const rotor_value *xv = &g->values[x];
    /* the shift becomes the bias (B' = B + S b0 in place): no output names it */
    if (xv->producer < 0 || xv->consumers != 1 || xv->is_output || g->values[b].consumers != 1 ||
        g->values[b].is_output)
        return false;
    *f = (simp_bn){.conv = xv->producer, .bias_op = -1, .bn = o, .conv_out = x, .s = sv, .b = b, .b0 = -1,
                   .out = g->ops[o].outputs[0]};
    int b0 = bias_of(s, f->conv);
    if (b0 >= 0) { /* Conv -> bias Add -> BN */
        const rotor_value *y0 = &g->values[g->ops[f->conv].tensor_value[1]];
        if (y0->producer < 0 || y0->consumers != 1 || y0->is_output || g->values[b0].consumers != 1 ||
            g->values[b0].is_output)
            return false;
        f->bias_op = f->conv, f->conv = y0->producer, f->conv_out = g->ops[f->bias_op].tensor_value[1], f->b0 = b0;
    }
    if (s->drop_op[f->conv] || s->bn_of[f->conv] >= 0 || (*wt = conv_weight(s, f->conv)) < 0) return false;
    f->w = g->ops[f->conv].tensor_value[*wt];
    /* elements for all (computed in double) or none (structural); a BN
     * whose S and B are not the whole map folds only without data */
    int vals[4] = {f->w, f->s, f->b, f->b0}, n = f->b0 >= 0 ? 4 : 3, k = with_data(s, vals, n);
    return k == 0 || (k == n && exact);
}

/* Every BatchNormalization that folds: its contraction, bias and BN are
 * recorded (the BN and old bias dropped), the new elements computed. */
static rotor_status fold_bns(simp *s, rotor_error *err) {
    const rotor_graph *g = s->g;
    for (int o = 0; o < g->nops; o++) {
        simp_bn f;
        int wt;
        if (!find_fold(s, o, &f, &wt)) continue;
        if (rotor_simplify_data(s, f.w)) {
            double *w = NULL, *b = NULL;
            rotor_status st = scale_weight(s, &f, wt, &w, err);
            if (!st && f.b0 >= 0) st = combine_bias(s, &f, &b, err);
            if (st) return free(w), free(b), st;
            if (!float_finite(w, g->values[f.w].elements) || (b && !float_finite(b, g->values[f.b].elements))) {
                free(w), free(b); /* the BN stays, as unfolded it computes */
                continue;
            }
            free(s->data[f.w]);
            s->data[f.w] = w;
            if (b) free(s->data[f.b]), s->data[f.b] = b;
        }
        s->bn_of[f.conv] = s->nbns;
        s->bns[s->nbns++] = f;
        s->drop_op[o] = true;
        if (f.bias_op >= 0) s->drop_op[f.bias_op] = true;
        s->st.bn_folded++;
        s->st.bias_added += f.bias_op < 0;
    }
    return ROTOR_OK;
}

/* Which values the simplified graph keeps: the ones its operators write or
 * read, model outputs, and the inputs and weights nobody read before
 * either; a weight or intermediate only the removed operators read goes. */
static rotor_status keep_values(simp *s, rotor_graph *out, rotor_error *err) {
    const rotor_graph *g = s->g;
    int *reads = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *reads);
    if (!reads) return rotor_nomem(err);
    for (int o = 0; o < g->nops; o++)
        for (int i = 0; i < g->ops[o].ninputs && !s->drop_op[o]; i++) reads[g->ops[o].inputs[i]]++;
    for (int k = 0; k < s->nbns; k++) reads[s->bns[k].conv_out]++, reads[s->bns[k].b]++, reads[s->bns[k].out]++;
    rotor_status st = ROTOR_OK;
    for (int v = 0; v < g->nvalues && !st; v++) {
        const rotor_value *x = &g->values[v];
        bool keep = x->is_output || reads[v] || (x->producer >= 0 ? !s->drop_op[x->producer] : x->consumers == 0);
        if (!keep) continue;
        rotor_role role = s->to_weight[v] ? ROTOR_ROLE_WEIGHT : x->role;
        st = rotor_graph_add_value(out, x->name, x->dtype, x->rank, x->shape, role, &s->newv[v], err);
        if (!st && rotor_simplify_data(s, v)) st = rotor_graph_set_data(out, s->newv[v], rotor_simplify_data(s, v), err);
    }
    free(reads);
    for (int v = 0; v < g->nvalues && !st; v++)
        if (g->values[v].is_output && !g->values[v].alias_only) out->values[s->newv[v]].is_output = true;
    for (int i = 0; i < g->naliases && !st; i++)
        st = rotor_graph_add_output_alias(out, g->aliases[i].name, s->newv[g->aliases[i].value], err);
    return st;
}

/* Op o copied into out as it is (its bound expression, views, FLOPs,
 * kernel, attributes), its values renumbered. */
static rotor_status copy_op(simp *s, int o, rotor_graph *out, rotor_error *err) {
    const rotor_op *op = &s->g->ops[o];
    /* as many values as the op has (a Concat of 70 inputs was refused) */
    int *ins = malloc(sizeof *ins * (size_t)(op->ninputs + op->noutputs + 1)), *outs = ins ? ins + op->ninputs : NULL;
    if (!ins) return rotor_nomem(err);
    for (int i = 0; i < op->ninputs; i++) ins[i] = s->newv[op->inputs[i]];
    for (int i = 0; i < op->noutputs; i++) outs[i] = s->newv[op->outputs[i]];
    rotor_op_desc d = {.name = op->name, .type = op->type, .inputs = ins, .ninputs = op->ninputs, .outputs = outs,
                       .noutputs = op->noutputs, .view = op->view};
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = op->tensor_value[t] < 0 ? -1 : s->newv[op->tensor_value[t]];
    int idx;
    rotor_status st = rotor_graph_add_bound_op(out, &d, op->vendor ? NULL : &op->expr, &idx, err);
    free(ins); /* copied by the graph */
    if (st) return st;
    rotor_op *n = &out->ops[idx];
    n->flops = op->flops;
    n->kernel = op->kernel;
    memcpy(n->fused, op->fused, sizeof n->fused);
    n->nfused = op->nfused;
    for (int a = 0; a < op->nattrs && !st; a++) {
        const rotor_attr *at = &op->attrs[a];
        st = rotor_graph_add_attr(out, idx, at->name, at->ints, at->nints, at->floats, at->nfloats, at->str, err);
    }
    return st;
}

/* An operator the simplified graph keeps is called name (the ones folded
 * away leave their names free: a Conv's own bias Add, dropped, for one). */
static bool op_named(const simp *s, const char *name) {
    for (int o = 0; o < s->g->nops; o++)
        if (!s->drop_op[o] && !strcmp(s->g->ops[o].name, name)) return true;
    return false;
}

/* The folded BN's bias epilogue: Y[...] = X[...] + B[channel axes] over
 * the contraction's output dimensions, named "<contraction>.bias" as the
 * ONNX lowering names a Conv's bias. */
static rotor_status add_bias(simp *s, const simp_bn *f, rotor_graph *out, rotor_error *err) {
    const rotor_expr *e = &s->g->ops[f->conv].expr;
    const rotor_tensor *y = &e->tensors[0];
    int first, last;
    channel_run(e, 0, &s->g->values[f->conv_out], &first, &last);
    char idx[ROTOR_EXPR_TEXT_MAX / 4] = "", ch[ROTOR_EXPR_TEXT_MAX / 4] = "", text[ROTOR_EXPR_TEXT_MAX];
    char dims[ROTOR_EXPR_TEXT_MAX], name[256];
    size_t ni = 0, nc = 0, nd = 0;
    for (int d = 0; d < y->ndims; d++) {
        const char *a = e->axis_name[y->dims[d].axis[0]];
        ni += (size_t)snprintf(idx + ni, sizeof idx - ni, "%s%s", d ? "," : "", a);
        nd += (size_t)snprintf(dims + nd, sizeof dims - nd, "%s%s=%lld", d ? "," : "", a, (long long)ext(e, y, d));
        if (d >= first && d <= last) nc += (size_t)snprintf(ch + nc, sizeof ch - nc, "%s%s", d > first ? "," : "", a);
    }
    snprintf(text, sizeof text, "Y[%s] = X[%s] + B[%s]", idx, idx, ch);
    snprintf(name, sizeof name, "%s.bias", s->g->ops[f->conv].name);
    /* a name no operator of the graph has (a model's own op may be called
     * so): "<contraction>.bias#2", #3, ... */
    for (int k = 2; op_named(s, name); k++)
        snprintf(name, sizeof name, "%s.bias#%d", s->g->ops[f->conv].name, k);
    int ins[2] = {s->newv[f->conv_out], s->newv[f->b]}, o = s->newv[f->out];
    rotor_op_desc d = {.name = name, .type = "Add", .expr = text, .dims = dims, .inputs = ins, .ninputs = 2,
                       .outputs = &o, .noutputs = 1};
    d.tensor_value[0] = o, d.tensor_value[1] = ins[0], d.tensor_value[2] = ins[1];
    for (int t = 3; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = -1;
    return rotor_graph_add_op(out, &d, NULL, err);
}

static void simp_free(simp *s) {
    for (int v = 0; s->data && v < s->g->nvalues; v++) free(s->data[v]);
    free(s->drop_op), free(s->to_weight), free(s->data), free(s->bn_of), free(s->bns), free(s->newv);
}

rotor_status rotor_simplify(const rotor_graph *g, rotor_graph *out, rotor_simplify_stats *stats, rotor_error *err) {
    rotor_graph_init(out, g->name);
    size_t nv = (size_t)(g->nvalues ? g->nvalues : 1), no = (size_t)(g->nops ? g->nops : 1);
    simp s = {.g = g, .st = {.ops_before = g->nops}};
    s.drop_op = calloc(no, sizeof *s.drop_op);
    s.to_weight = calloc(nv, sizeof *s.to_weight);
    s.data = calloc(nv, sizeof *s.data);
    s.bn_of = malloc(sizeof *s.bn_of * no);
    s.bns = malloc(sizeof *s.bns * no);
    s.newv = malloc(sizeof *s.newv * nv);
    rotor_status st = ROTOR_OK;
    if (!s.drop_op || !s.to_weight || !s.data || !s.bn_of || !s.bns || !s.newv) st = rotor_nomem(err);
    for (size_t o = 0; !st && o < no; o++) s.bn_of[o] = -1;
    for (size_t v = 0; !st && v < nv; v++) s.newv[v] = -1;
    /* constants first: a weight computed from weights may be what a BN scales */
    if (!st) st = rotor_simplify_constants(&s, err);
    if (!st) st = fold_bns(&s, err);
    if (!st) st = keep_values(&s, out, err);
    for (int o = 0; !st && o < g->nops; o++) {
        if (s.drop_op[o]) continue;
        st = copy_op(&s, o, out, err);
        if (!st && s.bn_of[o] >= 0) st = add_bias(&s, &s.bns[s.bn_of[o]], out, err);
    }
    s.st.ops_after = out->nops;
    if (stats) *stats = s.st;
    simp_free(&s);
    return st;
}
