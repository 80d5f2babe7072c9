/* lowerrnn.c — ONNX LSTM, GRU and RNN unrolled over the sequence into the
 * MatMuls and element-wise operators of their ONNX definitions (docs/onnx.md,
 * "Recurrent operators").
 *
 * Per direction d:
 *   xw  = X W_d^T over every step at once (one contraction, [S, B, G H]);
 *   xwb = xw + Wb + Rb (every gate's biases; GRU with linear_before_reset
 *         keeps Rb for the recurrent product instead);
 * then per step t, in the direction's order, with H the previous hidden state
 * (initial_h, or none at the first step: its products vanish):
 *   LSTM  q = H R^T; i = f(a_i + q_i + P_i C); f = f(a_f + q_f + P_f C);
 *         c~ = g(a_c + q_c); C' = f C + i c~; o = f(a_o + q_o + P_o C');
 *         H' = o h(C')
 *   GRU   q = H R_zr^T (all three gates with linear_before_reset, plus Rb);
 *         z = f(a_z + q_z); r = f(a_r + q_r);
 *         h~ = g(a_h + (r H) R_h^T)        or g(a_h + r (q_h + Rb_h));
 *         H' = (1 - z) h~ + z H
 *   RNN   H' = f(a + H R^T)
 * where a is step t's slice of xwb.  Y concatenates every step's H (a vendor
 * Concat), Y_h and Y_c are the last step's (a copy, or a Concat of the two
 * directions).  Decisions: slices of xwb, W, R, B and P are expression
 * tensors naming the whole value (the graph allows an input to read a slice,
 * docs/graph.md); activations other than Sigmoid, Tanh and Relu, clip,
 * input_forget and sequence lengths that differ from the sequence are
 * refused by name. */
#include "lowerint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

typedef enum { RNN_PLAIN, RNN_GRU, RNN_LSTM } rnn_kind;

typedef struct rnn {
    lower_ctx *c;
    const ox_node *n;
    rnn_kind kind;
    int gates;                     /* G: 1, 3, 4 */
    int64_t S, B, I, H, D;
    bool batch_first, lbr;
    const char *act[2][3];         /* per direction: f, g, h as expression functions */
    rotor_dtype dt;
    int gx, gw, gr, gb, gh0, gc0, gp; /* graph values (-1: absent) */
    char dims_bh[96], dims_bgh[128];
} rnn;

static const char *act_of(const ProtobufCBinaryData *s) {
    if (s->len == 7 && !memcmp(s->data, "Sigmoid", 7)) return "sigmoid";
    if (s->len == 4 && !memcmp(s->data, "Tanh", 4)) return "tanh";
    if (s->len == 4 && !memcmp(s->data, "Relu", 4)) return "relu";
    return NULL;
}

/* A new [B, w] activation value named <node><suffix>. */
static rotor_status step_val(rnn *r, const char *suffix, int64_t w, int *out) {
    int64_t shape[2] = {r->B, w};
    return lw_new_val(r->c, r->n, r->n->name, suffix, r->dt, 2, shape, out);
}

/* One element-wise or contraction operator over [b, h] (or [b, g]). */
static rotor_status op(rnn *r, const char *suffix, const char *type, const char *text, const char *dims,
                       const int *tv, int ntv, int out) {
    return lw_expr(r->c, r->n, suffix, type, text, dims, tv, ntv, out);
}

/* One LSTM step: H, C (-1 at the first step without initial state) -> H', C'. */
static rotor_status lstm_step(rnn *r, int d, int k, int a, int h, int cst, int *h_out, int *c_out) {
    char sfx[64], text[ROTOR_EXPR_TEXT_MAX];
    const char *f = r->act[d][0], *g = r->act[d][1], *hh = r->act[d][2];
    int q = -1, gi, gf, gc, gcell, go, gh;
    rotor_status st;
    if (h >= 0) {
        snprintf(sfx, sizeof sfx, ".d%d.t%d.q", d, k);
        if ((st = step_val(r, sfx, 4 * r->H, &q))) return st;
        int tv[3] = {q, h, r->gr};
        if ((st = op(r, sfx, "MatMul", "Y[b,g] += H[b,h] * R[g,h]", r->dims_bgh, tv, 3, q))) return st;
    }
    bool peep = r->gp >= 0 && cst >= 0;
    /* i and f */
    for (int which = 0; which < 2; which++) {
        snprintf(sfx, sizeof sfx, ".d%d.t%d.%s", d, k, which ? "f" : "i");
        int *dst = which ? &gf : &gi;
        if ((st = step_val(r, sfx, r->H, dst))) return st;
        snprintf(text, sizeof text, "Y[b,h] = %s(A[b,h]%s%s)", f, q >= 0 ? " + Q[b,h]" : "",
                 peep ? " + P[h] * C[b,h]" : "");
        int tv[5] = {*dst, r->gx, q, r->gp, cst}, ntv = 2;
        tv[1] = a;
        if (q >= 0) tv[ntv++] = q;
        if (peep) {
            tv[ntv++] = r->gp;
            tv[ntv++] = cst;
        }
        if ((st = op(r, sfx, "LSTM.gate", text, r->dims_bh, tv, ntv, *dst))) return st;
    }
    /* c~ and the cell */
    snprintf(sfx, sizeof sfx, ".d%d.t%d.cand", d, k);
    if ((st = step_val(r, sfx, r->H, &gc))) return st;
    snprintf(text, sizeof text, "Y[b,h] = %s(A[b,h]%s)", g, q >= 0 ? " + Q[b,h]" : "");
    int tvc[3] = {gc, a, q};
    if ((st = op(r, sfx, "LSTM.gate", text, r->dims_bh, tvc, q >= 0 ? 3 : 2, gc))) return st;
    snprintf(sfx, sizeof sfx, ".d%d.t%d.c", d, k);
    if ((st = step_val(r, sfx, r->H, &gcell))) return st;
    if (cst >= 0) {
        int tv[5] = {gcell, gf, cst, gi, gc};
        if ((st = op(r, sfx, "LSTM.cell", "Y[b,h] = F[b,h] * C[b,h] + I[b,h] * G[b,h]", r->dims_bh, tv, 5, gcell)))
            return st;
    } else {
        int tv[3] = {gcell, gi, gc};
        if ((st = op(r, sfx, "LSTM.cell", "Y[b,h] = I[b,h] * G[b,h]", r->dims_bh, tv, 3, gcell))) return st;
    }
    /* o and H' */
    snprintf(sfx, sizeof sfx, ".d%d.t%d.o", d, k);
    if ((st = step_val(r, sfx, r->H, &go))) return st;
    snprintf(text, sizeof text, "Y[b,h] = %s(A[b,h]%s%s)", f, q >= 0 ? " + Q[b,h]" : "",
             r->gp >= 0 ? " + P[h] * C[b,h]" : "");
    int tvo[5] = {go, a, q, r->gp, gcell}, no = 2;
    if (q >= 0) tvo[no++] = q;
    if (r->gp >= 0) {
        tvo[no++] = r->gp;
        tvo[no++] = gcell;
    }
    if ((st = op(r, sfx, "LSTM.gate", text, r->dims_bh, tvo, no, go))) return st;
    snprintf(sfx, sizeof sfx, ".d%d.t%d.h", d, k);
    if ((st = step_val(r, sfx, r->H, &gh))) return st;
    snprintf(text, sizeof text, "Y[b,h] = O[b,h] * %s(C[b,h])", hh);
    int tvh[3] = {gh, go, gcell};
    if ((st = op(r, sfx, "LSTM.hidden", text, r->dims_bh, tvh, 3, gh))) return st;
    *h_out = gh;
    *c_out = gcell;
    return ROTOR_OK;
}

/* One GRU step: H (-1 at the first step without initial state) -> H'. */
static rotor_status gru_step(rnn *r, int d, int k, int a, int h, int *h_out) {
    char sfx[64], text[ROTOR_EXPR_TEXT_MAX], dims[128];
    const char *f = r->act[d][0], *g = r->act[d][1];
    int q = -1, z, rg, cand, out;
    rotor_status st;
    if (h >= 0) {
        /* H R^T over the gates the recurrent product feeds directly */
        int64_t w = (r->lbr ? 3 : 2) * r->H;
        snprintf(sfx, sizeof sfx, ".d%d.t%d.q", d, k);
        if ((st = step_val(r, sfx, w, &q))) return st;
        snprintf(dims, sizeof dims, "b=%lld,g=%lld,h=%lld", (long long)r->B, (long long)w, (long long)r->H);
        int tv[3] = {q, h, r->gr};
        if ((st = op(r, sfx, "MatMul", "Y[b,g] += H[b,h] * R[g,h]", dims, tv, 3, q))) return st;
        if (r->lbr && r->gb >= 0) { /* + Rb: r multiplies it with the h gate's product */
            int qb;
            snprintf(sfx, sizeof sfx, ".d%d.t%d.qb", d, k);
            if ((st = step_val(r, sfx, w, &qb))) return st;
            snprintf(dims, sizeof dims, "b=%lld,g=%lld", (long long)r->B, (long long)w);
            int tvb[3] = {qb, q, r->gb};
            if ((st = op(r, sfx, "Add", "Y[b,g] = Q[b,g] + RB[g]", dims, tvb, 3, qb))) return st;
            q = qb;
        }
    }
    for (int which = 0; which < 2; which++) {
        snprintf(sfx, sizeof sfx, ".d%d.t%d.%s", d, k, which ? "r" : "z");
        int *dst = which ? &rg : &z;
        if ((st = step_val(r, sfx, r->H, dst))) return st;
        snprintf(text, sizeof text, "Y[b,h] = %s(A[b,h]%s)", f, q >= 0 ? " + Q[b,h]" : "");
        int tv[3] = {*dst, a, q};
        if ((st = op(r, sfx, "GRU.gate", text, r->dims_bh, tv, q >= 0 ? 3 : 2, *dst))) return st;
    }
    snprintf(sfx, sizeof sfx, ".d%d.t%d.cand", d, k);
    if ((st = step_val(r, sfx, r->H, &cand))) return st;
    if (h < 0 && !(r->lbr && r->gb >= 0)) { /* (r 0) R_h^T = 0 */
        snprintf(text, sizeof text, "Y[b,h] = %s(A[b,h])", g);
        int tv[2] = {cand, a};
        if ((st = op(r, sfx, "GRU.gate", text, r->dims_bh, tv, 2, cand))) return st;
    } else if (r->lbr) { /* g(a_h + r (q_h + Rb_h)); without H, q_h is 0 */
        snprintf(text, sizeof text, "Y[b,h] = %s(A[b,h] + R[b,h] * %s)", g, h >= 0 ? "Q[b,h]" : "RB[h]");
        int tv[4] = {cand, a, rg, h >= 0 ? q : r->gb};
        if ((st = op(r, sfx, "GRU.gate", text, r->dims_bh, tv, 4, cand))) return st;
    } else { /* g(a_h + (r H) R_h^T) */
        int rh, p;
        snprintf(sfx, sizeof sfx, ".d%d.t%d.rh", d, k);
        if ((st = step_val(r, sfx, r->H, &rh))) return st;
        int tv[3] = {rh, rg, h};
        if ((st = op(r, sfx, "Mul", "Y[b,h] = R[b,h] * H[b,h]", r->dims_bh, tv, 3, rh))) return st;
        snprintf(sfx, sizeof sfx, ".d%d.t%d.p", d, k);
        if ((st = step_val(r, sfx, r->H, &p))) return st;
        snprintf(dims, sizeof dims, "b=%lld,g=%lld,h=%lld", (long long)r->B, (long long)r->H, (long long)r->H);
        int tvp[3] = {p, rh, r->gr};
        if ((st = op(r, sfx, "MatMul", "Y[b,g] += H[b,h] * R[g,h]", dims, tvp, 3, p))) return st;
        snprintf(sfx, sizeof sfx, ".d%d.t%d.cand", d, k);
        snprintf(text, sizeof text, "Y[b,h] = %s(A[b,h] + P[b,h])", g);
        int tvc[3] = {cand, a, p};
        if ((st = op(r, sfx, "GRU.gate", text, r->dims_bh, tvc, 3, cand))) return st;
    }
    snprintf(sfx, sizeof sfx, ".d%d.t%d.h", d, k);
    if ((st = step_val(r, sfx, r->H, &out))) return st;
    if (h >= 0) {
        int tv[5] = {out, z, cand, z, h}; /* Z and U name z: a tensor appears once in an expression */
        if ((st = op(r, sfx, "GRU.hidden", "Y[b,h] = (1 - Z[b,h]) * N[b,h] + U[b,h] * H[b,h]", r->dims_bh, tv, 5,
                     out)))
            return st;
    } else {
        int tv[3] = {out, z, cand};
        if ((st = op(r, sfx, "GRU.hidden", "Y[b,h] = (1 - Z[b,h]) * N[b,h]", r->dims_bh, tv, 3, out))) return st;
    }
    *h_out = out;
    return ROTOR_OK;
}

/* One plain RNN step. */
static rotor_status rnn_step(rnn *r, int d, int k, int a, int h, int *h_out) {
    char sfx[64], text[ROTOR_EXPR_TEXT_MAX];
    int q = -1, out;
    rotor_status st;
    if (h >= 0) {
        snprintf(sfx, sizeof sfx, ".d%d.t%d.q", d, k);
        if ((st = step_val(r, sfx, r->H, &q))) return st;
        int tv[3] = {q, h, r->gr};
        if ((st = op(r, sfx, "MatMul", "Y[b,g] += H[b,h] * R[g,h]", r->dims_bgh, tv, 3, q))) return st;
    }
    snprintf(sfx, sizeof sfx, ".d%d.t%d.h", d, k);
    if ((st = step_val(r, sfx, r->H, &out))) return st;
    snprintf(text, sizeof text, "Y[b,h] = %s(A[b,h]%s)", r->act[d][0], q >= 0 ? " + Q[b,h]" : "");
    int tv[3] = {out, a, q};
    if ((st = op(r, sfx, "RNN.hidden", text, r->dims_bh, tv, q >= 0 ? 3 : 2, out))) return st;
    *h_out = out;
    return ROTOR_OK;
}

/* The node's attributes and inputs into r; refusals name what is unsupported. */
static rotor_status rnn_setup(rnn *r, lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    rotor_error *err = c->err;
    const char *op = n->p->op_type;
    r->c = c;
    r->n = n;
    r->kind = !strcmp(op, "LSTM") ? RNN_LSTM : !strcmp(op, "GRU") ? RNN_GRU : RNN_PLAIN;
    r->gates = r->kind == RNN_LSTM ? 4 : r->kind == RNN_GRU ? 3 : 1;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *w = &m->vals[ox_resolve(m, n->in[1])];
    r->batch_first = ox_attr_int(n, "layout", 0) != 0;
    r->S = x->shape[r->batch_first ? 1 : 0];
    r->B = x->shape[r->batch_first ? 0 : 1];
    r->I = x->shape[2];
    r->D = w->shape[0];
    r->H = w->shape[1] / r->gates;
    r->lbr = ox_attr_int(n, "linear_before_reset", 0) != 0;
    r->dt = x->dtype;
    if (ox_attr(n, "clip")) NFAIL("attribute clip is not supported in the unrolled form");
    if (ox_attr_int(n, "input_forget", 0)) NFAIL("input_forget is not supported in the unrolled form");
    int per = r->kind == RNN_LSTM ? 3 : r->kind == RNN_GRU ? 2 : 1;
    static const char *const dflt[3][3] = {{"tanh"}, {"sigmoid", "tanh"}, {"sigmoid", "tanh", "tanh"}};
    const Onnx__AttributeProto *acts = ox_attr(n, "activations");
    if (acts && (int64_t)acts->n_strings != per * r->D)
        NFAIL("activations lists %zu functions; %d directions of %s need %lld", acts->n_strings, (int)r->D, op,
              (long long)(per * r->D));
    for (int d = 0; d < r->D; d++)
        for (int k = 0; k < per; k++) {
            r->act[d][k] = acts ? act_of(&acts->strings[d * per + k]) : dflt[r->kind][k];
            if (!r->act[d][k])
                NFAIL("activation '%.*s' is not supported in the unrolled form (Sigmoid, Tanh, Relu are)",
                      (int)(acts->strings[d * per + k].len > 32 ? 32 : acts->strings[d * per + k].len),
                      (const char *)acts->strings[d * per + k].data);
        }
    /* sequence_lens: every sequence must run the whole length */
    const ox_val *sl = ox_in(m, n, 4);
    if (sl) {
        if (sl->kind != OX_CONST || !sl->has_data)
        {
            if (sl->kind == OX_INPUT)
                NFAIL("sequence_lens '%s' is a graph input; the unrolled form needs every length (give it with "
                      "--value %s=...)", sl->name, sl->name);
            NFAIL("sequence_lens '%s' is computed at run time; the unrolled form needs every length", sl->name);
        }
        for (int64_t k = 0; k < sl->elems; k++)
            if (ox_get_i(sl, k) != r->S)
                NFAIL("sequence_lens has %lld where the sequence has %lld; the unrolled form needs equal lengths",
                      (long long)ox_get_i(sl, k), (long long)r->S);
    }
    rotor_status st;
    r->gb = r->gh0 = r->gc0 = r->gp = -1;
    if ((st = lw_gval(c, n, n->in[0], &r->gx)) || (st = lw_gval(c, n, n->in[1], &r->gw)) ||
        (st = lw_gval(c, n, n->in[2], &r->gr)))
        return st;
    if (n->nin > 3 && n->in[3] >= 0 && (st = lw_gval(c, n, n->in[3], &r->gb))) return st;
    if (n->nin > 5 && n->in[5] >= 0 && (st = lw_gval(c, n, n->in[5], &r->gh0))) return st;
    if (r->kind == RNN_LSTM && n->nin > 6 && n->in[6] >= 0 && (st = lw_gval(c, n, n->in[6], &r->gc0))) return st;
    if (r->kind == RNN_LSTM && n->nin > 7 && n->in[7] >= 0 && (st = lw_gval(c, n, n->in[7], &r->gp))) return st;
    snprintf(r->dims_bh, sizeof r->dims_bh, "b=%lld,h=%lld", (long long)r->B, (long long)r->H);
    snprintf(r->dims_bgh, sizeof r->dims_bgh, "b=%lld,g=%lld,h=%lld", (long long)r->B,
             (long long)(r->gates * r->H), (long long)r->H);
    return ROTOR_OK;
}

/* The input projection of direction d for every step at once: xwb. */
static rotor_status project(rnn *r, int d, int *xwb) {
    char sfx[32], dims[160];
    int64_t gh = r->gates * r->H;
    int64_t shape[3] = {r->batch_first ? r->B : r->S, r->batch_first ? r->S : r->B, gh};
    int xw;
    rotor_status st;
    snprintf(sfx, sizeof sfx, ".d%d.xw", d);
    if ((st = lw_new_val(r->c, r->n, r->n->name, sfx, r->dt, 3, shape, &xw))) return st;
    snprintf(dims, sizeof dims, "s=%lld,b=%lld,g=%lld,i=%lld", (long long)r->S, (long long)r->B, (long long)gh,
             (long long)r->I);
    int tv[3] = {xw, r->gx, r->gw};
    if ((st = op(r, sfx, "MatMul",
                 r->batch_first ? "Y[b,s,g] += X[b,s,i] * W[g,i]" : "Y[s,b,g] += X[s,b,i] * W[g,i]", dims, tv, 3,
                 xw)))
        return st;
    *xwb = xw;
    if (r->gb < 0) return ROTOR_OK;
    snprintf(sfx, sizeof sfx, ".d%d.xwb", d);
    if ((st = lw_new_val(r->c, r->n, r->n->name, sfx, r->dt, 3, shape, xwb))) return st;
    snprintf(dims, sizeof dims, "s=%lld,b=%lld,g=%lld", (long long)r->S, (long long)r->B, (long long)gh);
    /* GRU with linear_before_reset adds Rb to the recurrent product instead */
    bool both = !(r->kind == RNN_GRU && r->lbr);
    const char *text = r->batch_first ? (both ? "Y[b,s,g] = P[b,s,g] + WB[g] + RB[g]" : "Y[b,s,g] = P[b,s,g] + WB[g]")
                                      : (both ? "Y[s,b,g] = P[s,b,g] + WB[g] + RB[g]" : "Y[s,b,g] = P[s,b,g] + WB[g]");
    int tvb[4] = {*xwb, xw, r->gb, r->gb};
    return op(r, sfx, "Add", text, dims, tvb, both ? 4 : 3, *xwb);
}

/* An output: the copy of one value, or a vendor Concat of several. */
static rotor_status output(rnn *r, const char *suffix, const int *vals, int nvals, int ov) {
    int gy;
    rotor_status st = lw_gval(r->c, r->n, ov, &gy);
    if (st) return st;
    if (nvals == 1) {
        int tv[2] = {gy, vals[0]};
        return op(r, suffix, "Identity", "Y[b,h] = X[b,h]", r->dims_bh, tv, 2, gy);
    }
    char name[256];
    snprintf(name, sizeof name, "%s%s", r->n->name, suffix);
    return lw_op(r->c, r->n, name, "Concat", NULL, NULL, NULL, 0, vals, nvals, gy);
}

rotor_status lw_recurrent(lower_ctx *c, const ox_node *n) {
    rnn r;
    memset(&r, 0, sizeof r);
    rotor_status st = rnn_setup(&r, c, n);
    if (st) return st;
    ox_model *m = c->m;
    int64_t nh = r.S * r.D;
    int *hs = malloc((size_t)nh * sizeof *hs), hl[2] = {-1, -1}, cl[2] = {-1, -1};
    if (!hs) return rotor_nomem(c->err);
    const Onnx__AttributeProto *dir = ox_attr(n, "direction");
    bool reverse = dir && dir->has_s && dir->s.len == 7 && !memcmp(dir->s.data, "reverse", 7);
    for (int d = 0; d < r.D && !st; d++) {
        int xwb;
        if ((st = project(&r, d, &xwb))) break;
        int h = r.gh0, cs = r.gc0;
        bool back = reverse || d == 1;
        for (int64_t k = 0; k < r.S && !st; k++) {
            int64_t t = back ? r.S - 1 - k : k;
            int hn = -1, cn = -1;
            if (r.kind == RNN_LSTM) st = lstm_step(&r, d, (int)t, xwb, h, cs, &hn, &cn);
            else if (r.kind == RNN_GRU) st = gru_step(&r, d, (int)t, xwb, h, &hn);
            else st = rnn_step(&r, d, (int)t, xwb, h, &hn);
            h = hn;
            cs = cn;
            hs[t * r.D + d] = hn; /* Y is [S, D, B, H]: step-major */
        }
        hl[d] = h;
        cl[d] = cs;
    }
    if (!st && n->nout > 0 && n->out[0] >= 0 && m->vals[n->out[0]].live) st = output(&r, ".y", hs, (int)nh, n->out[0]);
    if (!st && n->nout > 1 && n->out[1] >= 0 && m->vals[n->out[1]].live) st = output(&r, ".y_h", hl, (int)r.D, n->out[1]);
    if (!st && r.kind == RNN_LSTM && n->nout > 2 && n->out[2] >= 0 && m->vals[n->out[2]].live)
        st = output(&r, ".y_c", cl, (int)r.D, n->out[2]);
    free(hs);
    return st;
}
