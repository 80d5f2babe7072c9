/* onnxms.c — shape rules of onnxruntime's com.microsoft operators, the form
 * of every onnxruntime-optimised transformer (onnxruntime's
 * ContribOperators.md; docs/onnx.md, "onnxruntime operators").
 *
 * Attention, MultiHeadAttention and GroupQueryAttention are lowered to the
 * same operators the zoo's attention uses (lowerattn.c); the others are
 * element-wise or normalisations and import as vendor ops, as the zoo's
 * norms do.  Decisions where onnxruntime's text leaves room:
 *  - only the unpacked 3-D forms of query, key and value are taken; packed
 *    QKV (GroupQueryAttention with key absent) is split by num_heads and
 *    kv_num_heads;
 *  - a present key or value is past + new along the sequence (past_sequence
 *    + sequence), the form without a shared buffer. */
#include "onnxir.h"

#include <string.h>

/* Same shape and type as input 0: Gelu, FastGelu, BiasGelu, QuickGelu,
 * RotaryEmbedding. */
rotor_status ox_infer_ms_same(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, x->shape, err);
}

/* SkipLayerNormalization (input, skip, gamma, beta?, bias?) and
 * SkipSimplifiedLayerNormalization: output like input; mean and inv_std_var
 * [.., 1]; input_skip_bias_sum like input. */
rotor_status ox_infer_skipnorm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err))) return st;
    ox_val *x = ox_in(m, n, 0), *s = ox_in(m, n, 1), *g = ox_in(m, n, 2);
    if (x->rank < 2) NFAIL("input '%s' has rank %d; needs [.., hidden]", x->name, x->rank);
    int64_t h = x->shape[x->rank - 1];
    if (s->rank < 1 || s->shape[s->rank - 1] != h || g->elems != h)
        NFAIL("skip '%s' and gamma '%s' must end in the hidden size %lld", s->name, g->name, (long long)h);
    if ((st = ox_set_out(m, n, 0, x->onnx_type, x->rank, x->shape, err))) return st;
    int64_t red[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) red[d] = d == x->rank - 1 ? 1 : x->shape[d];
    for (int i = 1; i < n->nout && i < 3; i++)
        if ((st = ox_set_out(m, n, i, T_FLOAT, x->rank, red, err))) return st;
    if (n->nout > 3 && (st = ox_set_out(m, n, 3, x->onnx_type, x->rank, x->shape, err))) return st;
    return ROTOR_OK;
}

/* EmbedLayerNormalization (input_ids [B, S], segment_ids?, word_embedding
 * [V, H], ...): [B, S, H] like the embedding, mask_index [B] int32,
 * embedding_sum [B, S, H]. */
rotor_status ox_infer_embednorm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err))) return st;
    ox_val *ids = ox_in(m, n, 0), *w = ox_in(m, n, 2);
    if (ids->rank != 2 || w->rank != 2) NFAIL("needs input_ids [batch, sequence] and word_embedding [vocab, hidden]");
    int64_t y[3] = {ids->shape[0], ids->shape[1], w->shape[1]};
    if ((st = ox_set_out(m, n, 0, w->onnx_type, 3, y, err))) return st;
    if (n->nout > 1 && (st = ox_set_out(m, n, 1, T_INT32, 1, ids->shape, err))) return st;
    if (n->nout > 2 && (st = ox_set_out(m, n, 2, w->onnx_type, 3, y, err))) return st;
    return ROTOR_OK;
}

rotor_status ox_attention_shape(ox_model *m, ox_node *n, ox_attention *a, rotor_error *err) {
    const char *op = n->p->op_type;
    memset(a, 0, sizeof *a);
    a->heads = ox_attr_int(n, "num_heads", 0);
    if (a->heads < 1 || a->heads > 65536) NFAIL("num_heads is missing or out of range");
    ox_val *q = ox_in(m, n, 0);
    if (!q || q->rank != 3) NFAIL("only a [batch, sequence, hidden] query is supported");
    a->batch = q->shape[0];
    a->seq = q->shape[1];
    if (!strcmp(op, "Attention")) {
        ox_val *w = ox_in(m, n, 1);
        if (!w || w->rank != 2 || w->shape[0] != q->shape[2]) NFAIL("weights must be [input hidden, q + k + v hidden]");
        int cnt;
        const int64_t *hs = ox_attr_ints(n, "qkv_hidden_sizes", &cnt);
        if (hs && cnt != 3) NFAIL("qkv_hidden_sizes needs 3 entries");
        a->dq = hs ? hs[0] : w->shape[1] / 3;
        a->dk = hs ? hs[1] : w->shape[1] / 3;
        a->dv = hs ? hs[2] : w->shape[1] / 3;
        if (a->dq + a->dk + a->dv != w->shape[1]) NFAIL("q, k and v hidden sizes do not add up to the weights' %lld",
                                                       (long long)w->shape[1]);
        a->kv_heads = a->heads;
        a->kv_seq = a->seq;
        ox_val *past = ox_in(m, n, 4);
        if (past) {
            if (past->rank != 5 || past->shape[0] != 2) NFAIL("past must be [2, batch, heads, past sequence, head]");
            a->past = past->shape[3];
        }
    } else {
        bool gqa = !strcmp(op, "GroupQueryAttention");
        a->kv_heads = gqa ? ox_attr_int(n, "kv_num_heads", 0) : a->heads;
        if (a->kv_heads < 1 || a->heads % a->kv_heads) NFAIL("kv_num_heads must divide num_heads");
        ox_val *k = ox_in(m, n, 1), *v = ox_in(m, n, 2);
        if (!k || !v) {
            if (!gqa) NFAIL("packed query/key/value is not supported; give query, key and value");
            /* packed QKV: (heads + 2 kv_heads) * head */
            int64_t hd = q->shape[2] / (a->heads + 2 * a->kv_heads);
            a->dq = a->heads * hd;
            a->dk = a->dv = a->kv_heads * hd;
            a->packed = true;
            a->kv_seq = a->seq;
        } else {
            if (k->rank != 3 || v->rank != 3) NFAIL("only [batch, sequence, hidden] key and value are supported");
            a->dq = q->shape[2];
            a->dk = k->shape[2];
            a->dv = v->shape[2];
            a->kv_seq = k->shape[1];
        }
        ox_val *pk = ox_in(m, n, gqa ? 3 : 6);
        if (pk) {
            if (pk->rank != 4) NFAIL("past_key must be [batch, kv heads, past sequence, head]");
            a->past = pk->shape[2];
        }
    }
    if (a->dq % a->heads || a->dk % a->kv_heads || a->dv % a->kv_heads || a->dq / a->heads != a->dk / a->kv_heads)
        NFAIL("hidden sizes q %lld, k %lld, v %lld do not split into %lld and %lld heads of one size",
              (long long)a->dq, (long long)a->dk, (long long)a->dv, (long long)a->heads, (long long)a->kv_heads);
    a->head = a->dq / a->heads;
    a->vhead = a->dv / a->kv_heads;
    return ROTOR_OK;
}

/* Attention, MultiHeadAttention, GroupQueryAttention: output [B, S, heads *
 * v head]; present (Attention: [2, B, heads, past + S, head]) or
 * present_key / present_value ([B, kv heads, past + kv sequence, head]). */
rotor_status ox_infer_attention(ox_model *m, ox_node *n, rotor_error *err) {
    ox_attention a;
    rotor_status st = ox_attention_shape(m, n, &a, err);
    if (st) return st;
    ox_val *q = ox_in(m, n, 0);
    int64_t y[3] = {a.batch, a.seq, a.heads * a.vhead};
    if ((st = ox_set_out(m, n, 0, q->onnx_type, 3, y, err))) return st;
    if (!strcmp(n->p->op_type, "Attention")) {
        int64_t p[5] = {2, a.batch, a.heads, a.past + a.kv_seq, a.head};
        if (n->nout > 1 && (st = ox_set_out(m, n, 1, q->onnx_type, 5, p, err))) return st;
        return ROTOR_OK;
    }
    int64_t pk[4] = {a.batch, a.kv_heads, a.past + a.kv_seq, a.head}, pv[4] = {a.batch, a.kv_heads, a.past + a.kv_seq,
                                                                            a.vhead};
    if (n->nout > 1 && (st = ox_set_out(m, n, 1, q->onnx_type, 4, pk, err))) return st;
    if (n->nout > 2 && (st = ox_set_out(m, n, 2, q->onnx_type, 4, pv, err))) return st;
    return ROTOR_OK;
}
