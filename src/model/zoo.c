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
    if (!bias) return y;
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
    if (s->adaln) { /* modulation: shift, scale, gate for attention and MLP */
        snprintf(nm, sizeof nm, "l%d.adaln", l);
        linear(z, nm, cond, b, d, 6 * d, true);
    }
    snprintf(nm, sizeof nm, "l%d.norm1", l);
    int n1 = norm(z, nm, x, t, d, s->rms);
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
    x = eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", x, ao, t, d);
    snprintf(nm, sizeof nm, "l%d.norm2", l);
    int n2 = norm(z, nm, x, t, d, s->rms);
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
    return eltwise(z, nm, "Add", "Y[m,n] = X[m,n] + R[m,n]", x, dn, t, d);
}

typedef enum { FAM_BERT, FAM_VIT, FAM_DECODER, FAM_DIT } family;

typedef struct tf_model {
    tf_spec s;
    family fam;
    int64_t vocab, positions;   /* learned position table rows (0: none) */
    bool tied;                  /* LM head shares the embedding table */
    int64_t classes, patch, image, channels; /* ViT / DiT */
    int64_t default_seq;
} tf_model;

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
    for (int l = 0; l < o->layers && !z->st; l++) {
        int kc = -1, vc = -1;
        if (decode) {
            int64_t cs[4] = {b, s->kv_heads, c, s->head_dim};
            kc = val(z, ROTOR_ROLE_KV_CACHE, 4, cs, "l%d.k_cache", l);
            vc = val(z, ROTOR_ROLE_KV_CACHE, 4, cs, "l%d.v_cache", l);
        }
        x = tf_layer(z, s, l, x, b, q, c, kc, vc, cond);
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
        linear(z, "final.adaln", cond, b, d, 2 * d, true);
        int xn = norm(z, "final_norm", x, t, d, false);
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
    linear(z, "sigma", x, t, width, 1, true);
    int f = linear(z, "feature", x, t, width, width, true);
    int dir = val2(z, ROTOR_ROLE_ACTIVATION, t, 27, "dir_enc");
    int in[2] = {f, dir};
    int cat = vendor(z, "dir_concat", "Concat", in, 2, t, width + 27);
    int hdir = linear(z, "dir_fc", cat, t, width + 27, width / 2, true);
    hdir = eltwise(z, "dir_fc.relu", "Relu", "Y[m,n] = relu(X[m,n])", hdir, -1, t, width / 2);
    int rgb = linear(z, "rgb", hdir, t, width / 2, 3, true);
    if (!z->st) z->g->values[rgb].is_output = true;
}

/* ---- the table ---------------------------------------------------------- */

typedef enum { K_TF, K_RESNET18, K_RESNET50, K_NERF, K_NERF_T10 } kind;

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
     {TF(768, 12, 12, 12, 64, 3072, false, ACT_GELU, true, false, 2), FAM_BERT, 30522, 512, false, 0, 0, 0, 0, 128}},
    {{"bert-large", "BERT-Large encoder, 24 x 1024, seq 128", 336e6, false}, K_TF,
     {TF(1024, 24, 16, 16, 64, 4096, false, ACT_GELU, true, false, 2), FAM_BERT, 30522, 512, false, 0, 0, 0, 0, 128}},
    /* ViT (Dosovitskiy et al. 2021): 224 x 224, patch 16, 1000 classes */
    {{"vit-base", "ViT-B/16, 12 x 768, 224 x 224 images", 86e6, false}, K_TF,
     {TF(768, 12, 12, 12, 64, 3072, false, ACT_GELU, true, false, 2), FAM_VIT, 0, 0, false, 1000, 16, 224, 3, 197}},
    {{"vit-large", "ViT-L/16, 24 x 1024, 224 x 224 images", 304e6, false}, K_TF,
     {TF(1024, 24, 16, 16, 64, 4096, false, ACT_GELU, true, false, 2), FAM_VIT, 0, 0, false, 1000, 16, 224, 3, 197}},
    {{"resnet-18", "ResNet-18, 224 x 224 images", 11.69e6, false}, K_RESNET18, {.vocab = 0}},
    {{"resnet-50", "ResNet-50 (v1.5), 224 x 224 images", 25.56e6, false}, K_RESNET50, {.vocab = 0}},
    /* NeRF: one MLP of Mildenhall et al. Figure 7 (595,844 weights by that figure) */
    {{"nerf", "NeRF MLP, 8 x 256, batch = rays, seq = samples per ray (192)", 595844, false}, K_NERF, {.vocab = 0}},
    /* T10 Table 2's NeRF: 24K weights (nerf_build says how it is shaped) */
    {{"nerf-t10", "NeRF MLP at T10 Table 2's size (24K), 4 x 64, batch = rays", 24000, false}, K_NERF_T10,
     {.vocab = 0}},
    /* OPT (Zhang et al. 2022): vocab 50272, 2050 learned positions, tied head, ReLU */
    {{"opt-1.3b", "OPT-1.3B decoder, 24 x 2048", 1.3158e9, true}, K_TF,
     {TF(2048, 24, 32, 32, 64, 8192, false, ACT_RELU, true, false, 2), FAM_DECODER, 50272, 2050, true, 0, 0, 0, 0, 2048}},
    {{"opt-13b", "OPT-13B decoder, 40 x 5120", 12.85e9, true}, K_TF,
     {TF(5120, 40, 40, 40, 128, 20480, false, ACT_RELU, true, false, 2), FAM_DECODER, 50272, 2050, true, 0, 0, 0, 0, 2048}},
    {{"opt-30b", "OPT-30B decoder, 48 x 7168", 29.97e9, true}, K_TF,
     {TF(7168, 48, 56, 56, 128, 28672, false, ACT_RELU, true, false, 2), FAM_DECODER, 50272, 2050, true, 0, 0, 0, 0, 2048}},
    /* Llama 2 (Touvron et al. 2023): vocab 32000, RMSNorm, SwiGLU, untied head */
    {{"llama2-7b", "Llama 2 7B decoder, 32 x 4096", 6.74e9, true}, K_TF,
     {TF(4096, 32, 32, 32, 128, 11008, true, ACT_RELU, false, true, 2), FAM_DECODER, 32000, 0, false, 0, 0, 0, 0, 2048}},
    {{"llama2-13b", "Llama 2 13B decoder, 40 x 5120", 13.0e9, true}, K_TF,
     {TF(5120, 40, 40, 40, 128, 13824, true, ACT_RELU, false, true, 2), FAM_DECODER, 32000, 0, false, 0, 0, 0, 0, 2048}},
    {{"llama2-70b", "Llama 2 70B decoder, 80 x 8192, grouped-query attention (8 KV heads)", 69.0e9, true}, K_TF,
     {TF(8192, 80, 64, 8, 128, 28672, true, ACT_RELU, false, true, 2), FAM_DECODER, 32000, 0, false, 0, 0, 0, 0, 2048}},
    /* Gemma 2 (Gemma Team 2024): 27B, 46 layers, 32 heads of 128, 16 KV heads,
     * GeGLU 36864, vocab 256000 tied, four RMSNorms per layer */
    {{"gemma2-27b", "Gemma 2 27B decoder, 46 x 4608, grouped-query attention (16 KV heads)", 27.2e9, true}, K_TF,
     {TF(4608, 46, 32, 16, 128, 36864, true, ACT_GELU, false, true, 4), FAM_DECODER, 256000, 0, true, 0, 0, 0, 0, 2048}},
    /* DiT-XL/2 (Peebles & Xie 2023): 28 x 1152, latent 32 x 32 x 4, patch 2 */
    {{"dit-xl", "DiT-XL/2, 28 x 1152, 256 x 256 images (32 x 32 x 4 latents)", 675e6, false}, K_TF,
     {TF(1152, 28, 16, 16, 72, 4608, false, ACT_GELU, true, false, 2), FAM_DIT, 0, 0, false, 1000, 2, 32, 4, 256}},
};

#define NMODELS ((int)(sizeof models / sizeof models[0]))

int rotor_zoo_count(void) { return NMODELS; }
const rotor_zoo_entry *rotor_zoo_at(int i) { return i >= 0 && i < NMODELS ? &models[i].entry : NULL; }
const rotor_zoo_entry *rotor_zoo_find(const char *name) {
    for (int i = 0; i < NMODELS; i++)
        if (strcmp(models[i].entry.name, name) == 0) return &models[i].entry;
    return NULL;
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
    if (o.batch > (1 << 20) || o.seq > (1 << 24) || o.layers > 1000)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "%s: batch %lld, seq %lld or layers %lld out of range (at most 2^20, 2^24, 1000)",
                          name, (long long)o.batch, (long long)o.seq, (long long)o.layers);
    if (o.phase == ROTOR_PHASE_DECODE && !m->entry.llm)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s has no decode phase (only the LLMs do)", name);
    /* ResNets count stages (4), NeRF its layers (8): more would be cut silently */
    bool nerf = m->k == K_NERF || m->k == K_NERF_T10;
    int64_t most = m->k == K_NERF ? 8 : m->k == K_NERF_T10 ? 4 : m->k == K_TF ? 1000 : 4;
    if (o.layers > most)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: layers %lld: it has %lld %s", name, (long long)o.layers,
                          (long long)most, nerf || m->k == K_TF ? "layers" : "stages");
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
    }
    return z.st;
}
