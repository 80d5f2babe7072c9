/* rotor explore's pieces (docs/explore.md), shared by its files:
 *   exploregrid.c  the keys, their value lists, the grid's points, the chip
 *                  and the model shape at a point
 *   exploreout.c   a point's CSV rows (written, and read back for --resume),
 *                  the table, the JSON, the line plot and the heat maps
 *   explorerun.c   the run record beside the CSV (FILE.csv.run), which
 *                  --resume checks against this run's options
 *   explore.c      the command: options, the points in rounds (over MPI
 *                  ranks, mpisweep.c), the outputs
 * Nothing here is library code: it prints and chooses exit statuses. */
#ifndef ROTOR_CLI_EXPLORE_H
#define ROTOR_CLI_EXPLORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "rotor/hbm/preload.h"

#define EX_MAX_VALUES 64     /* values of one key */
#define EX_MAX_POINTS 10000  /* points of a grid: beyond it the grid is refused */
#define EX_VALUE_TEXT 32     /* a value's spelling in the CSV, with its '\0' */
#define EX_ND ROTOR_PRELOAD_NDESIGNS

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

extern const ex_key_info EX_KEYS[EX_NKEYS];

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
    int shape;         /* the model shape it schedules (ex_run.graphs) */
    rotor_chip chip;
    rotor_status st;   /* ROTOR_OK: csv and rows hold its results */
    rotor_error err;
    bool resumed;      /* its rows came from --resume's file */
    char *csv;         /* its CSV rows, one per design (NULL: not run yet) */
    ex_row rows[EX_ND]; /* by design, read back from csv */
} ex_point;

/* ---- exploregrid.c ---- */

/* Parses one --sweep KEY=VALUES into ax.  Prints the error and returns
 * EXIT_BADINPUT, else 0. */
int ex_parse_sweep(const char *cmd, const char *spec, ex_axis *ax);
/* Checks the axes (each key once; --zip: equal lengths; at most
 * EX_MAX_POINTS points) and fills the rest of g.  Prints, as above. */
int ex_grid_finish(const char *cmd, ex_grid *g);
/* The value indices of point i. */
void ex_grid_point(const ex_grid *g, int i, int *vi);
/* Point i's index from its value indices; -1 when they are no point (--zip
 * with unequal indices). */
int ex_grid_index(const ex_grid *g, const int *vi);
/* "hbm-bw=2, noc-bw=4" for a point's values, into buf. */
const char *ex_point_name(const ex_grid *g, const int *vi, char *buf, size_t size);
/* The chip at a point: base with every swept chip key applied (chips,
 * cores, topology, sram, noc-bw, flops, hbm-bw, in that order), validated;
 * tp (0: all chips) must fit its chips. */
rotor_status ex_point_chip(const ex_grid *g, const int *vi, const rotor_chip *base, int64_t tp, rotor_chip *out,
                           rotor_error *err);
/* The model shape at a point: zoo options base with batch and seq applied. */
void ex_point_shape(const ex_grid *g, const int *vi, const rotor_zoo_options *base, rotor_zoo_options *out);
/* The shape index of a point: batch's value index x seq's count + seq's. */
int ex_shape_index(const ex_grid *g, const int *vi);
int ex_shape_count(const ex_grid *g);

/* ---- exploreout.c ---- */

/* The CSV header, without its newline. */
void ex_csv_header(const ex_grid *g, char *buf, size_t size);
/* A point's CSV rows (nd of them) for its values and figures, as a
 * malloc'd string (NULL: out of memory). */
char *ex_csv_rows(const ex_grid *g, const int *vi, const rotor_preload_design *designs, int nd, const ex_row *rows);
/* Reads p->csv back into p->rows (the CSV's precision is what every output
 * shows, so a resumed point and a computed one print the same). */
void ex_csv_read_back(ex_point *p, const rotor_preload_design *designs, int nd);
/* --resume FILE: the rows of FILE onto pts (each complete point gets its
 * csv and resumed = true).  Prints "rotor CMD: --resume FILE: ..." and
 * returns EXIT_BADINPUT (or EXIT_NOMEM), else 0. */
int ex_resume(const char *cmd, const char *path, const ex_grid *g, const rotor_preload_design *designs, int nd,
              ex_point *pts);

/* What the outputs need to know besides the points. */
typedef struct ex_view {
    const ex_grid *g;
    const ex_point *pts;
    const rotor_preload_design *designs;
    int nd;
    const char *model, *chip_name, *ylabel;
    const char *elabel; /* an energy heat map's quantity */
} ex_view;

void ex_write_csv(FILE *f, const ex_view *v);
/* The line plot of a one-axis grid or a --zip (against the first axis). */
void ex_write_lines(FILE *f, const ex_view *v, bool inline_svg);
/* The heat map of axes a < b: the other axes at their first value; a
 * cell's latency (or, with energy, its energy per token or step) is the
 * fastest real design's (basic, static, dyn, full) of those asked, else
 * the first design's.  0, or EXIT_NOMEM after the
 * message (a tip that cannot be allocated shows the bare value). */
int ex_write_heat(FILE *f, const ex_view *v, int a, int b, bool energy, bool inline_svg);
void ex_print_table(const ex_view *v);
/* JSON (rotor-explore, version 2) on stdout; the files it names in
 * csv and svgs.  Returns 0 or the exit status. */
int ex_print_json(const ex_view *v, const rotor_chip *chip, const char *csv, const char *const *svgs, int nsvg);

/* ---- explorerun.c: the run record beside the CSV (FILE.csv.run) ---- */

/* The record of this run's options that change a row's figures, as the
 * JSON text FILE.csv.run holds (malloc'd; NULL: out of memory). */
char *ex_run_text(const char *input, const cli_hbm_args *ha, const rotor_pipeline_options *po,
                  const rotor_schedule_options *so, const ex_grid *g);
/* --resume csv: its record against want (ex_run_text's).  Prints
 * "rotor CMD: --resume CSV: it was run with A, this run has B" for the
 * first option that differs, or why the record cannot be read, and returns
 * EXIT_BADINPUT (EXIT_NOMEM); 0 when they match. */
int ex_run_check(const char *cmd, const char *csv, const char *want);
/* Whether csv's record holds exactly text. */
bool ex_run_is(const char *csv, const char *text);
/* Removes csv's record (before a CSV of other options replaces its rows). */
void ex_run_forget(const char *csv);
/* Writes text as csv's record (beside it, renamed into place:
 * cli_side_open); false, with errno saying why, when it could not be
 * written. */
bool ex_run_write(const char *csv, const char *text);

/* ---- mpisweep.c: the ranks of an mpirun (a build without MPI has one) ---- */

typedef struct rotor_mpi_ops rotor_mpi_ops;
typedef struct ex_mpi {
    int rank, size;
    bool active;              /* MPI was started (under mpirun, with the plugin) */
    const rotor_mpi_ops *ops; /* the plugin's collectives (mpi/mpiops.h) */
    void *handle;             /* its dlopen handle */
} ex_mpi;

/* Starts MPI when rotor runs under mpirun and was built with it; one
 * process otherwise.  Under mpirun without MPI built in, rank 0 prints how
 * to build it, and every rank gets EXIT_BADINPUT; else 0. */
int ex_mpi_begin(const char *cmd, ex_mpi *m);
void ex_mpi_end(ex_mpi *m);
/* The largest of every rank's v (each rank gets it). */
int ex_mpi_max(const ex_mpi *m, int v);
/* n bytes of rank 0's buf into every rank's. */
void ex_mpi_bcast(const ex_mpi *m, void *buf, size_t n);
/* Every rank's n bytes of buf to rank 0: *all (malloc'd, on rank 0 only)
 * holds them one after another in rank order, *alln their total.  0, or
 * EXIT_NOMEM (the same on every rank). */
int ex_mpi_gather(const ex_mpi *m, const char *buf, size_t n, char **all, size_t *alln);

#endif
