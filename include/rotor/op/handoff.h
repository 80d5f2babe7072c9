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
 * The hand-off applies where the graph says which element of the
 * producer's output each element of the consumer's tensor is: a view
 * (rotor_view, op/expr.h) from the consumer tensor's coordinates onto the
 * output's, or none when the two have the same dimensions and extents.  A
 * view may move several tensor dimensions along one output dimension (the
 * heads of a fused QKV projection, a reshape that splits a dimension) if
 * their steps nest: each step exceeds the span of the smaller ones, so no
 * two coordinates meet.  Coordinates outside the output are padding: zeros
 * that nobody sends.  Elsewhere the compiler keeps the even layout for
 * that value (docs/compile.md).
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
 * output through view (NULL or unset: element for element, the same
 * dimensions with the same extents): the output's dimensions plain axes,
 * the view's dimensions inside the output's rank and its steps nested (no
 * placement needed: the compiler and the program reader ask before any
 * plan is placed). */
bool rotor_handoff_fits(const rotor_expr *producer, const rotor_expr *consumer, int t, const rotor_view *view);

/* The same for a placed consumer (rotor_handoff_fits on its expression). */
bool rotor_handoff_matches(const rotor_handoff *h, const rotor_place *consumer, int t, const rotor_view *view);

/* The output elements a box of the consumer's tensor reads: along each
 * output dimension, base + sum step[k] * i_k for 0 <= i_k < count[k],
 * steps decreasing and nested (a box is one term of step 1). */
typedef struct rotor_handoff_span {
    int64_t base;
    int nterms;
    int64_t step[ROTOR_MAX_DIMS];
    int64_t count[ROTOR_MAX_DIMS];
} rotor_handoff_span;

typedef struct rotor_handoff_set {
    rotor_handoff_span span[ROTOR_MAX_DIMS]; /* one per output dimension */
} rotor_handoff_set;

/* The set the consumer box [lo, hi) (consumer tensor dimensions) reads
 * through view (NULL: the identity); the view must fit
 * (rotor_handoff_fits). */
void rotor_handoff_map(const rotor_handoff *h, const rotor_view *view, int ndims, const int64_t *lo,
                       const int64_t *hi, rotor_handoff_set *out);

/* The set's real elements (inside the output's extents). */
int64_t rotor_handoff_set_elems(const rotor_handoff *h, const rotor_handoff_set *s);

/* The core that holds output element coord (one index per dimension, inside
 * the real extents). */
int64_t rotor_handoff_holder(const rotor_handoff *h, const int64_t *coord);

/* Elements of the set that core holds. */
int64_t rotor_handoff_held(const rotor_handoff *h, int64_t core, const rotor_handoff_set *s);

/* Calls fn(ctx, src, elems) for every core src holding elems > 0 elements
 * of the set, in increasing cell and rank order; stops at and returns fn's
 * first error. */
typedef rotor_status (*rotor_handoff_fn)(void *ctx, int64_t src, int64_t elems);
rotor_status rotor_handoff_sources(const rotor_handoff *h, const rotor_handoff_set *s, rotor_handoff_fn fn,
                                   void *ctx);

/* The same two for the box [lo, hi) of output coordinates. */
int64_t rotor_handoff_held_box(const rotor_handoff *h, int64_t core, const int64_t *lo, const int64_t *hi);
rotor_status rotor_handoff_sources_box(const rotor_handoff *h, const int64_t *lo, const int64_t *hi,
                                       rotor_handoff_fn fn, void *ctx);

/* The real box [lo, hi) of tensor t that core needs at step 0 of the
 * consumer's plan (its partition clipped to the tensor's extents); false
 * when the core holds no real element of it. */
bool rotor_handoff_need(const rotor_place *consumer, int t, int64_t core, int64_t *lo, int64_t *hi);

/* recv[c] for every core c of the consumer's plan: the real elements of
 * its step-0 partition of tensor t, read through view, that it must
 * receive (needed and not held); *max gets the largest.  t must match
 * (rotor_handoff_matches). */
void rotor_handoff_receive(const rotor_handoff *h, const rotor_place *consumer, int t, const rotor_view *view,
                           int64_t *recv, int64_t *max);

/* The same and, for every core p of the producer's plan, send[p]: the
 * elements it sends to others (*max_send the largest).  Where the
 * consumer's boxes are a product of intervals per dimension (every T10
 * plan's), the sends are sums over them (handoff.c, "the traffic by
 * sums"); otherwise it visits every (receiver, holder) pair
 * (rotor_handoff_walk), asking each core's box once for both.
 * ROTOR_ERR_NOMEM if the walk's memo cannot grow. */
rotor_status rotor_handoff_traffic(const rotor_handoff *h, const rotor_place *consumer, int t,
                                   const rotor_view *view, int64_t *recv, int64_t *max_recv, int64_t *send,
                                   int64_t *max_send);

/* Every piece of the hand-off into tensor t of the consumer's plan:
 * fn(ctx, dst, src, elems) for every consumer core dst (in increasing
 * order) that needs real elements (rotor_handoff_need), read through view,
 * and every producer core src holding elems > 0 of them (src == dst
 * included), in rotor_handoff_sources' order: the calls those three make
 * core by core.  Cores that need the same box read the same sources, so
 * each distinct box's sources are found once (a wafer's consumer has
 * 745,500 cores and a few thousand boxes).  Stops at and returns fn's first
 * error; ROTOR_ERR_NOMEM (err filled) if its memo cannot grow. */
typedef rotor_status (*rotor_handoff_piece_fn)(void *ctx, int64_t dst, int64_t src, int64_t elems);
rotor_status rotor_handoff_walk(const rotor_handoff *h, const rotor_place *consumer, int t, const rotor_view *view,
                                rotor_handoff_piece_fn fn, void *ctx, rotor_error *err);

/* A memo of the walks' boxes (which sources each distinct box reads), kept
 * by a caller that walks many hand-offs so that each walk allocates
 * nothing: it is emptied at the start of every walk, so any hand-off may
 * use it after any other; one walk at a time.  NULL from _new: no memory. */
typedef struct rotor_handoff_memo rotor_handoff_memo;
rotor_handoff_memo *rotor_handoff_memo_new(void);
void rotor_handoff_memo_free(rotor_handoff_memo *m);

/* rotor_handoff_walk and rotor_handoff_traffic with the caller's memo
 * (NULL: a memo of their own).  The same calls and counts; _traffic_in
 * finds each core's box once for both recv and send (rotor_handoff_traffic
 * is it with NULL). */
rotor_status rotor_handoff_walk_in(const rotor_handoff *h, const rotor_place *consumer, int t,
                                   const rotor_view *view, rotor_handoff_memo *memo, rotor_handoff_piece_fn fn,
                                   void *ctx, rotor_error *err);
rotor_status rotor_handoff_traffic_in(const rotor_handoff *h, const rotor_place *consumer, int t,
                                      const rotor_view *view, rotor_handoff_memo *memo, int64_t *recv,
                                      int64_t *max_recv, int64_t *send, int64_t *max_send);

/* The traffics that walks with memo m priced by sums over the
 * consumer's intervals, not source by source (handoff.c, "the traffic by
 * sums"; the same counts): how tests know that way was taken. */
int64_t rotor_handoff_memo_sums(const rotor_handoff_memo *m);

/* Whether rotor_handoff_traffic_in with memo m may price by those sums (a
 * new memo may); off, it goes source by source: the tests compare them. */
void rotor_handoff_memo_use_sums(rotor_handoff_memo *m, bool on);

/* The producer plan's cores (the length of send). */
int64_t rotor_handoff_cores(const rotor_handoff *h);

#endif
