/* rotor explore's pieces (docs/explore.md), shared by its files:
 *   exploreout.c   --resume's rows, the table, the JSON printed (built by
 *                  the library, pipeline/docexplore.c), the line plot and
 *                  the heat maps
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
#include "rotor/pipeline/explore.h"

/* The grid, its points and the document are library code
 * (rotor/pipeline/explore.h), shared with rotor_doc("explore"). */

/* ---- exploreout.c ---- */

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
