/* rotor — inference graph simplification: what every deployment compiler
 * does before planning, and what GraphTurbo's graph (§3) assumes has been
 * done (docs/simplify.md).
 *
 *  - BatchNormalization folds into the convolution (any contraction) whose
 *    output it alone reads: the weight is scaled per output channel,
 *    W'[f,...] = W[f,...] * S[f], and the BN becomes the contraction's bias
 *    epilogue, an Add of B'[f] = B[f] + S[f] * b0[f] (b0 the contraction's
 *    own bias, if it had one), which grouping then fuses as usual.
 *  - Constant folding: an operator that reads only weights is computed once
 *    at compile time, and its output becomes a weight (with its elements
 *    when every input has them).
 *
 * The pass runs after load and before grouping (pipeline.h, `simplify`).
 * With weight data (rotor_onnx_options.keep_data) the new elements are
 * computed in double, so that `rotor run --simplify` checks them. */
#ifndef ROTOR_SIMPLIFY_H
#define ROTOR_SIMPLIFY_H

#include "rotor/base/error.h"
#include "rotor/model/graph.h"

typedef struct rotor_simplify_stats {
    int ops_before;
    int ops_after;
    int bn_folded;     /* BatchNormalizations folded into their contraction */
    int bias_added;    /* of them, those whose contraction had no bias: an Add made */
    int const_folded;  /* operators computed at compile time */
} rotor_simplify_stats;

/* Builds the simplified graph of g into out (initialised here; free it with
 * rotor_graph_free, also after an error).  Values, data and attributes are
 * carried over; a graph with nothing to simplify comes out equal to g.
 * stats may be NULL. */
rotor_status rotor_simplify(const rotor_graph *g, rotor_graph *out, rotor_simplify_stats *stats, rotor_error *err);

#endif
