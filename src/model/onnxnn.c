/* onnxnn.c — shape rules (onnxshape.c) of the contractions (MatMul, Gemm),
 * convolution and pooling, and the normalisations. */
#include "onnxir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rotor_status ox_infer_matmul(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *a = ox_in(m, n, 0), *b = ox_in(m, n, 1);
    if (a->onnx_type != b->onnx_type)
        NFAIL("inputs '%s' (%s) and '%s' (%s) differ in type", a->name, ox_type_name(a->onnx_type), b->name,
              ox_type_name(b->onnx_type));
    return ox_matmul_shape(m, n, 0, 1, a->onnx_type, err);
}

rotor_status ox_matmul_shape(ox_model *m, ox_node *n, int ia, int ib, int type, rotor_error *err) {
    ox_val *a = ox_in(m, n, ia), *b = ox_in(m, n, ib);
    if (a->rank < 1 || b->rank < 1) NFAIL("inputs must have at least one dimension");
    int64_t k1 = a->shape[a->rank - 1], k2 = b->rank >= 2 ? b->shape[b->rank - 2] : b->shape[0];
    if (k1 != k2) NFAIL("inner dimensions differ: '%s' has %lld, '%s' has %lld", a->name, (long long)k1, b->name,
                        (long long)k2);
    int ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    int br = ba > bb ? ba : bb;
    int64_t shape[OX_MAX_RANK + 2];
    for (int d = 0; d < br; d++) {
        int da = d - (br - ba), db = d - (br - bb);
        int64_t ea = da >= 0 ? a->shape[da] : 1, eb = db >= 0 ? b->shape[db] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            NFAIL("batch dimensions do not broadcast: %lld and %lld", (long long)ea, (long long)eb);
        shape[d] = ea == 1 ? eb : ea;
    }
    int r = br;
    if (a->rank >= 2) shape[r++] = a->shape[a->rank - 2];
    if (b->rank >= 2) shape[r++] = b->shape[b->rank - 1];
    return ox_set_out(m, n, 0, type, r, shape, err);
}

rotor_status ox_infer_gemm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *a = ox_in(m, n, 0), *b = ox_in(m, n, 1), *c = ox_in(m, n, 2);
    if (a->rank != 2 || b->rank != 2) NFAIL("A and B must be matrices (ranks %d and %d)", a->rank, b->rank);
    bool ta = ox_attr_int(n, "transA", 0), tb = ox_attr_int(n, "transB", 0);
    int64_t M = a->shape[ta ? 1 : 0], K = a->shape[ta ? 0 : 1];
    int64_t K2 = b->shape[tb ? 1 : 0], N = b->shape[tb ? 0 : 1];
    if (K != K2) NFAIL("inner dimensions differ: %lld and %lld", (long long)K, (long long)K2);
    int64_t shape[2] = {M, N};
    if (c) {
        for (int d = 0; d < c->rank; d++) {
            int od = 2 - c->rank + d;
            if (od < 0 || (c->shape[d] != 1 && c->shape[d] != shape[od]))
                NFAIL("C '%s' does not broadcast to %lldx%lld", c->name, (long long)M, (long long)N);
        }
    }
    return ox_set_out(m, n, 0, a->onnx_type, 2, shape, err);
}


rotor_status ox_conv_geom(ox_model *m, const ox_node *n, const ox_val *x, const int64_t *kernel, bool ceil_mode,
                          ox_geom *g, rotor_error *err) {
    g->ns = x->rank - 2;
    int cnt;
    const int64_t *v;
    for (int i = 0; i < g->ns; i++) {
        g->k[i] = kernel[i];
        g->s[i] = 1, g->d[i] = 1, g->pb[i] = 0, g->pe[i] = 0;
        g->in[i] = x->shape[2 + i];
    }
    if ((v = ox_attr_ints(n, "strides", &cnt))) {
        if (cnt != g->ns) NFAIL("strides has %d entries for %d spatial dimensions", cnt, g->ns);
        for (int i = 0; i < g->ns; i++) g->s[i] = v[i];
    }
    if ((v = ox_attr_ints(n, "dilations", &cnt))) {
        if (cnt != g->ns) NFAIL("dilations has %d entries for %d spatial dimensions", cnt, g->ns);
        for (int i = 0; i < g->ns; i++) g->d[i] = v[i];
    }
    if ((v = ox_attr_ints(n, "pads", &cnt))) {
        if (cnt != 2 * g->ns) NFAIL("pads has %d entries for %d spatial dimensions", cnt, g->ns);
        for (int i = 0; i < g->ns; i++) g->pb[i] = v[i], g->pe[i] = v[g->ns + i];
    }
    const Onnx__AttributeProto *ap = ox_attr(n, "auto_pad");
    char autopad[16] = "NOTSET";
    if (ap && ap->has_s) snprintf(autopad, sizeof autopad, "%.*s", (int)ap->s.len, (const char *)ap->s.data);
    for (int i = 0; i < g->ns; i++) {
        if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1 || g->pb[i] < 0 || g->pe[i] < 0 || g->k[i] > (1 << 20) ||
            g->s[i] > (1 << 20) || g->d[i] > (1 << 20) || g->pb[i] > (1 << 30) || g->pe[i] > (1 << 30))
            NFAIL("kernel %lld, stride %lld, dilation %lld or pads %lld/%lld out of range in dimension %d",
                  (long long)g->k[i], (long long)g->s[i], (long long)g->d[i], (long long)g->pb[i],
                  (long long)g->pe[i], i);
        int64_t span = g->d[i] * (g->k[i] - 1) + 1;
        if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
            g->out[i] = (g->in[i] + g->s[i] - 1) / g->s[i];
            int64_t total = (g->out[i] - 1) * g->s[i] + span - g->in[i];
            if (total < 0) total = 0;
            g->pb[i] = !strcmp(autopad, "SAME_UPPER") ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
        } else {
            if (!strcmp(autopad, "VALID")) g->pb[i] = g->pe[i] = 0;
            else if (strcmp(autopad, "NOTSET") != 0) NFAIL("auto_pad '%s' is not an ONNX value", autopad);
            int64_t room = g->in[i] + g->pb[i] + g->pe[i] - span;
            if (room < 0) NFAIL("kernel extent %lld exceeds the padded input %lld in dimension %d", (long long)span,
                                (long long)(g->in[i] + g->pb[i] + g->pe[i]), i);
            g->out[i] = (ceil_mode ? (room + g->s[i] - 1) / g->s[i] : room / g->s[i]) + 1;
        }
    }
    return ROTOR_OK;
}

rotor_status ox_infer_conv(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    return ox_conv_shape(m, n, 0, 1, ox_in(m, n, 0)->onnx_type, err);
}

rotor_status ox_conv_shape(ox_model *m, ox_node *n, int ix, int iw, int type, rotor_error *err) {
    const char *op = n->p->op_type;
    rotor_status st;
    ox_val *x = ox_in(m, n, ix), *w = ox_in(m, n, iw);
    if (x->rank < 3) NFAIL("input '%s' has rank %d; Conv needs [N, C, spatial...]", x->name, x->rank);
    if (w->rank != x->rank) NFAIL("weight '%s' has rank %d, input has %d", w->name, w->rank, x->rank);
    int64_t groups = ox_attr_int(n, "group", 1);
    bool transpose = !strcmp(op, "ConvTranspose");
    int64_t cin = x->shape[1];
    if (groups < 1 || cin % groups) NFAIL("group %lld does not divide the %lld input channels", (long long)groups,
                                          (long long)cin);
    if (!transpose && w->shape[1] * groups != cin)
        NFAIL("weight '%s' expects %lld input channels per group; the input has %lld in %lld groups", w->name,
              (long long)w->shape[1], (long long)cin, (long long)groups);
    if (transpose && w->shape[0] != cin)
        NFAIL("weight '%s' expects %lld input channels; the input has %lld", w->name, (long long)w->shape[0],
              (long long)cin);
    if (!transpose && w->shape[0] % groups) NFAIL("group %lld does not divide the %lld output channels",
                                                  (long long)groups, (long long)w->shape[0]);
    int cnt;
    const int64_t *ks = ox_attr_ints(n, "kernel_shape", &cnt);
    if (ks && cnt != x->rank - 2) NFAIL("kernel_shape has %d entries for %d spatial dimensions", cnt, x->rank - 2);
    if (ks)
        for (int i = 0; i < cnt; i++)
            if (ks[i] != w->shape[2 + i]) NFAIL("kernel_shape disagrees with weight '%s'", w->name);
    ox_geom g;
    int64_t shape[OX_MAX_RANK];
    shape[0] = x->shape[0];
    if (!transpose) {
        if ((st = ox_conv_geom(m, n, x, w->shape + 2, false, &g, err))) return st;
        shape[1] = w->shape[0];
        for (int i = 0; i < g.ns; i++) shape[2 + i] = g.out[i];
    } else {
        /* ConvTranspose (ONNX operator spec): output_shape when given; with
         * auto_pad SAME_UPPER or SAME_LOWER, in * s (the pads follow from
         * it); else s(in-1) + output_padding + d(k-1) + 1 - pads, the pads
         * zero for VALID. */
        const int64_t *os = ox_attr_ints(n, "output_shape", &cnt);
        int cnt2;
        const int64_t *op2 = ox_attr_ints(n, "output_padding", &cnt2);
        const Onnx__AttributeProto *ap = ox_attr(n, "auto_pad");
        char autopad[16] = "NOTSET";
        if (ap && ap->has_s) snprintf(autopad, sizeof autopad, "%.*s", (int)ap->s.len, (const char *)ap->s.data);
        bool same = !strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER");
        if (!same && strcmp(autopad, "VALID") != 0 && strcmp(autopad, "NOTSET") != 0)
            NFAIL("auto_pad '%s' is not an ONNX value", autopad);
        shape[1] = w->shape[1] * groups;
        for (int i = 0; i < x->rank - 2; i++) {
            if (os) {
                if (cnt != x->rank - 2) NFAIL("output_shape has %d entries", cnt);
                shape[2 + i] = os[i];
                continue;
            }
            int64_t s = 1, d = 1, pb = 0, pe = 0, opad = op2 && cnt2 == x->rank - 2 ? op2[i] : 0;
            const int64_t *v;
            int c;
            if ((v = ox_attr_ints(n, "strides", &c)) && c == x->rank - 2) s = v[i];
            if ((v = ox_attr_ints(n, "dilations", &c)) && c == x->rank - 2) d = v[i];
            if ((v = ox_attr_ints(n, "pads", &c)) && c == 2 * (x->rank - 2)) pb = v[i], pe = v[x->rank - 2 + i];
            if (!strcmp(autopad, "VALID")) pb = pe = 0;
            if (s < 1 || d < 1 || s > (1 << 20) || d > (1 << 20) || pb < 0 || pe < 0 || opad < 0 || pb > (1 << 30) ||
                pe > (1 << 30) || opad > (1 << 20))
                NFAIL("stride %lld, dilation %lld, pads %lld/%lld or output_padding %lld out of range in dimension %d",
                      (long long)s, (long long)d, (long long)pb, (long long)pe, (long long)opad, i);
            shape[2 + i] = same ? x->shape[2 + i] * s
                                : s * (x->shape[2 + i] - 1) + opad + d * (w->shape[2 + i] - 1) + 1 - pb - pe;
            if (shape[2 + i] < 1) NFAIL("output extent %lld in dimension %d", (long long)shape[2 + i], i);
        }
    }
    ox_val *bias = strcmp(op, "Conv") ? NULL : ox_in(m, n, 2);
    if (bias && (bias->rank != 1 || bias->shape[0] != shape[1]))
        NFAIL("bias '%s' must have %lld elements", bias->name, (long long)shape[1]);
    return ox_set_out(m, n, 0, type, x->rank, shape, err);
}

rotor_status ox_infer_pool(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->rank < 3) NFAIL("input '%s' has rank %d; pooling needs [N, C, spatial...]", x->name, x->rank);
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    if (!strncmp(n->p->op_type, "Global", 6)) {
        for (int i = 2; i < x->rank; i++) shape[i] = 1;
    } else {
        int cnt;
        const int64_t *ks = ox_attr_ints(n, "kernel_shape", &cnt);
        if (!ks || cnt != x->rank - 2) NFAIL("kernel_shape must have %d entries", x->rank - 2);
        ox_geom g;
        if ((st = ox_conv_geom(m, n, x, ks, ox_attr_int(n, "ceil_mode", 0) != 0, &g, err))) return st;
        for (int i = 0; i < g.ns; i++) shape[2 + i] = g.out[i];
    }
    if ((st = ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err))) return st;
    return ox_set_out(m, n, 1, T_INT64, x->rank, shape, err); /* MaxPool's indices */
}

/* Input i of a normalisation: one value per channel, a 1-D [C] (or
 * [alt] when alt > 0), as ONNX's BatchNormalization, InstanceNormalization
 * and GroupNormalization define their scale, bias and statistics. */
static rotor_status per_channel(ox_model *m, ox_node *n, int i, const char *what, int64_t c, int64_t alt,
                                rotor_error *err) {
    const ox_val *p = ox_in(m, n, i);
    if (p->rank == 1 && (p->shape[0] == c || (alt > 0 && p->shape[0] == alt))) return ROTOR_OK;
    char also[48] = "";
    if (alt > 0) snprintf(also, sizeof also, " or [%lld] (one per group)", (long long)alt);
    if (p->rank != 1)
        NFAIL("%s '%s' has rank %d; it must be [%lld] (one per channel)%s", what, p->name, p->rank, (long long)c, also);
    NFAIL("%s '%s' has %lld elements; it must be [%lld] (one per channel)%s", what, p->name, (long long)p->shape[0],
          (long long)c, also);
}

/* BatchNormalization: scale, B, mean and var are [C] (ONNX, from opset 9;
 * before it, spatial=0 gave them [C, D1, ...], which rotor refuses). */
rotor_status ox_infer_batchnorm(ox_model *m, ox_node *n, rotor_error *err) {
    static const char *const what[] = {"", "scale", "B", "input_mean", "input_var"};
    rotor_status st;
    if ((st = ox_need(m, n, 5, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->rank < 2) NFAIL("input '%s' has rank %d; BatchNormalization needs [N, C, ...]", x->name, x->rank);
    if (m->opset < 9 && ox_attr_int(n, "spatial", 1) == 0)
        NFAIL("spatial=0 (statistics per activation) is not supported");
    for (int i = 1; i < 5; i++)
        if ((st = per_channel(m, n, i, what[i], x->shape[1], 0, err))) return st;
    if ((st = ox_same_as(m, n, 0, x, err))) return st;
    for (int i = 1; i < n->nout; i++) /* training-mode statistics */
        if ((st = ox_set_out(m, n, i, x->onnx_type, 1, &x->shape[1], err))) return st;
    return ROTOR_OK;
}

/* InstanceNormalization and GroupNormalization (grouped): input [N, C,
 * ...]; num_groups divides C; scale and bias are [C].  GroupNormalization's
 * opset 18 made them [num_groups], which ONNX then found wrong (PyTorch's
 * group norm scales per channel) and replaced by per channel at 21; at
 * opsets 18 to 20 rotor takes either size, the only two a model can mean
 * (MIGraphX's files use [C] there). */
static rotor_status norm_by_channel(ox_model *m, ox_node *n, bool grouped, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->rank < 2) NFAIL("input '%s' has rank %d; %s needs [N, C, ...]", x->name, x->rank, n->p->op_type);
    int64_t c = x->shape[1], g = grouped ? ox_attr_int(n, "num_groups", 0) : 0;
    if (grouped && (g < 1 || c % g))
        NFAIL("num_groups %lld does not divide the %lld channels of '%s'", (long long)g, (long long)c, x->name);
    int64_t alt = grouped && m->opset < 21 ? g : 0;
    if ((st = per_channel(m, n, 1, "scale", c, alt, err)) ||
        (st = per_channel(m, n, 2, grouped ? "bias" : "B", c, alt, err)))
        return st;
    return ox_same_as(m, n, 0, x, err);
}

rotor_status ox_infer_instancenorm(ox_model *m, ox_node *n, rotor_error *err) {
    return norm_by_channel(m, n, false, err);
}

rotor_status ox_infer_groupnorm(ox_model *m, ox_node *n, rotor_error *err) {
    return norm_by_channel(m, n, true, err);
}

/* LayerNormalization: Scale and B broadcast to X unidirectionally (ONNX);
 * Mean and InvStdDev keep X's leading dimensions before axis. */
rotor_status ox_infer_layernorm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int axis;
    if (!ox_norm_axis(ox_attr_int(n, "axis", -1), x->rank, &axis)) NFAIL("axis is out of range for rank %d", x->rank);
    for (int i = 1; i < 3; i++) {
        const ox_val *p = ox_in(m, n, i);
        if (!p) continue;
        bool fits = p->rank <= x->rank;
        for (int d = 0; fits && d < p->rank; d++) {
            int64_t e = p->shape[d], xe = x->shape[x->rank - p->rank + d];
            fits = e == xe || e == 1;
        }
        if (!fits) NFAIL("%s '%s' does not broadcast to the input '%s'", i == 1 ? "Scale" : "B", p->name, x->name);
    }
    if ((st = ox_same_as(m, n, 0, x, err))) return st;
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) shape[d] = d < axis ? x->shape[d] : 1;
    for (int i = 1; i < n->nout; i++)
        if ((st = ox_set_out(m, n, i, T_FLOAT, x->rank, shape, err))) return st;
    return ROTOR_OK;
}

/* LpNormalization: axis within the rank, p 1 or 2 (the only orders ONNX
 * defines). */
rotor_status ox_infer_lpnorm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int axis;
    int64_t a = ox_attr_int(n, "axis", -1), p = ox_attr_int(n, "p", 2);
    if (!ox_norm_axis(a, x->rank, &axis)) NFAIL("axis %lld is out of range for rank %d", (long long)a, x->rank);
    if (p != 1 && p != 2) NFAIL("p %lld is not 1 or 2, the orders ONNX's LpNormalization defines", (long long)p);
    return ox_same_as(m, n, 0, x, err);
}

/* NegativeLogLikelihoodLoss (input [N, C, d...], target [N, d...]) and
 * SoftmaxCrossEntropyLoss (scores, labels, the same shapes; its optional
 * second output, log_prob, is shaped like the scores).  reduction "none"
 * keeps the target's shape; "sum" and "mean" (the default) give a scalar.
 * Inference-computable with static shapes, so they import as vendor ops. */
rotor_status ox_infer_loss(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0), *t = ox_in(m, n, 1);
    if (x->rank < 2) NFAIL("input has rank %d; needs [N, C, ...]", x->rank);
    if (t->rank != x->rank - 1) NFAIL("target has rank %d; needs %d ([N, d...])", t->rank, x->rank - 1);
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] != x->shape[d ? d + 1 : 0])
            NFAIL("target dimension %d is %lld, the input's is %lld", d, (long long)t->shape[d],
                  (long long)x->shape[d ? d + 1 : 0]);
    /* none, sum or mean: the schema check (onnxschema.c) refused any other */
    const Onnx__AttributeProto *a = ox_attr(n, "reduction");
    bool none = a && a->has_s && a->s.len == 4 && !memcmp(a->s.data, "none", 4);
    if ((st = ox_set_out(m, n, 0, x->onnx_type, none ? t->rank : 0, t->shape, err))) return st;
    if (n->nout > 1 && (st = ox_set_out(m, n, 1, x->onnx_type, x->rank, x->shape, err))) return st;
    return ROTOR_OK;
}

/* GridSample: X [N, C, D1..Dr], grid [N, H1..Hr, r] -> [N, C, H1..Hr]. */
rotor_status ox_infer_gridsample(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0), *g = ox_in(m, n, 1);
    int r = x->rank - 2;
    if (r < 1 || g->rank != r + 2 || g->shape[r + 1] != r)
        NFAIL("needs X [N, C, spatial...] and grid [N, spatial..., %d]; got ranks %d and %d", r > 0 ? r : 1,
              x->rank, g->rank);
    if (g->shape[0] != x->shape[0])
        NFAIL("grid batch %lld differs from X's %lld", (long long)g->shape[0], (long long)x->shape[0]);
    int64_t shape[OX_MAX_RANK];
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int d = 0; d < r; d++) shape[d + 2] = g->shape[d + 1];
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}

/* Det: [*, M, M] -> [*]. */
rotor_status ox_infer_det(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->rank < 2 || x->shape[x->rank - 1] != x->shape[x->rank - 2])
        NFAIL("input '%s' is not a stack of square matrices", x->name);
    return ox_set_out(m, n, 0, x->onnx_type, x->rank - 2, x->shape, err);
}

/* RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] ->
 * [R, C, output_height, output_width] (both default 1). */
rotor_status ox_infer_roialign(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err))) return st;
    ox_val *x = ox_in(m, n, 0), *r = ox_in(m, n, 1), *b = ox_in(m, n, 2);
    if (x->rank != 4 || r->rank != 2 || r->shape[1] != 4 || b->rank != 1 || b->shape[0] != r->shape[0])
        NFAIL("needs X [N, C, H, W], rois [R, 4] and batch_indices [R]");
    int64_t h = ox_attr_int(n, "output_height", 1), w = ox_attr_int(n, "output_width", 1);
    if (h < 1 || w < 1 || h > (1 << 20) || w > (1 << 20)) NFAIL("output size %lldx%lld is out of range", (long long)h, (long long)w);
    int64_t shape[4] = {r->shape[0], x->shape[1], h, w};
    return ox_set_out(m, n, 0, x->onnx_type, 4, shape, err);
}

/* MaxUnpool: the output_shape input when given, else per spatial axis
 * (in - 1) * stride + kernel - pad_begin - pad_end. */
rotor_status ox_infer_maxunpool(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    int r = x->rank - 2;
    int64_t shape[OX_MAX_RANK];
    int cnt;
    if (r < 1) NFAIL("input '%s' has rank %d; needs [N, C, spatial...]", x->name, x->rank);
    if (n->nin > 2 && n->in[2] >= 0) {
        if ((st = ox_const_ints(m, n, 2, "output_shape", shape, OX_MAX_RANK, &cnt, err))) return st;
        if (cnt != x->rank) NFAIL("output_shape has %d entries for rank %d", cnt, x->rank);
        for (int d = 0; d < cnt; d++)
            if (shape[d] < 1) NFAIL("output_shape[%d] = %lld is not positive", d, (long long)shape[d]);
        return ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
    }
    int nk, ns, np;
    const int64_t *k = ox_attr_ints(n, "kernel_shape", &nk), *s = ox_attr_ints(n, "strides", &ns),
                  *p = ox_attr_ints(n, "pads", &np);
    if (!k || nk != r) NFAIL("kernel_shape needs %d entries", r);
    if ((s && ns != r) || (p && np != 2 * r)) NFAIL("strides or pads do not match %d spatial axes", r);
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int d = 0; d < r; d++) {
        int64_t str = s ? s[d] : 1, e = (x->shape[d + 2] - 1) * (str) + k[d] - (p ? p[d] + p[d + r] : 0);
        if (str < 1 || str > (1 << 20) || k[d] < 1 || k[d] > (1 << 20) || e < 1)
            NFAIL("spatial axis %d: kernel %lld, stride %lld give no output", d, (long long)k[d], (long long)str);
        shape[d + 2] = e;
    }
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}

/* DFT: input [batch, signal..., 1 or 2] -> the same with 2 (complex) last
 * and the transformed axis dft_length long (the input's if omitted), or
 * dft_length / 2 + 1 when onesided.  Opset 17 takes the axis as an
 * attribute (default 1); from opset 20 it is input 2 (default -2). */
rotor_status ox_infer_dft(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->rank < 3 || (x->shape[x->rank - 1] != 1 && x->shape[x->rank - 1] != 2))
        NFAIL("input '%s' needs rank >= 3 and a last dimension of 1 (real) or 2 (complex)", x->name);
    int64_t v[1], axis = m->opset >= 20 ? -2 : ox_attr_int(n, "axis", 1);
    int cnt;
    if (m->opset >= 20 && n->nin > 2 && n->in[2] >= 0) {
        if ((st = ox_const_ints(m, n, 2, "axis", v, 1, &cnt, err))) return st;
        axis = v[0];
    }
    int a;
    if (!ox_norm_axis(axis, x->rank, &a) || a == 0 || a == x->rank - 1)
        NFAIL("axis %lld is not a signal axis of rank %d", (long long)axis, x->rank);
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) shape[d] = x->shape[d];
    if (n->nin > 1 && n->in[1] >= 0) {
        if ((st = ox_const_ints(m, n, 1, "dft_length", v, 1, &cnt, err))) return st;
        if (cnt != 1 || v[0] < 1 || v[0] > ((int64_t)1 << 40)) NFAIL("dft_length must be one positive integer");
        shape[a] = v[0];
    }
    if (ox_attr_int(n, "onesided", 0)) shape[a] = shape[a] / 2 + 1;
    shape[x->rank - 1] = 2;
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}

/* A scalar integer input i (a constant, or bound with --value). */
static rotor_status scalar_int(ox_model *m, ox_node *n, int i, const char *what, int64_t *out, rotor_error *err) {
    int64_t v[1];
    int cnt;
    rotor_status st = ox_const_ints(m, n, i, what, v, 1, &cnt, err);
    if (st) return st;
    if (cnt != 1) NFAIL("%s must be one integer", what);
    *out = v[0];
    return ROTOR_OK;
}

/* HannWindow, HammingWindow, BlackmanWindow: [size], output_datatype
 * (default float). */
rotor_status ox_infer_window(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    int64_t size;
    if ((st = scalar_int(m, n, 0, "size", &size, err))) return st;
    if (size < 1 || size > ((int64_t)1 << 40)) NFAIL("size %lld is out of range", (long long)size);
    return ox_set_out(m, n, 0, (int)ox_attr_int(n, "output_datatype", T_FLOAT), 1, &size, err);
}

/* MelWeightMatrix (num_mel_bins, dft_length, sample_rate, lower, upper):
 * [dft_length / 2 + 1, num_mel_bins], output_datatype (default float). */
rotor_status ox_infer_melweight(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 5, err))) return st;
    int64_t bins, dft;
    if ((st = scalar_int(m, n, 0, "num_mel_bins", &bins, err)) || (st = scalar_int(m, n, 1, "dft_length", &dft, err)))
        return st;
    if (bins < 1 || dft < 1 || bins > ((int64_t)1 << 30) || dft > ((int64_t)1 << 30))
        NFAIL("num_mel_bins %lld and dft_length %lld must be positive", (long long)bins, (long long)dft);
    int64_t shape[2] = {dft / 2 + 1, bins};
    return ox_set_out(m, n, 0, (int)ox_attr_int(n, "output_datatype", T_FLOAT), 2, shape, err);
}

/* STFT (signal [batch, length, 1|2], frame_step, window [L]?, frame_length?):
 * [batch, frames, bins, 2], frames = (length - L) / frame_step + 1, bins =
 * L / 2 + 1 when onesided (the default), else L. */
rotor_status ox_infer_stft(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0), *w = ox_in(m, n, 2);
    if (x->rank != 3 || (x->shape[2] != 1 && x->shape[2] != 2))
        NFAIL("signal '%s' must be [batch, length, 1 or 2]", x->name);
    int64_t step, len = -1;
    if ((st = scalar_int(m, n, 1, "frame_step", &step, err))) return st;
    if (n->nin > 3 && n->in[3] >= 0 && (st = scalar_int(m, n, 3, "frame_length", &len, err))) return st;
    if (len < 0 && w) {
        if (w->rank != 1) NFAIL("window '%s' must be one-dimensional", w->name);
        len = w->shape[0];
    }
    if (len < 1 || len > x->shape[1] || step < 1)
        NFAIL("frame length %lld and step %lld do not fit a signal of %lld", (long long)len, (long long)step,
              (long long)x->shape[1]);
    int64_t shape[4] = {x->shape[0], (x->shape[1] - len) / step + 1, ox_attr_int(n, "onesided", 1) ? len / 2 + 1 : len,
                        2};
    return ox_set_out(m, n, 0, x->onnx_type, 4, shape, err);
}

/* LSTM, GRU, RNN: X [S, B, I] (layout 1: [B, S, I]), W [D, G H, I] ->
 * Y [S, D, B, H] (layout 1: [B, S, D, H]), Y_h and Y_c [D, B, H] (layout
 * 1: [B, D, H]); G = 4, 3, 1; D = 2 when bidirectional. */
rotor_status ox_infer_recurrent(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 3, err))) return st;
    const char *op = n->p->op_type;
    int gates = !strcmp(op, "LSTM") ? 4 : !strcmp(op, "GRU") ? 3 : 1;
    ox_val *x = ox_in(m, n, 0), *w = ox_in(m, n, 1), *r = ox_in(m, n, 2);
    bool bf = ox_attr_int(n, "layout", 0) != 0;
    const Onnx__AttributeProto *dir = ox_attr(n, "direction");
    int64_t D = dir && dir->has_s && dir->s.len == 13 && !memcmp(dir->s.data, "bidirectional", 13) ? 2 : 1;
    if (x->rank != 3 || w->rank != 3 || r->rank != 3)
        NFAIL("X, W and R must have rank 3 (they have %d, %d, %d)", x->rank, w->rank, r->rank);
    int64_t H = ox_attr_int(n, "hidden_size", w->shape[1] / gates);
    if (w->shape[0] != D || w->shape[1] != gates * H || w->shape[2] != x->shape[2] || r->shape[0] != D ||
        r->shape[1] != gates * H || r->shape[2] != H)
        NFAIL("W [%lld, %lld, %lld] and R [%lld, %lld, %lld] do not fit %lld direction(s), %d gates of hidden size "
              "%lld and input size %lld",
              (long long)w->shape[0], (long long)w->shape[1], (long long)w->shape[2], (long long)r->shape[0],
              (long long)r->shape[1], (long long)r->shape[2], (long long)D, gates, (long long)H,
              (long long)x->shape[2]);
    int64_t S = x->shape[bf ? 1 : 0], B = x->shape[bf ? 0 : 1];
    int64_t y[4] = {bf ? B : S, bf ? S : D, bf ? D : B, H}, yh[3] = {bf ? B : D, bf ? D : B, H};
    if ((st = ox_set_out(m, n, 0, x->onnx_type, 4, y, err))) return st;
    for (int i = 1; i < n->nout && i < (gates == 4 ? 3 : 2); i++)
        if ((st = ox_set_out(m, n, i, x->onnx_type, 3, yh, err))) return st;
    return ROTOR_OK;
}

/* TfIdfVectorizer: X [C] or [N, C] -> float [M] or [N, M], M = the largest
 * of ngram_indexes + 1 (the output's width depends on attributes only). */
rotor_status ox_infer_tfidf(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = ox_in(m, n, 0);
    if (x->rank != 1 && x->rank != 2) NFAIL("input '%s' has rank %d; TfIdfVectorizer takes [C] or [N, C]", x->name, x->rank);
    int cnt;
    const int64_t *ix = ox_attr_ints(n, "ngram_indexes", &cnt);
    if (!ix || cnt < 1) NFAIL("attribute ngram_indexes is missing");
    int64_t width = 0;
    for (int i = 0; i < cnt; i++) {
        if (ix[i] < 0 || ix[i] >= ((int64_t)1 << 40)) NFAIL("ngram_indexes[%d] = %lld is out of range", i, (long long)ix[i]);
        if (ix[i] + 1 > width) width = ix[i] + 1;
    }
    int64_t shape[2] = {x->shape[0], width};
    return x->rank == 1 ? ox_set_out(m, n, 0, T_FLOAT, 1, &width, err) : ox_set_out(m, n, 0, T_FLOAT, 2, shape, err);
}

/* Compress (input, condition) with a known condition (a constant, or bound
 * with --value): the selected slices along axis, or of the flattened
 * input; the output's extent is the number of true conditions. */
rotor_status ox_infer_compress(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    ox_val *x = ox_in(m, n, 0), *cond = ox_in(m, n, 1);
    if (cond->kind != OX_CONST || !cond->has_data) {
        const char *src = ox_source_input(m, cond);
        if (src)
            NFAIL("condition '%s' decides the output's shape and comes from graph input '%s' (give it with --value "
                  "%s=...)", cond->name, src, src);
        NFAIL("condition '%s' is computed at run time; the output's shape depends on it", cond->name);
    }
    int64_t kept = 0;
    for (int64_t k = 0; k < cond->elems; k++) kept += ox_get(cond, k) != 0;
    const Onnx__AttributeProto *a = ox_attr(n, "axis");
    int64_t shape[OX_MAX_RANK];
    if (!a) {
        if (cond->elems > x->elems) NFAIL("condition has %lld entries for %lld elements", (long long)cond->elems,
                                          (long long)x->elems);
        return ox_set_out(m, n, 0, x->onnx_type, 1, &kept, err);
    }
    int axis;
    if (!ox_norm_axis(a->i, x->rank, &axis)) NFAIL("axis %lld is out of range for rank %d", (long long)a->i, x->rank);
    if (cond->elems > x->shape[axis])
        NFAIL("condition has %lld entries for an axis of %lld", (long long)cond->elems, (long long)x->shape[axis]);
    for (int d = 0; d < x->rank; d++) shape[d] = d == axis ? kept : x->shape[d];
    return ox_set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}
