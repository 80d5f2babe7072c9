/* reduction.c — the reduction's groups (header in rotor/op/reduction.h). */
#include "rotor/op/reduction.h"

#include <stdlib.h>

static int cmp_pair(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

void rotor_reduction_groups(const rotor_place *pl, const int64_t *i, int64_t *pairs) {
    const rotor_expr *e = rotor_place_expr(pl);
    const rotor_plan *p = rotor_place_plan(pl);
    int64_t cores = rotor_place_info(pl)->cores;
    for (int64_t c = 0; c < cores; c++) {
        int64_t coord[ROTOR_MAX_AXES], j[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES], key = 0;
        rotor_place_coords(pl, c, coord);
        rotor_place_subtask(pl, c, i, j);
        rotor_place_block(pl, 0, j, blk);
        for (int a = 0; a < e->naxes; a++) {
            if (!e->tensors[0].has_axis[a]) continue;
            key = (key * p->fop[a] + coord[a]) * p->ft[0][a] + blk[a];
        }
        pairs[2 * c] = key;
        pairs[2 * c + 1] = c;
    }
    qsort(pairs, (size_t)cores, 2 * sizeof(int64_t), cmp_pair);
}
