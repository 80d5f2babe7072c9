/* onnxval.c — what every importer file shares (docs/onnx.md): values and
 * their data, TensorProto decoding, attributes, node errors and the small
 * shape helpers every rule uses.  It calls nothing else of the importer, so
 * onnx.c (import), the shape rules (onnxelem.c, onnxnn.c, onnxlayout.c, ...)
 * and the lowering (lower*.c) all stand on it without a cycle. */
#include "onnxir.h"
#include "rotor/base/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- errors -------------------------------------------------------------- */

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

/* ---- values -------------------------------------------------------------- */

int ox_resolve(const ox_model *m, int v) {
    while (v >= 0 && m->vals[v].alias >= 0) v = m->vals[v].alias;
    return v;
}

bool ox_map_dtype(int t, rotor_dtype *out) {
    static const int map[] = {
        [T_FLOAT] = ROTOR_DTYPE_F32,   [T_UINT8] = ROTOR_DTYPE_U8,     [T_INT8] = ROTOR_DTYPE_I8,
        [T_UINT16] = ROTOR_DTYPE_U16,  [T_INT16] = ROTOR_DTYPE_I16,    [T_INT32] = ROTOR_DTYPE_I32,
        [T_INT64] = ROTOR_DTYPE_I64,   [T_STRING] = -1,                [T_BOOL] = ROTOR_DTYPE_BOOL,
        [T_FLOAT16] = ROTOR_DTYPE_F16, [T_DOUBLE] = ROTOR_DTYPE_F64,   [T_UINT32] = ROTOR_DTYPE_U32,
        [T_UINT64] = ROTOR_DTYPE_U64,  [T_COMPLEX64] = ROTOR_DTYPE_C64, [T_COMPLEX128] = ROTOR_DTYPE_C128,
        [T_BFLOAT16] = ROTOR_DTYPE_BF16, [T_F8_E4M3FN] = ROTOR_DTYPE_F8, [T_F8_E4M3FNUZ] = ROTOR_DTYPE_F8,
        [T_F8_E5M2] = ROTOR_DTYPE_F8,  [T_F8_E5M2FNUZ] = ROTOR_DTYPE_F8,
        [T_UINT4] = ROTOR_DTYPE_U4,    [T_INT4] = ROTOR_DTYPE_I4,
    };
    if (t <= T_UNDEF || t > T_INT4 || map[t] < 0) return false;
    *out = (rotor_dtype)map[t];
    return true;
}

bool ox_is_setting(const ox_node *n, int i) {
    static const struct {
        const char *op;
        int first, last; /* the inputs that are settings */
    } rows[] = {{"Pow", 1, 1},           {"Clip", 1, 2},           {"Pad", 2, 2},     {"Resize", 1, 2},
                {"Upsample", 1, 1},      {"Dropout", 1, 1},        {"Range", 0, 2},   {"OneHot", 1, 2},
                {"QuantizeLinear", 1, 2}, {"DequantizeLinear", 1, 2}, {"STFT", 1, 3}};
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
        if (!strcmp(n->p->op_type, rows[k].op)) return i >= rows[k].first && i <= rows[k].last;
    return false;
}

bool ox_is_float_type(int t) {
    return t == T_FLOAT || t == T_FLOAT16 || t == T_DOUBLE || t == T_BFLOAT16 ||
           (t >= T_F8_E4M3FN && t <= T_F8_E5M2FNUZ) || t == T_COMPLEX64 || t == T_COMPLEX128;
}

const char *ox_type_name(int t) {
    static const char *const names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16",
                                        "int32", "int64", "string", "bool", "float16", "double",
                                        "uint32", "uint64", "complex64", "complex128", "bfloat16",
                                        "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                                        "uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2"};
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

double ox_get(const ox_val *v, int64_t k) { return v->fv ? v->fv[k] : (double)v->iv[k]; }

int64_t ox_get_i(const ox_val *v, int64_t k) {
    if (v->iv) return v->iv[k];
    double x = v->fv[k];
    if (!(x == x)) return 0;
    if (x >= 9.2e18) return INT64_MAX;
    if (x <= -9.2e18) return INT64_MIN;
    return (int64_t)x;
}

void ox_free_data(ox_val *v) {
    free(v->iv);
    free(v->fv);
    v->iv = NULL;
    v->fv = NULL;
    v->has_data = false;
}

/* Storage for v's data (per its type), elems entries. */
bool ox_alloc_data(ox_val *v) {
    ox_free_data(v);
    size_t n = (size_t)(v->elems > 0 ? v->elems : 1);
    if (ox_is_float_type(v->onnx_type)) v->fv = calloc(n, sizeof(double));
    else v->iv = calloc(n, sizeof(int64_t));
    v->has_data = v->iv || v->fv;
    return v->has_data;
}

/* Stores x into element k, rounding into an integer type (ONNX casts truncate). */
void ox_put(ox_val *v, int64_t k, double x) {
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
bool ox_shape_elems(int rank, const int64_t *shape, int64_t *out) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0 || !rotor_mul_i64(n, shape[i], &n)) return false;
    }
    *out = n;
    return true;
}

/* v's type and shape from t, and how many typed values t holds (*typed)
 * and whether its data lies outside the file (*external); errors name it as
 * what ("initializer 'w'", "attribute 'value'"). */
static rotor_status decode_shape(const ox_model *m, const Onnx__TensorProto *t, ox_val *v, const char *what,
                                 size_t *typed_out, bool *external_out, rotor_error *err) {
    if (t->n_dims > OX_MAX_RANK)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s has rank %zu; rotor handles at most %d dimensions",
                          m->label, what, t->n_dims, OX_MAX_RANK);
    int type = t->has_data_type ? t->data_type : T_UNDEF;
    if (!ox_map_dtype(type, &v->dtype))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s has data type %s (%d), which rotor does not handle",
                          m->label, what, ox_type_name(type), type);
    v->onnx_type = type;
    v->rank = (int)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s has negative dimension %lld", m->label, what,
                              (long long)t->dims[i]);
        v->shape[i] = t->dims[i];
    }
    if (!ox_shape_elems(v->rank, v->shape, &v->elems))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: element count overflows 64 bits", m->label, what);
    int64_t nbytes;
    if (!rotor_dtype_storage(v->dtype, v->elems, &nbytes))
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
    /* int4 and uint4 pack two elements per int32_data entry, as in raw_data */
    if (typed > 0 && (type == T_INT4 || type == T_UINT4)) typed = 2 * typed - (size_t)(v->elems % 2);
    if (t->has_raw_data && t->raw_data.len > 0) {
        if ((int64_t)t->raw_data.len != nbytes)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: raw_data holds %zu bytes, its shape needs %lld",
                              m->label, what, t->raw_data.len, (long long)nbytes);
    } else if (typed > 0 && (int64_t)typed != v->elems) {
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: %zu values for %lld elements", m->label, what, typed,
                          (long long)v->elems);
    }
    *typed_out = typed;
    *external_out = external;
    return ROTOR_OK;
}

/* Fills v (shape, type and, if small, data) from a TensorProto.  what names it
 * in errors ("initializer 'w'", "attribute 'value'"). */
rotor_status ox_decode_tensor(const ox_model *m, const Onnx__TensorProto *t, ox_val *v,
                                  const char *what, rotor_error *err) {
    size_t typed = 0;
    bool external = false;
    rotor_status st = decode_shape(m, t, v, what, &typed, &external, err);
    if (st) return st;
    int type = v->onnx_type;
    bool raw = t->has_raw_data && t->raw_data.len > 0;
    if (external || v->elems > m->data_max || type == T_COMPLEX64 || type == T_COMPLEX128) return ROTOR_OK;
    if (!raw && typed == 0 && v->elems > 0) return ROTOR_OK; /* stripped: the shape suffices */
    if (!ox_alloc_data(v)) return rotor_nomem(err);
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
        case T_INT4: case T_UINT4: { /* element k: byte k/2, low nibble first (onnx.proto) */
            isint = true;
            unsigned byte = raw ? r[k / 2] : (unsigned)t->int32_data[k / 2];
            xi = (byte >> (k % 2 ? 4 : 0)) & 15;
            if (type == T_INT4 && xi > 7) xi -= 16;
            break;
        }
        default: /* float8: keep the shape only */
            ox_free_data(v);
            return ROTOR_OK;
        }
        if (isint) {
            if (v->iv) v->iv[k] = xi;
            else v->fv[k] = (double)xi;
        } else {
            ox_put(v, k, x);
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

const int64_t *ox_attr_ints(const ox_node *n, const char *name, int *count) {
    const Onnx__AttributeProto *a = ox_attr(n, name);
    *count = a ? (int)a->n_ints : 0;
    return a && a->n_ints ? a->ints : NULL;
}

/* The whole file at path into *buf (malloc'd, *len bytes), refusing one
 * over max bytes, read as base/readfile.h reads every file: by its size,
 * a stream up to the limit, a device not at all.  Errors name the path:
 * "PATH: No such file or directory", "PATH: 5000 bytes, over the limit of
 * 1000 bytes", "PATH: cannot read: Is a directory". */
rotor_status ox_read_file(const char *path, size_t max, uint8_t **buf, size_t *len, rotor_error *err) {
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rotor_fail(err, ROTOR_ERR_IO, "%s: %s", path, strerror(errno));
    char *text;
    rotor_status st = rotor_read_fd(fd, path, max > (size_t)INT64_MAX ? INT64_MAX : (int64_t)max, &text, len, err);
    close(fd);
    *buf = (uint8_t *)text;
    return st;
}

/* ---- outputs and shapes (every shape rule) --------------------------------- */

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
    if (!rotor_dtype_storage(o->dtype, o->elems, &b))
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
