/* lower.c — ONNX nodes to rotor operators (docs/onnx.md "Lowering").
 *
 * Every node that onnx.c did not fold becomes one operator, or a short chain
 * of them, with a T10 tensor expression (T10 §4.2) wherever the notation can
 * say what the node computes:
 *   MatMul, Gemm, Conv (groups, strides, pads, dilations)  contractions
 *   element-wise arithmetic and activations                 Y = f(X0, X1, ...)
 *   ReduceSum/Mean/SumSquare/L1, average pooling            Y += X ...
 *   BatchNormalization (inference)                          Y = X * S[c] + B[c]
 *   LayerNormalization (also spelled out)                   mean, variance, normalise (+ beta)
 *   Softmax, LogSoftmax                                     sum of exp, normalise
 *   Reshape, Flatten, (Un)Squeeze, Transpose, Slice, Cast, Expand  copies
 * Everything else is a vendor op, T10's fallback, costed by docs/graph.md's
 * vendor rule.  Which lowering a node takes is its registry row's (onnxops.c);
 * the lw_ functions here are that column.  Decisions where the papers are silent:
 *  - Extent-1 dimensions are left out of expressions (the graph checks element
 *    counts, which they do not change); a tensor with none left reads a unit
 *    axis u, which the output and the full-shape inputs carry too.
 *  - A scalar constant becomes a number in the expression when it is finite
 *    and not negative (the notation has no unary minus); otherwise it is a
 *    weight value like any other constant.
 *  - Gemm's and Conv's bias is a separate Add operator (grouping fuses it
 *    back); Gemm's alpha and beta scale for free and are not charged.
 *  - Graph inputs whose name contains "past" or "cache" are kv-cache values. */
#include "lowerint.h"
#include "onnxops.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Expression text is built with snprintf into fixed buffers; a text that
 * would not fit is truncated, fails to parse, and is reported with the node's
 * name, so GCC's truncation warning says nothing useful here. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define REF_MAX 160


/* ---- graph values --------------------------------------------------------------- */

static bool name_has(const char *s, const char *needle) {
    size_t n = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, n) == 0) return true;
    return false;
}

/* The graph value of ONNX value v (aliases resolved), created on first use. */
rotor_status lw_gval(lower_ctx *c, const ox_node *n, int v, int *out) {
    ox_model *m = c->m;
    v = ox_resolve(m, v);
    ox_val *x = &m->vals[v];
    if (x->gv >= 0) {
        *out = x->gv;
        return ROTOR_OK;
    }
    rotor_role role = ROTOR_ROLE_ACTIVATION;
    if (x->kind == OX_CONST) role = ROTOR_ROLE_WEIGHT;
    else if (x->kind == OX_INPUT && (name_has(x->name, "past") || name_has(x->name, "cache")))
        role = ROTOR_ROLE_KV_CACHE;
    rotor_error e2;
    rotor_status st = rotor_graph_add_value(c->g, x->name, x->dtype, x->rank, x->shape, role, &x->gv, &e2);
    if (!st && m->keep_data && x->kind == OX_CONST && x->has_data) {
        lower_ctx c2 = *c;
        c2.err = &e2;
        st = lw_set_data(&c2, x->gv, x);
    }
    if (st) {
        if (n) return ox_node_fail(m, n, c->err, st, "%s", e2.msg);
        return rotor_fail(c->err, st, "%s: %s", m->label, e2.msg);
    }
    *out = x->gv;
    return ROTOR_OK;
}

rotor_status lw_set_data(lower_ctx *c, int gv, const ox_val *x) {
    double *d = malloc(sizeof *d * (size_t)(x->elems ? x->elems : 1));
    if (!d) return rotor_nomem(c->err);
    for (int64_t k = 0; k < x->elems; k++) d[k] = ox_get(x, k);
    rotor_status st = rotor_graph_set_data(c->g, gv, d, c->err);
    free(d);
    return st;
}

/* A new activation value named base+suffix (made unique). */
rotor_status lw_new_value(lower_ctx *c, const ox_node *n, const char *base, const char *suffix, rotor_dtype dt,
                          int rank, const int64_t *shape, rotor_role role, int *out) {
    char name[256];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    for (int i = 2; rotor_graph_find_value(c->g, name) >= 0; i++)
        snprintf(name, sizeof name, "%s%s#%d", base, suffix, i);
    rotor_error e2;
    rotor_status st = rotor_graph_add_value(c->g, name, dt, rank, shape, role, out, &e2);
    if (st) return ox_node_fail(c->m, n, c->err, st, "%s", e2.msg);
    return ROTOR_OK;
}

rotor_status lw_new_val(lower_ctx *c, const ox_node *n, const char *base, const char *suffix, rotor_dtype dt,
                        int rank, const int64_t *shape, int *out) {
    return lw_new_value(c, n, base, suffix, dt, rank, shape, ROTOR_ROLE_ACTIVATION, out);
}

/* ---- expression builder ------------------------------------------------------------ */

typedef struct eb {
    char text[ROTOR_EXPR_TEXT_MAX];
    int naxes;
    char axis[ROTOR_MAX_AXES][ROTOR_NAME_MAX];
    int64_t extent[ROTOR_MAX_AXES];
    int tv[ROTOR_MAX_TENSORS];
    rotor_view view[ROTOR_MAX_TENSORS]; /* set where a tensor is not its value row-major */
    int ntensors;
    bool overflow;
} eb;

static void eb_init(eb *b) {
    memset(b, 0, sizeof *b);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) b->tv[t] = -1;
}

/* Registers an axis (idempotent); false when there are too many. */
static bool eb_axis(eb *b, const char *name, int64_t extent) {
    for (int a = 0; a < b->naxes; a++)
        if (!strcmp(b->axis[a], name)) return true;
    if (b->naxes == ROTOR_MAX_AXES) return b->overflow = true, false;
    snprintf(b->axis[b->naxes], ROTOR_NAME_MAX, "%s", name);
    b->extent[b->naxes++] = extent;
    return true;
}

static void eb_dims(const eb *b, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = '\0';
    for (int a = 0; a < b->naxes && k < cap; a++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s=%lld", a ? "," : "", b->axis[a], (long long)b->extent[a]);
}

/* "T[a,b,c]" from a list of axis names. */
static void ref_of(char *out, size_t cap, const char *tname, int nax, char names[][ROTOR_NAME_MAX]) {
    size_t k = (size_t)snprintf(out, cap, "%s[", tname);
    for (int i = 0; i < nax && k < cap; i++) k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? "," : "", names[i]);
    if (k < cap) snprintf(out + k, cap - k, "]");
}

/* The graph's reason without its "op 'NAME' (TYPE): " prefix when NAME is
 * the node's own name: the node prefix names it already (no doubled
 * prefixes in a refusal). */
static const char *graph_reason(const ox_node *n, const char *opname, const char *msg) {
    size_t k = strlen(opname);
    if (strncmp(msg, "op '", 4) || strncmp(msg + 4, opname, k) || msg[4 + k] != '\'' || strcmp(opname, n->name))
        return msg;
    const char *rest = strstr(msg + 5 + k, "): ");
    return rest ? rest + 3 : msg;
}

/* Appends one operator to the graph; errors name the node. */
static rotor_status emit(lower_ctx *c, const ox_node *n, const char *name, const char *type, const eb *b,
                         const int *inputs, int nin, const int *outputs, int nout) {
    if (b && b->overflow)
        return ox_node_fail(c->m, n, c->err, ROTOR_ERR_INPUT, "needs more than %d axes in one tensor expression",
                            ROTOR_MAX_AXES);
    char dims[512];
    if (b) eb_dims(b, dims, sizeof dims);
    rotor_op_desc d = {.name = name, .type = type, .expr = b ? b->text : NULL, .dims = b ? dims : NULL,
                       .inputs = inputs, .ninputs = nin, .outputs = outputs, .noutputs = nout,
                       .view = b ? b->view : NULL};
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = b ? b->tv[t] : -1;
    rotor_error e2;
    rotor_status st = rotor_graph_add_op(c->g, &d, NULL, &e2);
    if (st) return ox_node_fail(c->m, n, c->err, st, "%s", graph_reason(n, name, e2.msg));
    return ROTOR_OK;
}

rotor_status lw_op(lower_ctx *c, const ox_node *n, const char *name, const char *type, const char *text,
                   const char *dims, const int *tv, int ntv, const int *ins, int nin, int out) {
    rotor_op_desc d = {.name = name, .type = type, .expr = text, .dims = dims, .inputs = ins, .ninputs = nin,
                       .outputs = &out, .noutputs = 1};
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = t < ntv ? tv[t] : -1;
    rotor_error e2;
    rotor_status st = rotor_graph_add_op(c->g, &d, NULL, &e2);
    if (st) return ox_node_fail(c->m, n, c->err, st, "%s", graph_reason(n, name, e2.msg));
    return ROTOR_OK;
}

rotor_status lw_expr(lower_ctx *c, const ox_node *n, const char *suffix, const char *type, const char *text,
                     const char *dims, const int *tv, int ntv, int out) {
    char name[256];
    snprintf(name, sizeof name, "%s%s", n->name, suffix);
    int ins[ROTOR_MAX_TENSORS], nin = 0;
    for (int t = 1; t < ntv && t < ROTOR_MAX_TENSORS; t++) {
        bool seen = false;
        for (int k = 0; k < nin; k++) seen |= ins[k] == tv[t];
        if (!seen) ins[nin++] = tv[t];
    }
    return lw_op(c, n, name, type, text, dims, tv, ntv, ins, nin, out);
}

/* ---- element-wise ---------------------------------------------------------------------- */

/* An operand of an element-wise expression: an ONNX value, with its
 * dimensions mapped onto the output's (map[d] = output dimension). */
typedef struct operand {
    int v;                       /* ONNX value */
    int map[OX_MAX_RANK];
    bool mapped;                 /* map given; otherwise right-aligned */
} operand;

/* The grammar's numbers are unsigned: a negative one held constant in
 * training (ox_val.held) is written (0-v), one more vector FLOP an element;
 * for inference it stays a one-element value, as it always has (written
 * the same way, every expression with a negative constant would cost one
 * FLOP more than the cost model has priced it). */
static bool scalar_literal(const ox_val *x, char *buf, size_t cap) {
    if (x->kind != OX_CONST || !x->has_data || x->elems != 1) return false;
    double v = ox_get(x, 0);
    if (!isfinite(v) || (v < 0 && !x->held)) return false;
    int k = v < 0 ? snprintf(buf, cap, "(0-%.9g)", -v) : snprintf(buf, cap, "%.9g", v);
    return k > 0 && (size_t)k < cap;
}

/* A scalar constant written into an expression as a number; a parameter
 * (ox_val.param) is not: it stays a value, so that it is trained. */
static bool literal_of(const ox_val *x, char *buf, size_t cap) {
    return !x->param && scalar_literal(x, buf, cap);
}


/* Builds refs[i] for each operand of an element-wise expression whose output
 * is value o; registers axes and expression tensors (Y is tensor 0) and the
 * graph inputs (ins).  Output axes are "d<k>" for output dimension k. */
static rotor_status ew_operands(lower_ctx *c, const ox_node *n, eb *b, const ox_val *o, const operand *ops,
                                int nops, char refs[][REF_MAX], int *ins, int *nins, char *yref) {
    ox_model *m = c->m;
    char names[OX_MAX_RANK + 1][ROTOR_NAME_MAX];
    bool unit = false;
    int tensor_of[8];
    char tnames[8][8];
    int ntens = 0;
    /* which operand dims carry an axis */
    for (int i = 0; i < nops; i++) {
        const ox_val *x = &m->vals[ox_resolve(m, ops[i].v)];
        tensor_of[i] = -1;
        if (ox_is_setting(n, i) ? scalar_literal(x, refs[i], REF_MAX) : literal_of(x, refs[i], REF_MAX)) continue;
        int nax = 0;
        for (int d = 0; d < x->rank; d++) {
            int od = ops[i].mapped ? ops[i].map[d] : o->rank - x->rank + d;
            if (x->shape[d] > 1 && od >= 0 && od < o->rank && o->shape[od] == x->shape[d]) nax++;
        }
        if (nax == 0) unit = true;
        tensor_of[i] = ntens++;
    }
    if (ntens + 1 > ROTOR_MAX_TENSORS)
        return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "has %d tensor operands; a tensor expression takes at most %d",
                            ntens, ROTOR_MAX_TENSORS - 1);
    int ny = 0;
    bool outer_has = false;
    for (int d = 0; d < o->rank; d++)
        if (o->shape[d] > 1) outer_has = true;
    if (!outer_has) unit = true;
    if (unit) {
        eb_axis(b, "u", 1);
        snprintf(names[ny++], ROTOR_NAME_MAX, "u");
    }
    for (int d = 0; d < o->rank; d++)
        if (o->shape[d] > 1) {
            snprintf(names[ny], ROTOR_NAME_MAX, "d%d", d);
            eb_axis(b, names[ny], o->shape[d]);
            ny++;
        }
    ref_of(yref, REF_MAX, "Y", ny, names);
    /* full-shape operands carry u too, so that u is read by an input */
    bool u_read = false;
    for (int i = 0; i < nops; i++) {
        if (tensor_of[i] < 0) continue;
        const ox_val *x = &m->vals[ox_resolve(m, ops[i].v)];
        char xn[OX_MAX_RANK + 1][ROTOR_NAME_MAX];
        int nax = 0;
        for (int d = 0; d < x->rank; d++) {
            int od = ops[i].mapped ? ops[i].map[d] : o->rank - x->rank + d;
            if (x->shape[d] > 1 && od >= 0 && od < o->rank && o->shape[od] == x->shape[d])
                snprintf(xn[nax++], ROTOR_NAME_MAX, "d%d", od);
        }
        bool full = nax == ny - (unit ? 1 : 0);
        if (unit && (nax == 0 || full)) {
            memmove(xn[1], xn[0], sizeof xn[0] * (size_t)nax);
            snprintf(xn[0], ROTOR_NAME_MAX, "u");
            nax++;
            u_read = true;
        }
        snprintf(tnames[tensor_of[i]], sizeof tnames[0], "X%d", tensor_of[i]);
        ref_of(refs[i], REF_MAX, tnames[tensor_of[i]], nax, xn);
        int gv;
        rotor_status st = lw_gval(c, n, ops[i].v, &gv);
        if (st) return st;
        b->tv[1 + tensor_of[i]] = gv;
        ins[(*nins)++] = gv;
    }
    if (unit && !u_read)
        return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "has no tensor operand to carry its unit axis");
    b->ntensors = 1 + ntens;
    return ROTOR_OK;
}

/* Activations with ONNX parameters: the attributes (or their defaults)
 * become literal arguments after x, which the evaluator reads. */
static bool ew_param(const char *op, char refs[][REF_MAX], const ox_node *n, char *out, size_t cap) {
    static const struct {
        const char *op, *fn, *attr[2];
        double dflt[2];
    } param[] = {{"Elu", "elu", {"alpha", NULL}, {1.0, 0}},
                 {"Selu", "selu", {"alpha", "gamma"}, {1.67326319217681884765625, 1.05070102214813232421875}},
                 {"LeakyRelu", "leakyrelu", {"alpha", NULL}, {0.01, 0}},
                 {"ThresholdedRelu", "thresholdedrelu", {"alpha", NULL}, {1.0, 0}},
                 {"HardSigmoid", "hardsigmoid", {"alpha", "beta"}, {0.2, 0.5}},
                 {"Celu", "celu", {"alpha", NULL}, {1.0, 0}},
                 {"Shrink", "shrink", {"bias", "lambd"}, {0.0, 0.5}}};
    for (size_t i = 0; i < sizeof param / sizeof param[0]; i++)
        if (!strcmp(op, param[i].op)) {
            size_t k = (size_t)snprintf(out, cap, "%s(%s", param[i].fn, refs[0]);
            for (int j = 0; j < 2 && param[i].attr[j] && k < cap; j++) {
                double v = ox_attr_float(n, param[i].attr[j], param[i].dflt[j]);
                if (v < 0) k += (size_t)snprintf(out + k, cap - k, ", neg(%.9g)", -v);
                else k += (size_t)snprintf(out + k, cap - k, ", %.9g", v);
            }
            if (k < cap) snprintf(out + k, cap - k, ")");
            return true;
        }
    return false;
}

/* One-argument functions of the notation, f(x). */
static bool ew_unary(const char *op, char refs[][REF_MAX], const ox_node *n, char *out, size_t cap) {
    static const struct {
        const char *op, *fn;
    } unary[] = {{"Relu", "relu"}, {"Gelu", "gelu"}, {"Erf", "erf"}, {"Tanh", "tanh"}, {"Sigmoid", "sigmoid"},
                 {"Exp", "exp"}, {"Log", "log"}, {"Sqrt", "sqrt"}, {"Neg", "neg"}, {"Abs", "abs"},
                 {"Reciprocal", "recip"}, {"Floor", "floor"}, {"Ceil", "ceil"}, {"Round", "round"},
                 {"Sign", "sign"}, {"Sin", "sin"}, {"Cos", "cos"}, {"Tan", "tan"}, {"Asin", "asin"},
                 {"Acos", "acos"}, {"Atan", "atan"}, {"Sinh", "sinh"}, {"Cosh", "cosh"}, {"Asinh", "asinh"},
                 {"Acosh", "acosh"}, {"Atanh", "atanh"}, {"Not", "not"}, {"IsNaN", "isnan"},
                 {"IsInf", "isinf"}, {"Softplus", "softplus"}, {"Softsign", "softsign"}, {"Elu", "elu"},
                 {"Selu", "selu"}, {"LeakyRelu", "leakyrelu"}, {"ThresholdedRelu", "thresholdedrelu"},
                 {"HardSigmoid", "hardsigmoid"}, {"HardSwish", "hardswish"}, {"Mish", "mish"},
                 {"Celu", "celu"}, {"Shrink", "shrink"}, {"BitwiseNot", "bitwisenot"}};
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++)
        if (!strcmp(op, unary[i].op)) {
            if (!strcmp(op, "Gelu") && ox_attr(n, "approximate")) {
                const Onnx__AttributeProto *a = ox_attr(n, "approximate");
                if (a->has_s && a->s.len == 4 && !memcmp(a->s.data, "tanh", 4)) {
                    snprintf(out, cap, "gelu_tanh(%s)", refs[0]);
                    return true;
                }
            }
            snprintf(out, cap, "%s(%s)", unary[i].fn, refs[0]);
            return true;
        }
    return false;
}

/* Sum, Mean, Max and Min of any number of operands. */
static void ew_variadic(const char *op, int nops, char refs[][REF_MAX], char *out, size_t cap) {
    size_t k = 0;
    bool sum = op[1] == 'u' || op[1] == 'e';
    if (!strcmp(op, "Mean")) k += (size_t)snprintf(out + k, cap - k, "(");
    if (!sum)
        for (int i = 1; i < nops; i++) k += (size_t)snprintf(out + k, cap - k, "%s(", op[1] == 'a' ? "max" : "min");
    for (int i = 0; i < nops && k < cap; i++) {
        if (sum) k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? " + " : "", refs[i]);
        else k += (size_t)snprintf(out + k, cap - k, i ? ", %s)" : "%s", refs[i]);
    }
    if (!strcmp(op, "Mean") && k < cap) snprintf(out + k, cap - k, ") / %d", nops);
}

/* Clip: its bounds are attributes (opset < 11) or optional inputs. */
static void ew_clip(int nops, char refs[][REF_MAX], const ox_node *n, char *out, size_t cap) {
    snprintf(out, cap, "%s", refs[0]);
    char tmp[REF_MAX * 4];
    /* opset < 11: min and max are attributes */
    static const char *const bound[2] = {"min", "max"};
    for (int i = 0; i < 2; i++) {
        const Onnx__AttributeProto *a = ox_attr(n, bound[i]);
        if (!a || !a->has_f) continue;
        double v = a->f;
        char lit[64];
        if (v < 0) snprintf(lit, sizeof lit, "neg(%.9g)", -v);
        else snprintf(lit, sizeof lit, "%.9g", v);
        snprintf(tmp, sizeof tmp, "%s(%s, %s)", i == 0 ? "max" : "min", out, lit);
        snprintf(out, cap, "%s", tmp);
    }
    /* refs holds the inputs present: an omitted min shifts max to refs[1] */
    for (int i = 1, r = 1; i < 3 && i < n->nin && r < nops; i++) {
        if (n->in[i] < 0) continue;
        snprintf(tmp, sizeof tmp, "%s(%s, %s)", i == 1 ? "max" : "min", out, refs[r++]);
        snprintf(out, cap, "%s", tmp);
    }
}

/* Functions of the notation over every operand, f(x0, x1, ...). */
static bool ew_named(const char *op, int nops, char refs[][REF_MAX], char *out, size_t cap) {
    static const struct {
        const char *op, *fn;
    } named[] = {{"Mod", "mod"}, {"Equal", "equal"}, {"Less", "less"}, {"Greater", "greater"},
                 {"LessOrEqual", "less_equal"}, {"GreaterOrEqual", "greater_equal"}, {"And", "and"},
                 {"Or", "or"}, {"Xor", "xor"}, {"BitShift", "bitshift"}, {"BitwiseAnd", "bitwise_and"},
                 {"BitwiseOr", "bitwise_or"}, {"BitwiseXor", "bitwise_xor"}, {"PRelu", "prelu"},
                 {"Where", "where"}};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (!strcmp(op, named[i].op)) {
            size_t k = (size_t)snprintf(out, cap, "%s(", named[i].fn);
            for (int j = 0; j < nops && k < cap; j++) k += (size_t)snprintf(out + k, cap - k, "%s%s", j ? ", " : "", refs[j]);
            if (k < cap) snprintf(out + k, cap - k, ")");
            return true;
        }
    return false;
}


/* The formula of an element-wise ONNX op over its operand references; false
 * when the op is not element-wise in rotor's sense. */
static bool ew_formula(const char *op, int nops, char refs[][REF_MAX], const ox_node *n, const ox_model *m,
                       char *out, size_t cap) {
    if (ew_param(op, refs, n, out, cap) || ew_unary(op, refs, n, out, cap)) return true;
    /* onnxruntime's fused activations (com.microsoft): FastGelu is the tanh
     * approximation; both take an optional bias, added first */
    if (!strcmp(op, "BiasGelu") || !strcmp(op, "FastGelu")) {
        const char *fn = op[0] == 'F' ? "gelu_tanh" : "gelu";
        if (nops == 2) snprintf(out, cap, "%s(%s + %s)", fn, refs[0], refs[1]);
        else snprintf(out, cap, "%s(%s)", fn, refs[0]);
        return true;
    }
    if (!strcmp(op, "Cast") || !strcmp(op, "CastLike") || !strcmp(op, "Identity") || !strcmp(op, "Expand") ||
        !strcmp(op, "Dropout")) {
        snprintf(out, cap, "%s", refs[0]);
        return true;
    }
    static const struct {
        const char *op, *sym;
    } binary[] = {{"Add", "+"}, {"Sub", "-"}, {"Mul", "*"}, {"Div", "/"}};
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
        if (!strcmp(op, binary[i].op)) {
            snprintf(out, cap, "%s %s %s", refs[0], binary[i].sym, refs[1]);
            return true;
        }
    if (!strcmp(op, "Pow")) {
        const ox_val *e = &m->vals[ox_resolve(m, n->in[1])];
        double ev = e->kind == OX_CONST && e->has_data && e->elems == 1 ? ox_get(e, 0) : NAN; /* a setting */
        if (ev == 2) snprintf(out, cap, "square(%s)", refs[0]);
        else if (ev == 0.5) snprintf(out, cap, "sqrt(%s)", refs[0]);
        else if (ev == 1) snprintf(out, cap, "%s", refs[0]);
        else snprintf(out, cap, "pow(%s, %s)", refs[0], refs[1]);
        return true;
    }
    if (!strcmp(op, "Sum") || !strcmp(op, "Mean") || !strcmp(op, "Max") || !strcmp(op, "Min")) {
        ew_variadic(op, nops, refs, out, cap);
        return true;
    }
    if (!strcmp(op, "Clip")) {
        ew_clip(nops, refs, n, out, cap);
        return true;
    }
    return ew_named(op, nops, refs, out, cap);
}

/* One element-wise operator: output value ov (ONNX), operands ops. */
static rotor_status lower_ew(lower_ctx *c, const ox_node *n, const char *name, const char *type, int ov,
                             const operand *ops, int nops, const char *formula_override, const int *extra,
                             int nextra) {
    ox_model *m = c->m;
    eb b;
    eb_init(&b);
    char refs[8][REF_MAX], yref[REF_MAX], rhs[ROTOR_EXPR_TEXT_MAX];
    int ins[16], nins = 0;
    if (nops > 8) return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "too many operands");
    const ox_val *o = &m->vals[ov];
    rotor_status st = ew_operands(c, n, &b, o, ops, nops, refs, ins, &nins, yref);
    if (st) return st;
    if (formula_override) {
        /* "%0", "%1" in the override name operands */
        size_t k = 0;
        for (const char *p = formula_override; *p && k + 1 < sizeof rhs; p++) {
            if (p[0] == '%' && isdigit((unsigned char)p[1])) {
                k += (size_t)snprintf(rhs + k, sizeof rhs - k, "%s", refs[p[1] - '0']);
                p++;
            } else {
                rhs[k++] = *p;
                rhs[k] = '\0';
            }
        }
    } else if (!ew_formula(n->p->op_type, nops, refs, n, m, rhs, sizeof rhs)) {
        return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "internal: no element-wise formula");
    }
    snprintf(b.text, sizeof b.text, "%s = %s", yref, rhs);
    for (int i = 0; i < nextra && nins < 16; i++) {
        int gv;
        if ((st = lw_gval(c, n, extra[i], &gv))) return st;
        ins[nins++] = gv;
    }
    int gy;
    if ((st = lw_gval(c, n, ov, &gy))) return st;
    b.tv[0] = gy;
    return emit(c, n, name, type, &b, ins, nins, &gy, 1);
}

/* ---- vendor ops ------------------------------------------------------------------------------ */

/* The node's attributes, the constant parameter inputs lw_vendor drops
 * ("@K") and the ONNX position of each graph input ("@in"), so that a
 * reference kernel can run the op (graph.h, rotor_attr). */
static rotor_status vendor_attrs(lower_ctx *c, const ox_node *n, int op) {
    ox_model *m = c->m;
    rotor_status st = ROTOR_OK;
    for (size_t i = 0; i < n->p->n_attribute && !st; i++) {
        const Onnx__AttributeProto *a = n->p->attribute[i];
        if (!a->name) continue;
        switch (a->type) {
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
            st = rotor_graph_add_attr(c->g, op, a->name, &a->i, 1, NULL, 0, NULL, c->err);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
            st = rotor_graph_add_attr(c->g, op, a->name, a->ints, (int)a->n_ints, NULL, 0, NULL, c->err);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: {
            double f = a->f;
            st = rotor_graph_add_attr(c->g, op, a->name, NULL, 0, &f, 1, NULL, c->err);
            break;
        }
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
            double *f = malloc(sizeof *f * (a->n_floats ? a->n_floats : 1));
            if (!f) return rotor_nomem(c->err);
            for (size_t k = 0; k < a->n_floats; k++) f[k] = a->floats[k];
            st = rotor_graph_add_attr(c->g, op, a->name, NULL, 0, f, (int)a->n_floats, NULL, c->err);
            free(f);
            break;
        }
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
            char buf[256];
            snprintf(buf, sizeof buf, "%.*s", (int)a->s.len, a->s.data ? (const char *)a->s.data : "");
            st = rotor_graph_add_attr(c->g, op, a->name, NULL, 0, NULL, 0, buf, c->err);
            break;
        }
        default: break; /* tensors and graphs: a kernel that needs one refuses */
        }
    }
    int64_t *pos = malloc(sizeof *pos * (size_t)(n->nin + 1));
    if (!pos) return rotor_nomem(c->err);
    int k = 0;
    for (int i = 0; i < n->nin && !st; i++) {
        if (n->in[i] < 0) continue;
        const ox_val *x = &m->vals[ox_resolve(m, n->in[i])];
        if (x->kind == OX_CONST && x->has_data && x->elems <= 64 && i > 0 && (!x->param || ox_is_setting(n, i))) {
            char name[16];
            double f[64];
            int64_t v[64];
            for (int64_t e = 0; e < x->elems; e++) f[e] = ox_get(x, e), v[e] = (int64_t)f[e];
            snprintf(name, sizeof name, "@%d", i);
            bool fl = ox_is_float_type(x->onnx_type);
            st = rotor_graph_add_attr(c->g, op, name, fl ? NULL : v, fl ? 0 : (int)x->elems, fl ? f : NULL,
                                      fl ? (int)x->elems : 0, NULL, c->err);
        } else {
            pos[k++] = i;
        }
    }
    if (!st) st = rotor_graph_add_attr(c->g, op, "@in", pos, k, NULL, 0, NULL, c->err);
    free(pos);
    return st;
}

rotor_status lw_vendor(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    int *ins = malloc(sizeof(int) * (size_t)(n->nin + 1));
    int *outs = malloc(sizeof(int) * (size_t)(n->nout + 1));
    if (!ins || !outs) {
        free(ins), free(outs);
        return rotor_nomem(c->err);
    }
    int nin = 0, nout = 0;
    rotor_status st = ROTOR_OK;
    for (int k = 0; k < n->nin && !st; k++) {
        if (n->in[k] < 0) continue;
        const ox_val *x = &m->vals[ox_resolve(m, n->in[k])];
        /* parameter lists (axes, shapes, scalars) are attributes in spirit, not data */
        bool folds = !x->param || ox_is_setting(n, k); /* a parameter stays an input, so it is trained */
        if (x->kind == OX_CONST && x->has_data && x->elems <= 64 && k > 0 && folds) continue;
        int gv;
        if (!(st = lw_gval(c, n, n->in[k], &gv))) ins[nin++] = gv;
    }
    for (int k = 0; k < n->nout && !st; k++) {
        if (n->out[k] < 0) continue;
        int gv;
        if (!(st = lw_gval(c, n, n->out[k], &gv))) outs[nout++] = gv;
    }
    if (!st) st = emit(c, n, n->name, n->p->op_type, NULL, ins, nin, outs, nout);
    if (!st) c->g->ops[c->g->nops - 1].kernel = n->def->kernel; /* what rotor run dispatches on */
    if (!st) st = vendor_attrs(c, n, c->g->nops - 1);
    free(ins);
    free(outs);
    return st;
}

/* ---- contractions ------------------------------------------------------------------------------ */

/* Y = X + bias, the epilogue of Gemm and Conv (bias dimension bdim of Y, or
 * right-aligned when bdim < 0). */
static rotor_status lower_bias(lower_ctx *c, const ox_node *n, int pre_gv, int ov, int bias_v, int bdim) {
    ox_model *m = c->m;
    const ox_val *o = &m->vals[ov];
    const ox_val *bv = &m->vals[ox_resolve(m, bias_v)];
    eb b;
    eb_init(&b);
    char yn[OX_MAX_RANK + 1][ROTOR_NAME_MAX], bn[OX_MAX_RANK][ROTOR_NAME_MAX];
    int ny = 0, nb = 0;
    for (int d = 0; d < o->rank; d++) {
        snprintf(yn[ny], ROTOR_NAME_MAX, "d%d", d);
        eb_axis(&b, yn[ny++], o->shape[d]);
    }
    for (int d = 0; d < bv->rank; d++) {
        int od = bdim >= 0 ? bdim : o->rank - bv->rank + d;
        if (bv->shape[d] > 1 && od >= 0 && od < o->rank) snprintf(bn[nb++], ROTOR_NAME_MAX, "d%d", od);
    }
    char yref[REF_MAX], xref[REF_MAX], bref[REF_MAX];
    ref_of(yref, sizeof yref, "Y", ny, yn);
    ref_of(xref, sizeof xref, "X", ny, yn);
    if (nb == 0 && literal_of(bv, bref, sizeof bref)) {
        snprintf(b.text, sizeof b.text, "%s = %s + %s", yref, xref, bref);
    } else {
        if (nb == 0) { /* a one-element bias reads the unit axis u, as Y and X do */
            memmove(yn[1], yn[0], sizeof yn[0] * (size_t)ny);
            snprintf(yn[0], ROTOR_NAME_MAX, "u");
            ny++;
            eb_axis(&b, "u", 1);
            ref_of(yref, sizeof yref, "Y", ny, yn);
            ref_of(xref, sizeof xref, "X", ny, yn);
            snprintf(bn[nb++], ROTOR_NAME_MAX, "u");
        }
        ref_of(bref, sizeof bref, "B", nb, bn);
        snprintf(b.text, sizeof b.text, "%s = %s + %s", yref, xref, bref);
    }
    int gy, gb = -1;
    rotor_status st;
    if ((st = lw_gval(c, n, ov, &gy))) return st;
    b.tv[0] = gy;
    b.tv[1] = pre_gv;
    int ins[2] = {pre_gv, -1}, nin = 1;
    if (strstr(b.text, "B[")) {
        if ((st = lw_gval(c, n, bias_v, &gb))) return st;
        b.tv[2] = gb;
        ins[nin++] = gb;
    }
    char name[200];
    snprintf(name, sizeof name, "%s.bias", n->name);
    return emit(c, n, name, "Add", &b, ins, nin, &gy, 1);
}

/* The operator's output before its bias: a new value when a bias follows. */
static rotor_status pre_output(lower_ctx *c, const ox_node *n, int ov, bool bias, int *gy) {
    if (!bias) return lw_gval(c, n, ov, gy);
    const ox_val *o = &c->m->vals[ov];
    return lw_new_val(c, n, o->name, ".pre", o->dtype, o->rank, o->shape, gy);
}

rotor_status lw_matmul(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    bool q = !strcmp(n->p->op_type, "QLinearMatMul");
    const ox_val *a = &m->vals[ox_resolve(m, n->in[0])], *bm = &m->vals[ox_resolve(m, n->in[q ? 3 : 1])];
    const ox_val *o = &m->vals[n->out[0]];
    eb b;
    eb_init(&b);
    char an[ROTOR_MAX_AXES][ROTOR_NAME_MAX], bn[ROTOR_MAX_AXES][ROTOR_NAME_MAX], yn[ROTOR_MAX_AXES][ROTOR_NAME_MAX];
    int na = 0, nb = 0, ny = 0;
    int ba = a->rank > 2 ? a->rank - 2 : 0, bb = bm->rank > 2 ? bm->rank - 2 : 0;
    int br = ba > bb ? ba : bb;
    for (int d = 0; d < br; d++) {
        if (o->shape[d] == 1) continue;
        char ax[ROTOR_NAME_MAX];
        snprintf(ax, sizeof ax, "b%d", d);
        eb_axis(&b, ax, o->shape[d]);
        snprintf(yn[ny++], ROTOR_NAME_MAX, "%s", ax);
        int da = d - (br - ba), db = d - (br - bb);
        if (da >= 0 && a->shape[da] > 1) snprintf(an[na++], ROTOR_NAME_MAX, "%s", ax);
        if (db >= 0 && bm->shape[db] > 1) snprintf(bn[nb++], ROTOR_NAME_MAX, "%s", ax);
    }
    int64_t K = a->shape[a->rank - 1];
    if (a->rank >= 2) {
        eb_axis(&b, "m", a->shape[a->rank - 2]);
        snprintf(yn[ny++], ROTOR_NAME_MAX, "m");
        snprintf(an[na++], ROTOR_NAME_MAX, "m");
    }
    eb_axis(&b, "k", K);
    snprintf(an[na++], ROTOR_NAME_MAX, "k");
    snprintf(bn[nb++], ROTOR_NAME_MAX, "k");
    if (bm->rank >= 2) {
        eb_axis(&b, "n", bm->shape[bm->rank - 1]);
        snprintf(yn[ny++], ROTOR_NAME_MAX, "n");
        snprintf(bn[nb++], ROTOR_NAME_MAX, "n");
    }
    if (ny == 0) { /* vector . vector */
        eb_axis(&b, "u", 1);
        snprintf(yn[ny++], ROTOR_NAME_MAX, "u");
        memmove(an[1], an[0], sizeof an[0] * (size_t)na);
        snprintf(an[0], ROTOR_NAME_MAX, "u");
        na++;
    }
    char yref[REF_MAX], aref[REF_MAX], bref[REF_MAX];
    ref_of(yref, sizeof yref, "Y", ny, yn);
    ref_of(aref, sizeof aref, "A", na, an);
    ref_of(bref, sizeof bref, "B", nb, bn);
    snprintf(b.text, sizeof b.text, "%s += %s * %s", yref, aref, bref);
    int ins[8], nin = 0, gy;
    rotor_status st;
    for (int k = 0; k < n->nin; k++) {
        if (n->in[k] < 0) continue;
        const ox_val *x = &m->vals[ox_resolve(m, n->in[k])];
        if (k != 0 && k != (q ? 3 : 1) && x->kind == OX_CONST && x->elems == 1) continue; /* scalar zero points, scales */
        int gv;
        if ((st = lw_gval(c, n, n->in[k], &gv))) return st;
        ins[nin++] = gv;
        if (k == 0) b.tv[1] = gv;
        if (k == (q ? 3 : 1)) b.tv[2] = gv;
    }
    if ((st = lw_gval(c, n, n->out[0], &gy))) return st;
    b.tv[0] = gy;
    return emit(c, n, n->name, n->p->op_type, &b, ins, nin, &gy, 1);
}

rotor_status lw_gemm(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    bool ta = ox_attr_int(n, "transA", 0), tb = ox_attr_int(n, "transB", 0);
    const ox_val *a = &m->vals[ox_resolve(m, n->in[0])], *bm = &m->vals[ox_resolve(m, n->in[1])];
    int64_t M = a->shape[ta ? 1 : 0], K = a->shape[ta ? 0 : 1], N = bm->shape[tb ? 0 : 1];
    eb b;
    eb_init(&b);
    eb_axis(&b, "m", M);
    eb_axis(&b, "k", K);
    eb_axis(&b, "n", N);
    snprintf(b.text, sizeof b.text, "Y[m,n] += A[%s] * B[%s]", ta ? "k,m" : "m,k", tb ? "n,k" : "k,n");
    bool bias = n->nin > 2 && n->in[2] >= 0 && ox_attr_float(n, "beta", 1.0) != 0;
    rotor_status st;
    int ga, gb, gy;
    if ((st = lw_gval(c, n, n->in[0], &ga)) || (st = lw_gval(c, n, n->in[1], &gb))) return st;
    if ((st = pre_output(c, n, n->out[0], bias, &gy))) return st;
    b.tv[0] = gy, b.tv[1] = ga, b.tv[2] = gb;
    int ins[2] = {ga, gb};
    if ((st = emit(c, n, n->name, "Gemm", &b, ins, 2, &gy, 1))) return st;
    if ((ox_attr_float(n, "alpha", 1.0) != 1.0 || (bias && ox_attr_float(n, "beta", 1.0) != 1.0)) &&
        (st = rotor_graph_add_attr(c->g, c->g->nops - 1, "rotor.approximate", NULL, 0, NULL, 0,
                                   "Gemm's alpha and beta are left out of the expression (they cost nothing)",
                                   c->err)))
        return st;
    return bias ? lower_bias(c, n, gy, n->out[0], n->in[2], -1) : ROTOR_OK;
}

/* Spatial axis names: w; h,w; d,h,w (kernel: kw; kh,kw; kd,kh,kw). */
static const char *spatial_name(int ns, int i, bool kernel) {
    static const char *const s1[] = {"w"}, *const s2[] = {"h", "w"}, *const s3[] = {"d", "h", "w"};
    static const char *const k1[] = {"kw"}, *const k2[] = {"kh", "kw"}, *const k3[] = {"kd", "kh", "kw"};
    if (ns == 1) return kernel ? k1[i] : s1[i];
    if (ns == 2) return kernel ? k2[i] : s2[i];
    return kernel ? k3[i] : s3[i];
}

/* The attribute list name (strides, dilations) entry i, default 1. */
static int64_t attr_at(const ox_node *n, const char *name, int i, int count) {
    const Onnx__AttributeProto *a = ox_attr(n, name);
    return a && (int)a->n_ints == count ? a->ints[i] : 1;
}

rotor_status lw_conv(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    bool q = !strcmp(n->p->op_type, "QLinearConv");
    int iw = q ? 3 : 1;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *w = &m->vals[ox_resolve(m, n->in[iw])];
    const ox_val *o = &m->vals[n->out[0]];
    int ns = x->rank - 2;
    if (ns < 1 || ns > 3)
        return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "%d spatial dimensions; rotor lowers 1 to 3", ns);
    int64_t G = ox_attr_int(n, "group", 1), F = w->shape[0] / G, C = w->shape[1];
    eb b;
    eb_init(&b);
    char yref[REF_MAX], iref[REF_MAX], wref[REF_MAX];
    size_t ky, ki, kw;
    eb_axis(&b, "b", x->shape[0]);
    if (G > 1) eb_axis(&b, "g", G);
    eb_axis(&b, "f", F);
    eb_axis(&b, "c", C);
    ky = (size_t)snprintf(yref, sizeof yref, "Y[b,%sf", G > 1 ? "g," : "");
    ki = (size_t)snprintf(iref, sizeof iref, "I[b,%sc", G > 1 ? "g," : "");
    kw = (size_t)snprintf(wref, sizeof wref, "W[%sf,c", G > 1 ? "g," : "");
    for (int i = 0; i < ns; i++) {
        const char *s = spatial_name(ns, i, false), *k = spatial_name(ns, i, true);
        eb_axis(&b, s, o->shape[2 + i]);
        eb_axis(&b, k, w->shape[2 + i]);
        int64_t st = attr_at(n, "strides", i, ns), dl = attr_at(n, "dilations", i, ns);
        char idx[64], a1[24], a2[24];
        if (st == 1) snprintf(a1, sizeof a1, "%s", s);
        else snprintf(a1, sizeof a1, "%lld*%s", (long long)st, s);
        if (dl == 1) snprintf(a2, sizeof a2, "%s", k);
        else snprintf(a2, sizeof a2, "%lld*%s", (long long)dl, k);
        snprintf(idx, sizeof idx, "%s+%s", a1, a2);
        ky += (size_t)snprintf(yref + ky, sizeof yref - ky, ",%s", s);
        ki += (size_t)snprintf(iref + ki, sizeof iref - ki, ",%s", idx);
        kw += (size_t)snprintf(wref + kw, sizeof wref - kw, ",%s", k);
    }
    snprintf(b.text, sizeof b.text, "%s] += %s] * %s]", yref, iref, wref);
    /* I's element view: the window index minus the leading pad */
    ox_geom geo;
    rotor_status st = ox_conv_geom(m, n, x, w->shape + 2, false, &geo, c->err);
    if (st) return st;
    rotor_view *iv = &b.view[1];
    int k0 = 0;
    iv->set = true;
    iv->dim[k0] = 0, iv->step[k0++] = 1;
    if (G > 1) iv->dim[k0] = 1, iv->step[k0++] = C;
    iv->dim[k0] = 1, iv->step[k0++] = 1;
    for (int i = 0; i < ns; i++) {
        iv->dim[k0] = (int8_t)(2 + i), iv->step[k0++] = 1;
        iv->offset[2 + i] = -geo.pb[i];
    }
    bool bias = !q && n->nin > 2 && n->in[2] >= 0 && !strcmp(n->p->op_type, "Conv");
    int ins[9], nin = 0, gy;
    for (int k = 0; k < n->nin; k++) {
        if (n->in[k] < 0 || (bias && k == 2)) continue;
        const ox_val *v = &m->vals[ox_resolve(m, n->in[k])];
        if (k != 0 && k != iw && v->kind == OX_CONST && v->elems == 1) continue;
        int gv;
        if ((st = lw_gval(c, n, n->in[k], &gv))) return st;
        ins[nin++] = gv;
        if (k == 0) b.tv[1] = gv;
        if (k == iw) b.tv[2] = gv;
    }
    if ((st = pre_output(c, n, n->out[0], bias, &gy))) return st;
    b.tv[0] = gy;
    if ((st = emit(c, n, n->name, n->p->op_type, &b, ins, nin, &gy, 1))) return st;
    return bias ? lower_bias(c, n, gy, n->out[0], n->in[2], 1) : ROTOR_OK;
}

/* ---- quantized contractions --------------------------------------------------------------------- */

/* Where one side of a quantized contraction keeps its scale and zero point
 * (ONNX input positions, -1 when absent) and the tensor they quantize. */
typedef struct qside {
    int x, s, z;
} qside;

/* The first dimension of the quantized tensor's value (*on_x) and of the
 * output's (*on_y) that parameter p's first dimension runs along: a
 * MatMul's 1-D parameter indexes A's rows (its dim rank-2) or B's columns
 * (rank-1), an N-D one aligns to the right as numpy broadcasts; a
 * convolution's weight parameter indexes the output channel (W's dim 0,
 * Y's dim 1).  A one-element parameter is per tensor (0, 0). */
static void qparam_dims(const ox_val *p, const ox_val *x, const ox_val *y, bool conv, bool row, int64_t *on_x,
                        int64_t *on_y) {
    *on_x = *on_y = 0;
    if (!p || p->elems == 1) return;
    if (conv) *on_y = 1;
    else if (p->rank == 1) *on_x = x->rank - (row ? 2 : 1), *on_y = y->rank - (row ? 2 : 1);
    else *on_x = x->rank - p->rank, *on_y = y->rank - p->rank;
}

/* What rotor run needs to compute the quantized contraction just emitted
 * (docs/run.md, "Quantized operators"): "@in", the ONNX position of each
 * graph input; "@K", each scalar constant the lowering dropped (floats);
 * "rotor.quant.a" and "rotor.quant.b", {scale, zero point, first dim on the
 * input's value, first dim on the output's} of tensors A (1) and B (2);
 * "rotor.quant.y", {scale, zero point, bias, the bias's first dim on the
 * output}. */
static rotor_status quant_attrs(lower_ctx *c, const ox_node *n, const qside *side, int ys, int yz, int bias,
                                bool conv) {
    ox_model *m = c->m;
    int op = c->g->nops - 1;
    const ox_val *y = &m->vals[n->out[0]];
    int64_t pos[16];
    int np = 0;
    rotor_status st = ROTOR_OK;
    for (int k = 0; k < n->nin && k < 16 && !st; k++) {
        if (n->in[k] < 0) continue;
        const ox_val *x = &m->vals[ox_resolve(m, n->in[k])];
        if (k == side[0].x || k == side[1].x || x->kind != OX_CONST || x->elems != 1) {
            pos[np++] = k; /* a graph input (lw_matmul, lw_conv) */
        } else if (x->has_data) {
            char name[16];
            double v = ox_get(x, 0);
            snprintf(name, sizeof name, "@%d", k);
            st = rotor_graph_add_attr(c->g, op, name, NULL, 0, &v, 1, NULL, c->err);
        }
    }
    if (!st) st = rotor_graph_add_attr(c->g, op, "@in", pos, np, NULL, 0, NULL, c->err);
    for (int i = 0; i < 2 && !st; i++) {
        const qside *q = &side[i];
        const ox_val *x = &m->vals[ox_resolve(m, n->in[q->x])];
        const ox_val *p = q->s >= 0 && q->s < n->nin && n->in[q->s] >= 0 ? &m->vals[ox_resolve(m, n->in[q->s])] : NULL;
        if (!p && q->z < n->nin && n->in[q->z] >= 0) p = &m->vals[ox_resolve(m, n->in[q->z])];
        int64_t v[4] = {q->s < n->nin ? q->s : -1, q->z < n->nin ? q->z : -1, 0, 0};
        qparam_dims(p, x, y, conv && i == 1, i == 0, &v[2], &v[3]);
        if (conv && i == 0) v[2] = v[3] = 0; /* the input's parameters are per tensor */
        st = rotor_graph_add_attr(c->g, op, i ? "rotor.quant.b" : "rotor.quant.a", v, 4, NULL, 0, NULL, c->err);
    }
    int64_t yv[4] = {ys < n->nin ? ys : -1, yz < n->nin ? yz : -1, bias < n->nin ? bias : -1, 1};
    if (!st) st = rotor_graph_add_attr(c->g, op, "rotor.quant.y", yv, 4, NULL, 0, NULL, c->err);
    return st;
}

/* QLinearMatMul (a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 * y_scale, y_zero_point) and MatMulInteger (A, B, a_zero_point,
 * b_zero_point): the contraction of the quantized values, as MatMul's
 * (T10 §4.2); the zero points, scales and rounding are rotor run's
 * (docs/run.md). */
rotor_status lw_quant_matmul(lower_ctx *c, const ox_node *n) {
    bool q = n->def->infer == ox_infer_qlinear_matmul;
    qside side[2] = {{0, q ? 1 : -1, 2}, {q ? 3 : 1, q ? 4 : -1, q ? 5 : 3}};
    rotor_status st = lw_matmul(c, n);
    return st ? st : quant_attrs(c, n, side, q ? 6 : -1, q ? 7 : -1, -1, false);
}

/* QLinearConv (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
 * y_zero_point, B) and ConvInteger (x, w, x_zero_point, w_zero_point), as
 * lw_quant_matmul does MatMul's. */
rotor_status lw_quant_conv(lower_ctx *c, const ox_node *n) {
    bool q = n->def->infer == ox_infer_qlinear_conv;
    qside side[2] = {{0, q ? 1 : -1, 2}, {q ? 3 : 1, q ? 4 : -1, q ? 5 : 3}};
    rotor_status st = lw_conv(c, n);
    return st ? st : quant_attrs(c, n, side, q ? 6 : -1, q ? 7 : -1, q ? 8 : -1, true);
}

/* ---- reductions and pooling ------------------------------------------------------------------ */

/* Y[kept] += f(X[all]) (/ count): red[d] marks reduced dimensions of x. */
static rotor_status lower_reduction(lower_ctx *c, const ox_node *n, const char *name, const char *type, int xv,
                                    const bool *red, const char *fn, bool mean, int ov) {
    ox_model *m = c->m;
    const ox_val *x = &m->vals[ox_resolve(m, xv)];
    eb b;
    eb_init(&b);
    char yn[OX_MAX_RANK + 1][ROTOR_NAME_MAX], xn[OX_MAX_RANK + 1][ROTOR_NAME_MAX];
    int ny = 0, nx = 0;
    int64_t cnt = 1;
    for (int d = 0; d < x->rank; d++) {
        if (red[d]) cnt *= x->shape[d];
        if (!red[d] && x->shape[d] == 1) continue;
        char ax[ROTOR_NAME_MAX];
        snprintf(ax, sizeof ax, "d%d", d);
        eb_axis(&b, ax, x->shape[d]);
        snprintf(xn[nx++], ROTOR_NAME_MAX, "%s", ax);
        if (!red[d]) snprintf(yn[ny++], ROTOR_NAME_MAX, "%s", ax);
    }
    if (ny == 0) {
        eb_axis(&b, "u", 1);
        snprintf(yn[ny++], ROTOR_NAME_MAX, "u");
        memmove(xn[1], xn[0], sizeof xn[0] * (size_t)nx);
        snprintf(xn[0], ROTOR_NAME_MAX, "u");
        nx++;
    }
    char yref[REF_MAX], xref[REF_MAX], term[REF_MAX + 16];
    ref_of(yref, sizeof yref, "Y", ny, yn);
    ref_of(xref, sizeof xref, "X", nx, xn);
    if (fn) snprintf(term, sizeof term, "%s(%s)", fn, xref);
    else snprintf(term, sizeof term, "%s", xref);
    if (mean) snprintf(b.text, sizeof b.text, "%s += %s / %lld", yref, term, (long long)cnt);
    else snprintf(b.text, sizeof b.text, "%s += %s", yref, term);
    int gx, gy;
    rotor_status st;
    if ((st = lw_gval(c, n, xv, &gx)) || (st = lw_gval(c, n, ov, &gy))) return st;
    b.tv[0] = gy, b.tv[1] = gx;
    return emit(c, n, name, type, &b, &gx, 1, &gy, 1);
}

rotor_status lw_reduce(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const char *op = n->p->op_type;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])];
    bool red[OX_MAX_RANK];
    rotor_status st = ox_reduce_axes(m, n, x, red, c->err);
    if (st) return st;
    if (!strcmp(op, "ReduceSum")) return lower_reduction(c, n, n->name, op, n->in[0], red, NULL, false, n->out[0]);
    if (!strcmp(op, "ReduceMean")) return lower_reduction(c, n, n->name, op, n->in[0], red, NULL, true, n->out[0]);
    if (!strcmp(op, "ReduceSumSquare"))
        return lower_reduction(c, n, n->name, op, n->in[0], red, "square", false, n->out[0]);
    if (!strcmp(op, "ReduceL1")) return lower_reduction(c, n, n->name, op, n->in[0], red, "abs", false, n->out[0]);
    return lw_vendor(c, n);
}

rotor_status lw_global_avg(lower_ctx *c, const ox_node *n) {
    const ox_val *x = &c->m->vals[ox_resolve(c->m, n->in[0])];
    bool red[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) red[d] = d >= 2;
    return lower_reduction(c, n, n->name, n->p->op_type, n->in[0], red, NULL, true, n->out[0]);
}

rotor_status lw_avgpool(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *o = &m->vals[n->out[0]];
    int ns = x->rank - 2;
    if (ns < 1 || ns > 3) return lw_vendor(c, n);
    const Onnx__AttributeProto *ks = ox_attr(n, "kernel_shape");
    eb b;
    eb_init(&b);
    eb_axis(&b, "b", x->shape[0]);
    eb_axis(&b, "c", x->shape[1]);
    char yref[REF_MAX], xref[REF_MAX];
    size_t ky = (size_t)snprintf(yref, sizeof yref, "Y[b,c"), kx = (size_t)snprintf(xref, sizeof xref, "X[b,c");
    int64_t cnt = 1;
    for (int i = 0; i < ns; i++) {
        const char *s = spatial_name(ns, i, false), *k = spatial_name(ns, i, true);
        int64_t kk = ks->ints[i], st = attr_at(n, "strides", i, ns);
        cnt *= kk;
        eb_axis(&b, s, o->shape[2 + i]);
        eb_axis(&b, k, kk);
        ky += (size_t)snprintf(yref + ky, sizeof yref - ky, ",%s", s);
        if (st == 1) kx += (size_t)snprintf(xref + kx, sizeof xref - kx, ",%s+%s", s, k);
        else kx += (size_t)snprintf(xref + kx, sizeof xref - kx, ",%lld*%s+%s", (long long)st, s, k);
    }
    snprintf(b.text, sizeof b.text, "%s] += %s] / %lld", yref, xref, (long long)cnt);
    ox_geom geo;
    rotor_status st = ox_conv_geom(m, n, x, ks->ints, ox_attr_int(n, "ceil_mode", 0) != 0, &geo, c->err);
    if (st) return st;
    rotor_view *xv = &b.view[1];
    bool padded = false;
    xv->set = true;
    xv->dim[0] = 0, xv->step[0] = 1, xv->dim[1] = 1, xv->step[1] = 1;
    for (int i = 0; i < ns; i++) {
        xv->dim[2 + i] = (int8_t)(2 + i), xv->step[2 + i] = 1;
        xv->offset[2 + i] = -geo.pb[i];
        padded |= geo.pb[i] > 0 || geo.pe[i] > 0 || (o->shape[2 + i] - 1) * geo.s[i] + geo.k[i] > x->shape[2 + i];
    }
    /* keep_data (rotor run): the exact border windows need the vendor kernel */
    if (padded && !ox_attr_int(n, "count_include_pad", 0) && m->keep_data) return lw_vendor(c, n);
    int gx, gy;
    if ((st = lw_gval(c, n, n->in[0], &gx)) || (st = lw_gval(c, n, n->out[0], &gy))) return st;
    b.tv[0] = gy, b.tv[1] = gx;
    if ((st = emit(c, n, n->name, "AveragePool", &b, &gx, 1, &gy, 1))) return st;
    /* count_include_pad 0 (the default) divides a border window by the
     * elements it really covers; the expression divides by the kernel's */
    if (padded && !ox_attr_int(n, "count_include_pad", 0))
        return rotor_graph_add_attr(c->g, c->g->nops - 1, "rotor.approximate", NULL, 0, NULL, 0,
                                    "a padded AveragePool without count_include_pad divides border windows by "
                                    "the kernel size", c->err);
    return ROTOR_OK;
}

/* ---- normalisation and softmax ------------------------------------------------------------------ */

/* The statistics of a normalisation: kept (outer) dims as a value shape. */
static void kept_shape(const ox_val *x, const bool *red, int *rank, int64_t *shape) {
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (!red[d]) shape[r++] = x->shape[d];
    *rank = r;
}

/* References for the tensors of a normalisation over red[] dims of x:
 * xr = X over all dims, sr = the statistic over kept dims (u when none). */
static void norm_refs(eb *b, const ox_val *x, const bool *red, const char *xname, const char *sname, char *xr,
                      char *sr, char yn[][ROTOR_NAME_MAX], int *ny) {
    char xn[OX_MAX_RANK + 1][ROTOR_NAME_MAX], sn[OX_MAX_RANK + 1][ROTOR_NAME_MAX];
    int nx = 0, nsn = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!red[d] && x->shape[d] == 1) continue;
        char ax[ROTOR_NAME_MAX];
        snprintf(ax, sizeof ax, "d%d", d);
        eb_axis(b, ax, x->shape[d]);
        snprintf(xn[nx++], ROTOR_NAME_MAX, "%s", ax);
        if (!red[d]) snprintf(sn[nsn++], ROTOR_NAME_MAX, "%s", ax);
    }
    if (nsn == 0) {
        eb_axis(b, "u", 1);
        snprintf(sn[nsn++], ROTOR_NAME_MAX, "u");
        memmove(xn[1], xn[0], sizeof xn[0] * (size_t)nx);
        snprintf(xn[0], ROTOR_NAME_MAX, "u");
        nx++;
    }
    ref_of(xr, REF_MAX, xname, nx, xn);
    ref_of(sr, REF_MAX, sname, nsn, sn);
    if (yn) {
        memcpy(yn, xn, sizeof xn[0] * (size_t)nx);
        *ny = nx;
    }
}

/* LayerNormalization's scale: " * G[r]" into gr (or " * 0.5" for a literal,
 * "" without gamma), reading gamma as one more input when it is a tensor. */
static rotor_status layernorm_gamma(lower_ctx *c, const ox_node *n, const ox_val *x, int gamma, char *gr,
                                    size_t cap, int *ins, int *nin, int *gg) {
    ox_model *m = c->m;
    rotor_status st;
    const ox_val *gv = &m->vals[ox_resolve(m, gamma)];
    char gn[OX_MAX_RANK][ROTOR_NAME_MAX];
    int ngn = 0;
    for (int d = 0; d < gv->rank; d++) {
        int od = x->rank - gv->rank + d;
        if (gv->shape[d] > 1 && od >= 0) snprintf(gn[ngn++], ROTOR_NAME_MAX, "d%d", od);
    }
    if (ngn == 0 && literal_of(gv, gr + 3, cap - 3)) {
        memcpy(gr, " * ", 3);
    } else if (ngn > 0) {
        char t[REF_MAX];
        ref_of(t, sizeof t, "G", ngn, gn);
        snprintf(gr, cap, " * %s", t);
        if ((st = lw_gval(c, n, gamma, gg))) return st;
        ins[(*nin)++] = *gg;
    }
    return ROTOR_OK;
}

/* LayerNormalization's statistics over red[] dims of x (D elements each):
 * mean M += X / D into gmean, variance V += square(X - M) / D into gvar. */
static rotor_status layernorm_stats(lower_ctx *c, const ox_node *n, const ox_val *x, const bool *red, int64_t D,
                                    int gx, int gmean, int gvar) {
    rotor_status st;
    char name[200], xr[REF_MAX], mr[REF_MAX], vr[REF_MAX];
    eb b;
    /* mean */
    eb_init(&b);
    norm_refs(&b, x, red, "X", "M", xr, mr, NULL, NULL);
    snprintf(b.text, sizeof b.text, "%s += %s / %lld", mr, xr, (long long)D);
    b.tv[0] = gmean, b.tv[1] = gx;
    snprintf(name, sizeof name, "%s.mean", n->name);
    if ((st = emit(c, n, name, "ReduceMean", &b, &gx, 1, &gmean, 1))) return st;
    /* variance */
    eb_init(&b);
    norm_refs(&b, x, red, "X", "M", xr, mr, NULL, NULL);
    norm_refs(&b, x, red, "X", "V", xr, vr, NULL, NULL);
    snprintf(b.text, sizeof b.text, "%s += square(%s - %s) / %lld", vr, xr, mr, (long long)D);
    b.tv[0] = gvar, b.tv[1] = gx, b.tv[2] = gmean;
    int in2[2] = {gx, gmean};
    snprintf(name, sizeof name, "%s.var", n->name);
    if ((st = emit(c, n, name, "ReduceMean", &b, in2, 2, &gvar, 1))) return st;
    return ROTOR_OK;
}

/* LayerNormalization over dims >= axis of value xv, with gamma (may be -1)
 * and beta (may be -1), into ONNX value ov:
 *   mean  M[o] += X[o,r] / D
 *   var   V[o] += square(X[o,r] - M[o]) / D
 *   norm  Y[o,r] = (X[o,r] - M[o]) * rsqrt(V[o] + eps) * G[r]
 *   beta  Y = N + B[r]                                      (when beta is given) */
static rotor_status lower_layernorm(lower_ctx *c, const ox_node *n, int xv, int axis, int gamma, int beta,
                                    double eps, int ov) {
    ox_model *m = c->m;
    const ox_val *x = &m->vals[ox_resolve(m, xv)], *o = &m->vals[ov];
    bool red[OX_MAX_RANK];
    int64_t D = 1;
    for (int d = 0; d < x->rank; d++) {
        red[d] = d >= axis;
        if (red[d]) D *= x->shape[d];
    }
    int sr;
    int64_t sshape[OX_MAX_RANK];
    kept_shape(x, red, &sr, sshape);
    int gx, gmean, gvar, gy;
    rotor_status st;
    if ((st = lw_gval(c, n, xv, &gx))) return st;
    if ((st = lw_new_val(c, n, o->name, ".mean", x->dtype, sr, sshape, &gmean))) return st;
    if ((st = lw_new_val(c, n, o->name, ".var", x->dtype, sr, sshape, &gvar))) return st;
    if ((st = layernorm_stats(c, n, x, red, D, gx, gmean, gvar))) return st;
    char name[200], xr[REF_MAX], mr[REF_MAX], vr[REF_MAX];
    eb b;
    /* normalise (and scale) */
    eb_init(&b);
    char yn[OX_MAX_RANK + 1][ROTOR_NAME_MAX], yr[REF_MAX], gr[REF_MAX] = "";
    int ny;
    norm_refs(&b, x, red, "X", "M", xr, mr, yn, &ny);
    norm_refs(&b, x, red, "X", "V", xr, vr, NULL, NULL);
    ref_of(yr, sizeof yr, "Y", ny, yn);
    int ins[4] = {gx, gmean, gvar, -1}, nin = 3, gg = -1;
    if (gamma >= 0 && (st = layernorm_gamma(c, n, x, gamma, gr, sizeof gr, ins, &nin, &gg))) return st;
    char eps_s[32];
    snprintf(eps_s, sizeof eps_s, "%.9g", eps > 0 && isfinite(eps) ? eps : 1e-5);
    snprintf(b.text, sizeof b.text, "%s = (%s - %s) * rsqrt(%s + %s)%s", yr, xr, mr, vr, eps_s, gr);
    bool has_beta = beta >= 0;
    if (has_beta) {
        const ox_val *bv = &m->vals[ox_resolve(m, beta)];
        char lit[32];
        if (bv->elems == 1 && literal_of(bv, lit, sizeof lit) && ox_get(bv, 0) == 0) has_beta = false;
    }
    if (has_beta) {
        if ((st = lw_new_val(c, n, o->name, ".norm", o->dtype, o->rank, o->shape, &gy))) return st;
    } else if ((st = lw_gval(c, n, ov, &gy))) {
        return st;
    }
    b.tv[0] = gy, b.tv[1] = gx, b.tv[2] = gmean, b.tv[3] = gvar, b.tv[4] = gg;
    if ((st = emit(c, n, n->name, "LayerNormalization", &b, ins, nin, &gy, 1))) return st;
    if (!has_beta) return ROTOR_OK;
    int gnorm = gy;
    /* beta: the element-wise builder over the norm value needs an ONNX value;
     * build it directly instead */
    const ox_val *bv = &m->vals[ox_resolve(m, beta)];
    eb_init(&b);
    char bn[OX_MAX_RANK][ROTOR_NAME_MAX], br[REF_MAX], nr[REF_MAX];
    int nbn = 0;
    for (int d = 0; d < bv->rank; d++) {
        int od = x->rank - bv->rank + d;
        if (bv->shape[d] > 1 && od >= 0) snprintf(bn[nbn++], ROTOR_NAME_MAX, "d%d", od);
    }
    norm_refs(&b, x, red, "N", "M", nr, mr, yn, &ny);
    ref_of(yr, sizeof yr, "Y", ny, yn);
    int gb = -1, in3[2] = {gnorm, -1}, nin3 = 1;
    char lit[32];
    if (nbn == 0 && literal_of(bv, lit, sizeof lit)) {
        snprintf(b.text, sizeof b.text, "%s = %s + %s", yr, nr, lit);
    } else {
        if (nbn == 0) { /* a one-element beta reads the unit axis u, as Y and N do */
            if (strcmp(yn[0], "u") != 0) {
                memmove(yn[1], yn[0], sizeof yn[0] * (size_t)ny);
                snprintf(yn[0], ROTOR_NAME_MAX, "u");
                ny++;
                eb_axis(&b, "u", 1);
                ref_of(yr, sizeof yr, "Y", ny, yn);
                ref_of(nr, sizeof nr, "N", ny, yn);
            }
            snprintf(bn[nbn++], ROTOR_NAME_MAX, "u");
        }
        ref_of(br, sizeof br, "B", nbn, bn);
        snprintf(b.text, sizeof b.text, "%s = %s + %s", yr, nr, br);
        if ((st = lw_gval(c, n, beta, &gb))) return st;
        in3[nin3++] = gb;
    }
    if ((st = lw_gval(c, n, ov, &gy))) return st;
    b.tv[0] = gy, b.tv[1] = gnorm, b.tv[2] = gb;
    snprintf(name, sizeof name, "%s.beta", n->name);
    return emit(c, n, name, "Add", &b, in3, nin3, &gy, 1);
}

rotor_status lw_softmax(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *o = &m->vals[n->out[0]];
    bool legacy = m->opset < 13;
    int64_t a = ox_attr_int(n, "axis", legacy ? 1 : -1);
    if (a < 0) a += x->rank;
    if (a < 0 || a >= (x->rank ? x->rank : 1))
        return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "axis is out of range for rank %d", x->rank);
    bool red[OX_MAX_RANK];
    /* opset < 13 normalises over the flattened dims from axis on; 13+ over axis */
    for (int d = 0; d < x->rank; d++) red[d] = legacy ? d >= a : d == a;
    int sr;
    int64_t sshape[OX_MAX_RANK];
    kept_shape(x, red, &sr, sshape);
    int gx, gs, gy;
    rotor_status st;
    if ((st = lw_gval(c, n, n->in[0], &gx))) return st;
    if ((st = lw_new_val(c, n, o->name, ".sum", x->dtype, sr, sshape, &gs))) return st;
    if ((st = lw_gval(c, n, n->out[0], &gy))) return st;
    eb b;
    char xr[REF_MAX], sref[REF_MAX], mref[REF_MAX], yr[REF_MAX], xm[2 * REF_MAX + 8], name[200];
    char yn[OX_MAX_RANK + 1][ROTOR_NAME_MAX];
    int ny, gm = -1;
    /* keep_data (rotor run): a kernel subtracts the row maximum before exp,
     * or large inputs overflow; the maximum is a vendor ReduceMax.  Planning
     * imports leave that pass out (docs/run.md). */
    if (m->keep_data) {
        if ((st = lw_new_val(c, n, o->name, ".max", x->dtype, sr, sshape, &gm))) return st;
        snprintf(name, sizeof name, "%s.max", n->name);
        int64_t axes[OX_MAX_RANK], zero = 0;
        int na = 0;
        for (int d = 0; d < x->rank; d++)
            if (red[d]) axes[na++] = d;
        if ((st = emit(c, n, name, "ReduceMax", NULL, &gx, 1, &gm, 1)) ||
            (st = rotor_graph_add_attr(c->g, c->g->nops - 1, "axes", axes, na, NULL, 0, NULL, c->err)) ||
            (st = rotor_graph_add_attr(c->g, c->g->nops - 1, "keepdims", &zero, 1, NULL, 0, NULL, c->err)))
            return st;
    }
    eb_init(&b);
    norm_refs(&b, x, red, "X", "S", xr, sref, NULL, NULL);
    norm_refs(&b, x, red, "X", "M", xr, mref, NULL, NULL);
    if (gm >= 0) snprintf(xm, sizeof xm, "(%s - %s)", xr, mref);
    else snprintf(xm, sizeof xm, "%s", xr);
    snprintf(b.text, sizeof b.text, "%s += exp(%s)", sref, xm);
    b.tv[0] = gs, b.tv[1] = gx, b.tv[2] = gm;
    int ins1[2] = {gx, gm};
    snprintf(name, sizeof name, "%s.sum", n->name);
    if ((st = emit(c, n, name, "ReduceSum", &b, ins1, gm >= 0 ? 2 : 1, &gs, 1))) return st;
    eb_init(&b);
    norm_refs(&b, x, red, "X", "S", xr, sref, yn, &ny);
    norm_refs(&b, x, red, "X", "M", xr, mref, NULL, NULL);
    ref_of(yr, sizeof yr, "Y", ny, yn);
    if (!strcmp(n->p->op_type, "LogSoftmax")) snprintf(b.text, sizeof b.text, "%s = %s - log(%s)", yr, xm, sref);
    else snprintf(b.text, sizeof b.text, "%s = exp(%s) / %s", yr, xm, sref);
    b.tv[0] = gy, b.tv[1] = gx; /* tensors in order of appearance: X, (M,) S */
    if (gm >= 0) b.tv[2] = gm, b.tv[3] = gs;
    else b.tv[2] = gs;
    int ins[3] = {gx, gs, gm};
    return emit(c, n, n->name, n->p->op_type, &b, ins, gm >= 0 ? 3 : 2, &gy, 1);
}

/* Inference BatchNormalization with its statistics folded, for keep_data
 * imports (rotor run): y = x * a[c] + b[c], a and b new weights computed
 * from the four constants.  The expression without data names scale and
 * bias in their place, which costs the same but is not the value. */
static rotor_status lower_batchnorm_folded(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *o = &m->vals[n->out[0]];
    const ox_val *p[4];
    for (int k = 0; k < 4; k++) {
        p[k] = &m->vals[ox_resolve(m, n->in[1 + k])];
        if (p[k]->kind != OX_CONST || !p[k]->has_data || p[k]->elems != x->shape[1])
            return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "scale, bias, mean and variance must be constants "
                                "of one value per channel to run it");
    }
    int64_t C = x->shape[1];
    double eps = ox_attr_float(n, "epsilon", 1e-5);
    double *a = malloc(sizeof *a * (size_t)C * 2);
    if (!a) return rotor_nomem(c->err);
    for (int64_t k = 0; k < C; k++) {
        a[k] = ox_get(p[0], k) / sqrt(ox_get(p[3], k) + eps);
        a[C + k] = ox_get(p[1], k) - ox_get(p[2], k) * a[k];
    }
    eb b;
    eb_init(&b);
    char names[OX_MAX_RANK + 1][ROTOR_NAME_MAX], yr[REF_MAX];
    int ny = 0;
    for (int d = 0; d < o->rank; d++)
        if (o->shape[d] > 1 || d == 1) {
            snprintf(names[ny], ROTOR_NAME_MAX, "d%d", d);
            eb_axis(&b, names[ny++], o->shape[d]);
        }
    ref_of(yr, sizeof yr, "", ny, names);
    snprintf(b.text, sizeof b.text, "Y%s = X%s * A[d1] + B[d1]", yr, yr);
    int gx, gy, ga = -1, gb = -1;
    rotor_status st;
    if ((st = lw_gval(c, n, n->in[0], &gx)) || (st = lw_gval(c, n, n->out[0], &gy))) goto done;
    int64_t shape[1] = {C};
    if ((st = lw_new_value(c, n, n->name, ".scale", x->dtype, 1, shape, ROTOR_ROLE_WEIGHT, &ga)) ||
        (st = lw_new_value(c, n, n->name, ".shift", x->dtype, 1, shape, ROTOR_ROLE_WEIGHT, &gb)))
        goto done;
    if ((st = rotor_graph_set_data(c->g, ga, a, c->err)) || (st = rotor_graph_set_data(c->g, gb, a + C, c->err)))
        goto done;
    b.tv[0] = gy, b.tv[1] = gx, b.tv[2] = ga, b.tv[3] = gb;
    int ins[3] = {gx, ga, gb};
    st = emit(c, n, n->name, "BatchNormalization", &b, ins, 3, &gy, 1);
done:
    free(a);
    return st;
}

/* Training-mode BatchNormalization (rotor_onnx_options.train): the
 * statistics of the batch, over every dimension but the channel (1), as
 * LayerNormalization's over its trailing ones (ONNX's training_mode, which
 * the running mean and variance do not enter; their update is not lowered):
 *   mean  M[c] += X[n,c,h,w] / D       var  V[c] += square(X - M[c]) / D
 *   norm  N = (X - M[c]) * rsqrt(V[c] + eps) * S[c]      Y = N + B[c] */
static rotor_status lower_batchnorm_train(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *o = &m->vals[n->out[0]];
    bool red[OX_MAX_RANK];
    int64_t D = 1;
    for (int d = 0; d < x->rank; d++) {
        red[d] = d != 1;
        if (red[d]) D *= x->shape[d];
    }
    int sr, gx, gmean, gvar, gs, gb, gn, gy;
    int64_t sshape[OX_MAX_RANK];
    kept_shape(x, red, &sr, sshape);
    rotor_status st;
    if ((st = lw_gval(c, n, n->in[0], &gx)) || (st = lw_gval(c, n, n->in[1], &gs)) ||
        (st = lw_gval(c, n, n->in[2], &gb)) || (st = lw_gval(c, n, n->out[0], &gy)))
        return st;
    if ((st = lw_new_val(c, n, o->name, ".mean", x->dtype, sr, sshape, &gmean)) ||
        (st = lw_new_val(c, n, o->name, ".var", x->dtype, sr, sshape, &gvar)) ||
        (st = lw_new_val(c, n, o->name, ".norm", o->dtype, o->rank, o->shape, &gn)))
        return st;
    if ((st = layernorm_stats(c, n, x, red, D, gx, gmean, gvar))) return st;
    char xr[REF_MAX], mr[REF_MAX], vr[REF_MAX], name[200], eps_s[32];
    double eps = ox_attr_float(n, "epsilon", 1e-5);
    snprintf(eps_s, sizeof eps_s, "%.9g", eps > 0 && isfinite(eps) ? eps : 1e-5);
    eb b;
    eb_init(&b);
    norm_refs(&b, x, red, "X", "M", xr, mr, NULL, NULL);
    norm_refs(&b, x, red, "X", "V", xr, vr, NULL, NULL);
    snprintf(b.text, sizeof b.text, "N%s = (%s - %s) * rsqrt(%s + %s) * S[d1]", xr + 1, xr, mr, vr, eps_s);
    b.tv[0] = gn, b.tv[1] = gx, b.tv[2] = gmean, b.tv[3] = gvar, b.tv[4] = gs;
    snprintf(name, sizeof name, "%s.norm", n->name);
    if ((st = emit(c, n, name, "BatchNormalization", &b, (int[]){gx, gmean, gvar, gs}, 4, &gn, 1))) return st;
    eb_init(&b);
    norm_refs(&b, x, red, "X", "M", xr, mr, NULL, NULL);
    snprintf(b.text, sizeof b.text, "Y%s = N%s + B[d1]", xr + 1, xr + 1);
    b.tv[0] = gy, b.tv[1] = gn, b.tv[2] = gb;
    return emit(c, n, n->name, "Add", &b, (int[]){gn, gb}, 2, &gy, 1);
}

rotor_status lw_batchnorm(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *bx = &m->vals[ox_resolve(m, n->in[0])];
    /* the node's own training_mode (opset 14): Y from the batch's
     * statistics, whatever the running ones hold; lowered as inference it
     * gave the running statistics' answer without a word */
    bool training = ox_attr_int(n, "training_mode", 0) != 0;
    bool stats_read = false;
    for (int k = 1; k < n->nout; k++) stats_read |= n->out[k] >= 0 && m->vals[n->out[k]].live;
    if ((m->train || (training && !stats_read)) && bx->rank >= 2 && bx->shape[1] > 1 &&
        m->vals[ox_resolve(m, n->in[1])].rank == 1)
        return lower_batchnorm_train(c, n);
    /* training mode (its batch statistics are read, or a shape the
     * expressions above do not take): a vendor op; the affine expression
     * below is the inference form only */
    if (training || stats_read) return lw_vendor(c, n);
    /* Inference BatchNormalization folds to a per-channel affine map,
     * y = x * a[c] + b[c] with a = scale / sqrt(var + eps) and b = bias - mean * a:
     * the expression names scale and bias; mean and var are read once too. */
    operand ops[3] = {{.v = n->in[0]}, {.v = n->in[1], .mapped = true}, {.v = n->in[2], .mapped = true}};
    ops[1].map[0] = 1;
    ops[2].map[0] = 1;
    const ox_val *s = &m->vals[ox_resolve(m, n->in[1])];
    if (s->rank != 1) return lw_vendor(c, n);
    if (m->keep_data) return lower_batchnorm_folded(c, n);
    int stats[2] = {n->in[3], n->in[4]};
    return lower_ew(c, n, n->name, "BatchNormalization", n->out[0], ops, 3, "%0 * %1 + %2", stats, 2);
}

/* ---- layout --------------------------------------------------------------------------------------- */

/* Y[i] = X[i] over the flattened elements (Reshape, Flatten, Squeeze, Unsqueeze). */
rotor_status lw_reshape(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *o = &m->vals[n->out[0]];
    eb b;
    eb_init(&b);
    eb_axis(&b, "i", o->elems);
    snprintf(b.text, sizeof b.text, "Y[i] = X[i]");
    int gx, gy;
    rotor_status st;
    if ((st = lw_gval(c, n, n->in[0], &gx)) || (st = lw_gval(c, n, n->out[0], &gy))) return st;
    b.tv[0] = gy, b.tv[1] = gx;
    return emit(c, n, n->name, n->p->op_type, &b, &gx, 1, &gy, 1);
}

rotor_status lw_transpose(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])];
    const Onnx__AttributeProto *p = ox_attr(n, "perm");
    eb b;
    eb_init(&b);
    char xn[OX_MAX_RANK + 1][ROTOR_NAME_MAX], yn[OX_MAX_RANK + 1][ROTOR_NAME_MAX];
    int nx = 0, ny = 0;
    for (int d = 0; d < x->rank; d++) {
        if (x->shape[d] == 1) continue;
        snprintf(xn[nx], ROTOR_NAME_MAX, "d%d", d);
        eb_axis(&b, xn[nx++], x->shape[d]);
    }
    for (int d = 0; d < x->rank; d++) {
        int src = p && (int)p->n_ints == x->rank ? (int)p->ints[d] : x->rank - 1 - d;
        if (x->shape[src] == 1) continue;
        snprintf(yn[ny++], ROTOR_NAME_MAX, "d%d", src);
    }
    if (nx == 0) {
        eb_axis(&b, "u", 1);
        snprintf(xn[nx++], ROTOR_NAME_MAX, "u");
        snprintf(yn[ny++], ROTOR_NAME_MAX, "u");
    }
    char yr[REF_MAX], xr[REF_MAX];
    ref_of(yr, sizeof yr, "Y", ny, yn);
    ref_of(xr, sizeof xr, "X", nx, xn);
    snprintf(b.text, sizeof b.text, "%s = %s", yr, xr);
    int gx, gy;
    rotor_status st;
    if ((st = lw_gval(c, n, n->in[0], &gx)) || (st = lw_gval(c, n, n->out[0], &gy))) return st;
    b.tv[0] = gy, b.tv[1] = gx;
    return emit(c, n, n->name, "Transpose", &b, &gx, 1, &gy, 1);
}

/* Slice: Y = X over the output's extents (the input tensor is a slice of its value). */
rotor_status lw_slice(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *o = &m->vals[n->out[0]];
    if (o->elems == 0) return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "the slice is empty");
    eb b;
    eb_init(&b);
    char yn[OX_MAX_RANK + 1][ROTOR_NAME_MAX];
    int ny = 0;
    for (int d = 0; d < o->rank; d++) {
        if (o->shape[d] == 1) continue;
        snprintf(yn[ny], ROTOR_NAME_MAX, "d%d", d);
        eb_axis(&b, yn[ny++], o->shape[d]);
    }
    if (ny == 0) {
        eb_axis(&b, "u", 1);
        snprintf(yn[ny++], ROTOR_NAME_MAX, "u");
    }
    char yr[REF_MAX], xr[REF_MAX];
    ref_of(yr, sizeof yr, "Y", ny, yn);
    ref_of(xr, sizeof xr, "X", ny, yn);
    snprintf(b.text, sizeof b.text, "%s = %s", yr, xr);
    /* X's element view: the slice's first index and step per dimension */
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])];
    int64_t lo[OX_MAX_RANK], step[OX_MAX_RANK], shape[OX_MAX_RANK];
    rotor_status st = ox_slice_geom(m, n, x, lo, step, shape, c->err);
    if (st) return st;
    rotor_view *xv = &b.view[1];
    xv->set = true;
    int k = 0;
    for (int d = 0; d < o->rank; d++) {
        xv->offset[d] = lo[d];
        if (o->shape[d] > 1) xv->dim[k] = (int8_t)d, xv->step[k++] = step[d];
    }
    if (k == 0) xv->dim[0] = 0, xv->step[0] = 0; /* the unit axis */
    int gx, gy;
    if ((st = lw_gval(c, n, n->in[0], &gx)) || (st = lw_gval(c, n, n->out[0], &gy))) return st;
    b.tv[0] = gy, b.tv[1] = gx;
    return emit(c, n, n->name, "Slice", &b, &gx, 1, &gy, 1);
}

/* ---- spelled-out LayerNorm ---------------------------------------------------------------------------- */

static int single_consumer(const ox_model *m, int v) {
    if (v < 0 || m->vals[v].is_output) return -1;
    int s = m->cons_start[v], e = m->cons_start[v + 1];
    return e - s == 1 ? m->cons[s] : -1;
}

static bool is_op(const ox_model *m, int node, const char *op) {
    return node >= 0 && !strcmp(m->nodes[node].p->op_type, op) && !m->nodes[node].done && !m->nodes[node].folded;
}

static bool const_scalar(const ox_model *m, int v, double *out) {
    if (v < 0) return false;
    const ox_val *x = &m->vals[v];
    if (x->kind != OX_CONST || !x->has_data || x->elems != 1 || x->param) return false;
    *out = ox_get(x, 0);
    return true;
}

/* The other input of binary node nd, given one of them; -1 if neither. */
static int other_input(const ox_model *m, int nd, int v) {
    const ox_node *n = &m->nodes[nd];
    if (n->nin != 2) return -1;
    if (n->in[0] == v) return n->in[1];
    if (n->in[1] == v) return n->in[0];
    return -1;
}

/* Same reduced axes (a trailing run) and keepdims on a ReduceMean node; the
 * first reduced axis in *axis. */
static bool trailing_mean(ox_model *m, int nd, const ox_val *x, int *axis) {
    const ox_node *n = &m->nodes[nd];
    if (!ox_attr_int(n, "keepdims", 1)) return false;
    bool red[OX_MAX_RANK];
    rotor_error ignored;
    if (ox_reduce_axes(m, n, x, red, &ignored)) return false;
    int first = x->rank;
    for (int d = x->rank - 1; d >= 0 && red[d]; d--) first = d;
    for (int d = 0; d < first; d++)
        if (red[d]) return false;
    *axis = first;
    return first < x->rank;
}

/* At ReduceMean node r1: ReduceMean -> Sub -> Pow 2 -> ReduceMean -> Add eps ->
 * Sqrt -> Div (-> Mul gamma -> Add beta), the LayerNorm PyTorch exports spell
 * out.  On a match, lowers it as LayerNormalization and marks the nodes done. */
static rotor_status match_layernorm(lower_ctx *c, int r1, bool *matched) {
    ox_model *m = c->m;
    *matched = false;
    ox_node *n1 = &m->nodes[r1];
    int x = n1->in[0], mean = n1->out[0], axis;
    if (x < 0 || mean < 0) return ROTOR_OK;
    const ox_val *xv = &m->vals[ox_resolve(m, x)];
    if (!trailing_mean(m, r1, xv, &axis)) return ROTOR_OK;
    /* the centred value x - mean feeds the Pow and the Div, computed once or
     * twice (bert_toy_optimized.onnx has two identical Subs) */
    int subs[2] = {-1, -1}, nsub = 0, pw = -1, dv = -1, cast = -1;
    if (m->vals[mean].is_output) return ROTOR_OK;
    for (int j = m->cons_start[mean]; j < m->cons_start[mean + 1]; j++) {
        int nd = m->cons[j];
        if (nsub == 2 || !is_op(m, nd, "Sub") || m->nodes[nd].in[0] != x || m->nodes[nd].in[1] != mean)
            return ROTOR_OK;
        subs[nsub++] = nd;
    }
    if (nsub == 0) return ROTOR_OK;
    int uses = 0;
    for (int i = 0; i < nsub; i++) {
        int d = m->nodes[subs[i]].out[0];
        if (d < 0 || m->vals[d].is_output) return ROTOR_OK;
        for (int j = m->cons_start[d]; j < m->cons_start[d + 1]; j++, uses++) {
            int nd = m->cons[j];
            int through = is_op(m, nd, "Cast") ? single_consumer(m, m->nodes[nd].out[0]) : -1;
            if (pw < 0 && is_op(m, nd, "Pow") && m->nodes[nd].in[0] == d) pw = nd;
            else if (pw < 0 && cast < 0 && is_op(m, through, "Pow") && m->nodes[through].in[0] == m->nodes[nd].out[0])
                pw = through, cast = nd; /* GPT-2 exports cast x - mean to float first */
            else if (dv < 0 && is_op(m, nd, "Div") && m->nodes[nd].in[0] == d) dv = nd;
            else return ROTOR_OK;
        }
    }
    if (uses != 2) return ROTOR_OK;
    int sub = subs[0], sub2 = subs[1];
    double two, eps;
    if (pw < 0 || dv < 0 || !const_scalar(m, m->nodes[pw].in[1], &two) || two != 2) return ROTOR_OK;
    int r2 = single_consumer(m, m->nodes[pw].out[0]);
    int axis2;
    if (!is_op(m, r2, "ReduceMean") || !trailing_mean(m, r2, xv, &axis2) || axis2 != axis) return ROTOR_OK;
    int add = single_consumer(m, m->nodes[r2].out[0]);
    if (!is_op(m, add, "Add") || !const_scalar(m, other_input(m, add, m->nodes[r2].out[0]), &eps)) return ROTOR_OK;
    int sq = single_consumer(m, m->nodes[add].out[0]);
    if (!is_op(m, sq, "Sqrt") || single_consumer(m, m->nodes[sq].out[0]) != dv || m->nodes[dv].in[1] != m->nodes[sq].out[0])
        return ROTOR_OK;
    /* optional affine tail */
    int last = dv, gamma = -1, beta = -1, mul = -1, badd = -1;
    int nm = single_consumer(m, m->nodes[dv].out[0]);
    if (is_op(m, nm, "Mul")) {
        int gv = other_input(m, nm, m->nodes[dv].out[0]);
        if (gv >= 0 && m->vals[gv].kind == OX_CONST && m->vals[gv].rank <= xv->rank - axis) {
            mul = nm, gamma = gv, last = nm;
            int na = single_consumer(m, m->nodes[nm].out[0]);
            if (is_op(m, na, "Add")) {
                int bv = other_input(m, na, m->nodes[nm].out[0]);
                if (bv >= 0 && m->vals[bv].kind == OX_CONST && m->vals[bv].rank <= xv->rank - axis)
                    badd = na, beta = bv, last = na;
            }
        }
    }
    int nodes[11] = {r1, sub, sub2, cast, pw, r2, add, sq, dv, mul, badd};
    for (int i = 0; i < 11; i++)
        if (nodes[i] >= 0) m->nodes[nodes[i]].done = true;
    *matched = true;
    m->stats.layernorms_matched++;
    ox_node *ln = &m->nodes[last];
    return lower_layernorm(c, ln, x, axis, gamma, beta, eps, ln->out[0]);
}

/* ---- dispatch ---------------------------------------------------------------------------------------- */

/* Einsum as the tensor expression it is (docs/onnx.md, "Einsum"): labels
 * become axes, a label no output dimension keeps is summed ("+="), extent-1
 * dimensions fold away as everywhere else.  A term that repeats a label (a
 * diagonal or trace) has no expression form: it stays a vendor op. */
rotor_status lw_einsum(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    ox_einsum es;
    rotor_status st = ox_einsum_parse(m, (ox_node *)n, &es, c->err);
    if (st) return st;
    if (es.nin > 2) return lw_vendor(c, n);
    for (int t = 0; t < es.nin; t++)
        for (int i = 0; i < es.rank[t]; i++)
            for (int j = 0; j < i; j++)
                if (es.label[t][i] == es.label[t][j]) return lw_vendor(c, n);
    eb b;
    eb_init(&b);
    char names[3][OX_MAX_RANK + 1][ROTOR_NAME_MAX];
    int cnt[3] = {0, 0, 0};
    bool kept[OX_EINSUM_LABELS] = {false}, summed = false;
    for (int d = 0; d < es.out_rank; d++) kept[es.out[d]] = true;
    for (int t = 0; t <= es.nin; t++) {
        int r = t ? es.rank[t - 1] : es.out_rank;
        const ox_val *x = &m->vals[ox_resolve(m, t ? n->in[t - 1] : n->out[0])];
        for (int d = 0; d < r; d++) {
            int l = t ? es.label[t - 1][d] : es.out[d];
            if (x->shape[d] == 1) continue; /* folded, or broadcast along l */
            if (!kept[l]) summed = true;
            ox_einsum_label_name(l, names[t][cnt[t]], ROTOR_NAME_MAX);
            eb_axis(&b, names[t][cnt[t]++], es.extent[l]);
        }
    }
    if (cnt[0] == 0) { /* a scalar output: one extent-1 axis that every tensor carries */
        eb_axis(&b, "u", 1);
        for (int t = 0; t <= es.nin; t++) {
            memmove(names[t][1], names[t][0], sizeof names[t][0] * (size_t)cnt[t]);
            snprintf(names[t][0], ROTOR_NAME_MAX, "u");
            cnt[t]++;
        }
    }
    char refs[3][REF_MAX];
    static const char *const tn[3] = {"Y", "A", "B"};
    for (int t = 0; t <= es.nin; t++) ref_of(refs[t], sizeof refs[t], tn[t], cnt[t], names[t]);
    const char *assign = summed ? "+=" : "=";
    if (es.nin == 1) snprintf(b.text, sizeof b.text, "%s %s %s", refs[0], assign, refs[1]);
    else snprintf(b.text, sizeof b.text, "%s %s %s * %s", refs[0], assign, refs[1], refs[2]);
    int ins[2], gy;
    for (int t = 0; t < es.nin; t++) {
        if ((st = lw_gval(c, n, n->in[t], &ins[t]))) return st;
        b.tv[t + 1] = ins[t];
    }
    if ((st = lw_gval(c, n, n->out[0], &gy))) return st;
    b.tv[0] = gy;
    if (es.nin == 2 && ins[0] == ins[1]) { /* x.x: one input, read twice */
        return emit(c, n, n->name, "Einsum", &b, ins, 1, &gy, 1);
    }
    return emit(c, n, n->name, "Einsum", &b, ins, es.nin, &gy, 1);
}

/* Whether an Expand creates an output axis its input lacks (extent 1 or
 * absent, right-aligned): no input reads that axis, and T10's expressions
 * read every output axis from an input.  Such an Expand is a vendor op, a
 * broadcast copy at the vector rate (docs/onnx.md, "Broadcasts"). */
static bool expand_broadcasts(const ox_model *m, const ox_node *n) {
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *y = &m->vals[n->out[0]];
    for (int d = 0; d < y->rank; d++) {
        int dx = d - (y->rank - x->rank);
        if (y->shape[d] > 1 && (dx < 0 || x->shape[dx] == 1)) return true;
    }
    return false;
}

rotor_status lw_ms_gelu(lower_ctx *c, const ox_node *n) {
    operand ops[2];
    int k = 0;
    for (int i = 0; i < n->nin && i < 2; i++)
        if (n->in[i] >= 0) ops[k++] = (operand){.v = n->in[i]};
    if (n->nout >= 1 && n->out[0] >= 0) return lower_ew(c, n, n->name, n->p->op_type, n->out[0], ops, k, NULL, NULL, 0);
    return lw_vendor(c, n);
}

rotor_status lw_reduce_mean(lower_ctx *c, const ox_node *n) {
    bool matched;
    rotor_status st = match_layernorm(c, (int)(n - c->m->nodes), &matched);
    if (st || matched) return st;
    return lw_reduce(c, n);
}

rotor_status lw_expand(lower_ctx *c, const ox_node *n) {
    return expand_broadcasts(c->m, n) ? lw_vendor(c, n) : lw_elementwise(c, n);
}

rotor_status lw_elementwise(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const char *op = n->p->op_type;
    /* CastLike's second input and Expand's shape only carry a type or a shape */
    int nops = !strcmp(op, "CastLike") || !strcmp(op, "Expand") ? 1 : n->nin;
    if (!strcmp(op, "Clip")) nops = n->nin > 3 ? 3 : n->nin;
    operand ops[8];
    int k = 0;
    for (int i = 0; i < nops && i < 8; i++) {
        if (n->in[i] < 0) {
            if (!strcmp(op, "Clip")) continue;
            return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "input %d is missing", i);
        }
        ops[k] = (operand){.v = n->in[i]};
        if (!strcmp(op, "PRelu") && i == 1 && ox_prelu_per_channel(m, n)) {
            ops[k].mapped = true;
            ops[k].map[0] = 1;
        }
        int legacy = i == 1 ? ox_legacy_axis(m, n) : -1;
        if (legacy >= 0) { /* B's dimension d is the output's legacy + d */
            ops[k].mapped = true;
            for (int d = 0; d < m->vals[ox_resolve(m, n->in[1])].rank; d++) ops[k].map[d] = legacy + d;
        }
        k++;
    }
    if (k + 1 > ROTOR_MAX_TENSORS) return lw_vendor(c, n);
    for (int i = 1; i < n->nout; i++)
        if (n->out[i] >= 0 && m->vals[n->out[i]].live) return lw_vendor(c, n);
    return lower_ew(c, n, n->name, op, n->out[0], ops, k, NULL, NULL, 0);
}

rotor_status lw_layernorm_node(lower_ctx *c, const ox_node *n) {
    ox_model *m = c->m;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])];
    int64_t a = ox_attr_int(n, "axis", -1);
    if (a < 0) a += x->rank;
    for (int k = 1; k < n->nout; k++)
        if (n->out[k] >= 0 && m->vals[n->out[k]].live) return lw_vendor(c, n);
    return lower_layernorm(c, n, n->in[0], (int)a, n->in[1], n->nin > 2 ? n->in[2] : -1,
                           ox_attr_float(n, "epsilon", 1e-5), n->out[0]);
}

/* ---- com.microsoft BiasAdd and BiasSplitGelu, ImageScaler ------------------------------------ */

/* BiasAdd: Y[n,s,c] = X[n,s,c] + B[c] + S[n,s,c] (onnxruntime's "add input
 * with bias, then add residual inputs"). */
rotor_status lw_biasadd(lower_ctx *c, const ox_node *n) {
    const ox_val *x = &c->m->vals[ox_resolve(c->m, n->in[0])];
    eb b;
    eb_init(&b);
    eb_axis(&b, "n", x->shape[0]);
    eb_axis(&b, "s", x->shape[1]);
    eb_axis(&b, "c", x->shape[2]);
    snprintf(b.text, sizeof b.text, "Y[n,s,c] = X[n,s,c] + B[c] + S[n,s,c]");
    int ins[3], y;
    rotor_status st;
    for (int i = 0; i < 3; i++)
        if ((st = lw_gval(c, n, n->in[i], &ins[i]))) return st;
    if ((st = lw_gval(c, n, n->out[0], &y))) return st;
    b.tv[0] = y, b.tv[1] = ins[0], b.tv[2] = ins[1], b.tv[3] = ins[2];
    return emit(c, n, n->name, "BiasAdd", &b, ins, 3, &y, 1);
}

/* BiasSplitGelu: (X + bias) split in halves along the hidden dimension,
 * the left times gelu of the right (onnxruntime's diffusion kernel, from
 * TensorRT's SplitGelu: erf's GELU):
 *   Y[n,s,d] = (L[n,s,d] + BL[d]) * gelu(R[n,s,d] + BR[d])
 * with L and R the two halves of X and BL and BR of the bias (element
 * views at offsets 0 and D/2). */
rotor_status lw_split_gelu(lower_ctx *c, const ox_node *n) {
    const ox_val *x = &c->m->vals[ox_resolve(c->m, n->in[0])];
    int64_t half = x->shape[2] / 2;
    eb b;
    eb_init(&b);
    eb_axis(&b, "n", x->shape[0]);
    eb_axis(&b, "s", x->shape[1]);
    eb_axis(&b, "d", half);
    snprintf(b.text, sizeof b.text, "Y[n,s,d] = (L[n,s,d] + BL[d]) * gelu(R[n,s,d] + BR[d])");
    for (int t = 1; t <= 4; t++) {
        rotor_view *v = &b.view[t];
        bool bias = t == 2 || t == 4;
        v->set = true;
        for (int d = 0; d < (bias ? 1 : 3); d++) v->dim[d] = (int8_t)d, v->step[d] = 1;
        v->offset[bias ? 0 : 2] = t <= 2 ? 0 : half;
    }
    int gx, gb, y;
    rotor_status st;
    if ((st = lw_gval(c, n, n->in[0], &gx)) || (st = lw_gval(c, n, n->in[1], &gb)) ||
        (st = lw_gval(c, n, n->out[0], &y)))
        return st;
    b.tv[0] = y, b.tv[1] = gx, b.tv[2] = gb, b.tv[3] = gx, b.tv[4] = gb;
    int ins[2] = {gx, gb};
    return emit(c, n, n->name, "BiasSplitGelu", &b, ins, 2, &y, 1);
}

/* ImageScaler (ONNX's removed experimental operator; onnxruntime keeps it):
 * Y[n,c,h,w] = scale * X[n,c,h,w] + B[c], the bias attribute a weight value
 * <node>.bias of C elements. */
rotor_status lw_image_scaler(lower_ctx *c, const ox_node *n) {
    const ox_val *x = &c->m->vals[ox_resolve(c->m, n->in[0])];
    const Onnx__AttributeProto *ba = ox_attr(n, "bias"); /* C floats: the rule checked */
    int cnt = ba ? (int)ba->n_floats : 0;
    int64_t cshape[1] = {x->shape[1]};
    int gb, gx, y;
    rotor_status st = lw_new_value(c, n, n->name, ".bias", x->dtype, 1, cshape, ROTOR_ROLE_WEIGHT, &gb);
    if (st) return st;
    if (c->m->keep_data) {
        double *d = malloc(sizeof *d * (size_t)x->shape[1]);
        if (!d) return rotor_nomem(c->err);
        for (int k = 0; k < cnt && k < x->shape[1]; k++) d[k] = ba->floats[k];
        st = rotor_graph_set_data(c->g, gb, d, c->err);
        free(d);
        if (st) return st;
    }
    eb b;
    eb_init(&b);
    static const char *const ax[4] = {"n", "c", "h", "w"};
    for (int d = 0; d < 4; d++) eb_axis(&b, ax[d], x->shape[d]);
    double scale = ox_attr_float(n, "scale", 1.0);
    char lit[64];
    if (scale < 0) snprintf(lit, sizeof lit, "neg(%.9g)", -scale);
    else snprintf(lit, sizeof lit, "%.9g", scale);
    snprintf(b.text, sizeof b.text, "Y[n,c,h,w] = %s * X[n,c,h,w] + B[c]", lit);
    if ((st = lw_gval(c, n, n->in[0], &gx)) || (st = lw_gval(c, n, n->out[0], &y))) return st;
    b.tv[0] = y, b.tv[1] = gx, b.tv[2] = gb;
    int ins[2] = {gx, gb};
    return emit(c, n, n->name, "ImageScaler", &b, ins, 2, &y, 1);
}

/* A node by its registry row's lowering (onnxops.c; none: a vendor op).
 * Unless the row takes any output (recurrent and com.microsoft nodes), the
 * node's first output must be present and not empty. */
static rotor_status lower_node(lower_ctx *c, int nd) {
    ox_model *m = c->m;
    ox_node *n = &m->nodes[nd];
    const ox_opdef *d = n->def;
    if (!(d->flags & OX_ANY_OUTPUT)) {
        if (n->nout < 1 || n->out[0] < 0) return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "has no output");
        if (m->vals[n->out[0]].elems == 0)
            return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "output '%s' is empty (a zero extent); rotor plans "
                                "tensors of at least one element", m->vals[n->out[0]].name);
    }
    return d->lower ? d->lower(c, n) : lw_vendor(c, n);
}

rotor_status ox_lower(ox_model *m, rotor_graph *g, rotor_error *err) {
    lower_ctx c = {.m = m, .g = g, .err = err};
    rotor_status st;
    for (int oi = 0; oi < m->nnodes; oi++) {
        int nd = m->order[oi];
        ox_node *n = &m->nodes[nd];
        if (n->folded || n->done || !n->live) continue;
        if ((st = lower_node(&c, nd))) return st;
        n->done = true;
    }
    /* a one-element float initializer that became no value of the graph
     * (a number in an expression, an attribute, folded) is held constant;
     * one that did is a weight, trained (scalars_held counts what is) */
    for (int v = 0; v < m->nvals && m->train; v++) {
        const ox_val *x = &m->vals[v];
        m->stats.scalars_held += x->held && x->initializer && x->live && x->gv < 0;
    }
    /* An output an Identity or a Dropout forwards is the value it forwards,
     * and keeps its own name as an output alias (docs/graph.md). */
    for (int v = 0; v < m->nvals; v++) {
        if (!m->vals[v].is_output) continue;
        int gv;
        if ((st = lw_gval(&c, NULL, v, &gv))) return st;
        if (ox_resolve(m, v) == v) st = rotor_graph_set_output(g, gv, err);
        else st = rotor_graph_add_output_alias(g, m->vals[v].name, gv, err);
        if (st) return st;
    }
    return ROTOR_OK;
}
