/* rotor — explore's grid, points and document (docs/explore.md), library
 * code shared by `rotor explore` (src/cli/explore*.c: MPI ranks, --resume,
 * CSV/SVG/HTML files, progress, printing) and rotor_doc("explore")
 * (pipeline/doc.h, the Python package): the --sweep keys and their values,
 * the grid's points, the chip and model shape at a point, the evaluation of
 * one point (its CSV rows, read back) and the --json document.  The
 * functions are the CLI's ex_ ones moved here, named rotor_ex_ (a library
 * export carries the stage's rotor_ prefix); the types keep their ex_
 * names (no symbol). */
#ifndef ROTOR_PIPELINE_EXPLORE_H
#define ROTOR_PIPELINE_EXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/hbm/preload.h"
#include "rotor/hbm/schedule.h"
#include "rotor/model/zoo.h"
#include "rotor/pipeline/pipeline.h"

#define EX_MAX_VALUES 64     /* values of one key */
#define EX_MAX_POINTS 10000  /* points of a grid: beyond it the grid is refused */
#define EX_VALUE_TEXT 32     /* a value's spelling in the CSV, with its '\0' */
#define EX_ND ROTOR_PRELOAD_NDESIGNS
#define EX_NMETRICS 11       /* the figures of a CSV row after its keys and design */

typedef enum ex_key {
    KEY_HBM_BW, KEY_NOC_BW, KEY_CORES, KEY_FLOPS, KEY_SRAM, KEY_CHIPS, KEY_TOPOLOGY, KEY_BATCH, KEY_SEQ, EX_NKEYS
} ex_key;

typedef enum ex_kind { EX_NUMBER, EX_INTEGER, EX_TOPOLOGY } ex_kind;

typedef struct ex_key_info {
    const char *name;  /* --sweep NAME=..., the CSV column */
    const char *unit;
    const char *axis;  /* a plot's axis label */
    const char *field; /* what it sets: a chip field, or the model's shape */
    ex_kind kind;
    bool shape;        /* shapes the model (batch, seq), not the chip */
    double max;        /* the largest value (numbers) */
} ex_key_info;

extern const ex_key_info rotor_ex_keys[EX_NKEYS];

/* One swept key: its values in the order given.  num is the number (the
 * index for a topology); text is how the CSV, the table and the plots
 * spell it (%.10g, or the topology as given). */
typedef struct ex_axis {
    ex_key key;
    const char *spec; /* "KEY=VALUES" as given */
    int n;
    double num[EX_MAX_VALUES];
    char text[EX_MAX_VALUES][EX_VALUE_TEXT];
} ex_axis;

/* The grid: the axes in --sweep order, a full product (the first axis
 * slowest) or, with --zip, the i-th values of every axis together. */
typedef struct ex_grid {
    ex_axis axes[EX_NKEYS];
    int naxes, npts;
    bool zip;
    int axis_of[EX_NKEYS]; /* the axis of a key, -1: not swept */
} ex_grid;

/* One design's figures at a point, as its CSV row has them. */
typedef struct ex_row {
    double latency_us, pct_ideal, preload_us, execute_us, overlap_us, stall_us, hbm_util, link_util, tflops;
    double energy_j, edp_js; /* per token or step (docs/energy.md, "Schedules") */
} ex_row;

typedef struct ex_point {
    int vi[EX_NKEYS];  /* the value index on each axis */
    int shape;         /* the model shape it schedules (rotor_ex_shape_index) */
    rotor_chip chip;
    rotor_status st;   /* ROTOR_OK: csv and rows hold its results */
    rotor_error err;
    bool resumed;      /* its rows came from --resume's file */
    char *csv;         /* its CSV rows, one per design (NULL: not run yet) */
    ex_row rows[EX_ND]; /* by design, read back from csv */
} ex_point;

/* ---- the grid (pipeline/exploregrid.c) ---- */

/* Parses one --sweep KEY=VALUES into ax; the one-line error names --sweep. */
rotor_status rotor_ex_parse_sweep(const char *spec, ex_axis *ax, rotor_error *err);
/* Checks the axes (each key once; --zip: equal lengths; at most
 * EX_MAX_POINTS points) and fills the rest of g. */
rotor_status rotor_ex_grid_finish(ex_grid *g, rotor_error *err);
/* The value indices of point i. */
void rotor_ex_grid_point(const ex_grid *g, int i, int *vi);
/* Point i's index from its value indices; -1 when they are no point (--zip
 * with unequal indices). */
int rotor_ex_grid_index(const ex_grid *g, const int *vi);
/* "hbm-bw=2, noc-bw=4" for a point's values, into buf. */
const char *rotor_ex_point_name(const ex_grid *g, const int *vi, char *buf, size_t size);
/* The chip at a point: base with every swept chip key applied (chips,
 * cores, topology, sram, noc-bw, flops, hbm-bw, in that order), validated;
 * tp (0: all chips) must fit its chips. */
rotor_status rotor_ex_point_chip(const ex_grid *g, const int *vi, const rotor_chip *base, int64_t tp, rotor_chip *out,
                           rotor_error *err);
/* The model shape at a point: zoo options base with batch and seq applied. */
void rotor_ex_point_shape(const ex_grid *g, const int *vi, const rotor_zoo_options *base, rotor_zoo_options *out);
/* The shape index of a point: batch's value index x seq's count + seq's. */
int rotor_ex_shape_index(const ex_grid *g, const int *vi);
int rotor_ex_shape_count(const ex_grid *g);

/* ---- a point and the document (pipeline/docexplore.c) ---- */

/* The CSV header, without its newline. */
void rotor_ex_csv_header(const ex_grid *g, char *buf, size_t size);
/* A point's CSV rows (nd of them) for its values and figures, as a
 * malloc'd string (NULL: out of memory). */
char *rotor_ex_csv_rows(const ex_grid *g, const int *vi, const rotor_preload_design *designs, int nd,
                        const ex_row *rows);
/* The figures of one CSV line after its skip key and design fields. */
bool rotor_ex_csv_read_metrics(const char *line, int skip, ex_row *r);
/* Reads p->csv back into p->rows (the CSV's precision is what every output
 * shows, so a resumed point and a computed one print the same). */
void rotor_ex_csv_read_back(ex_point *p, const rotor_preload_design *designs, int nd);
/* Schedules point p of g on the model graph: every design in want (Ideal
 * among them) with so (its threads set to 1: the points are the parallel
 * loop), its CSV rows written and read back into p; p->st and p->err say
 * why it does not fit. */
void rotor_ex_point_run(const ex_grid *g, const rotor_graph *graph, const rotor_schedule_options *so, const bool *want,
                  const rotor_preload_design *designs, int nd, ex_point *p);
/* --sweep batch or seq with the model: zoo models only, and not beside
 * --batch (batch_given) or --seq (seq_given). */
rotor_status rotor_ex_grid_check_model(const ex_grid *g, const char *model, bool batch_given, bool seq_given,
                                 rotor_error *err);
/* Every point of g (*pts, g->npts of them) with its chip (checked before
 * anything runs: rotor_ex_point_chip), and the model po at every shape the
 * points use (*pls, *nshapes; each shape run once, from its first point,
 * on chip).  *pts and *pls are set even on an error: rotor_ex_points_free. */
rotor_status rotor_ex_prepare(const ex_grid *g, const rotor_chip *chip, const rotor_pipeline_options *po, int64_t tp,
                        ex_point **pts, rotor_pipeline **pls, int *nshapes, rotor_error *err);
void rotor_ex_points_free(ex_point *pts, int npts, rotor_pipeline *pls, int nshapes);
/* A grid where no point fits is an error: the first point's, prefixed
 * "--sweep KEYS: no point fits; at POINT" (pts[0].err is rewritten). */
rotor_status rotor_ex_check_fits(const ex_grid *g, ex_point *pts, rotor_error *err);
/* `rotor explore --json` (rotor-explore, version 2, docs/explore.md): the
 * grid g, its points pts, the designs asked for, on chip (the base chip);
 * csv and svgs[0 .. nsvg) the files the CLI wrote (csv NULL: no "csv" nor
 * "svg" key, as rotor_doc writes no files).  *out: rotor_free it. */
rotor_status rotor_ex_doc(const ex_grid *g, const ex_point *pts, const rotor_preload_design *designs, int nd,
                    const char *model, const rotor_chip *chip, const char *csv, const char *const *svgs, int nsvg,
                    char **out, rotor_error *err);

#endif
