/* rotor — ONNX import: a ModelProto (decoded by protobuf-c from the onnx.proto
 * Debian ships) lowered to a rotor_graph of tensor expressions (docs/onnx.md).
 *
 * The importer sorts the nodes, binds symbolic dimensions, folds shape
 * arithmetic and every other node whose inputs are all constant, infers every
 * shape, recognises spelled-out LayerNorm, and lowers each remaining node to
 * one operator: a tensor expression where T10 §4.2 has one, otherwise a vendor
 * op.  Anything else is refused with
 *   "PATH: node 'NAME' (op TYPE, domain DOMAIN): reason"
 * and bad input never crashes it: sizes are int64 with overflow checks. */
#ifndef ROTOR_ONNX_H
#define ROTOR_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/model/graph.h"

typedef struct rotor_onnx_options {
    /* Symbolic dimensions, "batch=8,seq=128" (NULL: none).  Every symbolic
     * dimension of a graph input must be bound; names the model does not use
     * are refused, so typos do not pass silently. */
    const char *dims;
    /* Input shapes that replace the declared ones, "input_1=1x3x8,mask=1x3"
     * (NULL: none), for files whose declared shapes disagree with their own
     * constants.  Names the graph's inputs do not have are refused. */
    const char *input_shapes;
    /* Values for graph inputs that decide shapes (a Reshape's shape, a
     * Resize's scales, a Slice's starts, TopK's k, ...): each "NAME=FILE.pb"
     * (a serialized TensorProto; a SPEC ending in .pb or holding a '/') or
     * "NAME=1,2,3" (numbers, typed as the input is declared, shaped as
     * declared when the counts agree, else one-dimensional).  The input then
     * folds like an initializer.  Names the graph's inputs do not have are
     * refused.  NULL or nvalues 0: none. */
    const char *const *values;
    int nvalues;
    /* Keep every constant's elements (initializers and folded constants of
     * any size, up to ROTOR_ONNX_DATA_MAX elements each) as the graph
     * values' data, and fold what execution needs exactly (inference
     * BatchNormalization to a scale and a shift), for rotor run.  Off, only
     * constants of up to 65,536 elements keep theirs, for shape arithmetic. */
    bool keep_data;
    /* A training graph will be built from it (model/train.h, --train):
     * BatchNormalization normalises by its batch's statistics (training
     * mode), as a training step runs it, rather than by its running ones. */
    bool train;
    /* The largest model file read, in bytes (rotor's --max-model-bytes); 0:
     * ROTOR_ONNX_MAX_BYTES_DEFAULT.  A regular file over it is refused
     * before it is read, a pipe once it passes it, a device unread
     * (base/readfile.h; docs/onnx.md, "Size limit"). */
    int64_t max_bytes;
} rotor_onnx_options;

/* 2 GiB: protobuf's own limit on a serialized message (a ModelProto that
 * carries its weights inside), so no valid single-file model is larger; a
 * model over it keeps its weights as external data (docs/onnx.md). */
#define ROTOR_ONNX_MAX_BYTES_DEFAULT ((int64_t)1 << 31)

#define ROTOR_ONNX_DATA_MAX ((int64_t)1 << 28)

/* Statistics of one import, for the CLI's summary and the tests. */
typedef struct rotor_onnx_stats {
    int64_t ir_version;
    int64_t opset;          /* of the default (ai.onnx) domain */
    int nodes;              /* nodes in the file's main graph */
    int folded;             /* nodes folded to constants (shape arithmetic, weights) */
    int layernorms_matched; /* spelled-out LayerNorm chains recognised */
    /* Imported for training (rotor_onnx_options.train): the one-element
     * float initializers the graph reads, held constant rather than trained
     * (an attention's scale, a GELU's 0.5; docs/training.md, "Parameters"). */
    int scalars_held;
} rotor_onnx_stats;

/* Reads and imports the file at path into out (initialised here; free it with
 * rotor_graph_free, also after an error).  stats may be NULL.  Errors are
 * prefixed with the path.  A missing or unreadable file is ROTOR_ERR_IO;
 * anything wrong inside it ROTOR_ERR_INPUT. */
rotor_status rotor_onnx_load(const char *path, const rotor_onnx_options *opt, rotor_graph *out,
                             rotor_onnx_stats *stats, rotor_error *err);

/* The same from bytes in memory; label stands for the path in messages. */
rotor_status rotor_onnx_load_buffer(const uint8_t *data, size_t len, const char *label,
                                    const rotor_onnx_options *opt, rotor_graph *out,
                                    rotor_onnx_stats *stats, rotor_error *err);

/* One graph output as the importer infers it, in the file's order: the
 * shapes and types planning uses (an Identity's output is its input's). */
typedef struct rotor_onnx_output {
    char *name;                            /* the file's output name */
    int rank;
    int64_t shape[ROTOR_GRAPH_MAX_RANK];
    rotor_dtype dtype;
    int onnx_type;                         /* TensorProto.DataType */
} rotor_onnx_output;

/* Decodes the model and infers its shapes without lowering it: *out gets the
 * graph outputs (*n of them; free with rotor_onnx_outputs_free, NULL and 0
 * after an error).  Errors as rotor_onnx_load_buffer's up to lowering. */
rotor_status rotor_onnx_outputs(const uint8_t *data, size_t len, const char *label,
                                const rotor_onnx_options *opt, rotor_onnx_output **out, int *n,
                                rotor_error *err);
void rotor_onnx_outputs_free(rotor_onnx_output *v, int n);

/* One serialized TensorProto (a test data set's input_0.pb, or what
 * rotor run writes): its name, type, shape and elements as doubles. */
typedef struct rotor_onnx_tensor {
    char *name;                            /* "" when the file gives none */
    int onnx_type;                         /* TensorProto.DataType */
    rotor_dtype dtype;
    int rank;
    int64_t shape[ROTOR_GRAPH_MAX_RANK];
    int64_t elements;
    double *data;                          /* elements, row-major */
} rotor_onnx_tensor;

/* Reads path.  Errors name the file: not a TensorProto, a type rotor does
 * not handle, more than ROTOR_ONNX_DATA_MAX elements. */
rotor_status rotor_onnx_tensor_read(const char *path, rotor_onnx_tensor *out, rotor_error *err);
void rotor_onnx_tensor_free(rotor_onnx_tensor *t);

/* Writes t as a TensorProto to path (through path.tmp and a rename):
 * float32, float64, int32, int64 and bool; others are refused. */
rotor_status rotor_onnx_tensor_write(const char *path, const rotor_onnx_tensor *t, rotor_error *err);

/* The reference kernel (rotor_kernel, graph.h) that runs a vendor op of
 * default-domain ONNX type `type`, from the importer's operator registry;
 * ROTOR_KERNEL_NONE when the type has none or is not an ONNX operator rotor
 * imports.  rotor run uses it for operators the ONNX lowering did not make
 * (the zoo's, hand-built graphs). */
rotor_kernel rotor_onnx_kernel(const char *type);

/* ONNX's quantization rule (QuantizeLinear, and the QLinear operators'
 * outputs): saturate(round(x) + zero_point), x already divided by the
 * scale, rounded to nearest with ties to even, then clamped to t's range.
 * rotor_onnx_quant_range gives that range for int4, uint4, int8, uint8,
 * int16, uint16 and int32 (false for any other type, which rotor_onnx_quantize then does
 * not clamp). */
double rotor_onnx_quantize(double x, double zero_point, rotor_dtype t);
bool rotor_onnx_quant_range(rotor_dtype t, double *lo, double *hi);

#endif
