/* onnxmsquant.c — onnxruntime's quantized com.microsoft operators, per
 * onnxruntime's ContribOperators.md (docs/onnx.md, "onnxruntime's quantized
 * operators"): the shape rules, which also check what the schema requires
 * (types, attributes, the shapes of scales and zero points), and the
 * lowering of the three matrix products.
 *
 *   MatMulIntegerToFloat  Y = (A - a_zp) a_scale @ (B - b_zp) b_scale + bias
 *   MatMulNBits           Y = A @ dequant(B)^T + bias, B [N, k_blocks, blob]
 *                         holding `bits`-bit codes along K, low bits first
 *   MatMulBnb4            Y = A @ dequant(B)^T (transB = 1) or A @ dequant(B),
 *                         B the [N, K] weight flattened, two 4-bit FP4/NF4
 *                         codes per byte, one absmax per block
 *   QLinearAdd / Mul      C = q(dq(A) + dq(B)), q(dq(A) * dq(B)), broadcast
 *   QLinearSigmoid / LeakyRelu, QLinearAveragePool, QLinearGlobalAveragePool,
 *   QLinearConcat         Y = q(f(dq(X))) for the float operator f
 *
 * The products are contractions (T10 §4.2): `Y[m,n] += A[m,k] * W[n,k]`
 * over the quantized codes, so that FLOPs (2·M·K·N) and the operands' element
 * types are the operator's; the scales and zero points are inputs of the
 * operator (their bytes count) but not of the expression, which therefore
 * carries rotor.approximate.  rotor run imports them (keep_data) as vendor
 * ops that its kernels compute exactly (src/run/kernmsquant.c).  The others
 * are vendor ops in both imports.  Decisions where onnxruntime is silent:
 *  - MatMulNBits and MatMulBnb4 read B as the [N, K] weight it packs: an
 *    expression tensor W, a value named '<B>.w' of element type u4 (bits 4,
 *    FP4/NF4 codes) or u8 (bits 8), ceil(N·K / 2) or N·K bytes (B's own
 *    bytes when K is a multiple of block_size).  The notation cannot unpack
 *    nibbles, so W stands for B; with bits 2, which rotor has no type for, W
 *    is a tensor of the expression with no value and B is an input;
 *  - the dequantization of B (N·K multiply-adds, once per weight) is not
 *    charged: runtimes do it in the product's inner loop;
 *  - scales and zero points are taken flat (onnxruntime's [N, k_blocks] and
 *    the [N · k_blocks] older files use hold the same elements);
 *  - QLinearAveragePool takes `dilations` as AveragePool does (onnxruntime's
 *    schema lists none; MIGraphX's tests use them). */
#include "onnxmsquant.h"

#include <stdio.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* ---- checks the rules share ---------------------------------------------------------------- */

static bool is_q8(int t) { return t == T_INT8 || t == T_UINT8; }
static bool is_fp(int t) { return t == T_FLOAT || t == T_FLOAT16 || t == T_BFLOAT16; }

static void shape_str(const ox_val *x, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < x->rank && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? ", " : "", (long long)x->shape[d]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* A required integer attribute. */
static rotor_status need_attr(ox_model *m, ox_node *n, const char *name, int64_t *v, rotor_error *err) {
    const Onnx__AttributeProto *a = ox_attr(n, name);
    if (!a || !a->has_i) NFAIL("attribute '%s' is required and missing", name);
    *v = a->i;
    return ROTOR_OK;
}

/* block_size: a power of 2, at least 16 (MatMulNBits, MatMulBnb4). */
static rotor_status check_block(ox_model *m, ox_node *n, int64_t bs, rotor_error *err) {
    if (bs < 16 || bs > (1LL << 31) || (bs & (bs - 1))) NFAIL("block_size is %lld; it must be a power of 2 of at least 16", (long long)bs);
    return ROTOR_OK;
}

/* Input i, a per-tensor scale or zero point: one element of type `type`;
 * absent is an error when need. */
static rotor_status scalar_param(ox_model *m, ox_node *n, int i, int type, bool need, rotor_error *err) {
    ox_val *x = ox_in(m, n, i);
    if (!x) {
        if (need) NFAIL("input %d (a scale) is missing", i);
        return ROTOR_OK;
    }
    if (x->elems != 1) NFAIL("'%s' has %lld elements; the operator takes a scalar (per-tensor quantization)", x->name,
                             (long long)x->elems);
    if (x->onnx_type != type) NFAIL("'%s' is %s; expected %s", x->name, ox_type_name(x->onnx_type), ox_type_name(type));
    return ROTOR_OK;
}

/* Input i must hold `want` elements of type `type` (type 0: any). */
static rotor_status sized_param(ox_model *m, ox_node *n, int i, const char *what, int type, int64_t want,
                                rotor_error *err) {
    ox_val *x = ox_in(m, n, i);
    if (!x) return ROTOR_OK;
    if (type && x->onnx_type != type)
        NFAIL("%s '%s' is %s; expected %s", what, x->name, ox_type_name(x->onnx_type), ox_type_name(type));
    char s[96];
    shape_str(x, s, sizeof s);
    if (x->elems != want) NFAIL("%s '%s' has shape %s; expected %lld elements", what, x->name, s, (long long)want);
    return ROTOR_OK;
}

/* The output of A @ B (numpy matmul, batch dimensions broadcast) with B of
 * shape bshape (rank br): the rule of the three products. */
static rotor_status mm_out(ox_model *m, ox_node *n, const ox_val *a, int br, const int64_t *bs, int type,
                           rotor_error *err) {
    if (a->rank < 1) NFAIL("input '%s' is a scalar; the product needs at least one dimension", a->name);
    int64_t k1 = a->shape[a->rank - 1], k2 = br >= 2 ? bs[br - 2] : bs[0];
    if (k1 != k2) NFAIL("inner dimensions differ: '%s' has %lld, the weight %lld", a->name, (long long)k1,
                        (long long)k2);
    int ba = a->rank > 2 ? a->rank - 2 : 0, bb = br > 2 ? br - 2 : 0, nb = ba > bb ? ba : bb, r = 0;
    int64_t shape[OX_MAX_RANK + 2];
    for (int d = 0; d < nb; d++) {
        int64_t ea = d >= nb - ba ? a->shape[d - (nb - ba)] : 1, eb = d >= nb - bb ? bs[d - (nb - bb)] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            NFAIL("batch dimensions do not broadcast: %lld and %lld", (long long)ea, (long long)eb);
        shape[r++] = ea == 1 ? eb : ea;
    }
    if (a->rank >= 2) shape[r++] = a->shape[a->rank - 2];
    if (br >= 2) shape[r++] = bs[br - 1];
    return ox_set_out(m, n, 0, type, r, shape, err);
}

/* ---- the matrix products ----------------------------------------------------------------- */

rotor_status ox_infer_mm_to_float(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 4, err))) return st;
    ox_val *a = ox_in(m, n, 0), *b = ox_in(m, n, 1), *sa = ox_in(m, n, 2), *sb = ox_in(m, n, 3);
    for (int i = 0; i < 2; i++) {
        ox_val *x = i ? b : a;
        if (!is_q8(x->onnx_type)) NFAIL("input '%s' is %s; A and B are int8 or uint8", x->name, ox_type_name(x->onnx_type));
        if (x->rank < 1) NFAIL("input '%s' is a scalar; the product needs at least one dimension", x->name);
    }
    if (sa->onnx_type != T_FLOAT && sa->onnx_type != T_FLOAT16)
        NFAIL("scale '%s' is %s; the scales are float or float16", sa->name, ox_type_name(sa->onnx_type));
    if (sb->onnx_type != sa->onnx_type)
        NFAIL("scales '%s' (%s) and '%s' (%s) differ in type", sa->name, ox_type_name(sa->onnx_type), sb->name,
              ox_type_name(sb->onnx_type));
    /* scale and zero point i: a scalar, or one per column of A (i even) or B */
    for (int i = 2; i < 6; i++) {
        ox_val *p = ox_in(m, n, i), *x = i % 2 ? b : a;
        if (!p) continue;
        if (i >= 4 && p->onnx_type != x->onnx_type)
            NFAIL("zero point '%s' is %s but its tensor '%s' is %s", p->name, ox_type_name(p->onnx_type), x->name,
                  ox_type_name(x->onnx_type));
        int64_t col = x->shape[x->rank - 1];
        char s[96];
        shape_str(p, s, sizeof s);
        if (p->rank > 1 || (p->elems != 1 && p->elems != col))
            NFAIL("%s '%s' has shape %s; expected a scalar or [%lld], one per column of '%s'",
                  i < 4 ? "scale" : "zero point", p->name, s, (long long)col, x->name);
    }
    ox_val *bias = ox_in(m, n, 6);
    if (bias && (st = sized_param(m, n, 6, "bias", sa->onnx_type, b->shape[b->rank - 1], err))) return st;
    if (bias && bias->rank != 1) NFAIL("bias '%s' has rank %d; it is one-dimensional", bias->name, bias->rank);
    return mm_out(m, n, a, b->rank, b->shape, sa->onnx_type, err);
}

rotor_status ox_infer_mm_nbits(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    int64_t K = 0, N = 0, bs = 0, bits = ox_attr_int(n, "bits", 4);
    if ((st = need_attr(m, n, "K", &K, err)) || (st = need_attr(m, n, "N", &N, err)) ||
        (st = need_attr(m, n, "block_size", &bs, err)) || (st = ox_need(m, n, 3, err)))
        return st;
    if (K < 1 || N < 1 || K > (1LL << 31) || N > (1LL << 31)) NFAIL("K %lld and N %lld must be between 1 and 2^31", (long long)K, (long long)N);
    if (bits != 2 && bits != 4 && bits != 8) NFAIL("bits is %lld; MatMulNBits takes 2, 4 or 8", (long long)bits);
    if ((st = check_block(m, n, bs, err))) return st;
    ox_val *a = ox_in(m, n, 0), *b = ox_in(m, n, 1);
    if (!is_fp(a->onnx_type)) NFAIL("input '%s' is %s; A is float, float16 or bfloat16", a->name, ox_type_name(a->onnx_type));
    int64_t kb = (K + bs - 1) / bs, blob = bs * bits / 8, want[3] = {N, kb, blob};
    char s[96];
    shape_str(b, s, sizeof s);
    if (b->onnx_type != T_UINT8 || b->rank != 3 || memcmp(b->shape, want, sizeof want))
        NFAIL("B '%s' is %s %s; expected uint8 [N, k_blocks, blob_size] = [%lld, %lld, %lld]", b->name,
              ox_type_name(b->onnx_type), s, (long long)N, (long long)kb, (long long)blob);
    if ((st = sized_param(m, n, 2, "scales", a->onnx_type, N * kb, err))) return st;
    ox_val *zp = ox_in(m, n, 3);
    if (zp && zp->onnx_type == T_UINT8) st = sized_param(m, n, 3, "packed zero points", 0, N * ((kb * bits + 7) / 8), err);
    else if (zp) st = sized_param(m, n, 3, "zero points", a->onnx_type, N * kb, err);
    if (st) return st;
    if (ox_in(m, n, 4)) NFAIL("input g_idx (4) is deprecated in onnxruntime and not supported");
    if ((st = sized_param(m, n, 5, "bias", a->onnx_type, N, err))) return st;
    return mm_out(m, n, a, 2, (const int64_t[]){K, N}, a->onnx_type, err);
}

rotor_status ox_infer_mm_bnb4(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    int64_t K = 0, N = 0, bs = 0, qt = 0, nk = 0;
    if ((st = need_attr(m, n, "K", &K, err)) || (st = need_attr(m, n, "N", &N, err)) ||
        (st = need_attr(m, n, "block_size", &bs, err)) || (st = need_attr(m, n, "quant_type", &qt, err)))
        return st;
    if (n->nin != 3 || (st = ox_need(m, n, 3, err)))
        NFAIL("has %d inputs; MatMulBnb4 takes A, B and absmax", n->nin);
    if (K < 1 || N < 1 || K > (1LL << 31) || N > (1LL << 31) || !rotor_mul_i64(N, K, &nk))
        NFAIL("K %lld and N %lld must be between 1 and 2^31", (long long)K, (long long)N);
    if (qt != 0 && qt != 1) NFAIL("quant_type is %lld; it is 0 (FP4) or 1 (NF4)", (long long)qt);
    if ((st = check_block(m, n, bs, err))) return st;
    ox_val *a = ox_in(m, n, 0), *b = ox_in(m, n, 1), *am = ox_in(m, n, 2);
    if (!is_fp(a->onnx_type)) NFAIL("input '%s' is %s; A is float, float16 or bfloat16", a->name, ox_type_name(a->onnx_type));
    if (b->onnx_type != T_UINT8 || b->rank != 1)
        NFAIL("B '%s' is %s of rank %d; expected uint8 [(N * K + 1) / 2]", b->name, ox_type_name(b->onnx_type), b->rank);
    if ((st = sized_param(m, n, 1, "B", 0, (nk + 1) / 2, err)) ||
        (st = sized_param(m, n, 2, "absmax", a->onnx_type, (nk + bs - 1) / bs, err)))
        return st;
    if (am->rank != 1) NFAIL("absmax '%s' has rank %d; it is one-dimensional", am->name, am->rank);
    bool tb = ox_attr_int(n, "transB", 1) != 0;
    return mm_out(m, n, a, 2, tb ? (const int64_t[]){K, N} : (const int64_t[]){N, K}, a->onnx_type, err);
}

/* ---- the element-wise, pooling and concatenating operators ---------------------------------- */

/* QLinearAdd, QLinearMul: A, A_scale, A_zero_point?, B, B_scale,
 * B_zero_point?, C_scale, C_zero_point?; numpy broadcasting. */
rotor_status ox_infer_qlinear_binary(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    ox_val *a = ox_in(m, n, 0), *b = ox_in(m, n, 3);
    if (!a || !b) NFAIL("inputs A (0) and B (3) are required");
    if (!is_q8(a->onnx_type) || b->onnx_type != a->onnx_type)
        NFAIL("A '%s' is %s and B '%s' is %s; both are int8 or both uint8", a->name, ox_type_name(a->onnx_type),
              b->name, ox_type_name(b->onnx_type));
    static const int scales[3] = {1, 4, 6}, zps[3] = {2, 5, 7};
    for (int i = 0; i < 3; i++)
        if ((st = scalar_param(m, n, scales[i], T_FLOAT, true, err)) ||
            (st = scalar_param(m, n, zps[i], a->onnx_type, false, err)))
            return st;
    int r;
    int64_t shape[OX_MAX_RANK];
    if ((st = ox_broadcast_shape(m, n, 0, 4, &r, shape, err))) return st;
    return ox_set_out(m, n, 0, a->onnx_type, r, shape, err);
}

/* QLinearSigmoid, QLinearLeakyRelu: X, X_scale, X_zero_point?, Y_scale,
 * Y_zero_point?. */
rotor_status ox_infer_qlinear_unary(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    ox_val *x = ox_in(m, n, 0);
    if (!x) NFAIL("input X (0) is required");
    if (!is_q8(x->onnx_type)) NFAIL("X '%s' is %s; it is int8 or uint8", x->name, ox_type_name(x->onnx_type));
    for (int i = 1; i < 5; i++)
        if ((st = scalar_param(m, n, i, i % 2 ? T_FLOAT : x->onnx_type, i % 2, err))) return st;
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, x->shape, err);
}

/* QLinearAveragePool and QLinearGlobalAveragePool (inputs as the unary
 * ones): AveragePool's geometry over [N, C, spatial...], or over
 * [N, spatial..., C] with channels_last. */
rotor_status ox_infer_qlinear_pool(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_infer_qlinear_unary(m, n, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->rank < 3) NFAIL("input '%s' has rank %d; pooling needs [N, C, spatial...]", x->name, x->rank);
    bool last = ox_attr_int(n, "channels_last", 0) != 0;
    ox_val nchw = *x; /* the input as [N, C, spatial...] */
    if (last) {
        nchw.shape[1] = x->shape[x->rank - 1];
        for (int d = 2; d < x->rank; d++) nchw.shape[d] = x->shape[d - 1];
    }
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, nchw.shape, sizeof shape);
    if (!strcmp(n->p->op_type, "QLinearGlobalAveragePool")) {
        for (int d = 2; d < x->rank; d++) shape[d] = 1;
    } else {
        int cnt;
        const int64_t *ks = ox_attr_ints(n, "kernel_shape", &cnt);
        if (!ks || cnt != x->rank - 2) NFAIL("kernel_shape must have %d entries", x->rank - 2);
        ox_geom g;
        if ((st = ox_conv_geom(m, n, &nchw, ks, ox_attr_int(n, "ceil_mode", 0) != 0, &g, err))) return st;
        for (int i = 0; i < g.ns; i++) shape[2 + i] = g.out[i];
    }
    if (last) { /* back to [N, spatial..., C] */
        int64_t c = shape[1];
        for (int d = 1; d < x->rank - 1; d++) shape[d] = shape[d + 1];
        shape[x->rank - 1] = c;
    }
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}

/* QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per
 * input, every X and zero point of one 8-bit type; `axis` is required. */
rotor_status ox_infer_qlinear_concat(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if (n->nin < 5 || (n->nin - 2) % 3) NFAIL("has %d inputs; expected Y_scale, Y_zero_point and triples (X, X_scale, X_zero_point)", n->nin);
    if ((st = ox_need(m, n, n->nin, err))) return st;
    ox_val *x0 = ox_in(m, n, 2);
    int64_t axis_attr = 0;
    if ((st = need_attr(m, n, "axis", &axis_attr, err))) return st;
    if (!is_q8(x0->onnx_type)) NFAIL("input '%s' is %s; the inputs are int8 or uint8", x0->name, ox_type_name(x0->onnx_type));
    int axis;
    if (x0->rank < 1 || !ox_norm_axis(axis_attr, x0->rank, &axis)) NFAIL("axis is out of range for rank %d", x0->rank);
    if ((st = scalar_param(m, n, 0, T_FLOAT, true, err)) || (st = scalar_param(m, n, 1, x0->onnx_type, true, err)))
        return st;
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x0->shape, sizeof shape);
    shape[axis] = 0;
    for (int i = 2; i < n->nin; i += 3) {
        ox_val *x = ox_in(m, n, i);
        if (x->onnx_type != x0->onnx_type) NFAIL("input '%s' is %s, '%s' is %s", x->name, ox_type_name(x->onnx_type),
                                                 x0->name, ox_type_name(x0->onnx_type));
        if ((st = scalar_param(m, n, i + 1, T_FLOAT, true, err)) ||
            (st = scalar_param(m, n, i + 2, x0->onnx_type, true, err)))
            return st;
        bool joins = x->rank == x0->rank;
        for (int d = 0; joins && d < x->rank; d++) joins = d == axis || x->shape[d] == x0->shape[d];
        if (!joins) {
            char s0[96], s1[96];
            shape_str(x0, s0, sizeof s0), shape_str(x, s1, sizeof s1);
            NFAIL("input '%s' %s does not join '%s' %s along axis %d", x->name, s1, x0->name, s0, axis);
        }
        shape[axis] += x->shape[axis];
    }
    return ox_set_out(m, n, 0, x0->onnx_type, x0->rank, shape, err);
}

/* ---- lowering ------------------------------------------------------------------------------ */

/* "Y[...] += A[...] * B[...]" for Y = A @ B with B of shape bs (rank br;
 * bt: B is stored transposed, [.., n, k]), Y of shape ys, and its dims.
 * Batch dimensions broadcast; extent-1 ones are left out, as lower.c does. */
static void mm_text(const ox_val *a, int br, const int64_t *bs, bool bt, const ox_val *y, char *text, size_t tcap,
                    char *dims, size_t dcap) {
    char ya[256] = "", aa[256] = "", ba[256] = "";
    size_t dk = 0;
    int ra = a->rank, nba = ra > 2 ? ra - 2 : 0, nbb = br > 2 ? br - 2 : 0, nb = nba > nbb ? nba : nbb;
#define AX(buf, s) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? "," : "", s)
#define DIM(s, e) (dk += (size_t)snprintf(dims + dk, dk < dcap ? dcap - dk : 0, "%s%s=%lld", dk ? "," : "", s, (long long)(e)))
    for (int d = 0; d < nb; d++) {
        if (y->shape[d] == 1) continue;
        char ax[16];
        snprintf(ax, sizeof ax, "b%d", d);
        DIM(ax, y->shape[d]);
        AX(ya, ax);
        if (d >= nb - nba && a->shape[d - (nb - nba)] > 1) AX(aa, ax);
        if (d >= nb - nbb && bs[d - (nb - nbb)] > 1) AX(ba, ax);
    }
    if (ra >= 2) DIM("m", a->shape[ra - 2]), AX(ya, "m"), AX(aa, "m");
    DIM("k", a->shape[ra - 1]);
    AX(aa, "k");
    if (br >= 2) {
        DIM("n", bs[br - (bt ? 2 : 1)]);
        AX(ya, "n");
        AX(ba, bt ? "n,k" : "k,n");
    } else {
        AX(ba, "k");
    }
    if (!ya[0]) { /* vector . vector: the unit axis u */
        DIM("u", 1);
        snprintf(ya, sizeof ya, "u");
        char t[256];
        snprintf(t, sizeof t, "u,%s", aa);
        snprintf(aa, sizeof aa, "%s", t);
    }
#undef AX
#undef DIM
    snprintf(text, tcap, "Y[%s] += A[%s] * B[%s]", ya, aa, ba);
}

/* B of MatMulNBits and MatMulBnb4 as the [N, K] weight W it packs (the
 * file's comment above): its value, or -1 for bits 2. */
static rotor_status packed_weight(lower_ctx *c, const ox_node *n, int bits, int64_t N, int64_t K, int *gw) {
    const ox_val *b = &c->m->vals[ox_resolve(c->m, n->in[1])];
    *gw = -1;
    if (bits == 2) return ROTOR_OK;
    rotor_role role = b->kind == OX_CONST ? ROTOR_ROLE_WEIGHT : ROTOR_ROLE_ACTIVATION;
    return lw_new_value(c, n, b->name, ".w", bits == 4 ? ROTOR_DTYPE_U4 : ROTOR_DTYPE_U8, 2, (const int64_t[]){N, K},
                        role, gw);
}

rotor_status lw_ms_qmatmul(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    if (m->keep_data) return lw_vendor(c, n); /* rotor run: the exact kernel */
    const char *op = n->p->op_type;
    bool itf = !strcmp(op, "MatMulIntegerToFloat"), bnb4 = !strcmp(op, "MatMulBnb4");
    int bias_in = itf ? 6 : bnb4 ? -1 : 5;
    const ox_val *a = &m->vals[ox_resolve(m, n->in[0])], *y = &m->vals[n->out[0]];
    int64_t K = ox_attr_int(n, "K", 0), N = ox_attr_int(n, "N", 0);
    int bits = bnb4 ? 4 : (int)ox_attr_int(n, "bits", 4);
    bool tb = itf ? false : bnb4 ? ox_attr_int(n, "transB", 1) != 0 : true;
    int64_t wshape[2] = {N, K};
    const ox_val *b = &m->vals[ox_resolve(m, n->in[1])];
    int ins[8], nin = 0, gb = -1, ga, gy;
    rotor_status st;
    if ((st = lw_gval(c, n, n->in[0], &ga))) return st;
    if ((st = itf ? lw_gval(c, n, n->in[1], &gb) : packed_weight(c, n, bits, N, K, &gb))) return st;
    ins[nin++] = ga;
    if (gb >= 0) ins[nin++] = gb;
    for (int k = 1; k < n->nin && nin < 8; k++) { /* scales, zero points, absmax (their bytes count) */
        if (n->in[k] < 0 || k == bias_in || (k == 1 && gb >= 0)) continue; /* B: in, or W stands for it */
        if ((st = lw_gval(c, n, n->in[k], &ins[nin++]))) return st;
    }
    bool bias = bias_in >= 0 && bias_in < n->nin && n->in[bias_in] >= 0;
    if ((st = bias ? lw_new_val(c, n, y->name, ".pre", y->dtype, y->rank, y->shape, &gy) : lw_gval(c, n, n->out[0], &gy)))
        return st;
    char text[ROTOR_EXPR_TEXT_MAX], dims[512];
    mm_text(a, itf ? b->rank : 2, itf ? b->shape : wshape, tb, y, text, sizeof text, dims, sizeof dims);
    if ((st = lw_op(c, n, n->name, op, text, dims, (const int[]){gy, ga, gb}, 3, ins, nin, gy))) return st;
    if ((st = rotor_graph_add_attr(c->g, c->g->nops - 1, "rotor.approximate", NULL, 0, NULL, 0,
                                   "the expression multiplies the quantized codes; the scales and zero points are "
                                   "applied outside it (rotor run imports the operator as a vendor op)", c->err)))
        return st;
    if (!bias) return ROTOR_OK;
    int gbias, gout;
    if ((st = lw_gval(c, n, n->in[bias_in], &gbias)) || (st = lw_gval(c, n, n->out[0], &gout))) return st;
    int64_t cols = y->rank ? y->shape[y->rank - 1] : 1;
    snprintf(dims, sizeof dims, "m=%lld,n=%lld", (long long)(y->elems / cols), (long long)cols);
    char name[256];
    snprintf(name, sizeof name, "%s.bias", n->name);
    return lw_op(c, n, name, "Add", "Y[m,n] = X[m,n] + B[n]", dims, (const int[]){gout, gy, gbias}, 3,
                 (const int[]){gy, gbias}, 2, gout);
}
