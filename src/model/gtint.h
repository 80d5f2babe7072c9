/* gtint.h — what the GraphTurbo files of the model stage share: the
 * propagation of an instance's output range back through its operators
 * (gtsplit.c), which the split (rows), the footprint and the instance
 * dependencies of the order (gtorder.c: ranges) all read. */
#ifndef ROTOR_GTINT_H
#define ROTOR_GTINT_H

#include <stddef.h>

#include "rotor/model/graphturbo.h"

#define GT_R ROTOR_GRAPH_MAX_RANK

/* An array length for malloc: at least 1, so that an empty graph allocates. */
static inline size_t gt_len(int64_t n) { return n > 0 ? (size_t)n : 1; }

/* The operators of one sub-graph and the per-value scratch one propagation
 * writes (lo/hi: the range of each axis one instance needs, unclipped; set:
 * the value was reached). */
typedef struct gt_prop {
    const rotor_graph *g;
    const int *ops;
    int n, out;
    int64_t (*lo)[GT_R], (*hi)[GT_R];
    uint8_t *set;
    int *first, *last;   /* per value: first and last member position using it */
    int64_t *diff;       /* n + 1 */
    const uint8_t *cut;  /* per value, or NULL: its producer's split cuts the outermost axis */
} gt_prop;

bool rotor_gt_prop_init(gt_prop *p, const rotor_graph *g, const int *ops, int n, int out);
void rotor_gt_prop_free(gt_prop *p);
/* Carries the output range [olo, ohi) back through the operators. */
void rotor_gt_prop_run(gt_prop *p, const int64_t *olo, const int64_t *ohi);
/* Rows of axis a of value v after a run (clipped to its extent). */
int64_t rotor_gt_prop_rows(const gt_prop *p, int v, int a);

/* The instances of a schedule as gtorder.c builds them: ids are breadth
 * first (sub-graph by sub-graph), edges both ways, and the chosen order. */
typedef struct gt_inst {
    int64_t n;
    const int64_t *base;           /* sub-graph -> its first id */
    const int *isg;                /* id -> sub-graph */
    const int64_t *pstart, *plist; /* producers' instances */
    const int64_t *sstart, *slist; /* consumers' instances */
    const int64_t *order;          /* position -> id */
} gt_inst;

/* Bytes of one instance's output block of sub-graph sg (the blocks are equal). */
static inline int64_t gt_block_bytes(const rotor_graph *g, const rotor_gt_schedule *s, int sg) {
    return g->values[s->sg[sg].output].bytes / s->sg[sg].best.instances;
}

/* The position of the last instance that reads instance x, placed at i
 * (i when none does): its block's liveness; pos maps id -> position.  The
 * order's peak (gtorder.c) and the spills (gtscope.c) both read it. */
static inline int64_t gt_last_read(const int64_t *sstart, const int64_t *slist, const int64_t *pos, int64_t x,
                                   int64_t i) {
    int64_t end = i;
    for (int64_t e = sstart[x]; e < sstart[x + 1]; e++)
        if (pos[slist[e]] > end) end = pos[slist[e]];
    return end;
}

/* The split that cuts the output's outermost axis (the batch) first, its
 * smallest fitting factor or that axis whole and Algorithm 1 inside it,
 * without the whole run's cost as a bar (gtgroup.c weighs it against the
 * values a batch-whole sub-graph makes wait; fits false: none fits). */
void rotor_gt_analyse_batch(const rotor_graph *g, const int *ops, int n, int out, const rotor_gt_limits *lim,
                            const uint8_t *cut, rotor_gt_split *alt);
/* rotor_gt_analyse knowing which values' producers cut the outermost axis
 * (cut, per value; NULL: none): an input so produced waits one batch block
 * at a time in the cost (docs/graphturbo.md, "Cost"). */
void rotor_gt_analyse_cut(const rotor_graph *g, const int *ops, int n, int out, const rotor_gt_limits *lim,
                          const uint8_t *cut, int64_t *peak, rotor_gt_split *best);

/* Whether operator op reads its input k element for element as it writes
 * its output (the same shape and bytes, the index map the identity: a
 * fused epilogue's residual, an element-wise operator's input), so that it
 * may write its output over that input where this is its last reader
 * (gtaxes.c). */
bool rotor_gt_aligned_input(const rotor_graph *g, int op, int k);

/* Algorithm 4 and §4.3 (gtscope.c): bindings, scopes, spills, Table 3. */
rotor_status rotor_gt_bind_and_scope(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_schedule *s,
                               const gt_inst *in, rotor_error *err);
/* gtorder.c, for the driver */
rotor_status rotor_gt_order_build(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_schedule *s,
                            rotor_error *err);

#endif
