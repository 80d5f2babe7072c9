/* rotor — sub-tensor placement and the compute-shift schedule (T10 §4.4,
 * "Sub-tensor placement" and Figure 10; cost-model-v1.md "Shifts").
 *
 * For a valid plan this is THE place that says which core computes which
 * sub-task at every step, which partition of every tensor it holds, and how
 * partitions move around each tensor's rings.  The emulator, the simulator and
 * the program writer read it; nothing else recomputes it.  docs/placement.md
 * explains the algorithm with a worked example.
 *
 * Vocabulary:
 *   core      0 .. cores-1; coordinate c_a in [0, F_op[a]) per axis, axis 0
 *             most significant (rotor_place_coords).
 *   step      0 .. T-1; the loop counter i(s) walks the sub-task indices in the
 *             spec's boustrophedon order (rotor_place_loop).
 *   sub-task  j_a in [0, S_a) per axis: what a core computes at a step
 *             (rotor_place_subtask).  Each core computes each of its T
 *             sub-tasks exactly once.
 *   block     the partition of tensor X a core holds: floor(j_a / (S_a /
 *             f_t^X[a])) along each axis of X (rotor_place_block).
 *   ring      Q_X = prod f_t^X cores that together hold one copy of one
 *             sub-tensor of X, one partition each.  A ring's position p in
 *             [0, Q_X) is the linearised block its member holds at step 0.
 *
 * Memory is O(cores * tensors); nothing is tabulated per step.
 *
 * After an error, rotor_place_make leaves *out NULL: nothing to free. */
#ifndef ROTOR_PLACE_H
#define ROTOR_PLACE_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/op/plan.h"

typedef struct rotor_place rotor_place;

/* Places a plan that rotor_plan_derive accepted (info is its output).
 * ROTOR_ERR_INPUT if no nested-ring placement realises the plan (the message
 * names the tensor whose rings would hold a partition twice); ROTOR_ERR_NOMEM
 * if the tables cannot be allocated.  The placement keeps copies of e, p and
 * info. */
rotor_status rotor_place_make(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                              rotor_place **out, rotor_error *err);
void rotor_place_free(rotor_place *pl);

/* rotor_place_make without dealing the cores out to rings: the same
 * offsets, so the same partitions and sub-tasks at every step
 * (rotor_place_partition, rotor_place_subtask, rotor_place_loop), and the
 * same errors (the offsets are checked balanced before the rings are
 * dealt), but no ring queries: rotor_place_ring_of, rotor_place_ring_member
 * and rotor_place_sender must not be asked of it.  A hand-off reads only
 * partitions, and the rings were half of each placement the compiler's
 * hand-off cache made (issue 45). */
rotor_status rotor_place_make_partitions(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                                         rotor_place **out, rotor_error *err);

/* What a program file records of a placement (docs/program-format.md,
 * "placement"): each axis's factor chain (rotor_place_digits) and each
 * tensor's ring count (rotor_place_ring_count), as rotor_place_make would
 * give them, with its errors, but without dealing the cores out to rings
 * (two thirds of a placement's work; issue 45). */
typedef struct rotor_place_summary {
    int ndigits[ROTOR_MAX_AXES];
    int64_t radix[ROTOR_MAX_AXES][ROTOR_MAX_TENSORS + 1];
    int64_t rings[ROTOR_MAX_TENSORS];
} rotor_place_summary;
rotor_status rotor_place_summarize(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                                   rotor_place_summary *out, rotor_error *err);

const rotor_expr *rotor_place_expr(const rotor_place *pl);
const rotor_plan *rotor_place_plan(const rotor_place *pl);
const rotor_plan_info *rotor_place_info(const rotor_place *pl);

/* Core numbering: c_a for every axis, and back. */
void rotor_place_coords(const rotor_place *pl, int64_t core, int64_t *coord);
int64_t rotor_place_core_at(const rotor_place *pl, const int64_t *coord);

/* The loop counter i_a at step s (0 <= s < T) in boustrophedon order: each
 * loop level runs forward on one pass and backward on the next, so
 * consecutive steps differ along exactly one axis, by one. */
void rotor_place_loop(const rotor_place *pl, int64_t step, int64_t *i);

/* The sub-task j_a core computes when the loop counter is i: per digit of
 * the axis's factor chain, (digit of i + the core's offset) mod radix. */
void rotor_place_subtask(const rotor_place *pl, int64_t core, const int64_t *i, int64_t *j);

/* Block index of tensor t for sub-task j, per axis (0 where t lacks the
 * axis), and its linearisation in [0, Q_t) (axis order, last axis fastest). */
void rotor_place_block(const rotor_place *pl, int t, const int64_t *j, int64_t *block);
int64_t rotor_place_block_id(const rotor_place *pl, int t, const int64_t *block);

/* Where core's partition of tensor t lies at step (0 <= step < T) in the
 * tensor's own dimensions: origin[d] per dimension; the partition spans
 * info.part[t][d] from there (padding beyond the real extent included).
 * The emulator loads and stores exactly these regions. */
void rotor_place_partition(const rotor_place *pl, int t, int64_t core, int64_t step, int64_t *origin);

/* rotor_place_partition of every core at step 0, core by core: origin gets
 * cores x (tensor t's dimensions).  The hand-off reads every consumer
 * core's step-0 partition; this finds the cores' coordinates by counting,
 * not by dividing (issue 45). */
void rotor_place_partitions_at_0(const rotor_place *pl, int t, int64_t *origin);

/* Whether tensor t's block changes between loop counters i_old and i_new
 * (the same answer for every core: the placement runs in lockstep). */
bool rotor_place_changes(const rotor_place *pl, int t, const int64_t *i_old, const int64_t *i_new);

/* Rings of tensor t: their number (sub-tensors * R_t), the ring of a core and
 * its position, and the member at a position. */
int64_t rotor_place_ring_count(const rotor_place *pl, int t);
int64_t rotor_place_ring_of(const rotor_place *pl, int t, int64_t core, int64_t *position);
int64_t rotor_place_ring_member(const rotor_place *pl, int t, int64_t ring, int64_t position);

/* The core of the same ring that sends tensor t's partition to `core` at the
 * transition i_old -> i_new (core itself if t's block does not change).  With
 * reverse set, the ring is walked the wrong way round: a test hook for the
 * emulator's mutation tests. */
int64_t rotor_place_sender(const rotor_place *pl, int t, int64_t core, const int64_t *i_old,
                           const int64_t *i_new, bool reverse);

/* The factor chain of axis a: ndigits q, radices rho_1..rho_q (coarse
 * first), and how many digits tensor t sees (f_t^t[a] = rho_1 * ... * rho_r). */
int rotor_place_digits(const rotor_place *pl, int a, int64_t *radix);
int rotor_place_tensor_digits(const rotor_place *pl, int t, int a);

#endif
