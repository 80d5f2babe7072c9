/* rotor explore — design-space grids over Elk's HBM schedules (Elk §6.4,
 * Figures 19-23, docs/explore.md): each --sweep gives one key a list of
 * values, the lists combine into a grid (their full product, or with --zip
 * their values paired), the model is scheduled at every point
 * (rotor_schedule_build, then every requested design), and the grid is
 * written as one CSV, a line plot (one key) or a heat map per pair of keys,
 * and a table or JSON.
 *
 * The points run in rounds: in each, the points are dealt out to the MPI
 * ranks (mpisweep.c; one rank without mpirun) and each rank runs its own in
 * parallel threads; rank 0 gathers the round's rows, which it keeps in grid
 * order.  So the output depends neither on the thread count nor on the
 * ranks.  Rows go to the CSV as text and are read back, so that a point
 * taken from --resume's file and a computed one print the same. */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "explore.h"
#include "rotor/base/clock.h"
#include "rotor/compile/opelem.h"
#include "rotor/hbm/schedule.h"
#include "rotor/pipeline/pipeline.h"

#define MAX_SVGS (EX_NKEYS * (EX_NKEYS - 1)) /* a latency and an energy heat map per pair of keys */
#define CHECKPOINT_S 30 /* by default the CSV is rewritten with the points done at most this often */

static const char *const CMD = "explore";

static void explore_usage(FILE *f) {
    fprintf(f,
            "usage: rotor explore MODEL|FILE.onnx --sweep KEY=VALUES [--sweep KEY=VALUES ...] [options]\n"
            "\n"
            "Explores a design space (Elk §6.4): each --sweep gives a key a list of values, the\n"
            "lists combine into a grid (every combination; --zip pairs them instead), and the model\n"
            "is scheduled as `rotor schedule` does at every point, for every design.  Writes\n"
            "PREFIX-KEYS.csv (one row per point and design), a line plot PREFIX-KEY.svg for one\n"
            "key or a heat map PREFIX-K1-K2.svg of the latency per pair of keys, and a table.\n"
            "\n"
            "keys:\n"
            "  hbm-bw   total HBM bandwidth of all chips, TB/s (as rotor schedule --hbm-bw)\n"
            "  noc-bw   per-core link bandwidth, GB/s (the chip's link_gbps)\n"
            "  cores    cores per chip (cores_per_chip); on a mesh chip the mesh becomes the\n"
            "           most nearly square WxH (refused beyond 4:1)\n"
            "  flops    matrix TFLOP/s per chip (matrix_tflops); vector_tflops is scaled by\n"
            "           the same ratio\n"
            "  sram     SRAM per core, bytes (sram_bytes)\n"
            "  chips    chips (chips; interchip_gbps keeps its share per chip)\n"
            "  topology all-to-all, mesh (the squarest mesh of the cores) or mesh:WxH\n"
            "  batch    the model's batch size (zoo models; as --batch)\n"
            "  seq      the model's sequence length, an LLM's KV cache (zoo models; as --seq)\n"
            "values: a comma list (2,4,8,16), ranges START:END:xF (geometric, 2:32:x2 is\n"
            "2,4,8,16,32) or START:END:+S (arithmetic), or both mixed; at most %d per key, and\n"
            "at most %d points in the grid.\n"
            "\n"
            "  --sweep KEY=VALUES  a key and its values (repeatable, each key once); the first\n"
            "                      key varies slowest\n"
            "  --zip               pair the lists (equal lengths): point i takes every list's i-th value\n"
            "  --design D,...      basic, static, dyn, full, ideal, roofline, or all (default all)\n"
            "  -o, --output PREFIX output files PREFIX-KEYS.csv and .svg (default explore-MODEL;\n"
            "                      PREFIX a directory DIR: DIR/explore-MODEL-KEYS.csv and .svg)\n"
            "  --resume FILE.csv   take the points FILE has rows for (an earlier or interrupted run\n"
            "                      of this grid) and run the rest; the CSV is as an uninterrupted run's.\n"
            "                      FILE.csv.run, written beside every CSV, must record this run's options\n"
            "  --checkpoint S      while running, rewrite the CSV with the points done at most every\n"
            "                      S seconds, for --resume (default %d; 0: after every round)\n"
            "  --chip NAME|FILE    preset or chip file with HBM; default ipu-pod4\n"
            "  --set KEY=VALUE     override one chip field before the sweep (repeatable)\n"
            "  --hbm-bw BW         total HBM bandwidth when it is not swept (TB/s)\n"
            "  --batch N, --seq N, --layers N, --decode, --prefill, --dim k=v,..., --input NAME=AxB,..,\n"
            "                      --value NAME=SPEC\n"
            "                      shape the model, as in rotor schedule\n"
            "  --max-model-bytes N refuse a model file over N bytes (default 2 GiB, docs/onnx.md)\n"
            "  --simplify          fold BatchNormalization into its convolution and fold constants\n"
            "                      before grouping (docs/simplify.md)\n"
            "  --train             the training step: loss, backward pass, optimizer update\n"
            "                      (docs/training.md); --optimizer sgd (default) or adam\n"
            "  --tp N              chips the model is split over (default: all of them)\n"
            "  --sram-nonblocking  inter-core writes do not pause a core's SRAM accesses\n"
            "  --max-orders N      preload orders tried per layer (default 5040)\n"
            "  --json              print JSON (rotor-explore, version 2) instead of the table\n"
            "  --report FILE.html  also one self-contained HTML page of the plots and the table\n"
            "                      (docs/report.md; a directory DIR: DIR/explore-MODEL.html)\n"
            "  --threads N         points run in parallel (default: all cores); the output is the\n"
            "                      same for every N\n"
            "  --list              list the zoo\n"
            "  -q, --quiet         no progress on stderr\n"
            "  --progress WHEN     auto (a bar on a terminal), always (also lines every 5 s in a log), never\n"
            "  -h, --help          this help\n"
            "\n"
            "Under mpirun (rotor built with OpenMPI) the points are split over the processes and\n"
            "rank 0 writes the same files as one process would.\n"
            "A point where an operator does not fit is skipped (noted on stderr and in the\n"
            "table); a grid with no point that fits is an error.\n"
            "exit status: 0 explored, 1 no point fits, 2 bad input\n",
            EX_MAX_VALUES, EX_MAX_POINTS, CHECKPOINT_S);
}

/* One run of `rotor explore`: what was asked, the points, the outputs. */
typedef struct explore {
    const char *input, *prefix, *report_path, *resume, *checkpoint_text;
    bool zip;
    int64_t checkpoint_s; /* --checkpoint */
    cli_hbm_args ha;
    const char *sweep_specs[EX_NKEYS];
    int nsw, nd, nthreads;
    ex_grid g;
    rotor_preload_design designs[EX_ND];
    bool want[EX_ND];
    bool decode;
    rotor_pipeline_options po;
    rotor_schedule_options so;
    rotor_chip chip;
    ex_point *pts;
    rotor_pipeline *pls; /* the model at each shape (rotor_ex_shape_index), loaded and grouped */
    int nshapes;
    ex_mpi mpi;
    /* rank 0's outputs, opened before the work (cli_output) */
    cli_output csv, report;
    cli_output svg[MAX_SVGS];
    int svg_a[MAX_SVGS], svg_b[MAX_SVGS]; /* a heat map's axes; a line plot: -1 */
    bool svg_energy[MAX_SVGS];            /* a heat map of energy, not latency */
    int nsvg;
    double last_checkpoint;
    char *run_text;   /* the run record (explorerun.c), written beside the CSV */
    bool run_written; /* the CSV's name has this run's record beside it */
} explore;

/* ---- options --------------------------------------------------------------- */

/* Parses argv into ex (the options, the designs, the grid); returns -1 to go
 * on, else the exit status (0 after --help). */
static int parse_explore(int argc, char **argv, explore *ex) {
    static const cli_opt own[] = {
        CLI_HBM_OPTS(explore, ha),
        {"sweep", 0, CLI_MANY, offsetof(explore, sweep_specs), offsetof(explore, nsw), EX_NKEYS},
        {"zip", 0, CLI_FLAG, offsetof(explore, zip), 0, 0},
        {"resume", 0, CLI_VALUE, offsetof(explore, resume), 0, 0},
        {"checkpoint", 0, CLI_VALUE, offsetof(explore, checkpoint_text), 0, 0},
        {"output", 'o', CLI_VALUE, offsetof(explore, prefix), 0, 0},
        {"report", 0, CLI_VALUE, offsetof(explore, report_path), 0, 0},
        {0}};
    int rc = cli_parse_options(CMD, argc, argv, CLI_TAKES_ALL, &ex->ha.m, own, ex, explore_usage, cli_list_zoo,
                               &ex->input, "a model is required (try --help)");
    if (rc >= 0) return rc;
    if (ex->nsw == 0)
        return cli_usage_error(CMD, "--sweep KEY=V1,V2,... is required (keys: hbm-bw, noc-bw, cores, flops, sram, "
                               "chips, topology, batch, seq)");
    if (ex->prefix && !*ex->prefix) return cli_usage_error(CMD, "-o: expected a file name prefix, got ''");
    if (ex->prefix && !strcmp(ex->prefix, "-"))
        return cli_usage_error(CMD, "-o -: explore writes a CSV and SVG files; give a prefix or a directory");
    /* a prefix naming a device or a pipe put the files beside it: -o
     * /dev/null wrote /dev/null-hbm-bw.csv into /dev (found by an audit
     * helper) */
    struct stat sb;
    if (ex->prefix && stat(ex->prefix, &sb) == 0 && !S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode))
        return cli_usage_error(CMD, "-o %s: not a directory or a file name prefix (a device or a pipe); explore "
                               "writes PREFIX-KEYS.csv and .svg", ex->prefix);
    if (ex->report_path && !strcmp(ex->report_path, "-"))
        return cli_usage_error(CMD, "--report -: explore prints its table on stdout; give a file or a directory");
    if (ex->zip && ex->nsw < 2) return cli_usage_error(CMD, "--zip pairs the lists of two or more --sweep keys");
    ex->checkpoint_s = CHECKPOINT_S;
    if (ex->checkpoint_text && cli_parse_i64(CMD, "--checkpoint", ex->checkpoint_text, 0, 86400, &ex->checkpoint_s))
        return EXIT_BADINPUT;
    if (cli_hbm_workload(CMD, ex->input, &ex->ha, &ex->po, &ex->so)) return EXIT_BADINPUT;
    ex->decode = ex->po.zoo.phase == ROTOR_PHASE_DECODE;
    ex->nthreads = ex->so.threads ? ex->so.threads : omp_get_max_threads(); /* --threads: the points' loop */
    if ((rc = cli_parse_designs(CMD, ex->ha.design, ex->designs, &ex->nd))) return rc;
    for (int k = 0; k < ex->nd; k++) ex->want[ex->designs[k]] = true;
    ex->want[ROTOR_PRELOAD_IDEAL] = true; /* percent_of_ideal in every row */
    ex->g.zip = ex->zip;
    ex->g.naxes = ex->nsw;
    rotor_error err = {{0}};
    for (int w = 0; w < ex->nsw; w++)
        if (rotor_ex_parse_sweep(ex->sweep_specs[w], &ex->g.axes[w], &err)) return cli_usage_error(CMD, "%s", err.msg);
    if (rotor_ex_grid_finish(&ex->g, &err)) return cli_usage_error(CMD, "%s", err.msg);
    if (rotor_ex_grid_check_model(&ex->g, ex->input, ex->ha.m.batch != NULL, ex->ha.m.seq != NULL, &err))
        return cli_usage_error(CMD, "%s", err.msg);
    /* a chip field swept and also given: the sweep set it at every point,
     * the other silently lost (--hbm-bw 8 with --sweep hbm-bw=4 headed the
     * table "HBM 8 TB/s" over results at 4; found by an audit helper) */
    if (ex->g.axis_of[KEY_HBM_BW] >= 0 && ex->ha.hbm)
        return cli_usage_error(CMD, "--hbm-bw and --sweep hbm-bw: give one");
    for (int k = KEY_HBM_BW; k <= KEY_TOPOLOGY; k++) {
        if (ex->g.axis_of[k] < 0) continue;
        for (int i = 0; i < ex->ha.m.nsets; i++) {
            const char *set = ex->ha.m.sets[i];
            size_t n = strcspn(set, "=");
            /* the other fields a key writes (exploregrid.c): flops scales
             * the vector and int8 rates, topology shapes the mesh.  (cores
             * reshapes a mesh too, but a --set of its shape is what makes a
             * chip a mesh to sweep the cores of: not lost) */
            static const char *const also[EX_NKEYS][3] = {[KEY_HBM_BW] = {"hbm-bw"},
                                                          [KEY_FLOPS] = {"vector_tflops", "int8_tops"},
                                                          [KEY_TOPOLOGY] = {"mesh_width", "mesh_height"}};
            bool hit = cli_set_key_is(set, rotor_ex_keys[k].field);
            for (int f = 0; f < 3 && also[k][f] && !hit; f++) hit = cli_set_key_is(set, also[k][f]);
            if (hit)
                return cli_usage_error(CMD, "--set %.*s and --sweep %s: give one (the sweep sets it at every point)",
                                       (int)n, set, rotor_ex_keys[k].name);
        }
    }
    return -1;
}

/* ---- the points ------------------------------------------------------------ */

/* The chip, every point's chip (checked before anything runs), the model at
 * every shape the points use. */
static int prepare(explore *ex) {
    rotor_error err = {{0}};
    rotor_status st;
    const cli_shared_args *m = &ex->ha.m;
    const ex_grid *g = &ex->g;
    if ((st = cli_chip(m->chip ? m->chip : "ipu-pod4", m->sets, m->nsets, &ex->chip, &err)))
        return cli_fail(CMD, st, &err);
    if (cli_apply_hbm_bw(CMD, ex->ha.hbm, m->sets, m->nsets, &ex->chip)) return EXIT_BADINPUT;
    if (g->axis_of[KEY_CHIPS] < 0 && ex->so.tensor_parallel > ex->chip.chips)
        return cli_usage_error(CMD, "--tp: expected 1..%lld (the chips of %s), got %lld", (long long)ex->chip.chips,
                               ex->chip.name, (long long)ex->so.tensor_parallel);
    if ((st = rotor_ex_prepare(g, &ex->chip, &ex->po, ex->so.tensor_parallel, &ex->pts, &ex->pls, &ex->nshapes, &err)))
        return cli_fail(CMD, st, &err);
    /* the points' frontiers, shared where they differ only in HBM (hbm/searchmemo.h) */
    if (!(ex->so.memo = rotor_search_memo_new())) return cli_nomem(CMD);
    return 0;
}

/* Schedules one point (pipeline/explore.h, as rotor_doc("explore") does). */
static void run_point(const explore *ex, ex_point *p) {
    rotor_ex_point_run(&ex->g, &ex->pls[p->shape].graph, &ex->so, ex->want, ex->designs, ex->nd, p);
}

/* A round's results on the wire: per point its index, status, message and
 * rows. */
static void put_u32(FILE *f, uint32_t v) { fwrite(&v, sizeof v, 1, f); }

static uint32_t get_u32(const char **p) {
    uint32_t v;
    memcpy(&v, *p, sizeof v);
    *p += sizeof v;
    return v;
}

static void put_point(FILE *f, int i, const ex_point *p) {
    size_t ml = p->st ? strlen(p->err.msg) : 0, cl = !p->st && p->csv ? strlen(p->csv) : 0;
    put_u32(f, (uint32_t)i);
    put_u32(f, (uint32_t)p->st);
    put_u32(f, (uint32_t)ml);
    fwrite(p->err.msg, 1, ml, f);
    put_u32(f, (uint32_t)cl);
    if (cl) fwrite(p->csv, 1, cl, f);
}

/* Rank 0: the gathered results into their points.  0 or EXIT_NOMEM. */
static int take_points(explore *ex, const char *buf, size_t n) {
    const char *p = buf, *end = buf + n;
    while (p < end) {
        ex_point *pt = &ex->pts[get_u32(&p)];
        pt->st = (rotor_status)get_u32(&p);
        uint32_t ml = get_u32(&p);
        snprintf(pt->err.msg, sizeof pt->err.msg, "%.*s", (int)ml, p);
        p += ml;
        uint32_t cl = get_u32(&p);
        if (!pt->st) {
            char *csv = malloc(cl + 1u);
            if (!csv) return cli_nomem(CMD);
            memcpy(csv, p, cl);
            csv[cl] = '\0';
            free(pt->csv);
            pt->csv = csv;
            rotor_ex_csv_read_back(pt, ex->designs, ex->nd);
        }
        p += cl;
    }
    return 0;
}

/* Rank 0, before a CSV of this run takes the CSV's name: the name must
 * never pair rows with the record of other options.  Where no CSV is there
 * yet, this run's record goes first; where one is, a record of other
 * options is removed first and this run's written after the CSV (a stop in
 * between leaves the rows without a record, which --resume refuses rather
 * than guess). */
static void record_before(explore *ex) {
    if (ex->run_written) return;
    if (ex_run_is(ex->csv.path, ex->run_text)) ex->run_written = true;
    else if (access(ex->csv.path, F_OK) != 0 && errno == ENOENT)
        ex->run_written = ex_run_write(ex->csv.path, ex->run_text);
    else ex_run_forget(ex->csv.path);
}

/* ... and after it, this run's record beside it.  False: it could not be written. */
static bool record_after(explore *ex) {
    if (!ex->run_written) ex->run_written = ex_run_write(ex->csv.path, ex->run_text);
    return ex->run_written;
}

/* Rank 0: the CSV with every point done so far, under its final name (a
 * temporary beside it, renamed over it: cli_side_open), so that a run that
 * stops can be resumed from it.  A checkpoint that cannot be written is
 * not an error: the final write will say why.  A CSV written in place (a
 * FIFO, a device) gets none: its rows go out once, at the end. */
static void checkpoint(explore *ex) {
    ex->last_checkpoint = rotor_clock_s();
    cli_output part;
    if (ex->csv.in_place || cli_side_open(ex->csv.path, &part)) return;
    ex_view v = {.g = &ex->g, .pts = ex->pts, .designs = ex->designs, .nd = ex->nd};
    ex_write_csv(part.f, &v);
    if (fflush(part.f) != 0 || ferror(part.f)) {
        cli_output_abort(&part);
        return;
    }
    record_before(ex);
    if (cli_side_commit(&part) == 0) record_after(ex);
}

/* Rank 0: the first point of todo[a..b) that failed other than by not
 * fitting ends the run (0: none). */
static int round_failure(explore *ex, const int *todo, int a, int b) {
    for (int j = a; j < b; j++) {
        ex_point *p = &ex->pts[todo[j]];
        if (!p->st || p->st == ROTOR_ERR_NOFIT) continue;
        char name[512];
        rotor_error_prefix(&p->err, rotor_ex_point_name(&ex->g, p->vi, name, sizeof name));
        return cli_fail(CMD, p->st, &p->err);
    }
    return 0;
}

/* The points not yet done, in rounds: each rank runs every size-th point of
 * a round in parallel, rank 0 gathers the round. */
static int run_points(explore *ex) {
    const ex_mpi *mpi = &ex->mpi;
    int *todo = malloc((size_t)ex->g.npts * sizeof *todo), *mine = malloc((size_t)ex->g.npts * sizeof *mine);
    int ntodo = 0, fail = !todo || !mine;
    if (ex_mpi_max(mpi, fail)) {
        free(todo);
        free(mine);
        return cli_nomem(CMD);
    }
    for (int i = 0; i < ex->g.npts; i++)
        if (!ex->pts[i].resumed) todo[ntodo++] = i;
    int per = ex->nthreads * mpi->size * 4; /* points per round: rank 0's choice, the same on every rank */
    ex_mpi_bcast(mpi, &per, sizeof per);
    cli_progress prog;
    cli_progress_begin(&prog, CMD, "grid points", ex->ha.m.quiet || mpi->rank > 0);
    ex->last_checkpoint = rotor_clock_s();
    int rc = 0;
    for (int a = 0; a < ntodo && !rc; a += per) {
        int b = a + per < ntodo ? a + per : ntodo, nmine = 0, done = 0;
        for (int j = a + mpi->rank; j < b; j += mpi->size) mine[nmine++] = todo[j];
#pragma omp parallel for schedule(dynamic, 1) num_threads(ex->nthreads)
        for (int k = 0; k < nmine; k++) {
            run_point(ex, &ex->pts[mine[k]]);
#pragma omp critical(explore_progress)
            {
                done++;
                int shown = a + done * mpi->size; /* the other ranks as far as this one */
                cli_progress_step(&prog, shown < b ? shown : b, ntodo);
            }
        }
        char *out = NULL, *all = NULL;
        size_t outn = 0, alln = 0;
        FILE *f = open_memstream(&out, &outn);
        if (f) {
            for (int k = 0; k < nmine; k++) put_point(f, mine[k], &ex->pts[mine[k]]);
            fail = fclose(f) != 0;
        }
        if (ex_mpi_max(mpi, !f || fail)) rc = cli_nomem(CMD);
        if (!rc) rc = ex_mpi_gather(mpi, out ? out : "", outn, &all, &alln);
        free(out);
        if (mpi->rank > 0)
            for (int k = 0; k < nmine; k++) { /* rank 0 has them now */
                free(ex->pts[mine[k]].csv);
                ex->pts[mine[k]].csv = NULL;
            }
        if (!rc && mpi->rank == 0) rc = take_points(ex, all, alln);
        free(all);
        if (!rc && mpi->rank == 0) rc = round_failure(ex, todo, a, b);
        if (!rc && mpi->rank == 0 && b < ntodo && rotor_clock_s() - ex->last_checkpoint >= (double)ex->checkpoint_s)
            checkpoint(ex);
        rc = ex_mpi_max(mpi, rc);
    }
    cli_progress_end(&prog);
    free(todo);
    free(mine);
    return rc;
}

/* Rank 0, after the points: a grid where nothing fits is an error; the
 * points skipped are noted in grid order. */
static int check_fits(explore *ex) {
    const ex_grid *g = &ex->g;
    rotor_error err = {{0}};
    rotor_status st = rotor_ex_check_fits(g, ex->pts, &err);
    if (st) return cli_fail(CMD, st, &err);
    char name[512];
    for (int i = 0; i < g->npts; i++)
        if (ex->pts[i].st)
            fprintf(stderr, "rotor explore: %s skipped: %s\n", rotor_ex_point_name(g, ex->pts[i].vi, name, sizeof name),
                    ex->pts[i].err.msg);
    return 0;
}

/* ---- outputs --------------------------------------------------------------- */

/* After a failure: every output of this run is closed and its temporary
 * removed; the names asked for are left as they were (or as the last
 * checkpoint wrote the CSV). */
static void abort_outputs(explore *ex) {
    cli_output_abort(&ex->report);
    cli_output_abort(&ex->csv);
    for (int s = 0; s < ex->nsvg; s++) cli_output_abort(&ex->svg[s]);
}

/* Rank 0: the output files, opened before the work so that a bad path
 * fails fast (under temporary names beside the final ones: cli_output).
 * -o DIR writes into DIR under the default prefix. */
static int open_outputs(explore *ex) {
    char base[256], defprefix[300], given[4096];
    cli_model_base(ex->input, base, sizeof base);
    snprintf(defprefix, sizeof defprefix, "explore-%s", base);
    const char *prefix = defprefix;
    if (ex->prefix && cli_is_dir(ex->prefix)) {
        snprintf(given, sizeof given, "%s%s%s", ex->prefix, ex->prefix[strlen(ex->prefix) - 1] == '/' ? "" : "/",
                 defprefix);
        prefix = given;
    } else if (ex->prefix) {
        prefix = ex->prefix;
    }
    const ex_grid *g = &ex->g;
    int rc = 0;
    if (ex->report_path) {
        char name[320];
        snprintf(name, sizeof name, "%s.html", defprefix);
        rc = cli_output_open(CMD, "--report", ex->report_path, name, &ex->report);
    }
    char keys[200] = "", path[4400];
    size_t used = 0;
    for (int a = 0; a < g->naxes; a++) {
        int w = snprintf(keys + used, sizeof keys - used, "-%s", rotor_ex_keys[g->axes[a].key].name);
        if (w > 0 && (size_t)w < sizeof keys - used) used += (size_t)w;
    }
    snprintf(path, sizeof path, "%s%s.csv", prefix, keys);
    /* --resume FILE may be this CSV: it is read whole before the commit */
    if (!rc) rc = cli_output_open_over(CMD, "-o", path, "", ex->resume, &ex->csv);
    if (g->naxes == 1 || g->zip) {
        ex->svg_a[0] = ex->svg_b[0] = -1;
        snprintf(path, sizeof path, "%s%s.svg", prefix, keys);
        if (!rc) rc = cli_output_open(CMD, "-o", path, "", &ex->svg[ex->nsvg++]);
    } else {
        /* energy maps where the chip prices something (docs/energy.md) */
        const rotor_chip *c = &ex->chip;
        bool priced = c->mac_pj > 0 || c->vector_flop_pj > 0 || c->sram_read_pj > 0 || c->sram_write_pj > 0 ||
                      c->link_pj > 0 || c->hbm_pj > 0 || c->interchip_pj > 0 || c->static_w > 0;
        for (int e = 0; e < 1 + priced; e++)
            for (int a = 0; a < g->naxes && !rc; a++)
                for (int b = a + 1; b < g->naxes && !rc; b++) {
                    ex->svg_a[ex->nsvg] = a;
                    ex->svg_b[ex->nsvg] = b;
                    ex->svg_energy[ex->nsvg] = e;
                    snprintf(path, sizeof path, "%s-%s-%s%s.svg", prefix, rotor_ex_keys[g->axes[a].key].name,
                             rotor_ex_keys[g->axes[b].key].name, e ? "-energy" : "");
                    rc = cli_output_open(CMD, "-o", path, "", &ex->svg[ex->nsvg++]);
                }
    }
    if (rc) abort_outputs(ex);
    return rc;
}

static ex_view view_of(const explore *ex) {
    return (ex_view){.g = &ex->g, .pts = ex->pts, .designs = ex->designs, .nd = ex->nd,
                     .model = ex->pls[ex->pts[0].shape].graph.name, .chip_name = ex->chip.name,
                     .ylabel = ex->decode ? "per-token latency (ms)" : "latency per step (ms)",
                     .elabel = ex->decode ? "energy per token (J)" : "energy per step (J)"};
}

/* One plot: the line plot or heat map s. */
static int write_plot(const explore *ex, const ex_view *v, int s, FILE *f, bool inline_svg) {
    if (ex->svg_a[s] < 0) {
        ex_write_lines(f, v, inline_svg);
        return 0;
    }
    return ex_write_heat(f, v, ex->svg_a[s], ex->svg_b[s], ex->svg_energy[s], inline_svg);
}

/* Rank 0: the CSV and the plots, written, checked and renamed into place. */
static int write_outputs(explore *ex) {
    ex_view v = view_of(ex);
    ex_write_csv(ex->csv.f, &v);
    record_before(ex);
    int rc = cli_output_commit(CMD, "-o", &ex->csv);
    if (!rc && !record_after(ex))
        rc = cli_usage_error(CMD, "-o: %s.run: cannot write (%s); --resume needs it beside the CSV", ex->csv.path,
                             strerror(errno));
    for (int s = 0; s < ex->nsvg && !rc; s++) {
        rc = write_plot(ex, &v, s, ex->svg[s].f, false);
        if (!rc) rc = cli_output_commit(CMD, "-o", &ex->svg[s]);
    }
    return rc;
}

/* --report: one HTML page (docs/report.md) with the plots and the table,
 * self-contained as rotor report's. */
static int write_html(explore *ex) {
    FILE *f = ex->report.f;
    ex_view v = view_of(ex);
    const ex_grid *g = &ex->g;
    char title[300], sub[300];
    snprintf(title, sizeof title, "rotor explore: %s on %s", v.model, ex->chip.name);
    snprintf(sub, sizeof sub, "A grid of %d point%s over %d key%s%s, scheduled with %d design%s (Elk §6.4); points "
             "where an operator does not fit are left out.", g->npts, g->npts > 1 ? "s" : "", g->naxes,
             g->naxes > 1 ? "s" : "", g->zip ? " (zipped)" : "", ex->nd, ex->nd > 1 ? "s" : "");
    cli_html_begin(f, title, sub);
    cli_html_section(f, "sweeps", "Design-space grid");
    int rc = 0;
    for (int s = 0; s < ex->nsvg && !rc; s++) {
        cli_html_figure_begin(f, ex->svg_a[s] < 0 ? "sweep" : "grid");
        rc = write_plot(ex, &v, s, f, true);
        char cap[300];
        if (ex->svg_a[s] < 0) snprintf(cap, sizeof cap, "%s", rotor_ex_keys[g->axes[0].key].axis);
        else snprintf(cap, sizeof cap, "%s%s against %s", ex->svg_energy[s] ? "energy: " : "",
                      rotor_ex_keys[g->axes[ex->svg_a[s]].key].axis, rotor_ex_keys[g->axes[ex->svg_b[s]].key].axis);
        cli_html_figure_end(f, cap);
    }
    fputs("<table>\n<tr>", f);
    for (int a = 0; a < g->naxes; a++) fprintf(f, "<th>%s</th>", rotor_ex_keys[g->axes[a].key].name);
    fputs("<th>design</th><th>latency (ms)</th><th>% of ideal</th><th>preload (ms)</th><th>execute (ms)</th>"
          "<th>overlap (ms)</th><th>stall (ms)</th></tr>\n", f);
    for (int i = 0; i < g->npts; i++) {
        const ex_point *p = &ex->pts[i];
        for (int k = 0; k < (p->st ? 1 : ex->nd); k++) {
            fputs("<tr>", f);
            for (int a = 0; a < g->naxes; a++) {
                fputs("<td>", f);
                cli_xml_text(f, g->axes[a].text[p->vi[a]]);
                fputs("</td>", f);
            }
            if (p->st) {
                fputs("<td colspan=\"7\">does not fit: ", f);
                cli_xml_text(f, p->err.msg);
                fputs("</td></tr>\n", f);
                continue;
            }
            const ex_row *r = &p->rows[ex->designs[k]];
            fprintf(f, "<td>%s</td><td>%.4f</td><td>%.2f</td><td>%.4f</td><td>%.4f</td><td>%.4f</td><td>%.4f</td>"
                       "</tr>\n",
                    rotor_preload_designs[ex->designs[k]].name, r->latency_us * 1e-3, r->pct_ideal,
                    r->preload_us * 1e-3, r->execute_us * 1e-3, r->overlap_us * 1e-3, r->stall_us * 1e-3);
        }
    }
    fputs("</table>\n", f);
    cli_html_section_end(f);
    cli_html_end(f);
    if (rc) return rc;
    return cli_output_commit(CMD, "--report", &ex->report);
}

/* The text report: the chip, the grid's files, the table. */
static void print_report(const explore *ex) {
    const rotor_chip *chip = &ex->chip;
    const ex_grid *g = &ex->g;
    ex_view v = view_of(ex);
    char topo[64];
    printf("%s on %s: %lld chip%s x %lld cores (%s), HBM %.6g TB/s in all, links %.6g GB/s, %.6g TFLOP/s "
           "matrix per chip; %s\n",
           v.model, chip->name, (long long)chip->chips, chip->chips > 1 ? "s" : "", (long long)chip->cores_per_chip,
           rotor_chip_topology_text(chip, topo, sizeof topo), chip->hbm_gbps * (double)chip->chips / 1000.0,
           chip->link_gbps, chip->matrix_tflops, ex->decode ? "decode step (latency per token)" : "one step");
    if (ex->nshapes > 0) cli_quantized_note(rotor_graph_priced_apart(&ex->pls[0].graph, chip), chip);
    char caveat[320];
    if (rotor_schedule_latency_caveat(chip, caveat, sizeof caveat)) printf("note: %s\n", caveat);
    printf("\n");
    printf("sweep ");
    for (int a = 0; a < g->naxes; a++) {
        const ex_key_info *k = &rotor_ex_keys[g->axes[a].key];
        printf("%s%s", a ? (g->zip ? " with " : " x ") : "", k->name);
        if (*k->unit) printf(" (%s)", k->unit);
    }
    printf(": %d point%s x %d design%s -> %s", g->npts, g->npts > 1 ? "s" : "", ex->nd, ex->nd > 1 ? "s" : "",
           ex->csv.path);
    for (int s = 0; s < ex->nsvg; s++) printf(", %s", ex->svg[s].path);
    printf("\n");
    ex_print_table(&v);
}

/* Non-root ranks keep quiet while the arguments are checked and the model
 * loaded: every rank reads the same ones, and rank 0 says what is wrong (or
 * prints --help).  saved[] receives the standard output and error to put
 * back; -1: nothing was redirected. */
static void quiet_ranks(const ex_mpi *mpi, int saved[2]) {
    saved[0] = saved[1] = -1;
    if (mpi->rank == 0) return;
    int null = open("/dev/null", O_WRONLY);
    if (null < 0) return;
    for (int fd = 1; fd <= 2; fd++) {
        saved[fd - 1] = dup(fd);
        dup2(null, fd);
    }
    close(null);
}

static void restore_ranks(int saved[2]) {
    fflush(stdout); /* what was written while quiet goes to /dev/null */
    fflush(stderr);
    for (int fd = 1; fd <= 2; fd++)
        if (saved[fd - 1] >= 0) {
            dup2(saved[fd - 1], fd);
            close(saved[fd - 1]);
            saved[fd - 1] = -1;
        }
}

static void free_explore(explore *ex) {
    rotor_ex_points_free(ex->pts, ex->g.npts, ex->pls, ex->nshapes);
    rotor_search_memo_free(ex->so.memo);
    free(ex->run_text);
    free(ex);
}

int cmd_explore(int argc, char **argv) {
    explore *ex = calloc(1, sizeof *ex);
    if (!ex) return cli_nomem(CMD);
    int rc = ex_mpi_begin(CMD, &ex->mpi);
    if (rc) {
        free(ex);
        return rc;
    }
    bool root = ex->mpi.rank == 0;
    int saved[2];
    quiet_ranks(&ex->mpi, saved);
    rc = parse_explore(argc, argv, ex);
    if (rc < 0) {
        rc = prepare(ex);
        restore_ranks(saved);
        int any = ex_mpi_max(&ex->mpi, rc ? ex->mpi.rank + 1 : 0);
        if (!rc && any) rc = cli_usage_error(CMD, "rank %d could not load the chip or the model (the same command "
                                             "run alone on its machine says why)", any - 1);
        bool opened = false;
        if (!rc && root) opened = !(rc = open_outputs(ex));
        if (!rc && root && !(ex->run_text = ex_run_text(ex->input, &ex->ha, &ex->po, &ex->so, &ex->g)))
            rc = cli_nomem(CMD);
        if (!rc && root && ex->resume) rc = ex_resume(CMD, ex->resume, &ex->g, ex->designs, ex->nd, ex->pts);
        if (!rc && root && ex->resume) rc = ex_run_check(CMD, ex->resume, ex->run_text);
        rc = ex_mpi_max(&ex->mpi, rc);
        if (!rc && ex->mpi.active) { /* the points --resume took, for every rank */
            char *done = calloc((size_t)ex->g.npts, 1);
            rc = ex_mpi_max(&ex->mpi, !done) ? cli_nomem(CMD) : 0;
            if (!rc) {
                for (int i = 0; i < ex->g.npts; i++) done[i] = ex->pts[i].resumed;
                ex_mpi_bcast(&ex->mpi, done, (size_t)ex->g.npts);
                for (int i = 0; i < ex->g.npts; i++) ex->pts[i].resumed = done[i];
            }
            free(done);
        }
        if (!rc) rc = run_points(ex);
        if (!rc && root) rc = check_fits(ex);
        if (!rc && root) rc = write_outputs(ex);
        if (!rc && root && ex->report_path) rc = write_html(ex);
        if (rc && opened) abort_outputs(ex);
        else if (!rc && root && ex->ha.json) {
            ex_view v = view_of(ex);
            const char *svgs[MAX_SVGS];
            for (int s = 0; s < ex->nsvg; s++) svgs[s] = ex->svg[s].path;
            rc = ex_print_json(&v, &ex->chip, ex->csv.path, svgs, ex->nsvg);
        } else if (!rc && root) {
            print_report(ex);
        }
        rc = ex_mpi_max(&ex->mpi, rc);
    }
    restore_ranks(saved);
    ex_mpi_end(&ex->mpi);
    free_explore(ex);
    return rc;
}
