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
 * docs/graph.md); activations other than Sigmoid, Tanh and Relu are refused
 * by name.
 *
 * sequence_lens that may differ from the sequence (a graph input, a computed
 * value, known shorter lengths) masks the steps rather than refusing: the
 * shapes do not depend on it, only which steps count.  Per step t a mask
 * M[b] = [t < len_b]; Y's entry is M H' and the state carried on is
 * M H' + (1 - M) H, so a forward direction holds its last state after the
 * end and a reverse one (stepping from S - 1 down) keeps its initial state
 * until its sequence starts, which is onnxruntime's reading; a plan runs
 * every step, as a static graph must.
 *
 * clip (ONNX: "applied to the input of activations"): every gate's whole
 * pre-activation, peepholes and biases included, is bounded to [-clip, clip]
 * inside the gate's own expression, min(max(pre, -clip), clip), where
 * onnxruntime's CPU kernel clamps it (clip_add_bias before f and g,
 * uni_directional_lstm.cc and uni_directional_gru.cc); h(C) in LSTM's
 * H' = o h(C') is not clipped, as there.  ONNX is silent on clip = 0, which
 * would bound every pre-activation to 0: onnxruntime refuses it, OpenVINO
 * reads it as no clipping (RNNCellBase: clip 0 is "no clip"), and MIGraphX,
 * whose test files carry clip 0, never clips in its rewrite; rotor reads it
 * as OpenVINO does.  A negative or NaN clip is refused.  clip is read as a number whether the
 * file stores it as a float (the schema) or as an int (MIGraphX's test
 * files).  input_forget couples the gates, f = 1 - i (onnxruntime's
 * "pf = 1 - pi"), with no forget gate of its own. */
#include "lowerint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    bool batch_first, lbr, input_forget;
    double clip;                   /* > 0: the gates' pre-activations are bounded to [-clip, clip] */
    int gl;                        /* sequence_lens when it masks the steps, else -1 */
    int *masks;                    /* with gl: step t's mask value, [B] (-1 until made) */
    const char *act[2][3];         /* per direction: f, g, h as expression functions */
    rotor_dtype dt;
    int gx, gw, gr, gb, gh0, gc0, gp; /* graph values (-1: absent) */
    char dims_bh[96], dims_bgh[128];
} rnn;

/* An activation's expression function.  ONNX spells them "Sigmoid", "Tanh",
 * "Relu"; the case is not significant, as onnxruntime (which lower-cases the
 * names) and MIGraphX read them. */
static const char *act_of(const ProtobufCBinaryData *s) {
    static const char *const fns[] = {"sigmoid", "tanh", "relu"};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (s->len == strlen(fns[i]) && !strncasecmp((const char *)s->data, fns[i], s->len)) return fns[i];
    return NULL;
}

/* text = fn(pre), with pre bounded to [-clip, clip] when the node clips. */
static void gate_text(const rnn *r, char *text, size_t cap, const char *fn, const char *pre) {
    if (r->clip > 0)
        snprintf(text, cap, "Y[b,h] = %s(min(max(%s, neg(%.9g)), %.9g))", fn, pre, r->clip, r->clip);
    else snprintf(text, cap, "Y[b,h] = %s(%s)", fn, pre);
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
    char pre[96];
    /* i and f (with input_forget, f is 1 - i: no gate of its own) */
    for (int which = 0; which < (r->input_forget ? 1 : 2); which++) {
        snprintf(sfx, sizeof sfx, ".d%d.t%d.%s", d, k, which ? "f" : "i");
        int *dst = which ? &gf : &gi;
        if ((st = step_val(r, sfx, r->H, dst))) return st;
        snprintf(pre, sizeof pre, "A[b,h]%s%s", q >= 0 ? " + Q[b,h]" : "", peep ? " + P[h] * C[b,h]" : "");
        gate_text(r, text, sizeof text, f, pre);
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
    gate_text(r, text, sizeof text, g, q >= 0 ? "A[b,h] + Q[b,h]" : "A[b,h]");
    int tvc[3] = {gc, a, q};
    if ((st = op(r, sfx, "LSTM.gate", text, r->dims_bh, tvc, q >= 0 ? 3 : 2, gc))) return st;
    snprintf(sfx, sizeof sfx, ".d%d.t%d.c", d, k);
    if ((st = step_val(r, sfx, r->H, &gcell))) return st;
    if (cst >= 0 && r->input_forget) { /* F and I name i: a tensor appears once in an expression */
        int tv[5] = {gcell, gi, cst, gi, gc};
        if ((st = op(r, sfx, "LSTM.cell", "Y[b,h] = (1 - F[b,h]) * C[b,h] + I[b,h] * G[b,h]", r->dims_bh, tv, 5,
                     gcell)))
            return st;
    } else if (cst >= 0) {
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
    snprintf(pre, sizeof pre, "A[b,h]%s%s", q >= 0 ? " + Q[b,h]" : "", r->gp >= 0 ? " + P[h] * C[b,h]" : "");
    gate_text(r, text, sizeof text, f, pre);
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
        gate_text(r, text, sizeof text, f, q >= 0 ? "A[b,h] + Q[b,h]" : "A[b,h]");
        int tv[3] = {*dst, a, q};
        if ((st = op(r, sfx, "GRU.gate", text, r->dims_bh, tv, q >= 0 ? 3 : 2, *dst))) return st;
    }
    snprintf(sfx, sizeof sfx, ".d%d.t%d.cand", d, k);
    if ((st = step_val(r, sfx, r->H, &cand))) return st;
    if (h < 0 && !(r->lbr && r->gb >= 0)) { /* (r 0) R_h^T = 0 */
        gate_text(r, text, sizeof text, g, "A[b,h]");
        int tv[2] = {cand, a};
        if ((st = op(r, sfx, "GRU.gate", text, r->dims_bh, tv, 2, cand))) return st;
    } else if (r->lbr) { /* g(a_h + r (q_h + Rb_h)); without H, q_h is 0 */
        gate_text(r, text, sizeof text, g, h >= 0 ? "A[b,h] + R[b,h] * Q[b,h]" : "A[b,h] + R[b,h] * RB[h]");
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
        gate_text(r, text, sizeof text, g, "A[b,h] + P[b,h]");
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
    gate_text(r, text, sizeof text, r->act[d][0], q >= 0 ? "A[b,h] + Q[b,h]" : "A[b,h]");
    int tv[3] = {out, a, q};
    if ((st = op(r, sfx, "RNN.hidden", text, r->dims_bh, tv, q >= 0 ? 3 : 2, out))) return st;
    *h_out = out;
    return ROTOR_OK;
}

/* sequence_lens: none, or known and all the sequence's, runs every step as
 * it is; any other (known shorter lengths, a graph input, a computed value)
 * masks the steps, r->gl its graph value.  Known lengths outside [0, S] are
 * refused, as onnxruntime refuses them. */
static rotor_status lens_setup(rnn *r, const ox_node *n) {
    ox_model *m = r->c->m;
    rotor_error *err = r->c->err;
    r->gl = -1;
    const ox_val *sl = ox_in(m, (ox_node *)n, 4);
    if (!sl) return ROTOR_OK;
    if (sl->rank != 1 || sl->shape[0] != r->B)
        NFAIL("sequence_lens '%s' must be [batch] (%lld)", sl->name, (long long)r->B);
    bool known = sl->kind == OX_CONST && sl->has_data, all = known;
    for (int64_t k = 0; known && k < sl->elems; k++) {
        int64_t len = ox_get_i(sl, k);
        if (len < 0 || len > r->S)
            NFAIL("sequence_lens has %lld where the sequence has %lld", (long long)len, (long long)r->S);
        all &= len == r->S;
    }
    if (all) return ROTOR_OK;
    r->masks = calloc((size_t)r->S, sizeof *r->masks);
    if (!r->masks) return rotor_nomem(err);
    for (int64_t t = 0; t < r->S; t++) r->masks[t] = -1;
    return lw_gval(r->c, n, n->in[4], &r->gl);
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
    const Onnx__AttributeProto *clip = ox_attr(n, "clip");
    if (clip) {
        if (!clip->has_f && !clip->has_i) NFAIL("attribute clip has no number");
        r->clip = clip->has_f ? clip->f : (double)clip->i;
        if (!(r->clip >= 0)) NFAIL("clip is %g; the bounds [-clip, clip] need clip >= 0", r->clip);
    }
    r->input_forget = r->kind == RNN_LSTM && ox_attr_int(n, "input_forget", 0) != 0;
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
    rotor_status st = lens_setup(r, n);
    if (st) return st;
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

/* Step t's mask, [B]: 1 where the batch entry's sequence is still running
 * (t < sequence_lens[b]), 0 after; min(max(L - t, 0), 1) of the integer
 * length.  One per step, shared by the directions. */
static rotor_status mask_of(rnn *r, int64_t t, int *out) {
    if (r->masks[t] >= 0) {
        *out = r->masks[t];
        return ROTOR_OK;
    }
    char sfx[48], text[96], dims[32];
    snprintf(sfx, sizeof sfx, ".t%lld.mask", (long long)t);
    snprintf(dims, sizeof dims, "b=%lld", (long long)r->B);
    if (t) snprintf(text, sizeof text, "Y[b] = min(max(L[b] - %lld, 0), 1)", (long long)t);
    else snprintf(text, sizeof text, "Y[b] = min(max(L[b], 0), 1)");
    int64_t shape[1] = {r->B};
    rotor_status st = lw_new_val(r->c, r->n, r->n->name, sfx, r->dt, 1, shape, &r->masks[t]);
    int tv[2] = {r->masks[t], r->gl};
    if (!st) st = op(r, sfx, "RNN.mask", text, dims, tv, 2, r->masks[t]);
    *out = r->masks[t];
    return st;
}

/* Step t's new state x where the sequence runs, the old one after it ends:
 * M x + (1 - M) old, or M x without an old state (it is 0). */
static rotor_status masked(rnn *r, const char *sfx, int64_t t, int x, int old, int *out) {
    int mk;
    rotor_status st = mask_of(r, t, &mk);
    if (!st) st = step_val(r, sfx, r->H, out);
    if (st) return st;
    if (old < 0) {
        int tv[3] = {*out, mk, x};
        return op(r, sfx, "RNN.mask", "Y[b,h] = M[b] * X[b,h]", r->dims_bh, tv, 3, *out);
    }
    int tv[5] = {*out, mk, x, mk, old}; /* M and K name the mask: a tensor appears once in an expression */
    return op(r, sfx, "RNN.hold", "Y[b,h] = M[b] * X[b,h] + (1 - K[b]) * V[b,h]", r->dims_bh, tv, 5, *out);
}

/* With masked steps, step t's outputs: *y (Y's entry, 0 after the sequence
 * ends, when Y is read) and the state carried on, held after the end. */
static rotor_status hold_step(rnn *r, int d, int64_t t, bool want_y, int h, int cs, int *hn, int *cn, int *y) {
    char sfx[64];
    rotor_status st = ROTOR_OK;
    *y = -1;
    if (want_y || h < 0) {
        snprintf(sfx, sizeof sfx, ".d%d.t%lld.y", d, (long long)t);
        if ((st = masked(r, sfx, t, *hn, -1, y))) return st;
    }
    if (h < 0) *hn = *y;
    else {
        snprintf(sfx, sizeof sfx, ".d%d.t%lld.hold", d, (long long)t);
        if ((st = masked(r, sfx, t, *hn, h, hn))) return st;
    }
    if (r->kind != RNN_LSTM) return ROTOR_OK;
    snprintf(sfx, sizeof sfx, ".d%d.t%lld.chold", d, (long long)t);
    return masked(r, sfx, t, *cn, cs, cn);
}

/* An output: the copy of one value, or a vendor Concat of several.  With
 * zero_empty (masked steps and an initial state), a batch entry of length 0
 * gets zeros rather than the initial state, as onnxruntime writes Y_h and Y_c
 * (ONNX is silent): each value is masked by step 0's mask first. */
static rotor_status output(rnn *r, const char *suffix, const int *vals, int nvals, int ov, bool zero_empty) {
    int gy, mk = -1, zv[2];
    rotor_status st = lw_gval(r->c, r->n, ov, &gy);
    if (!st && zero_empty) st = mask_of(r, 0, &mk);
    if (st) return st;
    if (nvals == 1) {
        int tv[3] = {gy, mk, vals[0]};
        if (zero_empty) return op(r, suffix, "RNN.mask", "Y[b,h] = M[b] * X[b,h]", r->dims_bh, tv, 3, gy);
        return op(r, suffix, "Identity", "Y[b,h] = X[b,h]", r->dims_bh, tv + 1, 2, gy);
    }
    if (zero_empty) {
        for (int d = 0; d < nvals && d < 2; d++) {
            char sfx[64];
            snprintf(sfx, sizeof sfx, "%s.d%d", suffix, d);
            if ((st = masked(r, sfx, 0, vals[d], -1, &zv[d]))) return st;
        }
        vals = zv;
    }
    char name[256];
    snprintf(name, sizeof name, "%s%s", r->n->name, suffix);
    return lw_op(r->c, r->n, name, "Concat", NULL, NULL, NULL, 0, vals, nvals, gy);
}

/* Every step of every direction; hs (Y's values, [S, D] step-major), hl and
 * cl (the last states) filled. */
static rotor_status unroll(rnn *r, bool reverse, bool want_y, int *hs, int *hl, int *cl) {
    rotor_status st = ROTOR_OK;
    for (int d = 0; d < r->D && !st; d++) {
        int xwb;
        if ((st = project(r, d, &xwb))) break;
        int h = r->gh0, cs = r->gc0;
        bool back = reverse || d == 1;
        for (int64_t k = 0; k < r->S && !st; k++) {
            int64_t t = back ? r->S - 1 - k : k;
            int hn = -1, cn = -1, y = -1;
            if (r->kind == RNN_LSTM) st = lstm_step(r, d, (int)t, xwb, h, cs, &hn, &cn);
            else if (r->kind == RNN_GRU) st = gru_step(r, d, (int)t, xwb, h, &hn);
            else st = rnn_step(r, d, (int)t, xwb, h, &hn);
            if (!st && r->gl >= 0) st = hold_step(r, d, t, want_y, h, cs, &hn, &cn, &y);
            hs[t * r->D + d] = r->gl >= 0 ? y : hn;
            h = hn;
            cs = cn;
        }
        hl[d] = h;
        cl[d] = cs;
    }
    return st;
}

static bool live_out(const ox_model *m, const ox_node *n, int i) {
    return n->nout > i && n->out[i] >= 0 && m->vals[n->out[i]].live;
}

rotor_status lw_recurrent(lower_ctx *c, const ox_node *n) {
    rnn r;
    memset(&r, 0, sizeof r);
    rotor_status st = rnn_setup(&r, c, n);
    ox_model *m = c->m;
    int64_t nh = r.S * r.D;
    int *hs = st ? NULL : malloc((size_t)nh * sizeof *hs), hl[2] = {-1, -1}, cl[2] = {-1, -1};
    if (!st && !hs) st = rotor_nomem(c->err);
    const Onnx__AttributeProto *dir = ox_attr(n, "direction");
    bool reverse = dir && dir->has_s && dir->s.len == 7 && !memcmp(dir->s.data, "reverse", 7);
    if (!st) st = unroll(&r, reverse, live_out(m, n, 0), hs, hl, cl);
    if (!st && live_out(m, n, 0)) st = output(&r, ".y", hs, (int)nh, n->out[0], false);
    if (!st && live_out(m, n, 1)) st = output(&r, ".y_h", hl, (int)r.D, n->out[1], r.gl >= 0 && r.gh0 >= 0);
    if (!st && r.kind == RNN_LSTM && live_out(m, n, 2))
        st = output(&r, ".y_c", cl, (int)r.D, n->out[2], r.gl >= 0 && r.gc0 >= 0);
    free(hs);
    free(r.masks);
    return st;
}
