/* onnxshape.c — shape inference for every node, in sorted order
 * (docs/onnx.md): rotor infers shapes itself rather than read value_info,
 * which exports often leave out or symbolic.  The operator's rule is found
 * in one table (infer_table) and lives with its family: onnxelem.c
 * (element-wise, constants, reductions), onnxnn.c (contractions,
 * convolution, pooling, normalisation), onnxlayout.c (reshaping, slicing,
 * gathering and kin).  The helpers every rule uses are here. */
#include "onnxir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ox_val *ox_in(ox_model *m, const ox_node *n, int i) {
    return i < n->nin && n->in[i] >= 0 ? &m->vals[n->in[i]] : NULL;
}

ox_val *ox_out(ox_model *m, const ox_node *n, int i) {
    return i < n->nout && n->out[i] >= 0 ? &m->vals[n->out[i]] : NULL;
}

/* Sets output i's type and shape (no-op for an omitted output). */
rotor_status ox_set_out(ox_model *m, ox_node *n, int i, int type, int rank, const int64_t *shape,
                            rotor_error *err) {
    ox_val *o = ox_out(m, n, i);
    if (!o) return ROTOR_OK;
    if (rank > OX_MAX_RANK) NFAIL("output '%s' would have rank %d; rotor handles at most %d", o->name, rank,
                                  OX_MAX_RANK);
    if (!ox_map_dtype(type, &o->dtype)) NFAIL("output '%s' has data type %s, which rotor does not handle", o->name,
                                           ox_type_name(type));
    o->onnx_type = type;
    o->rank = rank;
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0) NFAIL("output '%s' would have negative dimension %lld", o->name, (long long)shape[d]);
        o->shape[d] = shape[d];
    }
    if (!ox_shape_elems(rank, o->shape, &o->elems)) NFAIL("output '%s': element count overflows 64 bits", o->name);
    int64_t b;
    if (!rotor_mul_i64(o->elems, rotor_dtype_bytes(o->dtype), &b))
        NFAIL("output '%s': byte count overflows 64 bits", o->name);
    return ROTOR_OK;
}

rotor_status ox_same_as(ox_model *m, ox_node *n, int i, const ox_val *x, rotor_error *err) {
    return ox_set_out(m, n, i, x->onnx_type, x->rank, x->shape, err);
}

/* Input i must be present. */
rotor_status ox_need(ox_model *m, ox_node *n, int count, rotor_error *err) {
    for (int i = 0; i < count; i++)
        if (!ox_in(m, n, i)) NFAIL("input %d is missing (the operator needs %d)", i, count);
    return ROTOR_OK;
}

/* Normalises axis a for rank r ([-r, r-1] -> [0, r-1]). */
bool ox_norm_axis(int64_t a, int r, int *out) {
    if (a < -r || a >= (r ? r : 1)) return false;
    *out = (int)(a < 0 ? a + r : a);
    return true;
}

/* The first graph input (not an initializer) value x is computed from,
 * searching producers depth first, or NULL: it names what --value binds
 * when a shape-deciding value is computed at run time. */
const char *ox_source_input(const ox_model *m, const ox_val *x) {
    int stack[64], sp = 0;
    stack[sp++] = (int)(x - m->vals);
    for (int steps = 0; sp > 0 && steps < 4096; steps++) {
        const ox_val *v = &m->vals[stack[--sp]];
        if (v->kind == OX_INPUT) return v->name;
        if (v->producer < 0) continue;
        const ox_node *n = &m->nodes[v->producer];
        for (int k = n->nin - 1; k >= 0 && sp < 64; k--)
            if (n->in[k] >= 0 && m->vals[n->in[k]].kind != OX_CONST) stack[sp++] = n->in[k];
    }
    return NULL;
}

/* Input i as a list of integers: it must be a constant with data. */
rotor_status ox_const_ints(ox_model *m, const ox_node *n, int i, const char *what, int64_t *out, int cap,
                               int *count, rotor_error *err) {
    ox_val *x = ox_in(m, n, i);
    if (!x) NFAIL("input %d (%s) is missing", i, what);
    if (x->elems == 0) { /* an empty list needs no data */
        *count = 0;
        return ROTOR_OK;
    }
    if (x->kind == OX_INPUT)
        NFAIL("%s '%s' is a graph input; rotor needs its value to know the shapes (give it with --value %s=...)",
              what, x->name, x->name);
    const char *src = x->kind != OX_CONST ? ox_source_input(m, x) : NULL;
    if (src)
        NFAIL("%s '%s' is computed at run time from graph input '%s'; rotor needs it constant to know the shapes "
              "(give it with --value %s=...)", what, x->name, src, src);
    if (x->kind != OX_CONST || !x->has_data)
        NFAIL("%s '%s' is computed at run time; rotor needs it constant to know the shapes", what, x->name);
    if (x->elems > cap) NFAIL("%s '%s' has %lld entries; at most %d make sense here", what, x->name,
                              (long long)x->elems, cap);
    for (int64_t k = 0; k < x->elems; k++) out[k] = ox_get_i(x, k);
    *count = (int)x->elems;
    return ROTOR_OK;
}

/* Multidirectional (numpy) broadcast of the inputs' shapes. */
rotor_status ox_broadcast_shape(ox_model *m, ox_node *n, int first, int count, int *rank, int64_t *shape,
                                    rotor_error *err) {
    int r = 0;
    for (int i = first; i < first + count; i++) {
        ox_val *x = ox_in(m, n, i);
        if (x && x->rank > r) r = x->rank;
    }
    for (int d = 0; d < r; d++) shape[d] = 1;
    for (int i = first; i < first + count; i++) {
        ox_val *x = ox_in(m, n, i);
        if (!x) continue;
        for (int d = 0; d < x->rank; d++) {
            int od = r - x->rank + d;
            int64_t e = x->shape[d];
            if (e == shape[od] || e == 1) continue;
            if (shape[od] == 1) shape[od] = e;
            else NFAIL("inputs do not broadcast: '%s' has extent %lld where another has %lld", x->name,
                       (long long)e, (long long)shape[od]);
        }
    }
    *rank = r;
    return ROTOR_OK;
}

/* Offset in x of the output point idx (rank r) under broadcasting. */
int64_t ox_bcast_offset(const ox_val *x, int r, const int64_t *idx) {
    int64_t off = 0;
    for (int d = 0; d < x->rank; d++) {
        int od = r - x->rank + d;
        off = off * x->shape[d] + (x->shape[d] == 1 ? 0 : idx[od]);
    }
    return off;
}

void ox_idx_next(int r, const int64_t *shape, int64_t *idx) {
    for (int d = r - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) return;
        idx[d] = 0;
    }
}

/* ---- dispatch ------------------------------------------------------------------------ */

typedef rotor_status (*infer_fn)(ox_model *, ox_node *, rotor_error *);

static const struct {
    const char *op;
    infer_fn fn;
} infer_table[] = {
    {"Abs", ox_infer_unary}, {"Acos", ox_infer_unary}, {"Acosh", ox_infer_unary}, {"Asin", ox_infer_unary},
    {"Asinh", ox_infer_unary}, {"Atan", ox_infer_unary}, {"Atanh", ox_infer_unary}, {"Ceil", ox_infer_unary},
    {"Cos", ox_infer_unary}, {"Cosh", ox_infer_unary}, {"Erf", ox_infer_unary}, {"Exp", ox_infer_unary},
    {"Floor", ox_infer_unary}, {"Log", ox_infer_unary}, {"Neg", ox_infer_unary}, {"Reciprocal", ox_infer_unary},
    {"Relu", ox_infer_unary}, {"Round", ox_infer_unary}, {"Sigmoid", ox_infer_unary}, {"Sign", ox_infer_unary},
    {"Sin", ox_infer_unary}, {"Sinh", ox_infer_unary}, {"Sqrt", ox_infer_unary}, {"Tan", ox_infer_unary},
    {"Tanh", ox_infer_unary}, {"Not", ox_infer_unary}, {"IsNaN", ox_infer_unary}, {"IsInf", ox_infer_unary},
    {"Softplus", ox_infer_unary}, {"Softsign", ox_infer_unary}, {"Elu", ox_infer_unary}, {"Selu", ox_infer_unary},
    {"LeakyRelu", ox_infer_unary}, {"ThresholdedRelu", ox_infer_unary}, {"HardSigmoid", ox_infer_unary},
    {"HardSwish", ox_infer_unary}, {"Mish", ox_infer_unary}, {"Celu", ox_infer_unary}, {"Gelu", ox_infer_unary},
    {"Shrink", ox_infer_unary}, {"BitwiseNot", ox_infer_unary}, {"Softmax", ox_infer_unary},
    {"LogSoftmax", ox_infer_unary}, {"Hardmax", ox_infer_unary}, {"LRN", ox_infer_unary},
    {"InstanceNormalization", ox_infer_unary}, {"MeanVarianceNormalization", ox_infer_unary},
    {"LpNormalization", ox_infer_unary}, {"CumSum", ox_infer_unary}, {"Trilu", ox_infer_unary},
    {"Clip", ox_infer_unary}, {"Dropout", ox_infer_unary}, {"Identity", ox_infer_unary}, {"Cast", ox_infer_unary},
    {"CastLike", ox_infer_unary}, {"RandomNormalLike", ox_infer_unary}, {"RandomUniformLike", ox_infer_unary},
    {"Bernoulli", ox_infer_unary}, {"ScatterElements", ox_infer_unary}, {"ScatterND", ox_infer_unary},
    {"Scatter", ox_infer_unary}, {"ReverseSequence", ox_infer_unary},
    {"Add", ox_infer_nary}, {"Sub", ox_infer_nary}, {"Mul", ox_infer_nary}, {"Div", ox_infer_nary}, {"Pow", ox_infer_nary},
    {"Mod", ox_infer_nary}, {"Max", ox_infer_nary}, {"Min", ox_infer_nary}, {"Sum", ox_infer_nary}, {"Mean", ox_infer_nary},
    {"Equal", ox_infer_nary}, {"Less", ox_infer_nary}, {"Greater", ox_infer_nary}, {"LessOrEqual", ox_infer_nary},
    {"GreaterOrEqual", ox_infer_nary}, {"And", ox_infer_nary}, {"Or", ox_infer_nary}, {"Xor", ox_infer_nary},
    {"BitShift", ox_infer_nary}, {"BitwiseAnd", ox_infer_nary}, {"BitwiseOr", ox_infer_nary},
    {"BitwiseXor", ox_infer_nary}, {"PRelu", ox_infer_nary}, {"Where", ox_infer_nary},
    {"Constant", ox_infer_constant}, {"ConstantOfShape", ox_infer_constant_of_shape}, {"Shape", ox_infer_shape_op},
    {"Size", ox_infer_shape_op}, {"Range", ox_infer_range},
    {"MatMul", ox_infer_matmul}, {"MatMulInteger", ox_infer_matmul}, {"QLinearMatMul", ox_infer_matmul},
    {"Gemm", ox_infer_gemm}, {"Conv", ox_infer_conv}, {"ConvInteger", ox_infer_conv}, {"QLinearConv", ox_infer_conv},
    {"ConvTranspose", ox_infer_conv},
    {"MaxPool", ox_infer_pool}, {"AveragePool", ox_infer_pool}, {"LpPool", ox_infer_pool},
    {"GlobalAveragePool", ox_infer_pool}, {"GlobalMaxPool", ox_infer_pool}, {"GlobalLpPool", ox_infer_pool},
    {"BatchNormalization", ox_infer_batchnorm}, {"LayerNormalization", ox_infer_layernorm},
    {"GroupNormalization", ox_infer_unary}, {"NegativeLogLikelihoodLoss", ox_infer_loss},
    {"SoftmaxCrossEntropyLoss", ox_infer_loss}, {"GridSample", ox_infer_gridsample},
    {"Det", ox_infer_det}, {"RoiAlign", ox_infer_roialign}, {"MaxUnpool", ox_infer_maxunpool}, {"DFT", ox_infer_dft},
    {"Einsum", ox_infer_einsum}, {"TfIdfVectorizer", ox_infer_tfidf}, {"Compress", ox_infer_compress}, {"LSTM", ox_infer_recurrent}, {"GRU", ox_infer_recurrent}, {"RNN", ox_infer_recurrent}, {"HannWindow", ox_infer_window}, {"HammingWindow", ox_infer_window},
    {"BlackmanWindow", ox_infer_window}, {"MelWeightMatrix", ox_infer_melweight}, {"STFT", ox_infer_stft},
    {"ReduceSum", ox_infer_reduce}, {"ReduceMean", ox_infer_reduce}, {"ReduceMax", ox_infer_reduce},
    {"ReduceMin", ox_infer_reduce}, {"ReduceProd", ox_infer_reduce}, {"ReduceL1", ox_infer_reduce},
    {"ReduceL2", ox_infer_reduce}, {"ReduceLogSum", ox_infer_reduce}, {"ReduceLogSumExp", ox_infer_reduce},
    {"ReduceSumSquare", ox_infer_reduce}, {"ArgMax", ox_infer_reduce}, {"ArgMin", ox_infer_reduce},
    {"Reshape", ox_infer_reshape}, {"Flatten", ox_infer_flatten}, {"Squeeze", ox_infer_squeeze},
    {"Unsqueeze", ox_infer_squeeze}, {"Transpose", ox_infer_transpose}, {"Concat", ox_infer_concat},
    {"Split", ox_infer_split}, {"Slice", ox_infer_slice}, {"Gather", ox_infer_gather},
    {"GatherElements", ox_infer_gather}, {"GatherND", ox_infer_gather}, {"Expand", ox_infer_expand},
    {"Tile", ox_infer_tile}, {"Pad", ox_infer_pad}, {"Resize", ox_infer_resize}, {"Upsample", ox_infer_resize},
    {"DepthToSpace", ox_infer_depth_space}, {"SpaceToDepth", ox_infer_depth_space}, {"TopK", ox_infer_topk},
    {"OneHot", ox_infer_onehot}, {"QuantizeLinear", ox_infer_qdq}, {"DequantizeLinear", ox_infer_qdq},
    {"DynamicQuantizeLinear", ox_infer_qdq}, {"EyeLike", ox_infer_eyelike}, {"RandomNormal", ox_infer_random},
    {"RandomUniform", ox_infer_random},
};

static infer_fn find_infer(const char *op) {
    for (size_t i = 0; i < sizeof infer_table / sizeof infer_table[0]; i++)
        if (!strcmp(infer_table[i].op, op)) return infer_table[i].fn;
    return NULL;
}

/* Pass 1: infer and fold, in topological order. */
rotor_status ox_infer_all(ox_model *m, rotor_error *err) {
    for (int oi = 0; oi < m->nnodes; oi++) {
        ox_node *n = &m->nodes[m->order[oi]];
        if (n->duplicate) {
            n->folded = true;
            continue;
        }
        bool ms = !strcmp(n->domain, "com.microsoft");
        if (strcmp(n->domain, "ai.onnx") != 0 && !ms)
            return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "operators outside the default ONNX domain and "
                                "com.microsoft are not supported");
        if (!strcmp(n->p->op_type, "If") && n->nin == 1 && n->in[0] >= 0) {
            const ox_val *c = &m->vals[n->in[0]];
            const char *src = c->kind != OX_CONST ? ox_source_input(m, c) : NULL;
            if (src)
                return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "the condition '%s' comes from graph input '%s'; an "
                                    "If folds only on a condition known at import (give it with --value %s=1 or 0)",
                                    c->name, src, src);
            return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "the condition '%s' is computed at run time; an If folds "
                                "only on a condition known at import (an initializer, a Constant or a --value)",
                                c->name);
        }
        for (size_t a = 0; a < n->p->n_attribute; a++)
            if (n->p->attribute[a]->g || n->p->attribute[a]->n_graphs)
                return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "control flow (subgraph attribute '%s') is not "
                                    "supported: plans need a static graph", n->p->attribute[a]->name);
        infer_fn fn = ms ? ox_ms_infer(n->p->op_type) : find_infer(n->p->op_type);
        if (!fn) return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "operator is not supported by rotor's importer");
        for (int k = 0; k < n->nin; k++) {
            ox_val *x = ox_in(m, n, k);
            if (x && x->kind == OX_UNDEF)
                return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "input '%s' has no known shape", x->name);
        }
        rotor_status st = fn(m, n, err);
        if (st) return st;
        bool allc = true;
        for (int k = 0; k < n->nin; k++) {
            ox_val *x = ox_in(m, n, k);
            if (x && x->kind != OX_CONST) allc = false;
        }
        /* random generators are not constants even with constant inputs */
        if (!strncmp(n->p->op_type, "Random", 6) || !strcmp(n->p->op_type, "Bernoulli")) allc = false;
        bool folded = true;
        for (int k = 0; k < n->nout; k++) {
            ox_val *o = ox_out(m, n, k);
            if (!o) continue;
            if (o->kind == OX_UNDEF) o->kind = allc ? OX_CONST : OX_ACT;
            if (o->kind != OX_CONST) folded = false;
        }
        n->folded = folded;
        if (folded) m->stats.folded++;
    }
    return ROTOR_OK;
}
