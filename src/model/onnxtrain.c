/* onnxtrain.c — the training optimizers of the ai.onnx.preview.training
 * domain: Adagrad, Momentum and Adam (ONNX operator docs, opset 1 of that
 * domain; docs/onnx.md, "Training optimizers").  Each takes a learning rate
 * R and an update count T (scalars), then n tensors X, n gradients G and
 * n (Adagrad, Momentum) or 2n (Adam) state tensors of X's shapes, and gives
 * the n updated X and their new states: 2 + 3n inputs and 2n outputs, or
 * 2 + 4n and 3n for Adam.  Every output is element-wise over its X, so the
 * lowering writes the ONNX formulas as tensor expressions (T10 §4.2), one
 * operator per output, with R and T as unit-axis scalars:
 *   all        g  = c X + G                          (c = norm_coefficient; g = G when c is 0)
 *   Adagrad    r  = R / (1 + T decay_factor)         (r = R when decay_factor is 0)
 *              H' = H + g^2;   X' = X - r g / (sqrt(H') + epsilon)
 *   Momentum   V' = alpha V + beta_T g,  beta_T = beta if T > 0 else 1
 *              X' = X - R V'                         (mode "standard")
 *              X' = X - R (g + alpha V')             (mode "nesterov")
 *   Adam       V' = alpha V + (1 - alpha) g;   H' = beta H + (1 - beta) g^2
 *              r  = R sqrt(1 - beta^T) / (1 - alpha^T) if T > 0 else R
 *              X' = (1 - norm_coefficient_post) (X - r V' / (sqrt(H') + epsilon))
 * "T > 0" is written with min(T, 1), which is T > 0 for the integer count
 * (T is never negative: it counts updates); Adam's powers read max(T, 1)
 * so that T = 0 computes nothing undefined before the 0 weight drops it.
 * Attribute defaults are the schema's (onnx's defs): epsilon 1e-6, Adam's
 * alpha 0.9 and beta 0.999, the others 0; Momentum's alpha, beta, mode and
 * norm_coefficient are required.  (onnx's test_adam_multiple computes its
 * expected X with epsilon 1e-2 that its node does not carry: rotor follows
 * the node.) */
#include "lowerint.h"

#include <stdio.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

typedef enum { OPT_ADAGRAD, OPT_MOMENTUM, OPT_ADAM } opt_kind;

/* The optimizer of node n and its tensor count (0: the inputs do not fit). */
static opt_kind opt_of(const ox_node *n, int *count) {
    const char *op = n->p->op_type;
    opt_kind k = !strcmp(op, "Adagrad") ? OPT_ADAGRAD : !strcmp(op, "Momentum") ? OPT_MOMENTUM : OPT_ADAM;
    int per = k == OPT_ADAM ? 4 : 3;
    *count = n->nin > 2 && (n->nin - 2) % per == 0 ? (n->nin - 2) / per : 0;
    return k;
}

rotor_status ox_infer_optimizer(ox_model *m, ox_node *n, rotor_error *err) {
    int cnt;
    opt_kind k = opt_of(n, &cnt);
    int per = k == OPT_ADAM ? 4 : 3, outs = k == OPT_ADAM ? 3 : 2;
    if (!cnt) NFAIL("has %d inputs; it takes R, T and %d groups of n tensors (X, G, %s)", n->nin, per - 1,
                    k == OPT_ADAM ? "V, H" : k == OPT_MOMENTUM ? "V" : "H");
    rotor_status st = ox_need(m, n, n->nin, err);
    if (st) return st;
    if (n->nout > outs * cnt) NFAIL("has %d outputs; %d tensors give at most %d", n->nout, cnt, outs * cnt);
    ox_val *r = ox_in(m, n, 0), *t = ox_in(m, n, 1);
    if (r->elems != 1 || r->rank > 1 || !ox_is_float_type(r->onnx_type))
        NFAIL("R '%s' must be a float scalar (the learning rate)", r->name);
    if (t->elems != 1 || t->rank > 1 || t->onnx_type != T_INT64) NFAIL("T '%s' must be an int64 scalar (the update count)", t->name);
    if (k == OPT_MOMENTUM) {
        const Onnx__AttributeProto *mode = ox_attr(n, "mode");
        if (!ox_attr(n, "alpha") || !ox_attr(n, "beta") || !mode || !ox_attr(n, "norm_coefficient"))
            NFAIL("attributes alpha, beta, mode and norm_coefficient are required");
        if (!mode->has_s || !((mode->s.len == 8 && !memcmp(mode->s.data, "standard", 8)) ||
                              (mode->s.len == 8 && !memcmp(mode->s.data, "nesterov", 8))))
            NFAIL("mode must be \"standard\" or \"nesterov\"");
    }
    for (int i = 0; i < cnt; i++) {
        ox_val *x = ox_in(m, n, 2 + i);
        for (int g = 1; g < per; g++) {
            ox_val *y = ox_in(m, n, 2 + g * cnt + i);
            if (y->rank != x->rank || memcmp(y->shape, x->shape, sizeof(int64_t) * (size_t)x->rank) ||
                y->onnx_type != x->onnx_type)
                NFAIL("'%s' must have the shape and type of '%s'", y->name, x->name);
        }
        for (int o = 0; o < outs; o++)
            if ((st = ox_set_out(m, n, o * cnt + i, x->onnx_type, x->rank, x->shape, err))) return st;
    }
    return ROTOR_OK;
}

/* Gradient (xs, zs; attributes xs, zs and y naming them and the target):
 * dy/dx for each x, shaped and typed as x.  The derivative of a subgraph
 * has no tensor expression of its own: a vendor op (T10 §4.2's fallback)
 * of the xs and zs, whose shapes are exact. */
rotor_status ox_infer_gradient(ox_model *m, ox_node *n, rotor_error *err) {
    const Onnx__AttributeProto *xs = ox_attr(n, "xs"), *zs = ox_attr(n, "zs"), *y = ox_attr(n, "y");
    if (!xs || !xs->n_strings || !y || !y->has_s) NFAIL("attributes xs and y are required");
    size_t nz = zs ? zs->n_strings : 0;
    if ((size_t)n->nin != xs->n_strings + nz)
        NFAIL("has %d inputs; xs and zs name %zu", n->nin, xs->n_strings + nz);
    if ((size_t)n->nout != xs->n_strings) NFAIL("has %d outputs; xs names %zu", n->nout, xs->n_strings);
    for (int i = 0; i < n->nin; i++) {
        const ProtobufCBinaryData *name = (size_t)i < xs->n_strings ? &xs->strings[i] : &zs->strings[i - xs->n_strings];
        ox_val *x = ox_in(m, n, i);
        if (!x || strlen(x->name) != name->len || memcmp(x->name, name->data, name->len))
            NFAIL("input %d must be the tensor xs or zs names there ('%.*s')", i, (int)(name->len > 64 ? 64 : name->len),
                  (const char *)name->data);
        rotor_status st;
        if ((size_t)i < xs->n_strings && (st = ox_set_out(m, n, i, x->onnx_type, x->rank, x->shape, err))) return st;
    }
    return ROTOR_OK;
}

/* ---- lowering ---------------------------------------------------------------------------------- */

/* The current tensor's indices: X-shaped operands read idx, an operator
 * with a scalar (R, T) writes Y[uidx] and reads the scalar at [u]. */
typedef struct opt {
    lower_ctx *c;
    const ox_node *n;
    int cnt;
    int r, t;             /* graph values of R and T */
    char idx[160];        /* "d0,d1" ("u" for a scalar X) */
    char uidx[168];       /* "u,d0,d1" ("u" for a scalar X) */
    char dims[256];       /* "d0=..,d1=.." */
    char udims[264];      /* "u=1,d0=..,d1=.." */
} opt;

/* A literal for the expression text: "0.5", or "neg(0.5)". */
static void lit(char *buf, size_t cap, double v) {
    if (v < 0) snprintf(buf, cap, "neg(%.9g)", -v);
    else snprintf(buf, cap, "%.9g", v);
}

/* Output o of tensor i (or a new value when the output is absent). */
static rotor_status out_val(opt *p, int o, int i, const char *sfx, int *gv) {
    ox_model *m = p->c->m;
    int k = o * p->cnt + i;
    if (k < p->n->nout && p->n->out[k] >= 0) return lw_gval(p->c, p->n, p->n->out[k], gv);
    const ox_val *x = &m->vals[ox_resolve(m, p->n->in[2 + i])];
    return lw_new_val(p->c, p->n, p->n->name, sfx, x->dtype, x->rank, x->shape, gv);
}

/* One operator: text over tensors tv (tv[0] the output); scalar: it reads
 * R or T, so its axes are udims. */
static rotor_status op(opt *p, const char *sfx, bool scalar, const char *text, const int *tv, int ntv) {
    return lw_expr(p->c, p->n, sfx, p->n->p->op_type, text, scalar ? p->udims : p->dims, tv, ntv, tv[0]);
}

/* The indices of tensor i's X (shape x). */
static void set_index(opt *p, const ox_val *x) {
    size_t k = 0, kd = 0;
    p->idx[0] = p->dims[0] = '\0';
    for (int d = 0; d < x->rank; d++) {
        k += (size_t)snprintf(p->idx + k, sizeof p->idx - k, "%sd%d", d ? "," : "", d);
        kd += (size_t)snprintf(p->dims + kd, sizeof p->dims - kd, "%sd%d=%lld", d ? "," : "", d, (long long)x->shape[d]);
    }
    if (x->rank == 0) {
        snprintf(p->idx, sizeof p->idx, "u");
        snprintf(p->dims, sizeof p->dims, "u=1");
    }
    snprintf(p->uidx, sizeof p->uidx, x->rank ? "u,%s" : "%s", p->idx);
    snprintf(p->udims, sizeof p->udims, x->rank ? "u=1,%s" : "%s", p->dims);
}

/* g = c X + G for tensor i (G itself when c is 0). */
static rotor_status regularized(opt *p, int i, int gx, int gg, int *out) {
    double c = ox_attr_float(p->n, "norm_coefficient", 0);
    if (c == 0) {
        *out = gg;
        return ROTOR_OK;
    }
    char sfx[32], text[ROTOR_EXPR_TEXT_MAX], cl[64];
    snprintf(sfx, sizeof sfx, ".g%d", i);
    const ox_val *x = &p->c->m->vals[ox_resolve(p->c->m, p->n->in[2 + i])];
    rotor_status st = lw_new_val(p->c, p->n, p->n->name, sfx, x->dtype, x->rank, x->shape, out);
    if (st) return st;
    lit(cl, sizeof cl, c);
    snprintf(text, sizeof text, "Y[%s] = %s * X[%s] + G[%s]", p->idx, cl, p->idx, p->idx);
    int tv[3] = {*out, gx, gg};
    return op(p, sfx, false, text, tv, 3);
}

/* A scalar operator <node><sfx>: Y[u] = text over R and T. */
static rotor_status scalar_op(opt *p, const char *sfx, const char *text, const int *tvin, int ntv, int *out) {
    ox_model *m = p->c->m;
    const ox_val *r = &m->vals[ox_resolve(m, p->n->in[0])];
    rotor_status st = lw_new_val(p->c, p->n, p->n->name, sfx, r->dtype, 0, NULL, out);
    if (st) return st;
    int tv[5] = {*out};
    for (int i = 1; i < ntv && i < 5; i++) tv[i] = tvin[i];
    return lw_expr(p->c, p->n, sfx, p->n->p->op_type, text, "u=1", tv, ntv, *out);
}

/* The learning rate each X' reads: Adagrad's R / (1 + T decay), Adam's
 * bias-corrected one, or R itself. */
static rotor_status rate(opt *p, opt_kind k, int *out) {
    char text[ROTOR_EXPR_TEXT_MAX], l1[64], l2[64];
    *out = p->r;
    if (k == OPT_ADAGRAD) {
        double decay = ox_attr_float(p->n, "decay_factor", 0);
        if (decay == 0) return ROTOR_OK;
        lit(l1, sizeof l1, decay);
        snprintf(text, sizeof text, "Y[u] = R[u] / (1 + T[u] * %s)", l1);
        int tv[3] = {0, p->r, p->t};
        return scalar_op(p, ".r", text, tv, 3, out);
    }
    if (k != OPT_ADAM) return ROTOR_OK;
    /* f = sqrt(1 - beta^T) / (1 - alpha^T) at max(T, 1); r = R (1 + min(T, 1) (f - 1)) */
    lit(l1, sizeof l1, ox_attr_float(p->n, "beta", 0.999));
    lit(l2, sizeof l2, ox_attr_float(p->n, "alpha", 0.9));
    snprintf(text, sizeof text, "Y[u] = sqrt(1 - pow(%s, max(T[u], 1))) / (1 - pow(%s, max(K[u], 1)))", l1, l2);
    int f, tvf[3] = {0, p->t, p->t}; /* T and K name T: a tensor appears once in an expression */
    rotor_status st = scalar_op(p, ".f", text, tvf, 3, &f);
    if (st) return st;
    int tv[4] = {0, p->r, p->t, f};
    return scalar_op(p, ".r", "Y[u] = R[u] * (1 + min(T[u], 1) * (F[u] - 1))", tv, 4, out);
}

/* Tensor i's new state(s): Adagrad's H', Momentum's V', Adam's V' and H'
 * (*s1 the one X' reads first: H' or V'; *s2 Adam's H'). */
static rotor_status states(opt *p, opt_kind k, int i, int g, int *s1, int *s2) {
    const ox_node *n = p->n;
    char sfx[32], text[ROTOR_EXPR_TEXT_MAX], la[64], lb[64];
    int gs;
    rotor_status st = lw_gval(p->c, n, n->in[2 + 2 * p->cnt + i], &gs); /* H (Adagrad) or V */
    if (st) return st;
    snprintf(sfx, sizeof sfx, ".%s%d", k == OPT_ADAGRAD ? "h" : "v", i);
    if ((st = out_val(p, 1, i, sfx, s1))) return st;
    if (k == OPT_ADAGRAD) {
        snprintf(text, sizeof text, "Y[%s] = H[%s] + square(Q[%s])", p->idx, p->idx, p->idx);
        int tv[3] = {*s1, gs, g};
        return op(p, sfx, false, text, tv, 3);
    }
    double a = ox_attr_float(n, "alpha", 0.9), b = ox_attr_float(n, "beta", 0.999);
    lit(la, sizeof la, a);
    if (k == OPT_MOMENTUM) {
        bool scalar = b != 1;
        lit(lb, sizeof lb, b - 1);
        if (scalar) snprintf(text, sizeof text, "Y[%s] = %s * V[%s] + (1 + %s * min(T[u], 1)) * Q[%s]", p->uidx, la, p->idx,
                             lb, p->idx);
        else snprintf(text, sizeof text, "Y[%s] = %s * V[%s] + Q[%s]", p->idx, la, p->idx, p->idx);
        int tv[4] = {*s1, gs, scalar ? p->t : g, g};
        return op(p, sfx, scalar, text, tv, scalar ? 4 : 3);
    }
    lit(lb, sizeof lb, 1 - a);
    snprintf(text, sizeof text, "Y[%s] = %s * V[%s] + %s * Q[%s]", p->idx, la, p->idx, lb, p->idx);
    int tv[3] = {*s1, gs, g};
    if ((st = op(p, sfx, false, text, tv, 3))) return st;
    int gh;
    if ((st = lw_gval(p->c, n, n->in[2 + 3 * p->cnt + i], &gh))) return st;
    snprintf(sfx, sizeof sfx, ".h%d", i);
    if ((st = out_val(p, 2, i, sfx, s2))) return st;
    lit(la, sizeof la, b);
    lit(lb, sizeof lb, 1 - b);
    snprintf(text, sizeof text, "Y[%s] = %s * H[%s] + %s * square(Q[%s])", p->idx, la, p->idx, lb, p->idx);
    int tvh[3] = {*s2, gh, g};
    return op(p, sfx, false, text, tvh, 3);
}

/* Tensor i's X'. */
static rotor_status update(opt *p, opt_kind k, int i, int r, int g, int s1, int s2) {
    const ox_node *n = p->n;
    char sfx[32], text[ROTOR_EXPR_TEXT_MAX], le[64], lp[64];
    int gx, y;
    rotor_status st = lw_gval(p->c, n, n->in[2 + i], &gx);
    snprintf(sfx, sizeof sfx, ".x%d", i);
    if (!st) st = out_val(p, 0, i, sfx, &y);
    if (st) return st;
    lit(le, sizeof le, ox_attr_float(n, "epsilon", 1e-6));
    if (k == OPT_ADAGRAD) { /* X - r g / (sqrt(H') + epsilon) */
        snprintf(text, sizeof text, "Y[%s] = X[%s] - R[u] * Q[%s] / (sqrt(K[%s]) + %s)", p->uidx, p->idx, p->idx, p->idx,
                 le);
        int tv[5] = {y, gx, r, g, s1};
        return op(p, sfx, true, text, tv, 5);
    }
    if (k == OPT_MOMENTUM) {
        const Onnx__AttributeProto *mode = ox_attr(n, "mode");
        bool nesterov = mode && mode->has_s && mode->s.len == 8 && !memcmp(mode->s.data, "nesterov", 8);
        char la[64];
        lit(la, sizeof la, ox_attr_float(n, "alpha", 0));
        if (nesterov) snprintf(text, sizeof text, "Y[%s] = X[%s] - R[u] * (Q[%s] + %s * W[%s])", p->uidx, p->idx, p->idx,
                               la, p->idx);
        else snprintf(text, sizeof text, "Y[%s] = X[%s] - R[u] * W[%s]", p->uidx, p->idx, p->idx);
        int tvn[5] = {y, gx, r, g, s1}, tvs[4] = {y, gx, r, s1};
        return nesterov ? op(p, sfx, true, text, tvn, 5) : op(p, sfx, true, text, tvs, 4);
    }
    double post = ox_attr_float(n, "norm_coefficient_post", 0);
    lit(lp, sizeof lp, 1 - post);
    if (post == 0) snprintf(text, sizeof text, "Y[%s] = X[%s] - R[u] * W[%s] / (sqrt(K[%s]) + %s)", p->uidx, p->idx,
                            p->idx, p->idx, le);
    else snprintf(text, sizeof text, "Y[%s] = %s * (X[%s] - R[u] * W[%s] / (sqrt(K[%s]) + %s))", p->uidx, lp, p->idx,
                  p->idx, p->idx, le);
    int tv[5] = {y, gx, r, s1, s2};
    return op(p, sfx, true, text, tv, 5);
}

rotor_status lw_optimizer(lower_ctx *c, const ox_node *n) {
    opt p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.n = n;
    opt_kind k = opt_of(n, &p.cnt);
    rotor_status st;
    int r;
    if ((st = lw_gval(c, n, n->in[0], &p.r)) || (st = lw_gval(c, n, n->in[1], &p.t)) || (st = rate(&p, k, &r)))
        return st;
    for (int i = 0; i < p.cnt; i++) {
        const ox_val *x = &c->m->vals[ox_resolve(c->m, n->in[2 + i])];
        set_index(&p, x);
        int gx, gg, g, s1, s2 = -1;
        if ((st = lw_gval(c, n, n->in[2 + i], &gx)) || (st = lw_gval(c, n, n->in[2 + p.cnt + i], &gg)) ||
            (st = regularized(&p, i, gx, gg, &g)) || (st = states(&p, k, i, g, &s1, &s2)) ||
            (st = update(&p, k, i, r, g, s1, s2)))
            return st;
    }
    return ROTOR_OK;
}
