/* lowerattn.c — onnxruntime's Attention, MultiHeadAttention and
 * GroupQueryAttention lowered to the operators the zoo's attention uses
 * (zoo.c tf_layer; docs/onnx.md, "onnxruntime operators"):
 *   Attention only: qkv = X W (+ bias), one contraction;
 *   MultiHeadAttention with a bias: q, k, v each + its part of the bias;
 *   with a past: present = past ++ new (a vendor Concat), read as K and V;
 *   scores   S[b,g,r,m,n] += Q[b,g,r,m,k] * K[b,g,n,k]   (g kv heads, r = heads / g)
 *   softmax  a vendor op over the scores (the mask and biases as its inputs);
 *   context  O[b,g,r,m,k] += P[b,g,r,m,n] * V[b,g,n,k].
 * As in the zoo, q, k and v are expression tensors reading a slice, or a
 * head-major view, of their value (the graph records element counts, not
 * which element is which): packed QKV, MultiHeadAttention's packed KV and
 * its key and value already split into heads are such views.  Rotary
 * embedding inside GroupQueryAttention (do_rotary) is element-wise work on q
 * and k that is not charged; the attention's own scale is free. */
#include "lowerint.h"

#include <stdio.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* A new activation value <node><suffix> of the given shape. */
static rotor_status value(lower_ctx *c, const ox_node *n, const char *suffix, int rank, const int64_t *shape,
                          int *out) {
    return lw_new_val(c, n, n->name, suffix, c->m->vals[ox_resolve(c->m, n->in[0])].dtype, rank, shape, out);
}

/* A vendor op <node><suffix> from ins to out. */
static rotor_status vendor_op(lower_ctx *c, const ox_node *n, const char *suffix, const char *type, const int *ins,
                              int nin, int out) {
    char name[256];
    snprintf(name, sizeof name, "%s%s", n->name, suffix);
    return lw_op(c, n, name, type, NULL, NULL, NULL, 0, ins, nin, out);
}

/* x + bias[d] over [b, s, d] (bias: a slice of the bias value). */
static rotor_status add_bias(lower_ctx *c, const ox_node *n, const char *suffix, int x, int bias, int64_t b, int64_t s,
                             int64_t d, int *out) {
    int64_t shape[3] = {b, s, d};
    char dims[96];
    snprintf(dims, sizeof dims, "b=%lld,s=%lld,d=%lld", (long long)b, (long long)s, (long long)d);
    rotor_status st = value(c, n, suffix, 3, shape, out);
    int tv[3] = {*out, x, bias};
    return st ? st : lw_expr(c, n, suffix, "Add", "Y[b,s,d] = X[b,s,d] + B[d]", dims, tv, 3, *out);
}

/* The present key or value: past ++ new when a past is given, else a copy
 * of new; written to output k of the node when it is read.  A
 * GroupQueryAttention whose present is not past + new (a shared buffer of
 * max(total, past) rows, onnxruntime's present_sequence_length) writes the
 * new rows into it: a vendor KVCacheUpdate of past and new. */
static rotor_status present(lower_ctx *c, const ox_node *n, const ox_attention *a, int past_in, int fresh, int out_k,
                            int *src) {
    ox_model *m = c->m;
    bool live = n->nout > out_k && n->out[out_k] >= 0 && m->vals[n->out[out_k]].live;
    bool has_past = n->nin > past_in && n->in[past_in] >= 0;
    if (!live && !has_past) return ROTOR_OK;
    int pv, ins[2], nin = 0;
    rotor_status st;
    if (live) st = lw_gval(c, n, n->out[out_k], &pv);
    else {
        const ox_val *pst = &m->vals[ox_resolve(m, n->in[past_in])];
        int64_t shape[OX_MAX_RANK];
        memcpy(shape, pst->shape, sizeof shape);
        shape[pst->rank - 2] = pst->rank == 5 ? a->past + a->kv_seq : a->present;
        st = value(c, n, ".present", pst->rank, shape, &pv);
    }
    if (!st && has_past) st = lw_gval(c, n, n->in[past_in], &ins[nin++]);
    if (st) return st;
    ins[nin++] = fresh;
    char sfx[32];
    snprintf(sfx, sizeof sfx, ".present%d", out_k);
    bool concat = a->present == a->past + a->kv_seq;
    if ((st = vendor_op(c, n, sfx, concat ? "Concat" : "KVCacheUpdate", ins, nin, pv))) return st;
    *src = pv;
    return ROTOR_OK;
}

rotor_status lw_attention(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    ox_attention a;
    rotor_status st = ox_attention_shape(m, (ox_node *)n, &a, c->err);
    if (st) return st;
    const char *op = n->p->op_type;
    bool attn = !strcmp(op, "Attention"), gqa = !strcmp(op, "GroupQueryAttention");
    int q, k, v;
    char dims[256];
    if (attn) { /* qkv = X W (+ bias) */
        int x, w, qkv;
        int64_t tot = a.dq + a.dk + a.dv, shape[3] = {a.batch, a.seq, tot};
        const ox_val *xv = &m->vals[ox_resolve(m, n->in[0])];
        if ((st = lw_gval(c, n, n->in[0], &x)) || (st = lw_gval(c, n, n->in[1], &w)) ||
            (st = value(c, n, ".qkv", 3, shape, &qkv)))
            return st;
        snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)(a.batch * a.seq), (long long)xv->shape[2],
                 (long long)tot);
        int tv[3] = {qkv, x, w};
        if ((st = lw_expr(c, n, ".qkv", "MatMul", "Y[m,n] += A[m,k] * B[k,n]", dims, tv, 3, qkv))) return st;
        if (n->nin > 2 && n->in[2] >= 0) {
            int bias, qb;
            if ((st = lw_gval(c, n, n->in[2], &bias)) ||
                (st = add_bias(c, n, ".qkv_bias", qkv, bias, a.batch, a.seq, tot, &qb)))
                return st;
            qkv = qb;
        }
        q = k = v = qkv;
        if ((st = present(c, n, &a, 4, qkv, 1, &k))) return st;
        v = k;
    } else {
        if ((st = lw_gval(c, n, n->in[0], &q))) return st;
        if (a.packed) {
            k = v = q;
        } else if (a.kv_packed) { /* MultiHeadAttention's [B, L, heads, 2, head] */
            if ((st = lw_gval(c, n, n->in[1], &k))) return st;
            v = k;
        } else if ((st = lw_gval(c, n, n->in[1], &k)) || (st = lw_gval(c, n, n->in[2], &v))) {
            return st;
        }
        if (!gqa && n->nin > 3 && n->in[3] >= 0) { /* MultiHeadAttention's packed bias */
            int bias;
            if ((st = lw_gval(c, n, n->in[3], &bias)) ||
                (st = add_bias(c, n, ".q_bias", q, bias, a.batch, a.seq, a.dq, &q)) ||
                (st = add_bias(c, n, ".k_bias", k, bias, a.batch, a.kv_seq, a.dk, &k)) ||
                (st = add_bias(c, n, ".v_bias", v, bias, a.batch, a.kv_seq, a.dv, &v)))
                return st;
        }
        if ((st = present(c, n, &a, gqa ? 3 : 6, k, 1, &k)) || (st = present(c, n, &a, gqa ? 4 : 7, v, 2, &v)))
            return st;
    }
    /* scores, softmax, context: the zoo's attention */
    int64_t len = a.total, sc[3] = {a.batch * a.heads, a.seq, len};
    int scores, probs, out;
    if ((st = value(c, n, ".scores", 3, sc, &scores)) || (st = value(c, n, ".probs", 3, sc, &probs))) return st;
    snprintf(dims, sizeof dims, "b=%lld,g=%lld,r=%lld,m=%lld,k=%lld,n=%lld", (long long)a.batch, (long long)a.kv_heads,
             (long long)(a.heads / a.kv_heads), (long long)a.seq, (long long)a.head, (long long)len);
    int tvs[3] = {scores, q, k};
    if ((st = lw_expr(c, n, ".scores", "MatMul", "S[b,g,r,m,n] += Q[b,g,r,m,k] * K[b,g,n,k]", dims, tvs, 3, scores)))
        return st;
    /* the softmax reads the scores and whatever masks or biases the node has */
    int sin[8], ns = 0;
    sin[ns++] = scores;
    int first_mask = attn ? 3 : gqa ? 5 : 4, last_mask = attn ? 5 : gqa ? 4 : 5;
    for (int i = first_mask; i <= last_mask && i < n->nin && ns < 8; i++) {
        if (n->in[i] < 0 || (attn && i == 4)) continue; /* Attention's past is not a mask */
        if ((st = lw_gval(c, n, n->in[i], &sin[ns]))) return st;
        ns++;
    }
    if ((st = vendor_op(c, n, ".softmax", "Softmax", sin, ns, probs))) return st;
    if ((st = lw_gval(c, n, n->out[0], &out))) return st;
    snprintf(dims, sizeof dims, "b=%lld,g=%lld,r=%lld,m=%lld,k=%lld,n=%lld", (long long)a.batch, (long long)a.kv_heads,
             (long long)(a.heads / a.kv_heads), (long long)a.seq, (long long)a.vhead, (long long)len);
    int tvo[3] = {out, probs, v};
    return lw_expr(c, n, ".context", "MatMul", "O[b,g,r,m,k] += P[b,g,r,m,n] * V[b,g,n,k]", dims, tvo, 3, out);
}
