/* gtrun.c — GraphTurbo's instances on real data (docs/run.md, "GraphTurbo's
 * instances on real data"; include/rotor/run/gtrun.h).
 *
 * Each instance of a split sub-graph carries its block of the sub-graph's
 * output back through its operators (rotor_gt_prop_run, the ranges the
 * split, the footprint and the order were computed with) and evaluates
 * every operator over that range only, into buffers of its own.  Nothing an
 * instance computes inside its sub-graph is seen by another: the halo rows
 * are recomputed, so they must be right for the output to be.
 *
 * Decisions where the paper is silent or the run stage has no tool:
 *  - The direct evaluator of the run stage (rotor_emu_reference) computes a
 *    whole expression from whole float arrays; it takes no sub-range and no
 *    element view.  The range loop is written here once: a point of the
 *    expression's iteration space, inside the output range, reads each
 *    input through its element view (a coordinate outside the value reads
 *    0, the padding) from the instance's piece or the full tensor.  Inputs
 *    are rounded to float32 as the direct run rounds them (run.c,
 *    run_expression) and each output element's terms are added in the
 *    reference's order (emu.c, pick_inner: the innermost axis last, the
 *    others in axis order), so a right range gives the same bits.
 *  - A vendor op's reference kernel (kernels.c) computes whole tensors from
 *    the graph's shapes; a split sub-graph holding one runs whole (one
 *    instance, full tensors), and so does one whose intermediate is read
 *    outside it.  The order then becomes BFS (every instance of a
 *    sub-graph before the next sub-graph's, §3.3's other order): a
 *    sub-graph run whole has no blocks for a DFS order to interleave.
 *  - The order is checked as it runs: an instance may read only elements
 *    of another sub-graph's output that an earlier instance wrote. */
#include "rotor/run/gtrun.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/gtint.h"
#include "rotor/base/divisors.h"
#include "rotor/op/emu.h"
#include "rotor/run/run.h"
#include "runint.h"

/* The box [lo, lo + n) of a value's coordinates, its elements row-major. */
typedef struct piece {
    double *d;
    int rank;
    int64_t lo[GT_R], n[GT_R];
} piece;

typedef struct gtctx {
    const rotor_graph *g;
    const rotor_gt_schedule *s;
    bool no_halo, narrow_pieces, no_rows;
    rotor_gtrun_result *res;
    uint8_t **written; /* per value an operator produces: each element written yet */
    piece *local;      /* per value: the running instance's piece (d NULL: none) */
    char where[96];    /* "instance 2 of sub-graph 0", for errors */
} gtctx;

static piece whole_piece(const rotor_value *x, double *d) {
    piece p = {.d = d, .rank = x->rank};
    for (int a = 0; a < x->rank; a++) p.lo[a] = 0, p.n[a] = x->shape[a];
    return p;
}

/* Row-major offset of coordinates c in piece p, or -1 outside it. */
static int64_t piece_at(const piece *p, const int64_t *c) {
    int64_t k = 0;
    for (int a = 0; a < p->rank; a++) {
        int64_t i = c[a] - p->lo[a];
        if (i < 0 || i >= p->n[a]) return -1;
        k = k * p->n[a] + i;
    }
    return k;
}

/* Row-major offset of coordinates c (inside it) in the whole value x. */
static int64_t value_index(const rotor_value *x, const int64_t *c) {
    piece whole = whole_piece(x, NULL);
    return piece_at(&whole, c);
}

/* How far a row-major offset moves per step when the coordinates move by
 * dl[0..rank) in a box of extents n. */
static int64_t row_step(const int64_t *dl, int rank, const int64_t *n) {
    int64_t step = 0, stride = 1;
    for (int j = rank - 1; j >= 0; j--) step += dl[j] * stride, stride *= n[j];
    return step;
}

/* The first element of value v not written yet, or -1 (all written, or a
 * value without written flags: a model input or a weight). */
static int64_t first_unwritten(const gtctx *c, int v) {
    for (int64_t k = 0; c->written[v] && k < c->g->values[v].elements; k++)
        if (!c->written[v][k]) return k;
    return -1;
}

static void coords_text(const int64_t *c, int r, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "(");
    for (int a = 0; a < r && n > 0 && (size_t)n < cap; a++) n += snprintf(buf + n, cap - (size_t)n, a ? ",%lld" : "%lld", (long long)c[a]);
    if (n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, ")");
}

/* How one expression tensor reaches its value's coordinates. */
typedef struct tmap {
    const rotor_tensor *x;
    const rotor_view *w;
    const rotor_value *val;
    int64_t ext[ROTOR_MAX_DIMS];
    bool plain; /* no view and the tensor's dimensions are the value's */
    bool exact; /* an integer or boolean value: read as it is, not rounded to float32 */
    /* input A (qt 1) or B (2) of a quantized contraction: read as it is,
     * less its zero point at that element (runquant.c's, one by one) */
    const run_qop *q;
    int qt;
    /* A reshape that only merges neighbouring dimensions (a grouped
     * convolution's [b, g, c, h, w] of a [b, g*c, h, w] value): tensor
     * dimension d is value dimension grp[d]'s digit of weight mul[d], so
     * the value's coordinates are affine in the tensor's (tmap_merges). */
    bool merged;
    int8_t grp[ROTOR_MAX_DIMS];
    int64_t mul[ROTOR_MAX_DIMS];
} tmap;

/* The value coordinates of tensor m at the point idx[] of the iteration
 * space; false when one lies outside the value (padding). */
static bool tensor_coords(const tmap *m, const int64_t *idx, int64_t *c);

/* Whether tensor m reaches its value by an affine map (no view, a view
 * that lays each dimension on one value dimension, or a reshape that only
 * merges neighbouring dimensions): then a step along an axis moves every
 * value coordinate by a constant (eval_op's fast rows).  Any other
 * reshape (the same element row-major in another shape) is not. */
static bool tmap_affine(const tmap *m) { return m->plain || m->w->set || m->merged; }

/* Whether reshape m only merges neighbouring tensor dimensions into value
 * dimensions, each value extent the product of its tensor extents (their
 * grp and mul), from the last dimension back; a value dimension of extent
 * 1 takes none, and tensor dimensions of extent 1 left before the first
 * go to dimension 0 with weight 0.  Then c[j] = sum of mul[d] di[d] over
 * its tensor dimensions is the row-major decomposition tensor_coords_raw
 * makes whenever every di[d] lies in [0, ext[d]), and it always does: a
 * dimension's coefficients are at least 1 (the parser's) and its extent
 * is 1 + sum coef (len - 1) (rotor_dim_extent). */
static bool tmap_merges(tmap *m) {
    int d = m->x->ndims - 1;
    for (int j = m->val->rank - 1; j >= 0; j--) {
        int64_t prod = 1;
        while (d >= 0 && prod < m->val->shape[j]) {
            m->grp[d] = (int8_t)j, m->mul[d] = prod;
            prod *= m->ext[d--];
        }
        if (prod != m->val->shape[j]) return false;
    }
    for (; d >= 0; d--) {
        if (m->ext[d] != 1) return false;
        m->grp[d] = 0, m->mul[d] = 0;
    }
    return true;
}

/* The tensor coordinates of m at idx (before any view or reshape). */
static void tensor_di(const tmap *m, const int64_t *idx, int64_t *di) {
    const rotor_tensor *x = m->x;
    for (int d = 0; d < x->ndims; d++) {
        di[d] = 0;
        for (int k = 0; k < x->dims[d].nterms; k++) di[d] += x->dims[d].coef[k] * idx[x->dims[d].axis[k]];
    }
}

/* How far tensor coordinate d of m moves when axis a grows by one. */
static int64_t dim_delta(const tmap *m, int d, int a) {
    int64_t c = 0;
    for (int k = 0; k < m->x->dims[d].nterms; k++)
        if (m->x->dims[d].axis[k] == a) c += m->x->dims[d].coef[k];
    return c;
}

/* How far each value coordinate of the affine tensor m moves when axis a
 * grows by one. */
static void tmap_delta(const tmap *m, int a, int64_t *dl) {
    for (int j = 0; j < m->val->rank; j++) dl[j] = 0;
    for (int d = 0; d < m->x->ndims; d++) {
        int64_t c = dim_delta(m, d, a);
        if (m->plain) dl[d] += c;
        else if (m->w->set) dl[m->w->dim[d]] += m->w->step[d] * c;
        else dl[m->grp[d]] += m->mul[d] * c;
    }
}

/* tensor_coords without the bounds: the coordinates, inside or not. */
static void tensor_coords_raw(const tmap *m, const int64_t *idx, int64_t *c) {
    const rotor_tensor *x = m->x;
    int64_t di[ROTOR_MAX_DIMS];
    tensor_di(m, idx, di);
    const rotor_value *v = m->val;
    if (m->plain) {
        for (int a = 0; a < v->rank; a++) c[a] = di[a];
    } else if (m->w->set) {
        for (int j = 0; j < v->rank; j++) c[j] = m->w->offset[j];
        for (int d = 0; d < x->ndims; d++) c[m->w->dim[d]] += m->w->step[d] * di[d];
    } else { /* a reshape: the same element, row-major, in the value's shape */
        int64_t flat = 0;
        for (int d = 0; d < x->ndims; d++) flat = flat * m->ext[d] + di[d];
        for (int a = v->rank - 1; a >= 0; a--) c[a] = flat % v->shape[a], flat /= v->shape[a];
    }
}

static bool tensor_coords(const tmap *m, const int64_t *idx, int64_t *c) {
    tensor_coords_raw(m, idx, c);
    for (int a = 0; a < m->val->rank; a++)
        if (c[a] < 0 || c[a] >= m->val->shape[a]) return false;
    return true;
}

static rotor_status tmap_make(const gtctx *c, int o, int t, const run_qop *q, tmap *m, rotor_error *err) {
    const rotor_op *op = &c->g->ops[o];
    int v = op->tensor_value[t];
    if (v < 0) return run_op_fail(c->g, o, err, "tensor %s names no graph value", op->expr.tensors[t].name);
    *m = (tmap){.x = &op->expr.tensors[t], .w = &op->view[t], .val = &c->g->values[v]};
    int64_t n = rotor_emu_tensor_elems(&op->expr, t, m->ext);
    if (m->w->unknown)
        return run_op_fail(c->g, o, err, "tensor %s reads '%s' in an order the graph does not record", m->x->name,
                           m->val->name);
    if (!m->w->set && n != m->val->elements)
        return run_op_fail(c->g, o, err, "tensor %s reads %lld of the %lld elements of '%s' and the graph does not "
                           "record which", m->x->name, (long long)n, (long long)m->val->elements, m->val->name);
    /* a copy (Cast, Unsqueeze, ...) over integers or booleans is exact in
     * double; so are a quantized contraction's sums of zero-point-shifted
     * integers (run_qop_exact_f64), its output requantized when the box is
     * done (eval_op) */
    if (m->val->dtype != ROTOR_DTYPE_F32 && !q && !run_copy_takes(c->g, o))
        return run_op_fail(c->g, o, err, "'%s' is %s; GraphTurbo's instances compute float32 expressions, "
                           "quantized contractions and copies of integers", m->val->name, rotor_dtype_name(m->val->dtype));
    m->exact = m->val->dtype != ROTOR_DTYPE_F32 && !(q && t == 0);
    if (q && (t == 1 || t == 2)) m->q = q, m->qt = t;
    m->plain = !m->w->set && m->x->ndims == m->val->rank;
    for (int d = 0; m->plain && d < m->x->ndims; d++) m->plain = m->ext[d] == m->val->shape[d];
    m->merged = !m->plain && !m->w->set && tmap_merges(m);
    return ROTOR_OK;
}

/* Element x of tensor m's value as an expression reads it into *v:
 * rounded to float32 as the direct run rounds it, or an integer copy's as
 * it is; false for an integer beyond 2^24, which the direct run refuses
 * (runquant.c: float32 would round it). */
static inline bool point_value(const tmap *m, double x, double *v) {
    *v = m->exact ? x : (double)(float)x;
    return !m->exact || fabs(x) <= RUN_EXACT_F32;
}

/* Input t's element at idx (0 in the padding), or an error when the
 * instance lacks it: outside its piece, or not written yet, or an integer
 * float32 cannot hold. */
static rotor_status read_input(const gtctx *c, int o, const tmap *m, const piece *src, const uint8_t *wr,
                               const int64_t *idx, double *x, rotor_error *err) {
    int64_t co[GT_R];
    *x = 0;
    if (!tensor_coords(m, idx, co)) return ROTOR_OK;
    int64_t k = piece_at(src, co);
    char at[96];
    if (k < 0) {
        coords_text(co, m->val->rank, at, sizeof at);
        return run_op_fail(c->g, o, err, "%s reads element %s of '%s', outside the range it computed of it (the "
                           "range propagation missed it)", c->where, at, m->val->name);
    }
    if (wr && !wr[k]) { /* wr goes with a whole tensor: k is the element's index */
        coords_text(co, m->val->rank, at, sizeof at);
        return run_op_fail(c->g, o, err, "%s reads element %s of '%s', which no instance before it in the order "
                           "wrote", c->where, at, m->val->name);
    }
    if (m->q) { /* a' = a - a_zero_point, exact in double */
        if (src->d[k] != floor(src->d[k])) {
            coords_text(co, m->val->rank, at, sizeof at);
            return run_op_fail(c->g, o, err, "%s reads element %s of '%s' (%s), %.17g, not an integer", c->where, at,
                               m->val->name, rotor_dtype_name(m->val->dtype), src->d[k]);
        }
        *x = src->d[k] - run_qop_zero(m->q, m->qt, value_index(m->val, co));
        return ROTOR_OK;
    }
    if (!point_value(m, src->d[k], x)) {
        coords_text(co, m->val->rank, at, sizeof at);
        return run_op_fail(c->g, o, err, "%s reads element %s of '%s', %.17g; " RUN_EXACT_F32_WHY, c->where, at,
                           m->val->name, src->d[k]);
    }
    return ROTOR_OK;
}

/* The axis the direct reference runs innermost (emu.c, pick_inner). */
static int inner_axis(const rotor_expr *e) {
    const rotor_tensor *y = &e->tensors[e->op_class == ROTOR_OP_CONTRACTION ? 0 : 1];
    return y->dims[y->ndims - 1].axis[0];
}

/* What eval_op's points share: the operator's tensors, where they are
 * read and written, and for the fast rows each tensor's move per step of
 * the inner axis in, in value coordinates (dl) and in its piece (step). */
typedef struct gtrow {
    const rotor_expr *e;
    const tmap *m;
    const piece *const *src;
    uint8_t *const *wr;
    const piece *dst;
    const int64_t *blo, *bhi;
    int in;
    const run_qop *q; /* a quantized contraction (NULL: none) */
    int64_t dl[ROTOR_MAX_TENSORS][GT_R], step[ROTOR_MAX_TENSORS];
} gtrow;

/* Narrows [*i0, *i1) to the steps i where lo <= c0 + i d < hi. */
static void span_keep(int64_t c0, int64_t d, int64_t lo, int64_t hi, int64_t *i0, int64_t *i1) {
    int64_t a, b; /* the steps [a, b) */
    if (d == 0) {
        if (c0 < lo || c0 >= hi) *i1 = *i0;
        return;
    }
    if (d > 0) a = rotor_floor_div(lo - c0 + d - 1, d), b = rotor_floor_div(hi - c0 + d - 1, d);
    else a = rotor_floor_div(c0 - hi, -d) + 1, b = rotor_floor_div(c0 - lo, -d) + 1;
    if (a > *i0) *i0 = a;
    if (b < *i1) *i1 = b;
    if (*i1 < *i0) *i1 = *i0;
}

/* Narrows [*i0, *i1) to the steps of the row from idx (idx[in] its first
 * point) where tensor t lies inside its value and [lo, hi) of each
 * dimension. */
static void tensor_span(const gtrow *rw, int t, const int64_t *idx, const int64_t *lo, const int64_t *hi, int64_t *i0,
                        int64_t *i1) {
    const tmap *m = &rw->m[t];
    int64_t c0[GT_R];
    tensor_coords_raw(m, idx, c0);
    for (int j = 0; j < m->val->rank; j++)
        span_keep(c0[j], rw->dl[t][j], lo[j] > 0 ? lo[j] : 0, hi[j] < m->val->shape[j] ? hi[j] : m->val->shape[j], i0,
                  i1);
}

/* [lo, hi) of each dimension of piece p. */
static void piece_bounds(const piece *p, int64_t *lo, int64_t *hi) {
    for (int j = 0; j < p->rank; j++) lo[j] = p->lo[j], hi[j] = p->lo[j] + p->n[j];
}

/* Of the row from idx (idx[in] its first point, len points): the steps
 * [*o0, *o1) whose output lies in the box (every other point of the row
 * writes nothing), and within them [*i0, *i1), which run fast: each
 * input inside its value and its piece too. */
static void row_span(const gtrow *rw, const int64_t *idx, int64_t len, int64_t *o0, int64_t *o1, int64_t *i0,
                     int64_t *i1) {
    *o0 = 0, *o1 = len;
    tensor_span(rw, 0, idx, rw->blo, rw->bhi, o0, o1);
    *i0 = *o0, *i1 = *o1;
    for (int t = 0; t < rw->e->ntensors && *i1 > *i0; t++) {
        int64_t lo[GT_R], hi[GT_R];
        piece_bounds(t ? rw->src[t] : rw->dst, lo, hi);
        tensor_span(rw, t, idx, lo, hi, i0, i1);
    }
}

/* The point idx, one by one: skipped when its output lies outside the
 * box; an input outside its value reads 0 (padding). */
static rotor_status eval_point(gtctx *c, int o, const gtrow *rw, const int64_t *idx, double *points,
                               rotor_error *err) {
    const rotor_expr *e = rw->e;
    const tmap *y = &rw->m[0];
    int64_t co[GT_R];
    bool inside = tensor_coords(y, idx, co);
    for (int a = 0; a < y->val->rank && inside; a++) inside = co[a] >= rw->blo[a] && co[a] < rw->bhi[a];
    if (!inside) return ROTOR_OK;
    double v[ROTOR_MAX_TENSORS] = {0};
    rotor_status st = ROTOR_OK;
    for (int t = 1; t < e->ntensors && !st; t++) st = read_input(c, o, &rw->m[t], rw->src[t], rw->wr[t], idx, &v[t], err);
    if (st) return st;
    double r = e->op_class == ROTOR_OP_CONTRACTION ? v[1] * v[2] : rotor_expr_eval(e, v);
    double *yy = &rw->dst->d[piece_at(rw->dst, co)];
    *yy = e->accumulate ? *yy + r : r;
    double was = *yy;
    if (y->exact && !run_cast_one(y->val->dtype, yy)) {
        char at[96];
        coords_text(co, y->val->rank, at, sizeof at);
        return run_op_fail(c->g, o, err, "%s: element %s is %.17g, outside %s (ONNX does not define the cast)",
                           c->where, at, was, rotor_dtype_name(y->val->dtype));
    }
    (*points)++;
    return ROTOR_OK;
}

/* A fast row met a point it cannot take (an element not written yet, not
 * an integer, beyond 2^24, or an output its type cannot hold): eval_point
 * takes it and says why, or, should it find nothing wrong, the two
 * disagree. */
static rotor_status row_fallback(gtctx *c, int o, const gtrow *rw, const int64_t *idx, rotor_error *err) {
    double points = 0;
    rotor_status st = eval_point(c, o, rw, idx, &points, err);
    if (st) return st;
    return run_op_fail(c->g, o, err, "%s: the fast row and the point disagree", c->where);
}

/* A quantized contraction's n points of a row from idx (at[t]: each
 * tensor's element in its piece at the first): A's and B's elements less
 * their zero points, each found by its index in the whole value, which
 * moves by a constant along the row too; summed exactly in double.  An
 * element no instance wrote yet, or not an integer, goes to eval_point,
 * which says so. */
static rotor_status eval_run_quant(gtctx *c, int o, const gtrow *rw, int64_t *idx, int64_t n, int64_t *at,
                                   rotor_error *err) {
    int64_t vk[3], vs[3];
    for (int t = 1; t <= 2; t++) {
        const tmap *m = &rw->m[t];
        int64_t co[GT_R];
        tensor_coords_raw(m, idx, co);
        vk[t] = value_index(m->val, co);
        vs[t] = row_step(rw->dl[t], m->val->rank, m->val->shape);
    }
    const double *a = rw->src[1]->d, *b = rw->src[2]->d;
    double *y = rw->dst->d, z1 = 0, z2 = 0;
    int64_t first = idx[rw->in];
    for (int64_t i = 0; i < n; i++) {
        double x1 = a[at[1]], x2 = b[at[2]];
        if ((rw->wr[1] && !rw->wr[1][at[1]]) || (rw->wr[2] && !rw->wr[2][at[2]]) || x1 != floor(x1) ||
            x2 != floor(x2)) {
            idx[rw->in] = first + i;
            return row_fallback(c, o, rw, idx, err);
        }
        if (i == 0 || vs[1]) z1 = run_qop_zero(rw->q, 1, vk[1]); /* the same along the row when A's stays */
        if (i == 0 || vs[2]) z2 = run_qop_zero(rw->q, 2, vk[2]);
        y[at[0]] += (x1 - z1) * (x2 - z2);
        for (int t = 0; t < 3; t++) at[t] += rw->step[t];
        vk[1] += vs[1], vk[2] += vs[2];
    }
    return ROTOR_OK;
}

/* n points of a row from idx (idx[in] the first), all inside (row_span):
 * each tensor's element at a constant stride.  An input element no
 * instance wrote yet or beyond 2^24, or an output its integer type cannot
 * hold, goes to eval_point, which says so. */
static rotor_status eval_run(gtctx *c, int o, const gtrow *rw, int64_t *idx, int64_t n, rotor_error *err) {
    const rotor_expr *e = rw->e;
    int nt = e->ntensors;
    int64_t at[ROTOR_MAX_TENSORS];
    for (int t = 0; t < nt; t++) {
        int64_t co[GT_R];
        tensor_coords_raw(&rw->m[t], idx, co);
        at[t] = piece_at(t ? rw->src[t] : rw->dst, co);
    }
    double *y = rw->dst->d;
    if (rw->q) return eval_run_quant(c, o, rw, idx, n, at, err);
    bool checks = rw->m[0].exact;
    for (int t = 1; t < nt; t++) checks = checks || rw->wr[t] || rw->m[t].exact;
    if (e->op_class == ROTOR_OP_CONTRACTION && e->accumulate && !checks) {
        /* a contraction's product, its inputs rounded to float32 */
        const double *a = rw->src[1]->d, *b = rw->src[2]->d;
        int64_t sy = rw->step[0], sa = rw->step[1], sb = rw->step[2];
        int64_t ky = at[0], ka = at[1], kb = at[2];
        for (int64_t i = 0; i < n; i++, ky += sy, ka += sa, kb += sb) {
            /* two statements, as the reference's: a compiler that contracts
             * within an expression (clang's default) would fuse one into an
             * FMA and round once where the reference rounds twice */
            double r = (double)(float)a[ka] * (double)(float)b[kb];
            y[ky] += r;
        }
        return ROTOR_OK;
    }
    double v[ROTOR_MAX_TENSORS] = {0};
    int64_t first = idx[rw->in];
    for (int64_t i = 0; i < n; i++) {
        bool late = false;
        for (int t = 1; t < nt; t++) {
            if (rw->wr[t] && !rw->wr[t][at[t]]) late = true;
            if (!point_value(&rw->m[t], rw->src[t]->d[at[t]], &v[t])) late = true;
        }
        double r = e->op_class == ROTOR_OP_CONTRACTION ? v[1] * v[2] : rotor_expr_eval(e, v);
        double *yy = &y[at[0]], was = *yy;
        *yy = e->accumulate ? *yy + r : r;
        if (late || (rw->m[0].exact && !run_cast_one(rw->m[0].val->dtype, yy))) {
            *yy = was;
            idx[rw->in] = first + i;
            return row_fallback(c, o, rw, idx, err);
        }
        for (int t = 0; t < nt; t++) at[t] += rw->step[t];
    }
    return ROTOR_OK;
}

/* A quantized contraction's scales, zero points and bias are read whole
 * (runquant.c): one the graph computes must be written whole before, as a
 * vendor kernel's input must (the order is checked as it runs). */
static rotor_status quant_params_ready(const gtctx *c, int o, rotor_error *err) {
    const rotor_op *op = &c->g->ops[o];
    for (int i = 0; i < op->ninputs; i++) {
        int v = op->inputs[i];
        bool tensor = false;
        for (int t = 1; t < op->expr.ntensors; t++) tensor = tensor || op->tensor_value[t] == v;
        if (tensor || c->g->values[v].producer < 0) continue;
        if (!c->res->values[v])
            return run_op_fail(c->g, o, err, "%s reads '%s', a parameter of its quantization, which its sub-graph "
                               "computes in pieces; the parameters are read whole", c->where, c->g->values[v].name);
        int64_t k = first_unwritten(c, v);
        if (k >= 0)
            return run_op_fail(c->g, o, err, "%s reads element %lld of '%s', a parameter of its quantization, which "
                               "no instance before it in the order wrote", c->where, (long long)k,
                               c->g->values[v].name);
    }
    return ROTOR_OK;
}

/* A quantized contraction's box [blo, bhi) of its output, every sum in it
 * done, requantized (or wrapped to int32) element by element. */
static rotor_status requantize_box(const run_qop *q, const rotor_value *y, const piece *dst,
                                   const int64_t *blo, const int64_t *bhi, rotor_error *err) {
    int64_t co[GT_R];
    for (int a = 0; a < y->rank; a++) {
        if (blo[a] >= bhi[a]) return ROTOR_OK;
        co[a] = blo[a];
    }
    for (;;) {
        rotor_status st = run_qop_out(q, value_index(y, co), &dst->d[piece_at(dst, co)], err);
        if (st) return st;
        int a = y->rank - 1;
        for (; a >= 0; a--) {
            if (++co[a] < bhi[a]) break;
            co[a] = blo[a];
        }
        if (a < 0) return ROTOR_OK;
    }
}

/* Evaluates expression op o at every point whose output lies in box
 * [blo, bhi) of its value, into dst (a piece that holds the box).  src[t]
 * (t >= 1) is where input t is read, wr[t] its written flags (NULL: all). */
static rotor_status eval_op(gtctx *c, int o, const piece *dst, const int64_t *blo, const int64_t *bhi,
                            const piece *const *src, uint8_t *const *wr, rotor_error *err) {
    const rotor_expr *e = &c->g->ops[o].expr;
    tmap m[ROTOR_MAX_TENSORS];
    rotor_status st = ROTOR_OK;
    /* a quantized contraction: its parameters read once, its sums exact */
    run_qop qo, *q = NULL;
    if (rotor_op_attr(&c->g->ops[o], "rotor.quant.a")) {
        q = &qo;
        if (!(st = quant_params_ready(c, o, err)) && !(st = run_qop_begin(c->g, o, c->res->values, q, err)))
            st = run_qop_exact_f64(q, err);
    }
    for (int t = 0; t < e->ntensors && !st; t++) st = tmap_make(c, o, t, q, &m[t], err);
    if (!st && e->op_class != ROTOR_OP_CONTRACTION && (st = rotor_expr_check_eval(e, err))) run_op_prefix(c->g, o, err);
    if (st) return st;
    /* each axis's range: whole, narrowed where an output dimension is the
     * axis alone (the point filter below keeps any other case right) */
    int64_t alo[ROTOR_MAX_AXES], ahi[ROTOR_MAX_AXES], idx[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) alo[a] = 0, ahi[a] = e->extent[a];
    const tmap *y = &m[0];
    for (int d = 0; d < y->x->ndims && (y->plain || y->w->set); d++) {
        const rotor_dim *dim = &y->x->dims[d];
        int j = y->plain ? d : y->w->dim[d];
        int64_t off = y->plain ? 0 : y->w->offset[j], step = y->plain ? 1 : y->w->step[d];
        int share = 0; /* tensor dimensions the view lays on value dimension j */
        for (int k = 0; k < y->x->ndims; k++) share += y->plain ? k == j : y->w->dim[k] == j;
        if (dim->nterms != 1 || dim->coef[0] != 1 || step != 1 || share != 1) continue;
        int a = dim->axis[0];
        if (blo[j] - off > alo[a]) alo[a] = blo[j] - off;
        if (bhi[j] - off < ahi[a]) ahi[a] = bhi[j] - off;
    }
    int order[ROTOR_MAX_AXES], no = 0, in = inner_axis(e);
    for (int a = 0; a < e->naxes; a++)
        if (a != in) order[no++] = a;
    order[no++] = in;
    for (int a = 0; a < e->naxes; a++) {
        if (alo[a] >= ahi[a]) /* nothing of the box, or sums of no term */
            return q ? requantize_box(q, m[0].val, dst, blo, bhi, err) : ROTOR_OK;
        idx[a] = alo[a];
    }
    /* The fast rows (every tensor affine, tmap_affine): along the inner
     * axis each value coordinate moves by a constant, so on the points of
     * a row where every coordinate stays inside its value, the output's
     * inside the box and each input's inside its piece, each tensor's
     * element is a constant stride further at every point.  Those run in
     * eval_run; the rest of the row (padding, the box's edge, or a read
     * the range propagation missed, which eval_point reports) point by
     * point.  The same points in the same order: the same bits. */
    gtrow rw = {.e = e, .m = m, .src = src, .wr = wr, .dst = dst, .blo = blo, .bhi = bhi, .in = in, .q = q};
    bool fast = !c->no_rows;
    for (int t = 0; t < e->ntensors; t++) fast = fast && tmap_affine(&m[t]);
    for (int t = 0; fast && t < e->ntensors; t++) {
        const piece *pc = t ? src[t] : dst;
        tmap_delta(&m[t], in, rw.dl[t]);
        rw.step[t] = row_step(rw.dl[t], pc->rank, pc->n);
    }
    int64_t len = ahi[in] - alo[in];
    double points = 0;
    for (;;) {
        int64_t o0 = 0, o1 = len, i0 = 0, i1 = 0;
        if (fast) row_span(&rw, idx, len, &o0, &o1, &i0, &i1);
        for (int64_t i = o0; i < o1 && !st; i++) {
            if (i == i0 && i1 > i0) {
                idx[in] = alo[in] + i0;
                st = eval_run(c, o, &rw, idx, i1 - i0, err);
                points += (double)(i1 - i0);
                c->res->row_points += (double)(i1 - i0);
                i = i1 - 1;
                continue;
            }
            idx[in] = alo[in] + i;
            st = eval_point(c, o, &rw, idx, &points, err);
        }
        if (st) return st;
        idx[in] = alo[in];
        int k = no - 2;
        for (; k >= 0; k--) {
            int a = order[k];
            if (++idx[a] < ahi[a]) break;
            idx[a] = alo[a];
        }
        if (k < 0) break;
    }
    c->res->points += points;
    return q ? requantize_box(q, m[0].val, dst, blo, bhi, err) : ROTOR_OK;
}

/* Operator o over the box [blo, bhi) of its output into dst: its inputs
 * from the instance's pieces, else the full tensors. */
static rotor_status eval_member(gtctx *c, int o, const piece *dst, const int64_t *blo, const int64_t *bhi,
                                rotor_error *err) {
    const rotor_op *op = &c->g->ops[o];
    piece full[ROTOR_MAX_TENSORS];
    const piece *src[ROTOR_MAX_TENSORS] = {NULL};
    uint8_t *wr[ROTOR_MAX_TENSORS] = {NULL};
    for (int t = 1; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        if (v < 0) return run_op_fail(c->g, o, err, "tensor %s names no graph value", op->expr.tensors[t].name);
        if (c->local[v].d) {
            src[t] = &c->local[v];
            continue;
        }
        if (!c->res->values[v])
            return run_op_fail(c->g, o, err, "'%s' has no data (a weight without elements, or an input not given)",
                               c->g->values[v].name);
        full[t] = whole_piece(&c->g->values[v], c->res->values[v]);
        src[t] = &full[t];
        wr[t] = c->written[v];
    }
    return eval_op(c, o, dst, blo, bhi, src, wr, err);
}

static void mark_written(gtctx *c, int v) {
    if (c->written[v]) memset(c->written[v], 1, (size_t)c->g->values[v].elements);
}

/* ---- a sub-graph whole, or one instance of it ------------------------------------------------ */

static rotor_status run_whole(gtctx *c, int sgi, rotor_error *err) {
    const rotor_graph *g = c->g;
    const rotor_gt_subgraph *sg = &c->s->sg[sgi];
    snprintf(c->where, sizeof c->where, "sub-graph %d (whole)", sgi);
    for (int m = 0; m < sg->count; m++) {
        int o = c->s->members[sg->first + m];
        const rotor_op *op = &g->ops[o];
        rotor_status st = ROTOR_OK;
        if (op->vendor) {
            for (int i = 0; i < op->ninputs && !st; i++) {
                int v = op->inputs[i];
                if (!c->res->values[v])
                    st = run_op_fail(g, o, err, "'%s' has no data (a weight without elements, or an input not given)",
                                     g->values[v].name);
                /* the kernel reads the whole input: all of it written yet */
                int64_t k = st ? -1 : first_unwritten(c, v);
                if (k >= 0)
                    st = run_op_fail(g, o, err, "%s reads element %lld of '%s', which no instance before it in "
                                     "the order wrote", c->where, (long long)k, g->values[v].name);
            }
            if (!st) st = rotor_run_kernel(g, o, c->res->values, err);
        } else {
            int w = op->outputs[0];
            piece dst = whole_piece(&g->values[w], c->res->values[w]);
            int64_t hi[GT_R];
            for (int a = 0; a < dst.rank; a++) hi[a] = dst.n[a];
            st = eval_member(c, o, &dst, dst.lo, hi, err);
        }
        if (st) return st;
        for (int k = 0; k < op->noutputs; k++) mark_written(c, op->outputs[k]);
    }
    return ROTOR_OK;
}


/* The piece of member output w the instance holds: the propagated range,
 * clipped to the value; and the box it computes of it (the piece, or with
 * no_halo the instance's own block where w has the output's extent, with
 * narrow_pieces the piece that block too). */
static void member_box(gtctx *c, const gt_prop *p, int w, int out, const int64_t *blo, const int64_t *bhi, piece *pc,
                       int64_t *clo, int64_t *chi) {
    const rotor_value *x = &c->g->values[w], *y = &c->g->values[out];
    pc->rank = x->rank;
    for (int a = 0; a < x->rank; a++) {
        int64_t l = p->lo[w][a] < 0 ? 0 : p->lo[w][a], h = p->hi[w][a] > x->shape[a] ? x->shape[a] : p->hi[w][a];
        pc->lo[a] = l, pc->n[a] = h - l, clo[a] = l, chi[a] = h;
        bool along = x->rank == y->rank && x->shape[a] == y->shape[a];
        if ((c->no_halo || c->narrow_pieces) && w != out && along) {
            if (blo[a] > clo[a]) clo[a] = blo[a];
            if (bhi[a] < chi[a]) chi[a] = bhi[a];
            if (c->narrow_pieces) pc->lo[a] = clo[a], pc->n[a] = chi[a] - clo[a];
        }
    }
}

/* The halo instance computes of intermediate w beyond its share. */
static void note_halo(gtctx *c, const rotor_gt_subgraph *sg, int w, const piece *pc) {
    const rotor_value *x = &c->g->values[w], *y = &c->g->values[sg->output];
    for (int a = 0; a < x->rank && w != sg->output && x->rank == y->rank; a++) {
        int64_t f = sg->best.factor[a];
        if (f > 1 && x->shape[a] == y->shape[a] && pc->n[a] - x->shape[a] / f > c->res->halo_rows)
            c->res->halo_rows = pc->n[a] - x->shape[a] / f;
    }
}

static rotor_status run_instance(gtctx *c, gt_prop *p, int sgi, int64_t idx, rotor_error *err) {
    const rotor_graph *g = c->g;
    const rotor_gt_subgraph *sg = &c->s->sg[sgi];
    int64_t blo[GT_R], bhi[GT_R];
    rotor_gt_instance_block(c->g, c->s, sgi, idx, blo, bhi);
    rotor_gt_prop_run(p, blo, bhi);
    snprintf(c->where, sizeof c->where, "instance %lld of sub-graph %d", (long long)idx, sgi);
    rotor_status st = ROTOR_OK;
    for (int m = 0; m < sg->count && !st; m++) {
        int o = c->s->members[sg->first + m], w = g->ops[o].outputs[0];
        piece *pc = &c->local[w];
        int64_t clo[GT_R], chi[GT_R], n = 1;
        member_box(c, p, w, sg->output, blo, bhi, pc, clo, chi);
        for (int a = 0; a < pc->rank; a++) n *= pc->n[a];
        if (!(pc->d = calloc((size_t)(n > 0 ? n : 1), sizeof *pc->d))) st = rotor_nomem(err);
        if (!st) st = eval_member(c, o, pc, clo, chi, err);
        note_halo(c, sg, w, pc);
    }
    /* the instance's block into the sub-graph's output */
    const piece *pc = &c->local[sg->output];
    const rotor_value *y = &g->values[sg->output];
    for (int64_t k = 0; !st && k < y->elements; k++) {
        int64_t co[GT_R], r = k, at;
        bool in = true;
        for (int a = y->rank - 1; a >= 0; a--) co[a] = r % y->shape[a], r /= y->shape[a];
        for (int a = 0; a < y->rank && in; a++) in = co[a] >= blo[a] && co[a] < bhi[a];
        if (!in || (at = piece_at(pc, co)) < 0) continue;
        c->res->values[sg->output][k] = pc->d[at];
        if (c->written[sg->output]) c->written[sg->output][k] = 1;
    }
    for (int m = 0; m < sg->count; m++) {
        int w = g->ops[c->s->members[sg->first + m]].outputs[0];
        free(c->local[w].d);
        c->local[w].d = NULL;
    }
    c->res->instances++;
    return st;
}

/* A split sub-graph the instances cannot run: a vendor op (its kernel
 * computes whole tensors), or an intermediate read outside the sub-graph. */
static bool must_run_whole(const gtctx *c, int sgi) {
    const rotor_graph *g = c->g;
    const rotor_gt_subgraph *sg = &c->s->sg[sgi];
    for (int m = 0; m < sg->count; m++) {
        const rotor_op *op = &g->ops[c->s->members[sg->first + m]];
        if (op->vendor || op->noutputs != 1) return true;
        int w = op->outputs[0];
        if (w == sg->output) continue;
        if (g->values[w].is_output) return true;
        for (int o = 0; o < g->nops; o++)
            for (int k = 0; k < g->ops[o].ninputs; k++)
                if (g->ops[o].inputs[k] == w && c->s->sg_of[o] != sgi) return true;
    }
    return false;
}

/* ---- the run ------------------------------------------------------------------------------ */

/* Values' full tensors: data and inputs copied; the outputs of the
 * operators of sub-graphs run whole, and every sub-graph's output, zeroed
 * (with their written flags); a split sub-graph's intermediates none. */
static rotor_status alloc_values(gtctx *c, const double *const *inputs, const bool *whole, rotor_error *err) {
    const rotor_graph *g = c->g;
    for (int v = 0; v < g->nvalues; v++) {
        const rotor_value *x = &g->values[v];
        const double *src = x->data ? x->data : (x->producer < 0 && inputs ? inputs[v] : NULL);
        if (!src) continue;
        if (!(c->res->values[v] = malloc(sizeof(double) * (size_t)x->elements))) return rotor_nomem(err);
        memcpy(c->res->values[v], src, sizeof(double) * (size_t)x->elements);
    }
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        const rotor_attr *approx = rotor_op_attr(op, "rotor.approximate");
        if (approx && approx->str) return run_op_fail(g, o, err, "%s", approx->str);
        int sgi = c->s->sg_of[o];
        for (int k = 0; k < op->noutputs; k++) {
            int v = op->outputs[k];
            size_t n = (size_t)(g->values[v].elements ? g->values[v].elements : 1);
            if (!whole[sgi] && v != c->s->sg[sgi].output) continue;
            if (c->res->values[v]) continue; /* a folded constant the graph carries */
            if (!(c->res->values[v] = calloc(n, sizeof(double))) || !(c->written[v] = calloc(n, 1)))
                return rotor_nomem(err);
        }
    }
    return ROTOR_OK;
}

/* Sub-graph sgi's instance idx, at its place in the order. */
static rotor_status run_step(gtctx *c, const bool *whole, gt_prop *props, int sgi, int64_t idx, rotor_error *err) {
    if (whole[sgi]) return idx == 0 ? run_whole(c, sgi, err) : ROTOR_OK;
    const rotor_gt_subgraph *sg = &c->s->sg[sgi];
    if (!props[sgi].lo && !rotor_gt_prop_init(&props[sgi], c->g, c->s->members + sg->first, sg->count, sg->output))
        return rotor_nomem(err);
    return run_instance(c, &props[sgi], sgi, idx, err);
}

rotor_status rotor_gtrun(const rotor_graph *g, const rotor_gt_schedule *s, const double *const *inputs,
                         const rotor_gtrun_options *opt, rotor_gtrun_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    if (s->nops != g->nops) return rotor_fail(err, ROTOR_ERR_INPUT, "gtrun: the schedule has %d operators, the graph %d",
                                              s->nops, g->nops);
    gtctx c = {.g = g, .s = s, .no_halo = opt && opt->no_halo, .narrow_pieces = opt && opt->narrow_pieces,
                 .no_rows = opt && opt->no_rows, .res = out};
    size_t nv = gt_len(g->nvalues);
    bool *whole = calloc(gt_len(s->nsg), sizeof *whole);
    gt_prop *props = calloc(gt_len(s->nsg), sizeof *props);
    out->nvalues = g->nvalues;
    out->values = calloc(nv, sizeof *out->values);
    c.written = calloc(nv, sizeof *c.written);
    c.local = calloc(nv, sizeof *c.local);
    rotor_status st = whole && props && out->values && c.written && c.local ? ROTOR_OK : rotor_nomem(err);
    bool bfs = false; /* a split sub-graph run whole: the order becomes BFS */
    for (int i = 0; !st && i < s->nsg; i++) {
        bool split = rotor_gt_instances(s, i) > 1;
        whole[i] = !split || must_run_whole(&c, i);
        out->split += split && !whole[i];
        out->whole += split && whole[i];
        bfs |= split && whole[i];
    }
    for (int o = 0; o < g->nops; o++)
        if (!g->ops[o].vendor) out->direct_points += rotor_expr_flops(&g->ops[o].expr) /
                                                     (double)(g->ops[o].expr.flops_per_point ? g->ops[o].expr.flops_per_point : 1);
    if (!st) st = alloc_values(&c, inputs, whole, err);
    /* the steps: every instance in BFS order, else the schedule's (a
     * sub-graph run whole runs at its first and skips the others); the
     * progress counts them (an order of over INT_MAX is told in
     * thousandths) */
    int64_t steps = 0, done = 0;
    for (int i = 0; bfs && i < s->nsg; i++) steps += rotor_gt_instances(s, i);
    if (!bfs) steps = s->ninst;
    int64_t unit = steps > INT_MAX ? steps / 1000 + 1 : 1;
    void (*progress)(void *, int, int) = opt ? opt->progress : NULL;
    if (bfs) {
        for (int i = 0; !st && i < s->nsg; i++)
            for (int64_t k = 0; !st && k < rotor_gt_instances(s, i); k++) {
                st = run_step(&c, whole, props, i, k, err);
                if (!st && progress) progress(opt->progress_ctx, (int)(++done / unit), (int)(steps / unit));
            }
    } else {
        for (int64_t k = 0; !st && k < s->ninst; k++) {
            st = run_step(&c, whole, props, s->order[k].sg, s->order[k].index, err);
            if (!st && progress) progress(opt->progress_ctx, (int)(++done / unit), (int)(steps / unit));
        }
    }
    for (int i = 0; i < s->nsg; i++) out->instances += whole && whole[i];
    for (int v = 0; v < g->nvalues && !st; v++)
        if (g->values[v].is_output && !out->values[v])
            st = rotor_fail(err, ROTOR_ERR_INPUT, "output '%s' has no value (a constant whose elements the graph "
                            "does not carry, or an input not given)", g->values[v].name);
    for (int i = 0; props && i < s->nsg; i++)
        if (props[i].lo) rotor_gt_prop_free(&props[i]);
    for (int v = 0; c.written && v < g->nvalues; v++) free(c.written[v]);
    for (int v = 0; c.local && v < g->nvalues; v++) free(c.local[v].d);
    free(c.written), free(c.local), free(whole), free(props);
    if (st) rotor_gtrun_result_free(out);
    return st;
}

void rotor_gtrun_result_free(rotor_gtrun_result *r) {
    if (!r) return;
    for (int v = 0; r->values && v < r->nvalues; v++) free(r->values[v]);
    free(r->values);
    memset(r, 0, sizeof *r);
}

int64_t rotor_gtrun_worst(const double *x, const double *ref, int64_t n) {
    int64_t at = n > 0 ? 0 : -1;
    double worst = -1;
    for (int64_t k = 0; k < n; k++) {
        bool same = (isnan(x[k]) && isnan(ref[k])) || x[k] == ref[k];
        double d = same ? 0 : isfinite(x[k]) && isfinite(ref[k]) ? fabs(x[k] - ref[k]) : INFINITY;
        if (d > worst) worst = d, at = k;
    }
    return at;
}
