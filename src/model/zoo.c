/* zoo.c — built-in models as graphs of tensor expressions (docs/zoo.md).
 *
 * Dimensions come from the model cards and papers cited at each entry.
 * Decisions (docs/zoo.md repeats them):
 *  - Activations are 2-D [tokens, features] between operators; attention
 *    reads its Q, K, V straight out of the fused QKV projection (or, when
 *    decoding, out of the KV-cache values), so no reshape operators appear.
 *  - Grouped-query attention is one expression with a group axis g and the
 *    heads per group r: S[b,g,r,m,n] += Q[b,g,r,m,k] * K[b,g,k,n].
 *  - Normalisation, softmax, embedding lookups, pooling and positional adds
 *    are vendor ops (T10's fallback; docs/graph.md has their cost); every
 *    layer is pre-norm (BERT's post-norm has the same operators and weights).
 *  - Decode: one new token per sequence attends over a cache of seq
 *    positions (values with role kv-cache, [batch, kv_heads, seq, head_dim]).
 *  - Weights are counted once however many operators read them (tied
 *    embeddings). BatchNorm's running statistics are buffers, not weights. */
#include "rotor/model/zoo.h"

#include "rotor/base/suggest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- builder ------------------------------------------------------------ */

typedef struct zb {
    rotor_graph *g;
    rotor_error *err;
    rotor_status st;
} zb;

static int val(zb *z, rotor_role role, int rank, const int64_t *shape, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int val(zb *z, rotor_role role, int rank, const int64_t *shape, const char *fmt, ...) {
    if (z->st) return -1;
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    int v = -1;
    z->st = rotor_graph_add_value(z->g, name, ROTOR_DTYPE_F16, rank, shape, role, &v, z->err);
    return v;
}

static int val2(zb *z, rotor_role role, int64_t r, int64_t c, const char *name) {
    int64_t s[2] = {r, c};
    return val(z, role, c ? 2 : 1, s, "%s", name);
}

/* One operator: expression tensors map to tv[0..ntv) (output first),
 * through views[t] where the tensor is not its value in row-major order
 * (views NULL: every tensor is). */
static void opv(zb *z, const char *name, const char *type, const char *expr, const char *dims,
                const int *tv, int ntv, const int *in, int nin, int outv, const rotor_view *views) {
    if (z->st) return;
    rotor_op_desc d = {.name = name, .type = type, .expr = expr, .dims = dims, .inputs = in,
                       .ninputs = nin, .outputs = &outv, .noutputs = 1, .view = views};
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = t < ntv ? tv[t] : -1;
    z->st = rotor_graph_add_op(z->g, &d, NULL, z->err);
}

static void op(zb *z, const char *name, const char *type, const char *expr, const char *dims,
               const int *tv, int ntv, const int *in, int nin, int outv) {
    opv(z, name, type, expr, dims, tv, ntv, in, nin, outv, NULL);
}

/* A view of a 2-D value: tensor dimension d moves value dimension dim[d]
 * by step[d]; (row0, col0) is the corner. */
static rotor_view view2(int nd, const int8_t *dim, const int64_t *step, int64_t row0, int64_t col0) {
    rotor_view w = {.set = true, .offset = {row0, col0}};
    for (int d = 0; d < nd; d++) w.dim[d] = dim[d], w.step[d] = step[d];
    return w;
}

/* A vendor op reading in[0..nin) into a new activation of rows x cols. */
static int vendor(zb *z, const char *name, const char *type, const int *in, int nin, int64_t rows,
                  int64_t cols) {
    int y = val2(z, ROTOR_ROLE_ACTIVATION, rows, cols, name);
    op(z, name, type, NULL, NULL, NULL, 0, in, nin, y);
    return y;
}

/* y + b, b [n] broadcast over the rows of y [t, n]: name.biased. */
static int bias_add(zb *z, const char *name, int y, int64_t t, int64_t n) {
    char nm[160], dims[96];
    snprintf(nm, sizeof nm, "%s.bias", name);
    int b = val2(z, ROTOR_ROLE_WEIGHT, n, 0, nm);
    snprintf(nm, sizeof nm, "%s.biased", name);
    int yb = val2(z, ROTOR_ROLE_ACTIVATION, t, n, nm);
    snprintf(dims, sizeof dims, "m=%lld,n=%lld", (long long)t, (long long)n);
    int in2[2] = {y, b}, tv2[3] = {yb, y, b};
    snprintf(nm, sizeof nm, "%s.bias_add", name);
    op(z, nm, "Add", "Y[m,n] = X[m,n] + Bv[n]", dims, tv2, 3, in2, 2, yb);
    return yb;
}

/* y = x W (+ b): [t, k] x [k, n]. */
static int linear(zb *z, const char *name, int x, int64_t t, int64_t k, int64_t n, bool bias) {
    char nm[160], dims[96];
    snprintf(nm, sizeof nm, "%s.weight", name);
    int w = val2(z, ROTOR_ROLE_WEIGHT, k, n, nm);
    snprintf(nm, sizeof nm, "%s.out", name);
    int y = val2(z, ROTOR_ROLE_ACTIVATION, t, n, nm);
    snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)t, (long long)k, (long long)n);
    int in[2] = {x, w}, tv[3] = {y, x, w};
    op(z, name, "MatMul", "C[m,n] += A[m,k] * B[k,n]", dims, tv, 3, in, 2, y);
    return bias ? bias_add(z, name, y, t, n) : y;
}

/* Element-wise y = f(x) or x + r over [t, n]. */
static int eltwise(zb *z, const char *name, const char *type, const char *expr, int x, int r,
                   int64_t t, int64_t n) {
    char dims[64];
    snprintf(dims, sizeof dims, "m=%lld,n=%lld", (long long)t, (long long)n);
    int y = val2(z, ROTOR_ROLE_ACTIVATION, t, n, name);
    int in[2] = {x, r}, tv[3] = {y, x, r};
    op(z, name, type, expr, dims, tv, r >= 0 ? 3 : 2, in, r >= 0 ? 2 : 1, y);
    return y;
}

/* Normalisation with gamma (and beta) over the last dimension: a vendor op. */
static int norm(zb *z, const char *name, int x, int64_t t, int64_t d, bool rms) {
    char nm[160];
    snprintf(nm, sizeof nm, "%s.gamma", name);
    int in[3] = {x, val2(z, ROTOR_ROLE_WEIGHT, d, 0, nm), -1};
    int nin = 2;
    if (!rms) {
        snprintf(nm, sizeof nm, "%s.beta", name);
        in[nin++] = val2(z, ROTOR_ROLE_WEIGHT, d, 0, nm);
    }
    return vendor(z, name, rms ? "RMSNormalization" : "LayerNormalization", in, nin, t, d);
}

/* ---- transformers ------------------------------------------------------- */

/* DiT's adaLN-Zero (Peebles & Xie 2023, §3.2): the conditioning's
 * projection [b, K d] holds K chunks of d columns per image (layer: shift,
 * scale and gate for attention, then for the MLP; final layer: shift and
 * scale), each read by the rows [b q, d] of its image through a view of
 * its columns. */
static rotor_view ada_chunk(int64_t k, int64_t d) {
    return view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, k * d);
}

/* modulate(x, shift, scale) = x (1 + scale) + shift over x [b q, d]. */
static int modulate(zb *z, const char *name, int x, int ada, int64_t shift, int64_t scale, int64_t b, int64_t q,
                    int64_t d) {
    char dims[96];
    snprintf(dims, sizeof dims, "b=%lld,q=%lld,n=%lld", (long long)b, (long long)q, (long long)d);
    int y = val2(z, ROTOR_ROLE_ACTIVATION, b * q, d, name);
    int in[2] = {x, ada}, tv[4] = {y, x, ada, ada};
    rotor_view v[4] = {{0}};
    v[2] = ada_chunk(scale, d), v[3] = ada_chunk(shift, d);
    opv(z, name, "Mul", "Y[b,q,n] = X[b,q,n] * (1 + S[b,n]) + H[b,n]", dims, tv, 4, in, 2, y, v);
    return y;
}

/* The gated residual x + gate * r over [b q, d] (adaLN-Zero's gate). */
static int gated_add(zb *z, const char *name, int x, int r, int ada, int64_t gate, int64_t b, int64_t q,
                     int64_t d) {
    char dims[96];
    snprintf(dims, sizeof dims, "b=%lld,q=%lld,n=%lld", (long long)b, (long long)q, (long long)d);
    int y = val2(z, ROTOR_ROLE_ACTIVATION, b * q, d, name);
    int in[3] = {x, ada, r}, tv[4] = {y, x, ada, r};
    rotor_view v[4] = {{0}};
    v[2] = ada_chunk(gate, d);
    opv(z, name, "Add", "Y[b,q,n] = X[b,q,n] + G[b,n] * R[b,q,n]", dims, tv, 4, in, 3, y, v);
    return y;
}

typedef enum { ACT_GELU, ACT_RELU } act_kind;

typedef struct tf_spec {
    int64_t d, layers, heads, kv_heads, head_dim, ffn;
    bool gated;        /* SwiGLU / GeGLU: gate and up projections */
    act_kind act;      /* of the FFN (or of the gate) */
    bool bias;         /* linear layers carry biases */
    bool rms;          /* RMSNorm instead of LayerNorm */
    int norms;         /* normalisations per layer (Gemma 2: 4) */
    bool adaln;        /* DiT: adaLN-Zero modulation, 6d per layer */
} tf_spec;

/* One layer over x [t, d]; batch b, query length q, context c.  kc/vc are
 * KV-cache values when decoding (else -1). */
static int tf_layer(zb *z, const tf_spec *s, int l, int x, int64_t b, int64_t q, int64_t c, int kc,
                    int vc, int cond) {
    int64_t t = b * q, d = s->d, hd = s->head_dim, h = s->heads, g = s->kv_heads;
    char nm[96], dims[160];
    int ada = -1;
    if (s->adaln) { /* modulation: shift, scale, gate for attention and MLP */
        snprintf(nm, sizeof nm, "l%d.adaln", l);
        ada = linear(z, nm, cond, b, d, 6 * d, true);
    }
    snprintf(nm, sizeof nm, "l%d.norm1", l);
    int n1 = norm(z, nm, x, t, d, s->rms);
    if (ada >= 0) {
        snprintf(nm, sizeof nm, "l%d.modulate1", l);
        n1 = modulate(z, nm, n1, ada, 0, 1, b, q, d);
    }
    snprintf(nm, sizeof nm, "l%d.qkv", l);
    int qkv = linear(z, nm, n1, t, d, (h + 2 * g) * hd, s->bias);
    int kv_k = kc >= 0 ? kc : qkv, kv_v = vc >= 0 ? vc : qkv;
    /* scores [b*h, q, c] */
    int64_t sc[3] = {b * h, q, c};
    int scores = val(z, ROTOR_ROLE_ACTIVATION, 3, sc, "l%d.scores", l);
    snprintf(dims, sizeof dims, "b=%lld,g=%lld,r=%lld,m=%lld,k=%lld,n=%lld", (long long)b,
             (long long)g, (long long)(h / g), (long long)q, (long long)hd, (long long)c);
    snprintf(nm, sizeof nm, "l%d.attn_scores", l);
    int in[2] = {qkv, kv_k}, tv[3] = {scores, qkv, kv_k};
    /* Q, K and V are column blocks of the QKV rows [b*q + m, ...]: head
     * (g, r) at columns (g*(h/g) + r)*hd, K's group g at (h + g)*hd and
     * V's at (h + g + g')*hd (docs/zoo.md); a KV cache is [b, g, c, hd]. */
    int64_t r = h / g;
    rotor_view av[3] = {{0}};
    av[1] = view2(5, (int8_t[]){0, 1, 1, 0, 1}, (int64_t[]){q, r * hd, hd, 1, 1}, 0, 0);
    av[2] = kc >= 0 ? (rotor_view){.set = true, .dim = {0, 1, 3, 2}, .step = {1, 1, 1, 1}}
                    : view2(4, (int8_t[]){0, 1, 1, 0}, (int64_t[]){c, hd, 1, 1}, 0, h * hd);
    opv(z, nm, "MatMul", "S[b,g,r,m,n] += Q[b,g,r,m,k] * K[b,g,k,n]", dims, tv, 3, in, 2, scores, av);
    snprintf(nm, sizeof nm, "l%d.softmax", l);
    int probs = val(z, ROTOR_ROLE_ACTIVATION, 3, sc, "%s", nm);
    op(z, nm, "Softmax", NULL, NULL, NULL, 0, &scores, 1, probs);
    snprintf(nm, sizeof nm, "l%d.context", l);
    int ctx = val2(z, ROTOR_ROLE_ACTIVATION, t, h * hd, nm);
    int in2[2] = {probs, kv_v}, tv2[3] = {ctx, probs, kv_v};
    /* the context goes back to rows [b*q + m, (g*(h/g) + r)*hd + k] */
    rotor_view cv[3] = {{0}};
    cv[0] = view2(5, (int8_t[]){0, 1, 1, 0, 1}, (int64_t[]){q, r * hd, hd, 1, 1}, 0, 0);
    if (vc < 0) cv[2] = view2(4, (int8_t[]){0, 1, 0, 1}, (int64_t[]){c, hd, 1, 1}, 0, (h + g) * hd);
    opv(z, nm, "MatMul", "O[b,g,r,m,k] += P[b,g,r,m,n] * V[b,g,n,k]", dims, tv2, 3, in2, 2, ctx, cv);
    snprintf(nm, sizeof nm, "l%d.attn_out", l);
    int ao = linear(z, nm, ctx, t, h * hd, d, s->bias);
    if (s->norms == 4) {
        snprintf(nm, sizeof nm, "l%d.post_attn_norm", l);
        ao = norm(z, nm, ao, t, d, s->rms);
    }
    snprintf(nm, sizeof nm, "l%d.residual1", l);
    x = ada >= 0 ? gated_add(z, nm, x, ao, ada, 2, b, q, d)
                 : eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", x, ao, t, d);
    snprintf(nm, sizeof nm, "l%d.norm2", l);
    int n2 = norm(z, nm, x, t, d, s->rms);
    if (ada >= 0) {
        snprintf(nm, sizeof nm, "l%d.modulate2", l);
        n2 = modulate(z, nm, n2, ada, 3, 4, b, q, d);
    }
    int hmid;
    const char *fn = s->act == ACT_GELU ? "gelu" : "relu";
    char ex[96];
    if (s->gated) {
        snprintf(nm, sizeof nm, "l%d.gate_up", l);
        int gu = linear(z, nm, n2, t, d, 2 * s->ffn, s->bias);
        snprintf(nm, sizeof nm, "l%d.glu", l);
        snprintf(ex, sizeof ex, "Y[m,n] = %s(G[m,n]) * U[m,n]", s->act == ACT_GELU ? "gelu" : "silu");
        char d2[64];
        snprintf(d2, sizeof d2, "m=%lld,n=%lld", (long long)t, (long long)s->ffn);
        hmid = val2(z, ROTOR_ROLE_ACTIVATION, t, s->ffn, nm);
        int in3[1] = {gu}, tv3[3] = {hmid, gu, gu};
        /* the gate is the first ffn columns of gate_up, the up projection the rest */
        rotor_view gv[3] = {{0}};
        gv[1] = view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, 0);
        gv[2] = view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, s->ffn);
        opv(z, nm, "Mul", ex, d2, tv3, 3, in3, 1, hmid, gv);
    } else {
        snprintf(nm, sizeof nm, "l%d.ffn_up", l);
        int up = linear(z, nm, n2, t, d, s->ffn, s->bias);
        snprintf(nm, sizeof nm, "l%d.act", l);
        snprintf(ex, sizeof ex, "Y[m,n] = %s(X[m,n])", fn);
        hmid = eltwise(z, nm, s->act == ACT_GELU ? "Gelu" : "Relu", ex, up, -1, t, s->ffn);
    }
    snprintf(nm, sizeof nm, "l%d.ffn_down", l);
    int dn = linear(z, nm, hmid, t, s->ffn, d, s->bias);
    if (s->norms == 4) {
        snprintf(nm, sizeof nm, "l%d.post_ffn_norm", l);
        dn = norm(z, nm, dn, t, d, s->rms);
    }
    snprintf(nm, sizeof nm, "l%d.residual2", l);
    if (ada >= 0) return gated_add(z, nm, x, dn, ada, 5, b, q, d);
    return eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", x, dn, t, d);
}

/* One RetNet layer (Sun et al. 2023, §2.2-2.3) over x [t, d]; batch b, query
 * length q, context c.  Multi-scale retention replaces attention: Q, K
 * [d] and V, G [2d] come from one fused projection (no biases), each head
 * h of dk = d/heads and dv = 2d/heads.  Prefill takes the parallel form,
 *     O = ((Q K^T) .* D) V,   D[h,m,n] = gamma_h^(m-n) for m >= n, else 0,
 * with D an input (a fixed table, like a causal mask); decode takes the
 * recurrent form over the state S [b, heads, dk, dv] (role kv-cache),
 *     S' = gamma_h S + K^T V,   O = Q S'.
 * Then a GroupNorm per head (no affine, as torchscale's), the swish gate
 * swish(G) .* O, the output projection 2d -> d and the residual; the FFN is
 * GELU d -> 2d -> d without biases (§3.1's parameter allocation).  Decision:
 * xPos's rotation of Q and K is left out, as RoPE is for Llama (an
 * element-wise op of a few FLOPs per element), and so is the retention
 * scores' row normalisation (folded into the GroupNorm's scale invariance,
 * §2.3). */
static int retnet_layer(zb *z, const tf_spec *s, int l, int x, int64_t b, int64_t q, int64_t c, int state,
                        int decay) {
    int64_t t = b * q, d = s->d, h = s->heads, dk = d / h, dv = 2 * d / h;
    char nm[96], dims[160];
    snprintf(nm, sizeof nm, "l%d.norm1", l);
    int n1 = norm(z, nm, x, t, d, false);
    snprintf(nm, sizeof nm, "l%d.qkvg", l);
    int p = linear(z, nm, n1, t, d, 6 * d, false);
    snprintf(nm, sizeof nm, "l%d.retention", l);
    int ctx = val2(z, ROTOR_ROLE_ACTIVATION, t, 2 * d, nm);
    if (state < 0) { /* the parallel form */
        int64_t sc[3] = {b * h, q, c};
        int scores = val(z, ROTOR_ROLE_ACTIVATION, 3, sc, "l%d.ret_scores", l);
        snprintf(dims, sizeof dims, "b=%lld,h=%lld,m=%lld,k=%lld,n=%lld", (long long)b, (long long)h, (long long)q,
                 (long long)dk, (long long)c);
        snprintf(nm, sizeof nm, "l%d.ret_scores", l);
        int in[2] = {p, p}, tv[3] = {scores, p, p};
        rotor_view sv[3] = {{0}, view2(4, (int8_t[]){0, 1, 0, 1}, (int64_t[]){q, dk, 1, 1}, 0, 0),
                            view2(4, (int8_t[]){0, 1, 1, 0}, (int64_t[]){c, dk, 1, 1}, 0, d)};
        opv(z, nm, "MatMul", "S[b,h,m,n] += Q[b,h,m,k] * K[b,h,k,n]", dims, tv, 3, in, 1, scores, sv);
        snprintf(nm, sizeof nm, "l%d.ret_decay", l);
        int decayed = val(z, ROTOR_ROLE_ACTIVATION, 3, sc, "%s", nm);
        snprintf(dims, sizeof dims, "b=%lld,h=%lld,m=%lld,n=%lld", (long long)b, (long long)h, (long long)q,
                 (long long)c);
        int in2[2] = {scores, decay}, tv2[3] = {decayed, scores, decay};
        op(z, nm, "Mul", "Y[b,h,m,n] = S[b,h,m,n] * D[h,m,n]", dims, tv2, 3, in2, 2, decayed);
        snprintf(dims, sizeof dims, "b=%lld,h=%lld,m=%lld,n=%lld,v=%lld", (long long)b, (long long)h, (long long)q,
                 (long long)c, (long long)dv);
        snprintf(nm, sizeof nm, "l%d.retention", l);
        int in3[2] = {decayed, p}, tv3[3] = {ctx, decayed, p};
        rotor_view cv[3] = {view2(4, (int8_t[]){0, 1, 0, 1}, (int64_t[]){q, dv, 1, 1}, 0, 0), {0},
                            view2(4, (int8_t[]){0, 1, 0, 1}, (int64_t[]){c, dv, 1, 1}, 0, 2 * d)};
        opv(z, nm, "MatMul", "O[b,h,m,v] += P[b,h,m,n] * V[b,h,n,v]", dims, tv3, 3, in3, 2, ctx, cv);
    } else { /* the recurrent form: one token per sequence */
        int64_t ss[4] = {b, h, dk, dv};
        int next = val(z, ROTOR_ROLE_ACTIVATION, 4, ss, "l%d.state_next", l);
        snprintf(dims, sizeof dims, "b=%lld,h=%lld,k=%lld,v=%lld", (long long)b, (long long)h, (long long)dk,
                 (long long)dv);
        snprintf(nm, sizeof nm, "l%d.state_next", l);
        int in[3] = {state, decay, p}, tv[5] = {next, state, decay, p, p};
        rotor_view uv[5] = {{0}, {0}, {0}, view2(3, (int8_t[]){0, 1, 1}, (int64_t[]){1, dk, 1}, 0, d),
                            view2(3, (int8_t[]){0, 1, 1}, (int64_t[]){1, dv, 1}, 0, 2 * d)};
        opv(z, nm, "Add", "S2[b,h,k,v] = S[b,h,k,v] * Gm[h] + K[b,h,k] * V[b,h,v]", dims, tv, 5, in, 3, next, uv);
        if (!z->st) z->g->values[next].is_output = true;
        snprintf(nm, sizeof nm, "l%d.retention", l);
        int in2[2] = {p, next}, tv2[3] = {ctx, p, next};
        rotor_view rv[3] = {view2(3, (int8_t[]){0, 1, 1}, (int64_t[]){1, dv, 1}, 0, 0),
                            view2(3, (int8_t[]){0, 1, 1}, (int64_t[]){1, dk, 1}, 0, 0), {0}};
        opv(z, nm, "MatMul", "O[b,h,v] += Q[b,h,k] * S[b,h,k,v]", dims, tv2, 3, in2, 2, ctx, rv);
    }
    snprintf(nm, sizeof nm, "l%d.group_norm", l);
    int gn = vendor(z, nm, "GroupNormalization", &ctx, 1, t, 2 * d);
    snprintf(nm, sizeof nm, "l%d.gate", l);
    snprintf(dims, sizeof dims, "m=%lld,n=%lld", (long long)t, (long long)(2 * d));
    int gated = val2(z, ROTOR_ROLE_ACTIVATION, t, 2 * d, nm);
    int in4[2] = {p, gn}, tv4[3] = {gated, p, gn};
    rotor_view gv[3] = {{0}, view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, 4 * d)};
    opv(z, nm, "Mul", "Y[m,n] = silu(G[m,n]) * O[m,n]", dims, tv4, 3, in4, 2, gated, gv);
    snprintf(nm, sizeof nm, "l%d.ret_out", l);
    int ro = linear(z, nm, gated, t, 2 * d, d, false);
    snprintf(nm, sizeof nm, "l%d.residual1", l);
    x = eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", x, ro, t, d);
    snprintf(nm, sizeof nm, "l%d.norm2", l);
    int n2 = norm(z, nm, x, t, d, false);
    snprintf(nm, sizeof nm, "l%d.ffn_up", l);
    int up = linear(z, nm, n2, t, d, s->ffn, false);
    snprintf(nm, sizeof nm, "l%d.act", l);
    int hm = eltwise(z, nm, "Gelu", "Y[m,n] = gelu(X[m,n])", up, -1, t, s->ffn);
    snprintf(nm, sizeof nm, "l%d.ffn_down", l);
    int dn = linear(z, nm, hm, t, s->ffn, d, false);
    snprintf(nm, sizeof nm, "l%d.residual2", l);
    return eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", x, dn, t, d);
}

typedef enum { FAM_BERT, FAM_VIT, FAM_DECODER, FAM_DIT, FAM_RETNET } family;

typedef struct tf_model {
    tf_spec s;
    family fam;
    int64_t vocab, positions;   /* learned position table rows (0: none) */
    bool tied;                  /* LM head shares the embedding table */
    int64_t classes, patch, image, channels; /* ViT / DiT */
    int64_t default_seq;
    /* Gemma 2's local layers (every other one, the first included) attend
     * only the last `window` positions (Gemma Team 2024, §2: 4096); 0: every
     * layer attends the whole context */
    int64_t window;
} tf_model;

/* The model's layers over x: RetNet's retention layers or the
 * transformer's, with their KV caches (or states) when decoding. */
static int tf_layers(zb *z, const tf_model *m, const tf_spec *s, const rotor_zoo_options *o, int x, int cond,
                     int64_t b, int64_t q, int64_t c) {
    bool decode = o->phase == ROTOR_PHASE_DECODE;
    int64_t d = s->d;
    int decay = -1; /* RetNet's decay: D [heads, q, c] (parallel) or gamma [heads] (recurrent) */
    if (m->fam == FAM_RETNET) {
        int64_t ds[3] = {s->heads, q, c};
        decay = decode ? val2(z, ROTOR_ROLE_ACTIVATION, s->heads, 0, "decay.gamma")
                       : val(z, ROTOR_ROLE_ACTIVATION, 3, ds, "decay.mask");
    }
    for (int l = 0; l < o->layers && !z->st && m->fam == FAM_RETNET; l++) {
        int st = -1;
        if (decode) {
            int64_t ss[4] = {b, s->heads, d / s->heads, 2 * d / s->heads};
            st = val(z, ROTOR_ROLE_KV_CACHE, 4, ss, "l%d.state", l);
        }
        x = retnet_layer(z, s, l, x, b, q, c, st, decay);
    }
    for (int l = 0; l < o->layers && !z->st && m->fam != FAM_RETNET; l++) {
        int kc = -1, vc = -1;
        /* a local layer's decode step reads a cache of its window's last
         * positions (a ring); its prefill beyond the window is refused
         * (rotor_zoo_build) */
        int64_t cl = m->window && l % 2 == 0 && c > m->window ? m->window : c;
        if (decode) {
            int64_t cs[4] = {b, s->kv_heads, cl, s->head_dim};
            kc = val(z, ROTOR_ROLE_KV_CACHE, 4, cs, "l%d.k_cache", l);
            vc = val(z, ROTOR_ROLE_KV_CACHE, 4, cs, "l%d.v_cache", l);
        }
        x = tf_layer(z, s, l, x, b, q, cl, kc, vc, cond);
    }
    return x;
}

static void tf_build(zb *z, const tf_model *m, const rotor_zoo_options *o) {
    tf_spec spec = m->s;
    spec.adaln = m->fam == FAM_DIT; /* DiT conditions every layer (adaLN-Zero) */
    const tf_spec *s = &spec;
    int64_t b = o->batch, d = s->d;
    bool decode = o->phase == ROTOR_PHASE_DECODE;
    int64_t c = o->seq, q = decode ? 1 : o->seq, t;
    int x, cond = -1, table = -1;
    if (m->fam == FAM_VIT || m->fam == FAM_DIT) {
        /* patch embedding: a convolution with stride = kernel = patch */
        int64_t side = m->image / m->patch;
        q = c = side * side + (m->fam == FAM_VIT ? 1 : 0);
        int64_t ishape[4] = {b, m->channels, m->image, m->image};
        int img = val(z, ROTOR_ROLE_ACTIVATION, 4, ishape, "image");
        int64_t wshape[4] = {d, m->channels, m->patch, m->patch};
        int w = val(z, ROTOR_ROLE_WEIGHT, 4, wshape, "patch_embed.weight");
        int pb = val2(z, ROTOR_ROLE_WEIGHT, d, 0, "patch_embed.bias");
        int64_t pshape[4] = {b, d, side, side};
        int pe = val(z, ROTOR_ROLE_ACTIVATION, 4, pshape, "patch_embed");
        char ex[128], dims[128];
        snprintf(ex, sizeof ex, "O[b,f,h,w] += I[b,c,%lld*h+kh,%lld*w+kw] * W[f,c,kh,kw]",
                 (long long)m->patch, (long long)m->patch);
        snprintf(dims, sizeof dims, "b=%lld,f=%lld,c=%lld,h=%lld,w=%lld,kh=%lld,kw=%lld", (long long)b,
                 (long long)d, (long long)m->channels, (long long)side, (long long)side,
                 (long long)m->patch, (long long)m->patch);
        int in[2] = {img, w}, tv[3] = {pe, img, w};
        op(z, "patch_embed", "Conv", ex, dims, tv, 3, in, 2, pe);
        t = b * q;
        int in2[4] = {pe, pb, -1, -1}, nin = 2;
        if (m->fam == FAM_VIT) {
            in2[nin++] = val2(z, ROTOR_ROLE_WEIGHT, 1, d, "cls_token");
            in2[nin++] = val2(z, ROTOR_ROLE_WEIGHT, q, d, "pos_embed");
        }
        /* DiT's position embedding is a fixed sin-cos table: no weight */
        x = vendor(z, "embed", "Add", in2, nin, t, d);
        if (m->fam == FAM_DIT) {
            /* timestep MLP (256-dim frequency input) and class embedding */
            int tf = val2(z, ROTOR_ROLE_ACTIVATION, b, 256, "t_freq");
            int t1 = linear(z, "t_embed.fc1", tf, b, 256, d, true);
            int t1a = eltwise(z, "t_embed.silu", "Sigmoid", "Y[m,n] = silu(X[m,n])", t1, -1, b, d);
            int temb = linear(z, "t_embed.fc2", t1a, b, d, d, true);
            int yl = val2(z, ROTOR_ROLE_ACTIVATION, b, 1, "label");
            int ytab = val2(z, ROTOR_ROLE_WEIGHT, m->classes + 1, d, "y_embed.table");
            int in3[2] = {ytab, yl};
            int yemb = vendor(z, "y_embed", "Gather", in3, 2, b, d);
            cond = eltwise(z, "cond", "Add", "Y[m,n] = X[m,n] + R[m,n]", temb, yemb, b, d);
            cond = eltwise(z, "cond.silu", "Sigmoid", "Y[m,n] = silu(X[m,n])", cond, -1, b, d);
        }
    } else if (o->layers_only) { /* the layers alone: from the hidden state */
        t = b * q;
        x = val2(z, ROTOR_ROLE_ACTIVATION, t, d, "hidden");
    } else {
        t = b * q;
        int ids = val2(z, ROTOR_ROLE_ACTIVATION, b, q, "input_ids");
        table = val2(z, ROTOR_ROLE_WEIGHT, m->vocab, d, "embed.table");
        int in[4] = {table, ids, -1, -1}, nin = 2; /* ONNX order: data, then indices */
        if (m->positions) in[nin++] = val2(z, ROTOR_ROLE_WEIGHT, m->positions, d, "embed.positions");
        if (m->fam == FAM_BERT) in[nin++] = val2(z, ROTOR_ROLE_WEIGHT, 2, d, "embed.token_type");
        x = vendor(z, "embed", "Gather", in, nin, t, d);
        if (m->fam == FAM_BERT) x = norm(z, "embed.norm", x, t, d, false);
    }
    x = tf_layers(z, m, s, o, x, cond, b, q, c);
    if (o->layers_only) {
        if (!z->st) z->g->values[x].is_output = true;
        return;
    }
    int out;
    switch (m->fam) {
    case FAM_BERT: {
        int pool_in[1] = {x};
        int cls = vendor(z, "pool.cls", "Gather", pool_in, 1, b, d);
        int p = linear(z, "pooler", cls, b, d, d, true);
        out = eltwise(z, "pooler.tanh", "Tanh", "Y[m,n] = tanh(X[m,n])", p, -1, b, d);
        break;
    }
    case FAM_VIT: {
        x = norm(z, "final_norm", x, t, d, false);
        int pool_in[1] = {x};
        int cls = vendor(z, "pool.cls", "Gather", pool_in, 1, b, d);
        out = linear(z, "head", cls, b, d, m->classes, true);
        break;
    }
    case FAM_DIT: {
        int ada = linear(z, "final.adaln", cond, b, d, 2 * d, true);
        int xn = modulate(z, "final.modulate", norm(z, "final_norm", x, t, d, false), ada, 0, 1, b, q, d);
        out = linear(z, "final.linear", xn, t, d, m->patch * m->patch * 2 * m->channels, true);
        break;
    }
    default: {
        x = norm(z, "final_norm", x, t, d, s->rms);
        if (m->tied) {
            char dims[96];
            snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)t, (long long)d,
                     (long long)m->vocab);
            out = val2(z, ROTOR_ROLE_ACTIVATION, t, m->vocab, "logits");
            /* logits = x E^T with the embedding table E [vocab, d] */
            int in[2] = {x, table}, tv[3] = {out, x, table};
            op(z, "lm_head", "MatMul", "C[m,n] += A[m,k] * E[n,k]", dims, tv, 3, in, 2, out);
        } else {
            out = linear(z, "lm_head", x, t, d, m->vocab, false);
        }
        break;
    }
    }
    if (!z->st) z->g->values[out].is_output = true;
}

/* ---- convolutional networks -------------------------------------------- */

typedef struct conv_ctx {
    zb *z;
    int64_t b;
    int n;   /* operators so far, for names */
} conv_ctx;

/* A convolution's input [b, cin, h, w] and window; dw: depthwise (cout ==
 * cin, one k x k filter per channel, W[c,kh,kw]). */
typedef struct conv_shape {
    int64_t cin, cout, h, w, k, stride, pad;
    bool dw;
} conv_shape;

#define SQ(cin_, cout_, h_, k_, s_, p_) ((conv_shape){cin_, cout_, h_, h_, k_, s_, p_, false})
#define DW(c_, h_, k_, s_, p_) ((conv_shape){c_, c_, h_, h_, k_, s_, p_, true})

typedef enum { CA_NONE, CA_RELU, CA_RELU6 } conv_act;

/* Element-wise y = f(x) (r < 0) or x op r over [b, c, h, w]. */
static int ew4(conv_ctx *cc, const char *name, const char *type, const char *expr, int x, int r, int64_t c,
               int64_t h, int64_t w) {
    zb *z = cc->z;
    char dims[128];
    int64_t os[4] = {cc->b, c, h, w};
    snprintf(dims, sizeof dims, "b=%lld,c=%lld,h=%lld,w=%lld", (long long)cc->b, (long long)c, (long long)h,
             (long long)w);
    int y = val(z, ROTOR_ROLE_ACTIVATION, 4, os, "%s", name);
    int in[2] = {x, r}, tv[3] = {y, x, r};
    op(z, name, type, expr, dims, tv, r >= 0 ? 3 : 2, in, r >= 0 ? 2 : 1, y);
    return y;
}

/* name.relu (ReLU) or name.relu6 (ReLU6, ONNX's Clip to [0, 6]) of x. */
static int act4(conv_ctx *cc, const char *name, conv_act a, int x, int64_t c, int64_t h, int64_t w) {
    char nm[128];
    if (a == CA_NONE) return x;
    snprintf(nm, sizeof nm, "%s.%s", name, a == CA_RELU ? "relu" : "relu6");
    return a == CA_RELU ? ew4(cc, nm, "Relu", "Y[b,c,h,w] = relu(X[b,c,h,w])", x, -1, c, h, w)
                        : ew4(cc, nm, "Clip", "Y[b,c,h,w] = min(relu(X[b,c,h,w]), 6)", x, -1, c, h, w);
}

/* A convolution without bias, its output name.out [b, cout, ho, wo]. */
static int conv4(conv_ctx *cc, const char *name, int x, const conv_shape *s, int64_t *ho, int64_t *wo) {
    zb *z = cc->z;
    *ho = (s->h + 2 * s->pad - s->k) / s->stride + 1;
    *wo = (s->w + 2 * s->pad - s->k) / s->stride + 1;
    char ex[128], dims[160], win[64];
    int64_t ws[4] = {s->cout, s->dw ? 1 : s->cin, s->k, s->k}, os[4] = {cc->b, s->cout, *ho, *wo};
    int w = val(z, ROTOR_ROLE_WEIGHT, 4, ws, "%s.weight", name);
    int y = val(z, ROTOR_ROLE_ACTIVATION, 4, os, "%s.out", name);
    if (s->stride == 1) snprintf(win, sizeof win, "h+kh,w+kw");
    else snprintf(win, sizeof win, "%lld*h+kh,%lld*w+kw", (long long)s->stride, (long long)s->stride);
    if (s->dw) { /* one filter per channel: the depthwise convolution */
        snprintf(ex, sizeof ex, "O[b,c,h,w] += I[b,c,%s] * W[c,kh,kw]", win);
        snprintf(dims, sizeof dims, "b=%lld,c=%lld,h=%lld,w=%lld,kh=%lld,kw=%lld", (long long)cc->b,
                 (long long)s->cout, (long long)*ho, (long long)*wo, (long long)s->k, (long long)s->k);
    } else {
        snprintf(ex, sizeof ex, "O[b,f,h,w] += I[b,c,%s] * W[f,c,kh,kw]", win);
        snprintf(dims, sizeof dims, "b=%lld,f=%lld,c=%lld,h=%lld,w=%lld,kh=%lld,kw=%lld", (long long)cc->b,
                 (long long)s->cout, (long long)s->cin, (long long)*ho, (long long)*wo, (long long)s->k,
                 (long long)s->k);
    }
    int in[2] = {x, w}, tv[3] = {y, x, w};
    /* the window reads the input from -pad: outside it, zeros */
    rotor_view iv[3] = {{0}};
    iv[1] = (rotor_view){.set = true, .dim = {0, 1, 2, 3}, .step = {1, 1, 1, 1},
                         .offset = {0, 0, -s->pad, -s->pad}};
    opv(z, name, "Conv", ex, dims, tv, 3, in, 2, y, iv);
    return y;
}

/* BatchNormalization (gamma, beta; the running statistics are buffers) of
 * x [b, c, h, w], as the vendor op nm. */
static int bn4(conv_ctx *cc, const char *nm, int x, int64_t c, int64_t h, int64_t w) {
    zb *z = cc->z;
    int64_t cs[1] = {c}, os[4] = {cc->b, c, h, w};
    int bin[3] = {x, val(z, ROTOR_ROLE_WEIGHT, 1, cs, "%s.gamma", nm), val(z, ROTOR_ROLE_WEIGHT, 1, cs, "%s.beta", nm)};
    int bn = val(z, ROTOR_ROLE_ACTIVATION, 4, os, "%s", nm);
    op(z, nm, "BatchNormalization", NULL, NULL, NULL, 0, bin, 3, bn);
    return bn;
}

/* conv (no bias) + BatchNorm name.bn [+ ReLU or ReLU6] over a square input. */
static int conv_bn(conv_ctx *cc, const char *name, int x, conv_shape s, conv_act a, int64_t *hout) {
    int64_t wo;
    int y = conv4(cc, name, x, &s, hout, &wo);
    char nm[128];
    snprintf(nm, sizeof nm, "%s.bn", name);
    y = bn4(cc, nm, y, s.cout, *hout, wo);
    return act4(cc, name, a, y, s.cout, *hout, wo);
}

static int add_relu(conv_ctx *cc, const char *name, int x, int r, int64_t c, int64_t h) {
    char nm[128];
    snprintf(nm, sizeof nm, "%s.add", name);
    int y = ew4(cc, nm, "Add", "Y[b,c,h,w] = X[b,c,h,w] + R[b,c,h,w]", x, r, c, h, h);
    return act4(cc, name, CA_RELU, y, c, h, h);
}

/* ResNet v1.5 (He et al. 2016; torchvision): stride on the 3x3 conv. */
static void resnet_build(zb *z, bool bottleneck, const int *blocks, const rotor_zoo_options *o) {
    conv_ctx cc = {.z = z, .b = o->batch};
    int64_t img = o->seq ? o->seq : 224, h;
    int64_t is[4] = {cc.b, 3, img, img};
    int x = val(z, ROTOR_ROLE_ACTIVATION, 4, is, "image");
    x = conv_bn(&cc, "conv1", x, SQ(3, 64, img, 7, 2, 3), CA_RELU, &h);
    int64_t hp = (h + 2 - 3) / 2 + 1;
    int64_t ps[4] = {cc.b, 64, hp, hp};
    int pooled = val(z, ROTOR_ROLE_ACTIVATION, 4, ps, "maxpool");
    op(z, "maxpool", "MaxPool", NULL, NULL, NULL, 0, &x, 1, pooled);
    x = pooled;
    h = hp;
    int64_t cin = 64;
    int nstages = o->layers > 0 && o->layers < 4 ? (int)o->layers : 4;
    for (int s = 0; s < nstages; s++) {
        int64_t width = 64 << s, cout = bottleneck ? width * 4 : width;
        for (int bk = 0; bk < blocks[s]; bk++) {
            int64_t stride = bk == 0 && s > 0 ? 2 : 1, h1, h2, h3;
            char nm[64];
            int y;
            if (bottleneck) {
                snprintf(nm, sizeof nm, "s%d.b%d.conv1", s, bk);
                y = conv_bn(&cc, nm, x, SQ(cin, width, h, 1, 1, 0), CA_RELU, &h1);
                snprintf(nm, sizeof nm, "s%d.b%d.conv2", s, bk);
                y = conv_bn(&cc, nm, y, SQ(width, width, h1, 3, stride, 1), CA_RELU, &h2);
                snprintf(nm, sizeof nm, "s%d.b%d.conv3", s, bk);
                y = conv_bn(&cc, nm, y, SQ(width, cout, h2, 1, 1, 0), CA_NONE, &h3);
            } else {
                snprintf(nm, sizeof nm, "s%d.b%d.conv1", s, bk);
                y = conv_bn(&cc, nm, x, SQ(cin, width, h, 3, stride, 1), CA_RELU, &h1);
                snprintf(nm, sizeof nm, "s%d.b%d.conv2", s, bk);
                y = conv_bn(&cc, nm, y, SQ(width, cout, h1, 3, 1, 1), CA_NONE, &h3);
            }
            int skip = x;
            if (stride != 1 || cin != cout) {
                int64_t hd;
                snprintf(nm, sizeof nm, "s%d.b%d.downsample", s, bk);
                skip = conv_bn(&cc, nm, x, SQ(cin, cout, h, 1, stride, 0), CA_NONE, &hd);
            }
            snprintf(nm, sizeof nm, "s%d.b%d", s, bk);
            x = add_relu(&cc, nm, y, skip, cout, h3);
            h = h3;
            cin = cout;
        }
    }
    int gp = val2(z, ROTOR_ROLE_ACTIVATION, cc.b, cin, "avgpool");
    op(z, "avgpool", "GlobalAveragePool", NULL, NULL, NULL, 0, &x, 1, gp);
    int out = linear(z, "fc", gp, cc.b, cin, 1000, true);
    if (!z->st) z->g->values[out].is_output = true;
}

/* A vendor op over [b, c, h, w] values (pools, concatenation). */
static int vendor4(conv_ctx *cc, const char *name, const char *type, const int *in, int nin, int64_t c,
                   int64_t h) {
    int64_t os[4] = {cc->b, c, h, h};
    int y = val(cc->z, ROTOR_ROLE_ACTIVATION, 4, os, "%s", name);
    op(cc->z, name, type, NULL, NULL, NULL, 0, in, nin, y);
    return y;
}

/* Global average pooling to [b, c], then the classifier of `classes`: the
 * model's output. */
static void classify(conv_ctx *cc, int x, int64_t c, int64_t classes) {
    zb *z = cc->z;
    int gp = val2(z, ROTOR_ROLE_ACTIVATION, cc->b, c, "avgpool");
    op(z, "avgpool", "GlobalAveragePool", NULL, NULL, NULL, 0, &x, 1, gp);
    int out = linear(z, "classifier", gp, cc->b, c, classes, true);
    if (!z->st) z->g->values[out].is_output = true;
}

/* MobileNet-v2 (Sandler et al. 2018, Table 2; torchvision, width 1.0):
 * inverted residual blocks (t, c, n, s): a 1x1 expansion to t x the input
 * channels (none when t = 1), a depthwise 3x3 of stride s on the first of
 * the n blocks, each with BatchNorm and ReLU6, then a linear 1x1 bottleneck
 * with BatchNorm and no activation; a residual add where the stride is 1
 * and the channels stay.  Layers count the seven (t, c, n, s) stages. */
static void mobilenet_v2_build(zb *z, const rotor_zoo_options *o) {
    static const struct { int64_t t, c, n, s; } cfg[7] = {
        {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
    };
    conv_ctx cc = {.z = z, .b = o->batch};
    int64_t img = o->seq ? o->seq : 224, h;
    int64_t is[4] = {cc.b, 3, img, img};
    int x = val(z, ROTOR_ROLE_ACTIVATION, 4, is, "image");
    x = conv_bn(&cc, "conv0", x, SQ(3, 32, img, 3, 2, 1), CA_RELU6, &h);
    int64_t cin = 32;
    int stages = o->layers ? (int)o->layers : 7, blk = 0;
    for (int s = 0; s < stages; s++)
        for (int i = 0; i < cfg[s].n; i++, blk++) {
            int64_t stride = i == 0 ? cfg[s].s : 1, hid = cin * cfg[s].t, c = cfg[s].c, h1 = h, h2, h3;
            char nm[64];
            int y = x;
            if (cfg[s].t != 1) {
                snprintf(nm, sizeof nm, "b%d.expand", blk);
                y = conv_bn(&cc, nm, y, SQ(cin, hid, h, 1, 1, 0), CA_RELU6, &h1);
            }
            snprintf(nm, sizeof nm, "b%d.dw", blk);
            y = conv_bn(&cc, nm, y, DW(hid, h1, 3, stride, 1), CA_RELU6, &h2);
            snprintf(nm, sizeof nm, "b%d.project", blk);
            y = conv_bn(&cc, nm, y, SQ(hid, c, h2, 1, 1, 0), CA_NONE, &h3);
            if (stride == 1 && cin == c) {
                snprintf(nm, sizeof nm, "b%d.add", blk);
                y = ew4(&cc, nm, "Add", "Y[b,c,h,w] = X[b,c,h,w] + R[b,c,h,w]", y, x, c, h3, h3);
            }
            x = y, h = h3, cin = c;
        }
    x = conv_bn(&cc, "conv_last", x, SQ(cin, 1280, h, 1, 1, 0), CA_RELU6, &h);
    classify(&cc, x, 1280, 1000); /* the dropout before it is the identity at inference */
}

/* DenseNet's pre-activation unit: BatchNorm name.norm, ReLU name.relu, then
 * the convolution name.conv (no bias). */
static int bn_relu_conv(conv_ctx *cc, const char *name, int x, conv_shape s, int64_t *hout) {
    char nm[128];
    snprintf(nm, sizeof nm, "%s.norm", name);
    x = bn4(cc, nm, x, s.cin, s.h, s.w);
    x = act4(cc, name, CA_RELU, x, s.cin, s.h, s.w);
    snprintf(nm, sizeof nm, "%s.conv", name);
    int64_t wo;
    return conv4(cc, nm, x, &s, hout, &wo);
}

/* DenseNet-121 (Huang et al. 2017, Table 1; torchvision): a 7x7 stem with
 * BatchNorm, ReLU and a 3x3 max pool, then dense blocks of 6, 12, 24 and 16
 * layers of growth k = 32.  A layer is BN-ReLU-Conv 1x1 to 4k, BN-ReLU-Conv
 * 3x3 to k, and the concatenation of its input with its k new channels (one
 * Concat per layer: the running concatenation, which holds the same
 * elements as concatenating all earlier outputs).  Between blocks a
 * transition BN-ReLU-Conv 1x1 halves the channels (compression 0.5) and a
 * 2x2 average pool of stride 2 halves the side; after the last block a
 * BatchNorm and ReLU.  Layers count the dense blocks (4). */
static void densenet121_build(zb *z, const rotor_zoo_options *o) {
    static const int layers[4] = {6, 12, 24, 16};
    const int64_t k = 32;
    conv_ctx cc = {.z = z, .b = o->batch};
    int64_t img = o->seq ? o->seq : 224, h;
    int64_t is[4] = {cc.b, 3, img, img};
    int x = val(z, ROTOR_ROLE_ACTIVATION, 4, is, "image");
    x = conv_bn(&cc, "conv0", x, SQ(3, 64, img, 7, 2, 3), CA_RELU, &h);
    h = (h + 2 - 3) / 2 + 1;
    x = vendor4(&cc, "pool0", "MaxPool", &x, 1, 64, h);
    int64_t c = 64;
    int nblocks = o->layers ? (int)o->layers : 4;
    for (int bk = 0; bk < nblocks; bk++) {
        for (int l = 0; l < layers[bk]; l++) {
            char nm[64];
            int64_t hh;
            snprintf(nm, sizeof nm, "db%d.l%d.a", bk, l);
            int y = bn_relu_conv(&cc, nm, x, SQ(c, 4 * k, h, 1, 1, 0), &hh);
            snprintf(nm, sizeof nm, "db%d.l%d.b", bk, l);
            y = bn_relu_conv(&cc, nm, y, SQ(4 * k, k, h, 3, 1, 1), &hh);
            snprintf(nm, sizeof nm, "db%d.l%d.concat", bk, l);
            int in[2] = {x, y};
            x = vendor4(&cc, nm, "Concat", in, 2, c + k, h);
            c += k;
        }
        if (bk == nblocks - 1) break;
        char nm[64];
        int64_t hh;
        snprintf(nm, sizeof nm, "t%d", bk);
        x = bn_relu_conv(&cc, nm, x, SQ(c, c / 2, h, 1, 1, 0), &hh);
        c /= 2, h /= 2;
        snprintf(nm, sizeof nm, "t%d.pool", bk);
        x = vendor4(&cc, nm, "AveragePool", &x, 1, c, h);
    }
    x = bn4(&cc, "norm5", x, c, h, h);
    x = act4(&cc, "norm5", CA_RELU, x, c, h, h);
    classify(&cc, x, c, 1000);
}

/* NeRF (Mildenhall et al. 2020, Figure 7): `depth` ReLU layers of `width` on
 * the positional encoding of x (63 = 3 + 3*2*10), the input concatenated
 * again into the sixth, density, a `width` feature, the view direction
 * (27 = 3 + 3*2*4) through `width` / 2, then RGB.  Batch = rays x samples
 * (seq).  Figure 7's model is 8 x 256 ("nerf"); T10 Table 2 evaluates a NeRF
 * of 24K weights and gives no shape, so "nerf-t10" is the same network at
 * 4 x 64 (23,844 weights; decision: the smallest change of Figure 7 that
 * lands within 1% of 24K, keeping its branches). */
static void nerf_build(zb *z, const rotor_zoo_options *o, int64_t width, int depth) {
    int64_t t = o->batch * (o->seq ? o->seq : 192);
    int x0 = val2(z, ROTOR_ROLE_ACTIVATION, t, 63, "pos_enc");
    int x = x0;
    int64_t k = 63;
    int layers = o->layers > 0 && o->layers < depth ? (int)o->layers : depth;
    for (int l = 0; l < layers; l++) {
        char nm[64];
        if (l == 5) { /* skip: concat [x, pos_enc] */
            int in[2] = {x, x0};
            x = vendor(z, "skip_concat", "Concat", in, 2, t, width + 63);
            k = width + 63;
        }
        snprintf(nm, sizeof nm, "fc%d", l);
        x = linear(z, nm, x, t, k, width, true);
        snprintf(nm, sizeof nm, "fc%d.relu", l);
        x = eltwise(z, nm, "Relu", "Y[m,n] = relu(X[m,n])", x, -1, t, width);
        k = width;
    }
    int sigma = linear(z, "sigma", x, t, width, 1, true); /* the density: an output beside rgb */
    int f = linear(z, "feature", x, t, width, width, true);
    int dir = val2(z, ROTOR_ROLE_ACTIVATION, t, 27, "dir_enc");
    int in[2] = {f, dir};
    int cat = vendor(z, "dir_concat", "Concat", in, 2, t, width + 27);
    int hdir = linear(z, "dir_fc", cat, t, width + 27, width / 2, true);
    hdir = eltwise(z, "dir_fc.relu", "Relu", "Y[m,n] = relu(X[m,n])", hdir, -1, t, width / 2);
    int rgb = linear(z, "rgb", hdir, t, width / 2, 3, true);
    if (!z->st) z->g->values[rgb].is_output = z->g->values[sigma].is_output = true;
}

/* ---- recommendation and speech --------------------------------------- */

/* DLRM as MLPerf runs it (v2.0 inference, the Criteo Terabyte model:
 * facebookresearch/dlrm, --max-ind-range=40000000): the rows of the 26
 * embedding tables, after the 40M cap. */
static const int64_t dlrm_rows[26] = {
    39884406, 39043, 17289, 7420,     20263,    3,        7120,   1543,  63,  38532951, 2953546, 403346, 10,
    2208,     11938, 155,   4,        976,      14,       39979771, 25641295, 39664984, 585935, 12972, 108, 36,
};

/* A ReLU MLP over [b, widths[0]]: layers name0, name1, ... (the last one
 * without its ReLU when last_plain). */
static int mlp(zb *z, const char *name, int x, int64_t b, const int64_t *widths, int n, bool last_plain) {
    for (int i = 0; i + 1 < n; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s%d", name, i);
        x = linear(z, nm, x, b, widths[i], widths[i + 1], true);
        if (last_plain && i + 2 == n) break;
        snprintf(nm, sizeof nm, "%s%d.relu", name, i);
        x = eltwise(z, nm, "Relu", "Y[m,n] = relu(X[m,n])", x, -1, b, widths[i + 1]);
    }
    return x;
}

/* DLRM (Naumov et al. 2019) in MLPerf's Criteo Terabyte configuration: 13
 * dense features through the bottom MLP 13-512-256-128; 26 sparse features,
 * one index each, embedded to 128 by Gathers from their tables; the dot
 * interaction of the 27 vectors (the pairs below the diagonal, 27*26/2 =
 * 351, a Gather of Z's lower triangle) concatenated with the bottom MLP's
 * output (479); the top MLP 479-1024-1024-512-256-1 and a sigmoid.  seq
 * caps every table at that many rows (DLRM's --max-ind-range; default
 * MLPerf's 40M), layers takes the first sparse features (26). */
static void dlrm_build(zb *z, const rotor_zoo_options *o) {
    static const int64_t bot[4] = {13, 512, 256, 128};
    int64_t b = o->batch, cap = o->seq ? o->seq : 40000000, d = 128;
    int ntab = o->layers ? (int)o->layers : 26, nf = ntab + 1;
    int x = val2(z, ROTOR_ROLE_ACTIVATION, b, 13, "dense");
    x = mlp(z, "bot", x, b, bot, 4, false);
    int feats[27] = {x};
    for (int t = 0; t < ntab; t++) {
        char nm[64];
        snprintf(nm, sizeof nm, "emb%d.table", t);
        int in[2] = {val2(z, ROTOR_ROLE_WEIGHT, dlrm_rows[t] < cap ? dlrm_rows[t] : cap, d, nm), -1};
        snprintf(nm, sizeof nm, "sparse%d", t);
        in[1] = val2(z, ROTOR_ROLE_ACTIVATION, b, 1, nm);
        snprintf(nm, sizeof nm, "emb%d", t);
        feats[t + 1] = vendor(z, nm, "Gather", in, 2, b, d);
    }
    int cat = vendor(z, "interact.concat", "Concat", feats, nf, b, nf * d);
    /* Z[b, i, j] = <T_i, T_j> over the 27 vectors T = [b, 27, 128] */
    int64_t zs[3] = {b, nf, nf};
    int zz = val(z, ROTOR_ROLE_ACTIVATION, 3, zs, "interact.dot");
    char dims[96];
    snprintf(dims, sizeof dims, "b=%lld,i=%d,j=%d,k=%lld", (long long)b, nf, nf, (long long)d);
    int tv[3] = {zz, cat, cat};
    op(z, "interact.dot", "MatMul", "Z[b,i,j] += A[b,i,k] * B[b,j,k]", dims, tv, 3, &cat, 1, zz);
    int tri = vendor(z, "interact.tril", "Gather", &zz, 1, b, (int64_t)nf * (nf - 1) / 2);
    int in[2] = {x, tri};
    int top_in = vendor(z, "interact.out", "Concat", in, 2, b, d + (int64_t)nf * (nf - 1) / 2);
    const int64_t top[6] = {d + (int64_t)nf * (nf - 1) / 2, 1024, 1024, 512, 256, 1};
    x = mlp(z, "top", top_in, b, top, 6, true);
    int out = eltwise(z, "top.sigmoid", "Sigmoid", "Y[m,n] = sigmoid(X[m,n])", x, -1, b, 1);
    if (!z->st) z->g->values[out].is_output = true;
}

/* Conformer (Gulati et al. 2020): the encoder's sizes and the frames per
 * sequence after the 4x subsampling (t); pos is the sinusoid table of t
 * positions, an input (a fixed table, as DiT's frequencies). */
typedef struct cf_ctx {
    zb *z;
    int64_t b, t, d, heads, ffn, kernel, dec;
    int pos;
} cf_ctx;

/* Swish, x sigmoid(x), over a value of rank dimensions: the expression
 * names x twice (X and S), as T10 plans each tensor once. */
static int cf_swish(zb *z, const char *name, int x, int rank, const int64_t *shape, const char *expr,
                    const char *dims) {
    int y = val(z, ROTOR_ROLE_ACTIVATION, rank, shape, "%s", name);
    int tv[3] = {y, x, x};
    op(z, name, "Sigmoid", expr, dims, tv, 3, &x, 1, y);
    return y;
}

/* A macaron half-step FFN: LN, d -> 4d, Swish, 4d -> d, x + FFN / 2. */
static int cf_ffn(cf_ctx *c, int l, int which, int x) {
    zb *z = c->z;
    int64_t T = c->b * c->t;
    char nm[96];
    snprintf(nm, sizeof nm, "l%d.ffn%d.norm", l, which);
    int y = norm(z, nm, x, T, c->d, false);
    snprintf(nm, sizeof nm, "l%d.ffn%d.up", l, which);
    y = linear(z, nm, y, T, c->d, c->ffn, true);
    snprintf(nm, sizeof nm, "l%d.ffn%d.swish", l, which);
    char dims[64];
    snprintf(dims, sizeof dims, "m=%lld,n=%lld", (long long)T, (long long)c->ffn);
    y = cf_swish(z, nm, y, 2, (int64_t[]){T, c->ffn}, "Y[m,n] = X[m,n] * sigmoid(S[m,n])", dims);
    snprintf(nm, sizeof nm, "l%d.ffn%d.down", l, which);
    y = linear(z, nm, y, T, c->ffn, c->d, true);
    snprintf(nm, sizeof nm, "l%d.ffn%d.residual", l, which);
    return eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + 0.5 * R[m,n]", x, y, T, c->d);
}

/* Self-attention with Transformer-XL's relative positions (Conformer §2.1):
 * scores (q + u) k^T + (q + v) p^T, p the layer's projection of the
 * position table.  Q, K, V are column blocks of the fused QKV projection
 * (as in tf_layer).  Decision: p has t rows, not the 2t - 1 relative
 * distances, and no relative shift (a data move): the positional term has
 * the content term's FLOPs and the layer its weights. */
static int cf_mhsa(cf_ctx *c, int l, int x) {
    zb *z = c->z;
    int64_t t = c->t, T = c->b * t, d = c->d, h = c->heads, hd = d / h;
    char nm[96], dims[128];
    snprintf(nm, sizeof nm, "l%d.mhsa.norm", l);
    int y = norm(z, nm, x, T, d, false);
    snprintf(nm, sizeof nm, "l%d.mhsa.qkv", l);
    int qkv = linear(z, nm, y, T, d, 3 * d, true);
    snprintf(nm, sizeof nm, "l%d.mhsa.pos_proj", l);
    int pp = linear(z, nm, c->pos, t, d, d, false);
    snprintf(nm, sizeof nm, "l%d.mhsa.pos_bias_u", l);
    int u = val2(z, ROTOR_ROLE_WEIGHT, d, 0, nm);
    snprintf(nm, sizeof nm, "l%d.mhsa.pos_bias_v", l);
    int v = val2(z, ROTOR_ROLE_WEIGHT, d, 0, nm);
    int64_t sc[3] = {c->b * h, t, t};
    snprintf(dims, sizeof dims, "b=%lld,h=%lld,m=%lld,k=%lld,n=%lld", (long long)c->b, (long long)h,
             (long long)t, (long long)hd, (long long)t);
    rotor_view qv = view2(4, (int8_t[]){0, 1, 0, 1}, (int64_t[]){t, hd, 1, 1}, 0, 0);
    int s1 = val(z, ROTOR_ROLE_ACTIVATION, 3, sc, "l%d.mhsa.scores_content", l);
    int in1[2] = {qkv, u}, tv1[4] = {s1, qkv, u, qkv};
    rotor_view v1[4] = {{0}, qv, {0}, view2(4, (int8_t[]){0, 1, 1, 0}, (int64_t[]){t, hd, 1, 1}, 0, d)};
    snprintf(nm, sizeof nm, "l%d.mhsa.scores_content", l);
    opv(z, nm, "MatMul", "S[b,h,m,n] += (Q[b,h,m,k] + U[h,k]) * K[b,h,k,n]", dims, tv1, 4, in1, 2, s1, v1);
    int s2 = val(z, ROTOR_ROLE_ACTIVATION, 3, sc, "l%d.mhsa.scores_pos", l);
    int in2[3] = {qkv, v, pp}, tv2[4] = {s2, qkv, v, pp};
    rotor_view v2[4] = {{0}, qv, {0}, view2(3, (int8_t[]){1, 1, 0}, (int64_t[]){hd, 1, 1}, 0, 0)};
    snprintf(nm, sizeof nm, "l%d.mhsa.scores_pos", l);
    opv(z, nm, "MatMul", "S[b,h,m,n] += (Q[b,h,m,k] + V[h,k]) * P[h,k,n]", dims, tv2, 4, in2, 3, s2, v2);
    snprintf(nm, sizeof nm, "l%d.mhsa.scores", l);
    int s = val(z, ROTOR_ROLE_ACTIVATION, 3, sc, "%s", nm);
    char d3[96];
    snprintf(d3, sizeof d3, "b=%lld,m=%lld,n=%lld", (long long)(c->b * h), (long long)t, (long long)t);
    int in3[2] = {s1, s2}, tv3[3] = {s, s1, s2};
    op(z, nm, "Add", "Y[b,m,n] = X[b,m,n] + R[b,m,n]", d3, tv3, 3, in3, 2, s);
    snprintf(nm, sizeof nm, "l%d.mhsa.softmax", l);
    int probs = val(z, ROTOR_ROLE_ACTIVATION, 3, sc, "%s", nm);
    op(z, nm, "Softmax", NULL, NULL, NULL, 0, &s, 1, probs);
    snprintf(nm, sizeof nm, "l%d.mhsa.context", l);
    int ctx = val2(z, ROTOR_ROLE_ACTIVATION, T, d, nm);
    int in4[2] = {probs, qkv}, tv4[3] = {ctx, probs, qkv};
    rotor_view v4[3] = {qv, {0}, view2(4, (int8_t[]){0, 1, 0, 1}, (int64_t[]){t, hd, 1, 1}, 0, 2 * d)};
    snprintf(dims, sizeof dims, "b=%lld,h=%lld,m=%lld,n=%lld,k=%lld", (long long)c->b, (long long)h,
             (long long)t, (long long)t, (long long)hd);
    opv(z, nm, "MatMul", "O[b,h,m,k] += P[b,h,m,n] * V[b,h,n,k]", dims, tv4, 3, in4, 2, ctx, v4);
    snprintf(nm, sizeof nm, "l%d.mhsa.out", l);
    y = linear(z, nm, ctx, T, d, d, true);
    snprintf(nm, sizeof nm, "l%d.mhsa.residual", l);
    return eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", x, y, T, d);
}

/* The convolution module (Conformer Fig. 2): LN, pointwise d -> 2d, GLU, a
 * depthwise 1-D convolution over time (kernel 32, 'same': 15 frames before,
 * 16 after; no bias, BatchNorm follows), BatchNorm, Swish, pointwise d -> d.
 * The depthwise convolution reads the GLU's [b, t, d] and writes
 * channels-first [b, d, t], so that BatchNorm's channels are dimension 1 as
 * after every other convolution of the zoo. */
static int cf_conv(cf_ctx *c, int l, int x) {
    zb *z = c->z;
    int64_t t = c->t, T = c->b * t, d = c->d, k = c->kernel;
    char nm[96], dims[128];
    snprintf(nm, sizeof nm, "l%d.conv.norm", l);
    int y = norm(z, nm, x, T, d, false);
    snprintf(nm, sizeof nm, "l%d.conv.pw1", l);
    int pw = linear(z, nm, y, T, d, 2 * d, true);
    int64_t btd[3] = {c->b, t, d}, bdt[3] = {c->b, d, t};
    int glu = val(z, ROTOR_ROLE_ACTIVATION, 3, btd, "l%d.conv.glu", l);
    snprintf(dims, sizeof dims, "m=%lld,n=%lld", (long long)T, (long long)d);
    int tv[3] = {glu, pw, pw};
    rotor_view gv[3] = {{0}, view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, 0),
                        view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, d)};
    snprintf(nm, sizeof nm, "l%d.conv.glu", l);
    opv(z, nm, "Mul", "Y[m,n] = A[m,n] * sigmoid(G[m,n])", dims, tv, 3, &pw, 1, glu, gv);
    int64_t ws[3] = {d, 1, k};
    int w = val(z, ROTOR_ROLE_WEIGHT, 3, ws, "l%d.conv.dw.weight", l);
    int dw = val(z, ROTOR_ROLE_ACTIVATION, 3, bdt, "l%d.conv.dw.out", l);
    snprintf(dims, sizeof dims, "b=%lld,c=%lld,t=%lld,k=%lld", (long long)c->b, (long long)d, (long long)t,
             (long long)k);
    int in[2] = {glu, w}, tv2[3] = {dw, glu, w};
    rotor_view dv[3] = {{0}, {.set = true, .dim = {0, 1, 2}, .step = {1, 1, 1}, .offset = {0, -(k - 1) / 2, 0}}};
    snprintf(nm, sizeof nm, "l%d.conv.dw", l);
    opv(z, nm, "Conv", "O[b,c,t] += I[b,t+k,c] * W[c,k]", dims, tv2, 3, in, 2, dw, dv);
    int64_t cs[1] = {d};
    snprintf(nm, sizeof nm, "l%d.conv.dw.bn", l);
    int bin[3] = {dw, val(z, ROTOR_ROLE_WEIGHT, 1, cs, "%s.gamma", nm), -1};
    bin[2] = val(z, ROTOR_ROLE_WEIGHT, 1, cs, "%s.beta", nm);
    int bn = val(z, ROTOR_ROLE_ACTIVATION, 3, bdt, "%s", nm);
    op(z, nm, "BatchNormalization", NULL, NULL, NULL, 0, bin, 3, bn);
    snprintf(nm, sizeof nm, "l%d.conv.swish", l);
    snprintf(dims, sizeof dims, "b=%lld,c=%lld,t=%lld", (long long)c->b, (long long)d, (long long)t);
    int sw = cf_swish(z, nm, bn, 3, bdt, "Y[b,c,t] = X[b,c,t] * sigmoid(S[b,c,t])", dims);
    int64_t w2s[2] = {d, d};
    int w2 = val(z, ROTOR_ROLE_WEIGHT, 2, w2s, "l%d.conv.pw2.weight", l);
    snprintf(nm, sizeof nm, "l%d.conv.pw2", l);
    int p2 = val(z, ROTOR_ROLE_ACTIVATION, 2, (int64_t[]){T, d}, "%s.out", nm);
    snprintf(dims, sizeof dims, "b=%lld,t=%lld,n=%lld,c=%lld", (long long)c->b, (long long)t, (long long)d,
             (long long)d);
    int in4[2] = {sw, w2}, tv4[3] = {p2, sw, w2};
    op(z, nm, "MatMul", "C[b,t,n] += X[b,c,t] * W[c,n]", dims, tv4, 3, in4, 2, p2);
    snprintf(nm, sizeof nm, "l%d.conv.pw2.bias", l);
    int pb = val2(z, ROTOR_ROLE_WEIGHT, d, 0, nm);
    snprintf(nm, sizeof nm, "l%d.conv.pw2.biased", l);
    y = eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + Bv[n]", p2, pb, T, d);
    snprintf(nm, sizeof nm, "l%d.conv.residual", l);
    return eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", x, y, T, d);
}

/* The subsampling front end: two 3x3 convolutions of stride 2 (with bias
 * and ReLU; no padding, as ESPnet's and torchaudio's Conv2dSubsampling) on
 * [b, 1, frames, mel] filterbanks, then a linear layer from the channels x
 * remaining mel bins to d.  Sets c->t. */
static int cf_subsample(cf_ctx *c, int64_t frames, int64_t mel) {
    zb *z = c->z;
    conv_ctx cc = {.z = z, .b = c->b};
    int64_t fs[4] = {c->b, 1, frames, mel}, h = frames, w = mel, cin = 1;
    int x = val(z, ROTOR_ROLE_ACTIVATION, 4, fs, "fbank");
    for (int i = 1; i <= 2; i++) {
        char nm[64], bn[80];
        snprintf(nm, sizeof nm, "sub.conv%d", i);
        x = conv4(&cc, nm, x, &(conv_shape){cin, c->d, h, w, 3, 2, 0, false}, &h, &w);
        snprintf(bn, sizeof bn, "%s.bias", nm);
        int bias = val2(z, ROTOR_ROLE_WEIGHT, c->d, 0, bn);
        snprintf(bn, sizeof bn, "%s.biased", nm);
        x = ew4(&cc, bn, "Add", "Y[b,c,h,w] = X[b,c,h,w] + Bv[c]", x, bias, c->d, h, w);
        x = act4(&cc, nm, CA_RELU, x, c->d, h, w);
        cin = c->d;
    }
    c->t = h;
    int64_t ws[2] = {c->d * w, c->d};
    int wt = val(z, ROTOR_ROLE_WEIGHT, 2, ws, "sub.linear.weight");
    int y = val2(z, ROTOR_ROLE_ACTIVATION, c->b * h, c->d, "sub.linear.out");
    char dims[128];
    snprintf(dims, sizeof dims, "b=%lld,t=%lld,n=%lld,c=%lld,f=%lld", (long long)c->b, (long long)h,
             (long long)c->d, (long long)c->d, (long long)w);
    int in[2] = {x, wt}, tv[3] = {y, x, wt};
    op(z, "sub.linear", "MatMul", "C[b,t,n] += X[b,c,t,f] * W[c,f,n]", dims, tv, 3, in, 2, y);
    int bias = val2(z, ROTOR_ROLE_WEIGHT, c->d, 0, "sub.linear.bias");
    return eltwise(z, "sub.linear.biased", "Add", "Y[m,n] = X[m,n] + Bv[n]", y, bias, c->b * h, c->d);
}

/* One step of an LSTM layer of n units on x [b, nin], from the state hp, cp
 * [b, n]: gates = x W_ih + b + h W_hh in PyTorch's order i, f, g, o (one
 * bias, decision); c' = s(f) c + s(i) tanh(g), h' = s(o) tanh(c').  Its
 * operators are pfx.lstm.ih, pfx.lstm.hh, pfx.lstm.gates, pfx.c_next and
 * pfx.h_next; h' is returned, c' in *c2. */
static int lstm_step(zb *z, const char *pfx, int x, int hp, int cp, int64_t b, int64_t nin, int64_t n, int *c2) {
    char nm[96], dims[64];
    snprintf(nm, sizeof nm, "%s.lstm.ih", pfx);
    int gx = linear(z, nm, x, b, nin, 4 * n, true);
    snprintf(nm, sizeof nm, "%s.lstm.hh", pfx);
    int gh = linear(z, nm, hp, b, n, 4 * n, false);
    snprintf(nm, sizeof nm, "%s.lstm.gates", pfx);
    int g = eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", gx, gh, b, 4 * n);
    snprintf(dims, sizeof dims, "m=%lld,n=%lld", (long long)b, (long long)n);
    snprintf(nm, sizeof nm, "%s.c_next", pfx);
    *c2 = val2(z, ROTOR_ROLE_ACTIVATION, b, n, nm);
    int in[2] = {g, cp}, tv[5] = {*c2, g, cp, g, g};
    rotor_view cv[5] = {{0}, view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, n), {0},
                        view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, 0),
                        view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, 2 * n)};
    opv(z, nm, "Mul", "C2[m,n] = sigmoid(F[m,n]) * C[m,n] + sigmoid(I[m,n]) * tanh(G[m,n])", dims, tv, 5, in, 2,
        *c2, cv);
    snprintf(nm, sizeof nm, "%s.h_next", pfx);
    int h2 = val2(z, ROTOR_ROLE_ACTIVATION, b, n, nm);
    int in2[2] = {g, *c2}, tv2[3] = {h2, g, *c2};
    rotor_view hv[3] = {{0}, view2(2, (int8_t[]){0, 1}, (int64_t[]){1, 1}, 0, 3 * n)};
    opv(z, nm, "Mul", "H2[m,n] = sigmoid(O[m,n]) * tanh(C[m,n])", dims, tv2, 3, in2, 2, h2, hv);
    return h2;
}

/* One step of the decoder, a single LSTM layer of dec units (Conformer
 * Table 1).  Its input x is the previous label's embedding (given: the
 * paper gives no vocabulary), and the joint network is left out
 * (unspecified). */
static void cf_decoder(cf_ctx *c) {
    zb *z = c->z;
    int64_t b = c->b, n = c->dec;
    int x = val2(z, ROTOR_ROLE_ACTIVATION, b, n, "dec.input");
    int hp = val2(z, ROTOR_ROLE_ACTIVATION, b, n, "dec.h");
    int cp = val2(z, ROTOR_ROLE_ACTIVATION, b, n, "dec.c");
    int c2, h2 = lstm_step(z, "dec", x, hp, cp, b, n, n, &c2);
    if (!z->st) z->g->values[h2].is_output = z->g->values[c2].is_output = true;
}

/* Conformer-M (Gulati et al. 2020, Table 1: 30.7M parameters): 16 blocks of
 * d = 256, 4 heads, conv kernel 32, and a one-layer LSTM decoder of 640.  A
 * block is FFN/2, MHSA, Conv, FFN/2, LayerNorm (§2.4).  seq counts 10 ms
 * filterbank frames (80 mel bins; default 1000, 10 s of audio: decision);
 * layers the blocks. */
static void conformer_build(zb *z, const rotor_zoo_options *o) {
    cf_ctx c = {.z = z, .b = o->batch, .d = 256, .heads = 4, .ffn = 1024, .kernel = 32, .dec = 640};
    int x = cf_subsample(&c, o->seq ? o->seq : 1000, 80);
    c.pos = val2(z, ROTOR_ROLE_ACTIVATION, c.t, c.d, "pos_enc");
    int layers = o->layers ? (int)o->layers : 16;
    for (int l = 0; l < layers && !z->st; l++) {
        char nm[64];
        x = cf_ffn(&c, l, 1, x);
        x = cf_mhsa(&c, l, x);
        x = cf_conv(&c, l, x);
        x = cf_ffn(&c, l, 2, x);
        snprintf(nm, sizeof nm, "l%d.norm_out", l);
        x = norm(z, nm, x, c.b * c.t, c.d, false);
    }
    if (!z->st) z->g->values[x].is_output = true;
    cf_decoder(&c);
}

/* ---- KAPLA's networks (KAPLA §V, "Evaluated NNs") ----------------------- */

/* KAPLA evaluates AlexNet, MobileNet, VGGNet, GoogLeNet, ResNet, an MLP and
 * an LSTM, as nn_dataflow describes them: LRN and the auxiliary classifiers
 * are left out, and so are the convolutions' biases (a few thousand weights,
 * under 0.1% of each network; decision: the zoo's convolutions have none).
 * The classifiers' fully connected layers keep theirs. */

/* ReLU of a convolution's output: name.relu over [b, c, h, h]. */
static int conv_relu(conv_ctx *cc, const char *name, int x, conv_shape s, int64_t *hout) {
    int64_t wo;
    int y = conv4(cc, name, x, &s, hout, &wo);
    return act4(cc, name, CA_RELU, y, s.cout, *hout, wo);
}

/* The first fully connected layer on a [b, c, h, h] feature map, as one
 * contraction over c, h and w (the flattening is the weight's layout, so no
 * reshape operator appears), with its bias: name.biased [b, n]. */
static int fc_map(conv_ctx *cc, const char *name, int x, int64_t c, int64_t h, int64_t n) {
    zb *z = cc->z;
    char nm[96], dims[128];
    int64_t ws[4] = {n, c, h, h};
    int w = val(z, ROTOR_ROLE_WEIGHT, 4, ws, "%s.weight", name);
    snprintf(nm, sizeof nm, "%s.out", name);
    int y = val2(z, ROTOR_ROLE_ACTIVATION, cc->b, n, nm);
    snprintf(dims, sizeof dims, "b=%lld,n=%lld,c=%lld,h=%lld,w=%lld", (long long)cc->b, (long long)n, (long long)c,
             (long long)h, (long long)h);
    int in[2] = {x, w}, tv[3] = {y, x, w};
    op(z, name, "Gemm", "C[b,n] += A[b,c,h,w] * W[n,c,h,w]", dims, tv, 3, in, 2, y);
    return bias_add(z, name, y, cc->b, n);
}

/* Fully connected layers of widths[0] -> widths[1] -> ... on x [b, widths[0]],
 * each with its bias and, but for the last, a ReLU (names pfx1, pfx2, ...,
 * counting from first).  The last is the model's output. */
static void fc_stack(conv_ctx *cc, const char *pfx, int first, int x, const int64_t *widths, int n) {
    zb *z = cc->z;
    for (int i = 0; i + 1 < n; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s%d", pfx, first + i);
        x = linear(z, nm, x, cc->b, widths[i], widths[i + 1], true);
        if (i + 2 < n) {
            snprintf(nm, sizeof nm, "%s%d.relu", pfx, first + i);
            x = eltwise(z, nm, "Relu", "Y[m,n] = relu(X[m,n])", x, -1, cc->b, widths[i + 1]);
        }
    }
    if (!z->st) z->g->values[x].is_output = true;
}

/* AlexNet (Krizhevsky et al. 2012, Figure 2): the two-GPU network, each
 * tower its own operators; conv3 and fc6 read both towers (a Concat).  The
 * input is 227 x 227, the side that gives Figure 2's 55 x 55 (224 does not).
 * Layers count the 5 convolutions and the 3 fully connected layers (8). */
static void alexnet_build(zb *z, const rotor_zoo_options *o) {
    static const struct { int64_t cout, k, pad; bool pool, cross; } cv[5] = {
        {48, 11, 0, true, false}, {128, 5, 2, true, false}, {192, 3, 1, false, true},
        {192, 3, 1, false, false}, {128, 3, 1, true, false},
    };
    conv_ctx cc = {.z = z, .b = o->batch};
    int64_t img = o->seq ? o->seq : 227, h = img, cin = 3;
    int64_t is[4] = {cc.b, 3, img, img};
    int x = val(z, ROTOR_ROLE_ACTIVATION, 4, is, "image");
    int tower[2] = {x, x};
    int layers = o->layers ? (int)o->layers : 8;
    for (int l = 0; l < 5 && l < layers; l++) {
        int64_t ho = h;
        if (cv[l].cross) { /* this layer reads both towers' channels */
            int both = vendor4(&cc, l == 2 ? "concat3" : "concat", "Concat", tower, 2, 2 * cin, h);
            tower[0] = tower[1] = both;
            cin *= 2;
        }
        for (int t = 0; t < 2; t++) {
            char nm[64];
            snprintf(nm, sizeof nm, "conv%d_%c", l + 1, "ab"[t]);
            tower[t] = conv_relu(&cc, nm, tower[t], SQ(cin, cv[l].cout, h, cv[l].k, l == 0 ? 4 : 1, cv[l].pad), &ho);
            if (cv[l].pool) {
                snprintf(nm, sizeof nm, "pool%d_%c", l + 1, "ab"[t]);
                tower[t] = vendor4(&cc, nm, "MaxPool", &tower[t], 1, cv[l].cout, (ho - 3) / 2 + 1);
            }
        }
        h = cv[l].pool ? (ho - 3) / 2 + 1 : ho;
        cin = cv[l].cout;
    }
    if (layers <= 5) {
        int both = vendor4(&cc, "concat", "Concat", tower, 2, 2 * cin, h);
        if (!z->st) z->g->values[both].is_output = true;
        return;
    }
    int both = vendor4(&cc, "concat6", "Concat", tower, 2, 2 * cin, h);
    x = fc_map(&cc, "fc6", both, 2 * cin, h, 4096);
    if (layers == 6) {
        if (!z->st) z->g->values[x].is_output = true;
        return;
    }
    x = eltwise(z, "fc6.relu", "Relu", "Y[m,n] = relu(X[m,n])", x, -1, cc.b, 4096);
    fc_stack(&cc, "fc", 7, x, (const int64_t[]){4096, 4096, 1000}, layers == 7 ? 2 : 3);
}

/* VGG-16 (Simonyan and Zisserman 2015, Table 1, configuration D): 13 3x3
 * convolutions with ReLU in 5 blocks, each block ending in a 2x2 max pool,
 * then 4096, 4096 and 1000 fully connected.  Layers count the blocks (5). */
static void vgg16_build(zb *z, const rotor_zoo_options *o) {
    static const int64_t width[5] = {64, 128, 256, 512, 512};
    static const int convs[5] = {2, 2, 3, 3, 3};
    conv_ctx cc = {.z = z, .b = o->batch};
    int64_t img = o->seq ? o->seq : 224, h = img, cin = 3;
    int64_t is[4] = {cc.b, 3, img, img};
    int x = val(z, ROTOR_ROLE_ACTIVATION, 4, is, "image");
    int blocks = o->layers ? (int)o->layers : 5, n = 0;
    for (int bk = 0; bk < blocks; bk++) {
        char nm[64];
        for (int i = 0; i < convs[bk]; i++) {
            snprintf(nm, sizeof nm, "conv%d_%d", bk + 1, i + 1);
            x = conv_relu(&cc, nm, x, SQ(cin, width[bk], h, 3, 1, 1), &h);
            cin = width[bk], n++;
        }
        snprintf(nm, sizeof nm, "pool%d", bk + 1);
        h /= 2;
        x = vendor4(&cc, nm, "MaxPool", &x, 1, cin, h);
    }
    if (blocks < 5) {
        if (!z->st) z->g->values[x].is_output = true;
        return;
    }
    x = fc_map(&cc, "fc6", x, cin, h, 4096);
    x = eltwise(z, "fc6.relu", "Relu", "Y[m,n] = relu(X[m,n])", x, -1, cc.b, 4096);
    fc_stack(&cc, "fc", 7, x, (const int64_t[]){4096, 4096, 1000}, 3);
}

/* An Inception module (Szegedy et al. 2015, Figure 2b, Table 1's columns):
 * 1x1; 1x1 reduce then 3x3; 1x1 reduce then 5x5; 3x3 max pool (stride 1)
 * then a 1x1 projection; each convolution with ReLU; the four concatenated.
 * Returns the concatenation, its channels in *cout. */
static int inception(conv_ctx *cc, const char *id, int x, int64_t cin, int64_t h, const int64_t *c, int64_t *cout) {
    char nm[96];
    int64_t hh;
    int br[4];
    snprintf(nm, sizeof nm, "%s.1x1", id);
    br[0] = conv_relu(cc, nm, x, SQ(cin, c[0], h, 1, 1, 0), &hh);
    snprintf(nm, sizeof nm, "%s.3x3_reduce", id);
    br[1] = conv_relu(cc, nm, x, SQ(cin, c[1], h, 1, 1, 0), &hh);
    snprintf(nm, sizeof nm, "%s.3x3", id);
    br[1] = conv_relu(cc, nm, br[1], SQ(c[1], c[2], h, 3, 1, 1), &hh);
    snprintf(nm, sizeof nm, "%s.5x5_reduce", id);
    br[2] = conv_relu(cc, nm, x, SQ(cin, c[3], h, 1, 1, 0), &hh);
    snprintf(nm, sizeof nm, "%s.5x5", id);
    br[2] = conv_relu(cc, nm, br[2], SQ(c[3], c[4], h, 5, 1, 2), &hh);
    snprintf(nm, sizeof nm, "%s.pool", id);
    br[3] = vendor4(cc, nm, "MaxPool", &x, 1, cin, h);
    snprintf(nm, sizeof nm, "%s.pool_proj", id);
    br[3] = conv_relu(cc, nm, br[3], SQ(cin, c[5], h, 1, 1, 0), &hh);
    *cout = c[0] + c[2] + c[4] + c[5];
    snprintf(nm, sizeof nm, "%s.concat", id);
    return vendor4(cc, nm, "Concat", br, 4, *cout, h);
}

/* GoogLeNet (Szegedy et al. 2015, Table 1): the stem, Inception 3a-3b,
 * 4a-4e and 5a-5b with max pools between, a 7x7 average pool and the 1000
 * classifier.  Layers count the 9 Inception modules. */
static void googlenet_build(zb *z, const rotor_zoo_options *o) {
    static const struct { const char *id; int64_t c[6]; bool pool_after; } inc[9] = {
        {"3a", {64, 96, 128, 16, 32, 32}, false},     {"3b", {128, 128, 192, 32, 96, 64}, true},
        {"4a", {192, 96, 208, 16, 48, 64}, false},    {"4b", {160, 112, 224, 24, 64, 64}, false},
        {"4c", {128, 128, 256, 24, 64, 64}, false},   {"4d", {112, 144, 288, 32, 64, 64}, false},
        {"4e", {256, 160, 320, 32, 128, 128}, true},  {"5a", {256, 160, 320, 32, 128, 128}, false},
        {"5b", {384, 192, 384, 48, 128, 128}, false},
    };
    conv_ctx cc = {.z = z, .b = o->batch};
    int64_t img = o->seq ? o->seq : 224, h;
    int64_t is[4] = {cc.b, 3, img, img};
    int x = val(z, ROTOR_ROLE_ACTIVATION, 4, is, "image");
    x = conv_relu(&cc, "conv1", x, SQ(3, 64, img, 7, 2, 3), &h);
    h = (h + 1) / 2; /* 3x3 max pools of stride 2 round up (Caffe's ceil mode): 112 -> 56 */
    x = vendor4(&cc, "pool1", "MaxPool", &x, 1, 64, h);
    x = conv_relu(&cc, "conv2_reduce", x, SQ(64, 64, h, 1, 1, 0), &h);
    x = conv_relu(&cc, "conv2", x, SQ(64, 192, h, 3, 1, 1), &h);
    h = (h + 1) / 2;
    x = vendor4(&cc, "pool2", "MaxPool", &x, 1, 192, h);
    int64_t c = 192;
    int n = o->layers ? (int)o->layers : 9;
    for (int i = 0; i < n; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "inception_%s", inc[i].id);
        x = inception(&cc, nm, x, c, h, inc[i].c, &c);
        if (inc[i].pool_after && i + 1 < n) {
            h = (h + 1) / 2;
            snprintf(nm, sizeof nm, "pool_%s", inc[i].id);
            x = vendor4(&cc, nm, "MaxPool", &x, 1, c, h);
        }
    }
    classify(&cc, x, c, 1000); /* the 7x7 average pool is global at 224; dropout is the identity */
}

/* MobileNet (Howard et al. 2017, Table 1; width 1.0, 224): a 3x3 convolution
 * of stride 2, then 13 depthwise separable blocks (a 3x3 depthwise and a 1x1
 * pointwise convolution, each with BatchNorm and ReLU), the average pool and
 * the classifier.  Table 1 gives the last depthwise stride 2 on a 7 x 7 map
 * that stays 7 x 7: stride 1 (decision, as every implementation reads it).
 * Layers count the 13 blocks. */
static void mobilenet_v1_build(zb *z, const rotor_zoo_options *o) {
    static const struct { int64_t c, s; } blk[13] = {
        {64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2}, {512, 1},
        {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1},
    };
    conv_ctx cc = {.z = z, .b = o->batch};
    int64_t img = o->seq ? o->seq : 224, h;
    int64_t is[4] = {cc.b, 3, img, img};
    int x = val(z, ROTOR_ROLE_ACTIVATION, 4, is, "image");
    x = conv_bn(&cc, "conv0", x, SQ(3, 32, img, 3, 2, 1), CA_RELU, &h);
    int64_t cin = 32;
    int n = o->layers ? (int)o->layers : 13;
    for (int i = 0; i < n; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "b%d.dw", i);
        x = conv_bn(&cc, nm, x, DW(cin, h, 3, blk[i].s, 1), CA_RELU, &h);
        snprintf(nm, sizeof nm, "b%d.pw", i);
        x = conv_bn(&cc, nm, x, SQ(cin, blk[i].c, h, 1, 1, 0), CA_RELU, &h);
        cin = blk[i].c;
    }
    classify(&cc, x, cin, 1000);
}

/* MLP-L (PRIME, Chi et al. 2016, as nn_dataflow gives it): 784 -> 1500 ->
 * 1000 -> 500 -> 10, with biases and ReLU between (decision: the paper
 * names the widths only).  Layers count the 4 fully connected layers. */
static void mlp_build(zb *z, const rotor_zoo_options *o) {
    static const int64_t widths[5] = {784, 1500, 1000, 500, 10};
    conv_ctx cc = {.z = z, .b = o->batch};
    int x = val2(z, ROTOR_ROLE_ACTIVATION, cc.b, 784, "input");
    int n = o->layers ? (int)o->layers : 4;
    fc_stack(&cc, "fc", 1, x, widths, n + 1);
}

/* The LSTM of sequence to sequence learning (Sutskever et al. 2014): 4
 * layers of 1000 units, one time step of every layer (nn_dataflow's GNMT
 * network); the word embeddings and the 80,000-word softmax are left out,
 * as there.  Each layer's state (h, c) is an input.  Layers count the 4
 * LSTM layers. */
static void lstm_build(zb *z, const rotor_zoo_options *o) {
    const int64_t n = 1000, b = o->batch;
    int x = val2(z, ROTOR_ROLE_ACTIVATION, b, n, "embedding");
    int layers = o->layers ? (int)o->layers : 4;
    for (int l = 0; l < layers && !z->st; l++) {
        char pfx[16], nm[32];
        snprintf(pfx, sizeof pfx, "l%d", l);
        snprintf(nm, sizeof nm, "l%d.h", l);
        int hp = val2(z, ROTOR_ROLE_ACTIVATION, b, n, nm);
        snprintf(nm, sizeof nm, "l%d.c", l);
        int cp = val2(z, ROTOR_ROLE_ACTIVATION, b, n, nm);
        int c2;
        x = lstm_step(z, pfx, x, hp, cp, b, n, n, &c2);
        if (!z->st) z->g->values[c2].is_output = true;
    }
    if (!z->st) z->g->values[x].is_output = true;
}

/* ---- the table ---------------------------------------------------------- */

typedef enum {
    K_TF, K_RESNET18, K_RESNET50, K_NERF, K_NERF_T10, K_MOBILENET_V2, K_DENSENET121, K_DLRM, K_CONFORMER,
    K_ALEXNET, K_VGG16, K_GOOGLENET, K_MOBILENET_V1, K_MLP, K_LSTM
} kind;

typedef struct zoo_model {
    rotor_zoo_entry entry;
    kind k;
    tf_model tf;
} zoo_model;

#define TF(d_, l_, h_, g_, hd_, f_, gated_, act_, bias_, rms_, norms_) \
    {.d = d_, .layers = l_, .heads = h_, .kv_heads = g_, .head_dim = hd_, .ffn = f_, \
     .gated = gated_, .act = act_, .bias = bias_, .rms = rms_, .norms = norms_}

static const zoo_model models[] = {
    /* BERT (Devlin et al. 2019): vocab 30522, 512 positions; HF counts 109.5M / 335.1M */
    {{"bert-base", "BERT-Base encoder, 12 x 768, seq 128", 110e6, false}, K_TF,
     {TF(768, 12, 12, 12, 64, 3072, false, ACT_GELU, true, false, 2), FAM_BERT, 30522, 512, false, 0, 0, 0, 0, 128, 0}},
    {{"bert-large", "BERT-Large encoder, 24 x 1024, seq 128", 336e6, false}, K_TF,
     {TF(1024, 24, 16, 16, 64, 4096, false, ACT_GELU, true, false, 2),
      FAM_BERT, 30522, 512, false, 0, 0, 0, 0, 128, 0}},
    /* ViT (Dosovitskiy et al. 2021): 224 x 224, patch 16, 1000 classes */
    {{"vit-base", "ViT-B/16, 12 x 768, 224 x 224 images", 86e6, false}, K_TF,
     {TF(768, 12, 12, 12, 64, 3072, false, ACT_GELU, true, false, 2), FAM_VIT, 0, 0, false, 1000, 16, 224, 3, 197, 0}},
    {{"vit-large", "ViT-L/16, 24 x 1024, 224 x 224 images", 304e6, false}, K_TF,
     {TF(1024, 24, 16, 16, 64, 4096, false, ACT_GELU, true, false, 2), FAM_VIT, 0, 0, false, 1000, 16, 224, 3, 197, 0}},
    {{"resnet-18", "ResNet-18, 224 x 224 images", 11.69e6, false}, K_RESNET18, {.vocab = 0}},
    {{"resnet-50", "ResNet-50 (v1.5), 224 x 224 images", 25.56e6, false}, K_RESNET50, {.vocab = 0}},
    /* NeRF: one MLP of Mildenhall et al. Figure 7 (595,844 weights by that figure) */
    {{"nerf", "NeRF MLP, 8 x 256, batch = rays, seq = samples per ray (192)", 595844, false}, K_NERF, {.vocab = 0}},
    /* T10 Table 2's NeRF: 24K weights (nerf_build says how it is shaped) */
    {{"nerf-t10", "NeRF MLP at T10 Table 2's size (24K), 4 x 64, batch = rays", 24000, false}, K_NERF_T10,
     {.vocab = 0}},
    /* OPT (Zhang et al. 2022): vocab 50272, 2050 learned positions, tied head, ReLU */
    /* RetNet-1.3B (Sun et al. 2023, Table 7's 1.3B: 24 x 2048, 8 heads, FFN
     * 2d): 12 d^2 per layer; the vocabulary is not given: GPT-2's 50,257,
     * tied (decision; untied, the count would be 1.41B).  seq: its 2048
     * training length. */
    {{"retnet-1.3b", "RetNet-1.3B decoder, 24 x 2048, retention (parallel prefill, recurrent decode)", 1.3e9, true},
     K_TF, {TF(2048, 24, 8, 8, 256, 4096, false, ACT_GELU, false, false, 2), FAM_RETNET, 50257, 0, true, 0, 0, 0, 0,
            2048, 0}},
    {{"opt-1.3b", "OPT-1.3B decoder, 24 x 2048", 1.3158e9, true}, K_TF,
     {TF(2048, 24, 32, 32, 64, 8192, false, ACT_RELU, true, false, 2),
      FAM_DECODER, 50272, 2050, true, 0, 0, 0, 0, 2048, 0}},
    {{"opt-13b", "OPT-13B decoder, 40 x 5120", 12.85e9, true}, K_TF,
     {TF(5120, 40, 40, 40, 128, 20480, false, ACT_RELU, true, false, 2),
      FAM_DECODER, 50272, 2050, true, 0, 0, 0, 0, 2048, 0}},
    {{"opt-30b", "OPT-30B decoder, 48 x 7168", 29.97e9, true}, K_TF,
     {TF(7168, 48, 56, 56, 128, 28672, false, ACT_RELU, true, false, 2),
      FAM_DECODER, 50272, 2050, true, 0, 0, 0, 0, 2048, 0}},
    /* Llama 2 (Touvron et al. 2023): vocab 32000, RMSNorm, SwiGLU, untied head */
    {{"llama2-7b", "Llama 2 7B decoder, 32 x 4096", 6.74e9, true}, K_TF,
     {TF(4096, 32, 32, 32, 128, 11008, true, ACT_RELU, false, true, 2),
      FAM_DECODER, 32000, 0, false, 0, 0, 0, 0, 2048, 0}},
    {{"llama2-13b", "Llama 2 13B decoder, 40 x 5120", 13.0e9, true}, K_TF,
     {TF(5120, 40, 40, 40, 128, 13824, true, ACT_RELU, false, true, 2),
      FAM_DECODER, 32000, 0, false, 0, 0, 0, 0, 2048, 0}},
    {{"llama2-70b", "Llama 2 70B decoder, 80 x 8192, grouped-query attention (8 KV heads)", 69.0e9, true}, K_TF,
     {TF(8192, 80, 64, 8, 128, 28672, true, ACT_RELU, false, true, 2),
      FAM_DECODER, 32000, 0, false, 0, 0, 0, 0, 2048, 0}},
    /* Gemma 2 (Gemma Team 2024): 27B, 46 layers, 32 heads of 128, 16 KV heads,
     * GeGLU 36864, vocab 256000 tied, four RMSNorms per layer */
    {{"gemma2-27b", "Gemma 2 27B decoder, 46 x 4608, grouped-query attention (16 KV heads)", 27.2e9, true}, K_TF,
     {TF(4608, 46, 32, 16, 128, 36864, true, ACT_GELU, false, true, 4), FAM_DECODER, 256000, 0, true, 0, 0, 0, 0, 2048,
      4096}},
    /* DiT-XL/2 (Peebles & Xie 2023): 28 x 1152, latent 32 x 32 x 4, patch 2 */
    {{"dit-xl", "DiT-XL/2, 28 x 1152, 256 x 256 images (32 x 32 x 4 latents)", 675e6, false}, K_TF,
     {TF(1152, 28, 16, 16, 72, 4608, false, ACT_GELU, true, false, 2), FAM_DIT, 0, 0, false, 1000, 2, 32, 4, 256, 0}},
    /* GraphTurbo Table 2's models the rest of the zoo lacked (docs/zoo.md).
     * MobileNet-v2: torchvision counts 3,504,872; DenseNet-121: 7,978,856 */
    {{"mobilenet-v2", "MobileNet-v2 (width 1.0), 224 x 224 images", 3.50e6, false}, K_MOBILENET_V2, {.vocab = 0}},
    {{"densenet-121", "DenseNet-121 (growth 32), 224 x 224 images", 7.98e6, false}, K_DENSENET121, {.vocab = 0}},
    /* DLRM: no model card gives a count; 24,036,595,969 is MLPerf's
     * configuration counted by hand (the tables hold 24.03B of it) */
    {{"dlrm", "DLRM, MLPerf's Criteo Terabyte model (26 tables of 128; seq caps their rows, 40M)", 24.04e9, false},
     K_DLRM, {.vocab = 0}},
    /* Conformer-M: Gulati et al. 2020, Table 1 (30.7M with its decoder) */
    {{"conformer-m", "Conformer-M, 16 x 256, seq = 10 ms filterbank frames (1000), one LSTM decoder step", 30.7e6,
      false}, K_CONFORMER, {.vocab = 0}},
    /* KAPLA's networks (KAPLA §V).  AlexNet: Figure 2's layers with their
     * biases, which the paper rounds to "60 million"; VGG-16: Table 2's 138M;
     * GoogLeNet: Table 1's widths, 6,998K with the biases (its printed 6.8M
     * undercounts its own columns: 3a is 163,328 by its widths, printed 159K); MobileNet: Table 2's 4.2M; MLP-L: its
     * widths' count; LSTM: Sutskever §3.4, "32M for the encoder" LSTM. */
    {{"alexnet", "AlexNet, two towers, 227 x 227 images", 60965224, false}, K_ALEXNET, {.vocab = 0}},
    {{"vgg-16", "VGG-16 (configuration D), 224 x 224 images", 138e6, false}, K_VGG16, {.vocab = 0}},
    {{"googlenet", "GoogLeNet (Inception v1), 224 x 224 images", 6.998e6, false}, K_GOOGLENET, {.vocab = 0}},
    {{"mobilenet-v1", "MobileNet (v1, width 1.0), 224 x 224 images", 4.2e6, false}, K_MOBILENET_V1, {.vocab = 0}},
    {{"mlp-l", "MLP-L (PRIME), 784-1500-1000-500-10", 3184010, false}, K_MLP, {.vocab = 0}},
    {{"lstm", "seq2seq LSTM, 4 x 1000, one time step", 32e6, false}, K_LSTM, {.vocab = 0}},
};

/* What layers counts in a non-transformer model, and how many it has:
 * more would be cut silently (issue 19). */
static int64_t layers_of(kind k, const char **noun) {
    *noun = "layers";
    switch (k) {
    case K_TF: return 1000;
    case K_NERF: return 8;
    case K_NERF_T10: return 4;
    case K_MOBILENET_V2: *noun = "stages"; return 7;
    case K_DENSENET121: *noun = "dense blocks"; return 4;
    case K_DLRM: *noun = "sparse features"; return 26;
    case K_CONFORMER: return 16;
    case K_ALEXNET: return 8;
    case K_VGG16: *noun = "blocks"; return 5;
    case K_GOOGLENET: *noun = "Inception modules"; return 9;
    case K_MOBILENET_V1: *noun = "blocks"; return 13;
    case K_MLP: return 4;
    case K_LSTM: return 4;
    default: *noun = "stages"; return 4; /* the ResNets */
    }
}

#define NMODELS ((int)(sizeof models / sizeof models[0]))

int rotor_zoo_count(void) { return NMODELS; }
const rotor_zoo_entry *rotor_zoo_at(int i) { return i >= 0 && i < NMODELS ? &models[i].entry : NULL; }
const rotor_zoo_entry *rotor_zoo_find(const char *name) {
    for (int i = 0; i < NMODELS; i++)
        if (strcmp(models[i].entry.name, name) == 0) return &models[i].entry;
    return NULL;
}

int64_t rotor_zoo_layers(const char *name) {
    for (int i = 0; name && i < NMODELS; i++)
        if (strcmp(models[i].entry.name, name) == 0) {
            const char *noun;
            return models[i].k == K_TF ? models[i].tf.s.layers : layers_of(models[i].k, &noun);
        }
    return 0;
}

rotor_status rotor_zoo_build(const char *name, const rotor_zoo_options *opt, rotor_graph *out,
                             rotor_error *err) {
    rotor_graph_init(out, name ? name : "");
    const zoo_model *m = NULL;
    for (int i = 0; name && i < NMODELS; i++)
        if (strcmp(models[i].entry.name, name) == 0) m = &models[i];
    if (!m) {
        char names[512], hint[96];
        const char *known[NMODELS];
        size_t n = 0;
        for (int i = 0; i < NMODELS && n < sizeof names; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", models[i].entry.name);
        for (int i = 0; i < NMODELS; i++) known[i] = models[i].entry.name;
        return rotor_fail(err, ROTOR_ERR_INPUT, "unknown model '%s'%s (the zoo has %s)", name ? name : "",
                          rotor_suggest_phrase(name, known, NMODELS, hint, sizeof hint), names);
    }
    rotor_zoo_options o = opt ? *opt : (rotor_zoo_options){0};
    if (o.batch < 0 || o.seq < 0 || o.layers < 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: batch, seq and layers must be positive", name);
    if (o.batch == 0) o.batch = 1;
    /* DLRM's seq caps its tables' rows: up to MLPerf's 40M */
    int64_t most_seq = m->k == K_DLRM ? 40000000 : 1 << 24;
    if (o.batch > (1 << 20) || o.seq > most_seq || o.layers > 1000)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "%s: batch %lld, seq %lld or layers %lld out of range (at most 2^20, %s, 1000)",
                          name, (long long)o.batch, (long long)o.seq, (long long)o.layers,
                          m->k == K_DLRM ? "40,000,000 rows" : "2^24");
    if (o.phase == ROTOR_PHASE_DECODE && !m->entry.llm)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s has no decode phase (only the LLMs do)", name);
    if (o.layers_only && !m->entry.llm)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: only the LLMs' decoder layers are built alone", name);
    /* a transformer has its own count (it was 1000 for every one until
     * 2026-12-04: llama2-13b --layers 41 built 41 layers under that name;
     * found by an audit helper) */
    const char *noun = "layers";
    int64_t most = m->k == K_TF ? m->tf.s.layers : layers_of(m->k, &noun);
    if (o.layers > most)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: layers %lld: it has %lld %s", name, (long long)o.layers,
                          (long long)most, noun);
    if (m->k == K_CONFORMER && o.seq && o.seq < 7) /* two 3x3 windows of stride 2 need 7 frames */
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: seq %lld: the subsampling needs at least 7 frames", name,
                          (long long)o.seq);
    /* models with no sequence: a seq would change nothing, silently
     * (`rotor explore mlp-l --sweep seq=16,1024` gave identical rows; found
     * by an audit helper) */
    if ((m->k == K_MLP || m->k == K_LSTM) && o.seq)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: seq %lld: it has no sequence (%s)", name, (long long)o.seq,
                          m->k == K_MLP ? "a sample is one 784-wide vector" : "one time step of every layer");
    zb z = {.g = out, .err = err};
    switch (m->k) {
    case K_TF: {
        if (o.seq == 0) o.seq = m->tf.default_seq;
        if (o.layers == 0) o.layers = m->tf.s.layers;
        if (m->tf.positions && o.seq > m->tf.positions - 2 && m->tf.fam == FAM_DECODER)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: seq %lld exceeds the %lld learned positions", name,
                              (long long)o.seq, (long long)(m->tf.positions - 2));
        if (m->tf.positions && o.seq > m->tf.positions && m->tf.fam == FAM_BERT)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: seq %lld exceeds the %lld learned positions", name,
                              (long long)o.seq, (long long)m->tf.positions);
        if (m->tf.window && o.seq > m->tf.window && o.phase == ROTOR_PHASE_PREFILL)
            /* its local layers attend a band of the scores, which the
             * dense attention here would overprice (decision) */
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "%s: seq %lld: a prefill longer than its local layers' %lld-position sliding window "
                              "is not modelled (the decode step is: --decode)",
                              name, (long long)o.seq, (long long)m->tf.window);
        if ((m->tf.fam == FAM_VIT || m->tf.fam == FAM_DIT) && opt && opt->seq && opt->seq != m->tf.default_seq)
            /* the tokens come from the image; a seq that changed nothing
             * would pass silently (issue 19) */
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "%s: seq %lld: its sequence is %lld tokens, fixed by its %lld x %lld images",
                              name, (long long)opt->seq, (long long)m->tf.default_seq, (long long)m->tf.image,
                              (long long)m->tf.image);
        tf_build(&z, &m->tf, &o);
        break;
    }
    case K_RESNET18: resnet_build(&z, false, (const int[]){2, 2, 2, 2}, &o); break;
    case K_RESNET50: resnet_build(&z, true, (const int[]){3, 4, 6, 3}, &o); break;
    case K_NERF: nerf_build(&z, &o, 256, 8); break;
    case K_NERF_T10: nerf_build(&z, &o, 64, 4); break;
    case K_MOBILENET_V2: mobilenet_v2_build(&z, &o); break;
    case K_DENSENET121: densenet121_build(&z, &o); break;
    case K_DLRM: dlrm_build(&z, &o); break;
    case K_CONFORMER: conformer_build(&z, &o); break;
    case K_ALEXNET: alexnet_build(&z, &o); break;
    case K_VGG16: vgg16_build(&z, &o); break;
    case K_GOOGLENET: googlenet_build(&z, &o); break;
    case K_MOBILENET_V1: mobilenet_v1_build(&z, &o); break;
    case K_MLP: mlp_build(&z, &o); break;
    case K_LSTM: lstm_build(&z, &o); break;
    }
    return z.st;
}
