/* rotor — operator grouping: a graph pass in the spirit of GraphTurbo §3.2
 * and T10's practice, so that the planned graph has the operators that cost
 * time and no more (docs/group.md).
 *
 *  - Element-wise epilogues (bias, activation, residual add, scaling) fuse
 *    into the operator that produces their input, when that input has no
 *    other reader and is no model output, and the epilogue's other inputs
 *    exist before the producer runs.  Chains fuse (MatMul + bias + GELU).
 *  - Layout-only operators (Reshape, Transpose, Squeeze, Unsqueeze, Flatten,
 *    Identity) fold away: their readers read the input instead. */
#ifndef ROTOR_GROUP_H
#define ROTOR_GROUP_H

#include "rotor/base/error.h"
#include "rotor/model/graph.h"

typedef struct rotor_group_stats {
    int ops_before;
    int ops_after;
    int fused;     /* epilogues folded into their producers */
    int folded;    /* layout-only operators removed */
} rotor_group_stats;

/* Builds the grouped graph of g into out (initialised here; free it with
 * rotor_graph_free, also after an error).  Total FLOPs are conserved: a fused
 * operator carries its epilogues' FLOPs.  stats may be NULL. */
rotor_status rotor_group(const rotor_graph *g, rotor_graph *out, rotor_group_stats *stats,
                         rotor_error *err);

#endif
