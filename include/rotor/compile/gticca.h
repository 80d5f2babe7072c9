/* rotor — GraphTurbo's sub-graph instances on an inter-core connected chip's
 * core groups (issue 42 item 7; docs/graphturbo.md, "On an ICCA chip").
 *
 * On a chip without a global buffer (the IPU) `--group graphturbo` keeps
 * T10's whole-chip schedule and, where it is faster, runs a sub-graph (a
 * closed range of consecutive operators: only its last operator's output is
 * read after it) as n instances along the batch, instance i on cores
 * i*N/n .. (i+1)*N/n - 1.  Each instance is T10's compile of the
 * sub-graph's operators at batch B/n on that group as a chip of its own
 * (rotor_segment_group_chip, the KAPLA segments' group): every operator
 * planned by the exact search on its group, the moves between them
 * hand-offs inside the group.  Its inputs cross the chip once, gathered
 * from the even layout; its output waits in the even layout, and an
 * operator after it that took it by hand-off gathers it there instead. */
#ifndef ROTOR_GTICCA_H
#define ROTOR_GTICCA_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"

struct rotor_compile_options; /* compile.h, which includes this header */
struct rotor_program;         /* program.h */

/* One sub-graph that runs as instances. */
typedef struct rotor_gticca_sg {
    int first, last;        /* graph operators first..last */
    int64_t instances;      /* n: the batch split n ways */
    int64_t group_cores;    /* N / n */
    double t10_s;           /* its operators under T10 alone: setup + exec */
    double grouped_s;       /* one instance on its group (they run at once) */
    double penalty_s;       /* the setup it adds to operators after it (lost hand-offs) */
    double t10_compute_s;   /* the compute of t10_s (its plans' runs without shifts and reductions) */
    double compute_s;       /* ... of grouped_s */
    int64_t peak_bytes;     /* per core: the instance's peak, the rest of the schedule's idle
                             * layouts (the other sub-graphs' as their instances hold them) and
                             * the live activations around it */
    /* per core: the instance's idle layouts less T10's of the same operators
     * (its weights whole in every group: n times T10's share), which every
     * other operator and sub-graph holds beside it */
    int64_t extra_idle_bytes;
} rotor_gticca_sg;

typedef struct rotor_gticca_result {
    bool done;              /* options.graphturbo ran */
    int nsg;
    rotor_gticca_sg *sg;    /* the sub-graphs chosen, in graph order */
    double t10_s;           /* T10 alone, the same graph */
    double total_s;         /* with the sub-graphs chosen (<= t10_s) */
    int candidates;         /* (sub-graph, n) pairs priced */
    /* the choices (sub-graph, n) of the dynamic program that the SRAM
     * could not hold beside the others' copies of their weights, each
     * turned away and the program run again without it (gticca.c,
     * fit_sram) */
    int dropped;
    int compiles;           /* instance compiles run (distinct shapes) */
    /* The frontier searches those compiles needed, and those of them run:
     * not answered by the plan store they share (gticca.c,
     * instances_precompile) nor by the disk cache. */
    int searches, searches_run;
    /* What the replay needs (sim/gticcareplay.c): per graph operator (nops of
     * them, NULL when nsg is 0), the setup an operator after a sub-graph
     * gathers instead of a hand-off it lost, when the model charged it (its
     * time above the hand-off's): bytes per core and rounds; 0 elsewhere. */
    int nops;
    int64_t *lost_bytes, *lost_rounds;
} rotor_gticca_result;

/* Per core, the idle layouts sub-graphs sg[0..nsg) hold beyond T10's of
 * their operators (the sum of their extra_idle_bytes): what every other
 * operator and sub-graph holds beside its own (gticca.c, fit_sram; the
 * run's SRAM, run/gticcarun.c). */
int64_t rotor_gticca_extra_idle(const rotor_gticca_sg *sg, int nsg);

void rotor_gticca_result_free(rotor_gticca_result *r);

/* The graph one instance of operators first..last of g runs when the batch
 * is split n ways: their expressions at batch B/n, activations sliced
 * alike, weights whole, last's output the graph's output; rotor_compile
 * plans it on rotor_segment_group_chip(chip, N / n).  *ok false when
 * some operator's batch does not split n ways.  Free *ig with
 * rotor_graph_free, also after an error. */
rotor_status rotor_gticca_instance(const rotor_graph *g, int first, int last, int64_t n, rotor_graph *ig, bool *ok,
                                   rotor_error *err);

/* Sub-graph s of g as gticca compiled it, made again for what runs it
 * (the replay, sim/gticcareplay.c; the run, run/gticcarun.c): its instance
 * graph (rotor_gticca_instance at s->instances), the group chip
 * (rotor_segment_group_chip of chip at s->group_cores) and T10's program of
 * the instance graph there, compiled with opt as gticca compiled it (no
 * grouping, no pipelining) and written and read back (rotor_program_roundtrip).
 * *model_s (nullable) gets the instance compile's total.  ROTOR_ERR_INPUT
 * when the batch no longer splits s->instances ways.  Free *ig with
 * rotor_graph_free and *prog with rotor_program_free, also after an error. */
rotor_status rotor_gticca_instance_program(const rotor_graph *g, const rotor_chip *chip, const rotor_gticca_sg *s,
                                           const struct rotor_compile_options *opt, rotor_graph *ig,
                                           rotor_chip *gc, struct rotor_program *prog, double *model_s,
                                           rotor_error *err);

#endif
