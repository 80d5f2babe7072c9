/* rotor — what the HTML report (rotor report, docs/report.md) draws, decided
 * before it is drawn: axes at round numbers, colour scales fitted to the
 * data, operators of one shape collapsed into one chart, a schedule's
 * operators grouped by layer.  The CLI writes the SVG; these say where the
 * ticks fall, which operators share a chart and which row an operator sits
 * in, so that they are tested here (tests/test_report.c) and not by reading
 * pictures.  Nothing here allocates except rotor_report_groups. */
#ifndef ROTOR_PIPELINE_REPORT_H
#define ROTOR_PIPELINE_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/compile/compile.h"
#include "rotor/hbm/schedule.h"
#include "rotor/model/graph.h"

/* A linear axis at round numbers: ticks lo, lo + step, ..., hi (n of
 * them), step 1, 2 or 5 times a power of ten, lo <= the data's smallest
 * and hi >= its largest. */
typedef struct rotor_report_axis {
    double lo, hi, step;
    int n;
} rotor_report_axis;

/* The 1-2-5 step nearest above span / target (target >= 1); 1 for a span
 * that is not positive and finite. */
double rotor_report_nice_step(double span, int target);

/* The axis over [lo, hi] with about `target` intervals: lo and hi rounded
 * out to whole steps (0..9316, target 5: 0, 2000, ..., 10000).  lo == hi
 * (or not finite) gives the unit interval around it. */
void rotor_report_axis_fit(double lo, double hi, int target, rotor_report_axis *out);

/* Tick i (0 <= i < n): lo + i * step, with a zero that is exactly 0. */
double rotor_report_tick(const rotor_report_axis *a, int i);

/* A colour scale fitted to the data: from its smallest finite value to its
 * largest, on a log scale when every value is positive and the largest is
 * over ROTOR_REPORT_LOG_RATIO times the smallest (so that the small ones do
 * not all take the lightest colour). */
#define ROTOR_REPORT_LOG_RATIO 4.0
typedef struct rotor_report_scale {
    double lo, hi;
    bool log;
} rotor_report_scale;

void rotor_report_scale_fit(const double *v, int64_t n, rotor_report_scale *out);

/* Where v falls on the scale, 0 (lo) to 1 (hi), clamped; 0.5 for every
 * value when lo == hi; 0 for a value that is not finite. */
double rotor_report_scale_at(const rotor_report_scale *s, double v);

/* Operators of one shape, drawn once with their count ("x24"). */
typedef struct rotor_report_group {
    int first;       /* graph index of the first operator of the shape */
    int count;       /* operators of the shape */
} rotor_report_group;

/* Groups g's operators by shape, groups in the order of their first
 * operator: an operator with a tensor expression by its expression text and
 * extents, and, when t is not NULL, its frontier in t (the compile's own
 * memo: one frontier per shape and element type); a vendor operator, only
 * with vendor_too, by its type, fused epilogues, FLOPs and bytes (the
 * numbers its vector-rate cost reads).  group_of (nops entries, may be
 * NULL) gets each operator's group, -1 for a vendor operator left out.
 * *out is allocated (free it); after an error it is NULL and *n 0. */
rotor_status rotor_report_groups(const rotor_graph *g, const rotor_compile_result *t, bool vendor_too,
                                 rotor_report_group **out, int *n, int *group_of, rotor_error *err);

/* The rows of a schedule's timeline grouped by layer (Elk §4.4's layer
 * ids): a new row at the first operator, at every operator that begins a
 * layer, and where a run of operators outside layers (layer 0) starts or
 * ends.  row_of gets each operator's row (s->nops entries); returns the
 * number of rows.  A row's operators are consecutive. */
int rotor_report_layer_rows(const rotor_schedule *s, int *row_of);

#endif
