/* rotor — the virtual-global-memory baseline (T10 §2.2, Figure 2a): the
 * load-compute-store execution of Roller and PopART on the IPU, for
 * `rotor compile --baseline vgm` and the T10-over-VGM speedup.
 *
 * Every core reserves a slice of its SRAM as VGM, where every tensor that
 * outlives an operator is stored evenly.  An operator is split into
 * sub-operators that run on the cores; each round, a core fetches its input
 * tiles from the cores that own them, computes, and stores its output tile
 * back.  Two ways to choose the tiles (docs/vgm.md has both models and their
 * decisions):
 *
 *  - ROTOR_VGM_ROLLER, the baseline T10 compares with: tiles built by
 *    Roller's construction rule (aligned to the systolic array, grown greedily
 *    for reuse until the local memory is full, ranked by Roller's own
 *    micro-model), then timed against each tensor's fixed linear layout over
 *    the VGM slices, hot spots included, with the link latency on every round.
 *  - ROTOR_VGM_ORACLE: every split searched exhaustively against a balanced
 *    transfer model; a bound on what any VGM compiler could reach.
 *
 * After an error, rotor_vgm_compile leaves out zeroed: nothing to free. */
#ifndef ROTOR_VGM_H
#define ROTOR_VGM_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"

typedef enum rotor_vgm_kind {
    ROTOR_VGM_ROLLER = 0, /* `--baseline vgm` */
    ROTOR_VGM_ORACLE      /* `--baseline vgm-oracle` */
} rotor_vgm_kind;

/* "vgm" or "vgm-oracle", the names the CLI takes. */
const char *rotor_vgm_kind_name(rotor_vgm_kind kind);

typedef struct rotor_vgm_op {
    int op;                          /* index in the graph */
    bool vendor;
    int64_t tile[ROTOR_MAX_AXES];    /* s_a: a sub-operator's extent per round */
    int64_t tasks;                   /* sub-operators (tiles of the output space) */
    int64_t waves;                   /* ceil(tasks / cores): sub-operators per core, one after another */
    int64_t rounds;                  /* load-compute rounds of one sub-operator */
    int64_t tile_bytes;              /* local memory of one round, every tensor's tile */
    /* the oracle only: its F_op and rounds per axis */
    int64_t fop[ROTOR_MAX_AXES];
    int64_t steps[ROTOR_MAX_AXES];
    /* Roller only: the time its micro-model predicts (balanced owners, every
     * byte remote); total_s is the time against the linear layout. */
    double predicted_s;
    double compute_s, load_s, store_s, total_s;
} rotor_vgm_op;

typedef struct rotor_vgm_result {
    rotor_vgm_kind kind;
    int nops;
    rotor_vgm_op *ops;               /* in graph order */
    int64_t vgm_bytes;               /* VGM slice reserved on every core */
    int64_t local_bytes;             /* what is left for sub-operators */
    double total_s, compute_s, load_s, store_s, vendor_s;
} rotor_vgm_result;

/* ROTOR_ERR_NOFIT when the VGM alone exceeds the SRAM or an operator has no
 * tile that fits in what is left (the message names it). */
rotor_status rotor_vgm_compile(const rotor_graph *g, const rotor_chip *chip, rotor_vgm_kind kind,
                               rotor_vgm_result *out, rotor_error *err);
void rotor_vgm_result_free(rotor_vgm_result *r);

#endif
