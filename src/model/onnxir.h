/* onnxir.h — the importer's private view of an ONNX graph (docs/onnx.md).
 *
 * onnx.c decodes the protobuf, sorts the nodes, infers every shape and folds
 * constants into an ox_model; lower.c turns what is left into rotor_graph
 * operators.  Nothing here is public: the interface is include/rotor/onnx.h. */
#ifndef ROTOR_ONNXIR_H
#define ROTOR_ONNXIR_H

#include <stdbool.h>
#include <stdint.h>

#include "onnx.pb-c.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/model/onnx.h"

#define OX_MAX_RANK ROTOR_GRAPH_MAX_RANK
/* Constants with at most this many elements keep their data, so that shape
 * arithmetic can be folded; larger ones (weights) keep only their shape. */
#define OX_DATA_MAX 65536

typedef enum ox_kind {
    OX_UNDEF = 0, /* named by a node but not defined yet */
    OX_INPUT,     /* a graph input (not an initializer) */
    OX_CONST,     /* known at import: initializer, Constant, or folded */
    OX_ACT        /* produced at run time by a node */
} ox_kind;

/* One ONNX value (tensor name). */
typedef struct ox_val {
    const char *name;      /* points into the decoded model */
    ox_kind kind;
    int onnx_type;         /* TensorProto.DataType */
    rotor_dtype dtype;
    int rank;
    int64_t shape[OX_MAX_RANK];
    int64_t elems;
    /* data of a constant with at most OX_DATA_MAX elements: iv for integer and
     * bool types, fv for floating types (exactly one is set) */
    bool has_data;
    int64_t *iv;
    double *fv;
    int producer;          /* node (original index) or -1 */
    int alias;             /* Identity/Dropout: the value this one stands for, or -1 */
    int gv;                /* rotor_graph value, or -1 until lowered */
    bool live;             /* reaches a graph output */
    bool is_output;
} ox_val;

/* One node after sorting and inference. */
typedef struct ox_node {
    Onnx__NodeProto *p;
    char name[128];        /* p->name, or "<op_type>_<index>" when empty */
    const char *domain;    /* "ai.onnx" for the default domain */
    int nin, nout;
    int *in;               /* value index per input, -1 for an omitted optional input */
    int *out;
    bool folded;           /* every output is a constant */
    bool duplicate;        /* a Constant whose name a later Constant redefines (dropped) */
    bool done;             /* lowered (or swallowed by a matched pattern) */
    bool live;
} ox_node;

typedef struct ox_model {
    const char *label;
    Onnx__ModelProto *proto;
    int64_t opset;
    int nvals, vals_cap;
    ox_val *vals;
    int *index;            /* open addressing: value index + 1, 0 empty */
    int index_cap;
    int nnodes;
    ox_node *nodes;
    int *order;            /* topological order of node indices */
    /* consumers of value v: cons[cons_start[v] .. cons_start[v+1]) (node indices) */
    int *cons_start, *cons;
    rotor_onnx_stats stats;
} ox_model;

/* The error prefix for a node: "PATH: node 'NAME' (op TYPE, domain DOMAIN): ". */
rotor_status ox_node_fail(const ox_model *m, const ox_node *n, rotor_error *err, rotor_status code,
                          const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Value v with aliases resolved. */
int ox_resolve(const ox_model *m, int v);

/* Attribute lookups on a node (NULL / default when absent). */
const Onnx__AttributeProto *ox_attr(const ox_node *n, const char *name);
int64_t ox_attr_int(const ox_node *n, const char *name, int64_t dflt);
double ox_attr_float(const ox_node *n, const char *name, double dflt);

/* Element k of a constant with data, as a double. */
double ox_get(const ox_val *v, int64_t k);

/* The dimensions of x a Reduce* or Arg* node reduces (axes input or
 * attribute, noop_with_empty_axes); inference and lowering share it. */
rotor_status ox_reduce_axes(ox_model *m, const ox_node *n, const ox_val *x, bool *red, rotor_error *err);

/* PRelu with a 1-D slope of one value per channel (axis 1): the opset <= 6
 * meaning, which PyTorch exports still use. */
bool ox_prelu_per_channel(const ox_model *m, const ox_node *n);

/* Lowers the inferred model into g (lower.c). */
rotor_status ox_lower(ox_model *m, rotor_graph *g, rotor_error *err);

#endif
