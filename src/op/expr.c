/* expr.c — parsing and binding T10 tensor expressions (T10 §4.2).
 *
 * Grammar (whitespace is free):
 *   stmt   := tensor ("=" | "+=") sum
 *   sum    := prod (("+" | "-") prod)*
 *   prod   := unary (("*" | "/") unary)*
 *   unary  := tensor | NAME "(" sum ("," sum)* ")" | "(" sum ")" | NUMBER
 *   tensor := NAME "[" index ("," index)* "]"
 *   index  := term ("+" term)?          term := [INT "*"] NAME
 *
 * Decisions where T10 is silent (docs/cost-model.md repeats them):
 *  - A contraction is "Y += X1 * X2" with nothing else on the right: the matrix
 *    class of cost-model v1.  Everything else is element-wise (no axis outside
 *    the output) or a reduction (some axis outside the output, which then needs
 *    "+=").
 *  - flops_per_point counts one FLOP per binary operator and per function call
 *    on the right, plus one for the accumulation of "+=".
 *  - A tensor may appear once; the output may not be read on the right; an axis
 *    appears at most once per tensor; compound dimensions are inputs only and
 *    have at most two terms (stride*h + kh).
 */
#include "rotor/op/expr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *s;
    int pos;
    rotor_expr *e;
    rotor_error *err;
    int ops;        /* binary operators and calls on the right-hand side */
    int products;   /* '*' operators */
    int other_ops;  /* anything but '*' */
    int ntensor_rhs;
    int numbers;
} parser;

/* Appends one node of the postfix right-hand side.  A program longer than
 * ROTOR_MAX_NODES is marked (nnodes = -1): it still plans, it just cannot be
 * evaluated (rotor_expr_check_eval says so). */
static void emit(parser *p, rotor_node_op op, int argc, int arg, double value) {
    rotor_expr *e = p->e;
    if (e->nnodes < 0) return;
    if (e->nnodes == ROTOR_MAX_NODES) {
        e->nnodes = -1;
        return;
    }
    rotor_node *n = &e->rhs[e->nnodes++];
    memset(n, 0, sizeof *n);
    n->op = (uint8_t)op;
    n->argc = (uint8_t)(argc > 255 ? 255 : argc);
    n->arg = (int16_t)arg;
    n->value = value;
}

static const char *const fn_names[ROTOR_FN_COUNT] = {
    [ROTOR_FN_EXP] = "exp",         [ROTOR_FN_LOG] = "log",     [ROTOR_FN_SQRT] = "sqrt",
    [ROTOR_FN_RSQRT] = "rsqrt",     [ROTOR_FN_TANH] = "tanh",   [ROTOR_FN_ERF] = "erf",
    [ROTOR_FN_GELU] = "gelu",       [ROTOR_FN_RELU] = "relu",   [ROTOR_FN_SIGMOID] = "sigmoid",
    [ROTOR_FN_MAX] = "max",         [ROTOR_FN_MIN] = "min",     [ROTOR_FN_NEG] = "neg",
    [ROTOR_FN_RECIP] = "recip",     [ROTOR_FN_ABS] = "abs",     [ROTOR_FN_SQUARE] = "square",
    [ROTOR_FN_POW] = "pow",         [ROTOR_FN_FLOOR] = "floor", [ROTOR_FN_CEIL] = "ceil",
    [ROTOR_FN_ROUND] = "round",     [ROTOR_FN_SIGN] = "sign",   [ROTOR_FN_SIN] = "sin",
    [ROTOR_FN_COS] = "cos",         [ROTOR_FN_TAN] = "tan",     [ROTOR_FN_ASIN] = "asin",
    [ROTOR_FN_ACOS] = "acos",       [ROTOR_FN_ATAN] = "atan",   [ROTOR_FN_SINH] = "sinh",
    [ROTOR_FN_COSH] = "cosh",       [ROTOR_FN_ASINH] = "asinh", [ROTOR_FN_ACOSH] = "acosh",
    [ROTOR_FN_ATANH] = "atanh",     [ROTOR_FN_SOFTPLUS] = "softplus",
    [ROTOR_FN_SOFTSIGN] = "softsign", [ROTOR_FN_ELU] = "elu",   [ROTOR_FN_SELU] = "selu",
    [ROTOR_FN_LEAKYRELU] = "leakyrelu", [ROTOR_FN_THRESHOLDEDRELU] = "thresholdedrelu",
    [ROTOR_FN_HARDSIGMOID] = "hardsigmoid", [ROTOR_FN_HARDSWISH] = "hardswish",
    [ROTOR_FN_MISH] = "mish",       [ROTOR_FN_CELU] = "celu",   [ROTOR_FN_SHRINK] = "shrink",
    [ROTOR_FN_GELU_TANH] = "gelu_tanh", [ROTOR_FN_PRELU] = "prelu",
};

const char *rotor_expr_function_name(int fn) {
    return fn >= 0 && fn < ROTOR_FN_COUNT ? fn_names[fn] : "?";
}

int rotor_expr_function_arity(int fn) {
    switch (fn) {
    case ROTOR_FN_MAX:
    case ROTOR_FN_MIN:
    case ROTOR_FN_POW:
    case ROTOR_FN_ELU:             /* x, alpha */
    case ROTOR_FN_LEAKYRELU:       /* x, alpha */
    case ROTOR_FN_THRESHOLDEDRELU: /* x, alpha */
    case ROTOR_FN_CELU:            /* x, alpha */
    case ROTOR_FN_PRELU:           /* x, slope (a tensor) */
        return 2;
    case ROTOR_FN_SELU:        /* x, alpha, gamma */
    case ROTOR_FN_HARDSIGMOID: /* x, alpha, beta */
    case ROTOR_FN_SHRINK:      /* x, bias, lambd */
        return 3;
    default:
        return 1;
    }
}

/* The functions after ROTOR_FN_SQUARE, in double, with ONNX's definitions
 * (operator docs, opset 22): a holds x then the parameters. */
static double eval_onnx_fn(int fn, const double *a) {
    double x = a[0];
    switch (fn) {
    case ROTOR_FN_POW: return pow(x, a[1]);
    case ROTOR_FN_FLOOR: return floor(x);
    case ROTOR_FN_CEIL: return ceil(x);
    case ROTOR_FN_ROUND: return nearbyint(x); /* halves to even, the default rounding mode */
    case ROTOR_FN_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case ROTOR_FN_SIN: return sin(x);
    case ROTOR_FN_COS: return cos(x);
    case ROTOR_FN_TAN: return tan(x);
    case ROTOR_FN_ASIN: return asin(x);
    case ROTOR_FN_ACOS: return acos(x);
    case ROTOR_FN_ATAN: return atan(x);
    case ROTOR_FN_SINH: return sinh(x);
    case ROTOR_FN_COSH: return cosh(x);
    case ROTOR_FN_ASINH: return asinh(x);
    case ROTOR_FN_ACOSH: return acosh(x);
    case ROTOR_FN_ATANH: return atanh(x);
    case ROTOR_FN_SOFTPLUS: return log1p(exp(x));
    case ROTOR_FN_SOFTSIGN: return x / (1 + fabs(x));
    case ROTOR_FN_ELU: return x > 0 ? x : a[1] * expm1(x);
    case ROTOR_FN_SELU: return a[2] * (x > 0 ? x : a[1] * expm1(x));
    case ROTOR_FN_LEAKYRELU:
    case ROTOR_FN_PRELU: return x >= 0 ? x : a[1] * x;
    case ROTOR_FN_THRESHOLDEDRELU: return x > a[1] ? x : 0.0;
    case ROTOR_FN_HARDSIGMOID: return fmax(0.0, fmin(1.0, a[1] * x + a[2]));
    case ROTOR_FN_HARDSWISH: return x * fmax(0.0, fmin(1.0, x / 6 + 0.5));
    case ROTOR_FN_MISH: return x * tanh(log1p(exp(x)));
    case ROTOR_FN_CELU: return fmax(0.0, x) + fmin(0.0, a[1] * expm1(x / a[1]));
    case ROTOR_FN_SHRINK: return x < -a[2] ? x + a[1] : x > a[2] ? x - a[1] : 0.0;
    case ROTOR_FN_GELU_TANH: return 0.5 * x * (1 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    default: return NAN;
    }
}

static int lookup_fn(const char *name) {
    for (int f = 0; f < ROTOR_FN_COUNT; f++)
        if (strcmp(fn_names[f], name) == 0) return f;
    return -1;
}

static int col(const parser *p) { return p->pos + 1; }

static void skip_ws(parser *p) {
    while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos])) p->pos++;
}

static bool accept(parser *p, const char *tok) {
    skip_ws(p);
    size_t n = strlen(tok);
    if (strncmp(p->s + p->pos, tok, n) == 0) {
        p->pos += (int)n;
        return true;
    }
    return false;
}

static rotor_status expect(parser *p, const char *tok) {
    if (accept(p, tok)) return ROTOR_OK;
    skip_ws(p);
    if (!p->s[p->pos])
        return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: expected '%s', got end of expression",
                          col(p), tok);
    return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: expected '%s', got '%c'", col(p), tok,
                      p->s[p->pos]);
}

static bool is_name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static rotor_status read_name(parser *p, char *out, const char *what) {
    skip_ws(p);
    if (!is_name_start(p->s[p->pos])) {
        if (!p->s[p->pos])
            return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: expected %s, got end of expression",
                              col(p), what);
        return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: expected %s, got '%c'", col(p), what,
                          p->s[p->pos]);
    }
    int start = p->pos;
    while (is_name_char(p->s[p->pos])) p->pos++;
    int len = p->pos - start;
    if (len >= ROTOR_NAME_MAX)
        return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: name longer than %d characters",
                          start + 1, ROTOR_NAME_MAX - 1);
    memcpy(out, p->s + start, (size_t)len);
    out[len] = '\0';
    return ROTOR_OK;
}

static rotor_status intern_axis(parser *p, const char *name, int column, int *out) {
    rotor_expr *e = p->e;
    for (int a = 0; a < e->naxes; a++)
        if (strcmp(e->axis_name[a], name) == 0) {
            *out = a;
            return ROTOR_OK;
        }
    if (e->naxes == ROTOR_MAX_AXES)
        return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: more than %d axes", column,
                          ROTOR_MAX_AXES);
    strcpy(e->axis_name[e->naxes], name);
    e->axis_column[e->naxes] = column;
    *out = e->naxes++;
    return ROTOR_OK;
}

static rotor_status parse_term(parser *p, int64_t *coef, int *axis) {
    skip_ws(p);
    *coef = 1;
    if (isdigit((unsigned char)p->s[p->pos])) {
        int c = col(p);
        char *end;
        errno = 0;
        long long v = strtoll(p->s + p->pos, &end, 10);
        if (errno || v <= 0 || v > 1 << 20)
            return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: stride must be 1 to %d", c,
                              1 << 20);
        p->pos = (int)(end - p->s);
        *coef = v;
        rotor_status st = expect(p, "*");
        if (st) return st;
    }
    skip_ws(p);
    int c = col(p);
    char name[ROTOR_NAME_MAX];
    rotor_status st = read_name(p, name, "an axis name");
    if (st) return st;
    return intern_axis(p, name, c, axis);
}

static rotor_status parse_tensor(parser *p, const char *name, int name_col, bool output) {
    rotor_expr *e = p->e;
    for (int t = 0; t < e->ntensors; t++)
        if (strcmp(e->tensors[t].name, name) == 0)
            return rotor_fail(p->err, ROTOR_ERR_INPUT,
                              output || t != 0
                                  ? "column %d: tensor '%s' appears twice; T10 plans each tensor once"
                                  : "column %d: tensor '%s' is the output and cannot be read on the right",
                              name_col, name);
    if (e->ntensors == ROTOR_MAX_TENSORS)
        return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: more than %d tensors", name_col,
                          ROTOR_MAX_TENSORS);
    rotor_tensor *t = &e->tensors[e->ntensors++];
    memset(t, 0, sizeof *t);
    strcpy(t->name, name);
    rotor_status st = expect(p, "[");
    if (st) return st;
    do {
        if (t->ndims == ROTOR_MAX_DIMS)
            return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: tensor '%s' has more than %d dimensions",
                              col(p), name, ROTOR_MAX_DIMS);
        skip_ws(p);
        int dcol = col(p);
        rotor_dim *d = &t->dims[t->ndims];
        d->nterms = 1;
        if ((st = parse_term(p, &d->coef[0], &d->axis[0]))) return st;
        if (accept(p, "+")) {
            d->nterms = 2;
            if ((st = parse_term(p, &d->coef[1], &d->axis[1]))) return st;
            if (d->axis[1] == d->axis[0])
                return rotor_fail(p->err, ROTOR_ERR_INPUT,
                                  "column %d: compound dimension repeats axis '%s'", dcol,
                                  e->axis_name[d->axis[0]]);
            skip_ws(p);
            if (p->s[p->pos] == '+')
                return rotor_fail(p->err, ROTOR_ERR_INPUT,
                                  "column %d: a compound dimension has at most two axes", col(p));
        }
        if (output && (d->nterms != 1 || d->coef[0] != 1))
            return rotor_fail(p->err, ROTOR_ERR_INPUT,
                              "column %d: the output '%s' must be indexed by plain axes", dcol, name);
        for (int k = 0; k < d->nterms; k++) {
            if (t->has_axis[d->axis[k]])
                return rotor_fail(p->err, ROTOR_ERR_INPUT,
                                  "column %d: axis '%s' appears twice in tensor '%s'", dcol,
                                  e->axis_name[d->axis[k]], name);
            t->has_axis[d->axis[k]] = true;
        }
        t->ndims++;
    } while (accept(p, ","));
    return expect(p, "]");
}

static rotor_status parse_sum(parser *p);

static rotor_status parse_unary(parser *p) {
    skip_ws(p);
    char c = p->s[p->pos];
    if (c == '(') {
        p->pos++;
        rotor_status st = parse_sum(p);
        if (st) return st;
        return expect(p, ")");
    }
    if (isdigit((unsigned char)c) || c == '.') {
        char *end;
        double v = strtod(p->s + p->pos, &end);
        if (end == p->s + p->pos)
            return rotor_fail(p->err, ROTOR_ERR_INPUT, "column %d: malformed number", col(p));
        p->pos = (int)(end - p->s);
        p->numbers++;
        emit(p, ROTOR_NODE_NUM, 0, 0, v);
        return ROTOR_OK;
    }
    int ncol = col(p);
    char name[ROTOR_NAME_MAX];
    rotor_status st = read_name(p, name, "a tensor, a function or a number");
    if (st) return st;
    skip_ws(p);
    if (p->s[p->pos] == '[') {
        p->ntensor_rhs++;
        if ((st = parse_tensor(p, name, ncol, false))) return st;
        emit(p, ROTOR_NODE_TENSOR, 0, p->e->ntensors - 1, 0.0);
        return ROTOR_OK;
    }
    if (p->s[p->pos] == '(') {
        p->pos++;
        p->ops++;
        p->other_ops++;
        int argc = 0;
        do {
            if ((st = parse_sum(p))) return st;
            argc++;
        } while (accept(p, ","));
        if ((st = expect(p, ")"))) return st;
        emit(p, ROTOR_NODE_CALL, argc, lookup_fn(name), 0.0);
        if (p->e->nnodes > 0) {
            p->e->rhs[p->e->nnodes - 1].col = (int16_t)ncol;
            p->e->rhs[p->e->nnodes - 1].len = (int16_t)strlen(name);
        }
        return ROTOR_OK;
    }
    return rotor_fail(p->err, ROTOR_ERR_INPUT,
                      "column %d: '%s' is neither a tensor (name[...]) nor a function (name(...))",
                      ncol, name);
}

static rotor_status parse_prod(parser *p) {
    rotor_status st = parse_unary(p);
    if (st) return st;
    for (;;) {
        skip_ws(p);
        char c = p->s[p->pos];
        if (c != '*' && c != '/') return ROTOR_OK;
        p->pos++;
        p->ops++;
        if (c == '*') p->products++;
        else p->other_ops++;
        if ((st = parse_unary(p))) return st;
        emit(p, c == '*' ? ROTOR_NODE_MUL : ROTOR_NODE_DIV, 2, 0, 0.0);
    }
}

static rotor_status parse_sum(parser *p) {
    rotor_status st = parse_prod(p);
    if (st) return st;
    for (;;) {
        skip_ws(p);
        char c = p->s[p->pos];
        if (c != '+' && c != '-') return ROTOR_OK;
        p->pos++;
        p->ops++;
        p->other_ops++;
        if ((st = parse_prod(p))) return st;
        emit(p, c == '+' ? ROTOR_NODE_ADD : ROTOR_NODE_SUB, 2, 0, 0.0);
    }
}

/* Axes are numbered by first appearance on the right-hand side (inputs in
 * order, then dimensions in order), so `C[m,n] += A[m,k] * B[k,n]` has axes
 * m, k, n: the order of T10's F_op and of the benchmark's output format. */
static void reorder_axes(rotor_expr *e) {
    int perm[ROTOR_MAX_AXES], n = 0; /* perm[new] = old */
    bool used[ROTOR_MAX_AXES] = {false};
    for (int t = 1; t <= e->ntensors; t++) {
        const rotor_tensor *x = &e->tensors[t % e->ntensors]; /* inputs, then the output */
        for (int d = 0; d < x->ndims; d++)
            for (int k = 0; k < x->dims[d].nterms; k++) {
                int a = x->dims[d].axis[k];
                if (!used[a]) {
                    used[a] = true;
                    perm[n++] = a;
                }
            }
    }
    int inv[ROTOR_MAX_AXES] = {0};
    char names[ROTOR_MAX_AXES][ROTOR_NAME_MAX] = {{0}};
    int cols[ROTOR_MAX_AXES] = {0};
    for (int i = 0; i < n; i++) {
        inv[perm[i]] = i;
        memcpy(names[i], e->axis_name[perm[i]], ROTOR_NAME_MAX);
        cols[i] = e->axis_column[perm[i]];
    }
    memcpy(e->axis_name, names, sizeof names);
    memcpy(e->axis_column, cols, sizeof cols);
    for (int t = 0; t < e->ntensors; t++) {
        rotor_tensor *x = &e->tensors[t];
        memset(x->has_axis, 0, sizeof x->has_axis);
        for (int d = 0; d < x->ndims; d++)
            for (int k = 0; k < x->dims[d].nterms; k++) {
                x->dims[d].axis[k] = inv[x->dims[d].axis[k]];
                x->has_axis[x->dims[d].axis[k]] = true;
            }
    }
}

rotor_status rotor_expr_parse(const char *text, rotor_expr *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    if (!text) return rotor_fail(err, ROTOR_ERR_INPUT, "no expression given");
    if (strlen(text) >= ROTOR_EXPR_TEXT_MAX)
        return rotor_fail(err, ROTOR_ERR_INPUT, "expression longer than %d characters",
                          ROTOR_EXPR_TEXT_MAX - 1);
    strcpy(out->text, text);
    parser p = {.s = out->text, .e = out, .err = err};
    skip_ws(&p);
    if (!p.s[p.pos]) return rotor_fail(err, ROTOR_ERR_INPUT, "column 1: empty expression");
    int ncol = col(&p);
    char name[ROTOR_NAME_MAX];
    rotor_status st = read_name(&p, name, "the output tensor");
    if (st) return st;
    if ((st = parse_tensor(&p, name, ncol, true))) return st;
    skip_ws(&p);
    int opcol = col(&p);
    if (accept(&p, "+=")) out->accumulate = true;
    else if (accept(&p, "=")) out->accumulate = false;
    else if (!p.s[p.pos])
        return rotor_fail(err, ROTOR_ERR_INPUT, "column %d: expected '=' or '+=', got end of expression",
                          opcol);
    else
        return rotor_fail(err, ROTOR_ERR_INPUT, "column %d: expected '=' or '+=', got '%c'", opcol,
                          p.s[p.pos]);
    if ((st = parse_sum(&p))) return st;
    skip_ws(&p);
    if (p.s[p.pos])
        return rotor_fail(err, ROTOR_ERR_INPUT, "column %d: unexpected '%c' after the expression",
                          col(&p), p.s[p.pos]);
    if (p.ntensor_rhs == 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "column %d: the right-hand side reads no tensor",
                          opcol);

    reorder_axes(out);

    /* Every axis must be reachable from an input: an output axis that no input
     * carries would make the operator a broadcast, which T10 does not plan. */
    const rotor_tensor *y = &out->tensors[0];
    bool reduced = false;
    for (int a = 0; a < out->naxes; a++) {
        bool in_input = false;
        for (int t = 1; t < out->ntensors; t++) in_input |= out->tensors[t].has_axis[a];
        if (!in_input)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "column %d: output axis '%s' is read by no input; T10 cannot plan a broadcast",
                              out->axis_column[a], out->axis_name[a]);
        if (!y->has_axis[a]) reduced = true;
    }
    if (reduced && !out->accumulate) {
        for (int a = 0; a < out->naxes; a++)
            if (!y->has_axis[a])
                return rotor_fail(err, ROTOR_ERR_INPUT,
                                  "column %d: axis '%s' is summed away but the expression uses '='; write '+='",
                                  out->axis_column[a], out->axis_name[a]);
    }
    bool product_of_two = p.ntensor_rhs == 2 && out->ntensors == 3 && p.products == 1 &&
                          p.other_ops == 0 && p.numbers == 0;
    if (out->accumulate && product_of_two) out->op_class = ROTOR_OP_CONTRACTION;
    else if (reduced) out->op_class = ROTOR_OP_REDUCTION;
    else out->op_class = ROTOR_OP_ELEMENTWISE;
    out->flops_per_point = p.ops + (out->accumulate ? 1 : 0);
    if (out->flops_per_point == 0) out->flops_per_point = 1; /* a copy still touches every point */
    return ROTOR_OK;
}

int rotor_expr_axis(const rotor_expr *e, const char *name) {
    for (int a = 0; a < e->naxes; a++)
        if (strcmp(e->axis_name[a], name) == 0) return a;
    return -1;
}

bool rotor_expr_is_reduction_axis(const rotor_expr *e, int a) {
    return !e->tensors[0].has_axis[a];
}

rotor_status rotor_expr_bind(rotor_expr *e, const char *dims, rotor_error *err) {
    int64_t ext[ROTOR_MAX_AXES] = {0};
    const char *s = dims ? dims : "";
    while (*s) {
        const char *item = s;
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        char name[ROTOR_NAME_MAX];
        if (!eq || eq == s)
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: expected axis=extent, got '%.*s'", (int)len,
                              item);
        size_t nlen = (size_t)(eq - s);
        if (nlen >= ROTOR_NAME_MAX)
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: axis name '%.*s' is too long", (int)nlen, s);
        memcpy(name, s, nlen);
        name[nlen] = '\0';
        int a = rotor_expr_axis(e, name);
        if (a < 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: axis '%s' is not in the expression", name);
        if (ext[a])
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: axis '%s' is given twice", name);
        const char *v = eq + 1;
        int vlen = (int)(len - nlen - 1);
        char buf[64];
        if (vlen <= 0 || vlen >= (int)sizeof buf)
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: %s: expected a positive integer, got '%.*s'",
                              name, vlen > 0 ? vlen : 0, v);
        memcpy(buf, v, (size_t)vlen);
        buf[vlen] = '\0';
        char *end;
        errno = 0;
        long long x = strtoll(buf, &end, 10);
        if (*end || end == buf)
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: %s: expected a positive integer, got '%s'",
                              name, buf);
        if (errno == ERANGE || x > ROTOR_EXTENT_MAX)
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: %s=%s: extent exceeds the limit %lld", name,
                              buf, (long long)ROTOR_EXTENT_MAX);
        if (x <= 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: %s=%s: extent must be at least 1", name, buf);
        ext[a] = x;
        if (comma && !comma[1]) /* "m=8," is no list a user meant: say so rather than guess */
            return rotor_fail(err, ROTOR_ERR_INPUT, "dims: expected axis=extent after the last ',', got nothing");
        s = comma ? comma + 1 : s + len;
    }
    for (int a = 0; a < e->naxes; a++)
        if (!ext[a])
            return rotor_fail(err, ROTOR_ERR_INPUT, "column %d: axis '%s' has no extent (add %s=N to --dims)",
                              e->axis_column[a], e->axis_name[a], e->axis_name[a]);
    /* The iteration space and every tensor must be countable in int64 (bytes
     * are counted later with the element size, so leave headroom of 2^4). */
    int64_t points = 1;
    for (int a = 0; a < e->naxes; a++)
        if (!rotor_mul_i64(points, ext[a], &points) || points > INT64_MAX / 64)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "dims: the iteration space (product of all extents) overflows 64 bits");
    memcpy(e->extent, ext, sizeof ext);
    e->bound = true;
    return ROTOR_OK;
}

rotor_status rotor_expr_with_extent(const rotor_expr *e, int a, int64_t extent, rotor_expr *out,
                                    rotor_error *err) {
    /* bind's messages, as it words them for "name=extent" */
    if (extent > ROTOR_EXTENT_MAX)
        return rotor_fail(err, ROTOR_ERR_INPUT, "dims: %s=%lld: extent exceeds the limit %lld", e->axis_name[a],
                          (long long)extent, (long long)ROTOR_EXTENT_MAX);
    if (extent <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "dims: %s=%lld: extent must be at least 1", e->axis_name[a],
                          (long long)extent);
    int64_t points = 1;
    for (int x = 0; x < e->naxes; x++)
        if (!rotor_mul_i64(points, x == a ? extent : e->extent[x], &points) || points > INT64_MAX / 64)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "dims: the iteration space (product of all extents) overflows 64 bits");
    *out = *e;
    out->extent[a] = extent;
    return ROTOR_OK;
}

rotor_status rotor_expr_make(const char *text, const char *dims, rotor_expr *out, rotor_error *err) {
    rotor_status st = rotor_expr_parse(text, out, err);
    if (st) return st;
    return rotor_expr_bind(out, dims, err);
}

double rotor_expr_flops(const rotor_expr *e) {
    double f = (double)e->flops_per_point;
    for (int a = 0; a < e->naxes; a++) f *= (double)e->extent[a];
    return f;
}

void rotor_expr_dims_string(const rotor_expr *e, char *buf, int cap) {
    int n = 0;
    if (cap > 0) buf[0] = '\0';
    for (int a = 0; a < e->naxes && n < cap; a++)
        n += snprintf(buf + n, (size_t)(cap - n), "%s%s=%lld", a ? "," : "", e->axis_name[a],
                      (long long)e->extent[a]);
}

/* ---- evaluation ------------------------------------------------------------
 * The postfix program runs on a stack no deeper than the program is long.
 * gelu is the exact form x * (1 + erf(x / sqrt 2)) / 2 (ONNX Gelu, approximate
 * "none"); sigmoid is 1 / (1 + exp(-x)); recip is 1 / x; rsqrt is 1 / sqrt x. */

rotor_status rotor_expr_check_eval(const rotor_expr *e, rotor_error *err) {
    if (e->nnodes < 0)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "the right-hand side has more than %d terms; the evaluator cannot run it",
                          ROTOR_MAX_NODES);
    for (int i = 0; i < e->nnodes; i++) {
        const rotor_node *n = &e->rhs[i];
        if (n->op != ROTOR_NODE_CALL) continue;
        if (n->arg < 0) {
            char known[640];
            int k = 0;
            for (int f = 0; f < ROTOR_FN_COUNT && k < (int)sizeof known; f++)
                k += snprintf(known + k, sizeof known - (size_t)k, "%s%s", f ? ", " : "", fn_names[f]);
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "function '%.*s' (column %d) is not one the evaluator knows (known: %s)",
                              n->len, e->text + n->col - 1, n->col, known);
        }
        int want = rotor_expr_function_arity(n->arg);
        if (n->argc != want)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "function '%s' (column %d) takes %d argument%s, got %d", fn_names[n->arg],
                              n->col, want, want == 1 ? "" : "s", n->argc);
    }
    return ROTOR_OK;
}

#define DEFINE_EVAL(NAME, T, EXP, LOG, SQRT, TANH, ERF)                                           \
    T NAME(const rotor_expr *e, const T *x) {                                                   \
        T st[ROTOR_MAX_NODES];                                                                   \
        int sp = 0;                                                                              \
        for (int i = 0; i < e->nnodes; i++) {                                                    \
            const rotor_node *n = &e->rhs[i];                                                    \
            switch ((rotor_node_op)n->op) {                                                      \
            case ROTOR_NODE_NUM: st[sp++] = (T)n->value; break;                                  \
            case ROTOR_NODE_TENSOR: st[sp++] = x[n->arg]; break;                                 \
            case ROTOR_NODE_ADD: sp--; st[sp - 1] = st[sp - 1] + st[sp]; break;                  \
            case ROTOR_NODE_SUB: sp--; st[sp - 1] = st[sp - 1] - st[sp]; break;                  \
            case ROTOR_NODE_MUL: sp--; st[sp - 1] = st[sp - 1] * st[sp]; break;                  \
            case ROTOR_NODE_DIV: sp--; st[sp - 1] = st[sp - 1] / st[sp]; break;                  \
            case ROTOR_NODE_CALL: {                                                              \
                if (n->arg > ROTOR_FN_SQUARE) {                                                  \
                    int ar_ = rotor_expr_function_arity(n->arg);                                 \
                    double a_[3];                                                                \
                    for (int k_ = 0; k_ < ar_; k_++) a_[k_] = (double)st[sp - ar_ + k_];         \
                    sp -= ar_ - 1;                                                               \
                    st[sp - 1] = (T)eval_onnx_fn(n->arg, a_);                                    \
                    break;                                                                       \
                }                                                                                \
                T v = st[sp - 1];                                                                \
                switch ((rotor_fn)n->arg) {                                                      \
                case ROTOR_FN_EXP: v = EXP(v); break;                                            \
                case ROTOR_FN_LOG: v = LOG(v); break;                                            \
                case ROTOR_FN_SQRT: v = SQRT(v); break;                                          \
                case ROTOR_FN_RSQRT: v = (T)1 / SQRT(v); break;                                  \
                case ROTOR_FN_TANH: v = TANH(v); break;                                          \
                case ROTOR_FN_ERF: v = ERF(v); break;                                            \
                case ROTOR_FN_GELU: v = (T)0.5 * v * ((T)1 + ERF(v * (T)0.70710678118654752440)); break; \
                case ROTOR_FN_RELU: v = v < 0 ? (T)0 : v; break; /* NaN stays NaN, as ONNX */   \
                case ROTOR_FN_SIGMOID: v = (T)1 / ((T)1 + EXP(-v)); break;                       \
                case ROTOR_FN_MAX: sp--; v = st[sp - 1] != st[sp - 1] || st[sp - 1] > st[sp] ? st[sp - 1] : st[sp]; break; \
                case ROTOR_FN_MIN: sp--; v = st[sp - 1] != st[sp - 1] || st[sp - 1] < st[sp] ? st[sp - 1] : st[sp]; break; \
                case ROTOR_FN_NEG: v = -v; break;                                                \
                case ROTOR_FN_RECIP: v = (T)1 / v; break;                                        \
                case ROTOR_FN_ABS: v = v < 0 ? -v : v; break;                                    \
                case ROTOR_FN_SQUARE: v = v * v; break;                                          \
                default: break;                                                                  \
                }                                                                                \
                st[sp - 1] = v;                                                                  \
                break;                                                                           \
            }                                                                                    \
            }                                                                                    \
        }                                                                                        \
        return sp > 0 ? st[sp - 1] : (T)0;                                                       \
    }

DEFINE_EVAL(rotor_expr_eval, double, exp, log, sqrt, tanh, erf)
DEFINE_EVAL(rotor_expr_eval_f, float, expf, logf, sqrtf, tanhf, erff)
