/* graph.c — the model graph: values, operators with bound tensor expressions,
 * FLOPs and bytes (docs/graph.md).  Every mutation validates, so the op array
 * is always a topological order and every expression matches its tensors. */
#include "rotor/model/graph.h"

#include "base/jsontext.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int64_t bytes;
} dtypes[ROTOR_DTYPE_COUNT] = {
    [ROTOR_DTYPE_F32] = {"f32", 4},  [ROTOR_DTYPE_F16] = {"f16", 2},   [ROTOR_DTYPE_BF16] = {"bf16", 2},
    [ROTOR_DTYPE_F64] = {"f64", 8},  [ROTOR_DTYPE_F8] = {"f8", 1},     [ROTOR_DTYPE_I8] = {"i8", 1},
    [ROTOR_DTYPE_U8] = {"u8", 1},    [ROTOR_DTYPE_I16] = {"i16", 2},   [ROTOR_DTYPE_U16] = {"u16", 2},
    [ROTOR_DTYPE_I32] = {"i32", 4},  [ROTOR_DTYPE_U32] = {"u32", 4},   [ROTOR_DTYPE_I64] = {"i64", 8},
    [ROTOR_DTYPE_U64] = {"u64", 8},  [ROTOR_DTYPE_BOOL] = {"bool", 1}, [ROTOR_DTYPE_C64] = {"c64", 8},
    [ROTOR_DTYPE_C128] = {"c128", 16},
    [ROTOR_DTYPE_I4] = {"i4", 1},    [ROTOR_DTYPE_U4] = {"u4", 1},
};

int64_t rotor_dtype_bytes(rotor_dtype t) {
    return (unsigned)t < ROTOR_DTYPE_COUNT ? dtypes[t].bytes : 0;
}

bool rotor_dtype_storage(rotor_dtype t, int64_t elements, int64_t *bytes) {
    if (t == ROTOR_DTYPE_I4 || t == ROTOR_DTYPE_U4) { /* two per byte (ONNX's packing), rounded up */
        *bytes = elements / 2 + elements % 2;
        return elements >= 0;
    }
    return rotor_mul_i64(elements, rotor_dtype_bytes(t), bytes);
}

const char *rotor_dtype_name(rotor_dtype t) {
    return (unsigned)t < ROTOR_DTYPE_COUNT ? dtypes[t].name : "?";
}

const char *rotor_role_name(rotor_role r) {
    switch (r) {
    case ROTOR_ROLE_ACTIVATION: return "activation";
    case ROTOR_ROLE_WEIGHT: return "weight";
    case ROTOR_ROLE_KV_CACHE: return "kv-cache";
    }
    return "?";
}

void rotor_graph_init(rotor_graph *g, const char *name) {
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name ? name : "");
}

void rotor_graph_free(rotor_graph *g) {
    if (!g) return;
    for (int i = 0; i < g->nvalues; i++) {
        free(g->values[i].name);
        free(g->values[i].data);
    }
    for (int i = 0; i < g->nops; i++) {
        for (int k = 0; k < g->ops[i].nattrs; k++) {
            rotor_attr *a = &g->ops[i].attrs[k];
            free(a->name);
            free(a->ints);
            free(a->floats);
            free(a->str);
        }
        free(g->ops[i].attrs);
        free(g->ops[i].name);
        free(g->ops[i].inputs);
        free(g->ops[i].outputs);
    }
    for (int i = 0; i < g->naliases; i++) free(g->aliases[i].name);
    free(g->aliases);
    free(g->values);
    free(g->ops);
    free(g->index);
    memset(g, 0, sizeof *g);
}

/* FNV-1a: names are short ASCII; any decent spread will do. */
static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int rotor_graph_find_value(const rotor_graph *g, const char *name) {
    if (!name) return -1;
    if (!g->index) { /* a graph whose values were not added through the API */
        for (int i = 0; i < g->nvalues; i++)
            if (strcmp(g->values[i].name, name) == 0) return i;
        return -1;
    }
    unsigned mask = (unsigned)g->index_cap - 1;
    for (unsigned k = name_hash(name) & mask;; k = (k + 1) & mask) {
        int slot = g->index[k];
        if (slot == 0) return -1;
        if (strcmp(g->values[slot - 1].name, name) == 0) return slot - 1;
    }
}

/* Makes room in the index for n values (load factor at most 1/2). */
static bool index_reserve(rotor_graph *g, int n) {
    if (g->index && 2 * n <= g->index_cap) return true;
    int cap = g->index_cap ? g->index_cap : 64;
    while (cap < 2 * n) cap *= 2;
    int *idx = calloc((size_t)cap, sizeof *idx);
    if (!idx) return false;
    unsigned mask = (unsigned)cap - 1;
    for (int i = 0; i < g->nvalues; i++) {
        unsigned k = name_hash(g->values[i].name) & mask;
        while (idx[k]) k = (k + 1) & mask;
        idx[k] = i + 1;
    }
    free(g->index);
    g->index = idx;
    g->index_cap = cap;
    return true;
}

static void index_insert(rotor_graph *g, int v) {
    unsigned mask = (unsigned)g->index_cap - 1;
    unsigned k = name_hash(g->values[v].name) & mask;
    while (g->index[k]) k = (k + 1) & mask;
    g->index[k] = v + 1;
}

static bool grow(void **p, int *cap, int need, size_t elem) {
    if (need <= *cap) return true;
    int n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

rotor_status rotor_graph_add_value(rotor_graph *g, const char *name, rotor_dtype dtype, int rank,
                                   const int64_t *shape, rotor_role role, int *out,
                                   rotor_error *err) {
    if (!name || !*name) return rotor_fail(err, ROTOR_ERR_INPUT, "a value needs a name");
    if ((unsigned)dtype >= ROTOR_DTYPE_COUNT)
        return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s': unknown dtype %d", name, (int)dtype);
    if ((unsigned)role > ROTOR_ROLE_KV_CACHE)
        return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s': unknown role %d", name, (int)role);
    if (rank < 0 || rank > ROTOR_GRAPH_MAX_RANK)
        return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s': rank %d is outside 0..%d", name, rank,
                          ROTOR_GRAPH_MAX_RANK);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 1)
            return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s': dimension %d is %lld; extents must be at least 1",
                              name, d, (long long)shape[d]);
        if (!rotor_mul_i64(n, shape[d], &n))
            return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s': element count overflows 64 bits", name);
    }
    /* shape may point into this graph's own value array (a shape copied from
     * another value), which growing the array moves: keep a copy */
    int64_t dims[ROTOR_GRAPH_MAX_RANK];
    for (int d = 0; d < rank; d++) dims[d] = shape[d];
    int64_t bytes;
    if (!rotor_dtype_storage(dtype, n, &bytes))
        return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s': byte count overflows 64 bits", name);
    if (rotor_graph_find_value(g, name) >= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s' is defined twice", name);
    if (!grow((void **)&g->values, &g->values_cap, g->nvalues + 1, sizeof *g->values) ||
        !index_reserve(g, g->nvalues + 1))
        return rotor_nomem(err);
    char *copy = strdup(name);
    if (!copy) return rotor_nomem(err);
    rotor_value *v = &g->values[g->nvalues];
    memset(v, 0, sizeof *v);
    v->name = copy;
    v->rank = rank;
    for (int d = 0; d < rank; d++) v->shape[d] = dims[d];
    v->elements = n;
    v->bytes = bytes;
    v->dtype = dtype;
    v->role = role;
    v->producer = -1;
    if (out) *out = g->nvalues;
    g->nvalues++;
    index_insert(g, g->nvalues - 1);
    return ROTOR_OK;
}

/* Elements of expression tensor t, and whether its dimensions are all plain
 * axes (compound `2*h+kh` windows read a padded or strided region whose size
 * need not match the value's). */
static int64_t expr_tensor_elements(const rotor_expr *e, int t, bool *plain) {
    const rotor_tensor *x = &e->tensors[t];
    int64_t n = 1;
    *plain = true;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        if (dim->nterms != 1 || dim->coef[0] != 1) *plain = false;
        int64_t ext = 1;
        for (int k = 0; k < dim->nterms; k++) ext += dim->coef[k] * (e->extent[dim->axis[k]] - 1);
        if (!rotor_mul_i64(n, ext, &n)) return INT64_MAX;
    }
    return n;
}

/* Whether expression tensor t of e may name value v of an operator with the
 * given inputs and outputs; if not, why (docs/graph.md "Operators"). */
static bool tensor_matches(const rotor_graph *g, const rotor_expr *e, int t, int v, const int *inputs,
                           int ninputs, const int *outputs, int noutputs, char *why, size_t cap) {
    const rotor_value *x = &g->values[v];
    const int *list = t == 0 ? outputs : inputs;
    int n = t == 0 ? noutputs : ninputs;
    bool listed = false;
    for (int i = 0; i < n && !listed; i++) listed = list[i] == v;
    if (!listed) {
        snprintf(why, cap, "expression tensor %s names '%s', which is not one of the op's %s",
                 e->tensors[t].name, x->name, t == 0 ? "outputs" : "inputs");
        return false;
    }
    bool plain;
    int64_t elems = expr_tensor_elements(e, t, &plain);
    if (!plain) return true; /* a window over a padded or strided region */
    /* The output must cover its value, except a kv-cache value, of which a
     * decode step writes only its own positions; an input may be a slice. */
    bool slice_ok = t != 0 || x->role == ROTOR_ROLE_KV_CACHE;
    if (slice_ok ? elems > x->elements : elems != x->elements) {
        snprintf(why, cap, "expression tensor %s has %lld elements but value '%s' has %lld", e->tensors[t].name,
                 (long long)elems, x->name, (long long)x->elements);
        return false;
    }
    return true;
}

bool rotor_op_type_is_gather(const char *type) {
    return strcmp(type, "Gather") == 0 || strcmp(type, "GatherElements") == 0 || strcmp(type, "GatherND") == 0;
}

/* The elements input i of an operator of this type reads (see the header). */
static int64_t read_elements(const rotor_graph *g, const char *type, const int *inputs, int i, const int *outputs,
                             int noutputs) {
    int64_t n = g->values[inputs[i]].elements;
    if (i == 0 && noutputs > 0 && rotor_op_type_is_gather(type)) {
        int64_t w0 = g->values[outputs[0]].elements;
        return n < w0 ? n : w0;
    }
    return n;
}

int64_t rotor_op_read_elements(const rotor_graph *g, int op, int k) {
    const rotor_op *o = &g->ops[op];
    return read_elements(g, o->type, o->inputs, k, o->outputs, o->noutputs);
}

/* The vendor-op rule (docs/graph.md): one vector-rate FLOP per element read
 * or written.  A gather reads from its data input (input 0) only the elements
 * it writes, so an embedding lookup costs its rows, not the whole table. */
static double vendor_flops(const rotor_graph *g, const char *type, const int *inputs, int ninputs,
                           const int *outputs, int noutputs) {
    double written = 0, read = 0;
    for (int i = 0; i < noutputs; i++) written += (double)g->values[outputs[i]].elements;
    for (int i = 0; i < ninputs; i++) read += (double)read_elements(g, type, inputs, i, outputs, noutputs);
    return read + written;
}

/* Names the operator in front of the message rotor_fail just wrote:
 * "op 'attn.qk' (MatMul): ...". */
static rotor_status op_named(const rotor_op_desc *d, rotor_status code, rotor_error *err) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, "op '%s' (%s)", d->name, d->type);
    rotor_error_prefix(err, prefix);
    return code;
}

#define OPFAIL(code, ...) return op_named(d, rotor_fail(err, code, __VA_ARGS__), err)

/* The checks on an operator's inputs and outputs, before its expression. */
static rotor_status check_ends(const rotor_graph *g, const rotor_op_desc *d, rotor_error *err) {
    if (!d->name || !d->type) return rotor_fail(err, ROTOR_ERR_INPUT, "an operator needs a name and a type");
    if (strlen(d->type) >= ROTOR_OP_TYPE_MAX) OPFAIL(ROTOR_ERR_INPUT, "type name is too long");
    if (d->noutputs < 1) OPFAIL(ROTOR_ERR_INPUT, "an operator needs at least one output");
    if (d->ninputs < 0) OPFAIL(ROTOR_ERR_INPUT, "negative input count");
    for (int i = 0; i < d->ninputs; i++) {
        int v = d->inputs[i];
        if (v < 0 || v >= g->nvalues) OPFAIL(ROTOR_ERR_INPUT, "input %d names no value", i);
    }
    for (int i = 0; i < d->noutputs; i++) {
        int v = d->outputs[i];
        if (v < 0 || v >= g->nvalues) OPFAIL(ROTOR_ERR_INPUT, "output %d names no value", i);
        const rotor_value *x = &g->values[v];
        if (x->producer >= 0)
            OPFAIL(ROTOR_ERR_INPUT, "output '%s' is already produced by op '%s'", x->name,
                   g->ops[x->producer].name);
        if (x->consumers > 0)
            OPFAIL(ROTOR_ERR_INPUT, "output '%s' is read by an earlier operator (not topological order)", x->name);
        if (x->role == ROTOR_ROLE_WEIGHT) OPFAIL(ROTOR_ERR_INPUT, "output '%s' is a weight", x->name);
        for (int j = 0; j < i; j++)
            if (d->outputs[j] == v) OPFAIL(ROTOR_ERR_INPUT, "output '%s' is listed twice", x->name);
        for (int j = 0; j < d->ninputs; j++)
            if (d->inputs[j] == v) OPFAIL(ROTOR_ERR_INPUT, "'%s' is both an input and an output", x->name);
    }
    return ROTOR_OK;
}

/* Names op's bound expression tensors after d (tensor_value, view), each
 * checked against the value it names; then its FLOPs. */
static rotor_status bind_tensors(const rotor_graph *g, const rotor_op_desc *d, rotor_op *op, rotor_error *err) {
    for (int t = 0; t < op->expr.ntensors; t++) {
        int v = d->tensor_value[t];
        op->tensor_value[t] = v < 0 ? -1 : v;
        if (v < 0) continue;
        if (v >= g->nvalues) OPFAIL(ROTOR_ERR_INPUT, "expression tensor %d names no value", t);
        char why[ROTOR_ERROR_MAX];
        if (!tensor_matches(g, &op->expr, t, v, d->inputs, d->ninputs, d->outputs, d->noutputs, why, sizeof why))
            OPFAIL(ROTOR_ERR_INPUT, "%s", why);
        if (d->view && d->view[t].unknown && !d->view[t].set) op->view[t].unknown = true;
        if (d->view && d->view[t].set) {
            const rotor_view *w = &d->view[t];
            for (int k = 0; k < op->expr.tensors[t].ndims; k++)
                if (w->dim[k] < 0 || w->dim[k] >= g->values[v].rank)
                    OPFAIL(ROTOR_ERR_INPUT, "the view of tensor %s maps dimension %d to value dimension %d of "
                           "'%s', which has rank %d", op->expr.tensors[t].name, k, w->dim[k], g->values[v].name,
                           g->values[v].rank);
            op->view[t] = *w;
        }
    }
    op->flops = rotor_expr_flops(&op->expr);
    return ROTOR_OK;
}

/* Counts op's bytes, copies d's name and value lists into it and appends it
 * (op's expression, tensors and FLOPs are set). */
static rotor_status append_op(rotor_graph *g, const rotor_op_desc *d, rotor_op *op, int *out, rotor_error *err) {
    int64_t bytes = 0, wbytes = 0;
    for (int i = 0; i < d->ninputs; i++) {
        const rotor_value *x = &g->values[d->inputs[i]];
        if (!rotor_add_i64(bytes, x->bytes, &bytes)) OPFAIL(ROTOR_ERR_INPUT, "byte count overflows 64 bits");
        if (x->role == ROTOR_ROLE_WEIGHT && !rotor_add_i64(wbytes, x->bytes, &wbytes))
            OPFAIL(ROTOR_ERR_INPUT, "byte count overflows 64 bits");
    }
    for (int i = 0; i < d->noutputs; i++)
        if (!rotor_add_i64(bytes, g->values[d->outputs[i]].bytes, &bytes))
            OPFAIL(ROTOR_ERR_INPUT, "byte count overflows 64 bits");
    op->bytes = bytes;
    op->weight_bytes = wbytes;
    snprintf(op->type, sizeof op->type, "%s", d->type);
    op->name = strdup(d->name);
    op->inputs = malloc(sizeof(int) * (size_t)(d->ninputs ? d->ninputs : 1));
    op->outputs = malloc(sizeof(int) * (size_t)d->noutputs);
    if (!op->name || !op->inputs || !op->outputs ||
        !grow((void **)&g->ops, &g->ops_cap, g->nops + 1, sizeof *g->ops)) {
        free(op->name);
        free(op->inputs);
        free(op->outputs);
        return rotor_nomem(err);
    }
    if (d->ninputs) memcpy(op->inputs, d->inputs, sizeof(int) * (size_t)d->ninputs);
    memcpy(op->outputs, d->outputs, sizeof(int) * (size_t)d->noutputs);
    op->ninputs = d->ninputs;
    op->noutputs = d->noutputs;
    for (int i = 0; i < d->ninputs; i++) g->values[d->inputs[i]].consumers++;
    for (int i = 0; i < d->noutputs; i++) g->values[d->outputs[i]].producer = g->nops;
    g->ops[g->nops] = *op;
    if (out) *out = g->nops;
    g->nops++;
    return ROTOR_OK;
}

/* An operator with no expression tensors named yet. */
static void op_blank(rotor_op *op) {
    memset(op, 0, sizeof *op);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) op->tensor_value[t] = -1;
}

/* The vendor half of both constructors: the vendor rule's FLOPs, then the
 * append. */
static rotor_status append_vendor(rotor_graph *g, const rotor_op_desc *d, rotor_op *op, int *out,
                                  rotor_error *err) {
    op->vendor = true;
    op->flops = vendor_flops(g, d->type, d->inputs, d->ninputs, d->outputs, d->noutputs);
    return append_op(g, d, op, out, err);
}

rotor_status rotor_graph_add_op(rotor_graph *g, const rotor_op_desc *d, int *out, rotor_error *err) {
    rotor_status st = check_ends(g, d, err);
    if (st) return st;
    rotor_op op;
    op_blank(&op);
    if (!d->expr) return append_vendor(g, d, &op, out, err);
    rotor_error e2;
    if (rotor_expr_make(d->expr, d->dims, &op.expr, &e2) != ROTOR_OK)
        OPFAIL(ROTOR_ERR_INPUT, "expression '%s' (%s): %s", d->expr, d->dims ? d->dims : "", e2.msg);
    if ((st = bind_tensors(g, d, &op, err))) return st;
    return append_op(g, d, &op, out, err);
}

/* Whether e is what rotor_expr_make leaves: bound, its counts in range, every
 * extent in 1..ROTOR_EXTENT_MAX and the iteration space countable in int64
 * with rotor_expr_bind's headroom (a copy from another graph always is). */
static bool bound_valid(const rotor_expr *e) {
    if (!e->bound || e->naxes < 0 || e->naxes > ROTOR_MAX_AXES || e->ntensors < 1 || e->ntensors > ROTOR_MAX_TENSORS)
        return false;
    int64_t points = 1;
    for (int a = 0; a < e->naxes; a++)
        if (e->extent[a] < 1 || e->extent[a] > ROTOR_EXTENT_MAX || !rotor_mul_i64(points, e->extent[a], &points) ||
            points > INT64_MAX / 64)
            return false;
    return true;
}

rotor_status rotor_graph_add_bound_op(rotor_graph *g, const rotor_op_desc *d, const rotor_expr *expr, int *out,
                                      rotor_error *err) {
    rotor_status st = check_ends(g, d, err);
    if (st) return st;
    rotor_op op;
    op_blank(&op);
    if (!expr) return append_vendor(g, d, &op, out, err);
    if (!bound_valid(expr))
        OPFAIL(ROTOR_ERR_INPUT, "expression '%.*s' is not bound as rotor_expr_bind binds (axes, tensors, extents)",
               ROTOR_EXPR_TEXT_MAX - 1, expr->text);
    op.expr = *expr;
    if ((st = bind_tensors(g, d, &op, err))) return st;
    return append_op(g, d, &op, out, err);
}

rotor_status rotor_graph_set_data(rotor_graph *g, int v, const double *data, rotor_error *err) {
    if (v < 0 || v >= g->nvalues) return rotor_fail(err, ROTOR_ERR_INPUT, "value %d does not exist", v);
    rotor_value *x = &g->values[v];
    size_t n = (size_t)x->elements;
    if ((int64_t)n != x->elements || n > SIZE_MAX / sizeof(double))
        return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s' is too large to hold", x->name);
    double *p = malloc(n * sizeof *p);
    if (!p) return rotor_nomem(err);
    memcpy(p, data, n * sizeof *p);
    free(x->data);
    x->data = p;
    return ROTOR_OK;
}

rotor_status rotor_graph_add_attr(rotor_graph *g, int op, const char *name, const int64_t *ints, int nints,
                                  const double *floats, int nfloats, const char *str, rotor_error *err) {
    if (op < 0 || op >= g->nops) return rotor_fail(err, ROTOR_ERR_INPUT, "operator %d does not exist", op);
    if (nints < 0 || nfloats < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "negative attribute length");
    rotor_op *o = &g->ops[op];
    rotor_attr a = {0};
    a.name = strdup(name);
    a.ints = nints ? malloc(sizeof(int64_t) * (size_t)nints) : NULL;
    a.floats = nfloats ? malloc(sizeof(double) * (size_t)nfloats) : NULL;
    a.str = str ? strdup(str) : NULL;
    rotor_attr *grown = realloc(o->attrs, sizeof *grown * (size_t)(o->nattrs + 1));
    if (grown) o->attrs = grown;
    if (!a.name || (nints && !a.ints) || (nfloats && !a.floats) || (str && !a.str) || !grown) {
        free(a.name), free(a.ints), free(a.floats), free(a.str);
        return rotor_nomem(err);
    }
    if (nints) memcpy(a.ints, ints, sizeof(int64_t) * (size_t)nints);
    if (nfloats) memcpy(a.floats, floats, sizeof(double) * (size_t)nfloats);
    a.nints = nints;
    a.nfloats = nfloats;
    o->attrs[o->nattrs++] = a;
    return ROTOR_OK;
}

const rotor_attr *rotor_op_attr(const rotor_op *op, const char *name) {
    for (int k = 0; k < op->nattrs; k++)
        if (!strcmp(op->attrs[k].name, name)) return &op->attrs[k];
    return NULL;
}

int rotor_op_input_at(const rotor_op *op, int pos) {
    const rotor_attr *a = rotor_op_attr(op, "@in");
    if (!a) return pos >= 0 && pos < op->ninputs ? op->inputs[pos] : -1;
    for (int i = 0; i < a->nints && i < op->ninputs; i++)
        if (a->ints[i] == pos) return op->inputs[i];
    return -1;
}

void rotor_graph_totals_of(const rotor_graph *g, rotor_graph_totals *out) {
    memset(out, 0, sizeof *out);
    out->ops = g->nops;
    for (int i = 0; i < g->nops; i++) {
        out->flops += g->ops[i].flops;
        if (g->ops[i].vendor) out->vendor_ops++;
    }
    for (int i = 0; i < g->nvalues; i++) {
        const rotor_value *v = &g->values[i];
        if (v->role == ROTOR_ROLE_WEIGHT) {
            if (v->consumers == 0) continue; /* not read by any operator */
            out->weight_params += v->elements;
            out->weight_bytes += v->bytes;
        } else if (v->role == ROTOR_ROLE_KV_CACHE) {
            out->kv_bytes += v->bytes;
        } else {
            out->activation_bytes += v->bytes;
        }
    }
}

int rotor_graph_count_type(const rotor_graph *g, const char *type) {
    int n = 0;
    for (int i = 0; i < g->nops; i++) n += strcmp(g->ops[i].type, type) == 0;
    return n;
}

typedef struct hist_row {
    const char *type;
    int count;
} hist_row;

static int hist_cmp(const void *a, const void *b) {
    const hist_row *x = a, *y = b;
    if (x->count != y->count) return y->count - x->count;
    return strcmp(x->type, y->type);
}

char *rotor_graph_histogram(const rotor_graph *g) {
    hist_row *rows = calloc((size_t)(g->nops ? g->nops : 1), sizeof *rows);
    if (!rows) return NULL;
    int n = 0;
    for (int i = 0; i < g->nops; i++) {
        int j = 0;
        while (j < n && strcmp(rows[j].type, g->ops[i].type) != 0) j++;
        if (j == n) rows[n++].type = g->ops[i].type;
        rows[j].count++;
    }
    qsort(rows, (size_t)n, sizeof *rows, hist_cmp);
    size_t cap = 16 + (size_t)n * (ROTOR_OP_TYPE_MAX + 16), len = 0;
    char *s = malloc(cap);
    if (!s) {
        free(rows);
        return NULL;
    }
    s[0] = '\0';
    for (int j = 0; j < n; j++)
        len += (size_t)snprintf(s + len, cap - len, "%s%s %d", j ? ", " : "", rows[j].type, rows[j].count);
    free(rows);
    return s;
}

void rotor_shape_string(int rank, const int64_t *shape, char *buf, int cap) {
    if (cap <= 0) return;
    if (rank == 0) {
        snprintf(buf, (size_t)cap, "scalar");
        return;
    }
    int n = 0;
    buf[0] = '\0';
    for (int d = 0; d < rank && n < cap; d++)
        n += snprintf(buf + n, (size_t)(cap - n), "%s%lld", d ? "x" : "", (long long)shape[d]);
}

void rotor_graph_shape_string(const rotor_value *v, char *buf, int cap) { rotor_shape_string(v->rank, v->shape, buf, cap); }

static cJSON *shape_json(const rotor_value *v) {
    cJSON *a = cJSON_CreateArray();
    for (int d = 0; a && d < v->rank; d++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v->shape[d]));
    return a;
}

static cJSON *names_json(const rotor_graph *g, const int *idx, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(g->values[idx[i]].name));
    return a;
}

/* A new object at the end of list, its first key "name" (a value's or an
 * operator's); NULL when out of memory. */
static cJSON *named_entry(cJSON *list, const char *name) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddItemToArray(list, o);
    cJSON_AddStringToObject(o, "name", name);
    return o;
}

char *rotor_graph_to_json(const rotor_graph *g) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    rotor_graph_totals t;
    rotor_graph_totals_of(g, &t);
    cJSON_AddStringToObject(root, "format", "rotor-graph");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "name", g->name);
    cJSON *tot = cJSON_AddObjectToObject(root, "totals");
    if (tot) {
        cJSON_AddNumberToObject(tot, "ops", t.ops);
        cJSON_AddNumberToObject(tot, "vendor_ops", t.vendor_ops);
        cJSON_AddNumberToObject(tot, "flops", t.flops);
        cJSON_AddNumberToObject(tot, "weight_params", (double)t.weight_params);
        cJSON_AddNumberToObject(tot, "weight_bytes", (double)t.weight_bytes);
        cJSON_AddNumberToObject(tot, "kv_cache_bytes", (double)t.kv_bytes);
        cJSON_AddNumberToObject(tot, "activation_bytes", (double)t.activation_bytes);
    }
    cJSON *vals = cJSON_AddArrayToObject(root, "values");
    for (int i = 0; vals && i < g->nvalues; i++) {
        const rotor_value *v = &g->values[i];
        cJSON *o = named_entry(vals, v->name);
        if (!o) break;
        cJSON_AddStringToObject(o, "dtype", rotor_dtype_name(v->dtype));
        cJSON_AddItemToObject(o, "shape", shape_json(v));
        cJSON_AddStringToObject(o, "role", rotor_role_name(v->role));
        cJSON_AddNumberToObject(o, "bytes", (double)v->bytes);
        if (v->is_output && !v->alias_only) cJSON_AddBoolToObject(o, "output", 1);
    }
    if (g->naliases) {
        cJSON *al = cJSON_AddArrayToObject(root, "aliases");
        for (int i = 0; al && i < g->naliases; i++) {
            cJSON *o = named_entry(al, g->aliases[i].name);
            if (!o) break;
            cJSON_AddStringToObject(o, "value", g->values[g->aliases[i].value].name);
        }
    }
    cJSON *ops = cJSON_AddArrayToObject(root, "ops");
    for (int i = 0; ops && i < g->nops; i++) {
        const rotor_op *op = &g->ops[i];
        cJSON *o = named_entry(ops, op->name);
        if (!o) break;
        cJSON_AddStringToObject(o, "type", op->type);
        if (op->vendor) {
            cJSON_AddNullToObject(o, "expr");
        } else {
            char dims[512];
            rotor_expr_dims_string(&op->expr, dims, sizeof dims);
            cJSON_AddStringToObject(o, "expr", op->expr.text);
            cJSON_AddStringToObject(o, "dims", dims);
            cJSON *tv = cJSON_AddArrayToObject(o, "tensors");
            for (int k = 0; tv && k < op->expr.ntensors; k++) {
                int v = op->tensor_value[k];
                cJSON_AddItemToArray(tv, v >= 0 ? cJSON_CreateString(g->values[v].name) : cJSON_CreateNull());
            }
        }
        cJSON_AddItemToObject(o, "inputs", names_json(g, op->inputs, op->ninputs));
        cJSON_AddItemToObject(o, "outputs", names_json(g, op->outputs, op->noutputs));
        cJSON_AddNumberToObject(o, "flops", op->flops);
        cJSON_AddNumberToObject(o, "bytes", (double)op->bytes);
        cJSON_AddNumberToObject(o, "weight_bytes", (double)op->weight_bytes);
        if (op->nfused) {
            cJSON_AddStringToObject(o, "fused", op->fused);
            cJSON_AddNumberToObject(o, "nfused", op->nfused);
        }
    }
    char *s = rotor_json_stamp(root) ? cJSON_PrintUnformatted(root) : NULL; /* base/jsontext.h */
    cJSON_Delete(root);
    return s;
}

rotor_status rotor_graph_set_output(rotor_graph *g, int v, rotor_error *err) {
    if (v < 0 || v >= g->nvalues) return rotor_fail(err, ROTOR_ERR_INPUT, "output %d names no value", v);
    g->values[v].is_output = true;
    g->values[v].alias_only = false;
    return ROTOR_OK;
}

rotor_status rotor_graph_add_output_alias(rotor_graph *g, const char *name, int v, rotor_error *err) {
    if (v < 0 || v >= g->nvalues) return rotor_fail(err, ROTOR_ERR_INPUT, "output alias '%s' names no value", name);
    if (rotor_graph_find_value(g, name) >= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "output alias '%s' is the name of a value", name);
    for (int i = 0; i < g->naliases; i++)
        if (!strcmp(g->aliases[i].name, name))
            return rotor_fail(err, ROTOR_ERR_INPUT, "output alias '%s' is given twice", name);
    if (g->naliases == g->aliases_cap) {
        int cap = g->aliases_cap ? 2 * g->aliases_cap : 4;
        rotor_output_alias *a = realloc(g->aliases, sizeof *a * (size_t)cap);
        if (!a) return rotor_nomem(err);
        g->aliases = a;
        g->aliases_cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return rotor_nomem(err);
    g->aliases[g->naliases++] = (rotor_output_alias){copy, v};
    if (!g->values[v].is_output) g->values[v].alias_only = true;
    g->values[v].is_output = true;
    return ROTOR_OK;
}

int rotor_graph_outputs(const rotor_graph *g, rotor_named_output *out, int cap) {
    int n = 0;
    for (int v = 0; v < g->nvalues; v++)
        if (g->values[v].is_output && !g->values[v].alias_only) {
            if (n < cap) out[n] = (rotor_named_output){g->values[v].name, v};
            n++;
        }
    for (int i = 0; i < g->naliases; i++) {
        if (n < cap) out[n] = (rotor_named_output){g->aliases[i].name, g->aliases[i].value};
        n++;
    }
    return n;
}

/* Why g's output aliases are inconsistent, into why (left empty if not). */
static void aliases_why(const rotor_graph *g, char *why, size_t cap) {
    for (int i = 0; i < g->naliases && !why[0]; i++) {
        const rotor_output_alias *a = &g->aliases[i];
        if (!a->name || a->value < 0 || a->value >= g->nvalues || !g->values[a->value].is_output)
            snprintf(why, cap, "output alias %d names no output value", i);
        else if (rotor_graph_find_value(g, a->name) >= 0)
            snprintf(why, cap, "output alias '%s' is the name of a value", a->name);
        for (int j = 0; j < i && !why[0]; j++)
            if (!strcmp(g->aliases[j].name, a->name)) snprintf(why, cap, "output alias '%s' is given twice", a->name);
    }
}

#define VFAIL(...) return rotor_fail(err, ROTOR_ERR_INPUT, __VA_ARGS__)

rotor_status rotor_graph_validate(const rotor_graph *g, rotor_error *err) {
    if (g->nvalues < 0 || g->nops < 0 || (g->nvalues && !g->values) || (g->nops && !g->ops))
        VFAIL("graph '%s': inconsistent counts", g->name);
    int *consumers = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *consumers);
    int *producer = malloc(sizeof(int) * (size_t)(g->nvalues ? g->nvalues : 1));
    if (!consumers || !producer) {
        free(consumers);
        free(producer);
        return rotor_nomem(err);
    }
    for (int v = 0; v < g->nvalues; v++) producer[v] = -1;
    rotor_status st = ROTOR_OK;
    char why[ROTOR_ERROR_MAX];
    why[0] = '\0';
    for (int v = 0; v < g->nvalues && !why[0]; v++) {
        const rotor_value *x = &g->values[v];
        if (!x->name || !*x->name) snprintf(why, sizeof why, "value %d has no name", v);
        else if (rotor_graph_find_value(g, x->name) != v)
            snprintf(why, sizeof why, "value '%s' is defined twice", x->name);
        else if ((unsigned)x->role > ROTOR_ROLE_KV_CACHE)
            snprintf(why, sizeof why, "value '%s' has an unknown role", x->name);
        else {
            int64_t n = 1;
            bool ok = x->rank >= 0 && x->rank <= ROTOR_GRAPH_MAX_RANK;
            for (int d = 0; ok && d < x->rank; d++) ok = x->shape[d] >= 1 && rotor_mul_i64(n, x->shape[d], &n);
            int64_t nb;
            if (!ok || n != x->elements || !rotor_dtype_storage(x->dtype, n, &nb) || x->bytes != nb)
                snprintf(why, sizeof why, "value '%s': shape, element and byte counts disagree", x->name);
        }
    }
    for (int i = 0; i < g->nops && !why[0]; i++) {
        const rotor_op *op = &g->ops[i];
        const char *nm = op->name ? op->name : "?";
        if (op->noutputs < 1 || op->ninputs < 0) {
            snprintf(why, sizeof why, "op '%s' (%s): needs an output", nm, op->type);
            break;
        }
        for (int k = 0; k < op->ninputs && !why[0]; k++) {
            int v = op->inputs[k];
            if (v < 0 || v >= g->nvalues) snprintf(why, sizeof why, "op '%s' (%s): input %d names no value", nm, op->type, k);
            else if (producer[v] < 0 && g->values[v].producer >= 0)
                snprintf(why, sizeof why, "op '%s' (%s): input '%s' is produced later (not topological order)", nm,
                         op->type, g->values[v].name);
            else consumers[v]++;
        }
        for (int k = 0; k < op->noutputs && !why[0]; k++) {
            int v = op->outputs[k];
            if (v < 0 || v >= g->nvalues) snprintf(why, sizeof why, "op '%s' (%s): output %d names no value", nm, op->type, k);
            else if (producer[v] >= 0 || g->values[v].producer != i)
                snprintf(why, sizeof why, "op '%s' (%s): output '%s' has another producer", nm, op->type,
                         g->values[v].name);
            else if (consumers[v] > 0)
                snprintf(why, sizeof why, "op '%s' (%s): output '%s' is read by an earlier operator", nm, op->type,
                         g->values[v].name);
            else if (g->values[v].role == ROTOR_ROLE_WEIGHT)
                snprintf(why, sizeof why, "op '%s' (%s): output '%s' is a weight", nm, op->type, g->values[v].name);
            else producer[v] = i;
        }
        if (why[0] || op->vendor) continue;
        if (!op->expr.bound) {
            snprintf(why, sizeof why, "op '%s' (%s): expression is not bound", nm, op->type);
            break;
        }
        for (int t = 0; t < op->expr.ntensors && !why[0]; t++) {
            int v = op->tensor_value[t];
            if (v < 0) continue;
            char m[ROTOR_ERROR_MAX - 64];
            if (v >= g->nvalues) snprintf(why, sizeof why, "op '%s' (%s): expression tensor %d names no value", nm, op->type, t);
            else if (!tensor_matches(g, &op->expr, t, v, op->inputs, op->ninputs, op->outputs, op->noutputs, m, sizeof m))
                snprintf(why, sizeof why, "op '%s' (%s): %s", nm, op->type, m);
        }
    }
    for (int v = 0; v < g->nvalues && !why[0]; v++) {
        if (producer[v] != g->values[v].producer)
            snprintf(why, sizeof why, "value '%s': recorded producer %d, but op %d writes it", g->values[v].name,
                     g->values[v].producer, producer[v]);
        else if (consumers[v] != g->values[v].consumers)
            snprintf(why, sizeof why, "value '%s': recorded %d consumers, counted %d", g->values[v].name,
                     g->values[v].consumers, consumers[v]);
    }
    if (!why[0]) aliases_why(g, why, sizeof why);
    if (why[0]) st = rotor_fail(err, ROTOR_ERR_INPUT, "graph '%s': %s", g->name, why);
    free(consumers);
    free(producer);
    return st;
}

/* Appends to buf at *n without overrunning cap; *n stops at cap - 1. */
static void put(char *buf, int cap, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, int cap, int *n, const char *fmt, ...) {
    if (*n >= cap - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *n, (size_t)(cap - *n), fmt, ap);
    va_end(ap);
    if (k < 0) return;
    *n = *n + k < cap - 1 ? *n + k : cap - 1;
}

void rotor_graph_op_string(const rotor_graph *g, int i, char *buf, int cap) {
    if (cap <= 0) return;
    buf[0] = '\0';
    if (i < 0 || i >= g->nops) return;
    const rotor_op *op = &g->ops[i];
    int n = 0;
    if (op->vendor) {
        put(buf, cap, &n, "vendor %s(", op->type);
        for (int k = 0; k < op->ninputs; k++) put(buf, cap, &n, "%s%s", k ? ", " : "", g->values[op->inputs[k]].name);
        put(buf, cap, &n, ") -> ");
        for (int k = 0; k < op->noutputs; k++) put(buf, cap, &n, "%s%s", k ? ", " : "", g->values[op->outputs[k]].name);
        return;
    }
    char dims[ROTOR_EXPR_TEXT_MAX];
    rotor_expr_dims_string(&op->expr, dims, sizeof dims);
    put(buf, cap, &n, "%s  (%s)", op->expr.text, dims);
    if (op->nfused) put(buf, cap, &n, "  + %s", op->fused);
}

void rotor_graph_op_tensors_string(const rotor_graph *g, int i, char *buf, int cap) {
    if (cap <= 0) return;
    buf[0] = '\0';
    if (i < 0 || i >= g->nops || g->ops[i].vendor) return;
    const rotor_op *op = &g->ops[i];
    int n = 0;
    for (int t = 0; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        put(buf, cap, &n, "%s%s=", t ? ", " : "", op->expr.tensors[t].name);
        if (v < 0) {
            put(buf, cap, &n, "-");
            continue;
        }
        char shape[160];
        rotor_graph_shape_string(&g->values[v], shape, sizeof shape);
        put(buf, cap, &n, "%s %s", g->values[v].name, shape);
    }
}
