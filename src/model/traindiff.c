/* traindiff.c — the derivative of a tensor expression's right-hand side
 * with respect to one of its input tensors, as expression text (private;
 * trainint.h).  The backward pass (train.c) multiplies it by the output's
 * gradient at each point of the operator's iteration space: the chain rule
 * over T10 §4.2's point-wise form Y[p] (+)= f(X1[p], ..., Xn[p]).
 *
 * The postfix program (op/expr.h, rotor_node) becomes a tree, is
 * differentiated symbolically, simplified where a term is the constant 0 or
 * 1 (so that a MatMul's gradient stays one product, a contraction), and
 * printed fully parenthesised.  Decisions where no paper speaks (docs/training.md):
 *  - relu'(x) is sign(relu(x)): 1 for x > 0, 0 otherwise (0 at x = 0, as
 *    PyTorch);  max(a, b) and min(a, b) split a tie evenly (0.5 each).
 *  - A function without a derivative here (floor, round, the rarer
 *    activations) is refused naming it; nothing is differentiated as 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainint.h"

#define DN_MAX 1024

typedef struct dnode {
    int op;      /* rotor_node_op */
    int fn;      /* CALL: rotor_fn */
    int argc;
    int kid[3];
    double num;  /* NUM */
    int tensor;  /* TENSOR */
    int col, len; /* CALL of a function the evaluator does not know (fn < 0): its name in e->text */
    int prime;   /* such a call's derivative by argument prime - 1: "<name>_grad" (one argument), "<name>_grad<k>" */
} dnode;

typedef struct dtree {
    dnode n[DN_MAX];
    int count;
    const rotor_expr *e;
    rotor_error *err;
    bool full;
} dtree;

static int mk(dtree *d, int op, int a, int b) {
    if (d->count >= DN_MAX) {
        d->full = true;
        return 0;
    }
    dnode *x = &d->n[d->count];
    memset(x, 0, sizeof *x);
    x->op = op, x->kid[0] = a, x->kid[1] = b, x->argc = 2;
    return d->count++;
}

static int num(dtree *d, double v) {
    int k = mk(d, ROTOR_NODE_NUM, 0, 0);
    d->n[k].num = v;
    return k;
}

static int call1(dtree *d, int fn, int a) {
    int k = mk(d, ROTOR_NODE_CALL, a, 0);
    d->n[k].fn = fn, d->n[k].argc = 1;
    return k;
}

static bool is_num(const dtree *d, int k, double v) { return d->n[k].op == ROTOR_NODE_NUM && d->n[k].num == v; }

/* a OP b with 0 and 1 simplified and constants folded */
static int bin(dtree *d, int op, int a, int b) {
    bool na = d->n[a].op == ROTOR_NODE_NUM, nb = d->n[b].op == ROTOR_NODE_NUM;
    if (na && nb && !(op == ROTOR_NODE_DIV && d->n[b].num == 0)) {
        double x = d->n[a].num, y = d->n[b].num;
        return num(d, op == ROTOR_NODE_ADD ? x + y : op == ROTOR_NODE_SUB ? x - y : op == ROTOR_NODE_MUL ? x * y : x / y);
    }
    switch (op) {
    case ROTOR_NODE_ADD:
        if (is_num(d, a, 0)) return b;
        if (is_num(d, b, 0)) return a;
        break;
    case ROTOR_NODE_SUB:
        if (is_num(d, b, 0)) return a;
        if (is_num(d, a, 0)) return call1(d, ROTOR_FN_NEG, b);
        break;
    case ROTOR_NODE_MUL:
        if (is_num(d, a, 0) || is_num(d, b, 0)) return num(d, 0);
        if (is_num(d, a, 1)) return b;
        if (is_num(d, b, 1)) return a;
        break;
    case ROTOR_NODE_DIV:
        if (is_num(d, a, 0)) return num(d, 0);
        if (is_num(d, b, 1)) return a;
        break;
    default:
        break;
    }
    return mk(d, op, a, b);
}

/* The tree of e's postfix program; its root, or -1 when it does not fit. */
static int build(dtree *d) {
    int stack[ROTOR_MAX_NODES], sp = 0;
    const rotor_expr *e = d->e;
    for (int i = 0; i < e->nnodes; i++) {
        const rotor_node *r = &e->rhs[i];
        int k;
        if (r->op == ROTOR_NODE_NUM) {
            k = num(d, r->value);
        } else if (r->op == ROTOR_NODE_TENSOR) {
            k = mk(d, ROTOR_NODE_TENSOR, 0, 0);
            d->n[k].tensor = r->arg;
        } else if (r->op == ROTOR_NODE_CALL) {
            if (sp < r->argc || r->argc > 3) return -1;
            k = mk(d, ROTOR_NODE_CALL, 0, 0);
            d->n[k].fn = r->arg, d->n[k].argc = r->argc, d->n[k].col = r->col, d->n[k].len = r->len;
            for (int a = r->argc - 1; a >= 0; a--) d->n[k].kid[a] = stack[--sp];
        } else {
            if (sp < 2) return -1;
            int b = stack[--sp], a = stack[--sp];
            k = mk(d, r->op, a, b);
        }
        stack[sp++] = k;
    }
    return sp == 1 && !d->full ? stack[0] : -1;
}

static int fail_fn(dtree *d, int fn) {
    rotor_fail(d->err, ROTOR_ERR_INPUT, "no gradient for function '%s'", rotor_expr_function_name(fn));
    return -1;
}

/* f'(x) for a call node k whose first argument is x (the derivative with
 * respect to its first argument), or -1 (err set). */
static int fn_prime(dtree *d, int k) {
    int x = d->n[k].kid[0];
    switch (d->n[k].fn) {
    case ROTOR_FN_EXP: return k;
    case ROTOR_FN_LOG: return call1(d, ROTOR_FN_RECIP, x);
    case ROTOR_FN_SQRT: return bin(d, ROTOR_NODE_MUL, num(d, 0.5), call1(d, ROTOR_FN_RSQRT, x));
    case ROTOR_FN_RSQRT: { /* -0.5 x^-1.5: x once (T10 reads each tensor once) */
        int q = mk(d, ROTOR_NODE_CALL, x, num(d, -1.5));
        d->n[q].fn = ROTOR_FN_POW;
        return bin(d, ROTOR_NODE_MUL, num(d, -0.5), q);
    }
    case ROTOR_FN_TANH: return bin(d, ROTOR_NODE_SUB, num(d, 1), call1(d, ROTOR_FN_SQUARE, k));
    case ROTOR_FN_ERF: /* 2/sqrt(pi) exp(-x^2) */
        return bin(d, ROTOR_NODE_MUL, num(d, 1.1283791670955126),
                   call1(d, ROTOR_FN_EXP, call1(d, ROTOR_FN_NEG, call1(d, ROTOR_FN_SQUARE, x))));
    case ROTOR_FN_GELU: { /* 0.5 (1 + erf(x/sqrt2)) + x exp(-x^2/2) / sqrt(2 pi) */
        int cdf = bin(d, ROTOR_NODE_MUL, num(d, 0.5),
                      bin(d, ROTOR_NODE_ADD, num(d, 1), call1(d, ROTOR_FN_ERF, bin(d, ROTOR_NODE_MUL, x, num(d, 0.7071067811865476)))));
        int pdf = bin(d, ROTOR_NODE_MUL, num(d, 0.3989422804014327),
                      call1(d, ROTOR_FN_EXP, bin(d, ROTOR_NODE_MUL, num(d, -0.5), call1(d, ROTOR_FN_SQUARE, x))));
        return bin(d, ROTOR_NODE_ADD, cdf, bin(d, ROTOR_NODE_MUL, x, pdf));
    }
    case ROTOR_FN_RELU: return call1(d, ROTOR_FN_SIGN, k);
    case ROTOR_FN_SIGMOID: /* (1 - tanh(x/2)^2) / 4: x once */
        return bin(d, ROTOR_NODE_MUL, num(d, 0.25),
                   bin(d, ROTOR_NODE_SUB, num(d, 1),
                       call1(d, ROTOR_FN_SQUARE, call1(d, ROTOR_FN_TANH, bin(d, ROTOR_NODE_MUL, x, num(d, 0.5))))));
    case ROTOR_FN_NEG: return num(d, -1);
    case ROTOR_FN_RECIP: return call1(d, ROTOR_FN_NEG, call1(d, ROTOR_FN_SQUARE, k));
    case ROTOR_FN_ABS: return call1(d, ROTOR_FN_SIGN, x);
    case ROTOR_FN_SQUARE: return bin(d, ROTOR_NODE_MUL, num(d, 2), x);
    case ROTOR_FN_POW: { /* an exponent that is a literal: p x^(p-1) */
        int p = d->n[k].kid[1];
        if (d->n[p].op != ROTOR_NODE_NUM) return fail_fn(d, ROTOR_FN_POW);
        int q = mk(d, ROTOR_NODE_CALL, x, num(d, d->n[p].num - 1));
        d->n[q].fn = ROTOR_FN_POW;
        return bin(d, ROTOR_NODE_MUL, num(d, d->n[p].num), q);
    }
    default:
        return fail_fn(d, d->n[k].fn);
    }
}

/* A function the evaluator does not know (the ONNX lowering's where, the
 * zoo's silu) is costed, never run (op/expr.h): so is its derivative,
 * sum_a <name>_grad<a>(args) * d arg_a, each a call of the same arguments. */
static int unknown_prime(dtree *d, int k, const int *da) {
    dnode x = d->n[k];
    int sum = num(d, 0);
    for (int a = 0; a < x.argc; a++) {
        if (is_num(d, da[a], 0)) continue;
        int q = mk(d, ROTOR_NODE_CALL, x.kid[0], x.kid[1]);
        d->n[q] = x;
        d->n[q].prime = a + 1;
        sum = bin(d, ROTOR_NODE_ADD, sum, bin(d, ROTOR_NODE_MUL, q, da[a]));
    }
    return sum;
}

/* d node / d tensor t, or -1 (err set). */
static int diff(dtree *d, int k, int t) {
    dnode x = d->n[k];
    switch (x.op) {
    case ROTOR_NODE_NUM: return num(d, 0);
    case ROTOR_NODE_TENSOR: return num(d, x.tensor == t ? 1 : 0);
    case ROTOR_NODE_ADD:
    case ROTOR_NODE_SUB:
    case ROTOR_NODE_MUL:
    case ROTOR_NODE_DIV: {
        int da = diff(d, x.kid[0], t), db = da < 0 ? -1 : diff(d, x.kid[1], t);
        if (db < 0) return -1;
        if (x.op == ROTOR_NODE_ADD || x.op == ROTOR_NODE_SUB) return bin(d, x.op, da, db);
        if (x.op == ROTOR_NODE_MUL)
            return bin(d, ROTOR_NODE_ADD, bin(d, ROTOR_NODE_MUL, da, x.kid[1]), bin(d, ROTOR_NODE_MUL, x.kid[0], db));
        /* (a / b)' = a' / b - a b' / b^2 */
        int r = bin(d, ROTOR_NODE_DIV, da, x.kid[1]);
        int s = bin(d, ROTOR_NODE_DIV, bin(d, ROTOR_NODE_MUL, x.kid[0], db), call1(d, ROTOR_FN_SQUARE, x.kid[1]));
        return bin(d, ROTOR_NODE_SUB, r, s);
    }
    default: break;
    }
    if (x.fn == ROTOR_FN_MAX || x.fn == ROTOR_FN_MIN) {
        int da = diff(d, x.kid[0], t), db = da < 0 ? -1 : diff(d, x.kid[1], t);
        if (db < 0) return -1;
        if (is_num(d, da, 0) && is_num(d, db, 0)) return num(d, 0);
        /* weight of a: (1 + sign(a - b)) / 2 for max, (1 - sign(a - b)) / 2 for min */
        int sg = call1(d, ROTOR_FN_SIGN, bin(d, ROTOR_NODE_SUB, x.kid[0], x.kid[1]));
        int wa = bin(d, ROTOR_NODE_MUL, num(d, 0.5), bin(d, x.fn == ROTOR_FN_MAX ? ROTOR_NODE_ADD : ROTOR_NODE_SUB, num(d, 1), sg));
        int wb = bin(d, ROTOR_NODE_SUB, num(d, 1), wa);
        return bin(d, ROTOR_NODE_ADD, bin(d, ROTOR_NODE_MUL, wa, da), bin(d, ROTOR_NODE_MUL, wb, db));
    }
    if (x.fn < 0) {
        int da[3];
        for (int a = 0; a < x.argc; a++)
            if ((da[a] = diff(d, x.kid[a], t)) < 0) return -1;
        return unknown_prime(d, k, da);
    }
    /* other arguments than the first are parameters (literals) */
    for (int a = 1; a < x.argc; a++) {
        int da = diff(d, x.kid[a], t);
        if (da < 0) return -1;
        if (!is_num(d, da, 0)) return fail_fn(d, x.fn);
    }
    int dx = diff(d, x.kid[0], t);
    if (dx < 0 || is_num(d, dx, 0)) return dx;
    int fp = fn_prime(d, k);
    return fp < 0 ? -1 : bin(d, ROTOR_NODE_MUL, fp, dx);
}

/* Appends s to out (cap); false when it does not fit. */
static bool put(char *out, size_t cap, size_t *len, const char *s) {
    size_t n = strlen(s);
    if (*len + n + 1 > cap) return false;
    memcpy(out + *len, s, n + 1);
    *len += n;
    return true;
}

/* Tensor t of e as "T<t>[i,h+r,...]" (or named name). */
void train_tensor_ref(const rotor_expr *e, int t, const char *name, char *out, size_t cap) {
    size_t len = 0;
    out[0] = 0;
    put(out, cap, &len, name);
    put(out, cap, &len, "[");
    const rotor_tensor *x = &e->tensors[t];
    for (int dd = 0; dd < x->ndims; dd++) {
        if (dd) put(out, cap, &len, ",");
        for (int k = 0; k < x->dims[dd].nterms; k++) {
            char term[ROTOR_NAME_MAX + 24];
            const char *a = e->axis_name[x->dims[dd].axis[k]];
            if (x->dims[dd].coef[k] == 1) snprintf(term, sizeof term, "%s%s", k ? "+" : "", a);
            else snprintf(term, sizeof term, "%s%lld*%s", k ? "+" : "", (long long)x->dims[dd].coef[k], a);
            put(out, cap, &len, term);
        }
    }
    put(out, cap, &len, "]");
}

/* A tensor the derivative reads more than once is printed as one more
 * tensor each time after the first ("T1", "T1x2", ...; occ[] counts them),
 * since T10 reads each expression tensor once: the caller names them all
 * after the same value. */
static bool print(const dtree *d, int k, char *out, size_t cap, size_t *len, int *occ) {
    const dnode *x = &d->n[k];
    char buf[ROTOR_EXPR_TEXT_MAX];
    switch (x->op) {
    case ROTOR_NODE_NUM:
        if (x->num < 0) snprintf(buf, sizeof buf, "neg(%.17g)", -x->num);
        else snprintf(buf, sizeof buf, "%.17g", x->num);
        return put(out, cap, len, buf);
    case ROTOR_NODE_TENSOR: {
        char name[24];
        train_occurrence_name(x->tensor, occ[x->tensor]++, name, sizeof name);
        train_tensor_ref(d->e, x->tensor, name, buf, sizeof buf);
        return put(out, cap, len, buf);
    }
    case ROTOR_NODE_CALL:
        if (x->fn >= 0) snprintf(buf, sizeof buf, "%s", rotor_expr_function_name(x->fn));
        else if (!x->prime || x->argc == 1)
            snprintf(buf, sizeof buf, "%.*s%s", x->len, d->e->text + x->col - 1, x->prime ? "_grad" : "");
        else snprintf(buf, sizeof buf, "%.*s_grad%d", x->len, d->e->text + x->col - 1, x->prime);
        if (!put(out, cap, len, buf) || !put(out, cap, len, "(")) return false;
        for (int a = 0; a < x->argc; a++)
            if ((a && !put(out, cap, len, ", ")) || !print(d, x->kid[a], out, cap, len, occ)) return false;
        return put(out, cap, len, ")");
    default: {
        const char *ops[] = {[ROTOR_NODE_ADD] = " + ", [ROTOR_NODE_SUB] = " - ", [ROTOR_NODE_MUL] = " * ",
                             [ROTOR_NODE_DIV] = " / "};
        return put(out, cap, len, "(") && print(d, x->kid[0], out, cap, len, occ) && put(out, cap, len, ops[x->op]) &&
               print(d, x->kid[1], out, cap, len, occ) && put(out, cap, len, ")");
    }
    }
}

void train_occurrence_name(int t, int k, char *out, size_t cap) {
    if (k == 0) snprintf(out, cap, "T%d", t);
    else snprintf(out, cap, "T%dx%d", t, k + 1);
}

rotor_status train_diff(const rotor_expr *e, int t, char *out, size_t cap, int *occ, int *kind, rotor_error *err) {
    dtree *d = malloc(sizeof *d);
    if (!d) return rotor_nomem(err);
    d->count = 0, d->e = e, d->err = err, d->full = false;
    memset(occ, 0, sizeof(int) * ROTOR_MAX_TENSORS);
    out[0] = 0;
    rotor_status st = ROTOR_OK;
    int root = e->nnodes > 0 ? build(d) : -1;
    if (root < 0) {
        st = rotor_fail(err, ROTOR_ERR_INPUT, "the right-hand side is too long to differentiate");
        goto done;
    }
    int r = diff(d, root, t);
    if (r < 0 || d->full) {
        st = d->full ? rotor_fail(err, ROTOR_ERR_INPUT, "the derivative is too long") : ROTOR_ERR_INPUT;
        goto done;
    }
    if (is_num(d, r, 0)) *kind = 0;
    else if (is_num(d, r, 1)) *kind = 1;
    else *kind = 2;
    size_t len = 0;
    if (*kind == 2 && !print(d, r, out, cap, &len, occ))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "the derivative is longer than %zu characters", cap - 1);
done:
    free(d);
    return st;
}
