/* rotor — the element size and matrix rate each operator is costed at
 * (docs/cost-model.md, "Element types").
 *
 * cost-model-v1.md ("Inputs") has one element size e for every tensor, the
 * chip's (T10's FP16: 2 bytes).  An operator over the integers ONNX
 * quantizes to moves and stores its own: one byte per int8 or uint8
 * element, two per int16, four per int32 (its accumulators).  And a
 * contraction of 8-bit integers runs at the chip's int8 matrix rate
 * (int8_tops, docs/chip-format.md) when the chip file gives one, whatever
 * its output (model/elemtype.h).  Every other operator, and every float
 * tensor, keeps the chip's e and matrix_tflops, so float models cost
 * exactly as before.
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
#include "rotor/model/elemtype.h" /* rotor_op_elem, the rule */

/* chip as an operator with d sees it: element_bytes d.bytes (the chip's
 * when 0), and matrix_tflops the chip's int8_tops when d.int8 and that is
 * given (> 0); chip itself, unchanged, for {0, false}. */
rotor_chip rotor_chip_for_op(const rotor_chip *chip, rotor_op_elem d);

/* Whether operator o of g is costed on another chip than chip itself
 * (rotor_chip_for_op changes its element size or matrix rate: an 8-bit
 * operator on a 2-byte chip, an int8 contraction on a chip with an int8
 * rate), and how many of g's are: the costs that take every operator at
 * the chip's element size and rate (pipelined segments' stages, the HBM
 * schedule) leave them out or say so. */
bool rotor_op_priced_apart(const rotor_graph *g, int o, const rotor_chip *chip);
int rotor_graph_priced_apart(const rotor_graph *g, const rotor_chip *chip);

#endif
