/* handoffcache.h — the compiler's memo of hand-off receive counts (private
 * to the compile stage; src/op/handoff.c computes them).
 *
 * Algorithm 1 asks for the same (producer plan, consumer plan) pairs again
 * and again as it walks idle layouts, and repeated layers share shapes, so
 * each pair is placed and counted once.  Shapes are named by the caller's
 * frontier index; plans by their content, which stays valid when a frontier
 * gains points. */
#ifndef ROTOR_COMPILE_HANDOFFCACHE_H
#define ROTOR_COMPILE_HANDOFFCACHE_H

#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/op/plan.h"

typedef struct handoff_cache handoff_cache;
struct rotor_plan_store; /* rotor/compile/planstore.h */

handoff_cache *handoff_cache_new(const rotor_chip *chip);
void handoff_cache_free(handoff_cache *hc);
/* The wall seconds spent pricing hand-offs the cache did not hold. */
double handoff_cache_seconds(const handoff_cache *hc);

/* The hand-offs counted (pairs the cache did not hold) and the placements
 * made for them (each plan placed once while among the last few used). */
int64_t handoff_cache_counted(const handoff_cache *hc);
int64_t handoff_cache_placements(const handoff_cache *hc);

/* Elements per core on one side of a hand-off: value[c] for each of the
 * n cores (core NULL), or, where most cores move nothing, only the nz that
 * do: value[i] on core[i], cores increasing (a wafer's producer sends from
 * a few hundred of its 745,500 cores, and a compile keeps a hundred such
 * traffics).  Each value takes width bytes, the fewest its entry's values
 * fit (2: uint16_t, 4: int32_t, 8: int64_t), and the readers widen them to
 * int64_t (handoff_cache_counts_at): DenseNet-121's counts were a sixth of
 * its peak memory and of its page faults at int64_t each (issue 45). */
typedef struct handoff_counts {
    int64_t nz;
    int32_t *core;
    void *value;
    int width;
} handoff_counts;

/* Value i of c, widened. */
static inline int64_t handoff_cache_counts_at(const handoff_counts *c, int64_t i) {
    return c->width == 2 ? ((const uint16_t *)c->value)[i]
           : c->width == 4 ? ((const int32_t *)c->value)[i]
                           : ((const int64_t *)c->value)[i];
}

/* The traffic of one hand-off (rotor_handoff_traffic), owned by the cache. */
typedef struct handoff_traffic {
    int64_t nrecv, nsend;       /* the consumer's and the producer's cores */
    handoff_counts recv, send;  /* elements per core */
    int64_t max_recv, max_send;
    /* On a mesh (op/meshmap.h), both plans laid out: the elements through
     * the busiest directed link of the XY routes, and the longest route; 0
     * elsewhere. */
    int64_t max_link, hops;
} handoff_traffic;

/* The traffic when the producer's output, computed by plan pp of shape fp
 * (expression ep), feeds the consumer's tensor t (plan pc of shape fc)
 * through view (NULL or unset: element for element); chip_p and chip_c are
 * the chips each shape is costed on (opelem.h), whose layouts a mesh's link
 * counts follow.  *out stays valid, at the same
 * address, while the cache lives (handoff_cache_most keeps several).
 * Errors: out of memory, or a plan that does not place. */
rotor_status handoff_cache_traffic(handoff_cache *hc, int fp, const rotor_expr *ep, const rotor_plan *pp, int fc,
                                   const rotor_expr *ec, const rotor_plan *pc, int t, const rotor_view *view,
                                   const rotor_chip *chip_p, const rotor_chip *chip_c, const handoff_traffic **out,
                                   rotor_error *err);

/* The elements through the busiest port, in or out, when the hand-offs
 * tr[0..n) run together (per core their traffic adds up), memoised by the
 * traffics' identities: Algorithm 1 asks for the same combinations again
 * and again, and the sum walks every core.  On a mesh, *link gets the
 * inputs' busiest links added up (a bound of the busiest link of them all)
 * and *hops the longest route (both 0 elsewhere; link and hops may be
 * NULL).  Errors: out of memory. */
rotor_status handoff_cache_most(handoff_cache *hc, const handoff_traffic *const *tr, int n, int64_t *most,
                                int64_t *link, int64_t *hops, rotor_error *err);

/* ---- the persistent memo (compile/handoffstore.c; issue 45) ------------- */

/* One hand-off input of a consumer: the producer's shape f (expression e,
 * plan p, costed on chip), feeding the consumer's tensor t through view. */
typedef struct handoff_input {
    int f;
    const rotor_expr *e;
    const rotor_plan *p;
    int t;
    const rotor_view *view;
    const rotor_chip *chip;
} handoff_input;

/* The setup price of a consumer (shape fc, expression ec, plan pc, costed
 * on chip_c) fed by the hand-offs in[0..n): handoff_cache_traffic of each,
 * then handoff_cache_most of them together.  With a store attached
 * (handoff_cache_persist), the answer is looked up there first and
 * recorded after it is computed. */
rotor_status handoff_cache_setup(handoff_cache *hc, const handoff_input *in, int n, int fc, const rotor_expr *ec,
                                 const rotor_plan *pc, const rotor_chip *chip_c, int64_t *most, int64_t *link,
                                 int64_t *hops, rotor_error *err);

/* Memoises handoff_cache_setup's answers by content, and keeps them under
 * dir (NULL: in memory only), next to the plan cache's entries (one .rho
 * file per consumer shape): shape[0..nshapes) are the compile's shape keys
 * (the frontier indices handoff_cache_setup takes) and fchip their chips.
 * With a plan store (NULL: none), each shape's memo is borrowed from its
 * shelf (compile/planshelf.h) when another compile left it there, and put
 * back when hc is freed, so the compiles sharing the store price each
 * hand-off once among them.  Reads every other shape's file now; *damaged
 * counts those that did not read back (ignored, to be rewritten). */
rotor_status handoff_cache_persist(handoff_cache *hc, const char *dir, struct rotor_plan_store *shelf, int nshapes,
                                   char *const *shape, const rotor_chip *fchip, int *damaged, rotor_error *err);
/* Writes the files that learned something (best effort); true when one
 * was written (the caller then evicts, rotor_plancache_evict). */
bool handoff_cache_save(handoff_cache *hc);

/* The store itself (handoffstore.c): per consumer shape, records of
 * integer vectors (at most HANDOFF_KEY_MAX) to three integers. */
#define HANDOFF_KEY_MAX 512
typedef struct handoff_store handoff_store;
rotor_status handoff_cache_store_open(const char *dir, struct rotor_plan_store *shelf, int nshapes,
                                      char *const *shape, const rotor_chip *fchip, const rotor_chip *chip,
                                      handoff_store **out, int *damaged, rotor_error *err);
/* Producer shape fp's index in consumer fc's file (added when add; -1:
 * not there, or out of memory). */
int handoff_cache_store_producer(handoff_store *hs, int fc, int fp, bool add);
bool handoff_cache_store_find(const handoff_store *hs, int fc, const int64_t *v, int n, int64_t out[3]);
rotor_status handoff_cache_store_add(handoff_store *hs, int fc, const int64_t *v, int n, const int64_t r[3],
                               rotor_error *err);
bool handoff_cache_store_save(handoff_store *hs);
/* Frees hs, its memos put back on the shelf it was opened with. */
void handoff_cache_store_free(handoff_store *hs);

#endif
