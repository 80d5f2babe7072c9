/* rotor CLI — shared pieces of the subcommands.  Only src/cli/ prints and
 * chooses exit statuses: 0 success, 1 no plan fits or verification failed,
 * 2 bad input (house style), 3 out of memory (README, "Exit statuses"). */
#ifndef ROTOR_CLI_H
#define ROTOR_CLI_H

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/model/onnx.h"
#include "rotor/hbm/schedule.h"
#include "rotor/model/zoo.h"

#define EXIT_NOFIT 1
#define EXIT_BADINPUT 2
#define EXIT_NOMEM 3

/* Prints "rotor CMD: message" on stderr and returns the exit status for st. */
int cli_fail(const char *cmd, rotor_status st, const rotor_error *err);

/* Prints "rotor CMD: out of memory" on stderr and returns EXIT_NOMEM. */
int cli_nomem(const char *cmd);

/* Prints "rotor CMD: <formatted>" on stderr and returns EXIT_BADINPUT. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The shared ends of every subcommand's getopt_long loop (opterr = 0, ":"
 * leading the short options), each printing its usage error and returning
 * EXIT_BADINPUT, or 0 when all is well:
 *  - cli_bad_option: getopt's ':' (a value is missing) or '?' (an unknown
 *    option), naming the option and 'rotor CMD --help';
 *  - cli_set_once: an option that takes one value, stored in *slot; a
 *    second one is an error naming both;
 *  - cli_one_input: exactly one argument after the options ('missing' says
 *    what to give when there is none). */
int cli_bad_option(const char *cmd, int ch, char **argv);
int cli_set_once(const char *cmd, const char *name, const char **slot, const char *value);
int cli_one_input(const char *cmd, int argc, char **argv, const char *missing);

/* Parses option opt's integer value s in [lo, hi] into *out; on error prints
 * "rotor CMD: OPT: expected an integer from LO to HI, got 'S'" and returns
 * EXIT_BADINPUT, else 0. */
int cli_parse_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);

/* A bandwidth in TB/s, or with a unit: "16", "16TB/s", "16tb", "8000GB/s";
 * *gbps gets GB/s.  False for anything else, zero, negative or above 1e6. */
bool cli_parse_bandwidth(const char *s, double *gbps);

/* --topology T (all-to-all or mesh:WxH) applied to chip and validated;
 * errors name --topology.  cli_topology_text: "all-to-all" or "mesh WxH". */
rotor_status cli_apply_topology(rotor_chip *chip, const char *topo, rotor_error *err);
const char *cli_topology_text(const rotor_chip *chip, char *buf, size_t size);

/* Resolves --chip (default ipu-mk2), applies every --set, validates. */
rotor_status cli_chip(const char *spec, char **sets, int nsets, rotor_chip *out, rotor_error *err);

#define CLI_MAX_SETS 32

/* The options `rotor schedule` and `rotor explore` share: the chip, the
 * workload (zoo shape or ONNX dimensions), the designs and the schedule's
 * settings, as given (NULL: absent). */
typedef struct cli_hbm_args {
    const char *chip, *hbm, *design, *batch, *seq, *layers, *dims, *inputs, *tp, *orders, *threads;
    char *sets[CLI_MAX_SETS];
    int nsets;
    bool prefill, nonblocking, json;
} cli_hbm_args;

/* Their getopt_long entries, short codes c s H g b q l p D I P N m j t (a
 * subcommand's own options take other codes). */
#define CLI_HBM_OPTIONS                                                                               \
    {"chip", required_argument, 0, 'c'}, {"set", required_argument, 0, 's'},                          \
        {"hbm-bw", required_argument, 0, 'H'}, {"design", required_argument, 0, 'g'},                 \
        {"batch", required_argument, 0, 'b'}, {"seq", required_argument, 0, 'q'},                     \
        {"layers", required_argument, 0, 'l'}, {"prefill", no_argument, 0, 'p'},                      \
        {"dim", required_argument, 0, 'D'}, {"input", required_argument, 0, 'I'},                     \
        {"tp", required_argument, 0, 'P'}, {"sram-nonblocking", no_argument, 0, 'N'},                 \
        {"max-orders", required_argument, 0, 'm'}, {"json", no_argument, 0, 'j'},                     \
        {"threads", required_argument, 0, 't'}

/* Takes getopt's option ch (value arg) into a when it is one of them, and
 * says so in *taken.  Prints the error and returns EXIT_BADINPUT (an option
 * given twice, too many --set), else 0. */
int cli_hbm_option(const char *cmd, int ch, char *arg, cli_hbm_args *a, bool *taken);

/* Checks a for model argument `input` and fills zo (a zoo LLM runs its
 * decode step unless --prefill), so (tensor_parallel, max_orders,
 * sram_nonblocking, threads: 0 when absent).  Prints the error and returns
 * EXIT_BADINPUT, else 0. */
int cli_hbm_workload(const char *cmd, const char *input, const cli_hbm_args *a, rotor_zoo_options *zo,
                     rotor_schedule_options *so);

/* --hbm-bw BW: the total of all chips, spread evenly over chip's chips.
 * Prints the error and returns EXIT_BADINPUT, else 0; NULL changes nothing. */
int cli_apply_hbm_bw(const char *cmd, const char *hbm, rotor_chip *chip);

/* A model argument names an ONNX file when it contains '/' or ends in ".onnx";
 * anything else is a zoo model. */
bool cli_is_onnx(const char *spec);

/* Builds the zoo model (zo) or imports the ONNX file (dims binds its symbolic
 * dimensions, inputs overrides input shapes; both refused for zoo models).  stats may be NULL; it stays zero for
 * zoo models.  g is initialised either way: free it also after an error. */
rotor_status cli_load_model(const char *spec, const rotor_zoo_options *zo, const char *dims, const char *inputs,
                            rotor_graph *g, rotor_onnx_stats *stats, rotor_error *err);

/* A progress bar on stderr for long work: drawn only when stderr is a
 * terminal and the work has run for over a second; cli_progress_end clears
 * it.  cli_progress_step has the signature of rotor_compile_options.progress. */
typedef struct cli_progress {
    const char *cmd, *what;
    double start;
    bool tty, drawn;
} cli_progress;

void cli_progress_begin(cli_progress *p, const char *cmd, const char *what);
void cli_progress_step(void *p, int done, int total);
void cli_progress_end(cli_progress *p);

int cmd_plan(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_explore(int argc, char **argv);

#endif
