/* onnxbuild.h — a tiny ONNX model builder over protobuf-c's structs, for
 * the importer's tests (test_onnx.c and the files beside it): each test
 * builds the one node or graph its rule needs and loads it from memory.
 * Every allocation goes to an arena freed by mb_free.  The functions are
 * static inline so that a test file that uses only some of them compiles
 * clean under -Wall. */
#ifndef ROTOR_TESTS_ONNXBUILD_H
#define ROTOR_TESTS_ONNXBUILD_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "rotor/model/onnx.h"

/* A tiny model builder over protobuf-c's structs; every allocation goes to an
 * arena freed by mb_free. */
typedef struct mb {
    void *arena[4096];
    int narena;
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto *opsets[1];
    Onnx__NodeProto *nodes[64];
    Onnx__TensorProto *inits[64];
    Onnx__ValueInfoProto *inputs[16], *outputs[16];
} mb;

static inline void *mb_alloc(mb *b, size_t n) {
    void *p = calloc(1, n);
    cr_assert(p && b->narena < 4096);
    b->arena[b->narena++] = p;
    return p;
}

static inline char *mb_str(mb *b, const char *s) {
    char *p = mb_alloc(b, strlen(s) + 1);
    strcpy(p, s);
    return p;
}

static inline void mb_init(mb *b, int opset) {
    memset(b, 0, sizeof *b);
    onnx__model_proto__init(&b->model);
    onnx__graph_proto__init(&b->graph);
    onnx__operator_set_id_proto__init(&b->opset);
    b->opset.has_version = 1;
    b->opset.version = opset;
    b->opsets[0] = &b->opset;
    b->model.has_ir_version = 1;
    b->model.ir_version = 8;
    b->model.n_opset_import = 1;
    b->model.opset_import = b->opsets;
    b->model.graph = &b->graph;
    b->graph.node = b->nodes;
    b->graph.initializer = b->inits;
    b->graph.input = b->inputs;
    b->graph.output = b->outputs;
}

static inline void mb_free(mb *b) {
    for (int i = 0; i < b->narena; i++) free(b->arena[i]);
}

/* A value info: dims as numbers; a negative number -k means the symbol "s<k>". */
static inline Onnx__ValueInfoProto *mb_vi(mb *b, const char *name, int type, int rank, const int64_t *dims) {
    Onnx__ValueInfoProto *v = mb_alloc(b, sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = mb_str(b, name);
    Onnx__TypeProto *t = mb_alloc(b, sizeof *t);
    onnx__type_proto__init(t);
    Onnx__TypeProto__Tensor *tt = mb_alloc(b, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = type;
    Onnx__TensorShapeProto *sh = mb_alloc(b, sizeof *sh);
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)rank;
    sh->dim = mb_alloc(b, sizeof(void *) * (size_t)(rank ? rank : 1));
    for (int d = 0; d < rank; d++) {
        Onnx__TensorShapeProto__Dimension *dm = mb_alloc(b, sizeof *dm);
        onnx__tensor_shape_proto__dimension__init(dm);
        if (dims[d] >= 0) {
            dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dm->dim_value = dims[d];
        } else {
            char s[32];
            snprintf(s, sizeof s, "s%lld", (long long)-dims[d]);
            dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            dm->dim_param = mb_str(b, s);
        }
        sh->dim[d] = dm;
    }
    tt->shape = sh;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    v->type = t;
    return v;
}

#define DIMS(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}

static inline void mb_input(mb *b, const char *name, int rank, const int64_t *dims) {
    b->inputs[b->graph.n_input++] = mb_vi(b, name, 1, rank, dims);
}

static inline void mb_output(mb *b, const char *name) {
    b->outputs[b->graph.n_output++] = mb_vi(b, name, 1, 0, NULL);
}

/* A float initializer of the given shape with no data (stripped), or int64
 * data when ivals is given. */
static inline Onnx__TensorProto *mb_init_tensor(mb *b, const char *name, int type, int rank, const int64_t *dims,
                                         const int64_t *ivals) {
    Onnx__TensorProto *t = mb_alloc(b, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = mb_str(b, name);
    t->has_data_type = 1;
    t->data_type = type;
    t->n_dims = (size_t)rank;
    t->dims = mb_alloc(b, sizeof(int64_t) * (size_t)(rank ? rank : 1));
    int64_t n = 1;
    for (int d = 0; d < rank; d++) t->dims[d] = dims[d], n *= dims[d];
    if (ivals) {
        t->n_int64_data = (size_t)n;
        t->int64_data = mb_alloc(b, sizeof(int64_t) * (size_t)n);
        memcpy(t->int64_data, ivals, sizeof(int64_t) * (size_t)n);
    }
    b->inits[b->graph.n_initializer++] = t;
    return t;
}

#define MB_NODE_IO 16

/* A node "op" named name with inputs/outputs given as space-separated names. */
static inline Onnx__NodeProto *mb_node(mb *b, const char *op, const char *name, const char *ins, const char *outs) {
    Onnx__NodeProto *n = mb_alloc(b, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = mb_str(b, op);
    n->name = mb_str(b, name);
    /* at most MB_NODE_IO of each: QLinearConv reads 9 */
    n->input = mb_alloc(b, sizeof(char *) * MB_NODE_IO);
    n->output = mb_alloc(b, sizeof(char *) * MB_NODE_IO);
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", ins);
    for (char *t = strtok(tmp, " "); t; t = strtok(NULL, " ")) {
        cr_assert_lt(n->n_input, MB_NODE_IO, "node %s: more than %d inputs", name, MB_NODE_IO);
        n->input[n->n_input++] = mb_str(b, strcmp(t, "-") ? t : "");
    }
    snprintf(tmp, sizeof tmp, "%s", outs);
    for (char *t = strtok(tmp, " "); t; t = strtok(NULL, " ")) {
        cr_assert_lt(n->n_output, MB_NODE_IO, "node %s: more than %d outputs", name, MB_NODE_IO);
        n->output[n->n_output++] = mb_str(b, t);
    }
    n->attribute = mb_alloc(b, sizeof(void *) * 8);
    b->nodes[b->graph.n_node++] = n;
    return n;
}

static inline void mb_attr_i(mb *b, Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = mb_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(b, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    n->attribute[n->n_attribute++] = a;
}

static inline void mb_attr_f(mb *b, Onnx__NodeProto *n, const char *name, float v) {
    Onnx__AttributeProto *a = mb_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(b, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    a->has_f = 1;
    a->f = v;
    n->attribute[n->n_attribute++] = a;
}

static inline void mb_attr_ints(mb *b, Onnx__NodeProto *n, const char *name, int cnt, const int64_t *v) {
    Onnx__AttributeProto *a = mb_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(b, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = (size_t)cnt;
    a->ints = mb_alloc(b, sizeof(int64_t) * (size_t)cnt);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)cnt);
    n->attribute[n->n_attribute++] = a;
}

static inline rotor_status mb_load(mb *b, const rotor_onnx_options *o, rotor_graph *g, rotor_onnx_stats *st,
                            rotor_error *err) {
    size_t len = onnx__model_proto__get_packed_size(&b->model);
    uint8_t *buf = malloc(len ? len : 1);
    cr_assert(buf);
    onnx__model_proto__pack(&b->model, buf);
    rotor_status s = rotor_onnx_load_buffer(buf, len, "m.onnx", o, g, st, err);
    free(buf);
    return s;
}

static inline void mb_attr_s(mb *b, Onnx__NodeProto *n, const char *name, const char *s) {
    Onnx__AttributeProto *a = mb_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(b, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    a->has_s = 1;
    a->s.data = (uint8_t *)mb_str(b, s);
    a->s.len = strlen(s);
    n->attribute[n->n_attribute++] = a;
}

/* A float32 initializer of dims whose elements come from the LCG *seed
 * (advanced), in [lo, lo + span). */
static inline void mb_init_random(mb *b, const char *name, int rank, const int64_t *dims, double lo, double span,
                                  uint64_t *seed) {
    Onnx__TensorProto *t = mb_init_tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank, dims, NULL);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    t->n_float_data = (size_t)n;
    t->float_data = mb_alloc(b, sizeof(float) * (size_t)n);
    for (int64_t k = 0; k < n; k++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        t->float_data[k] = (float)(lo + span * (double)(*seed >> 11) / (double)(1ull << 53));
    }
}

#endif
