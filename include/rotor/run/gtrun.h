/* rotor — GraphTurbo's instances on real data (docs/run.md, "GraphTurbo's
 * instances on real data"; GraphTurbo §3.1, §3.3).
 *
 * rotor_gtrun executes a GraphTurbo schedule (model/graphturbo.h) the way
 * its instances would run: in the schedule's order, each instance computes,
 * for every operator of its sub-graph, only the range of the output that
 * instance needs (the range rotor_gt_prop_run carries back from the
 * instance's block of the sub-graph's output, halos included), reading
 * values from outside the sub-graph in the full tensors written so far and
 * the sub-graph's intermediates from the instance's own local buffers.  It
 * writes its block of the sub-graph's output into the full tensor.
 * Intermediates are never shared between instances: each recomputes its
 * halo rows, so an output equal to the ungrouped run's proves the ranges,
 * halos included, and the order (an instance that reads an element of
 * another sub-graph's output no earlier instance wrote is refused).
 *
 * Every expression operator is evaluated point by point in double, its
 * inputs rounded to float32 first as the direct run rounds them
 * (rotor_run without a program), each output element's terms in the same
 * order, so the two agree to the last bit when the ranges are right.  A
 * copy over integers or booleans reads them as they are and casts its
 * output as ONNX's Cast does (run/runquant.c, as the direct run).  A
 * split sub-graph with a vendor op (whose reference kernel computes whole
 * tensors), or with an intermediate read outside it, runs whole: one
 * instance, every value a full tensor. */
#ifndef ROTOR_RUN_GTRUN_H
#define ROTOR_RUN_GTRUN_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/model/graphturbo.h"

typedef struct rotor_gtrun_options {
    /* A deliberately wrong halo, for the test that the comparison can
     * fail: each intermediate is computed only inside its instance's own
     * block (the block of the sub-graph's output, on the axes where the
     * value has the output's extent); its halo rows stay 0. */
    bool no_halo;
    /* The same wrong halo held even less: each intermediate's piece is
     * only that block, so reading a halo row reads outside the range the
     * instance computed, which the run refuses naming the element. */
    bool narrow_pieces;
    /* Called after each step of the order (an instance, or a sub-graph run
     * whole at its first instance) with the steps done and their number
     * (rotor_compile_options.progress's signature); NULL: none.  A run of
     * a whole model evaluates billions of points (a minute for ResNet-50),
     * so a user sees it move. */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    /* Every point one by one, no fast rows (eval_run): the rows' reference,
     * for the tests that the two give the same bits. */
    bool no_rows;
} rotor_gtrun_options;

typedef struct rotor_gtrun_result {
    int nvalues;
    /* Per graph value its elements, row-major: inputs, weights and every
     * sub-graph's output; NULL for an intermediate of a split sub-graph
     * (it only ever exists in pieces, one per instance). */
    double **values;
    int64_t instances;       /* instances executed */
    int split;               /* sub-graphs executed in several instances */
    int whole;               /* split sub-graphs executed whole: a vendor op, or an
                              * intermediate read outside, inside */
    /* The most rows any instance computes of an intermediate beyond its
     * share (extent / factor) along a split axis: the recomputed halo. */
    int64_t halo_rows;
    double points;           /* expression points evaluated, recomputation included */
    double row_points;       /* ... of them in rows at constant strides (gtrun.c, eval_run) */
    double direct_points;    /* ... by the ungrouped run (every operator once) */
} rotor_gtrun_result;

/* Runs g by schedule s (built for g).  inputs[v] as rotor_run's (graph
 * inputs' elements, nullable entries).  opt may be NULL.  Errors name the
 * operator: a value without data, a type other than float32 in an
 * expression other than a copy, a copy's output its integer type cannot
 * hold, an element view the graph does not record, a read outside
 * the instance's range (the range propagation missed it), a read of an
 * element the order has not produced yet.  After an error out is zeroed. */
rotor_status rotor_gtrun(const rotor_graph *g, const rotor_gt_schedule *s, const double *const *inputs,
                         const rotor_gtrun_options *opt, rotor_gtrun_result *out, rotor_error *err);
void rotor_gtrun_result_free(rotor_gtrun_result *r);

/* The element of x[0..n) farthest from ref (NaN or an infinity against
 * anything else than itself: the farthest), or -1 when n is 0. */
int64_t rotor_gtrun_worst(const double *x, const double *ref, int64_t n);

#endif
