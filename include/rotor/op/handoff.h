/* rotor — the hand-off of a value from its producer's plan to a consumer's
 * (T10 §5: "the program may rearrange the data on cores if necessary";
 * docs/compile.md, "Hand-off").
 *
 * A producer leaves its output where its plan computed it.  After the last
 * step, core c holds the output partition rotor_place_partition gives it at
 * step T - 1.  When R_Y > 1 the R_Y cores holding copies of one partition
 * reduce-scatter the partial sums (cost-model-v1.md "Reduction"): the
 * partition's elements, in row-major order, are cut into R_Y chunks of
 * ceil(elements / R_Y), and the member of rank r (the cores ordered by id)
 * keeps chunk r.  So every element of the output lies on exactly one core.
 *
 * A consumer's plan needs, on every core, its step-0 partition of each input
 * (the rest arrives by rotation).  A core receives the real elements of that
 * partition it does not hold, from the cores that hold them.
 *
 * The hand-off applies where the consumer's tensor reads the producer's
 * output element for element: the same dimensions with the same extents.
 * Where the two views differ (a slice, a transposed or padded view), the
 * graph does not say which element is which, and the compiler keeps the
 * even layout for that value (docs/compile.md).
 *
 * After an error, rotor_handoff_make leaves *out NULL: nothing to free. */
#ifndef ROTOR_HANDOFF_H
#define ROTOR_HANDOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/op/place.h"

typedef struct rotor_handoff rotor_handoff;

/* Where the producer's output lies after its plan (placement pl) has run.
 * ROTOR_ERR_INPUT if an output dimension is not a plain axis.  The handoff
 * reads the placement's expression: free it before the placement. */
rotor_status rotor_handoff_make(const rotor_place *producer, rotor_handoff **out, rotor_error *err);
void rotor_handoff_free(rotor_handoff *h);

/* Whether tensor t of the consumer's expression reads the producer's
 * output element for element: the same dimensions with the same extents,
 * the output's dimensions plain axes (no placement needed: the compiler
 * and the program reader ask before any plan is placed). */
bool rotor_handoff_fits(const rotor_expr *producer, const rotor_expr *consumer, int t);

/* The same for a placed consumer (rotor_handoff_fits on its expression). */
bool rotor_handoff_matches(const rotor_handoff *h, const rotor_place *consumer, int t);

/* The core that holds output element coord (one index per dimension, inside
 * the real extents). */
int64_t rotor_handoff_holder(const rotor_handoff *h, const int64_t *coord);

/* Elements of the box [lo, hi) (output dimensions) that core holds. */
int64_t rotor_handoff_held(const rotor_handoff *h, int64_t core, const int64_t *lo, const int64_t *hi);

/* Calls fn(ctx, src, elems) for every core src holding elems > 0 elements
 * of the box [lo, hi) (output dimensions), in increasing cell and rank
 * order; stops at and returns fn's first error. */
typedef rotor_status (*rotor_handoff_fn)(void *ctx, int64_t src, int64_t elems);
rotor_status rotor_handoff_sources(const rotor_handoff *h, const int64_t *lo, const int64_t *hi, rotor_handoff_fn fn,
                                   void *ctx);

/* The real box [lo, hi) of tensor t that core needs at step 0 of the
 * consumer's plan (its partition clipped to the tensor's extents); false
 * when the core holds no real element of it. */
bool rotor_handoff_need(const rotor_place *consumer, int t, int64_t core, int64_t *lo, int64_t *hi);

/* recv[c] for every core c of the consumer's plan: the elements of its
 * step-0 partition of tensor t it must receive (needed and not held);
 * *max gets the largest.  t must match (rotor_handoff_matches). */
void rotor_handoff_receive(const rotor_handoff *h, const rotor_place *consumer, int t, int64_t *recv,
                           int64_t *max);

/* The same and, for every core p of the producer's plan, send[p]: the
 * elements it sends to others (*max_send the largest).  Slower than
 * rotor_handoff_receive: it visits every (receiver, holder) pair. */
rotor_status rotor_handoff_traffic(const rotor_handoff *h, const rotor_place *consumer, int t, int64_t *recv,
                                   int64_t *max_recv, int64_t *send, int64_t *max_send);

/* The producer plan's cores (the length of send). */
int64_t rotor_handoff_cores(const rotor_handoff *h);

#endif
