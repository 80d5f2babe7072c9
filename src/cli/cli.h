/* rotor CLI — shared pieces of the subcommands.  Only src/cli/ prints and
 * chooses exit statuses: 0 success, 1 no plan fits or verification failed,
 * 2 bad input (house style), 3 out of memory (README, "Exit statuses"). */
#ifndef ROTOR_CLI_H
#define ROTOR_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/base/gpu.h"
#include "rotor/compile/energy.h"
#include "rotor/hbm/schedule.h"
#include "rotor/op/expr.h"
#include "rotor/model/zoo.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/sim/replay.h"
#include "rotor/sim/sim.h"

#define EXIT_NOFIT 1
#define EXIT_BADINPUT 2
#define EXIT_NOMEM 3

/* Prints "rotor CMD: message" on stderr and returns the exit status for st. */
int cli_fail(const char *cmd, rotor_status st, const rotor_error *err);

/* Prints "rotor CMD: out of memory" on stderr and returns EXIT_NOMEM. */
int cli_nomem(const char *cmd);

/* Prints "rotor CMD: <formatted>" on stderr and returns EXIT_BADINPUT. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses option opt's integer value s in [lo, hi] into *out; on error prints
 * "rotor CMD: OPT: expected an integer from LO to HI, got 'S'" and returns
 * EXIT_BADINPUT, else 0. */
int cli_parse_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);

/* A bandwidth in TB/s, or with a unit: "16", "16TB/s", "16tb", "8000GB/s";
 * *gbps gets GB/s.  False for anything else, zero, negative or above 1e6. */
bool cli_parse_bandwidth(const char *s, double *gbps);

/* --topology T (all-to-all or mesh:WxH) applied to chip and validated;
 * errors name --topology.  (Written back: rotor_chip_topology_text.) */
rotor_status cli_apply_topology(rotor_chip *chip, const char *topo, rotor_error *err);

/* Resolves --chip (default ipu-mk2), applies every --set, validates. */
rotor_status cli_chip(const char *spec, char *const *sets, int nsets, rotor_chip *out, rotor_error *err);

#define CLI_MAX_SETS 64
#define CLI_MAX_BATCH (1 << 20)

/* The options the subcommands share, as given (NULL: absent): the chip
 * (--chip, --set), the model's shape (--batch, --seq, --layers for zoo
 * models, --dim, --input for ONNX files) and --threads.  A subcommand lists
 * the groups it takes (CLI_TAKES_*), and cli_parse_options parses them all,
 * so each is parsed in one place. */
typedef struct cli_shared_args {
    const char *chip, *batch, *seq, *layers, *dims, *inputs, *threads;
    const char *max_model_bytes; /* --max-model-bytes N (CLI_TAKES_SHAPE) */
    char *sets[CLI_MAX_SETS];
    int nsets;
    char *values[CLI_MAX_SETS]; /* --value NAME=SPEC, repeatable */
    int nvalues;
    bool decode, prefill; /* --decode, --prefill (CLI_TAKES_PHASE) */
    bool simplify;        /* --simplify (CLI_TAKES_SHAPE): BN and constants folded, docs/simplify.md */
    bool train;           /* --train (CLI_TAKES_SHAPE): the training step, docs/training.md */
    const char *optimizer; /* --optimizer sgd|adam (CLI_TAKES_SHAPE), with --train */
    /* the plan cache (CLI_TAKES_CACHE; docs/compile.md, "Plan cache"):
     * --cache DIR, --no-cache, --cache-size N; takes_cache when the
     * subcommand takes them, and cache_path the directory resolved */
    const char *cache, *cache_size;
    bool no_cache, takes_cache;
    char cache_path[4096];
    bool quiet;           /* --quiet, -q: no progress, no notes (every subcommand) */
} cli_shared_args;

/* The plan cache's directory and limit into co (docs/compile.md, "Plan
 * cache"): --cache DIR; none with --no-cache, or by default when the
 * environment has ROTOR_NO_CACHE set (not empty, not 0: the test
 * environment); else $XDG_CACHE_HOME/rotor, else $HOME/.cache/rotor.  The
 * path lives in a->cache_path.  Prints the error and returns EXIT_BADINPUT,
 * else 0.  Nothing when the subcommand does not take the options. */
int cli_shared_cache(const char *cmd, cli_shared_args *a, rotor_compile_options *co);
/* Their lines in a subcommand's --help. */
#define CLI_CACHE_USAGE                                                                          \
    "  --cache DIR         the plan cache's directory (default $XDG_CACHE_HOME/rotor, else\n"   \
    "                      ~/.cache/rotor): searched frontiers kept between runs\n"             \
    "  --no-cache          search every frontier, read and write no cache\n"                    \
    "  --cache-size N      the cache's size limit, bytes or with K, M, G (default 256M)\n"
/* The one-line warning after a compile that found damaged cache entries
 * (they were ignored and rewritten); nothing otherwise. */
void cli_cache_warn(const char *cmd, const rotor_compile_options *co, const rotor_compile_result *r);

/* --threads as an integer 1..1024 into *threads (0 when absent).  Prints
 * the error and returns EXIT_BADINPUT, else 0. */
int cli_shared_threads(const char *cmd, const cli_shared_args *a, int *threads);
/* --solver exact|fast (NULL: exact) into *out.  Prints the error, with
 * the closest name, and returns EXIT_BADINPUT, else 0. */
int cli_parse_solver(const char *cmd, const char *text, rotor_solver *out);

/* The operator of --expr bound to --dims into e, errors prefixed with the
 * option they come from; check_eval also checks that a non-contraction can
 * be evaluated (rotor verify).  Prints the error and returns its exit
 * status, else 0. */
int cli_expr(const char *cmd, const char *expr, const char *dims, bool check_eval, rotor_expr *e);

/* A subcommand's own options, as a table (the shared ones are in
 * cli_shared_args): each names its slot in the subcommand's args struct by
 * offset.  A VALUE is a string given at most once, a FLAG a bool given at
 * most once, MANY a repeatable string into an array of `max` with its count
 * (an int) at count_off.  name is the long name ("expr" for --expr); short_ch
 * a short option character, or 0. */
typedef enum cli_opt_kind { CLI_VALUE, CLI_FLAG, CLI_MANY } cli_opt_kind;
typedef struct cli_opt {
    const char *name;
    char short_ch;
    cli_opt_kind kind;
    size_t off, count_off;
    int max;
} cli_opt;

/* The groups of shared options a subcommand takes: SHAPE is --batch, --seq,
 * --layers, --dim, --input, --value and --simplify; DIM --dim alone (plan, verify);
 * PHASE --decode and --prefill.  Every subcommand takes --help and --quiet
 * (-q), and --list when it is given a list function. */
enum {
    CLI_TAKES_CHIP = 1,
    CLI_TAKES_SHAPE = 2,
    CLI_TAKES_THREADS = 4,
    CLI_TAKES_PHASE = 8,
    CLI_TAKES_DIM = 16,
    CLI_TAKES_CACHE = 32, /* --cache, --no-cache, --cache-size: the subcommands that compile */
    CLI_TAKES_ALL = 15
};

/* --list of every subcommand that takes a model: the zoo's models, one a
 * line (name, "llm" for the LLMs, description).  Returns 0. */
int cli_list_zoo(void);

/* The deprecation note of an old spelling, "rotor CMD: OLD is deprecated,
 * write NEW (OLD goes in the next release)", on stderr unless quiet. */
void cli_deprecated(const char *cmd, bool quiet, const char *old, const char *now);

/* The one option loop of every subcommand: getopt_long over --help/-h,
 * --quiet/-q (into sa->quiet), the shared groups `takes` (into *sa) and the
 * subcommand's own options (`own`, ended by a {NULL} entry, into args).
 * Then the positional arguments: exactly one when `input` is non-NULL
 * (*input receives it; `missing` says what to give when there is none),
 * none otherwise.  --help prints usage on stdout; `list` (non-NULL) is what
 * --list does.  An old spelling (--dims) works with a deprecation note.
 * Returns -1 to go on, else the exit status to return (0 after --help or
 * --list; EXIT_BADINPUT after printing the error: an unknown option, with
 * the closest known one, a missing value, an option given twice, a stray
 * argument). */
int cli_parse_options(const char *cmd, int argc, char **argv, unsigned takes, cli_shared_args *sa, const cli_opt *own,
                      void *args, void (*usage)(FILE *), int (*list)(void), const char **input, const char *missing);

/* Fills po's model, ONNX dims and inputs, zoo shape (batch unless
 * batch_list: the caller parses a list; seq; layers; the phase: --decode or
 * --prefill, else the caller's po->zoo.phase) and compile threads from a,
 * for model argument `input`.  Zoo-shaping flags are refused for ONNX
 * files, and --decode with --prefill.  Prints the error and returns
 * EXIT_BADINPUT, else 0. */
int cli_shared_model(const char *cmd, const char *input, const cli_shared_args *a, bool batch_list,
                     rotor_pipeline_options *po);

/* --pipeline and --objective O, which rotor compile, simulate and run take:
 * as given (NULL, false: absent), and O parsed (latency unless given).
 * CLI_PIPELINE_OPTS are their entries in a cli_opt table, for an args
 * struct of type T holding a cli_pipeline_args M. */
typedef struct cli_pipeline_args {
    const char *objective_name;
    bool pipeline;
    rotor_pipeline_objective objective;
} cli_pipeline_args;
#define CLI_PIPELINE_OPTS(T, M)                                                                \
    {"pipeline", 0, CLI_FLAG, offsetof(T, M.pipeline), 0, 0},                                  \
        {"objective", 0, CLI_VALUE, offsetof(T, M.objective_name), 0, 0}

/* Checks --objective into a->objective: a known objective, given with
 * --pipeline.  Prints the error and returns EXIT_BADINPUT, else 0. */
int cli_parse_objective(const char *cmd, cli_pipeline_args *a);

/* The options `rotor schedule` and `rotor explore` add: HBM bandwidth, the
 * designs and the schedule's settings, as given (NULL: absent). */
typedef struct cli_hbm_args {
    cli_shared_args m;
    const char *hbm, *design, *tp, *orders;
    bool nonblocking, json;
} cli_hbm_args;

/* Their entries in a subcommand's cli_opt table, for an args struct of type
 * T holding a cli_hbm_args named M. */
#define CLI_HBM_OPTS(T, M)                                                                     \
    {"hbm-bw", 0, CLI_VALUE, offsetof(T, M.hbm), 0, 0},                                        \
        {"design", 0, CLI_VALUE, offsetof(T, M.design), 0, 0},                                 \
        {"tp", 0, CLI_VALUE, offsetof(T, M.tp), 0, 0},                                         \
        {"max-orders", 0, CLI_VALUE, offsetof(T, M.orders), 0, 0},                             \
        {"sram-nonblocking", 0, CLI_FLAG, offsetof(T, M.nonblocking), 0, 0},                   \
        {"json", 0, CLI_FLAG, offsetof(T, M.json), 0, 0}

/* Checks a for model argument `input` and fills po (a zoo LLM runs its
 * decode step unless --prefill; batch 1 by default) and so
 * (tensor_parallel, max_orders, sram_nonblocking, threads: 0 when absent).
 * Prints the error and returns EXIT_BADINPUT, else 0. */
int cli_hbm_workload(const char *cmd, const char *input, const cli_hbm_args *a, rotor_pipeline_options *po,
                     rotor_schedule_options *so);

/* Whether a --set assignment ("key=value") sets key. */
bool cli_set_key_is(const char *set, const char *key);

/* --group graphturbo on a chip with a GB: a --set of a field the DSA timing
 * does not read (rotor_dsa_tells_apart) is refused, naming it.  Prints the
 * error and returns EXIT_BADINPUT, else 0. */
int cli_graphturbo_sets(const char *cmd, const char *spec, char *const *sets, int nsets, const rotor_chip *chip);

/* --hbm-bw BW: the total of all chips, spread evenly over chip's chips.
 * Prints the error and returns EXIT_BADINPUT, else 0; NULL changes nothing. */
int cli_apply_hbm_bw(const char *cmd, const char *hbm, char *const *sets, int nsets, rotor_chip *chip);
/* --design: a comma list of names or "all" (NULL: all) into out, room for
 * ROTOR_PRELOAD_NDESIGNS; 0, or the exit status after printing the error. */
int cli_parse_designs(const char *cmd, const char *list, rotor_preload_design *out, int *n);

/* An output file (src/cli/output.c; README, "Output files"): opened before
 * the work.  path "-" is standard output; a directory is written into under
 * default_name; a symbolic link is followed (the link stays); a device,
 * FIFO or socket is written in place; a regular file or a new name is
 * written under a temporary name beside it (TARGET.tmp.PID), under a lock
 * file (TARGET.rotor-lock) that refuses a second run, and renamed over it
 * by cli_output_commit once complete.  cli_output_abort closes it and
 * removes the temporary; a signal that ends the run removes it too
 * (cli_signals_install).  Errors print "rotor CMD: OPT: PATH: cannot write
 * (reason)" or "... another rotor run (PID N) is writing it" and return
 * EXIT_BADINPUT; else 0.  A zeroed cli_output may be aborted. */
typedef struct cli_output {
    char path[4096];   /* the name as given (messages), or "-" */
    char target[4096]; /* what it names, symbolic links followed */
    char tmp[4128];    /* the temporary beside target; "" when none */
    char lock[4128];   /* the lock file held (lock_fd); "" when none */
    int lock_fd;
    FILE *f;           /* where to write; NULL once committed or aborted */
    bool is_stdout;
    bool in_place;     /* a device, FIFO or socket, written where it is */
} cli_output;

/* A subcommand's --json result: root printed on standard output (as
 * cJSON_Print, then a newline) and deleted.  0, or after "rotor CMD: out of
 * memory" EXIT_NOMEM when there is no memory for the text. */
struct cJSON;
int cli_print_json(const char *cmd, struct cJSON *root);
/* puts(text) on standard output, the reason of a failure kept for
 * cli_finish's message (a stream keeps only that a write failed). */
void cli_puts(const char *text);

int cli_output_open(const char *cmd, const char *opt, const char *path, const char *default_name, cli_output *o);
/* ... where `over` (a command-line word, or NULL) names an input this output
 * is meant to replace, read whole before the commit (explore --resume FILE
 * into FILE): not refused as the run's input. */
int cli_output_open_over(const char *cmd, const char *opt, const char *path, const char *default_name,
                         const char *over, cli_output *o);
/* The checks cli_output_open makes of a path before it opens it (not a
 * directory, not a file the command line reads), for outputs whose names
 * are known before the work but opened after it (rotor run -o DIR's
 * tensors): 0, or the line said and its exit code. */
int cli_output_check(const char *cmd, const char *opt, const char *path);
int cli_output_commit(const char *cmd, const char *opt, cli_output *o);
void cli_output_abort(cli_output *o);
/* A file beside an output this run holds (explore's checkpoint of its CSV,
 * the .run record): the same rules under PATH.part.PID, without a lock of
 * its own (the output's covers it) and without a message.  0 or errno;
 * cli_side_commit flushes, syncs and renames (0 or errno, the temporary
 * removed on failure); cli_output_abort drops it. */
int cli_side_open(const char *path, cli_output *o);
int cli_side_commit(cli_output *o);
/* rotor run -o: tensor t written as a TensorProto file at path, an output
 * as above.  0, or the exit status after the message. */
struct rotor_onnx_tensor;
int cli_output_tensor(const char *cmd, const char *opt, const char *path, const struct rotor_onnx_tensor *t);
/* Installs the handler that removes the live temporaries and lock files on
 * SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,
 * SIGUSR1, SIGUSR2 and ends the process of the same signal (not those
 * ignored at start).  main calls it first. */
void cli_signals_install(void);
/* The command line (main): an output naming a file it names is refused
 * (output.c, "the command line's files"). */
void cli_args_note(int argc, char *const *argv);
/* The end of every run (main): standard output flushed and closed, a
 * failure said in one line "rotor CMD: standard output: cannot write
 * (reason)" (cmd NULL: "rotor: ...") unless an output "-" said it already;
 * returns rc, or EXIT_BADINPUT for such a failure of a run that had
 * succeeded. */
int cli_finish(const char *cmd, int rc);
bool cli_is_dir(const char *path);
/* A model argument's name for default file names: a zoo name, or an ONNX
 * file's base name without ".onnx". */
void cli_model_base(const char *input, char *buf, size_t size);
/* cli_output_open with the default name of model argument `input`: its
 * cli_model_base followed by suffix ("-report.html"); path NULL: that
 * name itself. */
int cli_output_open_model(const char *cmd, const char *opt, const char *path, const char *input, const char *suffix,
                          cli_output *o);

/* SVG line plots (src/cli/svgplot.c): series of points on linear or log
 * axes, a legend, a tooltip per point.  Points with a non-finite y (or not
 * positive on a log axis) are left out. */
typedef struct cli_series {
    const char *name;
    int n;
    const double *x, *y;
    bool dashed;
} cli_series;
typedef struct cli_plot {
    const char *title, *xlabel, *ylabel;
    bool logx, logy;
} cli_plot;
void cli_svg_lines(FILE *f, const cli_plot *p, const cli_series *s, int ns);
/* The same inside an HTML page: no XML prolog, class "lines". */
void cli_svg_lines_inline(FILE *f, const cli_plot *p, const cli_series *s, int ns);
/* s with <, >, & and " escaped for XML. */
void cli_xml_text(FILE *f, const char *s);

/* The charts of the HTML report (src/cli/svgchart.c, docs/report.md):
 * inline SVG with width, height, viewBox, axes with units and a legend. */

/* One operator shape's Pareto frontier of (memory per core, time), T10
 * Figure 16: the plans as points on their staircase, each plan some
 * operator of the shape chose ringed (class "chosen"): chosen[i] operators
 * chose plan i (NULL: none). */
typedef struct cli_frontier_chart {
    const char *title;
    int n;
    const double *mem_kib, *time_us; /* by time ascending */
    const int *chosen;
    bool truncated;
} cli_frontier_chart;
void cli_svg_frontier(FILE *f, const cli_frontier_chart *c);

/* Stacked horizontal bars: nrows rows of ncats values (row-major), each row
 * a bar of its categories' segments; group (NULL: none) puts a gap between
 * rows of different groups (ngroups of them). */
typedef struct cli_bar_cat {
    const char *name, *colour;
} cli_bar_cat;
typedef struct cli_bars {
    const char *title, *unit; /* unit: the x axis label, "time (us)" */
    int ncats;
    const cli_bar_cat *cats;
    int nrows, ngroups;
    const char *const *labels;
    const int *group;
    const double *values;
} cli_bars;
void cli_svg_bars(FILE *f, const cli_bars *b);

/* The buffers a chart's rows fill: nrows x ncats values, each row's label
 * (pointing into names, or elsewhere) and group, zeroed.  false: no memory
 * (the chart is left out); free with cli_bar_rows_free either way. */
typedef struct cli_bar_rows {
    double *values;
    const char **labels;
    int *group;
    char (*names)[64];
} cli_bar_rows;
bool cli_bar_rows_new(cli_bar_rows *r, int nrows, int ncats);
void cli_bar_rows_free(cli_bar_rows *r);

/* A heat map of the chip's cores: chips side by side, each width x height
 * cells in core order row by row (the mesh when mesh), value[core] shaded
 * from the smallest value to the largest (rotor_report_scale_fit), class
 * "core" on each cell. */
typedef struct cli_heatmap {
    const char *title, *unit;
    const double *value;
    int64_t chips, cores_per_chip, width, height;
    bool mesh;
} cli_heatmap;
void cli_svg_heatmap(FILE *f, const cli_heatmap *h);
/* The heat maps' shading: white to dark blue through the fraction u in
 * [0, 1], as "#rrggbb". */
void cli_heat_colour(double u, char *buf, size_t size);
/* Their colour scale at (x, y): ten steps of that shading, lo and hi below
 * its ends, then the start of the unit's label after it (unit escaped; the
 * caller adds the rest of the label and closes its <text>). */
void cli_svg_colour_scale(FILE *f, double x, double y, double lo, double hi, const char *unit);

/* A heat map of a value over two swept parameters (src/cli/svggrid.c,
 * rotor explore): nrows x ncols cells (row-major values, NAN: no value,
 * drawn hatched with the cell's note), rows top to bottom and columns left
 * to right in the order given, shaded from the smallest value to the
 * largest (log-scaled beyond 4x); each cell's <title> is its tip.  Standalone (an XML prolog) or
 * inline in an HTML page. */
typedef struct cli_grid_chart {
    const char *title, *xlabel, *ylabel, *unit;
    int nrows, ncols;
    const char *const *row_labels, *const *col_labels;
    const double *values;
    const char *const *tips; /* per cell, NULL: the value */
    bool inline_svg;
} cli_grid_chart;
void cli_svg_grid(FILE *f, const cli_grid_chart *c);

/* A schedule timeline (Elk Figure 10 style), in us from the start: each
 * operator's preload, its execution and the stall at the end of it, drawn
 * in its lane (lane_of[i], a layer: rotor_report_layer_rows), one lane per
 * row (class "op"). */
typedef struct cli_timeline_row {
    const char *name;
    double pre_start, pre_end, exe_start, exe_end, stall;
} cli_timeline_row;
typedef struct cli_timeline {
    const char *title;
    int n, nlanes;
    const cli_timeline_row *rows;
    const int *lane_of;
    const char *const *lane_labels;
} cli_timeline;
void cli_svg_timeline(FILE *f, const cli_timeline *t);

/* The HTML page around them (src/cli/htmlreport.c): self-contained, inline
 * CSS and SVG, a Content-Security-Policy that forbids every fetch. */
void cli_html_begin(FILE *f, const char *title, const char *subtitle);
void cli_html_end(FILE *f);
/* <section id="ID"> with its heading; cli_html_section_end closes it. */
void cli_html_section(FILE *f, const char *id, const char *heading);
void cli_html_section_end(FILE *f);
/* A paragraph of escaped text; cli_html_na: the one saying why a section
 * does not apply (class "na"). */
void cli_html_p(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_html_na(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cli_html_na, then the section's end: a section that does not apply. */
void cli_html_section_na(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* <figure class="chart" data-kind="KIND"> around one chart; the caption
 * (escaped) after it. */
void cli_html_figure_begin(FILE *f, const char *kind);
void cli_html_figure_end(FILE *f, const char *caption);

/* A progress bar on stderr for long work: drawn only when stderr is a
 * terminal and the work has run for over a second; cli_progress_end clears
 * it.  cli_progress_step has the signature of rotor_compile_options.progress. */
typedef struct cli_progress {
    const char *cmd, *what;
    double start;
    bool tty, drawn;
    bool log;      /* --progress=always off a terminal: whole lines, every CLI_PROGRESS_LOG_S */
    double logged; /* seconds after start of the last such line, -1 before the first */
} cli_progress;

/* --progress (every subcommand): auto draws the bar on a terminal only,
 * always also writes whole lines off a terminal (a log): one at a phase's
 * first step, then one every CLI_PROGRESS_LOG_S seconds, and one when it
 * ends; never draws nothing.  --quiet turns it off. */
typedef enum { CLI_PROGRESS_AUTO, CLI_PROGRESS_ALWAYS, CLI_PROGRESS_NEVER } cli_progress_mode;
#define CLI_PROGRESS_LOG_S 5.0
/* The mode of this process, set once by cli_parse_options before any work. */
void cli_progress_set_mode(cli_progress_mode mode);

/* quiet (--quiet): never drawn. */
void cli_progress_begin(cli_progress *p, const char *cmd, const char *what, bool quiet);
void cli_progress_step(void *p, int done, int total);
void cli_progress_end(cli_progress *p);
/* Before compiling with the exact solver on a chip of more than
 * CLI_SOLVER_HINT_CORES cores, one line on stderr (unless quiet) that the
 * search can take very long there and --solver fast exists. */
#define CLI_SOLVER_HINT_CORES 65536
void cli_solver_hint(const char *cmd, const rotor_chip *chip, rotor_solver solver, bool quiet);

/* The batch a first line names, into buf: "batch N", or for an ONNX file
 * "the file's batch": --batch sizes the zoo's models only, a file's batch
 * is its own (GraphTurbo's throughput then counts runs of the file). */
const char *cli_batch_words(const char *model, int64_t batch, char *buf, size_t size);

/* The line a schedule's text prints when n of the model's operators are
 * over quantized integers costed apart (rotor_graph_priced_apart): the
 * HBM schedule prices them at the chip's element size and matrix rate,
 * not theirs (rotor schedule, rotor explore). */
void cli_quantized_note(int n, const rotor_chip *chip);

/* rotor compile --group graphturbo's table or JSON (compilegt.c). */
struct rotor_pipeline;
int cli_compile_graphturbo(const char *model, const rotor_chip *chip, int64_t batch, const struct rotor_pipeline *p,
                           bool json);
/* The same on an ICCA chip (no GB): the sub-graphs run as instances on core
 * groups and the total against T10 alone (compile/gticca.h). */
int cli_compile_gticca(const char *model, const rotor_chip *chip, int64_t batch, const struct rotor_pipeline *p,
                       bool json);
/* Before compiling on a chip whose GB serves less than its cluster's cores'
 * links together (gb_gbps < cores_per_cluster * link_gbps), one line on
 * stderr (unless quiet): the compiler's cost model does not price the GB's
 * contention, the simulator does.  cli_solver_hint calls it. */
void cli_gb_hint(const char *cmd, const rotor_chip *chip, bool quiet);
/* The same for a replay (rotor_replay_progress.fn): "WHAT operator 57/220,
 * 1234.5 us simulated, 8.1 M events/s, 3.2 s". */
void cli_progress_sim(void *p, int done, int total, int64_t now_ps, int64_t events);

/* Energy (src/cli/energy.c, docs/energy.md): the table's line, "energy X J
 * <what> (...); EDP Y J s".  The "energy" object of --json is the library's
 * (rotor_doc_energy_json, pipeline/docint.h). */
typedef struct cJSON cJSON;
void cli_energy_print(const char *what, const rotor_energy *e);

int cmd_plan(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_reproduce(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_chip(int argc, char **argv);
/* One figure file of `rotor reproduce`: dir/name written by fn(f, data, n)
 * (src/cli/reproduce.c); the exit status. */
typedef void (*cli_figure_fn)(FILE *f, const void *data, int n);
int cli_reproduce_file(const char *dir, const char *name, cli_figure_fn fn, const void *data, int n);
/* A reproduction's files as a table, written in order until one fails. */
typedef struct cli_figure_file {
    const char *name;
    cli_figure_fn fn;
} cli_figure_file;
int cli_reproduce_files(const char *dir, const cli_figure_file *files, size_t nfiles, const void *data, int n);
/* `rotor reproduce elk` (src/cli/reproduceelk.c): the grid, files in dir,
 * tables or JSON on stdout; the exit status.  full_grid: Figures 23 and
 * 24's finer grids (src/cli/reproduceelkfigs.c). */
int cli_reproduce_elk(const char *const *models, int nm, int64_t max_batch, const char *dir, bool json,
                      const rotor_chip *chip, int threads, bool quiet, bool full_grid);
/* `rotor reproduce graphturbo` (src/cli/reproducegt.c): models is --models
 * (NULL: Table 2's every row); files in dir; the exit status. */
int cli_reproduce_gt(const char *models, const char *dir, bool json, const rotor_chip *chip, bool quiet);
/* `rotor reproduce kapla` (src/cli/reproducekapla.c): models is --models
 * (NULL: KAPLA's seven networks), max_layers the distinct layers per network
 * (0: the library's default); files in dir; the exit status. */
int cli_reproduce_kapla(const char *models, int max_layers, const char *dir, bool json, const rotor_chip *chip,
                        const rotor_chip *edge, int threads, bool quiet);
/* `--profile` (src/cli/profile.c): the phases' wall seconds on stderr, from
 * the pipeline run p, what the command timed itself (NULL: nothing), and
 * the command's whole wall time. */
typedef struct cli_profile_extra {
    double designs_s;  /* schedule: its designs' ordering and allocation */
    double replay_s;   /* the event-driven replay */
} cli_profile_extra;
void cli_profile_print(const char *cmd, const rotor_pipeline *p, const cli_profile_extra *x, double total_s);

/* dir, made if missing (src/cli/reproduce.c); EXIT_BADINPUT naming it when it cannot be. */
int cli_reproduce_dir(const char *dir);
/* T10 Figure 22 (src/cli/reproducegpu.c), in two halves so that
 * reproduce.c runs the LLMs beside its grid: cli_fig22_llm, one LLM's
 * layers on chip against gpu (any thread); cli_reproduce_fig22, the first
 * failure of st[] / errs[] in the list's order, or files t10-fig22.csv and
 * .svg in dir and the table on stdout, or (json) the figure's array into
 * *fig22.  The exit status. */
struct rotor_t10gpu_llm;
rotor_status cli_fig22_llm(const char *llm, const rotor_chip *chip, const rotor_gpu *gpu,
                           const rotor_compile_options *co, struct rotor_t10gpu_llm *out, rotor_error *err);
int cli_reproduce_fig22(const char *const *llms, int nl, const struct rotor_t10gpu_llm *rs, const rotor_status *st,
                        const rotor_error *errs, const rotor_chip *chip, const rotor_gpu *gpu, const char *dir,
                        bool json, struct cJSON **fig22);
int cmd_run(int argc, char **argv);

/* The simulator trace's filter (src/cli/trace.c): --trace-ops NAME,...
 * ("l0.*" a prefix), --trace-window START:END (microseconds), --trace-cores
 * LIST (0-63,100) or all.  Parsed strings live in ops_text. */
typedef struct cli_trace_filter {
    rotor_sim_trace_filter f;
    char *ops_text;
    char **ops;
    int64_t *cores;
    bool given;     /* a filter was asked for */
    bool all_cores; /* --trace-cores all: not even the default filter */
    bool by_default;/* cli_trace_prepare chose the default filter */
    int64_t first[64];
} cli_trace_filter;

/* --trace FILE and its filter, as given (NULL: absent), in the args of
 * rotor simulate and rotor schedule; CLI_TRACE_OPTS are their entries in a
 * cli_opt table, for an args struct of type T holding a cli_trace_args M. */
typedef struct cli_trace_args {
    const char *file, *ops, *window, *cores;
} cli_trace_args;
#define CLI_TRACE_OPTS(T, M)                                                                   \
    {"trace", 0, CLI_VALUE, offsetof(T, M.file), 0, 0},                                        \
        {"trace-ops", 0, CLI_VALUE, offsetof(T, M.ops), 0, 0},                                 \
        {"trace-window", 0, CLI_VALUE, offsetof(T, M.window), 0, 0},                           \
        {"trace-cores", 0, CLI_VALUE, offsetof(T, M.cores), 0, 0}

/* Parses the filter's three options of a; prints the error and returns
 * EXIT_BADINPUT, else 0. */
int cli_trace_filter_parse(const char *cmd, const cli_trace_args *a, cli_trace_filter *t);
void cli_trace_filter_free(cli_trace_filter *t);
/* Before the replay: with no filter and more than 400,000 tasks expected on
 * a chip of more than 64 cores, t->f keeps the first cores (the default):
 * as many as keep about 400,000 tasks, 1 to 64. */
void cli_trace_prepare(cli_trace_filter *t, int64_t estimated_tasks, int64_t cores);
/* After it: says on stderr what a filtered trace kept (unless quiet), and
 * commits out. */
int cli_trace_done(const char *cmd, cli_output *out, const cli_trace_filter *t, const rotor_sim_trace_summary *sum,
                   bool quiet);
/* A replay that failed (st, err): when it was the streamed trace that could
 * not be written (out's stream has its error set), out's commit says so,
 * naming the path and the system's reason; else cli_fail.  out may be NULL. */
int cli_trace_fail(const char *cmd, cli_output *out, rotor_status st, const rotor_error *err);

/* --train (src/cli/train.c, docs/training.md): the training step's line
 * (forward, loss, backward and update operators, parameters, optimizer
 * state, kept activations), and rotor run --train's gradient check of
 * model (PASS: exit 0; FAIL: 1). */
void cli_print_train(const rotor_pipeline *p);
int cli_run_train(const char *cmd, const cli_shared_args *sa, const char *model);

#endif
