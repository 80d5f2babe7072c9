/* onnx.c — reading an ONNX model: decode (protobuf-c on Debian's onnx.proto),
 * bind symbolic dimensions, sort the nodes, infer every shape and fold every
 * node whose inputs are all constant (docs/onnx.md).  lower.c then turns the
 * nodes that are left into operators.
 *
 * Decisions where ONNX leaves room (docs/onnx.md repeats them):
 *  - Nodes are sorted with Kahn's algorithm, taking the ready node that comes
 *    first in the file, so a sorted file keeps its order and an unsorted one
 *    gets a deterministic order.
 *  - A node whose inputs are all constant is folded: its outputs become
 *    constants.  Small constants (<= OX_DATA_MAX elements) carry their data,
 *    so Shape/Gather/Concat/Reshape chains fold to the numbers a later Reshape
 *    or Slice needs; large ones (weights, a Transpose of a weight) keep only
 *    their shape, which is all planning needs.  External-data and stripped
 *    initializers are the same: their shape suffices.
 *  - Shapes are inferred by rotor, not read from value_info: exports often
 *    leave it out or leave it symbolic.
 *  - A node whose output shape depends on run-time data (NonZero, a Reshape
 *    to a computed non-constant shape) is refused: plans need static shapes.
 *  - Tensors hold at most 8 dimensions (ROTOR_GRAPH_MAX_RANK). */
#include "onnxir.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors -------------------------------------------------------------- */

static const char *node_domain(const Onnx__NodeProto *p) {
    return (!p->domain || !*p->domain) ? "ai.onnx" : p->domain;
}

rotor_status ox_node_fail(const ox_model *m, const ox_node *n, rotor_error *err, rotor_status code,
                          const char *fmt, ...) {
    char msg[ROTOR_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rotor_fail(err, code, "%s: node '%s' (op %s, domain %s): %s", m->label, n->name,
                      n->p->op_type ? n->p->op_type : "?", n->domain, msg);
}

#define NFAIL(...) return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, __VA_ARGS__)

/* ---- value table ---------------------------------------------------------- */

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int find_val(const ox_model *m, const char *name) {
    if (!m->index_cap) return -1;
    size_t mask = (size_t)m->index_cap - 1;
    for (size_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
        int e = m->index[i];
        if (!e) return -1;
        if (strcmp(m->vals[e - 1].name, name) == 0) return e - 1;
    }
}

static bool index_grow(ox_model *m) {
    int cap = m->index_cap ? m->index_cap * 2 : 256;
    int *ix = calloc((size_t)cap, sizeof *ix);
    if (!ix) return false;
    free(m->index);
    m->index = ix;
    m->index_cap = cap;
    size_t mask = (size_t)cap - 1;
    for (int v = 0; v < m->nvals; v++) {
        size_t i = hash_name(m->vals[v].name) & mask;
        while (ix[i]) i = (i + 1) & mask;
        ix[i] = v + 1;
    }
    return true;
}

/* The value called name, created (undefined) on first use; -1 when out of memory. */
static int intern(ox_model *m, const char *name) {
    int v = find_val(m, name);
    if (v >= 0) return v;
    if (m->nvals == m->vals_cap) {
        int cap = m->vals_cap ? m->vals_cap * 2 : 256;
        ox_val *nv = realloc(m->vals, sizeof *nv * (size_t)cap);
        if (!nv) return -1;
        m->vals = nv;
        m->vals_cap = cap;
    }
    ox_val *x = &m->vals[m->nvals];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->producer = -1;
    x->alias = -1;
    x->gv = -1;
    m->nvals++;
    if (m->nvals * 2 > m->index_cap) {
        if (!index_grow(m)) return -1;
    } else {
        size_t mask = (size_t)m->index_cap - 1;
        size_t i = hash_name(name) & mask;
        while (m->index[i]) i = (i + 1) & mask;
        m->index[i] = m->nvals;
    }
    return m->nvals - 1;
}

int ox_resolve(const ox_model *m, int v) {
    while (v >= 0 && m->vals[v].alias >= 0) v = m->vals[v].alias;
    return v;
}

/* ---- dtypes and data ------------------------------------------------------ */

enum {
    T_UNDEF = 0, T_FLOAT = 1, T_UINT8, T_INT8, T_UINT16, T_INT16, T_INT32, T_INT64, T_STRING,
    T_BOOL, T_FLOAT16, T_DOUBLE, T_UINT32, T_UINT64, T_COMPLEX64, T_COMPLEX128, T_BFLOAT16,
    T_F8_E4M3FN, T_F8_E4M3FNUZ, T_F8_E5M2, T_F8_E5M2FNUZ
};

static bool map_dtype(int t, rotor_dtype *out) {
    static const int map[] = {
        [T_FLOAT] = ROTOR_DTYPE_F32,   [T_UINT8] = ROTOR_DTYPE_U8,     [T_INT8] = ROTOR_DTYPE_I8,
        [T_UINT16] = ROTOR_DTYPE_U16,  [T_INT16] = ROTOR_DTYPE_I16,    [T_INT32] = ROTOR_DTYPE_I32,
        [T_INT64] = ROTOR_DTYPE_I64,   [T_STRING] = -1,                [T_BOOL] = ROTOR_DTYPE_BOOL,
        [T_FLOAT16] = ROTOR_DTYPE_F16, [T_DOUBLE] = ROTOR_DTYPE_F64,   [T_UINT32] = ROTOR_DTYPE_U32,
        [T_UINT64] = ROTOR_DTYPE_U64,  [T_COMPLEX64] = ROTOR_DTYPE_C64, [T_COMPLEX128] = ROTOR_DTYPE_C128,
        [T_BFLOAT16] = ROTOR_DTYPE_BF16, [T_F8_E4M3FN] = ROTOR_DTYPE_F8, [T_F8_E4M3FNUZ] = ROTOR_DTYPE_F8,
        [T_F8_E5M2] = ROTOR_DTYPE_F8,  [T_F8_E5M2FNUZ] = ROTOR_DTYPE_F8,
    };
    if (t <= T_UNDEF || t > T_F8_E5M2FNUZ || map[t] < 0) return false;
    *out = (rotor_dtype)map[t];
    return true;
}

static bool is_float_type(int t) {
    return t == T_FLOAT || t == T_FLOAT16 || t == T_DOUBLE || t == T_BFLOAT16 ||
           (t >= T_F8_E4M3FN && t <= T_F8_E5M2FNUZ) || t == T_COMPLEX64 || t == T_COMPLEX128;
}

static const char *type_name(int t) {
    static const char *const names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16",
                                        "int32", "int64", "string", "bool", "float16", "double",
                                        "uint32", "uint64", "complex64", "complex128", "bfloat16",
                                        "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"};
    return t >= 0 && t <= T_F8_E5M2FNUZ ? names[t] : "unknown";
}

double ox_get(const ox_val *v, int64_t k) { return v->fv ? v->fv[k] : (double)v->iv[k]; }

static int64_t get_i(const ox_val *v, int64_t k) {
    if (v->iv) return v->iv[k];
    double x = v->fv[k];
    if (!(x == x)) return 0;
    if (x >= 9.2e18) return INT64_MAX;
    if (x <= -9.2e18) return INT64_MIN;
    return (int64_t)x;
}

static void free_data(ox_val *v) {
    free(v->iv);
    free(v->fv);
    v->iv = NULL;
    v->fv = NULL;
    v->has_data = false;
}

/* Storage for v's data (per its type), elems entries. */
static bool alloc_data(ox_val *v) {
    free_data(v);
    size_t n = (size_t)(v->elems > 0 ? v->elems : 1);
    if (is_float_type(v->onnx_type)) v->fv = calloc(n, sizeof(double));
    else v->iv = calloc(n, sizeof(int64_t));
    v->has_data = v->iv || v->fv;
    return v->has_data;
}

/* Stores x into element k, rounding into an integer type (ONNX casts truncate). */
static void put(ox_val *v, int64_t k, double x) {
    if (v->fv) {
        v->fv[k] = x;
        return;
    }
    if (v->onnx_type == T_BOOL) v->iv[k] = x != 0;
    else if (!(x == x)) v->iv[k] = 0;
    else if (x >= 9.2e18) v->iv[k] = INT64_MAX;
    else if (x <= -9.2e18) v->iv[k] = INT64_MIN;
    else v->iv[k] = (int64_t)x;
}

static double half_to_double(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, f = h & 1023;
    double x = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexp(f + 1024, e - 25);
    return s ? -x : x;
}

static double bf16_to_double(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Element count of a shape, checked. */
static bool shape_elems(int rank, const int64_t *shape, int64_t *out) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0 || !rotor_mul_i64(n, shape[i], &n)) return false;
    }
    *out = n;
    return true;
}

/* Fills v (shape, type and, if small, data) from a TensorProto.  what names it
 * in errors ("initializer 'w'", "attribute 'value'"). */
static rotor_status decode_tensor(const ox_model *m, const Onnx__TensorProto *t, ox_val *v,
                                  const char *what, rotor_error *err) {
    if (t->n_dims > OX_MAX_RANK)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s has rank %zu; rotor handles at most %d dimensions",
                          m->label, what, t->n_dims, OX_MAX_RANK);
    int type = t->has_data_type ? t->data_type : T_UNDEF;
    if (!map_dtype(type, &v->dtype))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s has data type %s (%d), which rotor does not handle",
                          m->label, what, type_name(type), type);
    v->onnx_type = type;
    v->rank = (int)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s has negative dimension %lld", m->label, what,
                              (long long)t->dims[i]);
        v->shape[i] = t->dims[i];
    }
    if (!shape_elems(v->rank, v->shape, &v->elems))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: element count overflows 64 bits", m->label, what);
    int64_t esize = rotor_dtype_bytes(v->dtype), nbytes;
    if (!rotor_mul_i64(v->elems, esize, &nbytes))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: byte count overflows 64 bits", m->label, what);
    bool external = (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
                    t->n_external_data > 0;
    size_t typed = 0;
    switch (type) {
    case T_FLOAT: typed = t->n_float_data; break;
    case T_COMPLEX64: typed = t->n_float_data / 2; break;
    case T_INT64: typed = t->n_int64_data; break;
    case T_DOUBLE: typed = t->n_double_data; break;
    case T_COMPLEX128: typed = t->n_double_data / 2; break;
    case T_UINT32: case T_UINT64: typed = t->n_uint64_data; break;
    default: typed = t->n_int32_data; break;
    }
    if (t->has_raw_data && t->raw_data.len > 0) {
        if ((int64_t)t->raw_data.len != nbytes)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: raw_data holds %zu bytes, its shape needs %lld",
                              m->label, what, t->raw_data.len, (long long)nbytes);
    } else if (typed > 0 && (int64_t)typed != v->elems) {
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: %zu values for %lld elements", m->label, what, typed,
                          (long long)v->elems);
    }
    bool raw = t->has_raw_data && t->raw_data.len > 0;
    if (external || v->elems > OX_DATA_MAX || type == T_COMPLEX64 || type == T_COMPLEX128) return ROTOR_OK;
    if (!raw && typed == 0 && v->elems > 0) return ROTOR_OK; /* stripped: the shape suffices */
    if (!alloc_data(v)) return rotor_nomem(err);
    const uint8_t *r = t->raw_data.data;
    for (int64_t k = 0; k < v->elems; k++) {
        double x = 0;
        int64_t xi = 0;
        bool isint = false;
        switch (type) {
        case T_FLOAT: {
            float f;
            if (raw) memcpy(&f, r + 4 * k, 4);
            else f = t->float_data[k];
            x = f;
            break;
        }
        case T_DOUBLE:
            if (raw) memcpy(&x, r + 8 * k, 8);
            else x = t->double_data[k];
            break;
        case T_FLOAT16: case T_BFLOAT16: {
            uint16_t h;
            if (raw) memcpy(&h, r + 2 * k, 2);
            else h = (uint16_t)t->int32_data[k];
            x = type == T_FLOAT16 ? half_to_double(h) : bf16_to_double(h);
            break;
        }
        case T_INT64:
            isint = true;
            if (raw) memcpy(&xi, r + 8 * k, 8);
            else xi = t->int64_data[k];
            break;
        case T_UINT64: case T_UINT32: {
            isint = true;
            uint64_t u;
            if (raw && type == T_UINT64) memcpy(&u, r + 8 * k, 8);
            else if (raw) {
                uint32_t u32;
                memcpy(&u32, r + 4 * k, 4);
                u = u32;
            } else u = t->uint64_data[k];
            xi = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
            break;
        }
        case T_INT32: {
            isint = true;
            int32_t i32;
            if (raw) memcpy(&i32, r + 4 * k, 4);
            else i32 = t->int32_data[k];
            xi = i32;
            break;
        }
        case T_INT16: case T_UINT16: {
            isint = true;
            if (raw) {
                uint16_t u16;
                memcpy(&u16, r + 2 * k, 2);
                xi = type == T_INT16 ? (int16_t)u16 : u16;
            } else xi = t->int32_data[k];
            break;
        }
        case T_INT8: case T_UINT8: case T_BOOL: {
            isint = true;
            if (raw) xi = type == T_INT8 ? (int8_t)r[k] : r[k];
            else xi = t->int32_data[k];
            if (type == T_BOOL) xi = xi != 0;
            break;
        }
        default: /* float8: keep the shape only */
            free_data(v);
            return ROTOR_OK;
        }
        if (isint) {
            if (v->iv) v->iv[k] = xi;
            else v->fv[k] = (double)xi;
        } else {
            put(v, k, x);
        }
    }
    return ROTOR_OK;
}

/* ---- attributes ----------------------------------------------------------- */

const Onnx__AttributeProto *ox_attr(const ox_node *n, const char *name) {
    for (size_t i = 0; i < n->p->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->p->attribute[i];
        if (a->name && strcmp(a->name, name) == 0) return a;
    }
    return NULL;
}

int64_t ox_attr_int(const ox_node *n, const char *name, int64_t dflt) {
    const Onnx__AttributeProto *a = ox_attr(n, name);
    return a && a->has_i ? a->i : dflt;
}

double ox_attr_float(const ox_node *n, const char *name, double dflt) {
    const Onnx__AttributeProto *a = ox_attr(n, name);
    return a && a->has_f ? a->f : dflt;
}

static const int64_t *attr_ints(const ox_node *n, const char *name, int *count) {
    const Onnx__AttributeProto *a = ox_attr(n, name);
    *count = a ? (int)a->n_ints : 0;
    return a && a->n_ints ? a->ints : NULL;
}

/* ---- inference helpers ----------------------------------------------------- */

static ox_val *IN(ox_model *m, const ox_node *n, int i) {
    return i < n->nin && n->in[i] >= 0 ? &m->vals[n->in[i]] : NULL;
}

static ox_val *OUT(ox_model *m, const ox_node *n, int i) {
    return i < n->nout && n->out[i] >= 0 ? &m->vals[n->out[i]] : NULL;
}

/* Sets output i's type and shape (no-op for an omitted output). */
static rotor_status set_out(ox_model *m, ox_node *n, int i, int type, int rank, const int64_t *shape,
                            rotor_error *err) {
    ox_val *o = OUT(m, n, i);
    if (!o) return ROTOR_OK;
    if (rank > OX_MAX_RANK) NFAIL("output '%s' would have rank %d; rotor handles at most %d", o->name, rank,
                                  OX_MAX_RANK);
    if (!map_dtype(type, &o->dtype)) NFAIL("output '%s' has data type %s, which rotor does not handle", o->name,
                                           type_name(type));
    o->onnx_type = type;
    o->rank = rank;
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0) NFAIL("output '%s' would have negative dimension %lld", o->name, (long long)shape[d]);
        o->shape[d] = shape[d];
    }
    if (!shape_elems(rank, o->shape, &o->elems)) NFAIL("output '%s': element count overflows 64 bits", o->name);
    int64_t b;
    if (!rotor_mul_i64(o->elems, rotor_dtype_bytes(o->dtype), &b))
        NFAIL("output '%s': byte count overflows 64 bits", o->name);
    return ROTOR_OK;
}

static rotor_status same_as(ox_model *m, ox_node *n, int i, const ox_val *x, rotor_error *err) {
    return set_out(m, n, i, x->onnx_type, x->rank, x->shape, err);
}

/* Input i must be present. */
static rotor_status need(ox_model *m, ox_node *n, int count, rotor_error *err) {
    for (int i = 0; i < count; i++)
        if (!IN(m, n, i)) NFAIL("input %d is missing (the operator needs %d)", i, count);
    return ROTOR_OK;
}

/* Normalises axis a for rank r ([-r, r-1] -> [0, r-1]). */
static bool norm_axis(int64_t a, int r, int *out) {
    if (a < -r || a >= (r ? r : 1)) return false;
    *out = (int)(a < 0 ? a + r : a);
    return true;
}

/* Input i as a list of integers: it must be a constant with data. */
static rotor_status const_ints(ox_model *m, const ox_node *n, int i, const char *what, int64_t *out, int cap,
                               int *count, rotor_error *err) {
    ox_val *x = IN(m, n, i);
    if (!x) NFAIL("input %d (%s) is missing", i, what);
    if (x->elems == 0) { /* an empty list needs no data */
        *count = 0;
        return ROTOR_OK;
    }
    if (x->kind != OX_CONST || !x->has_data)
        NFAIL("%s '%s' is computed at run time; rotor needs it constant to know the shapes", what, x->name);
    if (x->elems > cap) NFAIL("%s '%s' has %lld entries; at most %d make sense here", what, x->name,
                              (long long)x->elems, cap);
    for (int64_t k = 0; k < x->elems; k++) out[k] = get_i(x, k);
    *count = (int)x->elems;
    return ROTOR_OK;
}

/* Multidirectional (numpy) broadcast of the inputs' shapes. */
static rotor_status broadcast_shape(ox_model *m, ox_node *n, int first, int count, int *rank, int64_t *shape,
                                    rotor_error *err) {
    int r = 0;
    for (int i = first; i < first + count; i++) {
        ox_val *x = IN(m, n, i);
        if (x && x->rank > r) r = x->rank;
    }
    for (int d = 0; d < r; d++) shape[d] = 1;
    for (int i = first; i < first + count; i++) {
        ox_val *x = IN(m, n, i);
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
static int64_t bcast_offset(const ox_val *x, int r, const int64_t *idx) {
    int64_t off = 0;
    for (int d = 0; d < x->rank; d++) {
        int od = r - x->rank + d;
        off = off * x->shape[d] + (x->shape[d] == 1 ? 0 : idx[od]);
    }
    return off;
}

static void idx_next(int r, const int64_t *shape, int64_t *idx) {
    for (int d = r - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) return;
        idx[d] = 0;
    }
}

static bool all_data(ox_model *m, const ox_node *n) {
    for (int i = 0; i < n->nin; i++) {
        ox_val *x = IN(m, n, i);
        if (x && (x->kind != OX_CONST || !x->has_data)) return false;
    }
    return true;
}

/* Output i gets data storage when the node folds and it is small. */
static ox_val *fold_target(ox_model *m, ox_node *n, int i) {
    ox_val *o = OUT(m, n, i);
    if (!o || o->elems > OX_DATA_MAX || !all_data(m, n)) return NULL;
    if (o->onnx_type == T_COMPLEX64 || o->onnx_type == T_COMPLEX128 || o->onnx_type >= T_F8_E4M3FN) return NULL;
    return alloc_data(o) ? o : NULL;
}

/* ---- element-wise ----------------------------------------------------------- */

static double unary_eval(const char *op, double x) {
    if (!strcmp(op, "Abs")) return fabs(x);
    if (!strcmp(op, "Neg")) return -x;
    if (!strcmp(op, "Sqrt")) return sqrt(x);
    if (!strcmp(op, "Exp")) return exp(x);
    if (!strcmp(op, "Log")) return log(x);
    if (!strcmp(op, "Floor")) return floor(x);
    if (!strcmp(op, "Ceil")) return ceil(x);
    if (!strcmp(op, "Round")) return nearbyint(x);
    if (!strcmp(op, "Reciprocal")) return 1.0 / x;
    if (!strcmp(op, "Relu")) return x > 0 ? x : 0;
    if (!strcmp(op, "Sigmoid")) return 1.0 / (1.0 + exp(-x));
    if (!strcmp(op, "Tanh")) return tanh(x);
    if (!strcmp(op, "Erf")) return erf(x);
    if (!strcmp(op, "Sign")) return (x > 0) - (x < 0);
    if (!strcmp(op, "Not")) return x == 0;
    if (!strcmp(op, "Sin")) return sin(x);
    if (!strcmp(op, "Cos")) return cos(x);
    if (!strcmp(op, "Tan")) return tan(x);
    if (!strcmp(op, "IsNaN")) return x != x;
    if (!strcmp(op, "IsInf")) return isinf(x) != 0;
    if (!strcmp(op, "Cast") || !strcmp(op, "CastLike") || !strcmp(op, "Identity")) return x;
    return NAN;
}

static bool unary_has_eval(const char *op) {
    static const char *const names[] = {"Abs", "Neg", "Sqrt", "Exp", "Log", "Floor", "Ceil", "Round",
                                        "Reciprocal", "Relu", "Sigmoid", "Tanh", "Erf", "Sign", "Not",
                                        "Sin", "Cos", "Tan", "IsNaN", "IsInf", "Cast", "CastLike", "Identity"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(op, names[i])) return true;
    return false;
}

static rotor_status infer_unary(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    const char *op = n->p->op_type;
    int type = x->onnx_type;
    if (!strcmp(op, "Cast")) {
        const Onnx__AttributeProto *a = ox_attr(n, "to");
        if (!a || !a->has_i) NFAIL("attribute 'to' is missing");
        type = (int)a->i;
    } else if (!strcmp(op, "CastLike")) {
        ox_val *t = IN(m, n, 1);
        if (!t) NFAIL("input 1 (target_type) is missing");
        type = t->onnx_type;
    } else if (!strcmp(op, "Not") || !strcmp(op, "IsNaN") || !strcmp(op, "IsInf")) {
        type = T_BOOL;
    }
    if ((st = set_out(m, n, 0, type, x->rank, x->shape, err))) return st;
    ox_val *o = unary_has_eval(op) ? fold_target(m, n, 0) : NULL;
    if (o)
        for (int64_t k = 0; k < o->elems; k++) put(o, k, unary_eval(op, ox_get(x, k)));
    /* Dropout's mask, LayerNormalization's statistics and the like: other
     * outputs of a same-shape operator get the input's shape. */
    for (int i = 1; i < n->nout; i++)
        if ((st = set_out(m, n, i, strcmp(op, "Dropout") == 0 ? T_BOOL : type, x->rank, x->shape, err)))
            return st;
    return ROTOR_OK;
}

static double binary_eval(const char *op, double a, double b, bool isint, const ox_node *n) {
    if (!strcmp(op, "Add") || !strcmp(op, "Sum")) return a + b;
    if (!strcmp(op, "Sub")) return a - b;
    if (!strcmp(op, "Mul")) return a * b;
    if (!strcmp(op, "Div")) {
        if (!isint) return a / b;
        return b == 0 ? 0 : trunc(a / b);
    }
    if (!strcmp(op, "Pow")) return pow(a, b);
    if (!strcmp(op, "Mod")) {
        if (b == 0) return 0;
        if (ox_attr_int(n, "fmod", 0) || !isint) return fmod(a, b);
        double r = fmod(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    if (!strcmp(op, "Max")) return a > b ? a : b;
    if (!strcmp(op, "Min")) return a < b ? a : b;
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "Less")) return a < b;
    if (!strcmp(op, "Greater")) return a > b;
    if (!strcmp(op, "LessOrEqual")) return a <= b;
    if (!strcmp(op, "GreaterOrEqual")) return a >= b;
    if (!strcmp(op, "And")) return (a != 0) && (b != 0);
    if (!strcmp(op, "Or")) return (a != 0) || (b != 0);
    if (!strcmp(op, "Xor")) return (a != 0) != (b != 0);
    return NAN;
}

static bool is_compare(const char *op) {
    return !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") ||
           !strcmp(op, "LessOrEqual") || !strcmp(op, "GreaterOrEqual") || !strcmp(op, "And") ||
           !strcmp(op, "Or") || !strcmp(op, "Xor");
}

bool ox_prelu_per_channel(const ox_model *m, const ox_node *n) {
    if (n->nin < 2 || n->in[0] < 0 || n->in[1] < 0) return false;
    const ox_val *x = &m->vals[ox_resolve(m, n->in[0])], *sl = &m->vals[ox_resolve(m, n->in[1])];
    return sl->rank == 1 && x->rank > 2 && sl->shape[0] == x->shape[1] && sl->shape[0] != x->shape[x->rank - 1];
}

static rotor_status infer_nary(ox_model *m, ox_node *n, rotor_error *err) {
    const char *op = n->p->op_type;
    bool where = !strcmp(op, "Where");
    bool variadic = !strcmp(op, "Sum") || !strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Mean");
    int nin = n->nin;
    if (nin < (variadic ? 1 : where ? 3 : 2)) NFAIL("needs %d inputs, has %d", where ? 3 : 2, nin);
    rotor_status st;
    if ((st = need(m, n, nin, err))) return st;
    if (!strcmp(op, "PRelu") && ox_prelu_per_channel(m, n)) return same_as(m, n, 0, IN(m, n, 0), err);
    int r = 0;
    int64_t shape[OX_MAX_RANK * 2];
    if ((st = broadcast_shape(m, n, 0, nin, &r, shape, err))) return st;
    ox_val *x0 = IN(m, n, where ? 1 : 0);
    int type = is_compare(op) ? T_BOOL : x0->onnx_type;
    if ((st = set_out(m, n, 0, type, r, shape, err))) return st;
    ox_val *o = fold_target(m, n, 0);
    if (!o || !strcmp(op, "BitShift") || !strncmp(op, "Bitwise", 7) || !strcmp(op, "PRelu")) {
        if (o) free_data(o);
        return ROTOR_OK;
    }
    bool isint = !is_float_type(x0->onnx_type);
    int64_t idx[OX_MAX_RANK] = {0};
    for (int64_t k = 0; k < o->elems; k++) {
        double acc;
        if (where) {
            double c = ox_get(IN(m, n, 0), bcast_offset(IN(m, n, 0), r, idx));
            ox_val *pick = IN(m, n, c != 0 ? 1 : 2);
            acc = ox_get(pick, bcast_offset(pick, r, idx));
        } else {
            acc = ox_get(IN(m, n, 0), bcast_offset(IN(m, n, 0), r, idx));
            for (int i = 1; i < nin; i++)
                acc = binary_eval(!strcmp(op, "Mean") ? "Add" : op, acc,
                                  ox_get(IN(m, n, i), bcast_offset(IN(m, n, i), r, idx)), isint, n);
            if (!strcmp(op, "Mean")) acc /= nin;
        }
        put(o, k, acc);
        idx_next(r, shape, idx);
    }
    return ROTOR_OK;
}

/* ---- constants and shapes ----------------------------------------------------- */

static rotor_status infer_constant(ox_model *m, ox_node *n, rotor_error *err) {
    ox_val *o = OUT(m, n, 0);
    if (!o) NFAIL("has no output");
    const Onnx__AttributeProto *a;
    if ((a = ox_attr(n, "value")) && a->t) {
        char what[160];
        snprintf(what, sizeof what, "node '%s' attribute 'value'", n->name);
        return decode_tensor(m, a->t, o, what, err);
    }
    int64_t len = 1;
    int type = T_FLOAT, rank = 0;
    if ((a = ox_attr(n, "value_float")) && a->has_f) type = T_FLOAT;
    else if ((a = ox_attr(n, "value_int")) && a->has_i) type = T_INT64;
    else if ((a = ox_attr(n, "value_floats"))) type = T_FLOAT, rank = 1, len = (int64_t)a->n_floats;
    else if ((a = ox_attr(n, "value_ints"))) type = T_INT64, rank = 1, len = (int64_t)a->n_ints;
    else NFAIL("has no value attribute rotor reads (value, value_float(s), value_int(s)); "
               "sparse and string constants are not supported");
    if (len > OX_DATA_MAX) NFAIL("constant has %lld entries; at most %d are read", (long long)len, OX_DATA_MAX);
    rotor_status st;
    if ((st = set_out(m, n, 0, type, rank, &len, err))) return st;
    if (!alloc_data(o)) return rotor_nomem(err);
    for (int64_t k = 0; k < len; k++) {
        if (!strcmp(a->name, "value_float")) put(o, k, a->f);
        else if (!strcmp(a->name, "value_int")) put(o, k, (double)a->i), o->iv[k] = a->i;
        else if (!strcmp(a->name, "value_floats")) put(o, k, a->floats[k]);
        else o->iv[k] = a->ints[k];
    }
    return ROTOR_OK;
}

static rotor_status infer_constant_of_shape(ox_model *m, ox_node *n, rotor_error *err) {
    int64_t shape[OX_MAX_RANK + 1];
    int r;
    rotor_status st;
    if ((st = const_ints(m, n, 0, "shape", shape, OX_MAX_RANK + 1, &r, err))) return st;
    int type = T_FLOAT;
    double fill = 0;
    const Onnx__AttributeProto *a = ox_attr(n, "value");
    ox_val tmp;
    memset(&tmp, 0, sizeof tmp);
    if (a && a->t) {
        char what[160];
        snprintf(what, sizeof what, "node '%s' attribute 'value'", n->name);
        if ((st = decode_tensor(m, a->t, &tmp, what, err))) return st;
        type = tmp.onnx_type;
        if (tmp.has_data && tmp.elems >= 1) fill = ox_get(&tmp, 0);
        free_data(&tmp);
    }
    if ((st = set_out(m, n, 0, type, r, shape, err))) return st;
    ox_val *o = fold_target(m, n, 0);
    if (o)
        for (int64_t k = 0; k < o->elems; k++) put(o, k, fill);
    return ROTOR_OK;
}

static rotor_status infer_shape_op(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    bool size = !strcmp(n->p->op_type, "Size");
    int64_t start = 0, end = x->rank;
    if (!size) {
        start = ox_attr_int(n, "start", 0);
        end = ox_attr_int(n, "end", x->rank);
        if (start < 0) start += x->rank;
        if (end < 0) end += x->rank;
        start = start < 0 ? 0 : start > x->rank ? x->rank : start;
        end = end < 0 ? 0 : end > x->rank ? x->rank : end;
        if (end < start) end = start;
    }
    int64_t len = end - start;
    if ((st = set_out(m, n, 0, T_INT64, size ? 0 : 1, &len, err))) return st;
    ox_val *o = OUT(m, n, 0);
    if (!o) return ROTOR_OK;
    /* Shape and Size are constant whenever the shape is known, which it
     * always is here: this is what folds shape subgraphs. */
    if (!alloc_data(o)) return rotor_nomem(err);
    o->kind = OX_CONST;
    if (size) o->iv[0] = x->elems;
    else
        for (int64_t k = 0; k < len; k++) o->iv[k] = x->shape[start + k];
    return ROTOR_OK;
}

static rotor_status infer_range(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 3, err))) return st;
    for (int i = 0; i < 3; i++) {
        ox_val *x = IN(m, n, i);
        if (x->kind != OX_CONST || !x->has_data || x->elems != 1)
            NFAIL("input '%s' is computed at run time; Range needs constant scalar start, limit and delta",
                  x->name);
    }
    double s = ox_get(IN(m, n, 0), 0), l = ox_get(IN(m, n, 1), 0), d = ox_get(IN(m, n, 2), 0);
    if (d == 0) NFAIL("delta is 0");
    double cnt = ceil((l - s) / d);
    if (!(cnt >= 0)) cnt = 0;
    if (cnt > (double)INT32_MAX) NFAIL("range of %.0f elements is absurd", cnt);
    int64_t len = (int64_t)cnt;
    if ((st = set_out(m, n, 0, IN(m, n, 0)->onnx_type, 1, &len, err))) return st;
    ox_val *o = fold_target(m, n, 0);
    if (o)
        for (int64_t k = 0; k < len; k++) put(o, k, s + (double)k * d);
    return ROTOR_OK;
}

/* ---- contractions, convolution, pooling -------------------------------------- */

static rotor_status infer_matmul(ox_model *m, ox_node *n, rotor_error *err) {
    const char *op = n->p->op_type;
    bool q = !strcmp(op, "QLinearMatMul");
    int ia = 0, ib = q ? 3 : 1;
    rotor_status st;
    if ((st = need(m, n, ib + 1, err))) return st;
    ox_val *a = IN(m, n, ia), *b = IN(m, n, ib);
    if (a->rank < 1 || b->rank < 1) NFAIL("inputs must have at least one dimension");
    int type = a->onnx_type;
    if (!strcmp(op, "MatMulInteger")) {
        /* ONNX MatMulInteger: A and B are 8-bit, zero points match their tensor's type
         * and are a scalar or one per row of A / column of B. */
        for (int i = 0; i < 2; i++) {
            ox_val *x = IN(m, n, i), *zp = IN(m, n, i + 2);
            if (x->onnx_type != T_INT8 && x->onnx_type != T_UINT8)
                NFAIL("input '%s' is %s; MatMulInteger takes int8 or uint8", x->name, type_name(x->onnx_type));
            if (zp && zp->onnx_type != x->onnx_type)
                NFAIL("zero point '%s' is %s but its tensor '%s' is %s", zp->name, type_name(zp->onnx_type),
                      x->name, type_name(x->onnx_type));
            int64_t want = i == 0 ? (a->rank >= 2 ? a->shape[a->rank - 2] : 1) : b->shape[b->rank - 1];
            if (zp && zp->elems != 1 && zp->elems != want)
                NFAIL("zero point '%s' has %lld elements; expected 1 or %lld", zp->name, (long long)zp->elems,
                      (long long)want);
        }
        type = T_INT32;
    } else if (q) {
        ox_val *yzp = IN(m, n, 7);
        type = yzp ? yzp->onnx_type : T_UINT8;
    } else if (a->onnx_type != b->onnx_type) {
        NFAIL("inputs '%s' (%s) and '%s' (%s) differ in type", a->name, type_name(a->onnx_type), b->name,
              type_name(b->onnx_type));
    }
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
    return set_out(m, n, 0, type, r, shape, err);
}

static rotor_status infer_gemm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 2, err))) return st;
    ox_val *a = IN(m, n, 0), *b = IN(m, n, 1), *c = IN(m, n, 2);
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
    return set_out(m, n, 0, a->onnx_type, 2, shape, err);
}

/* Spatial geometry of a convolution or pooling node: kernel, strides, pads,
 * dilations and output extents (ONNX Conv/Pool semantics, auto_pad included). */
typedef struct geom {
    int ns;                          /* spatial dimensions */
    int64_t k[OX_MAX_RANK], s[OX_MAX_RANK], d[OX_MAX_RANK], pb[OX_MAX_RANK], pe[OX_MAX_RANK];
    int64_t in[OX_MAX_RANK], out[OX_MAX_RANK];
} geom;

static rotor_status conv_geom(ox_model *m, ox_node *n, const ox_val *x, const int64_t *kernel, bool ceil_mode,
                              geom *g, rotor_error *err) {
    g->ns = x->rank - 2;
    int cnt;
    const int64_t *v;
    for (int i = 0; i < g->ns; i++) {
        g->k[i] = kernel[i];
        g->s[i] = 1, g->d[i] = 1, g->pb[i] = 0, g->pe[i] = 0;
        g->in[i] = x->shape[2 + i];
    }
    if ((v = attr_ints(n, "strides", &cnt))) {
        if (cnt != g->ns) NFAIL("strides has %d entries for %d spatial dimensions", cnt, g->ns);
        for (int i = 0; i < g->ns; i++) g->s[i] = v[i];
    }
    if ((v = attr_ints(n, "dilations", &cnt))) {
        if (cnt != g->ns) NFAIL("dilations has %d entries for %d spatial dimensions", cnt, g->ns);
        for (int i = 0; i < g->ns; i++) g->d[i] = v[i];
    }
    if ((v = attr_ints(n, "pads", &cnt))) {
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

static rotor_status infer_conv(ox_model *m, ox_node *n, rotor_error *err) {
    const char *op = n->p->op_type;
    bool q = !strcmp(op, "QLinearConv");
    int ix = 0, iw = q ? 3 : 1;
    rotor_status st;
    if ((st = need(m, n, iw + 1, err))) return st;
    ox_val *x = IN(m, n, ix), *w = IN(m, n, iw);
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
    const int64_t *ks = attr_ints(n, "kernel_shape", &cnt);
    if (ks && cnt != x->rank - 2) NFAIL("kernel_shape has %d entries for %d spatial dimensions", cnt, x->rank - 2);
    if (ks)
        for (int i = 0; i < cnt; i++)
            if (ks[i] != w->shape[2 + i]) NFAIL("kernel_shape disagrees with weight '%s'", w->name);
    geom g;
    int64_t shape[OX_MAX_RANK];
    shape[0] = x->shape[0];
    if (!transpose) {
        if ((st = conv_geom(m, n, x, w->shape + 2, false, &g, err))) return st;
        shape[1] = w->shape[0];
        for (int i = 0; i < g.ns; i++) shape[2 + i] = g.out[i];
    } else {
        /* ConvTranspose: out = s(in-1) + output_padding + d(k-1) + 1 - pads,
         * or output_shape when given. */
        const int64_t *os = attr_ints(n, "output_shape", &cnt);
        int cnt2;
        const int64_t *op2 = attr_ints(n, "output_padding", &cnt2);
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
            if ((v = attr_ints(n, "strides", &c)) && c == x->rank - 2) s = v[i];
            if ((v = attr_ints(n, "dilations", &c)) && c == x->rank - 2) d = v[i];
            if ((v = attr_ints(n, "pads", &c)) && c == 2 * (x->rank - 2)) pb = v[i], pe = v[x->rank - 2 + i];
            if (s < 1 || d < 1 || s > (1 << 20) || d > (1 << 20) || pb < 0 || pe < 0 || opad < 0 || pb > (1 << 30) ||
                pe > (1 << 30) || opad > (1 << 20))
                NFAIL("stride %lld, dilation %lld, pads %lld/%lld or output_padding %lld out of range in dimension %d",
                      (long long)s, (long long)d, (long long)pb, (long long)pe, (long long)opad, i);
            shape[2 + i] = s * (x->shape[2 + i] - 1) + opad + d * (w->shape[2 + i] - 1) + 1 - pb - pe;
            if (shape[2 + i] < 1) NFAIL("output extent %lld in dimension %d", (long long)shape[2 + i], i);
        }
    }
    int type = x->onnx_type;
    if (!strcmp(op, "ConvInteger")) type = T_INT32;
    if (q) type = IN(m, n, 7) ? IN(m, n, 7)->onnx_type : T_UINT8;
    ox_val *bias = transpose || q ? NULL : IN(m, n, 2);
    if (bias && !strcmp(op, "Conv") && (bias->rank != 1 || bias->shape[0] != shape[1]))
        NFAIL("bias '%s' must have %lld elements", bias->name, (long long)shape[1]);
    return set_out(m, n, 0, type, x->rank, shape, err);
}

static rotor_status infer_pool(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    if (x->rank < 3) NFAIL("input '%s' has rank %d; pooling needs [N, C, spatial...]", x->name, x->rank);
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    if (!strncmp(n->p->op_type, "Global", 6)) {
        for (int i = 2; i < x->rank; i++) shape[i] = 1;
    } else {
        int cnt;
        const int64_t *ks = attr_ints(n, "kernel_shape", &cnt);
        if (!ks || cnt != x->rank - 2) NFAIL("kernel_shape must have %d entries", x->rank - 2);
        geom g;
        if ((st = conv_geom(m, n, x, ks, ox_attr_int(n, "ceil_mode", 0) != 0, &g, err))) return st;
        for (int i = 0; i < g.ns; i++) shape[2 + i] = g.out[i];
    }
    if ((st = set_out(m, n, 0, x->onnx_type, x->rank, shape, err))) return st;
    return set_out(m, n, 1, T_INT64, x->rank, shape, err); /* MaxPool's indices */
}

static rotor_status infer_batchnorm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 5, err))) return st;
    ox_val *x = IN(m, n, 0);
    if (x->rank < 2) NFAIL("input '%s' has rank %d; BatchNormalization needs [N, C, ...]", x->name, x->rank);
    for (int i = 1; i < 5; i++) {
        ox_val *p = IN(m, n, i);
        if (p->elems != x->shape[1])
            NFAIL("'%s' has %lld elements; the input has %lld channels", p->name, (long long)p->elems,
                  (long long)x->shape[1]);
    }
    if ((st = same_as(m, n, 0, x, err))) return st;
    for (int i = 1; i < n->nout; i++) /* training-mode statistics */
        if ((st = set_out(m, n, i, x->onnx_type, 1, &x->shape[1], err))) return st;
    return ROTOR_OK;
}

static rotor_status infer_layernorm(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 2, err))) return st;
    ox_val *x = IN(m, n, 0);
    int axis;
    if (!norm_axis(ox_attr_int(n, "axis", -1), x->rank, &axis)) NFAIL("axis is out of range for rank %d", x->rank);
    if ((st = same_as(m, n, 0, x, err))) return st;
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) shape[d] = d < axis ? x->shape[d] : 1;
    for (int i = 1; i < n->nout; i++)
        if ((st = set_out(m, n, i, T_FLOAT, x->rank, shape, err))) return st;
    return ROTOR_OK;
}

/* ---- reductions ----------------------------------------------------------------- */

/* The reduced axes of a Reduce* / ArgMax node: from the axes input (ReduceSum
 * opset 13, all of them from opset 18) or the axes attribute. */
rotor_status ox_reduce_axes(ox_model *m, const ox_node *n, const ox_val *x, bool *red, rotor_error *err) {
    int64_t ax[OX_MAX_RANK * 2];
    int cnt = 0;
    rotor_status st;
    bool arg = !strncmp(n->p->op_type, "Arg", 3);
    for (int d = 0; d < x->rank; d++) red[d] = false;
    if (arg) {
        ax[0] = ox_attr_int(n, "axis", 0);
        cnt = 1;
    } else if (IN(m, n, 1)) {
        if ((st = const_ints(m, n, 1, "axes", ax, OX_MAX_RANK * 2, &cnt, err))) return st;
    } else {
        int c;
        const int64_t *v = attr_ints(n, "axes", &c);
        if (c > OX_MAX_RANK * 2) NFAIL("axes has %d entries", c);
        for (int i = 0; i < c; i++) ax[i] = v[i];
        cnt = c;
    }
    if (cnt == 0) {
        bool noop = ox_attr_int(n, "noop_with_empty_axes", 0) != 0;
        for (int d = 0; d < x->rank; d++) red[d] = !noop;
        return ROTOR_OK;
    }
    for (int i = 0; i < cnt; i++) {
        int a;
        if (!norm_axis(ax[i], x->rank, &a)) NFAIL("axis %lld is out of range for rank %d", (long long)ax[i], x->rank);
        red[a] = true;
    }
    return ROTOR_OK;
}

static rotor_status infer_reduce(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    bool red[OX_MAX_RANK];
    if ((st = ox_reduce_axes(m, n, x, red, err))) return st;
    bool keep = ox_attr_int(n, "keepdims", 1) != 0;
    int64_t shape[OX_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!red[d]) shape[r++] = x->shape[d];
        else if (keep) shape[r++] = 1;
    }
    const char *op = n->p->op_type;
    bool arg = !strncmp(op, "Arg", 3);
    if ((st = set_out(m, n, 0, arg ? T_INT64 : x->onnx_type, r, shape, err))) return st;
    ox_val *o = arg ? NULL : fold_target(m, n, 0);
    if (!o) return ROTOR_OK;
    bool sum = !strcmp(op, "ReduceSum"), mean = !strcmp(op, "ReduceMean"), prod = !strcmp(op, "ReduceProd"),
         mx = !strcmp(op, "ReduceMax"), mn = !strcmp(op, "ReduceMin");
    if (!(sum || mean || prod || mx || mn)) {
        free_data(o);
        return ROTOR_OK;
    }
    int64_t cnt = x->elems / (o->elems ? o->elems : 1);
    for (int64_t k = 0; k < o->elems; k++) put(o, k, prod ? 1 : mx ? -INFINITY : mn ? INFINITY : 0);
    int64_t idx[OX_MAX_RANK] = {0};
    for (int64_t k = 0; k < x->elems; k++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++)
            if (!red[d]) off = off * x->shape[d] + idx[d];
        double v = ox_get(x, k), a = ox_get(o, off);
        put(o, off, sum || mean ? a + v : prod ? a * v : mx ? (v > a ? v : a) : (v < a ? v : a));
        idx_next(x->rank, x->shape, idx);
    }
    if (mean && cnt)
        for (int64_t k = 0; k < o->elems; k++) put(o, k, ox_get(o, k) / (double)cnt);
    return ROTOR_OK;
}

/* ---- layout ---------------------------------------------------------------------- */

/* Copies x's data into output 0 (a reshape of the same elements). */
static void fold_copy(ox_model *m, ox_node *n, const ox_val *x) {
    ox_val *o = fold_target(m, n, 0);
    if (o)
        for (int64_t k = 0; k < o->elems && k < x->elems; k++) put(o, k, ox_get(x, k));
}

static rotor_status infer_reshape(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    int64_t want[OX_MAX_RANK * 2], shape[OX_MAX_RANK];
    int r;
    if (IN(m, n, 1)) {
        if ((st = const_ints(m, n, 1, "shape", want, OX_MAX_RANK * 2, &r, err))) return st;
    } else {
        const int64_t *v = attr_ints(n, "shape", &r); /* opset 1-4 */
        if (!v) NFAIL("has no shape input");
        if (r > OX_MAX_RANK * 2) NFAIL("shape has %d entries", r);
        memcpy(want, v, sizeof(int64_t) * (size_t)r);
    }
    if (r > OX_MAX_RANK) NFAIL("target shape has rank %d; rotor handles at most %d", r, OX_MAX_RANK);
    bool allowzero = ox_attr_int(n, "allowzero", 0) != 0;
    int infer_at = -1;
    int64_t known = 1;
    for (int d = 0; d < r; d++) {
        int64_t e = want[d];
        if (e == 0 && !allowzero) {
            if (d >= x->rank) NFAIL("shape entry %d is 0 (copy) but the input has rank %d", d, x->rank);
            e = x->shape[d];
        }
        if (e == -1) {
            if (infer_at >= 0) NFAIL("shape has more than one -1");
            infer_at = d;
            shape[d] = 1;
            continue;
        }
        if (e < 0) NFAIL("shape entry %d is %lld", d, (long long)e);
        shape[d] = e;
        if (!rotor_mul_i64(known, e, &known)) NFAIL("target shape overflows 64 bits");
    }
    if (infer_at >= 0) {
        if (known == 0 || x->elems % known) NFAIL("cannot infer the -1 of the shape: %lld elements into %lld",
                                                  (long long)x->elems, (long long)known);
        shape[infer_at] = x->elems / known;
    } else if (known != x->elems) {
        NFAIL("cannot reshape %lld elements into %lld", (long long)x->elems, (long long)known);
    }
    if ((st = set_out(m, n, 0, x->onnx_type, r, shape, err))) return st;
    fold_copy(m, n, x);
    return ROTOR_OK;
}

static rotor_status infer_flatten(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    int64_t a = ox_attr_int(n, "axis", 1);
    if (a < 0) a += x->rank;
    if (a < 0 || a > x->rank) NFAIL("axis is out of range for rank %d", x->rank);
    int64_t shape[2] = {1, 1};
    for (int d = 0; d < x->rank; d++) shape[d < a ? 0 : 1] *= x->shape[d];
    if ((st = set_out(m, n, 0, x->onnx_type, 2, shape, err))) return st;
    fold_copy(m, n, x);
    return ROTOR_OK;
}

static rotor_status infer_squeeze(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    bool un = !strcmp(n->p->op_type, "Unsqueeze");
    int64_t ax[OX_MAX_RANK * 2];
    int cnt = 0;
    if (IN(m, n, 1)) {
        if ((st = const_ints(m, n, 1, "axes", ax, OX_MAX_RANK * 2, &cnt, err))) return st;
    } else {
        const int64_t *v = attr_ints(n, "axes", &cnt);
        if (cnt > OX_MAX_RANK * 2) NFAIL("axes has %d entries", cnt);
        for (int i = 0; i < cnt; i++) ax[i] = v[i];
    }
    int64_t shape[OX_MAX_RANK * 2];
    int r = 0;
    if (un) {
        int outr = x->rank + cnt;
        if (outr > OX_MAX_RANK) NFAIL("output would have rank %d; rotor handles at most %d", outr, OX_MAX_RANK);
        bool ins[OX_MAX_RANK] = {false};
        for (int i = 0; i < cnt; i++) {
            int a;
            if (!norm_axis(ax[i], outr, &a) || ins[a]) NFAIL("axis %lld is out of range or repeated", (long long)ax[i]);
            ins[a] = true;
        }
        int src = 0;
        for (int d = 0; d < outr; d++) shape[r++] = ins[d] ? 1 : x->shape[src++];
    } else {
        bool drop[OX_MAX_RANK] = {false};
        for (int i = 0; i < cnt; i++) {
            int a;
            if (!norm_axis(ax[i], x->rank, &a)) NFAIL("axis %lld is out of range for rank %d", (long long)ax[i], x->rank);
            if (x->shape[a] != 1) NFAIL("cannot squeeze axis %d of extent %lld", a, (long long)x->shape[a]);
            drop[a] = true;
        }
        for (int d = 0; d < x->rank; d++)
            if (!(cnt ? drop[d] : x->shape[d] == 1)) shape[r++] = x->shape[d];
    }
    if ((st = set_out(m, n, 0, x->onnx_type, r, shape, err))) return st;
    fold_copy(m, n, x);
    return ROTOR_OK;
}

static rotor_status infer_transpose(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    int cnt;
    const int64_t *p = attr_ints(n, "perm", &cnt);
    int perm[OX_MAX_RANK];
    bool seen[OX_MAX_RANK] = {false};
    if (p && cnt != x->rank) NFAIL("perm has %d entries for rank %d", cnt, x->rank);
    for (int d = 0; d < x->rank; d++) {
        int64_t v = p ? p[d] : x->rank - 1 - d;
        if (v < 0 || v >= x->rank || seen[v]) NFAIL("perm is not a permutation of 0..%d", x->rank - 1);
        seen[v] = true;
        perm[d] = (int)v;
    }
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) shape[d] = x->shape[perm[d]];
    if ((st = set_out(m, n, 0, x->onnx_type, x->rank, shape, err))) return st;
    ox_val *o = fold_target(m, n, 0);
    if (!o) return ROTOR_OK;
    int64_t idx[OX_MAX_RANK] = {0}, stride[OX_MAX_RANK];
    for (int d = x->rank - 1, s = 1; d >= 0; s *= (int)x->shape[d], d--) stride[d] = s;
    for (int64_t k = 0; k < o->elems; k++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++) off += idx[d] * stride[perm[d]];
        put(o, k, ox_get(x, off));
        idx_next(x->rank, shape, idx);
    }
    return ROTOR_OK;
}

static rotor_status infer_concat(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if (n->nin < 1) NFAIL("has no inputs");
    if ((st = need(m, n, n->nin, err))) return st;
    ox_val *x0 = IN(m, n, 0);
    int axis;
    if (!norm_axis(ox_attr_int(n, "axis", 0), x0->rank, &axis) || x0->rank == 0)
        NFAIL("axis is out of range for rank %d", x0->rank);
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x0->shape, sizeof shape);
    shape[axis] = 0;
    for (int i = 0; i < n->nin; i++) {
        ox_val *x = IN(m, n, i);
        if (x->rank != x0->rank) NFAIL("input '%s' has rank %d, '%s' has %d", x->name, x->rank, x0->name, x0->rank);
        for (int d = 0; d < x->rank; d++)
            if (d != axis && x->shape[d] != x0->shape[d])
                NFAIL("input '%s' has extent %lld in dimension %d, '%s' has %lld", x->name, (long long)x->shape[d], d,
                      x0->name, (long long)x0->shape[d]);
        shape[axis] += x->shape[axis];
    }
    if ((st = set_out(m, n, 0, x0->onnx_type, x0->rank, shape, err))) return st;
    ox_val *o = fold_target(m, n, 0);
    if (!o) return ROTOR_OK;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= shape[d];
    for (int d = axis + 1; d < x0->rank; d++) inner *= shape[d];
    int64_t k = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int i = 0; i < n->nin; i++) {
            ox_val *x = IN(m, n, i);
            int64_t len = x->shape[axis] * inner;
            for (int64_t j = 0; j < len; j++) put(o, k++, ox_get(x, a * len + j));
        }
    return ROTOR_OK;
}

static rotor_status infer_split(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    int axis;
    if (!norm_axis(ox_attr_int(n, "axis", 0), x->rank, &axis) || x->rank == 0)
        NFAIL("axis is out of range for rank %d", x->rank);
    int64_t sizes[64];
    int cnt = 0;
    if (n->nout > 64) NFAIL("%d outputs; at most 64 are supported", n->nout);
    if (IN(m, n, 1)) {
        if ((st = const_ints(m, n, 1, "split", sizes, 64, &cnt, err))) return st;
    } else {
        const int64_t *v = attr_ints(n, "split", &cnt);
        if (cnt > 64) NFAIL("split has %d entries", cnt);
        for (int i = 0; i < cnt; i++) sizes[i] = v[i];
    }
    int64_t ext = x->shape[axis];
    if (cnt) {
        if (cnt != n->nout) NFAIL("split has %d entries for %d outputs", cnt, n->nout);
        int64_t tot = 0;
        for (int i = 0; i < cnt; i++) {
            if (sizes[i] < 0) NFAIL("split entry %d is negative", i);
            tot += sizes[i];
        }
        if (tot != ext) NFAIL("split sums to %lld but the axis has %lld", (long long)tot, (long long)ext);
    } else {
        int64_t parts = n->nout, each = (ext + parts - 1) / parts;
        for (int i = 0; i < n->nout; i++) {
            int64_t left = ext - each * i;
            sizes[i] = left < 0 ? 0 : left < each ? left : each;
        }
    }
    for (int i = 0; i < n->nout; i++) {
        int64_t shape[OX_MAX_RANK];
        memcpy(shape, x->shape, sizeof shape);
        shape[axis] = sizes[i];
        if ((st = set_out(m, n, i, x->onnx_type, x->rank, shape, err))) return st;
    }
    return ROTOR_OK;
}

static rotor_status infer_slice(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    int64_t starts[OX_MAX_RANK], ends[OX_MAX_RANK], axes[OX_MAX_RANK], steps[OX_MAX_RANK];
    int ns, ne, na = 0, nst = 0;
    if (n->nin >= 3) {
        if ((st = const_ints(m, n, 1, "starts", starts, OX_MAX_RANK, &ns, err))) return st;
        if ((st = const_ints(m, n, 2, "ends", ends, OX_MAX_RANK, &ne, err))) return st;
        if (IN(m, n, 3) && (st = const_ints(m, n, 3, "axes", axes, OX_MAX_RANK, &na, err))) return st;
        if (IN(m, n, 4) && (st = const_ints(m, n, 4, "steps", steps, OX_MAX_RANK, &nst, err))) return st;
    } else {
        const int64_t *v;
        v = attr_ints(n, "starts", &ns);
        if (ns > OX_MAX_RANK) NFAIL("starts has %d entries", ns);
        for (int i = 0; i < ns; i++) starts[i] = v[i];
        v = attr_ints(n, "ends", &ne);
        if (ne > OX_MAX_RANK) NFAIL("ends has %d entries", ne);
        for (int i = 0; i < ne; i++) ends[i] = v[i];
        v = attr_ints(n, "axes", &na);
        if (na > OX_MAX_RANK) NFAIL("axes has %d entries", na);
        for (int i = 0; i < na; i++) axes[i] = v[i];
    }
    if (ns != ne || (na && na != ns) || (nst && nst != ns))
        NFAIL("starts, ends, axes and steps differ in length (%d, %d, %d, %d)", ns, ne, na, nst);
    int64_t lo[OX_MAX_RANK], step[OX_MAX_RANK], shape[OX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) lo[d] = 0, step[d] = 1, shape[d] = x->shape[d];
    bool seen[OX_MAX_RANK] = {false};
    for (int i = 0; i < ns; i++) {
        int a;
        if (!norm_axis(na ? axes[i] : i, x->rank, &a) || seen[a]) NFAIL("axis %lld is out of range or repeated",
                                                                        (long long)(na ? axes[i] : i));
        seen[a] = true;
        int64_t dim = x->shape[a], s = nst ? steps[i] : 1, b = starts[i], e = ends[i];
        if (s == 0) NFAIL("step is 0");
        /* ONNX clamping: negative indices count from the end; starts clamp to
         * [0, dim] ([0, dim-1] for negative steps), ends to [-1, dim]. */
        if (b < 0) b = b < -dim ? 0 : b + dim;
        if (e < 0) e = e < -dim ? -1 : e + dim;
        if (s > 0) {
            b = b > dim ? dim : b;
            e = e > dim ? dim : e < 0 ? 0 : e;
        } else {
            b = b > dim - 1 ? dim - 1 : b;
            e = e > dim - 1 ? dim - 1 : e;
        }
        int64_t len = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e + (-s) - 1) / (-s) : 0);
        lo[a] = b;
        step[a] = s;
        shape[a] = len;
    }
    if ((st = set_out(m, n, 0, x->onnx_type, x->rank, shape, err))) return st;
    ox_val *o = x->has_data ? fold_target(m, n, 0) : NULL;
    if (!o) return ROTOR_OK;
    int64_t idx[OX_MAX_RANK] = {0};
    for (int64_t k = 0; k < o->elems; k++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++) off = off * x->shape[d] + lo[d] + idx[d] * step[d];
        put(o, k, ox_get(x, off));
        idx_next(x->rank, shape, idx);
    }
    return ROTOR_OK;
}

static rotor_status infer_gather(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 2, err))) return st;
    ox_val *x = IN(m, n, 0), *ix = IN(m, n, 1);
    const char *op = n->p->op_type;
    if (ix->onnx_type != T_INT64 && ix->onnx_type != T_INT32)
        NFAIL("indices '%s' are %s; ONNX takes int32 or int64", ix->name, type_name(ix->onnx_type));
    int axis;
    if (!norm_axis(ox_attr_int(n, "axis", 0), x->rank, &axis) || x->rank == 0)
        NFAIL("axis is out of range for rank %d", x->rank);
    int64_t shape[OX_MAX_RANK * 2];
    int r = 0;
    if (!strcmp(op, "GatherElements")) {
        if (ix->rank != x->rank) NFAIL("indices have rank %d, data %d", ix->rank, x->rank);
        return set_out(m, n, 0, x->onnx_type, ix->rank, ix->shape, err);
    }
    if (!strcmp(op, "GatherND")) {
        int64_t b = ox_attr_int(n, "batch_dims", 0);
        if (ix->rank < 1) NFAIL("indices must have rank >= 1");
        int64_t last = ix->shape[ix->rank - 1];
        if (b < 0 || b >= ix->rank || last < 1 || b + last > x->rank) NFAIL("indices do not fit the data's rank");
        for (int d = 0; d < ix->rank - 1; d++) shape[r++] = ix->shape[d];
        for (int64_t d = b + last; d < x->rank; d++) shape[r++] = x->shape[d];
        return set_out(m, n, 0, x->onnx_type, r, shape, err);
    }
    for (int d = 0; d < axis; d++) shape[r++] = x->shape[d];
    for (int d = 0; d < ix->rank; d++) shape[r++] = ix->shape[d];
    for (int d = axis + 1; d < x->rank; d++) shape[r++] = x->shape[d];
    if ((st = set_out(m, n, 0, x->onnx_type, r, shape, err))) return st;
    ox_val *o = fold_target(m, n, 0);
    if (!o) return ROTOR_OK;
    int64_t outer = 1, inner = 1, dim = x->shape[axis];
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
    int64_t k = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int64_t j = 0; j < ix->elems; j++) {
            int64_t i = get_i(ix, j);
            if (i < 0) i += dim;
            if (i < 0 || i >= dim) {
                free_data(o);
                NFAIL("index %lld is out of range for extent %lld", (long long)get_i(ix, j), (long long)dim);
            }
            for (int64_t b = 0; b < inner; b++) put(o, k++, ox_get(x, (a * dim + i) * inner + b));
        }
    return ROTOR_OK;
}

static rotor_status infer_expand(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 2, err))) return st;
    ox_val *x = IN(m, n, 0);
    int64_t want[OX_MAX_RANK + 1];
    int r;
    if ((st = const_ints(m, n, 1, "shape", want, OX_MAX_RANK + 1, &r, err))) return st;
    if (r > OX_MAX_RANK) NFAIL("target shape has rank %d", r);
    int outr = r > x->rank ? r : x->rank;
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < outr; d++) {
        int dx = d - (outr - x->rank), dw = d - (outr - r);
        int64_t ex = dx >= 0 ? x->shape[dx] : 1, ew = dw >= 0 ? want[dw] : 1;
        if (ex != ew && ex != 1 && ew != 1) NFAIL("cannot expand extent %lld to %lld", (long long)ex, (long long)ew);
        shape[d] = ex == 1 ? ew : ex;
    }
    if ((st = set_out(m, n, 0, x->onnx_type, outr, shape, err))) return st;
    ox_val *o = x->has_data ? fold_target(m, n, 0) : NULL;
    if (!o) return ROTOR_OK;
    int64_t idx[OX_MAX_RANK] = {0};
    for (int64_t k = 0; k < o->elems; k++) {
        put(o, k, ox_get(x, bcast_offset(x, outr, idx)));
        idx_next(outr, shape, idx);
    }
    return ROTOR_OK;
}

static rotor_status infer_tile(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 2, err))) return st;
    ox_val *x = IN(m, n, 0);
    int64_t rep[OX_MAX_RANK];
    int r;
    if ((st = const_ints(m, n, 1, "repeats", rep, OX_MAX_RANK, &r, err))) return st;
    if (r != x->rank) NFAIL("repeats has %d entries for rank %d", r, x->rank);
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < r; d++) {
        if (rep[d] < 0 || !rotor_mul_i64(x->shape[d], rep[d], &shape[d])) NFAIL("repeat %d is out of range", d);
    }
    return set_out(m, n, 0, x->onnx_type, r, shape, err);
}

static rotor_status infer_pad(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    int64_t pads[2 * OX_MAX_RANK], axes[OX_MAX_RANK];
    int cnt, na = 0;
    if (IN(m, n, 1)) {
        if ((st = const_ints(m, n, 1, "pads", pads, 2 * OX_MAX_RANK, &cnt, err))) return st;
    } else {
        const int64_t *v = attr_ints(n, "pads", &cnt);
        if (cnt > 2 * OX_MAX_RANK) NFAIL("pads has %d entries", cnt);
        for (int i = 0; i < cnt; i++) pads[i] = v[i];
    }
    if (IN(m, n, 3) && (st = const_ints(m, n, 3, "axes", axes, OX_MAX_RANK, &na, err))) return st;
    int nax = na ? na : x->rank;
    if (cnt != 2 * nax) NFAIL("pads has %d entries for %d axes", cnt, nax);
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    for (int i = 0; i < nax; i++) {
        int a;
        if (!norm_axis(na ? axes[i] : i, x->rank, &a)) NFAIL("axis out of range");
        shape[a] += pads[i] + pads[nax + i];
        if (shape[a] < 0 || pads[i] > (1 << 30) || pads[nax + i] > (1 << 30)) NFAIL("pads out of range");
    }
    return set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}

static rotor_status infer_resize(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    bool upsample = !strcmp(n->p->op_type, "Upsample");
    int64_t shape[OX_MAX_RANK];
    int64_t sizes[OX_MAX_RANK];
    int cnt = 0;
    int si = upsample ? 1 : 2, zi = 3;
    ox_val *sc = IN(m, n, si), *sz = upsample ? NULL : IN(m, n, zi);
    if (sz && sz->elems > 0) {
        if (ox_attr(n, "axes")) NFAIL("the axes attribute is not supported");
        if ((st = const_ints(m, n, zi, "sizes", sizes, OX_MAX_RANK, &cnt, err))) return st;
        if (cnt != x->rank) NFAIL("sizes has %d entries for rank %d", cnt, x->rank);
        for (int d = 0; d < cnt; d++) shape[d] = sizes[d];
    } else {
        double scales[OX_MAX_RANK];
        if (sc) {
            if (sc->kind != OX_CONST || !sc->has_data) NFAIL("scales '%s' are computed at run time", sc->name);
            if (sc->elems != x->rank) NFAIL("scales has %lld entries for rank %d", (long long)sc->elems, x->rank);
            for (int d = 0; d < x->rank; d++) scales[d] = ox_get(sc, d);
        } else {
            const Onnx__AttributeProto *a = ox_attr(n, "scales");
            if (!a || (int)a->n_floats != x->rank) NFAIL("needs scales or sizes");
            for (int d = 0; d < x->rank; d++) scales[d] = a->floats[d];
        }
        for (int d = 0; d < x->rank; d++) {
            double e = floor((double)x->shape[d] * scales[d]);
            if (!(e >= 0 && e < 1e12)) NFAIL("scale %g is out of range", scales[d]);
            shape[d] = (int64_t)e;
        }
    }
    return set_out(m, n, 0, x->onnx_type, x->rank, shape, err);
}

static rotor_status infer_depth_space(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    int64_t b = ox_attr_int(n, "blocksize", 0);
    if (x->rank != 4 || b < 1 || b > (1 << 20)) NFAIL("needs a rank-4 input and a positive blocksize");
    int64_t shape[4];
    memcpy(shape, x->shape, sizeof shape);
    if (!strcmp(n->p->op_type, "DepthToSpace")) {
        if (x->shape[1] % (b * b)) NFAIL("channels %lld are not a multiple of blocksize^2", (long long)x->shape[1]);
        shape[1] /= b * b, shape[2] *= b, shape[3] *= b;
    } else {
        if (x->shape[2] % b || x->shape[3] % b) NFAIL("spatial extents are not multiples of the blocksize");
        shape[1] *= b * b, shape[2] /= b, shape[3] /= b;
    }
    return set_out(m, n, 0, x->onnx_type, 4, shape, err);
}

static rotor_status infer_topk(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    int axis;
    if (!norm_axis(ox_attr_int(n, "axis", -1), x->rank, &axis) || x->rank == 0) NFAIL("axis is out of range");
    int64_t k;
    if (IN(m, n, 1)) {
        int cnt;
        if ((st = const_ints(m, n, 1, "k", &k, 1, &cnt, err))) return st;
        if (cnt != 1) NFAIL("k must have one entry");
    } else {
        k = ox_attr_int(n, "k", -1);
    }
    if (k < 0 || k > x->shape[axis]) NFAIL("k = %lld is out of range for extent %lld", (long long)k,
                                           (long long)x->shape[axis]);
    int64_t shape[OX_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = k;
    if ((st = set_out(m, n, 0, x->onnx_type, x->rank, shape, err))) return st;
    return set_out(m, n, 1, T_INT64, x->rank, shape, err);
}

static rotor_status infer_onehot(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 3, err))) return st;
    ox_val *ix = IN(m, n, 0), *depth = IN(m, n, 1), *vals = IN(m, n, 2);
    if (depth->kind != OX_CONST || !depth->has_data || depth->elems != 1) NFAIL("depth must be a constant scalar");
    int64_t dd = (int64_t)ox_get(depth, 0);
    if (dd < 1 || dd > (1 << 30)) NFAIL("depth %lld is out of range", (long long)dd);
    int axis;
    if (!norm_axis(ox_attr_int(n, "axis", -1), ix->rank + 1, &axis)) NFAIL("axis is out of range");
    int64_t shape[OX_MAX_RANK + 1];
    for (int d = 0, s = 0; d <= ix->rank; d++) shape[d] = d == axis ? dd : ix->shape[s++];
    return set_out(m, n, 0, vals->onnx_type, ix->rank + 1, shape, err);
}

static rotor_status infer_qdq(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    const char *op = n->p->op_type;
    if (!strcmp(op, "DequantizeLinear")) {
        ox_val *s = IN(m, n, 1);
        return set_out(m, n, 0, s ? s->onnx_type : T_FLOAT, x->rank, x->shape, err);
    }
    if (!strcmp(op, "QuantizeLinear")) {
        ox_val *z = IN(m, n, 2);
        return set_out(m, n, 0, z ? z->onnx_type : T_UINT8, x->rank, x->shape, err);
    }
    /* DynamicQuantizeLinear: y, y_scale, y_zero_point */
    if ((st = set_out(m, n, 0, T_UINT8, x->rank, x->shape, err))) return st;
    if ((st = set_out(m, n, 1, T_FLOAT, 0, NULL, err))) return st;
    return set_out(m, n, 2, T_UINT8, 0, NULL, err);
}

static rotor_status infer_eyelike(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = need(m, n, 1, err))) return st;
    ox_val *x = IN(m, n, 0);
    if (x->rank != 2) NFAIL("input must be a matrix");
    return set_out(m, n, 0, (int)ox_attr_int(n, "dtype", x->onnx_type), 2, x->shape, err);
}

static rotor_status infer_random(ox_model *m, ox_node *n, rotor_error *err) {
    int cnt;
    const int64_t *s = attr_ints(n, "shape", &cnt);
    if (!s && cnt == 0 && !ox_attr(n, "shape")) NFAIL("attribute 'shape' is missing");
    return set_out(m, n, 0, (int)ox_attr_int(n, "dtype", T_FLOAT), cnt, s, err);
}

/* ---- dispatch ------------------------------------------------------------------------ */

typedef rotor_status (*infer_fn)(ox_model *, ox_node *, rotor_error *);

static const struct {
    const char *op;
    infer_fn fn;
} infer_table[] = {
    {"Abs", infer_unary}, {"Acos", infer_unary}, {"Acosh", infer_unary}, {"Asin", infer_unary},
    {"Asinh", infer_unary}, {"Atan", infer_unary}, {"Atanh", infer_unary}, {"Ceil", infer_unary},
    {"Cos", infer_unary}, {"Cosh", infer_unary}, {"Erf", infer_unary}, {"Exp", infer_unary},
    {"Floor", infer_unary}, {"Log", infer_unary}, {"Neg", infer_unary}, {"Reciprocal", infer_unary},
    {"Relu", infer_unary}, {"Round", infer_unary}, {"Sigmoid", infer_unary}, {"Sign", infer_unary},
    {"Sin", infer_unary}, {"Sinh", infer_unary}, {"Sqrt", infer_unary}, {"Tan", infer_unary},
    {"Tanh", infer_unary}, {"Not", infer_unary}, {"IsNaN", infer_unary}, {"IsInf", infer_unary},
    {"Softplus", infer_unary}, {"Softsign", infer_unary}, {"Elu", infer_unary}, {"Selu", infer_unary},
    {"LeakyRelu", infer_unary}, {"ThresholdedRelu", infer_unary}, {"HardSigmoid", infer_unary},
    {"HardSwish", infer_unary}, {"Mish", infer_unary}, {"Celu", infer_unary}, {"Gelu", infer_unary},
    {"Shrink", infer_unary}, {"BitwiseNot", infer_unary}, {"Softmax", infer_unary},
    {"LogSoftmax", infer_unary}, {"Hardmax", infer_unary}, {"LRN", infer_unary},
    {"InstanceNormalization", infer_unary}, {"MeanVarianceNormalization", infer_unary},
    {"LpNormalization", infer_unary}, {"CumSum", infer_unary}, {"Trilu", infer_unary},
    {"Clip", infer_unary}, {"Dropout", infer_unary}, {"Identity", infer_unary}, {"Cast", infer_unary},
    {"CastLike", infer_unary}, {"RandomNormalLike", infer_unary}, {"RandomUniformLike", infer_unary},
    {"Bernoulli", infer_unary}, {"ScatterElements", infer_unary}, {"ScatterND", infer_unary},
    {"Scatter", infer_unary}, {"ReverseSequence", infer_unary},
    {"Add", infer_nary}, {"Sub", infer_nary}, {"Mul", infer_nary}, {"Div", infer_nary}, {"Pow", infer_nary},
    {"Mod", infer_nary}, {"Max", infer_nary}, {"Min", infer_nary}, {"Sum", infer_nary}, {"Mean", infer_nary},
    {"Equal", infer_nary}, {"Less", infer_nary}, {"Greater", infer_nary}, {"LessOrEqual", infer_nary},
    {"GreaterOrEqual", infer_nary}, {"And", infer_nary}, {"Or", infer_nary}, {"Xor", infer_nary},
    {"BitShift", infer_nary}, {"BitwiseAnd", infer_nary}, {"BitwiseOr", infer_nary},
    {"BitwiseXor", infer_nary}, {"PRelu", infer_nary}, {"Where", infer_nary},
    {"Constant", infer_constant}, {"ConstantOfShape", infer_constant_of_shape}, {"Shape", infer_shape_op},
    {"Size", infer_shape_op}, {"Range", infer_range},
    {"MatMul", infer_matmul}, {"MatMulInteger", infer_matmul}, {"QLinearMatMul", infer_matmul},
    {"Gemm", infer_gemm}, {"Conv", infer_conv}, {"ConvInteger", infer_conv}, {"QLinearConv", infer_conv},
    {"ConvTranspose", infer_conv},
    {"MaxPool", infer_pool}, {"AveragePool", infer_pool}, {"LpPool", infer_pool},
    {"GlobalAveragePool", infer_pool}, {"GlobalMaxPool", infer_pool}, {"GlobalLpPool", infer_pool},
    {"BatchNormalization", infer_batchnorm}, {"LayerNormalization", infer_layernorm},
    {"ReduceSum", infer_reduce}, {"ReduceMean", infer_reduce}, {"ReduceMax", infer_reduce},
    {"ReduceMin", infer_reduce}, {"ReduceProd", infer_reduce}, {"ReduceL1", infer_reduce},
    {"ReduceL2", infer_reduce}, {"ReduceLogSum", infer_reduce}, {"ReduceLogSumExp", infer_reduce},
    {"ReduceSumSquare", infer_reduce}, {"ArgMax", infer_reduce}, {"ArgMin", infer_reduce},
    {"Reshape", infer_reshape}, {"Flatten", infer_flatten}, {"Squeeze", infer_squeeze},
    {"Unsqueeze", infer_squeeze}, {"Transpose", infer_transpose}, {"Concat", infer_concat},
    {"Split", infer_split}, {"Slice", infer_slice}, {"Gather", infer_gather},
    {"GatherElements", infer_gather}, {"GatherND", infer_gather}, {"Expand", infer_expand},
    {"Tile", infer_tile}, {"Pad", infer_pad}, {"Resize", infer_resize}, {"Upsample", infer_resize},
    {"DepthToSpace", infer_depth_space}, {"SpaceToDepth", infer_depth_space}, {"TopK", infer_topk},
    {"OneHot", infer_onehot}, {"QuantizeLinear", infer_qdq}, {"DequantizeLinear", infer_qdq},
    {"DynamicQuantizeLinear", infer_qdq}, {"EyeLike", infer_eyelike}, {"RandomNormal", infer_random},
    {"RandomUniform", infer_random},
};

static infer_fn find_infer(const char *op) {
    for (size_t i = 0; i < sizeof infer_table / sizeof infer_table[0]; i++)
        if (!strcmp(infer_table[i].op, op)) return infer_table[i].fn;
    return NULL;
}

/* ---- building the model ----------------------------------------------------------------- */

typedef struct dimbind {
    char name[64];
    int64_t value;
    bool used;
} dimbind;

#define MAX_DIMBINDS 32

typedef struct shape_override {
    char name[128];
    int rank;
    int64_t shape[OX_MAX_RANK];
    bool used;
} shape_override;

/* "name=1x3x8,other=4" (--input). */
static rotor_status parse_overrides(const char *label, const char *text, shape_override *o, int *no,
                                    rotor_error *err) {
    *no = 0;
    for (const char *s = text; s && *s;) {
        const char *comma = strchr(s, ','), *eq = strchr(s, '=');
        if (!comma) comma = s + strlen(s);
        if (!eq || eq > comma || eq == s)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: expected NAME=AxBxC in '%.*s'", label,
                              (int)(comma - s), s);
        if (*no == MAX_DIMBINDS) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: too many inputs", label);
        shape_override *x = &o[*no];
        if ((size_t)(eq - s) >= sizeof x->name)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: name too long", label);
        snprintf(x->name, sizeof x->name, "%.*s", (int)(eq - s), s);
        x->rank = 0;
        x->used = false;
        for (const char *p = eq + 1; p < comma;) {
            char *end;
            errno = 0;
            long long v = strtoll(p, &end, 10);
            if (end == p || errno || v < 1 || v > ((int64_t)1 << 32) || (end < comma && *end != 'x') ||
                x->rank == OX_MAX_RANK)
                return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: %s: expected extents like 1x3x8 (at most %d, "
                                  "each 1 to 2^32), got '%.*s'", label, x->name, OX_MAX_RANK,
                                  (int)(comma - eq - 1), eq + 1);
            x->shape[x->rank++] = v;
            p = end < comma ? end + 1 : end;
        }
        if (x->rank == 0) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: %s has no extents", label, x->name);
        (*no)++;
        s = *comma ? comma + 1 : comma;
    }
    return ROTOR_OK;
}

static rotor_status parse_dims(const char *label, const char *text, dimbind *b, int *nb, rotor_error *err) {
    *nb = 0;
    if (!text || !*text) return ROTOR_OK;
    const char *s = text;
    while (*s) {
        const char *eq = strchr(s, '='), *comma = strchr(s, ',');
        if (!comma) comma = s + strlen(s);
        if (!eq || eq > comma || eq == s)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --dim: expected NAME=N in '%.*s'", label, (int)(comma - s), s);
        if (*nb == MAX_DIMBINDS) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --dim: more than %d names", label, MAX_DIMBINDS);
        if ((size_t)(eq - s) >= sizeof b->name)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --dim: name '%.*s' is too long", label, (int)(eq - s), s);
        dimbind *d = &b[*nb];
        snprintf(d->name, sizeof d->name, "%.*s", (int)(eq - s), s);
        char num[32];
        snprintf(num, sizeof num, "%.*s", (int)(comma - eq - 1), eq + 1);
        char *end;
        errno = 0;
        long long v = strtoll(num, &end, 10);
        if (!num[0] || *end || errno || v < 1 || v > ((int64_t)1 << 32))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --dim: %s: expected a positive integer up to 2^32, got '%s'",
                              label, d->name, num);
        for (int i = 0; i < *nb; i++)
            if (!strcmp(b[i].name, d->name))
                return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --dim: %s is bound twice", label, d->name);
        d->value = v;
        d->used = false;
        (*nb)++;
        s = *comma ? comma + 1 : comma;
    }
    return ROTOR_OK;
}

/* A graph input's type and shape, with symbolic dimensions bound. */
static rotor_status read_input(ox_model *m, const Onnx__ValueInfoProto *vi, ox_val *v, dimbind *b, int nb,
                               shape_override *ov, int nov, rotor_error *err) {
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' is not a tensor (sequences, maps and optionals are "
                          "not supported)", m->label, vi->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int type = tt->has_elem_type ? tt->elem_type : T_UNDEF;
    if (!map_dtype(type, &v->dtype))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' has data type %s (%d), which rotor does not handle",
                          m->label, vi->name, type_name(type), type);
    v->onnx_type = type;
    for (int i = 0; i < nov; i++)
        if (!strcmp(ov[i].name, vi->name)) {
            ov[i].used = true;
            v->rank = ov[i].rank;
            memcpy(v->shape, ov[i].shape, sizeof v->shape);
            if (!shape_elems(v->rank, v->shape, &v->elems))
                return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input %s: element count overflows 64 bits", m->label,
                                  vi->name);
            v->kind = OX_INPUT;
            return ROTOR_OK;
        }
    if (!tt->shape)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' has no shape; rotor needs static shapes (give it "
                          "with --input %s=AxB...)", m->label, vi->name, vi->name);
    if (tt->shape->n_dim > OX_MAX_RANK)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' has rank %zu; rotor handles at most %d", m->label,
                          vi->name, tt->shape->n_dim, OX_MAX_RANK);
    v->rank = (int)tt->shape->n_dim;
    for (int d = 0; d < v->rank; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dim->dim_value < 0)
                return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' dimension %d is %lld", m->label, vi->name, d,
                                  (long long)dim->dim_value);
            v->shape[d] = dim->dim_value;
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param &&
                   *dim->dim_param) {
            int i = 0;
            while (i < nb && strcmp(b[i].name, dim->dim_param)) i++;
            if (i == nb)
                return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' dimension %d is symbolic ('%s'): bind it with "
                                  "--dim %s=N", m->label, vi->name, d, dim->dim_param, dim->dim_param);
            b[i].used = true;
            v->shape[d] = b[i].value;
        } else {
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' dimension %d has no size; rotor needs static shapes",
                              m->label, vi->name, d);
        }
    }
    if (!shape_elems(v->rank, v->shape, &v->elems))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s': element count overflows 64 bits", m->label, vi->name);
    v->kind = OX_INPUT;
    return ROTOR_OK;
}

static void model_free(ox_model *m) {
    for (int v = 0; v < m->nvals; v++) free_data(&m->vals[v]);
    for (int i = 0; i < m->nnodes; i++) {
        free(m->nodes[i].in);
        free(m->nodes[i].out);
    }
    free(m->vals);
    free(m->index);
    free(m->nodes);
    free(m->order);
    free(m->cons_start);
    free(m->cons);
    if (m->proto) onnx__model_proto__free_unpacked(m->proto, NULL);
}

/* Kahn's algorithm, taking the ready node that comes first in the file (a
 * binary min-heap of node indices): a sorted file keeps its order. */
static rotor_status sort_nodes(ox_model *m, rotor_error *err) {
    int nn = m->nnodes;
    int *pending = calloc((size_t)(nn ? nn : 1), sizeof(int));
    int *heap = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    m->order = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    if (!pending || !heap || !m->order) {
        free(pending), free(heap);
        return rotor_nomem(err);
    }
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < m->nodes[i].nin; k++) {
            int v = m->nodes[i].in[k];
            if (v >= 0 && m->vals[v].producer >= 0) pending[i]++;
        }
    int hn = 0, done = 0;
#define HPUSH(x)                                                                    \
    do {                                                                            \
        int c_ = hn++;                                                              \
        heap[c_] = (x);                                                             \
        while (c_ > 0 && heap[(c_ - 1) / 2] > heap[c_]) {                           \
            int t_ = heap[c_]; heap[c_] = heap[(c_ - 1) / 2]; heap[(c_ - 1) / 2] = t_; \
            c_ = (c_ - 1) / 2;                                                      \
        }                                                                           \
    } while (0)
    for (int i = 0; i < nn; i++)
        if (!pending[i]) HPUSH(i);
    while (hn) {
        int top = heap[0];
        heap[0] = heap[--hn];
        for (int c = 0;;) {
            int l = 2 * c + 1, r = l + 1, s = c;
            if (l < hn && heap[l] < heap[s]) s = l;
            if (r < hn && heap[r] < heap[s]) s = r;
            if (s == c) break;
            int t = heap[c];
            heap[c] = heap[s];
            heap[s] = t;
            c = s;
        }
        m->order[done++] = top;
        ox_node *n = &m->nodes[top];
        for (int k = 0; k < n->nout; k++) {
            int v = n->out[k];
            if (v < 0) continue;
            for (int j = m->cons_start[v]; j < m->cons_start[v + 1]; j++)
                if (--pending[m->cons[j]] == 0) HPUSH(m->cons[j]);
        }
    }
#undef HPUSH
    int stuck = -1;
    for (int i = 0; i < nn && stuck < 0; i++)
        if (pending[i] > 0) stuck = i;
    free(pending);
    free(heap);
    if (done != nn)
        return ox_node_fail(m, &m->nodes[stuck], err, ROTOR_ERR_INPUT,
                            "the graph has a cycle through this node; ONNX graphs must be acyclic");
    return ROTOR_OK;
}

/* Consumer lists (CSR), counting a node once per input slot. */
static rotor_status build_consumers(ox_model *m, rotor_error *err) {
    m->cons_start = calloc((size_t)m->nvals + 1, sizeof(int));
    int total = 0;
    for (int i = 0; i < m->nnodes; i++) total += m->nodes[i].nin;
    m->cons = malloc(sizeof(int) * (size_t)(total ? total : 1));
    int *fill = calloc((size_t)m->nvals + 1, sizeof(int));
    if (!m->cons_start || !m->cons || !fill) {
        free(fill);
        return rotor_nomem(err);
    }
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < m->nodes[i].nin; k++)
            if (m->nodes[i].in[k] >= 0) m->cons_start[m->nodes[i].in[k] + 1]++;
    for (int v = 0; v < m->nvals; v++) m->cons_start[v + 1] += m->cons_start[v];
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < m->nodes[i].nin; k++) {
            int v = m->nodes[i].in[k];
            if (v >= 0) m->cons[m->cons_start[v] + fill[v]++] = i;
        }
    free(fill);
    return ROTOR_OK;
}

/* Values, nodes and their links from the decoded graph. */
static rotor_status build(ox_model *m, const rotor_onnx_options *opt, rotor_error *err) {
    const Onnx__GraphProto *g = m->proto->graph;
    rotor_status st;
    dimbind binds[MAX_DIMBINDS];
    int nb;
    if ((st = parse_dims(m->label, opt ? opt->dims : NULL, binds, &nb, err))) return st;
    shape_override ovr[MAX_DIMBINDS];
    int nov;
    if ((st = parse_overrides(m->label, opt ? opt->input_shapes : NULL, ovr, &nov, err))) return st;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (!t->name || !*t->name) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: initializer %zu has no name", m->label, i);
        int v = intern(m, t->name);
        if (v < 0) return rotor_nomem(err);
        if (m->vals[v].kind != OX_UNDEF)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: initializer '%s' is defined twice", m->label, t->name);
        char what[200];
        snprintf(what, sizeof what, "initializer '%.150s'", t->name);
        if ((st = decode_tensor(m, t, &m->vals[v], what, err))) return st;
        m->vals[v].kind = OX_CONST;
    }
    if (g->n_sparse_initializer)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: sparse initializers are not supported", m->label);
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (!vi->name || !*vi->name) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input %zu has no name", m->label, i);
        int v = intern(m, vi->name);
        if (v < 0) return rotor_nomem(err);
        if (m->vals[v].kind == OX_CONST) continue; /* IR < 4 lists initializers as inputs too */
        if (m->vals[v].kind != OX_UNDEF)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' is listed twice", m->label, vi->name);
        if ((st = read_input(m, vi, &m->vals[v], binds, nb, ovr, nov, err))) return st;
    }
    for (int i = 0; i < nov; i++)
        if (!ovr[i].used)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: '%s' is not an input of the graph", m->label,
                              ovr[i].name);
    for (int i = 0; i < nb; i++)
        if (!binds[i].used)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --dim: '%s' is not a symbolic dimension of any input",
                              m->label, binds[i].name);
    if (g->n_node > (size_t)INT32_MAX / 4)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %zu nodes is absurd", m->label, g->n_node);
    m->nnodes = (int)g->n_node;
    m->nodes = calloc((size_t)(m->nnodes ? m->nnodes : 1), sizeof *m->nodes);
    if (!m->nodes) return rotor_nomem(err);
    for (int i = 0; i < m->nnodes; i++) {
        ox_node *n = &m->nodes[i];
        n->p = g->node[i];
        n->domain = node_domain(n->p);
        if (!n->p->op_type || !*n->p->op_type)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: node %d has no op_type", m->label, i);
        if (n->p->name && *n->p->name) snprintf(n->name, sizeof n->name, "%s", n->p->name);
        else snprintf(n->name, sizeof n->name, "%s_%d", n->p->op_type, i);
        n->nin = (int)n->p->n_input;
        n->nout = (int)n->p->n_output;
        n->in = malloc(sizeof(int) * (size_t)(n->nin ? n->nin : 1));
        n->out = malloc(sizeof(int) * (size_t)(n->nout ? n->nout : 1));
        if (!n->in || !n->out) return rotor_nomem(err);
        for (int k = 0; k < n->nin; k++) n->in[k] = -1;
        for (int k = 0; k < n->nout; k++) n->out[k] = -1;
    }
    /* outputs first, so that every input can be checked for a definition */
    for (int i = 0; i < m->nnodes; i++) {
        ox_node *n = &m->nodes[i];
        for (int k = 0; k < n->nout; k++) {
            const char *name = n->p->output[k];
            if (!name || !*name) continue;
            int v = intern(m, name);
            if (v < 0) return rotor_nomem(err);
            ox_val *x = &m->vals[v];
            if (x->producer >= 0 && !strcmp(n->p->op_type, "Constant") &&
                !strcmp(m->nodes[x->producer].p->op_type, "Constant")) {
                /* A name defined by two Constant nodes takes the later one:
                 * gpt2_past.onnx was resized by a tool that appended new
                 * head-size constants without removing the old ones, and its
                 * shapes agree only with the later values. */
                ox_node *old = &m->nodes[x->producer];
                old->duplicate = true;
                old->out[0] = -1;
                x->producer = i;
                n->out[k] = v;
                continue;
            }
            if (x->kind != OX_UNDEF || x->producer >= 0)
                return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "output '%s' is already defined%s", name,
                                    x->producer >= 0 ? " by another node" : " (an input or initializer)");
            x->producer = i;
            n->out[k] = v;
        }
    }
    for (int i = 0; i < m->nnodes; i++) {
        ox_node *n = &m->nodes[i];
        for (int k = 0; k < n->nin; k++) {
            const char *name = n->p->input[k];
            if (!name || !*name) continue; /* an omitted optional input */
            int v = find_val(m, name);
            if (v < 0 || (m->vals[v].kind == OX_UNDEF && m->vals[v].producer < 0))
                return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "input '%s' is not defined by any node, input or "
                                    "initializer", name);
            n->in[k] = v;
        }
    }
    for (size_t i = 0; i < g->n_output; i++) {
        const char *name = g->output[i]->name;
        int v = name ? find_val(m, name) : -1;
        if (v < 0 || (m->vals[v].kind == OX_UNDEF && m->vals[v].producer < 0))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: graph output '%s' is not defined", m->label,
                              name ? name : "");
        m->vals[v].is_output = true;
    }
    if ((st = build_consumers(m, err))) return st;
    return sort_nodes(m, err);
}

/* Pass 1: infer and fold, in topological order. */
static rotor_status infer_all(ox_model *m, rotor_error *err) {
    for (int oi = 0; oi < m->nnodes; oi++) {
        ox_node *n = &m->nodes[m->order[oi]];
        if (n->duplicate) {
            n->folded = true;
            continue;
        }
        if (strcmp(n->domain, "ai.onnx") != 0)
            return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "operators outside the default ONNX domain are not "
                                "supported");
        for (size_t a = 0; a < n->p->n_attribute; a++)
            if (n->p->attribute[a]->g || n->p->attribute[a]->n_graphs)
                return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "control flow (subgraph attribute '%s') is not "
                                    "supported: plans need a static graph", n->p->attribute[a]->name);
        infer_fn fn = find_infer(n->p->op_type);
        if (!fn) return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "operator is not supported by rotor's importer");
        for (int k = 0; k < n->nin; k++) {
            ox_val *x = IN(m, n, k);
            if (x && x->kind == OX_UNDEF)
                return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "input '%s' has no known shape", x->name);
        }
        rotor_status st = fn(m, n, err);
        if (st) return st;
        bool allc = true;
        for (int k = 0; k < n->nin; k++) {
            ox_val *x = IN(m, n, k);
            if (x && x->kind != OX_CONST) allc = false;
        }
        /* random generators are not constants even with constant inputs */
        if (!strncmp(n->p->op_type, "Random", 6) || !strcmp(n->p->op_type, "Bernoulli")) allc = false;
        bool folded = true;
        for (int k = 0; k < n->nout; k++) {
            ox_val *o = OUT(m, n, k);
            if (!o) continue;
            if (o->kind == OX_UNDEF) o->kind = allc ? OX_CONST : OX_ACT;
            if (o->kind != OX_CONST) folded = false;
        }
        n->folded = folded;
        if (folded) m->stats.folded++;
    }
    return ROTOR_OK;
}

/* Identity and inference-mode Dropout forward their input (no operator). */
static void make_aliases(ox_model *m) {
    for (int oi = 0; oi < m->nnodes; oi++) {
        ox_node *n = &m->nodes[m->order[oi]];
        if (n->folded || n->nin < 1 || n->in[0] < 0 || n->nout < 1 || n->out[0] < 0) continue;
        bool ident = !strcmp(n->p->op_type, "Identity");
        bool drop = !strcmp(n->p->op_type, "Dropout");
        if (!ident && !drop) continue;
        if (drop && n->nout > 1 && n->out[1] >= 0 &&
            (m->cons_start[n->out[1] + 1] > m->cons_start[n->out[1]] || m->vals[n->out[1]].is_output))
            continue; /* the mask is read: keep it as an operator */
        m->vals[n->out[0]].alias = n->in[0];
        n->done = true;
    }
}

/* Marks the nodes and values that reach a graph output (dead code is not
 * planned). */
static void mark_live(ox_model *m) {
    for (int v = 0; v < m->nvals; v++)
        if (m->vals[v].is_output) m->vals[v].live = true;
    for (int oi = m->nnodes - 1; oi >= 0; oi--) {
        ox_node *n = &m->nodes[m->order[oi]];
        for (int k = 0; k < n->nout && !n->live; k++)
            if (n->out[k] >= 0 && m->vals[n->out[k]].live) n->live = true;
        if (!n->live) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] >= 0) m->vals[n->in[k]].live = true;
    }
}

rotor_status rotor_onnx_load_buffer(const uint8_t *data, size_t len, const char *label,
                                    const rotor_onnx_options *opt, rotor_graph *out,
                                    rotor_onnx_stats *stats, rotor_error *err) {
    ox_model m;
    memset(&m, 0, sizeof m);
    m.label = label ? label : "<buffer>";
    const char *base = strrchr(m.label, '/');
    base = base ? base + 1 : m.label;
    char gname[64];
    snprintf(gname, sizeof gname, "%s", base);
    char *dot = strrchr(gname, '.');
    if (dot && !strcmp(dot, ".onnx")) *dot = '\0';
    rotor_graph_init(out, gname);
    if (stats) memset(stats, 0, sizeof *stats);
    m.proto = onnx__model_proto__unpack(NULL, len, data);
    if (!m.proto)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: not a valid ONNX model (the protobuf does not decode)", m.label);
    rotor_status st = ROTOR_OK;
    if (!m.proto->graph) {
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: the model has no graph", m.label);
        goto done;
    }
    m.stats.ir_version = m.proto->has_ir_version ? m.proto->ir_version : 0;
    m.opset = -1;
    for (size_t i = 0; i < m.proto->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m.proto->opset_import[i];
        if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) m.opset = o->has_version ? o->version : 0;
    }
    if (m.opset < 0 && m.proto->n_opset_import == 0) m.opset = 1; /* IR 2 and older carry no opset */
    if (m.opset < 0) m.opset = 0;
    m.stats.opset = m.opset;
    m.stats.nodes = (int)m.proto->graph->n_node;
    if ((st = build(&m, opt, err))) goto done;
    if ((st = infer_all(&m, err))) goto done;
    make_aliases(&m);
    mark_live(&m);
    st = ox_lower(&m, out, err);
done:
    if (stats) *stats = m.stats;
    model_free(&m);
    return st;
}

rotor_status rotor_onnx_load(const char *path, const rotor_onnx_options *opt, rotor_graph *out,
                             rotor_onnx_stats *stats, rotor_error *err) {
    rotor_graph_init(out, "onnx");
    if (stats) memset(stats, 0, sizeof *stats);
    FILE *f = fopen(path, "rb");
    if (!f) return rotor_fail(err, ROTOR_ERR_IO, "%s: %s", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 1 << 16;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                fclose(f);
                return rotor_fail(err, ROTOR_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return rotor_fail(err, ROTOR_ERR_IO, "%s: read error", path);
    }
    rotor_graph_free(out);
    rotor_status st = rotor_onnx_load_buffer(buf, len, path, opt, out, stats, err);
    free(buf);
    return st;
}
