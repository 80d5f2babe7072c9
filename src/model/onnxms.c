/* onnxms.c — shape rules of onnxruntime's com.microsoft operators, the form
 * of every onnxruntime-optimised transformer (onnxruntime's
 * ContribOperators.md; docs/onnx.md, "onnxruntime operators").
 *
 * Attention, MultiHeadAttention and GroupQueryAttention are lowered to the
 * same operators the zoo's attention uses (lowerattn.c); BiasAdd and
 * BiasSplitGelu are element-wise expressions (lower.c); the others are
 * element-wise or normalisations and import as vendor ops, as the zoo's
 * norms do.  Each rule checks what onnxruntime's schema and its kernels'
 * input checks (attention_base.cc, multihead_attention_helper.h,
 * group_query_attention_helper.h, skip_layer_norm.cc) require, and refuses
 * the rest with the rule named: one type T for the float inputs, the ranks
 * and extents the docs give, the required attributes.  Decisions where
 * onnxruntime's text leaves room:
 *  - MultiHeadAttention takes its query/key/value forms (3-D q, k, v; q
 *    with packed KV [batch, kv sequence, heads, 2, head]; packed QKV [batch,
 *    sequence, heads, 3, head]; key and value already split into heads
 *    [batch, heads, kv sequence, head], cross attention, without a bias or
 *    a past, as onnxruntime takes it);
 *  - GroupQueryAttention's packed QKV is split by num_heads and kv_num_heads;
 *    its present has onnxruntime's max(total_sequence_length, past) rows
 *    (group_query_attention_helper.h), so total_sequence_length must be
 *    known; its scores run over the total;
 *  - Attention's and MultiHeadAttention's present key or value is past + new
 *    along the sequence; their shared-buffer forms (past_present_share_buffer,
 *    past_sequence_length), whose used length is known only at run time,
 *    are refused;
 *  - GroupNorm takes any rank from 3 (its docs draw N x H x W x C; MIGraphX's
 *    files use N x S x C): the channels are the last dimension with
 *    channels_last (its default, 1), else dimension 1. */
#include "onnxir.h"

#include <stdio.h>
#include <string.h>

/* ---- what every rule shares ---------------------------------------------------------------- */

/* "[2,3,4]" */
static const char *shape_of(const ox_val *x, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < x->rank && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? "," : "", (long long)x->shape[d]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

/* onnxruntime's float type constraint: float16, float, bfloat16, and
 * double where the schema lists it. */
static bool ms_float(int t, bool dbl) {
    return t == T_FLOAT || t == T_FLOAT16 || t == T_BFLOAT16 || (dbl && t == T_DOUBLE);
}

/* The inputs idx[] that are present share one float type T (their schema
 * names them all T). */
static rotor_status ms_one_t(ox_model *m, ox_node *n, const int *idx, int cnt, bool dbl, rotor_error *err) {
    const ox_val *first = NULL;
    for (int i = 0; i < cnt; i++) {
        const ox_val *x = ox_in(m, n, idx[i]);
        if (!x) continue;
        if (!ms_float(x->onnx_type, dbl))
            NFAIL("input '%s' is %s; onnxruntime's T is float, float16%s or bfloat16", x->name,
                  ox_type_name(x->onnx_type), dbl ? ", double" : "");
        if (first && x->onnx_type != first->onnx_type)
            NFAIL("input '%s' is %s where '%s' is %s; onnxruntime's schema gives them one type T", x->name,
                  ox_type_name(x->onnx_type), first->name, ox_type_name(first->onnx_type));
        if (!first) first = x;
    }
    return ROTOR_OK;
}

/* Input i, when present, is 1-D with len elements. */
static rotor_status ms_vec(ox_model *m, ox_node *n, int i, const char *what, int64_t len, rotor_error *err) {
    const ox_val *x = ox_in(m, n, i);
    char s[96];
    if (x && (x->rank != 1 || x->shape[0] != len))
        NFAIL("%s '%s' must be [%lld], got %s", what, x->name, (long long)len, shape_of(x, s, sizeof s));
    return ROTOR_OK;
}

/* Input i, when present, is int32 (onnxruntime's M). */
static rotor_status ms_int32(ox_model *m, ox_node *n, int i, const char *what, rotor_error *err) {
    const ox_val *x = ox_in(m, n, i);
    if (x && x->onnx_type != T_INT32)
        NFAIL("%s '%s' is %s; onnxruntime's schema takes int32", what, x->name, ox_type_name(x->onnx_type));
    return ROTOR_OK;
}

/* No input past the schema's last one. */
static rotor_status ms_max_inputs(ox_model *m, ox_node *n, int max, rotor_error *err) {
    for (int i = max; i < n->nin; i++)
        if (ox_in(m, n, i)) NFAIL("takes at most %d inputs; input %d '%s' is one too many", max, i, ox_in(m, n, i)->name);
    return ROTOR_OK;
}

/* ---- element-wise and normalisations --------------------------------------------------------------- */

/* Gelu, FastGelu, BiasGelu, QuickGelu, RotaryEmbedding: same shape and type
 * as input 0.  BiasGelu's bias is 1-D over the last dimension (its schema
 * says so); FastGelu's optional one is that or input 0's shape (its schema
 * gives no shape); RotaryEmbedding needs its position ids and both
 * caches. */
rotor_status ox_infer_ms_same(ox_model *m, ox_node *n, rotor_error *err) {
    static const struct {
        const char *op;
        int need, max;  /* inputs */
        bool dbl, bias; /* T takes double; input 1 is a bias over the last dimension */
    } rows[] = {{"Gelu", 1, 1, true, false},      {"FastGelu", 1, 2, true, true}, {"BiasGelu", 2, 2, true, true},
                {"QuickGelu", 1, 1, true, false}, {"RotaryEmbedding", 4, 4, false, false}};
    int r = 0;
    while (r < (int)(sizeof rows / sizeof rows[0]) - 1 && strcmp(rows[r].op, n->p->op_type)) r++;
    rotor_status st;
    if ((st = ox_need(m, n, rows[r].need, err)) || (st = ms_max_inputs(m, n, rows[r].max, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    static const int t01[2] = {0, 1};
    if (rows[r].bias) {
        if ((st = ms_one_t(m, n, t01, 2, rows[r].dbl, err))) return st;
        if (x->rank < 1) NFAIL("input '%s' is a scalar; the bias runs over its last dimension", x->name);
        const ox_val *b = ox_in(m, n, 1);
        bool whole = b && !strcmp(n->p->op_type, "FastGelu") && b->rank == x->rank &&
                     !memcmp(b->shape, x->shape, sizeof(int64_t) * (size_t)x->rank);
        if (!whole && (st = ms_vec(m, n, 1, "bias", x->shape[x->rank - 1], err))) return st;
    } else if ((st = ms_one_t(m, n, t01, 1, rows[r].dbl, err))) {
        return st;
    }
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, x->shape, err);
}

/* SkipLayerNormalization (input, skip, gamma, beta?, bias?) and
 * SkipSimplifiedLayerNormalization (input, skip, gamma, bias?): input
 * [batch, sequence, hidden] or [tokens, hidden]; skip like input, or
 * [1, sequence, hidden] or [sequence, hidden] for SkipLayerNormalization;
 * gamma, beta and bias [hidden], all of one T.  Outputs: output like input;
 * mean and inv_std_var [.., 1] float; input_skip_bias_sum like input. */
rotor_status ox_infer_skipnorm(ox_model *m, ox_node *n, rotor_error *err) {
    bool simple = !strcmp(n->p->op_type, "SkipSimplifiedLayerNormalization");
    rotor_status st;
    if ((st = ox_need(m, n, 3, err)) || (st = ms_max_inputs(m, n, simple ? 4 : 5, err))) return st;
    static const int all[5] = {0, 1, 2, 3, 4};
    if ((st = ms_one_t(m, n, all, 5, false, err))) return st;
    ox_val *x = ox_in(m, n, 0), *s = ox_in(m, n, 1);
    char xs[96], ss[96];
    if (x->rank != 2 && x->rank != 3)
        NFAIL("input '%s' is %s; needs [batch, sequence, hidden] or [tokens, hidden]", x->name, shape_of(x, xs, sizeof xs));
    int64_t h = x->shape[x->rank - 1];
    bool same = s->rank == x->rank && !memcmp(s->shape, x->shape, sizeof(int64_t) * (size_t)x->rank);
    bool seq = !simple && x->rank == 3 && s->shape[s->rank - 1] == h &&
               ((s->rank == 3 && s->shape[0] == 1 && s->shape[1] == x->shape[1]) ||
                (s->rank == 2 && s->shape[0] == x->shape[1]));
    if (!same && !seq)
        NFAIL("skip '%s' is %s; it must be input's %s%s", s->name, shape_of(s, ss, sizeof ss), shape_of(x, xs, sizeof xs),
              simple ? "" : " (or [1, sequence, hidden], [sequence, hidden])");
    if ((st = ms_vec(m, n, 2, "gamma", h, err)) || (st = ms_vec(m, n, 3, simple ? "bias" : "beta", h, err)) ||
        (!simple && (st = ms_vec(m, n, 4, "bias", h, err))))
        return st;
    if ((st = ox_set_out(m, n, 0, x->onnx_type, x->rank, x->shape, err))) return st;
    int64_t red[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) red[d] = d == x->rank - 1 ? 1 : x->shape[d];
    for (int i = 1; i < n->nout && i < 3; i++)
        if ((st = ox_set_out(m, n, i, T_FLOAT, x->rank, red, err))) return st;
    if (n->nout > 3 && (st = ox_set_out(m, n, 3, x->onnx_type, x->rank, x->shape, err))) return st;
    return ROTOR_OK;
}

/* SimplifiedLayerNormalization (onnxruntime registers it in the ONNX
 * domain): X and scale only; Y = X / sqrt(mean(X^2 over the dimensions from
 * axis) + epsilon) * scale, with scale broadcasting to X as LayerNormalization's
 * function broadcasts it; Y has scale's type (V), inv_std_var is X with the
 * normalised dimensions 1, float (stash_type). */
rotor_status ox_infer_simplenorm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err)) || (st = ms_max_inputs(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0), *s = ox_in(m, n, 1);
    static const int t0[1] = {0}, t1[1] = {1};
    if ((st = ms_one_t(m, n, t0, 1, true, err)) || (st = ms_one_t(m, n, t1, 1, true, err))) return st;
    int axis;
    if (!ox_norm_axis(ox_attr_int(n, "axis", -1), x->rank, &axis))
        NFAIL("axis %lld is out of range for rank %d", (long long)ox_attr_int(n, "axis", -1), x->rank);
    char xs[96], ss[96];
    bool ok = s->rank <= x->rank;
    for (int d = 0; ok && d < s->rank; d++) {
        int64_t e = s->shape[d], xe = x->shape[x->rank - s->rank + d];
        ok = e == 1 || e == xe;
    }
    if (!ok) NFAIL("scale '%s' %s does not broadcast to input '%s' %s", s->name, shape_of(s, ss, sizeof ss), x->name,
                   shape_of(x, xs, sizeof xs));
    if ((st = ox_set_out(m, n, 0, s->onnx_type, x->rank, x->shape, err))) return st;
    int64_t red[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) red[d] = d >= axis ? 1 : x->shape[d];
    return ox_set_out(m, n, 1, T_FLOAT, x->rank, red, err);
}

/* GroupNorm (X, gamma, beta): groups and activation are required; the
 * channels C (last dimension with channels_last, its default, else
 * dimension 1) split into groups; gamma and beta [C]. */
rotor_status ox_infer_ms_groupnorm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err)) || (st = ms_max_inputs(m, n, 3, err))) return st;
    static const int t0[1] = {0}, gb[2] = {1, 2};
    if ((st = ms_one_t(m, n, t0, 1, false, err)) || (st = ms_one_t(m, n, gb, 2, false, err))) return st;
    const Onnx__AttributeProto *groups = ox_attr(n, "groups"), *act = ox_attr(n, "activation");
    if (!groups) NFAIL("attribute 'groups' is required");
    if (!act) NFAIL("attribute 'activation' is required (0: none, 1: SiLU)");
    if (act->i != 0 && act->i != 1) NFAIL("activation %lld is neither 0 (none) nor 1 (SiLU)", (long long)act->i);
    ox_val *x = ox_in(m, n, 0);
    char xs[96];
    if (x->rank < 3) NFAIL("input '%s' is %s; needs a batch, spatial dimensions and channels", x->name,
                           shape_of(x, xs, sizeof xs));
    int64_t c = x->shape[ox_attr_int(n, "channels_last", 1) ? x->rank - 1 : 1];
    if (groups->i < 1 || c % groups->i)
        NFAIL("groups %lld does not divide the %lld channels", (long long)groups->i, (long long)c);
    if ((st = ms_vec(m, n, 1, "gamma", c, err)) || (st = ms_vec(m, n, 2, "beta", c, err))) return st;
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, x->shape, err);
}

/* BiasAdd (X [N, S, C], bias [C], skip [N, S, C]): X + bias + skip. */
rotor_status ox_infer_biasadd(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err)) || (st = ms_max_inputs(m, n, 3, err))) return st;
    static const int all[3] = {0, 1, 2};
    if ((st = ms_one_t(m, n, all, 3, false, err))) return st;
    ox_val *x = ox_in(m, n, 0), *s = ox_in(m, n, 2);
    char xs[96], ss[96];
    if (x->rank != 3) NFAIL("input '%s' is %s; needs [batch, image size, channels]", x->name, shape_of(x, xs, sizeof xs));
    if (s->rank != 3 || memcmp(s->shape, x->shape, sizeof(int64_t) * 3))
        NFAIL("skip '%s' is %s; it must be input's %s", s->name, shape_of(s, ss, sizeof ss), shape_of(x, xs, sizeof xs));
    if ((st = ms_vec(m, n, 1, "bias", x->shape[2], err))) return st;
    return ox_set_out(m, n, 0, x->onnx_type, 3, x->shape, err);
}

/* BiasSplitGelu (X [N, S, D], bias [D]): [N, S, D/2], D even. */
rotor_status ox_infer_splitgelu(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err)) || (st = ms_max_inputs(m, n, 2, err))) return st;
    static const int all[2] = {0, 1};
    if ((st = ms_one_t(m, n, all, 2, false, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    char xs[96];
    if (x->rank != 3) NFAIL("input '%s' is %s; needs [batch, image size, hidden]", x->name, shape_of(x, xs, sizeof xs));
    if (x->shape[2] % 2) NFAIL("hidden size %lld is odd; it splits into two halves", (long long)x->shape[2]);
    if ((st = ms_vec(m, n, 1, "bias", x->shape[2], err))) return st;
    int64_t y[3] = {x->shape[0], x->shape[1], x->shape[2] / 2};
    return ox_set_out(m, n, 0, x->onnx_type, 3, y, err);
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

/* ---- attention ---------------------------------------------------------------------------- */

/* A mask or bias input against the sizes in a (total = past + kv sequence).
 * Attention's mask_index: [B], [2B], [3B + 2], [B, T], [B, S, T] or
 * [B, 1, M, M] with M >= T (attention_base.cc); MultiHeadAttention's
 * key_padding_mask: [B], [3B + 2], [B, L], [B, T] or [B, S, T]
 * (multihead_attention_helper.h); both int32. */
static rotor_status attn_mask(ox_model *m, ox_node *n, int i, const ox_attention *a, bool mha, rotor_error *err) {
    const ox_val *k = ox_in(m, n, i);
    if (!k) return ROTOR_OK;
    const char *what = mha ? "key_padding_mask" : "mask_index";
    rotor_status st = ms_int32(m, n, i, what, err);
    if (st) return st;
    int64_t b = a->batch, s = a->seq, t = a->past + a->kv_seq;
    const int64_t *d = k->shape;
    bool ok = (k->rank == 1 && (d[0] == b || (!mha && d[0] == 2 * b) || d[0] == 3 * b + 2)) ||
              (k->rank == 2 && d[0] == b && (d[1] == t || (mha && d[1] == a->kv_seq))) ||
              (k->rank == 3 && d[0] == b && d[1] == s && d[2] == t) ||
              (!mha && k->rank == 4 && d[0] == b && d[1] == 1 && d[2] == d[3] && d[2] >= t);
    char ks[96];
    if (!ok)
        NFAIL("%s '%s' is %s; onnxruntime takes [batch]%s, [3 batch + 2], [batch, %s], [batch, sequence, total "
              "sequence]%s (batch %lld, sequence %lld, total %lld)", what, k->name, shape_of(k, ks, sizeof ks),
              mha ? "" : ", [2 batch]", mha ? "kv sequence or total sequence" : "total sequence",
              mha ? "" : " or [batch, 1, max, max]", (long long)b, (long long)s, (long long)t);
    return ROTOR_OK;
}

/* attention_bias: [B or 1, heads or 1, S, T]. */
static rotor_status attn_bias(ox_model *m, ox_node *n, int i, const ox_attention *a, rotor_error *err) {
    const ox_val *x = ox_in(m, n, i);
    if (!x) return ROTOR_OK;
    const int64_t *d = x->shape;
    char xs[96];
    if (x->rank != 4 || (d[0] != 1 && d[0] != a->batch) || (d[1] != 1 && d[1] != a->heads) || d[2] != a->seq ||
        d[3] != a->past + a->kv_seq)
        NFAIL("attention_bias '%s' is %s; it must be [batch or 1, heads or 1, sequence, total sequence] = [%lld or 1, "
              "%lld or 1, %lld, %lld]", x->name, shape_of(x, xs, sizeof xs), (long long)a->batch, (long long)a->heads,
              (long long)a->seq, (long long)(a->past + a->kv_seq));
    return ROTOR_OK;
}

/* Attention: input [B, S, D_in], weights [D_in, Dq + Dk + Dv], bias [Dq +
 * Dk + Dv], past [2, B, heads, P, head]. */
static rotor_status attn_contrib(ox_model *m, ox_node *n, ox_attention *a, rotor_error *err) {
    ox_val *q = ox_in(m, n, 0), *w = ox_in(m, n, 1);
    char s[96];
    if (!w) NFAIL("input 1 (weights) is missing");
    if (w->rank != 2 || w->shape[0] != q->shape[2])
        NFAIL("weights '%s' is %s; it must be [input hidden %lld, q + k + v hidden]", w->name, shape_of(w, s, sizeof s),
              (long long)q->shape[2]);
    int cnt;
    const int64_t *hs = ox_attr_ints(n, "qkv_hidden_sizes", &cnt);
    if (hs && cnt != 3) NFAIL("qkv_hidden_sizes needs 3 entries");
    if (hs && (hs[0] < 1 || hs[1] < 1 || hs[2] < 1 || hs[0] != hs[1]))
        NFAIL("qkv_hidden_sizes %lld, %lld, %lld: q and k must be one positive size, v positive", (long long)hs[0],
              (long long)hs[1], (long long)hs[2]);
    if (!hs && w->shape[1] % 3) NFAIL("weights' %lld columns do not split into q, k and v of one size (give "
                                      "qkv_hidden_sizes)", (long long)w->shape[1]);
    a->dq = hs ? hs[0] : w->shape[1] / 3;
    a->dk = hs ? hs[1] : w->shape[1] / 3;
    a->dv = hs ? hs[2] : w->shape[1] / 3;
    if (a->dq + a->dk + a->dv != w->shape[1])
        NFAIL("q, k and v hidden sizes do not add up to the weights' %lld", (long long)w->shape[1]);
    a->kv_heads = a->heads;
    a->kv_seq = a->seq;
    rotor_status st = ms_vec(m, n, 2, "bias", w->shape[1], err);
    if (st) return st;
    ox_val *past = ox_in(m, n, 4);
    if (past) {
        if (past->rank != 5 || past->shape[0] != 2 || past->shape[1] != a->batch || past->shape[2] != a->heads ||
            past->shape[4] * a->heads != a->dk)
            NFAIL("past '%s' is %s; it must be [2, batch, heads, past sequence, head]", past->name,
                  shape_of(past, s, sizeof s));
        a->past = past->shape[3];
    }
    static const int t[4] = {0, 1, 2, 5};
    if ((st = ms_one_t(m, n, t, 4, false, err)) || (st = ms_int32(m, n, 6, "past_sequence_length", err))) return st;
    if (ox_attr_int(n, "past_present_share_buffer", 0))
        NFAIL("past_present_share_buffer means a shared KV buffer whose used length is known only at run time; rotor "
              "does not plan it");
    if ((st = attn_mask(m, n, 3, a, false, err))) return st;
    return attn_bias(m, n, 5, a, err);
}

/* MultiHeadAttention's key and value: 3-D [B, L, D] pairs, packed KV [B, L,
 * heads, 2, head] with no value, or [B, heads, L, head] pairs already split
 * into heads (cross attention). */
static rotor_status mha_kv(ox_model *m, ox_node *n, ox_attention *a, rotor_error *err) {
    ox_val *k = ox_in(m, n, 1), *v = ox_in(m, n, 2);
    char ks[96], vs[96];
    const int64_t *kd = k->shape, *vd = v ? v->shape : NULL;
    if (k->rank == 5) {
        if (v) NFAIL("value '%s' is given with packed key/value '%s'; the packed form has no value", v->name, k->name);
        if (kd[0] != a->batch || kd[2] != a->heads || kd[3] != 2 || kd[4] * a->heads != a->dq)
            NFAIL("packed key/value '%s' is %s; it must be [batch %lld, kv sequence, heads %lld, 2, head %lld]", k->name,
                  shape_of(k, ks, sizeof ks), (long long)a->batch, (long long)a->heads, (long long)(a->dq / a->heads));
        a->kv_seq = kd[1];
        a->dk = a->dv = a->dq;
        a->kv_packed = true;
        return ROTOR_OK;
    }
    if (!v) NFAIL("input 2 (value) is missing; only packed key/value [batch, kv sequence, heads, 2, head] goes without");
    if (k->rank == 4) {
        if (v->rank != 4 || kd[0] != a->batch || kd[1] != a->heads || kd[3] * a->heads != a->dq || vd[0] != a->batch ||
            vd[1] != a->heads || vd[2] != kd[2])
            NFAIL("key '%s' %s and value '%s' %s must be [batch %lld, heads %lld, kv sequence, head] with q's head "
                  "size %lld", k->name, shape_of(k, ks, sizeof ks), v->name, shape_of(v, vs, sizeof vs),
                  (long long)a->batch, (long long)a->heads, (long long)(a->dq / a->heads));
        a->kv_seq = kd[2];
        a->dk = a->dq;
        a->dv = vd[3] * a->heads;
        a->kv_split = true;
        return ROTOR_OK;
    }
    if (k->rank != 3 || kd[0] != a->batch || kd[2] != a->dq)
        NFAIL("key '%s' is %s; it must be [batch %lld, kv sequence, hidden %lld] like the query (or packed, or "
              "split into heads)", k->name, shape_of(k, ks, sizeof ks), (long long)a->batch, (long long)a->dq);
    if (v->rank != 3 || vd[0] != a->batch || vd[1] != kd[1])
        NFAIL("value '%s' is %s; it must be [batch %lld, kv sequence %lld, v hidden]", v->name, shape_of(v, vs, sizeof vs),
              (long long)a->batch, (long long)kd[1]);
    a->kv_seq = kd[1];
    a->dk = kd[2];
    a->dv = vd[2];
    return ROTOR_OK;
}

/* MultiHeadAttention: query [B, S, D] (or packed QKV [B, S, heads, 3,
 * head] with neither key nor value), the key and value forms above, bias
 * [D + D + Dv], past_key and past_value [B, heads, P, head] together. */
static rotor_status attn_mha(ox_model *m, ox_node *n, ox_attention *a, rotor_error *err) {
    ox_val *q = ox_in(m, n, 0);
    char s[96];
    a->kv_heads = a->heads;
    rotor_status st;
    if (q->rank == 5) {
        if (ox_in(m, n, 1) || ox_in(m, n, 2)) NFAIL("query '%s' is packed QKV; key and value must then be absent", q->name);
        if (q->shape[2] != a->heads || q->shape[3] != 3)
            NFAIL("packed QKV '%s' is %s; it must be [batch, sequence, heads %lld, 3, head]", q->name,
                  shape_of(q, s, sizeof s), (long long)a->heads);
        a->dq = a->dk = a->dv = q->shape[4] * a->heads;
        a->kv_seq = a->seq;
        a->packed = true;
    } else {
        if (q->rank != 3) NFAIL("query '%s' is %s; it must be [batch, sequence, hidden] or packed QKV [batch, sequence, "
                                "heads, 3, head]", q->name, shape_of(q, s, sizeof s));
        a->dq = q->shape[2];
        if (a->dq % a->heads) NFAIL("hidden size %lld does not split into %lld heads", (long long)a->dq, (long long)a->heads);
        if (!ox_in(m, n, 1)) NFAIL("input 1 (key) is missing; only packed QKV [batch, sequence, heads, 3, head] goes "
                                   "without");
        if ((st = mha_kv(m, n, a, err))) return st;
    }
    if ((st = ms_vec(m, n, 3, "bias", a->dq + a->dk + a->dv, err))) return st;
    if (a->kv_split && ox_in(m, n, 3)) NFAIL("a bias with key and value already split into heads is not supported");
    ox_val *pk = ox_in(m, n, 6), *pv = ox_in(m, n, 7);
    if (!pk != !pv) NFAIL("past_key and past_value go together");
    if (pk) {
        int64_t hk = a->dk / a->heads, hv = a->dv / a->heads;
        char vs[96];
        if (pk->rank != 4 || pv->rank != 4 || pk->shape[0] != a->batch || pk->shape[1] != a->heads ||
            pk->shape[3] != hk || pv->shape[0] != a->batch || pv->shape[1] != a->heads || pv->shape[3] != hv ||
            pv->shape[2] != pk->shape[2])
            NFAIL("past_key '%s' %s and past_value '%s' %s must be [batch %lld, heads %lld, past sequence, head %lld "
                  "and %lld], of one past sequence", pk->name, shape_of(pk, s, sizeof s), pv->name,
                  shape_of(pv, vs, sizeof vs), (long long)a->batch, (long long)a->heads, (long long)hk, (long long)hv);
        if (a->kv_split) NFAIL("a past with key and value already split into heads is not supported");
        a->past = pk->shape[2];
    }
    static const int t[7] = {0, 1, 2, 3, 5, 6, 7};
    if ((st = ms_one_t(m, n, t, 7, false, err)) || (st = ms_int32(m, n, 8, "past_sequence_length", err))) return st;
    if (ox_in(m, n, 8))
        NFAIL("past_sequence_length '%s' means a shared KV buffer whose used length is known only at run time; rotor "
              "does not plan it", ox_in(m, n, 8)->name);
    if ((st = attn_mask(m, n, 4, a, true, err))) return st;
    return attn_bias(m, n, 5, a, err);
}

/* GroupQueryAttention: query [B, S, D] or packed QKV [B, S, (heads + 2 kv
 * heads) head]; key and value [B, L, kv hidden] both or neither; past_key
 * and past_value [B, kv heads, P, head]; seqlens_k [B] and
 * total_sequence_length int32. */
static rotor_status attn_gqa(ox_model *m, ox_node *n, ox_attention *a, rotor_error *err) {
    ox_val *q = ox_in(m, n, 0), *k = ox_in(m, n, 1), *v = ox_in(m, n, 2);
    char s[96], vs[96];
    a->kv_heads = ox_attr_int(n, "kv_num_heads", 0);
    if (a->kv_heads < 1 || a->heads % a->kv_heads) NFAIL("kv_num_heads must divide num_heads");
    if (!k != !v) NFAIL("key and value go together (both absent: packed QKV)");
    if (!k) { /* packed QKV: (heads + 2 kv_heads) * head */
        int64_t parts = a->heads + 2 * a->kv_heads;
        if (q->shape[2] % parts) NFAIL("packed QKV's %lld columns do not split into %lld heads of one size",
                                       (long long)q->shape[2], (long long)parts);
        a->dq = a->heads * (q->shape[2] / parts);
        a->dk = a->dv = a->kv_heads * (q->shape[2] / parts);
        a->packed = true;
        a->kv_seq = a->seq;
    } else {
        if (k->rank != 3 || v->rank != 3 || k->shape[0] != a->batch || v->shape[0] != a->batch ||
            v->shape[1] != k->shape[1])
            NFAIL("key '%s' %s and value '%s' %s must both be [batch %lld, kv sequence, kv hidden]", k->name,
                  shape_of(k, s, sizeof s), v->name, shape_of(v, vs, sizeof vs), (long long)a->batch);
        a->dq = q->shape[2];
        a->dk = k->shape[2];
        a->dv = v->shape[2];
        a->kv_seq = k->shape[1];
    }
    ox_val *pk = ox_in(m, n, 3), *pv = ox_in(m, n, 4);
    if (!pk != !pv) NFAIL("past_key and past_value go together");
    if (pk) {
        if (pk->rank != 4 || pv->rank != 4 || pk->shape[0] != a->batch || pk->shape[1] != a->kv_heads ||
            pv->shape[2] != pk->shape[2])
            NFAIL("past_key '%s' %s and past_value '%s' must be [batch %lld, kv heads %lld, past sequence, head]",
                  pk->name, shape_of(pk, s, sizeof s), pv->name, (long long)a->batch, (long long)a->kv_heads);
        a->past = pk->shape[2];
    }
    rotor_status st;
    int64_t total[1];
    int cnt;
    if (!ox_in(m, n, 5) || !ox_in(m, n, 6)) NFAIL("seqlens_k and total_sequence_length (inputs 5 and 6) are required");
    if ((st = ms_int32(m, n, 5, "seqlens_k", err)) || (st = ms_int32(m, n, 6, "total_sequence_length", err)) ||
        (st = ox_const_ints(m, n, 6, "total_sequence_length", total, 1, &cnt, err)))
        return st;
    /* onnxruntime's present_sequence_length: max(total, past), the past's
     * buffer when it holds the total (group_query_attention_helper.h) */
    if (cnt != 1 || total[0] < a->seq || total[0] > a->past + a->kv_seq)
        NFAIL("total_sequence_length %lld must be one value from the sequence %lld to past + sequence %lld",
              cnt == 1 ? (long long)total[0] : -1LL, (long long)a->seq, (long long)(a->past + a->kv_seq));
    a->total = total[0];
    a->present = a->total > a->past ? a->total : a->past;
    return ROTOR_OK;
}

rotor_status ox_attention_shape(ox_model *m, ox_node *n, ox_attention *a, rotor_error *err) {
    const char *op = n->p->op_type;
    memset(a, 0, sizeof *a);
    a->heads = ox_attr_int(n, "num_heads", 0);
    if (a->heads < 1 || a->heads > 65536) NFAIL("num_heads is missing or out of range");
    ox_val *q = ox_in(m, n, 0);
    char s[96];
    if (!q) NFAIL("input 0 (query) is missing");
    bool mha = !strcmp(op, "MultiHeadAttention");
    if (!mha && q->rank != 3)
        NFAIL("input '%s' is %s; it must be [batch, sequence, hidden]", q->name, shape_of(q, s, sizeof s));
    if (q->rank != 3 && q->rank != 5)
        NFAIL("query '%s' is %s; it must be [batch, sequence, hidden]", q->name, shape_of(q, s, sizeof s));
    a->batch = q->shape[0];
    a->seq = q->shape[1];
    rotor_status st = !strcmp(op, "Attention") ? attn_contrib(m, n, a, err) : mha ? attn_mha(m, n, a, err)
                                                                                     : attn_gqa(m, n, a, err);
    if (st) return st;
    if (a->dq % a->heads || a->dk % a->kv_heads || a->dv % a->kv_heads || a->dq / a->heads != a->dk / a->kv_heads)
        NFAIL("hidden sizes q %lld, k %lld, v %lld do not split into %lld and %lld heads of one size",
              (long long)a->dq, (long long)a->dk, (long long)a->dv, (long long)a->heads, (long long)a->kv_heads);
    a->head = a->dq / a->heads;
    a->vhead = a->dv / a->kv_heads;
    if (!a->total) a->total = a->present = a->past + a->kv_seq;
    if (n->nout < 1 || n->out[0] < 0) NFAIL("has no output");
    return ROTOR_OK;
}

/* Attention, MultiHeadAttention, GroupQueryAttention: output [B, S, heads *
 * v head]; present (Attention: [2, B, heads, past + S, head]) or
 * present_key / present_value ([B, kv heads, present, head]: past + kv
 * sequence, GroupQueryAttention's max(total_sequence_length, past)). */
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
    int64_t pk[4] = {a.batch, a.kv_heads, a.present, a.head}, pv[4] = {a.batch, a.kv_heads, a.present, a.vhead};
    if (n->nout > 1 && (st = ox_set_out(m, n, 1, q->onnx_type, 4, pk, err))) return st;
    if (n->nout > 2 && (st = ox_set_out(m, n, 2, q->onnx_type, 4, pv, err))) return st;
    return ROTOR_OK;
}
