/* rotor — the virtual-global-memory baseline (T10 §2.2, Figure 2a): the
 * load-compute-store execution of Roller and PopART on the IPU, for
 * `rotor compile --baseline vgm` and the T10-over-VGM speedup.
 *
 * Every core reserves a slice of its SRAM as VGM, where every tensor that
 * outlives an operator is stored evenly.  An operator is split into one
 * sub-operator per core; each round, a core fetches its input tiles from
 * their owner cores, computes, and stores its output tile back.  Several
 * readers of one owner share that owner's link, and a tile read by many cores
 * is fetched by each of them (docs/vgm.md has the model and its decisions).
 *
 * After an error, rotor_vgm_compile leaves out zeroed: nothing to free. */
#ifndef ROTOR_VGM_H
#define ROTOR_VGM_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"

typedef struct rotor_vgm_op {
    int op;                          /* index in the graph */
    bool vendor;
    int64_t fop[ROTOR_MAX_AXES];     /* sub-operator split */
    int64_t steps[ROTOR_MAX_AXES];   /* rounds per axis (tiles of one sub-operator) */
    int64_t rounds;                  /* prod steps */
    int64_t tile_bytes;              /* local memory of one round */
    double compute_s, load_s, store_s, total_s;
} rotor_vgm_op;

typedef struct rotor_vgm_result {
    int nops;
    rotor_vgm_op *ops;               /* in graph order */
    int64_t vgm_bytes;               /* VGM slice reserved on every core */
    int64_t local_bytes;             /* what is left for sub-operators */
    double total_s, compute_s, load_s, store_s, vendor_s;
} rotor_vgm_result;

/* ROTOR_ERR_NOFIT when the VGM alone exceeds the SRAM or an operator has no
 * tile that fits in what is left (the message names it). */
rotor_status rotor_vgm_compile(const rotor_graph *g, const rotor_chip *chip, rotor_vgm_result *out,
                               rotor_error *err);
void rotor_vgm_result_free(rotor_vgm_result *r);

#endif
