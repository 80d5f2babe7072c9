/* opelem.c — the element size and matrix rate each operator is costed at
 * (include/rotor/compile/opelem.h; docs/cost-model.md, "Element types"). */
#include "rotor/compile/opelem.h"

rotor_chip rotor_chip_for_op(const rotor_chip *chip, rotor_op_elem d) {
    rotor_chip c = *chip;
    if (d.bytes > 0) c.element_bytes = d.bytes;
    if (d.int8 && chip->int8_tops > 0) c.matrix_tflops = chip->int8_tops;
    return c;
}
