/* rotor — the element size and matrix rate each operator is costed at
 * (docs/cost-model.md, "Element types").
 *
 * cost-model-v1.md ("Inputs") has one element size e for every tensor, the
 * chip's (T10's FP16: 2 bytes).  An operator over the integers ONNX
 * quantizes to moves and stores its own: one byte per int8 or uint8
 * element, two per int16, four per int32 (its accumulators).  And a
 * contraction of 8-bit integers runs at the chip's int8 matrix rate
 * (int8_tops, docs/chip-format.md) when the chip file gives one.  Every
 * other operator, and every float tensor, keeps the chip's e and
 * matrix_tflops, so float models cost exactly as before.
 *
 * The override is per operator, not per tensor (v1's formulas take one e):
 * the operator is costed on a copy of the chip whose element_bytes and
 * matrix_tflops are its own (rotor_chip_for_op), which the search, the
 * compiler, the program reader and the emulator all read. */
#ifndef ROTOR_OPELEM_H
#define ROTOR_OPELEM_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
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

/* Operator o of g: {0, false} unless every expression tensor names a value
 * of a quantized integer type; then the widest of their sizes, and int8
 * when it is a contraction whose two inputs are 8-bit. */
rotor_op_elem rotor_op_elem_of(const rotor_graph *g, int o);

/* chip as an operator with d sees it: element_bytes d.bytes, and
 * matrix_tflops the chip's int8_tops when d.int8 and that is given (> 0);
 * chip itself, unchanged, when d.bytes is 0. */
rotor_chip rotor_chip_for_op(const rotor_chip *chip, rotor_op_elem d);

#endif
