/* rotor — the reduction's groups: which cores hold copies of one output
 * partition (cost-model-v1.md "Reduction"; T10 §4.2: the R_Y copies of the
 * output's partial sums are reduce-scattered around a ring).
 *
 * One owner for the rule: the energy model (compile/energy.c) counts the
 * ring's transfers and the replay (sim/replay.c) emits them, both from the
 * groups this function forms. */
#ifndef ROTOR_OP_REDUCTION_H
#define ROTOR_OP_REDUCTION_H

#include <stdint.h>

#include "rotor/op/place.h"

/* The plan's cores (info->cores of them) keyed by the output partition they
 * hold after the loop's last step i: pairs[2 u] is a key, pairs[2 u + 1] a
 * core, sorted by (key, core), so that each run of R_Y equal keys is one
 * group and its members, in core order, form the ring (member u sends to
 * u + 1).  Cores hold the same partition when their coordinate and block
 * agree along every axis of the output Y.  pairs has room for 2 info->cores values. */
void rotor_reduction_groups(const rotor_place *pl, const int64_t *i, int64_t *pairs);

#endif
