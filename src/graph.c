/* graph.c — the model graph: values, operators with bound tensor expressions,
 * FLOPs and bytes (docs/graph.md).  Every mutation validates, so the op array
 * is always a topological order and every expression matches its tensors. */
#include "rotor/graph.h"

#include <cjson/cJSON.h>
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
};

int64_t rotor_dtype_bytes(rotor_dtype t) {
    return (unsigned)t < ROTOR_DTYPE_COUNT ? dtypes[t].bytes : 0;
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
    for (int i = 0; i < g->nvalues; i++) free(g->values[i].name);
    for (int i = 0; i < g->nops; i++) {
        free(g->ops[i].name);
        free(g->ops[i].inputs);
        free(g->ops[i].outputs);
    }
    free(g->values);
    free(g->ops);
    memset(g, 0, sizeof *g);
}

int rotor_graph_find_value(const rotor_graph *g, const char *name) {
    for (int i = 0; i < g->nvalues; i++)
        if (strcmp(g->values[i].name, name) == 0) return i;
    return -1;
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
    int64_t bytes;
    if (!rotor_mul_i64(n, rotor_dtype_bytes(dtype), &bytes))
        return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s': byte count overflows 64 bits", name);
    if (rotor_graph_find_value(g, name) >= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "value '%s' is defined twice", name);
    if (!grow((void **)&g->values, &g->values_cap, g->nvalues + 1, sizeof *g->values))
        return rotor_fail(err, ROTOR_ERR_NOMEM, "out of memory");
    char *copy = strdup(name);
    if (!copy) return rotor_fail(err, ROTOR_ERR_NOMEM, "out of memory");
    rotor_value *v = &g->values[g->nvalues];
    memset(v, 0, sizeof *v);
    v->name = copy;
    v->rank = rank;
    for (int d = 0; d < rank; d++) v->shape[d] = shape[d];
    v->elements = n;
    v->bytes = bytes;
    v->dtype = dtype;
    v->role = role;
    v->producer = -1;
    if (out) *out = g->nvalues;
    g->nvalues++;
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

#define OPFAIL(code, ...)                                                             \
    do {                                                                              \
        rotor_fail(err, code, __VA_ARGS__);                                           \
        snprintf(prefix, sizeof prefix, "op '%s' (%s)", d->name, d->type);           \
        rotor_error_prefix(err, prefix);                                              \
        return code;                                                                  \
    } while (0)

rotor_status rotor_graph_add_op(rotor_graph *g, const rotor_op_desc *d, int *out, rotor_error *err) {
    char prefix[160];
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
    rotor_op op;
    memset(&op, 0, sizeof op);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) op.tensor_value[t] = -1;
    if (d->expr) {
        rotor_error e2;
        if (rotor_expr_make(d->expr, d->dims, &op.expr, &e2) != ROTOR_OK)
            OPFAIL(ROTOR_ERR_INPUT, "expression '%s' (%s): %s", d->expr, d->dims ? d->dims : "", e2.msg);
        for (int t = 0; t < op.expr.ntensors; t++) {
            int v = d->tensor_value[t];
            op.tensor_value[t] = v;
            if (v < 0) continue;
            if (v >= g->nvalues) OPFAIL(ROTOR_ERR_INPUT, "expression tensor %d names no value", t);
            bool plain;
            int64_t n = expr_tensor_elements(&op.expr, t, &plain);
            const rotor_value *x = &g->values[v];
            if (plain && (t == 0 ? n != x->elements : n > x->elements))
                OPFAIL(ROTOR_ERR_INPUT, "expression tensor %s has %lld elements but value '%s' has %lld",
                       op.expr.tensors[t].name, (long long)n, x->name, (long long)x->elements);
        }
        op.flops = rotor_expr_flops(&op.expr);
    } else {
        /* Vendor op: one vector-rate FLOP per element read or written. */
        op.vendor = true;
        double f = 0;
        for (int i = 0; i < d->ninputs; i++) f += (double)g->values[d->inputs[i]].elements;
        for (int i = 0; i < d->noutputs; i++) f += (double)g->values[d->outputs[i]].elements;
        op.flops = f;
    }
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
    op.bytes = bytes;
    op.weight_bytes = wbytes;
    snprintf(op.type, sizeof op.type, "%s", d->type);
    op.name = strdup(d->name);
    op.inputs = malloc(sizeof(int) * (size_t)(d->ninputs ? d->ninputs : 1));
    op.outputs = malloc(sizeof(int) * (size_t)d->noutputs);
    if (!op.name || !op.inputs || !op.outputs ||
        !grow((void **)&g->ops, &g->ops_cap, g->nops + 1, sizeof *g->ops)) {
        free(op.name);
        free(op.inputs);
        free(op.outputs);
        return rotor_fail(err, ROTOR_ERR_NOMEM, "out of memory");
    }
    if (d->ninputs) memcpy(op.inputs, d->inputs, sizeof(int) * (size_t)d->ninputs);
    memcpy(op.outputs, d->outputs, sizeof(int) * (size_t)d->noutputs);
    op.ninputs = d->ninputs;
    op.noutputs = d->noutputs;
    for (int i = 0; i < d->ninputs; i++) g->values[d->inputs[i]].consumers++;
    for (int i = 0; i < d->noutputs; i++) g->values[d->outputs[i]].producer = g->nops;
    g->ops[g->nops] = op;
    if (out) *out = g->nops;
    g->nops++;
    return ROTOR_OK;
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

void rotor_graph_shape_string(const rotor_value *v, char *buf, int cap) {
    if (cap <= 0) return;
    if (v->rank == 0) {
        snprintf(buf, (size_t)cap, "scalar");
        return;
    }
    int n = 0;
    buf[0] = '\0';
    for (int d = 0; d < v->rank && n < cap; d++)
        n += snprintf(buf + n, (size_t)(cap - n), "%s%lld", d ? "x" : "", (long long)v->shape[d]);
}

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
        cJSON *o = cJSON_CreateObject();
        if (!o) break;
        cJSON_AddStringToObject(o, "name", v->name);
        cJSON_AddStringToObject(o, "dtype", rotor_dtype_name(v->dtype));
        cJSON_AddItemToObject(o, "shape", shape_json(v));
        cJSON_AddStringToObject(o, "role", rotor_role_name(v->role));
        cJSON_AddNumberToObject(o, "bytes", (double)v->bytes);
        if (v->is_output) cJSON_AddBoolToObject(o, "output", 1);
        cJSON_AddItemToArray(vals, o);
    }
    cJSON *ops = cJSON_AddArrayToObject(root, "ops");
    for (int i = 0; ops && i < g->nops; i++) {
        const rotor_op *op = &g->ops[i];
        cJSON *o = cJSON_CreateObject();
        if (!o) break;
        cJSON_AddStringToObject(o, "name", op->name);
        cJSON_AddStringToObject(o, "type", op->type);
        if (op->vendor) {
            cJSON_AddNullToObject(o, "expr");
        } else {
            char dims[512];
            rotor_expr_dims_string(&op->expr, dims, sizeof dims);
            cJSON_AddStringToObject(o, "expr", op->expr.text);
            cJSON_AddStringToObject(o, "dims", dims);
        }
        cJSON_AddItemToObject(o, "inputs", names_json(g, op->inputs, op->ninputs));
        cJSON_AddItemToObject(o, "outputs", names_json(g, op->outputs, op->noutputs));
        cJSON_AddNumberToObject(o, "flops", op->flops);
        cJSON_AddNumberToObject(o, "bytes", (double)op->bytes);
        cJSON_AddNumberToObject(o, "weight_bytes", (double)op->weight_bytes);
        if (op->nfused) cJSON_AddStringToObject(o, "fused", op->fused);
        cJSON_AddItemToArray(ops, o);
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}
