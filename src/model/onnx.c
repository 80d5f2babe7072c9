/* onnx.c — reading an ONNX model: decode (protobuf-c on Debian's onnx.proto),
 * bind symbolic dimensions, sort the nodes, infer every shape and fold every
 * node whose inputs are all constant (docs/onnx.md): the import, which
 * never lowers; onnxload.c runs it and then lower.c over the nodes that are
 * left.  This file decodes and binds; the other steps have files of their
 * own: onnxsort.c (the order), onnxshape.c (shape inference, each node's
 * rule found in the operator registry, onnxops.c), onnxfold.c (evaluating
 * nodes whose inputs are constant); onnxval.c holds what they all share.
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

#include "rotor/base/hash.h"

/* ---- value table ---------------------------------------------------------- */

static const char *node_domain(const Onnx__NodeProto *p) {
    return (!p->domain || !*p->domain) ? "ai.onnx" : p->domain;
}

static int find_val(const ox_model *m, const char *name) {
    if (!m->index_cap) return -1;
    size_t mask = (size_t)m->index_cap - 1;
    for (size_t i = rotor_fnv1a_str(name) & mask;; i = (i + 1) & mask) {
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
        size_t i = rotor_fnv1a_str(m->vals[v].name) & mask;
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
        size_t i = rotor_fnv1a_str(name) & mask;
        while (m->index[i]) i = (i + 1) & mask;
        m->index[i] = m->nvals;
    }
    return m->nvals - 1;
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
            /* "1x3x8x": an extent missing after the last x */
            if (end == p || errno || v < 1 || v > ((int64_t)1 << 32) || (end < comma && *end != 'x') ||
                end + 1 == comma || x->rank == OX_MAX_RANK)
                return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: %s: expected extents like 1x3x8 (at most %d, "
                                  "each 1 to 2^32), got '%.*s'", label, x->name, OX_MAX_RANK,
                                  (int)(comma - eq - 1), eq + 1);
            x->shape[x->rank++] = v;
            p = end < comma ? end + 1 : end;
        }
        if (x->rank == 0) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: %s has no extents", label, x->name);
        for (int i = 0; i < *no; i++) /* the first or the second: not knowable, so neither */
            if (!strcmp(o[i].name, x->name))
                return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --input: %s is given twice", label, x->name);
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
        /* the whole value, however long (a copy of 31 characters read
         * "000...0800" as 8: found by a review helper) */
        char *num = strndup(eq + 1, (size_t)(comma - eq - 1)), *end;
        if (!num) return rotor_nomem(err);
        errno = 0;
        long long v = strtoll(num, &end, 10);
        bool bad = !num[0] || *end || errno || v < 1 || v > ((int64_t)1 << 32);
        if (bad)
            rotor_fail(err, ROTOR_ERR_INPUT, "%s: --dim: %s: expected a positive integer up to 2^32, got '%s'", label,
                       d->name, num);
        free(num);
        if (bad) return ROTOR_ERR_INPUT;
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
    if (!ox_map_dtype(type, &v->dtype))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' has data type %s (%d), which rotor does not handle",
                          m->label, vi->name, ox_type_name(type), type);
    v->onnx_type = type;
    for (int i = 0; i < nov; i++)
        if (!strcmp(ov[i].name, vi->name)) {
            ov[i].used = true;
            v->rank = ov[i].rank;
            memcpy(v->shape, ov[i].shape, sizeof v->shape);
            if (!ox_shape_elems(v->rank, v->shape, &v->elems))
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
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s' dimension %d has no size; rotor needs static shapes "
                              "(give it with --input %s=AxB...)", m->label, vi->name, d, vi->name);
        }
    }
    if (!ox_shape_elems(v->rank, v->shape, &v->elems))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: input '%s': element count overflows 64 bits", m->label, vi->name);
    v->kind = OX_INPUT;
    return ROTOR_OK;
}

/* Everything one pass of the import built (values, nodes, order,
 * consumers, the flattened node list); the decoded file and the facts
 * learned stay. */
static void clear_pass(ox_model *m) {
    for (int v = 0; v < m->nvals; v++) ox_free_data(&m->vals[v]);
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
    ox_flat_free(m);
    m->vals = NULL;
    m->index = NULL;
    m->nodes = NULL;
    m->order = NULL;
    m->cons_start = m->cons = NULL;
    m->nvals = m->vals_cap = m->index_cap = m->nnodes = 0;
    m->stats.folded = 0;
}

void ox_model_free(ox_model *m) {
    clear_pass(m);
    ox_facts_free(m);
    if (m->proto) onnx__model_proto__free_unpacked(m->proto, NULL);
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

/* The graph input called name, or NULL. */
static const Onnx__ValueInfoProto *graph_input(const Onnx__GraphProto *g, const char *name) {
    for (size_t i = 0; i < g->n_input; i++)
        if (g->input[i]->name && !strcmp(g->input[i]->name, name)) return g->input[i];
    return NULL;
}

/* One --value: NAME=FILE.pb or NAME=1,2,3, into v (a constant with data). */
static rotor_status bind_value(ox_model *m, const char *spec, const Onnx__ValueInfoProto *vi, ox_val *v,
                               rotor_error *err) {
    const char *eq = strchr(spec, '=');
    const char *rhs = eq + 1;
    size_t n = strlen(rhs);
    char what[200];
    snprintf(what, sizeof what, "--value %.150s", vi->name);
    const Onnx__TypeProto *tp = vi->type;
    int declared = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
                           tp->tensor_type->has_elem_type
                       ? tp->tensor_type->elem_type
                       : T_UNDEF;
    if (strchr(rhs, '/') || (n > 3 && !strcmp(rhs + n - 3, ".pb"))) {
        uint8_t *buf;
        size_t len;
        rotor_status rs = ox_read_file(rhs, (size_t)1 << 31, &buf, &len, err);
        if (rs) {
            char prefix[300];
            snprintf(prefix, sizeof prefix, "%s: %s", m->label, what);
            rotor_error_prefix(err, prefix);
            return rs;
        }
        Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, buf);
        free(buf);
        if (!t) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: %s is not a serialized TensorProto", m->label, what, rhs);
        rotor_status st = ox_decode_tensor(m, t, v, what, err);
        onnx__tensor_proto__free_unpacked(t, NULL);
        if (st) return st;
        if (declared != T_UNDEF && v->onnx_type != declared)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: %s holds %s; the input is declared %s", m->label, what, rhs,
                              ox_type_name(v->onnx_type), ox_type_name(declared));
        if (!v->has_data)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: %s holds no data (or more than %d elements)", m->label, what,
                              rhs, OX_DATA_MAX);
        v->kind = OX_CONST;
        return ROTOR_OK;
    }
    /* numbers */
    double num[OX_DATA_MAX > 1024 ? 1024 : OX_DATA_MAX];
    int cnt = 0;
    bool isint = declared == T_UNDEF || !ox_is_float_type(declared);
    for (const char *s = rhs; *s;) {
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (end == s || errno || !isfinite(x) || (*end && *end != ','))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: expected numbers separated by commas, got '%.60s'", m->label,
                              what, rhs);
        if (isint && (x != floor(x) || fabs(x) > 9e15))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: %g is not an integer, and the input is declared %s",
                              m->label, what, x, ox_type_name(declared));
        if (cnt == (int)(sizeof num / sizeof num[0]))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: more than %d numbers; give a .pb file", m->label, what,
                              (int)(sizeof num / sizeof num[0]));
        num[cnt++] = x;
        s = *end ? end + 1 : end;
    }
    if (!cnt) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: no numbers", m->label, what);
    v->onnx_type = declared != T_UNDEF ? declared : T_INT64;
    if (!ox_map_dtype(v->onnx_type, &v->dtype))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: the input's type %s is not one rotor handles", m->label, what,
                          ox_type_name(v->onnx_type));
    /* the declared shape when it is static and holds cnt elements, else [cnt] */
    const Onnx__TensorShapeProto *sh = declared != T_UNDEF ? tp->tensor_type->shape : NULL;
    int64_t e = 1;
    bool fixed = sh && sh->n_dim <= OX_MAX_RANK;
    for (size_t d = 0; fixed && d < sh->n_dim; d++) {
        fixed = sh->dim[d]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && sh->dim[d]->dim_value > 0;
        if (fixed) e *= sh->dim[d]->dim_value;
    }
    if (fixed && e == cnt) {
        v->rank = (int)sh->n_dim;
        for (int d = 0; d < v->rank; d++) v->shape[d] = sh->dim[d]->dim_value;
    } else {
        v->rank = 1;
        v->shape[0] = cnt;
    }
    v->elems = cnt;
    if (!ox_alloc_data(v)) return rotor_nomem(err);
    for (int k = 0; k < cnt; k++) ox_put(v, k, num[k]);
    v->kind = OX_CONST;
    return ROTOR_OK;
}

/* Every --value, before the inputs are read: a bound input is a constant. */
static rotor_status bind_values(ox_model *m, const rotor_onnx_options *opt, rotor_error *err) {
    const Onnx__GraphProto *g = m->proto->graph;
    for (int i = 0; opt && i < opt->nvalues; i++) {
        const char *spec = opt->values[i];
        const char *eq = spec ? strchr(spec, '=') : NULL;
        if (!eq || eq == spec || !eq[1])
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --value: expected NAME=FILE.pb or NAME=1,2,3 in '%.80s'",
                              m->label, spec ? spec : "");
        char name[256];
        if ((size_t)(eq - spec) >= sizeof name)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --value: name '%.40s...' is too long", m->label, spec);
        snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
        const Onnx__ValueInfoProto *vi = graph_input(g, name);
        if (!vi) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --value: '%s' is not an input of the graph", m->label, name);
        int v = intern(m, vi->name); /* intern keeps the pointer: the proto's string outlives it */
        if (v < 0) return rotor_nomem(err);
        if (m->vals[v].kind == OX_CONST)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: --value: '%s' is given twice, or is an initializer", m->label,
                              name);
        rotor_status st = bind_value(m, spec, vi, &m->vals[v], err);
        if (st) return st;
    }
    return ROTOR_OK;
}

/* The graph's values: initializers, --value bindings and inputs (with
 * --dim and --input applied). */
static rotor_status build_values(ox_model *m, const rotor_onnx_options *opt, rotor_error *err) {
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
        if ((st = ox_decode_tensor(m, t, &m->vals[v], what, err))) return st;
        m->vals[v].kind = OX_CONST;
        m->vals[v].initializer = true;
        m->vals[v].param = m->train && ox_is_float_type(m->vals[v].onnx_type) && m->vals[v].elems >= 2;
        m->vals[v].held = m->train && ox_is_float_type(m->vals[v].onnx_type) && m->vals[v].elems == 1;
    }
    if (g->n_sparse_initializer)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: sparse initializers are not supported", m->label);
    if ((st = bind_values(m, opt, err))) return st;
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
    return ROTOR_OK;
}

/* One ox_node per node of the flattened graph, its links unset. */
static rotor_status build_nodes(ox_model *m, rotor_error *err) {
    const Onnx__GraphProto *g = m->proto->graph;
    rotor_status st;
    if (g->n_node > (size_t)INT32_MAX / 4)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %zu nodes is absurd", m->label, g->n_node);
    if ((st = ox_flatten_control(m, err))) return st;
    m->nnodes = m->nflat;
    m->nodes = calloc((size_t)(m->nnodes ? m->nnodes : 1), sizeof *m->nodes);
    if (!m->nodes) return rotor_nomem(err);
    for (int i = 0; i < m->nnodes; i++) {
        ox_node *n = &m->nodes[i];
        n->p = m->flat[i];
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
    return ROTOR_OK;
}

/* Each node's outputs and inputs bound to values. */
static rotor_status link_nodes(ox_model *m, rotor_error *err) {
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
    return ROTOR_OK;
}

/* Values, nodes and their links from the decoded graph. */
static rotor_status build(ox_model *m, const rotor_onnx_options *opt, rotor_error *err) {
    const Onnx__GraphProto *g = m->proto->graph;
    rotor_status st;
    if ((st = build_values(m, opt, err)) || (st = build_nodes(m, err)) || (st = link_nodes(m, err))) return st;
    for (size_t i = 0; i < g->n_output; i++) {
        const char *name = g->output[i]->name;
        int v = name ? find_val(m, name) : -1;
        if (v < 0 || (m->vals[v].kind == OX_UNDEF && m->vals[v].producer < 0))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: graph output '%s' is not defined", m->label,
                              name ? name : "");
        m->vals[v].is_output = true;
    }
    if ((st = build_consumers(m, err))) return st;
    return ox_sort_nodes(m, err);
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
        if (drop && n->nin > 2 && n->in[2] >= 0) { /* training_mode: unknown or true draws a mask */
            const ox_val *tm = &m->vals[ox_resolve(m, n->in[2])];
            if (!tm->has_data || tm->elems < 1 || ox_get(tm, 0) != 0) continue;
        }
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

/* Decodes the file and infers every value's shape and type (everything but
 * lowering): shared by the import and rotor_onnx_outputs. */
static rotor_status decode_and_infer(ox_model *m, const uint8_t *data, size_t len, const char *label,
                                     const rotor_onnx_options *opt, rotor_error *err) {
    memset(m, 0, sizeof *m);
    m->label = label ? label : "<buffer>";
    m->keep_data = opt && opt->keep_data;
    m->train = opt && opt->train;
    m->data_max = m->keep_data ? ROTOR_ONNX_DATA_MAX : OX_DATA_MAX;
    m->proto = onnx__model_proto__unpack(NULL, len, data);
    if (!m->proto)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: not a valid ONNX model (the protobuf does not decode)", m->label);
    if (!m->proto->graph) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: the model has no graph", m->label);
    rotor_status st = ox_check_names(m, data, len, err);
    if (st) return st;
    m->stats.ir_version = m->proto->has_ir_version ? m->proto->ir_version : 0;
    m->opset = -1;
    for (size_t i = 0; i < m->proto->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->proto->opset_import[i];
        if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) m->opset = o->has_version ? o->version : 0;
    }
    if (m->opset < 0 && m->proto->n_opset_import == 0) m->opset = 1; /* IR 2 and older carry no opset */
    if (m->opset < 0) m->opset = 0;
    m->stats.opset = m->opset;
    m->stats.nodes = (int)m->proto->graph->n_node;
    /* Control flow that folds only once shape inference has folded what
     * decides it (onnxflow.c): each pass that learns something runs the
     * import again, from the flattening on. */
    for (int pass = 1;; pass++) {
        m->refold = false;
        st = build(m, opt, err);
        if (!st) st = ox_infer_all(m, err);
        if (st || !m->refold) return st;
        if (pass == OX_MAX_PASSES)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: control flow needs more than %d import passes (each folds "
                              "an If or unrolls a Loop or Scan whose condition, trip count or length folded in the "
                              "one before)", m->label, OX_MAX_PASSES);
        clear_pass(m);
    }
}

/* The import: everything before lowering. */
rotor_status ox_import(ox_model *m, const uint8_t *data, size_t len, const char *label,
                       const rotor_onnx_options *opt, rotor_error *err) {
    rotor_status st = decode_and_infer(m, data, len, label, opt, err);
    if (st) return st;
    make_aliases(m);
    mark_live(m);
    return ROTOR_OK;
}

void rotor_onnx_outputs_free(rotor_onnx_output *v, int n) {
    for (int i = 0; v && i < n; i++) free(v[i].name);
    free(v);
}

rotor_status rotor_onnx_outputs(const uint8_t *data, size_t len, const char *label,
                                const rotor_onnx_options *opt, rotor_onnx_output **out, int *n,
                                rotor_error *err) {
    *out = NULL;
    *n = 0;
    ox_model m;
    rotor_status st = decode_and_infer(&m, data, len, label, opt, err);
    const Onnx__GraphProto *g = st ? NULL : m.proto->graph;
    rotor_onnx_output *v = g && g->n_output ? calloc(g->n_output, sizeof *v) : NULL;
    if (g && g->n_output && !v) st = rotor_nomem(err);
    for (size_t i = 0; !st && g && i < g->n_output; i++) {
        /* build() has checked that every output names a defined value */
        const ox_val *x = &m.vals[find_val(&m, g->output[i]->name)];
        v[i].name = strdup(g->output[i]->name);
        if (!v[i].name) {
            st = rotor_nomem(err);
            break;
        }
        v[i].rank = x->rank;
        for (int d = 0; d < x->rank; d++) v[i].shape[d] = x->shape[d];
        v[i].dtype = x->dtype;
        v[i].onnx_type = x->onnx_type;
        *n = (int)i + 1;
    }
    if (st) {
        rotor_onnx_outputs_free(v, *n);
        *n = 0;
    } else {
        *out = v;
    }
    ox_model_free(&m);
    return st;
}
