/* rotor — which operators run on 8-bit integers, and the element size of
 * each (docs/cost-model.md, "Element types").  The rule is the graph's: the
 * compiler costs an operator on a chip of its own element size and rate
 * (compile/opelem.h, rotor_chip_for_op), and GraphTurbo's cost of a split
 * and time of a schedule take its int8 FLOPs at the int8 rate
 * (model/gtsplit.c, compile/dsa.c), from this one rule. */
#ifndef ROTOR_ELEMTYPE_H
#define ROTOR_ELEMTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/model/graph.h"

/* An operator's element size and rate: bytes 0 keeps the chip's (a float
 * operator, a vendor op); int8: it contracts two 8-bit integer inputs. */
typedef struct rotor_op_elem {
    int64_t bytes;
    bool int8;
} rotor_op_elem;

/* Whether t is an integer ONNX quantizes to (int8, uint8, int16, uint16,
 * int32): the element types whose own size the compiler counts.  int64 and
 * booleans (indices, shapes, masks) keep the chip's e, as before. */
bool rotor_dtype_is_quantized(rotor_dtype t);

/* Bytes per element of value v where the chip's element size is e: its
 * dtype's for a quantized integer, e otherwise. */
int64_t rotor_value_elem_bytes(int64_t e, const rotor_value *v);

/* Operator o of g: bytes 0 unless every expression tensor names a value of
 * a quantized integer type, then the widest of their sizes; int8 when it
 * is a contraction whose two inputs are 8-bit integers, whatever its
 * output (a fused epilogue that writes a float, as MatMulInteger -> Cast
 * -> Mul after grouping, keeps the int8 rate with the chip's e). */
rotor_op_elem rotor_op_elem_of(const rotor_graph *g, int o);

/* Sizes g's values at a chip's element size e, as the compiler prices them
 * (rotor_value_elem_bytes: a float, index or mask e bytes an element, a
 * quantized integer its own): each value's bytes and each operator's byte
 * counts.  GraphTurbo's DSA schedules size their blocks and weights by the
 * values' bytes, which the importer set from the file's types (an ONNX
 * float32 model 4 bytes an element on an FP16 chip, and --set
 * element_bytes ignored).  ROTOR_ERR_INPUT when a count overflows. */
rotor_status rotor_graph_at_element_bytes(rotor_graph *g, int64_t e, rotor_error *err);

#endif
