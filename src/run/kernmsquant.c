/* kernmsquant.c — reference kernels of onnxruntime's quantized
 * com.microsoft operators (docs/run.md, "Kernels"; the importer's rules in
 * src/model/onnxmsquant.c), written from onnxruntime's ContribOperators.md
 * and, where the text is silent, its CPU kernels:
 *  - an 8-bit input dequantizes as (x - zero_point) * scale (zero point 0
 *    when absent), the float operator runs in double, and an 8-bit output
 *    quantizes back as QuantizeLinear does: saturate(round(y / scale) + zp),
 *    rounding half to even, into [0, 255] or [-128, 127];
 *  - MatMulNBits: code i of a block is bits (i·bits mod 8) upwards of byte
 *    i·bits/8 of its blob (low bits first); a uint8 zero point is packed the
 *    same way per row of ceil(k_blocks·bits/8) bytes, a float one is not;
 *    without one it is 2^(bits-1); the weight is (code - zp) · scale;
 *  - MatMulBnb4: flat element i of the [N, K] weight is the high nibble of
 *    byte i/2 when i is even, the low one when odd (onnxruntime's
 *    blockwise_quant_block_bnb4.h), times absmax[i / block_size], through
 *    the FP4 or NF4 table below;
 *  - QLinearAveragePool divides a window by the elements it covers inside
 *    the input, or inside the padded input with count_include_pad, as
 *    onnxruntime's AveragePool does.
 * The inputs come by ONNX position (at[]): a graph value, or the constant
 * parameter ("@K", ints or floats) the lowering kept as an attribute. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/model/onnx.h"
#include "runint.h"

typedef struct qk {
    const rotor_graph *g;
    int o;
    const rotor_op *op;
    rotor_kernel kind;
    const int *at;      /* graph value per ONNX input position, -1: none */
    double *const *vals;
    rotor_error *err;
    double *own[RUN_MSQ_MAX_IN]; /* integer "@K" parameters converted, freed at the end */
    int nown;
} qk;

/* One input: its elements (NULL: absent), count, and graph value (NULL for
 * a parameter kept as an attribute); isint: integer elements (a packed
 * zero point rather than a float one). */
typedef struct qin {
    const double *d;
    int64_t n;
    const rotor_value *v;
    bool isint;
} qin;

static rotor_status qfail(const qk *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static rotor_status qfail(const qk *k, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rotor_status st = run_op_vfail(k->g, k->o, k->err, ROTOR_ERR_INPUT, fmt, ap);
    va_end(ap);
    return st;
}

static rotor_status in_get(qk *k, int pos, qin *q) {
    memset(q, 0, sizeof *q);
    int v = pos < RUN_MSQ_MAX_IN ? k->at[pos] : -1;
    if (v >= 0) {
        q->v = &k->g->values[v];
        q->n = q->v->elements;
        q->d = k->vals[v];
        q->isint = q->v->dtype != ROTOR_DTYPE_F32 && q->v->dtype != ROTOR_DTYPE_F16 &&
                   q->v->dtype != ROTOR_DTYPE_BF16 && q->v->dtype != ROTOR_DTYPE_F64;
        return q->d ? ROTOR_OK : qfail(k, "input '%s' has no data", q->v->name);
    }
    char name[16];
    snprintf(name, sizeof name, "@%d", pos);
    const rotor_attr *a = rotor_op_attr(k->op, name);
    if (!a) return ROTOR_OK;
    if (a->nfloats) {
        q->d = a->floats, q->n = a->nfloats;
        return ROTOR_OK;
    }
    double *buf = malloc(sizeof *buf * (size_t)(a->nints ? a->nints : 1));
    if (!buf) return rotor_nomem(k->err);
    if (k->nown == RUN_MSQ_MAX_IN) {
        free(buf);
        return qfail(k, "has too many parameters");
    }
    k->own[k->nown++] = buf;
    for (int i = 0; i < a->nints; i++) buf[i] = (double)a->ints[i];
    q->d = buf, q->n = a->nints, q->isint = true;
    return ROTOR_OK;
}

/* Element i of a parameter that is a scalar or one per position (dflt when
 * absent). */
static double param(const qin *q, int64_t i, double dflt) { return !q->d ? dflt : q->d[q->n == 1 ? 0 : i]; }

static int64_t attr_i(const qk *k, const char *name, int64_t dflt) {
    const rotor_attr *a = rotor_op_attr(k->op, name);
    return a && a->nints == 1 ? a->ints[0] : dflt;
}

/* QuantizeLinear into the output's type, by ONNX's rounding rule
 * (rotor_onnx_quantize: ties to even, the zero point, the type's range). */
static double quant(const rotor_value *y, double x, double scale, double zp) {
    return rotor_onnx_quantize(x / scale, zp, y->dtype);
}

/* y[r, j] = sum_k a[r, k] w[k, j] (w [K, N]) or w[j, k] (wt: w [N, K]),
 * plus bias[j]. */
static void product(const double *a, int64_t rows, int64_t K, const double *w, int64_t N, bool wt, const double *bias,
                    double *y) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < N; j++) {
            double s = bias ? bias[j] : 0;
            for (int64_t i = 0; i < K; i++) s += a[r * K + i] * (wt ? w[j * K + i] : w[i * N + j]);
            y[r * N + j] = s;
        }
}

/* ---- the matrix products ------------------------------------------------------------------ */

/* numpy matmul of a (rank ar) and b (rank br) into y, batches broadcast. */
static void batched(const double *a, int ar, const int64_t *as, const double *b, int br, const int64_t *bs,
                    const rotor_value *y, double *out) {
    int nba = ar > 2 ? ar - 2 : 0, nbb = br > 2 ? br - 2 : 0, nb = nba > nbb ? nba : nbb;
    int64_t M = ar >= 2 ? as[ar - 2] : 1, K = as[ar - 1], N = br >= 2 ? bs[br - 1] : 1, batches = 1;
    int64_t idx[ROTOR_GRAPH_MAX_RANK] = {0};
    for (int d = 0; d < nb; d++) batches *= y->shape[d];
    for (int64_t t = 0; t < batches; t++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < nb; d++) {
            if (d >= nb - nba) oa = oa * as[d - (nb - nba)] + (as[d - (nb - nba)] == 1 ? 0 : idx[d]);
            if (d >= nb - nbb) ob = ob * bs[d - (nb - nbb)] + (bs[d - (nb - nbb)] == 1 ? 0 : idx[d]);
        }
        product(a + oa * M * K, M, K, b + ob * K * N, N, false, NULL, out + t * M * N);
        for (int d = nb - 1; d >= 0 && ++idx[d] == y->shape[d]; d--) idx[d] = 0;
    }
}

/* MatMulIntegerToFloat: (A - a_zp) a_scale @ (B - b_zp) b_scale + bias, the
 * scales and zero points a scalar or one per column (last dimension). */
static rotor_status k_mm_to_float(qk *k) {
    qin a, b, p[5];
    rotor_status st;
    if ((st = in_get(k, 0, &a)) || (st = in_get(k, 1, &b))) return st;
    for (int i = 0; i < 5; i++)
        if ((st = in_get(k, 2 + i, &p[i]))) return st;
    const rotor_value *y = &k->g->values[k->op->outputs[0]];
    if (!a.v || !a.d || !b.d) return qfail(k, "needs A and B");
    int64_t K = a.v->shape[a.v->rank - 1], N = y->rank && a.v->rank ? y->shape[y->rank - 1] : 1;
    /* a B small enough to be kept as a parameter is [K, N] (or [K]: no n) */
    int br = b.v ? b.v->rank : b.n == K ? 1 : 2;
    const int64_t *bs = b.v ? b.v->shape : (const int64_t[]){K, N};
    if (!b.v && b.n != (br == 1 ? K : K * N)) return qfail(k, "B has %lld elements; rotor cannot tell its shape", (long long)b.n);
    double *da = malloc(sizeof *da * (size_t)a.n), *db = malloc(sizeof *db * (size_t)b.n);
    if (!da || !db) {
        free(da), free(db);
        return rotor_nomem(k->err);
    }
    for (int64_t e = 0; e < a.n; e++) da[e] = (a.d[e] - param(&p[2], e % K, 0)) * param(&p[0], e % K, 1);
    for (int64_t e = 0; e < b.n; e++)
        db[e] = (b.d[e] - param(&p[3], e % bs[br - 1], 0)) * param(&p[1], e % bs[br - 1], 1);
    double *out = k->vals[k->op->outputs[0]];
    batched(da, a.v->rank, a.v->shape, db, br, bs, y, out);
    if (p[4].d)
        for (int64_t e = 0; e < y->elements; e++) out[e] += param(&p[4], e % p[4].n, 0);
    free(da), free(db);
    return ROTOR_OK;
}

/* The [N, K] weight of MatMulNBits (inputs B, scales, zero_points). */
static rotor_status nbits_weight(qk *k, int64_t N, int64_t K, double *w) {
    int64_t bits = attr_i(k, "bits", 4), bs = attr_i(k, "block_size", 0);
    if ((bits != 2 && bits != 4 && bits != 8) || bs < 16) return qfail(k, "bits or block_size is out of range");
    int64_t kb = (K + bs - 1) / bs, blob = bs * bits / 8, zrow = (kb * bits + 7) / 8, mask = (1 << bits) - 1;
    qin b, sc, zp;
    rotor_status st;
    if ((st = in_get(k, 1, &b)) || (st = in_get(k, 2, &sc)) || (st = in_get(k, 3, &zp))) return st;
    if (!b.d || b.n != N * kb * blob || !sc.d || sc.n != N * kb || (zp.d && zp.n != N * (zp.isint ? zrow : kb)))
        return qfail(k, "B, scales or zero_points disagree with K, N, bits and block_size");
    for (int64_t n = 0; n < N; n++)
        for (int64_t j = 0; j < kb; j++) {
            double z = (double)(1 << (bits - 1));
            if (zp.d && zp.isint) z = (double)(((int64_t)zp.d[n * zrow + j * bits / 8] >> (j * bits % 8)) & mask);
            else if (zp.d) z = zp.d[n * kb + j];
            double s = sc.d[n * kb + j];
            for (int64_t i = 0; i < bs && j * bs + i < K; i++) {
                int64_t byte = (int64_t)b.d[(n * kb + j) * blob + i * bits / 8];
                w[n * K + j * bs + i] = (double)((byte >> (i * bits % 8)) & mask) - z;
                w[n * K + j * bs + i] *= s;
            }
        }
    return ROTOR_OK;
}

/* bitsandbytes' code books, as onnxruntime has them (float). */
static const float FP4[16] = {0.00000000f,  5.208333333e-03f,  0.66666667f,  1.00000000f, 0.33333333f,  0.50000000f,
                              0.16666667f,  0.25000000f,       -0.00000000f, -5.208333333e-03f, -0.66666667f, -1.00000000f,
                              -0.33333333f, -0.50000000f,      -0.16666667f, -0.25000000f};
static const float NF4[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                              -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                              0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                              0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                              0.7229568362236023f, 1.0f};

/* The [N, K] weight of MatMulBnb4 (inputs B, absmax). */
static rotor_status bnb4_weight(qk *k, int64_t N, int64_t K, double *w) {
    int64_t bs = attr_i(k, "block_size", 0), qt = attr_i(k, "quant_type", -1);
    qin b, am;
    rotor_status st;
    if ((st = in_get(k, 1, &b)) || (st = in_get(k, 2, &am))) return st;
    if (bs < 16 || (qt != 0 && qt != 1) || !b.d || b.n != (N * K + 1) / 2 || !am.d || am.n != (N * K + bs - 1) / bs)
        return qfail(k, "B, absmax, block_size or quant_type disagree with K and N");
    const float *book = qt ? NF4 : FP4;
    for (int64_t i = 0; i < N * K; i++) {
        int byte = (int)b.d[i / 2];
        w[i] = (double)book[(i % 2 ? byte : byte >> 4) & 15] * am.d[i / bs];
    }
    return ROTOR_OK;
}

/* MatMulNBits and MatMulBnb4: A @ W^T (+ bias), or A @ W for MatMulBnb4
 * with transB = 0. */
static rotor_status k_mm_blockwise(qk *k) {
    bool bnb4 = k->kind == ROTOR_KERNEL_MATMUL_BNB4;
    int64_t K = attr_i(k, "K", 0), N = attr_i(k, "N", 0);
    bool tb = !bnb4 || attr_i(k, "transB", 1) != 0;
    qin a, bias;
    rotor_status st;
    if ((st = in_get(k, 0, &a)) || (st = in_get(k, 5, &bias))) return st;
    if (bnb4) bias.d = NULL;
    int64_t inner = tb ? K : N, cols = tb ? N : K;
    if (!a.d || K < 1 || N < 1 || a.n % inner || (bias.d && bias.n != cols))
        return qfail(k, "A, K, N or the bias disagree");
    double *w = malloc(sizeof *w * (size_t)(N * K));
    if (!w) return rotor_nomem(k->err);
    st = bnb4 ? bnb4_weight(k, N, K, w) : nbits_weight(k, N, K, w);
    if (!st) product(a.d, a.n / inner, inner, w, cols, tb, bias.d, k->vals[k->op->outputs[0]]);
    free(w);
    return st;
}

/* ---- element-wise ------------------------------------------------------------------------ */

/* QLinearAdd, QLinearMul (broadcast), QLinearSigmoid, QLinearLeakyRelu:
 * inputs x (and its scale and zero point) per operand, then the output's. */
static rotor_status k_qlinear_ew(qk *k) {
    bool binary = k->kind == ROTOR_KERNEL_QLINEAR_ADD || k->kind == ROTOR_KERNEL_QLINEAR_MUL;
    static const int bx[2] = {0, 3}, bs[3] = {1, 4, 6}, bz[3] = {2, 5, 7}, ux[1] = {0}, us[2] = {1, 3}, uz[2] = {2, 4};
    const int *px = binary ? bx : ux, *ps = binary ? bs : us, *pz = binary ? bz : uz;
    int nx = binary ? 2 : 1;
    qin x[2], s[3], z[3]; /* s[nx], z[nx]: the output's */
    rotor_status st;
    for (int i = 0; i <= nx; i++)
        if ((i < nx && (st = in_get(k, px[i], &x[i]))) || (st = in_get(k, ps[i], &s[i])) || (st = in_get(k, pz[i], &z[i])))
            return st;
    const rotor_value *y = &k->g->values[k->op->outputs[0]];
    for (int i = 0; i < nx; i++)
        if (!x[i].d || (!x[i].v && x[i].n != 1)) return qfail(k, "needs its data inputs as values");
    double alpha = 0.01; /* onnxruntime's default */
    const rotor_attr *al = rotor_op_attr(k->op, "alpha");
    if (al && al->nfloats == 1) alpha = al->floats[0];
    double *o = k->vals[k->op->outputs[0]];
    int64_t idx[ROTOR_GRAPH_MAX_RANK] = {0};
    for (int64_t e = 0; e < y->elements; e++) {
        double v[2];
        for (int i = 0; i < nx; i++) {
            int64_t off = 0; /* numpy broadcasting onto the output */
            for (int d = 0; x[i].v && d < x[i].v->rank; d++) {
                int64_t ext = x[i].v->shape[d];
                off = off * ext + (ext == 1 ? 0 : idx[y->rank - x[i].v->rank + d]);
            }
            v[i] = (x[i].d[off] - param(&z[i], 0, 0)) * param(&s[i], 0, 1);
        }
        double r = k->kind == ROTOR_KERNEL_QLINEAR_ADD       ? v[0] + v[1]
                   : k->kind == ROTOR_KERNEL_QLINEAR_MUL     ? v[0] * v[1]
                   : k->kind == ROTOR_KERNEL_QLINEAR_SIGMOID ? 1 / (1 + exp(-v[0]))
                   : v[0] < 0                                ? alpha * v[0]
                                                             : v[0];
        o[e] = quant(y, r, param(&s[nx], 0, 1), param(&z[nx], 0, 0));
        for (int d = y->rank - 1; d >= 0 && ++idx[d] == y->shape[d]; d--) idx[d] = 0;
    }
    return ROTOR_OK;
}

/* ---- pooling and concatenation ---------------------------------------------------------------- */

/* A pool's geometry per spatial dimension: kernel, stride, dilation, leading
 * and trailing pads (AveragePool's attributes; auto_pad from the output). */
typedef struct qgeom {
    int ns;
    int64_t in[ROTOR_GRAPH_MAX_RANK], out[ROTOR_GRAPH_MAX_RANK];
    int64_t k[ROTOR_GRAPH_MAX_RANK], s[ROTOR_GRAPH_MAX_RANK], d[ROTOR_GRAPH_MAX_RANK];
    int64_t pb[ROTOR_GRAPH_MAX_RANK], pe[ROTOR_GRAPH_MAX_RANK];
} qgeom;

static rotor_status pool_geom(const qk *k, bool global, qgeom *g) {
    const rotor_attr *ks = rotor_op_attr(k->op, "kernel_shape"), *st = rotor_op_attr(k->op, "strides"),
                     *dl = rotor_op_attr(k->op, "dilations"), *pd = rotor_op_attr(k->op, "pads"),
                     *ap = rotor_op_attr(k->op, "auto_pad");
    int ns = g->ns;
    if (!global && (!ks || ks->nints != ns)) return qfail(k, "kernel_shape has no entry per spatial dimension");
    for (int i = 0; i < ns; i++) {
        g->k[i] = global ? g->in[i] : ks->ints[i];
        g->s[i] = !global && st && st->nints == ns ? st->ints[i] : 1;
        g->d[i] = !global && dl && dl->nints == ns ? dl->ints[i] : 1;
        g->pb[i] = !global && pd && pd->nints == 2 * ns ? pd->ints[i] : 0;
        g->pe[i] = !global && pd && pd->nints == 2 * ns ? pd->ints[ns + i] : 0;
        bool upper = ap && ap->str && !strcmp(ap->str, "SAME_UPPER"), lower = ap && ap->str && !strcmp(ap->str, "SAME_LOWER");
        if (!global && (upper || lower)) {
            int64_t total = (g->out[i] - 1) * g->s[i] + g->d[i] * (g->k[i] - 1) + 1 - g->in[i];
            if (total < 0) total = 0;
            g->pb[i] = upper ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
        } else if (!global && ap && ap->str && !strcmp(ap->str, "VALID")) {
            g->pb[i] = g->pe[i] = 0;
        }
        if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1) return qfail(k, "kernel, strides and dilations must be positive");
    }
    return ROTOR_OK;
}

/* QLinearAveragePool and QLinearGlobalAveragePool over [N, C, spatial...]
 * or, with channels_last, [N, spatial..., C]. */
static rotor_status k_qlinear_pool(qk *k) {
    qin x, sx, zx, sy, zy;
    rotor_status st;
    if ((st = in_get(k, 0, &x)) || (st = in_get(k, 1, &sx)) || (st = in_get(k, 2, &zx)) || (st = in_get(k, 3, &sy)) ||
        (st = in_get(k, 4, &zy)))
        return st;
    const rotor_value *y = &k->g->values[k->op->outputs[0]];
    if (!x.v || x.v->rank < 3 || y->rank != x.v->rank) return qfail(k, "needs an [N, C, spatial...] input and output");
    bool last = attr_i(k, "channels_last", 0) != 0, incl = attr_i(k, "count_include_pad", 0) != 0;
    qgeom g = {.ns = x.v->rank - 2};
    int64_t C = x.v->shape[last ? x.v->rank - 1 : 1], in_n = 1, out_n = 1;
    for (int i = 0; i < g.ns; i++) {
        g.in[i] = x.v->shape[last ? 1 + i : 2 + i], g.out[i] = y->shape[last ? 1 + i : 2 + i];
        in_n *= g.in[i], out_n *= g.out[i];
    }
    if ((st = pool_geom(k, k->kind == ROTOR_KERNEL_QLINEAR_GLOBAL_AVERAGEPOOL, &g))) return st;
    int64_t taps = 1;
    for (int i = 0; i < g.ns; i++) taps *= g.k[i];
    double *o = k->vals[k->op->outputs[0]];
    for (int64_t b = 0; b < x.v->shape[0]; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < out_n; p++) {
                double sum = 0;
                int64_t inside = 0, padded = 0;
                for (int64_t t = 0; t < taps; t++) {
                    int64_t sp = 0, mul = 1, rp = p, rt = t; /* p and t row-major over the spatial dimensions */
                    bool in = true, inpad = true;
                    for (int i = g.ns - 1; i >= 0; i--) {
                        int64_t ci = (rp % g.out[i]) * g.s[i] + (rt % g.k[i]) * g.d[i] - g.pb[i];
                        rp /= g.out[i], rt /= g.k[i];
                        in = in && ci >= 0 && ci < g.in[i];
                        inpad = inpad && ci < g.in[i] + g.pe[i];
                        sp += ci * mul, mul *= g.in[i];
                    }
                    padded += inpad;
                    if (!in) continue;
                    int64_t e = last ? (b * in_n + sp) * C + c : (b * C + c) * in_n + sp;
                    sum += (x.d[e] - param(&zx, 0, 0)) * param(&sx, 0, 1);
                    inside++;
                }
                int64_t oe = last ? (b * out_n + p) * C + c : (b * C + c) * out_n + p;
                double cnt = (double)(incl ? padded : inside);
                o[oe] = quant(y, cnt > 0 ? sum / cnt : 0, param(&sy, 0, 1), param(&zy, 0, 0));
            }
    return ROTOR_OK;
}

/* QLinearConcat: Y_scale, Y_zero_point, then (X, scale, zero point) per
 * input, joined along axis. */
static rotor_status k_qlinear_concat(qk *k) {
    const rotor_value *y = &k->g->values[k->op->outputs[0]];
    qin sy, zy, x, sx, zx;
    rotor_status st;
    if ((st = in_get(k, 0, &sy)) || (st = in_get(k, 1, &zy))) return st;
    int64_t ax = attr_i(k, "axis", 0);
    if (ax < 0) ax += y->rank;
    if (ax < 0 || ax >= y->rank) return qfail(k, "axis is out of range");
    int64_t outer = 1, inner = 1, at = 0;
    for (int d = 0; d < y->rank; d++)
        if (d != ax) *(d < ax ? &outer : &inner) *= y->shape[d];
    double *o = k->vals[k->op->outputs[0]];
    for (int pos = 2; pos + 2 < RUN_MSQ_MAX_IN; pos += 3) {
        if ((st = in_get(k, pos, &x)) || (st = in_get(k, pos + 1, &sx)) || (st = in_get(k, pos + 2, &zx))) return st;
        if (!x.d) break;
        int64_t ext = x.n / (outer * inner);
        if (ext * outer * inner != x.n || at + ext > y->shape[ax]) return qfail(k, "input %d does not fit the output", pos);
        for (int64_t a = 0; a < outer; a++)
            for (int64_t e = 0; e < ext * inner; e++) {
                double v = (x.d[a * ext * inner + e] - param(&zx, 0, 0)) * param(&sx, 0, 1);
                o[(a * y->shape[ax] + at) * inner + e] = quant(y, v, param(&sy, 0, 1), param(&zy, 0, 0));
            }
        at += ext;
    }
    if (at != y->shape[ax]) return qfail(k, "inputs cover %lld of the output's %lld", (long long)at, (long long)y->shape[ax]);
    return ROTOR_OK;
}

rotor_status run_msquant_kernel(const rotor_graph *g, int op, rotor_kernel kind, const int *at, double *const *vals,
                                rotor_error *err) {
    qk k = {.g = g, .o = op, .op = &g->ops[op], .kind = kind, .at = at, .vals = vals, .err = err};
    rotor_status st;
    switch (kind) {
    case ROTOR_KERNEL_MATMUL_INTEGER_TO_FLOAT: st = k_mm_to_float(&k); break;
    case ROTOR_KERNEL_MATMUL_NBITS: case ROTOR_KERNEL_MATMUL_BNB4: st = k_mm_blockwise(&k); break;
    case ROTOR_KERNEL_QLINEAR_ADD: case ROTOR_KERNEL_QLINEAR_MUL: case ROTOR_KERNEL_QLINEAR_SIGMOID:
    case ROTOR_KERNEL_QLINEAR_LEAKY_RELU: st = k_qlinear_ew(&k); break;
    case ROTOR_KERNEL_QLINEAR_AVERAGEPOOL: case ROTOR_KERNEL_QLINEAR_GLOBAL_AVERAGEPOOL: st = k_qlinear_pool(&k); break;
    case ROTOR_KERNEL_QLINEAR_CONCAT: st = k_qlinear_concat(&k); break;
    default: st = qfail(&k, "is not one of onnxruntime's quantized operators"); break;
    }
    for (int i = 0; i < k.nown; i++) free(k.own[i]);
    return st;
}
