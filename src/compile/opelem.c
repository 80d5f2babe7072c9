/* opelem.c — the element size and matrix rate each operator is costed at
 * (include/rotor/compile/opelem.h; docs/cost-model.md, "Element types"). */
#include "rotor/compile/opelem.h"

rotor_chip rotor_chip_for_op(const rotor_chip *chip, rotor_op_elem d) {
    rotor_chip c = *chip;
    if (d.bytes > 0) c.element_bytes = d.bytes;
    if (d.int8 && chip->int8_tops > 0) c.matrix_tflops = chip->int8_tops;
    return c;
}

bool rotor_op_priced_apart(const rotor_graph *g, int o, const rotor_chip *chip) {
    rotor_chip c = rotor_chip_for_op(chip, rotor_op_elem_of(g, o));
    return c.element_bytes != chip->element_bytes || c.matrix_tflops != chip->matrix_tflops;
}

int rotor_graph_priced_apart(const rotor_graph *g, const rotor_chip *chip) {
    int n = 0;
    for (int o = 0; o < g->nops; o++) n += rotor_op_priced_apart(g, o, chip);
    return n;
}
