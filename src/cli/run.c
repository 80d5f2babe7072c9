/* rotor run — execute a whole compiled model on the emulated cores with its
 * real weights, and prove it: against a direct execution of the same graph
 * in double precision, and with --check against a test data set's
 * reference outputs (docs/run.md). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/jsontext.h"
#include "cli.h"
#include "op/planjson.h"
#include "pipeline/docint.h"
#include "rotor/compile/dsa.h"
#include "rotor/compile/program.h"
#include "rotor/model/onnx.h"
#include "rotor/pipeline/doc.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/run/gtrun.h"
#include "rotor/run/run.h"
#include "rotor/sim/gticcareplay.h"
#include "rotor/sim/replay.h"

#define RUN_MAX_DATA 64
#define RUN_MAX_SETS 256 /* test_data_set_* directories one --check runs at most */

static void run_usage(FILE *f) {
    fprintf(f,
            "usage: rotor run MODEL.onnx [options]\n"
            "       rotor run --check DIR [options]\n"
            "\n"
            "Executes a whole model on the emulated chip with the weights its file defines: compiles it\n"
            "(active plans, idle layouts, hand-offs), runs every operator's plan on virtual cores with\n"
            "real data in the SRAM the compiler left it, runs vendor ops by reference kernels, and\n"
            "compares every output with a direct execution of the same graph in double precision.\n"
            "The graph is run as imported (not grouped): fused epilogues are a cost, not a value.\n"
            "\n"
            "  --check DIR         DIR holds model.onnx and test_data_set_*/{input,output}_<i>.pb\n"
            "                      (libonnx-testdata's layout): run each set, compare with its outputs\n"
            "  --data NAME=FILE.pb the elements of graph input NAME (repeatable); inputs not given\n"
            "                      get deterministic pseudo-random values in [-1, 1) (8- and\n"
            "                      16-bit integer inputs: integers, 256 values around 0 or 128)\n"
            "  -o, --output DIR    write each graph output as DIR/<name>.pb (TensorProto); with --check\n"
            "                      and several sets, as DIR/<set>/<name>.pb\n"
            "  --program FILE      run this compiled program (rotor compile --group none -o: the graph\n"
            "                      ungrouped, as the run executes it) on the chip it carries, unless\n"
            "                      --chip, instead of compiling\n"
            "  --direct            no plans: only the direct execution in double (no --chip, --set)\n"
            "  --simplify          fold BatchNormalization and constants first (docs/simplify.md), and\n"
            "                      compare every output with the graph as imported, run directly\n"
            "  --train             check the training step's gradients against central finite\n"
            "                      differences on the file's weights (docs/training.md): PASS when\n"
            "                      the largest relative error is at most 1e-3\n"
            "  --pipeline          compile with pipelined segments (rotor compile --pipeline) and run\n"
            "                      each segment's stages micro-batch by micro-batch on their groups\n"
            "  --objective O       what --pipeline minimises: latency (default) or throughput\n"
            "  --group graphturbo  schedule the graph as GraphTurbo does on the chip (a chip with a\n"
            "                      global buffer, e.g. --chip stcp920), run every sub-graph instance by\n"
            "                      instance, each computing only its range with its halos, and compare\n"
            "                      with the direct execution (docs/run.md; no plans); on a chip\n"
            "                      without one (e.g. ipu-mk2) T10's program with sub-graphs run as\n"
            "                      instances on core groups, as rotor compile --group graphturbo plans\n"
            "                      them but on the ungrouped graph (its own choice, printed), each\n"
            "                      instance's program on its batch slice (implies --simplify)\n"
            "  --chip NAME|FILE    preset or chip file (default ipu-mk2); --set KEY=VALUE overrides\n"
            "  --dim k=v,..., --input NAME=AxB,.., --value NAME=SPEC\n"
            "                      shape the model, as in rotor compile\n"
            "  --max-model-bytes N refuse a model file over N bytes (default 2 GiB, docs/onnx.md)\n"
            "  --json              print the result as JSON (rotor-run, version 1)\n"
            "  --threads N         search threads when compiling\n"
            CLI_CACHE_USAGE
            "  -q, --quiet         no progress on stderr\n"
            "  --progress WHEN     auto (a bar on a terminal), always (also lines every 5 s in a log), never\n"
            "  -h, --help          this help\n"
            "\n"
            "tolerance: float32 outputs pass when |x - ref| <= 1e-5 + 1e-3 |ref|; integer outputs must\n"
            "be equal. NaN matches only NaN and an infinity only itself; an output that is all NaN or\n"
            "infinite fails when no reference says so.\n"
            "exit status: 0 every output passed, 1 an output failed or the model does not fit,\n"
            "2 bad input or an operator rotor cannot run (named)\n");
}

typedef struct run_args {
    cli_shared_args sa;
    const char *input, *check, *out, *program, *group;
    char *data[RUN_MAX_DATA];
    int ndata;
    bool direct, json, graphturbo;
    cli_pipeline_args pl;
} run_args;

static int parse_run(int argc, char **argv, run_args *a) {
    const char *cmd = "run";
    static const cli_opt own[] = {
        {"check", 0, CLI_VALUE, offsetof(run_args, check), 0, 0},
        {"data", 0, CLI_MANY, offsetof(run_args, data), offsetof(run_args, ndata), RUN_MAX_DATA},
        {"output", 'o', CLI_VALUE, offsetof(run_args, out), 0, 0},
        {"program", 0, CLI_VALUE, offsetof(run_args, program), 0, 0},
        {"direct", 0, CLI_FLAG, offsetof(run_args, direct), 0, 0},
        {"json", 0, CLI_FLAG, offsetof(run_args, json), 0, 0},
        {"group", 0, CLI_VALUE, offsetof(run_args, group), 0, 0},
        CLI_PIPELINE_OPTS(run_args, pl),
        {0}};
    /* with --check the directory is the input: count the positionals first */
    bool has_check = false;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--check") || !strncmp(argv[i], "--check=", 8)) has_check = true;
    int rc = cli_parse_options(cmd, argc, argv, CLI_TAKES_CHIP | CLI_TAKES_SHAPE | CLI_TAKES_THREADS | CLI_TAKES_CACHE, &a->sa, own,
                               a, run_usage, NULL, has_check ? NULL : &a->input,
                               "a model file is required (try --help)");
    if (rc >= 0) return rc;
    if (a->program && a->direct) return cli_usage_error(cmd, "--program and --direct: a direct run has no program");
    /* a direct run plans nothing on no chip: what it would ignore is
     * refused, as --train's is (found by an audit helper) */
    if (a->direct && (a->sa.chip || a->sa.nsets))
        return cli_usage_error(cmd, "--direct executes the graph with no plans, on no chip: it takes no %s",
                               a->sa.chip ? "--chip" : "--set");
    if (a->pl.pipeline && (a->direct || a->program))
        return cli_usage_error(cmd, "--pipeline and %s: --pipeline compiles the program", a->direct ? "--direct" : "--program");
    if (cli_parse_objective(cmd, &a->pl)) return EXIT_BADINPUT;
    if (a->group && strcmp(a->group, "graphturbo") != 0)
        return cli_usage_error(cmd, "--group: rotor run takes graphturbo, got '%s'", a->group);
    a->graphturbo = a->group != NULL;
    if (a->graphturbo && (a->direct || a->program || a->pl.pipeline))
        return cli_usage_error(cmd, "--group graphturbo runs GraphTurbo's instances, not a program: it conflicts with %s",
                               a->direct ? "--direct" : a->program ? "--program" : "--pipeline");
    /* --train checks the gradients in double on the graph (docs/training.md):
     * it plans nothing, reads no data set and writes nothing, so what it
     * would ignore is refused (found by an audit helper: --json, -o,
     * --pipeline and --group were ignored, exit 0) */
    const char *unused = !a->sa.train ? NULL : a->json ? "--json" : a->out ? "-o" : a->check ? "--check"
                         : a->ndata ? "--data" : a->program ? "--program" : a->direct ? "--direct"
                         : a->pl.pipeline ? "--pipeline" : a->group ? "--group" : a->sa.chip ? "--chip"
                         : a->sa.nsets ? "--set" : NULL;
    if (unused)
        return cli_usage_error(cmd, "--train checks the model's gradients in double, on no chip: it takes no %s "
                               "(docs/training.md)", unused);
    if (a->check && !cli_is_dir(a->check)) return cli_usage_error(cmd, "--check: %s: not a directory", a->check);
    if (a->out && !cli_is_dir(a->out)) return cli_usage_error(cmd, "-o: %s: not a directory", a->out);
    for (int i = 0; i < a->ndata; i++) {
        if (!strchr(a->data[i], '=') || a->data[i][0] == '=')
            return cli_usage_error(cmd, "--data: expected NAME=FILE.pb, got '%s'", a->data[i]);
        /* one file an input: the second was never opened (found by an audit helper) */
        size_t n = (size_t)(strchr(a->data[i], '=') - a->data[i]);
        for (int j = 0; j < i; j++)
            if (!strncmp(a->data[j], a->data[i], n) && a->data[j][n] == '=')
                return cli_usage_error(cmd, "--data %.*s: given twice", (int)n, a->data[i]);
    }
    return -1;
}

/* ---- one test data set ------------------------------------------------------------------ */

typedef struct tensor_list {
    int n;
    rotor_onnx_tensor t[RUN_MAX_DATA];
    char path[RUN_MAX_DATA][4096];
} tensor_list;

static void tensors_free(tensor_list *l) {
    for (int i = 0; i < l->n; i++) rotor_onnx_tensor_free(&l->t[i]);
    l->n = 0;
}

/* DIR/PREFIX_<i>.pb for i = 0, 1, ... while they exist; a file numbered
 * past a gap (output_7.pb without output_6.pb), or past RUN_MAX_DATA, is an
 * error, not a file left unread (found by an audit helper). */
static rotor_status read_numbered(const char *dir, const char *prefix, tensor_list *l, rotor_error *err) {
    l->n = 0;
    for (int i = 0; i < RUN_MAX_DATA; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, i);
        struct stat sb;
        if (stat(path, &sb)) break;
        rotor_status st = rotor_onnx_tensor_read(path, &l->t[l->n], err);
        if (st) return st;
        snprintf(l->path[l->n], sizeof l->path[0], "%s", path);
        l->n++;
    }
    DIR *d = opendir(dir);
    if (!d) return rotor_fail(err, ROTOR_ERR_IO, "%s: cannot read (%s)", dir, strerror(errno));
    size_t np = strlen(prefix);
    struct dirent *e;
    rotor_status st = ROTOR_OK;
    while (!st && (e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, prefix, np) || e->d_name[np] != '_') continue;
        long k = strtol(e->d_name + np + 1, &end, 10);
        if (end == e->d_name + np + 1 || strcmp(end, ".pb") || k < l->n) continue;
        st = l->n == RUN_MAX_DATA
                 ? rotor_fail(err, ROTOR_ERR_INPUT, "%s/%s: a set holds at most %d %s files", dir, e->d_name,
                              RUN_MAX_DATA, prefix)
                 : rotor_fail(err, ROTOR_ERR_INPUT, "%s/%s: %s_%d.pb is missing (a set's files are numbered from 0, "
                              "without a gap)", dir, e->d_name, prefix, l->n);
    }
    closedir(d);
    return st;
}

/* Whether a tensor file's shape is a value's (a scalar's rank 0 or 1 of
 * one element alike). */
static bool same_shape(const rotor_onnx_tensor *t, const rotor_value *x) {
    if (t->elements != x->elements) return false;
    if (t->rank != x->rank) return x->elements == 1;
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] != x->shape[d]) return false;
    return true;
}

static bool is_float(rotor_dtype t) {
    return t == ROTOR_DTYPE_F32 || t == ROTOR_DTYPE_F64 || t == ROTOR_DTYPE_F16 || t == ROTOR_DTYPE_BF16;
}

/* ---- the run ---------------------------------------------------------------------------- */

typedef struct run_state {
    const run_args *a;
    rotor_chip chip;
    rotor_pipeline p;
    rotor_program file_program;
    const rotor_program *prog;
    double **inputs;           /* per graph value */
    rotor_run_result planned, direct;
    bool randomised;
    /* --simplify: the graph as imported, run directly: the simplified
     * graph's outputs are checked against it (docs/simplify.md) */
    rotor_graph unsimplified;
    rotor_run_result reference;
    /* --group graphturbo on a chip without a GB: T10's program with the
     * sub-graphs gticca chose run as instances on core groups (run.h) */
    bool icca;
    rotor_compile_options copt; /* the compile's options (no progress): the instances' and the replay's */
    /* --group graphturbo: the schedule and its instances' run */
    bool gt;
    rotor_gt_schedule gts;
    rotor_gtrun_result gtres;
    /* -o: the folder this run writes (a->out, or with --check and several
     * sets a->out/<set>); with --check, the files the check reads (model,
     * every set's input_<i>.pb and output_<i>.pb), which no output replaces */
    const char *out_dir;
    const char *check_model;
    char (*check_sets)[4096];
    int nsets;
} run_state;

/* A data file for input x, in words for errors: its shape must be x's and
 * its numbers of x's kind (floating point or integer).  Only the count was
 * checked until 2026-12-04: a [32768] file, or an int64 one, ran as a float
 * [512, 64] input (found by an audit helper). */
static rotor_status check_data(const rotor_onnx_tensor *t, const rotor_value *x, const char *what, rotor_error *err) {
    char got[160], want[160];
    if (!same_shape(t, x)) {
        rotor_shape_string(t->rank, t->shape, got, sizeof got);
        rotor_shape_string(x->rank, x->shape, want, sizeof want);
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: shape %s; input '%s' is %s", what, got, x->name, want);
    }
    if (is_float(t->dtype) != is_float(x->dtype))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s numbers; input '%s' takes %s", what,
                          is_float(t->dtype) ? "floating-point" : "integer", x->name,
                          is_float(x->dtype) ? "floating-point ones" : "integers");
    return ROTOR_OK;
}

/* Fills st->inputs for every graph input: from the test set (by name, else
 * by position among its unnamed files) or --data, else pseudo-random.
 * With a set (--check) each of its files feeds an input and --data does
 * not replace one of its files; an input it has no file for gets the
 * pseudo-random values, which the run then says (cmd_run). */
static rotor_status bind_inputs(run_state *s, const tensor_list *set, rotor_error *err) {
    const rotor_graph *g = &s->p.graph;
    s->inputs = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *s->inputs);
    if (!s->inputs) return rotor_nomem(err);
    /* a named file the graph has no value of (the import bound it as a
     * value, run_model, or dropped an input only its shape or type is read
     * of: Shape's, CastLike's 'like'), or of an input no operator reads,
     * feeds the model all the same (decision: the graph does not keep the
     * file's inputs, so a named file is taken as one of them) */
    bool used[RUN_MAX_DATA] = {false};
    /* positions among the graph's inputs, those not read by position
     * included (bound as data, read by no operator): an unnamed file at one
     * of them feeds an input all the same (decision: positions the import
     * dropped are not known; a named file covers those) */
    int ninputs = 0;
    for (int v = 0; v < g->nvalues; v++)
        ninputs += g->values[v].producer < 0 && g->values[v].role != ROTOR_ROLE_WEIGHT;
    for (int i = 0; set && i < set->n; i++) {
        if (!set->t[i].name[0] && i < ninputs) used[i] = true;
        int v = set->t[i].name[0] ? rotor_graph_find_value(g, set->t[i].name) : -1;
        used[i] = (set->t[i].name[0] && v < 0) ||
                  (v >= 0 && g->values[v].producer < 0 &&
                   (g->values[v].data || (g->values[v].consumers == 0 && !g->values[v].is_output)));
    }
    int pos = 0;
    for (int v = 0; v < g->nvalues; v++) {
        const rotor_value *x = &g->values[v];
        if (x->producer >= 0 || x->data || x->role == ROTOR_ROLE_WEIGHT || (x->consumers == 0 && !x->is_output))
            continue;
        const double *src = NULL;
        int from = -1; /* the set's file */
        for (int i = 0; set && i < set->n && from < 0; i++)
            if (!strcmp(set->t[i].name, x->name)) from = i;
        if (from < 0 && set && pos < set->n && set->t[pos].name[0] == '\0' && !used[pos]) from = pos;
        pos++;
        rotor_status st;
        if (from >= 0) {
            if ((st = check_data(&set->t[from], x, set->path[from], err))) return st;
            used[from] = true;
            src = set->t[from].data;
        }
        for (int i = 0; i < s->a->ndata; i++) {
            const char *eq = strchr(s->a->data[i], '=');
            if ((size_t)(eq - s->a->data[i]) != strlen(x->name) || strncmp(s->a->data[i], x->name, strlen(x->name)))
                continue;
            if (src)
                return rotor_fail(err, ROTOR_ERR_INPUT, "--data %s: the test set gives it (%s): give one", x->name,
                                  set->path[from]);
            rotor_onnx_tensor t;
            if ((st = rotor_onnx_tensor_read(eq + 1, &t, err))) return st;
            char what[300];
            snprintf(what, sizeof what, "--data %s", x->name);
            if ((st = check_data(&t, x, what, err))) {
                rotor_onnx_tensor_free(&t);
                return st;
            }
            s->inputs[v] = t.data;
            t.data = NULL;
            rotor_onnx_tensor_free(&t);
            src = s->inputs[v];
        }
        if (!s->inputs[v]) {
            if (!(s->inputs[v] = malloc(sizeof(double) * (size_t)x->elements))) return rotor_nomem(err);
            if (src) {
                memcpy(s->inputs[v], src, sizeof(double) * (size_t)x->elements);
            } else { /* deterministic: a fixed LCG per input, values in [-1, 1); an
                      * 8- or 16-bit integer input (quantized data) gets the integer
                      * floor(128 x), + 128 when unsigned */
                uint64_t r = 0x9E3779B97F4A7C15ull ^ (uint64_t)v;
                bool q = x->dtype >= ROTOR_DTYPE_I8 && x->dtype <= ROTOR_DTYPE_U16;
                bool u = x->dtype == ROTOR_DTYPE_U8 || x->dtype == ROTOR_DTYPE_U16;
                for (int64_t k = 0; k < x->elements; k++) {
                    r = r * 6364136223846793005ull + 1442695040888963407ull;
                    double d = (double)(r >> 11) / (double)(1ull << 52) - 1.0;
                    s->inputs[v][k] = q ? floor(128 * d) + (u ? 128 : 0) : d;
                }
                s->randomised = true;
            }
        }
    }
    for (int i = 0; set && i < set->n; i++)
        if (!used[i])
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s%s%s%s: the model has no input it feeds", set->path[i],
                              set->t[i].name[0] ? " ('" : "", set->t[i].name, set->t[i].name[0] ? "')" : "");
    for (int i = 0; i < s->a->ndata; i++) {
        const char *eq = strchr(s->a->data[i], '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - s->a->data[i]), s->a->data[i]);
        int v = rotor_graph_find_value(g, name);
        if (v < 0 || g->values[v].producer >= 0 || g->values[v].role == ROTOR_ROLE_WEIGHT)
            return rotor_fail(err, ROTOR_ERR_INPUT, "--data: '%s' is not an input of the graph", name);
    }
    return ROTOR_OK;
}

/* --simplify: the model loaded again as imported and run directly, its
 * inputs the simplified graph's of the same names. */
static rotor_status run_unsimplified(run_state *s, const rotor_pipeline_options *po, rotor_error *err) {
    rotor_status st = rotor_model_load(po->model, &po->zoo, &po->onnx, &s->unsimplified, NULL, err);
    if (st) return st;
    const rotor_graph *u = &s->unsimplified;
    double **in = calloc((size_t)(u->nvalues ? u->nvalues : 1), sizeof *in);
    if (!in) return rotor_nomem(err);
    for (int v = 0; v < u->nvalues; v++) {
        int w = rotor_graph_find_value(&s->p.graph, u->values[v].name);
        if (w >= 0 && u->values[v].producer < 0 && !u->values[v].data) in[v] = s->inputs[w];
    }
    cli_progress bar;
    cli_progress_begin(&bar, "run", "running the graph as imported: operators", s->a->sa.quiet);
    rotor_run_options ro = {.progress = cli_progress_step, .progress_ctx = &bar};
    st = rotor_run(u, (const double *const *)in, &ro, &s->reference, err);
    cli_progress_end(&bar);
    free(in);
    return st;
}

/* --group graphturbo: GraphTurbo's schedule of the graph with the limits
 * of one cluster of the chip (compile/dsa.h), and its instances run on the
 * inputs (run/gtrun.h). */
static rotor_status run_graphturbo(run_state *s, rotor_error *err) {
    rotor_dsa_cluster cl;
    rotor_gt_limits lim;
    rotor_status st = rotor_dsa_cluster_of(&s->chip, &cl, err);
    if (st) return st;
    rotor_dsa_limits(&cl, &lim);
    s->gt = true;
    if ((st = rotor_gt_schedule_build(&s->p.graph, &lim, ROTOR_GT_GROUPED, &s->gts, err))) return st;
    cli_progress bar;
    cli_progress_begin(&bar, "run", "running GraphTurbo's instances", s->a->sa.quiet);
    rotor_gtrun_options go = {.progress = cli_progress_step, .progress_ctx = &bar};
    st = rotor_gtrun(&s->p.graph, &s->gts, (const double *const *)s->inputs, &go, &s->gtres, err);
    cli_progress_end(&bar);
    return st;
}

/* The chip of --chip and --set; with --program and no --chip, the chip the
 * program carries (docs/program-format.md, "chip_file"), --set applied to
 * it, as rotor simulate takes it (found by an audit helper: the program was
 * read against ipu-mk2 and refused). */
static rotor_status run_chip(const run_args *a, rotor_chip *chip, rotor_error *err) {
    if (a->program && !a->sa.chip) {
        char *text = NULL;
        bool carried = false;
        rotor_status st = rotor_json_read_text(a->program, &text, err);
        if (!st) st = rotor_doc_program_chip(text, a->program, (const char *const *)a->sa.sets, a->sa.nsets, chip,
                                             &carried, err);
        free(text);
        if (st || carried) return st;
    }
    return cli_chip(a->sa.chip, a->sa.sets, a->sa.nsets, chip, err);
}

/* Loads and compiles the model (integer inputs of the set bound as values,
 * as shape inputs are), then runs it planned and directly. */
static int run_model(run_state *s, const char *model, const tensor_list *set, rotor_error *err) {
    const char *cmd = "run";
    const run_args *a = s->a;
    rotor_pipeline_options po = {.zoo = {.batch = 1}, .no_group = true};
    if (cli_shared_model(cmd, model, &a->sa, false, &po)) return EXIT_BADINPUT;
    if (!rotor_model_is_onnx(model)) return cli_usage_error(cmd, "%s: rotor run executes ONNX files", model);
    po.onnx.keep_data = true;
    char *vals[CLI_MAX_SETS + RUN_MAX_DATA];
    char specs[RUN_MAX_DATA][4400];
    int nv = 0;
    for (int i = 0; i < po.onnx.nvalues; i++) vals[nv++] = (char *)po.onnx.values[i];
    for (int i = 0; set && i < set->n; i++)
        if (!is_float(set->t[i].dtype) && set->t[i].name[0]) {
            snprintf(specs[i], sizeof specs[i], "%s=%s", set->t[i].name, set->path[i]);
            vals[nv++] = specs[i];
        }
    rotor_status st = run_chip(a, &s->chip, err);
    if (st) return cli_fail(cmd, st, err);
    /* the program, unless --direct or --program; a graph that folds to
     * constants compiles to an empty one, and runs all the same */
    s->icca = a->graphturbo && !rotor_chip_has_gb(&s->chip);
    po.t10 = po.program = po.allow_empty = !a->direct && !a->program && (!a->graphturbo || s->icca);
    /* on a chip without a GB, rotor compile --group graphturbo's plan:
     * the graph simplified, its sub-graphs' instances on core groups (on
     * the graph as imported: rotor run executes it ungrouped) */
    po.simplify = po.simplify || s->icca;
    po.compile.graphturbo = s->icca;
    /* on a chip with a GB, the schedule `rotor compile` times: the values at
     * the chip's element size (the pipeline's rule, rotor_pipeline_options) */
    po.dsa_sizes = a->graphturbo && !s->icca;
    po.compile.pipeline = a->pl.pipeline;
    po.compile.objective = a->pl.objective;
    cli_progress bar;
    cli_progress_begin(&bar, cmd, "compiling: operator shapes searched", a->sa.quiet);
    po.compile.progress = cli_progress_step;
    po.compile.progress_ctx = &bar;
    /* integer inputs of the set are bound as values only when the import
     * needs them for its shapes: bound, they fold, and the run would check
     * the importer's folding rather than the operators */
    st = rotor_pipeline_run(&po, &s->chip, &s->p, err);
    if (st && !s->p.loaded && nv > po.onnx.nvalues) {
        rotor_pipeline_free(&s->p);
        po.onnx.values = (const char *const *)vals;
        po.onnx.nvalues = nv;
        st = rotor_pipeline_run(&po, &s->chip, &s->p, err);
    }
    cli_progress_end(&bar);
    if (st) return cli_fail(cmd, st, err);
    cli_cache_warn(cmd, &po.compile, &s->p.t10);
    /* an empty program has nothing planned: the direct run alone */
    if (po.program && s->p.program.nops > 0) s->prog = &s->p.program;
    if (a->program) {
        if ((st = rotor_program_read(a->program, &s->chip, &s->file_program, err))) return cli_fail(cmd, st, err);
        s->prog = &s->file_program;
    }
    if ((st = bind_inputs(s, set, err))) return cli_fail(cmd, st, err);
    rotor_run_options ro = {.program = s->prog, .chip = &s->chip};
    s->copt = po.compile;
    s->copt.progress = NULL;
    if (s->icca && s->prog) {
        ro.gticca = &s->p.t10.gticca;
        ro.gticca_compile = &s->copt;
    }
    cli_progress_begin(&bar, cmd, "running: operators", a->sa.quiet);
    ro.progress = cli_progress_step;
    ro.progress_ctx = &bar;
    if (s->prog) st = rotor_run(&s->p.graph, (const double *const *)s->inputs, &ro, &s->planned, err);
    ro.program = NULL;
    ro.gticca = NULL;
    if (!st) st = rotor_run(&s->p.graph, (const double *const *)s->inputs, &ro, &s->direct, err);
    cli_progress_end(&bar);
    if (!st && po.simplify) st = run_unsimplified(s, &po, err);
    if (!st && a->graphturbo && !s->icca) st = run_graphturbo(s, err);
    if (st) return cli_fail(cmd, st, err);
    return 0;
}

static void state_free(run_state *s) {
    for (int v = 0; s->inputs && v < s->p.graph.nvalues; v++) free(s->inputs[v]);
    free(s->inputs);
    rotor_run_result_free(&s->planned);
    rotor_run_result_free(&s->direct);
    rotor_run_result_free(&s->reference);
    rotor_graph_free(&s->unsimplified);
    if (s->gt) rotor_gt_schedule_free(&s->gts);
    rotor_gtrun_result_free(&s->gtres);
    rotor_program_free(&s->file_program);
    rotor_pipeline_free(&s->p);
    memset(s, 0, sizeof *s);
}

/* ", 3 of them NaN or infinity mismatches" when NaN or an infinity made
 * elements differ (rotor_run_compare), else "". */
static const char *nonfinite_note(const rotor_run_cmp *c, char *buf, size_t cap) {
    buf[0] = '\0';
    if (c->nonfinite) snprintf(buf, cap, ", %lld of them NaN or infinity mismatches", (long long)c->nonfinite);
    return buf;
}

/* What an output holds that is not a number: "all NaN", "all infinite",
 * "all NaN or infinite", "2 NaN and 1 infinite of 12", or "" (none). */
static const char *contents_note(int64_t nan, int64_t inf, int64_t n, char *buf, size_t cap) {
    buf[0] = '\0';
    if (n > 0 && nan + inf == n) snprintf(buf, cap, "all %s", !inf ? "NaN" : !nan ? "infinite" : "NaN or infinite");
    else if (nan + inf) snprintf(buf, cap, "%lld NaN and %lld infinite of %lld", (long long)nan, (long long)inf,
                                 (long long)n);
    return buf;
}

/* Every output of g by name (rotor_graph_outputs), malloc'd, *n of them;
 * NULL when out of memory.  All of them: until 2026-12-03 a fixed list of
 * 256 left a model's later outputs unchecked and unwritten, silently. */
static rotor_named_output *named_outputs(const rotor_graph *g, int *n) {
    *n = rotor_graph_outputs(g, NULL, 0);
    rotor_named_output *outs = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *outs);
    if (outs) rotor_graph_outputs(g, outs, *n);
    return outs;
}

/* The unsimplified graph's value of output `name` (--simplify), or -1 (also
 * when out of memory: no comparison, as for an output it lacks). */
static int unsimplified_value(const run_state *s, const char *name) {
    if (!s->unsimplified.nvalues || !s->reference.values) return -1;
    int n, v = -1;
    rotor_named_output *outs = named_outputs(&s->unsimplified, &n);
    for (int o = 0; outs && o < n && v < 0; o++)
        if (!strcmp(outs[o].name, name)) v = outs[o].value;
    free(outs);
    return v;
}

/* ", worst at element 37 (0,1,2,5): 0.25 against 0.5" (the element of an
 * output farthest from the direct run). */
static void worst_element(const rotor_value *x, int64_t k, double got, double ref, char *buf, size_t cap) {
    char co[120] = "";
    int64_t c[ROTOR_GRAPH_MAX_RANK], r = k;
    for (int a = x->rank - 1; a >= 0; a--) c[a] = r % x->shape[a], r /= x->shape[a];
    for (int a = 0, n = 0; a < x->rank && n >= 0 && (size_t)n < sizeof co; a++)
        n += snprintf(co + n, sizeof co - (size_t)n, "%s%lld", a ? "," : "(", (long long)c[a]);
    snprintf(buf, cap, ", worst at element %lld %s%s: %.9g against %.9g", (long long)k, co, x->rank ? ")" : "", got, ref);
}

/* Graph value v, an output, against the direct run (with a program) and
 * reference ri of ref (-1: none); prints its line or adds its JSON.
 * Decision (docs/run.md, "Tolerance"): an output that is all NaN or
 * infinite passes only against a reference that says so; without one
 * nothing shows it right, and it is almost always a broken weight or input
 * (the direct run computes the same NaN, so the comparison with it cannot
 * tell).  Returns whether it passed. */
static bool report_output(run_state *s, const rotor_named_output *no, const tensor_list *ref, int ri,
                          const char *label, cJSON *jouts) {
    int v = no->value;
    const rotor_value *x = &s->p.graph.values[v];
    const double *got = s->gt ? s->gtres.values[v] : s->prog ? s->planned.values[v] : s->direct.values[v];
    bool vs = s->prog || s->gt; /* compared with the direct run */
    char shape[96], note[96], dnote[96], rnote[96], worst[256] = "";
    rotor_graph_shape_string(x, shape, sizeof shape);
    rotor_run_cmp vs_direct = {0}, vs_ref = {0}, vs_un = {0};
    if (vs) vs_direct = rotor_run_compare(got, s->direct.values[v], x->elements, false);
    int64_t wk = s->gt && vs_direct.bad ? rotor_gtrun_worst(got, s->direct.values[v], x->elements) : -1;
    if (wk >= 0) worst_element(x, wk, got[wk], s->direct.values[v][wk], worst, sizeof worst);
    int uv = unsimplified_value(s, no->name);
    if (uv >= 0) vs_un = rotor_run_compare(got, s->reference.values[uv], x->elements, !is_float(x->dtype));
    /* simplified, an output the unsimplified graph does not have cannot be
     * checked against it: a failure, not a comparison left out */
    bool un_missing = s->unsimplified.nvalues && s->reference.values && uv < 0;
    if (ri >= 0) vs_ref = rotor_run_compare(got, ref->t[ri].data, x->elements, !is_float(x->dtype));
    int64_t nan, inf;
    rotor_run_count_nonfinite(got, x->elements, &nan, &inf);
    bool all_nonfinite = x->elements > 0 && nan + inf == x->elements;
    bool unconfirmed = all_nonfinite && ri < 0;
    bool pass = vs_direct.bad == 0 && vs_ref.bad == 0 && vs_un.bad == 0 && (!ref || ri >= 0) && !unconfirmed &&
                !un_missing;
    contents_note(nan, inf, x->elements, note, sizeof note);
    if (jouts) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", no->name);
        cJSON_AddStringToObject(j, "shape", shape);
        if (vs) cJSON_AddNumberToObject(j, "max_abs_vs_direct", vs_direct.max_abs);
        if (wk >= 0) cJSON_AddNumberToObject(j, "worst_element_vs_direct", (double)wk);
        if (ri >= 0) cJSON_AddNumberToObject(j, "max_abs_vs_reference", vs_ref.max_abs);
        if (uv >= 0) cJSON_AddNumberToObject(j, "max_abs_vs_unsimplified", vs_un.max_abs);
        if (un_missing) cJSON_AddBoolToObject(j, "unsimplified_missing", true);
        if (vs_direct.nonfinite) cJSON_AddNumberToObject(j, "nonfinite_mismatches_vs_direct", (double)vs_direct.nonfinite);
        if (vs_ref.nonfinite) cJSON_AddNumberToObject(j, "nonfinite_mismatches_vs_reference", (double)vs_ref.nonfinite);
        if (nan + inf) {
            cJSON_AddNumberToObject(j, "nan", (double)nan);
            cJSON_AddNumberToObject(j, "inf", (double)inf);
            cJSON_AddStringToObject(j, "nonfinite", note);
        }
        cJSON_AddBoolToObject(j, "pass", pass);
        cJSON_AddItemToArray(jouts, j);
        return pass;
    }
    printf("%s  %-32s %-16s", pass ? "PASS" : "FAIL", no->name, shape);
    if (vs) printf("  vs direct: max |err| %.3g (%lld beyond tolerance%s)%s", vs_direct.max_abs,
                   (long long)vs_direct.bad, nonfinite_note(&vs_direct, dnote, sizeof dnote), worst);
    if (uv >= 0) printf("  vs unsimplified: max |err| %.3g (%lld beyond)", vs_un.max_abs, (long long)vs_un.bad);
    if (un_missing) printf("  vs unsimplified: no output of its name");
    if (ri >= 0) printf("  vs %s '%s': max |err| %.3g (%lld beyond%s)", label, ref->t[ri].name, vs_ref.max_abs,
                        (long long)vs_ref.bad, nonfinite_note(&vs_ref, rnote, sizeof rnote));
    else if (ref) printf("  no reference of its name or shape");
    if (note[0]) printf("  %s%s", note, unconfirmed ? ", which no reference confirms" : "");
    printf("\n");
    return pass;
}

/* Compares every graph output; prints a line each (or adds JSON); returns
 * the outputs that failed. */
static int report(run_state *s, const tensor_list *ref, const char *label, cJSON *jset) {
    const rotor_graph *g = &s->p.graph;
    int failed = 0;
    cJSON *jouts = jset ? cJSON_AddArrayToObject(jset, "outputs") : NULL;
    /* Each graph output's reference: by name (an unrolled loop's outputs
     * carry the lowering's "#N" suffix), else the next unclaimed reference
     * of its size in file order.  Outputs are listed by their model names
     * (rotor_graph_outputs: an output an Identity forwards is its own). */
    int nout, nun = 0;
    rotor_named_output *outs = named_outputs(g, &nout), *uo = NULL;
    int *refof = malloc((size_t)(nout > 0 ? nout : 1) * sizeof *refof);
    if (s->unsimplified.nvalues && s->reference.values) uo = named_outputs(&s->unsimplified, &nun);
    if (!outs || !refof || (s->unsimplified.nvalues && s->reference.values && !uo)) {
        free(outs), free(refof), free(uo);
        fprintf(stderr, "rotor run: out of memory listing the outputs\n");
        return nout > 0 ? nout : 1; /* every output failed: nothing was compared */
    }
    bool claimed[RUN_MAX_DATA] = {false};
    for (int o = 0; o < nout; o++) {
        const rotor_value *x = &g->values[outs[o].value];
        const char *name = outs[o].name;
        size_t base = strcspn(name, "#");
        refof[o] = -1;
        for (int i = 0; ref && i < ref->n && refof[o] < 0; i++)
            if (!claimed[i] && same_shape(&ref->t[i], x) &&
                (!strcmp(ref->t[i].name, name) ||
                 (strlen(ref->t[i].name) == base && !strncmp(ref->t[i].name, name, base))))
                refof[o] = i, claimed[i] = true;
    }
    for (int o = 0; o < nout; o++)
        for (int i = 0; ref && i < ref->n && refof[o] < 0; i++)
            if (!claimed[i] && same_shape(&ref->t[i], &g->values[outs[o].value]))
                refof[o] = i, claimed[i] = true;
    for (int o = 0; o < nout; o++) failed += !report_output(s, &outs[o], ref, refof[o], label, jouts);
    /* a reference no output takes fails the set: another output's of the
     * same name, or of another shape, was passed over without a word until
     * 2026-12-04 (found by an audit helper) */
    for (int i = 0; ref && i < ref->n; i++) {
        if (claimed[i]) continue;
        failed++;
        char sh[160];
        rotor_shape_string(ref->t[i].rank, ref->t[i].shape, sh, sizeof sh);
        if (jouts) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "reference_unused", ref->path[i]);
            cJSON_AddStringToObject(j, "name", ref->t[i].name);
            cJSON_AddStringToObject(j, "shape", sh);
            cJSON_AddBoolToObject(j, "pass", false);
            cJSON_AddItemToArray(jouts, j);
        } else {
            printf("FAIL  %s ('%s', %s): a reference no output of that name and shape takes\n", ref->path[i],
                   ref->t[i].name, sh);
        }
    }
    /* and the other way: an output simplification lost is a failure too */
    for (int u = 0; u < nun; u++) {
        bool kept = false;
        for (int o = 0; o < nout && !kept; o++) kept = !strcmp(outs[o].name, uo[u].name);
        if (kept) continue;
        failed++;
        if (jouts) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "name", uo[u].name);
            cJSON_AddBoolToObject(j, "simplified_missing", true);
            cJSON_AddBoolToObject(j, "pass", false);
            cJSON_AddItemToArray(jouts, j);
        } else {
            printf("FAIL  %-32s the unsimplified graph's output, which the simplified graph lost\n", uo[u].name);
        }
    }
    free(outs);
    free(refof);
    free(uo);
    return failed;
}

/* -o DIR's file of output name: DIR/<name>.pb, '/' and '\\' in the name
 * becoming '_'; false when the path would not fit. */
static bool output_file(const char *dir, const char *name, char *path, size_t cap) {
    int n = snprintf(path, cap, "%s/%s.pb", dir, name);
    if (n < 0 || (size_t)n >= cap) return false;
    for (char *c = path + strlen(dir) + 1; *c; c++)
        if (*c == '/' || *c == '\\') *c = '_';
    return true;
}

typedef char out_path[4400];

/* -o DIR: the graph's outputs (*outs) and their files (*paths), *n of each,
 * malloc'd (the caller frees both, also on failure), checked: two outputs
 * whose names differ only in '/' and '_' ("a/b" and "a_b") would be one
 * file, the second tensor silently replacing the first (found by a review
 * helper), and a name too long for a path was cut short.  Checked as soon
 * as the model is loaded and run (check_outputs), before a line is
 * printed or a file written, with every output's own checks (a file of
 * the command line, `--data x=DIR/y.pb -o DIR`, is not replaced). */
static int output_files(const run_state *s, rotor_named_output **outs, out_path **paths, int *n) {
    *outs = named_outputs(&s->p.graph, n);
    *paths = *outs ? malloc((size_t)(*n > 0 ? *n : 1) * sizeof **paths) : NULL;
    if (!*paths) return cli_usage_error("run", "-o: %s: out of memory listing the outputs", s->out_dir);
    int rc = 0;
    for (int o = 0; o < *n && !rc; o++) {
        if (!output_file(s->out_dir, (*outs)[o].name, (*paths)[o], sizeof(*paths)[o]))
            rc = cli_usage_error("run", "-o: %s: output '%s': its file's path is too long", s->out_dir,
                                 (*outs)[o].name);
        for (int p = 0; p < o && !rc; p++)
            if (!strcmp((*paths)[p], (*paths)[o]))
                rc = cli_usage_error("run", "-o: outputs '%s' and '%s' would both be written as %s", (*outs)[p].name,
                                     (*outs)[o].name, (*paths)[o]);
    }
    return rc;
}

/* Whether path is the file `file` (the same device and inode: a link, a
 * path spelled otherwise). */
static bool same_file(const struct stat *sb, const char *file) {
    struct stat fb;
    return !stat(file, &fb) && fb.st_dev == sb->st_dev && fb.st_ino == sb->st_ino;
}

/* With --check: the file the check reads that path is (its model or a
 * set's input_<i>.pb or output_<i>.pb, as read_numbered names them), into
 * `file`; false when none.  `-o DIR/test_data_set_0` with an output named
 * output_0 replaced the set's reference after the check (the files of the
 * folder are not words of the command line, cli_output_check). */
static bool check_reads(const run_state *s, const char *path, char *file, size_t cap) {
    struct stat sb;
    if (!s->check_model || stat(path, &sb) || !S_ISREG(sb.st_mode)) return false;
    snprintf(file, cap, "%s", s->check_model);
    if (same_file(&sb, file)) return true;
    static const char *const kinds[] = {"input", "output"};
    for (int k = 0; k < s->nsets; k++)
        for (int w = 0; w < 2; w++)
            for (int i = 0; i < RUN_MAX_DATA; i++) {
                snprintf(file, cap, "%s/%s_%d.pb", s->check_sets[k], kinds[w], i);
                struct stat fb;
                if (stat(file, &fb)) break;
                if (fb.st_dev == sb.st_dev && fb.st_ino == sb.st_ino) return true;
            }
    return false;
}

static int check_outputs(const run_state *s) {
    rotor_named_output *outs;
    out_path *paths;
    int n, rc = output_files(s, &outs, &paths, &n);
    char file[4400];
    for (int o = 0; o < n && !rc; o++) {
        rc = cli_output_check("run", "-o", paths[o]);
        if (!rc && check_reads(s, paths[o], file, sizeof file))
            rc = cli_usage_error("run", "-o: %s: is the file '%s' this run reads; the output would replace it",
                                 paths[o], file);
    }
    free(outs);
    free(paths);
    return rc;
}

/* -o DIR: every graph output as its output_file. */
static int write_outputs(run_state *s) {
    const rotor_graph *g = &s->p.graph;
    double **vals = s->gt ? s->gtres.values : s->prog ? s->planned.values : s->direct.values;
    rotor_named_output *outs;
    out_path *paths;
    int nout, rc = output_files(s, &outs, &paths, &nout);
    for (int o = 0; o < nout && !rc; o++) {
        int v = outs[o].value;
        const rotor_value *x = &g->values[v];
        const char *path = paths[o];
        static const int types[ROTOR_DTYPE_COUNT] = {[ROTOR_DTYPE_F32] = 1, [ROTOR_DTYPE_F64] = 11,
                                                     [ROTOR_DTYPE_I32] = 6, [ROTOR_DTYPE_I64] = 7,
                                                     [ROTOR_DTYPE_BOOL] = 9};
        rotor_onnx_tensor t = {.name = (char *)outs[o].name, .onnx_type = types[x->dtype] ? types[x->dtype] : 1,
                               .dtype = x->dtype, .rank = x->rank, .elements = x->elements, .data = vals[v]};
        memcpy(t.shape, x->shape, sizeof t.shape);
        rc = cli_output_tensor("run", "-o", path, &t); /* an output file as any other (README) */
    }
    free(paths);
    free(outs);
    return rc;
}

/* The name of output axis a of sub-graph sgi: the axis an expression of
 * it writes there in a value of the output's shape, from its last operator
 * back, other than the importer's d0, d1, ... of element-wise operators;
 * else "axis a". */
static void gt_axis_name(const run_state *s, int sgi, int a, char *buf, size_t cap) {
    const rotor_graph *g = &s->p.graph;
    const rotor_gt_subgraph *sg = &s->gts.sg[sgi];
    snprintf(buf, cap, "axis %d", a);
    for (int m = sg->count - 1; m >= 0; m--) {
        const rotor_op *op = &g->ops[s->gts.members[sg->first + m]];
        const rotor_value *w = &g->values[op->outputs[0]], *out = &g->values[sg->output];
        bool same = w->rank == out->rank;
        for (int k = 0; k < out->rank && same; k++) same = w->shape[k] == out->shape[k];
        if (op->vendor || op->view[0].set || !same) continue;
        const rotor_tensor *y = &op->expr.tensors[0];
        if (y->ndims != out->rank || y->dims[a].nterms != 1) continue;
        const char *n = op->expr.axis_name[y->dims[a].axis[0]];
        if (n[0] == 'd' && n[1] >= '0' && n[1] <= '9') continue;
        snprintf(buf, cap, "%s", n);
        return;
    }
}

/* One line: "graphturbo: 1 sub-graph, 4 instances along h (factor
 * 1x1x4x1), halos recomputed: 2 rows", then the points evaluated. */
static void print_graphturbo(const run_state *s) {
    const rotor_gt_schedule *q = &s->gts;
    const rotor_gtrun_result *r = &s->gtres;
    int most = -1;
    for (int i = 0; i < q->nsg; i++)
        if (rotor_gt_instances(q, i) > 1 && (most < 0 || rotor_gt_instances(q, i) > rotor_gt_instances(q, most))) most = i;
    printf("graphturbo: %d sub-graph%s, %lld instance%s", q->nsg, q->nsg == 1 ? "" : "s", (long long)q->ninst,
           q->ninst == 1 ? "" : "s");
    if (most >= 0) {
        const rotor_value *y = &s->p.graph.values[q->sg[most].output];
        if (q->nsg > 1)
            printf(" (%d split; the most: %lld instances", r->split + r->whole, (long long)rotor_gt_instances(q, most));
        const char *sep = " along ";
        for (int a = 0; a < y->rank; a++) {
            if (q->sg[most].best.factor[a] < 2) continue;
            char name[ROTOR_NAME_MAX + 16];
            gt_axis_name(s, most, a, name, sizeof name);
            printf("%s%s", sep, name);
            sep = " and ";
        }
        printf(" (factor ");
        for (int a = 0; a < y->rank; a++) printf("%s%lld", a ? "x" : "", (long long)q->sg[most].best.factor[a]);
        printf(")%s, halos recomputed: %lld row%s", q->nsg > 1 ? ")" : "", (long long)r->halo_rows,
               r->halo_rows == 1 ? "" : "s");
    }
    if (r->whole) printf(", %d split sub-graph%s run whole (a vendor op or an intermediate read outside), in BFS order",
                         r->whole, r->whole == 1 ? "" : "s");
    printf("\n");
    printf("graphturbo: %lld instances run, %.0f points evaluated, %.3fx the ungrouped run's\n",
           (long long)r->instances, r->points, r->direct_points > 0 ? r->points / r->direct_points : 1.0);
}

/* --json: the schedule and its run, "graphturbo": {...}. */
static void graphturbo_json(cJSON *parent, const run_state *s) {
    const rotor_gtrun_result *r = &s->gtres;
    cJSON *j = cJSON_AddObjectToObject(parent, "graphturbo");
    if (!j) return;
    cJSON_AddNumberToObject(j, "subgraphs", s->gts.nsg);
    cJSON_AddNumberToObject(j, "instances", (double)s->gts.ninst);
    cJSON_AddNumberToObject(j, "split", r->split);
    cJSON_AddNumberToObject(j, "run_whole", r->whole);
    cJSON_AddNumberToObject(j, "instances_run", (double)r->instances);
    cJSON_AddNumberToObject(j, "halo_rows", (double)r->halo_rows);
    cJSON_AddNumberToObject(j, "points", r->points);
    cJSON_AddNumberToObject(j, "direct_points", r->direct_points);
}

/* The plan the run ran, on a chip without a GB, replayed on the simulator
 * (sim/gticcareplay.h, as rotor simulate --group graphturbo replays its
 * own): the simulated seconds, or -1 with the reason in err. */
static double gticca_simulated(const run_state *s, rotor_error *err) {
    rotor_gticca_replay_result gr;
    if (rotor_gticca_replay(&s->p.graph, &s->chip, s->prog, &s->p.t10, &s->copt, &gr, err)) return -1;
    double t = gr.simulated_s;
    rotor_gticca_replay_result_free(&gr);
    return t;
}

/* --json on a chip without a GB: the sub-graphs run as instances,
 * "graphturbo": {...} (docs/run.md, "Instances on core groups"), each as
 * rotor compile --json gives it. */
static void gticca_json(cJSON *parent, const run_state *s) {
    if (!s->prog) return; /* nothing planned: the direct run alone */
    const rotor_gticca_result *gt = &s->p.t10.gticca;
    cJSON *j = cJSON_AddObjectToObject(parent, "graphturbo");
    cJSON_AddNumberToObject(j, "subgraphs_run", s->planned.subgraphs_run);
    cJSON_AddNumberToObject(j, "instances_run", (double)s->planned.instance_runs);
    cJSON *a = cJSON_AddArrayToObject(j, "subgraphs");
    for (int k = 0; k < gt->nsg; k++) cJSON_AddItemToArray(a, rotor_doc_gticca_sg_json(&s->p.graph, &gt->sg[k]));
    cJSON_AddNumberToObject(j, "t10_s", gt->t10_s);
    cJSON_AddNumberToObject(j, "model_s", gt->total_s);
    cJSON_AddNumberToObject(j, "emulated_s", s->planned.emulated_s);
    rotor_error err = {{0}};
    double sim = gticca_simulated(s, &err);
    if (sim >= 0) cJSON_AddNumberToObject(j, "simulated_s", sim);
    else cJSON_AddStringToObject(j, "simulator", err.msg);
}

static void print_times(run_state *s) {
    if (s->gt) {
        print_graphturbo(s);
        return;
    }
    if (!s->prog) {
        printf("direct execution: %d expression operators, %d vendor ops (no plans)\n", s->direct.ops_direct,
               s->direct.ops_vendor);
        return;
    }
    rotor_replay_result rr = {0};
    rotor_error err = {{0}};
    bool sim = !s->icca && rotor_replay(s->prog, &s->chip, NULL, &rr, NULL, &err) == ROTOR_OK;
    if (s->icca) { /* the plan with its instances, replayed as rotor simulate replays one */
        rr.simulated_s = gticca_simulated(s, &err);
        sim = rr.simulated_s >= 0;
    }
    printf("%s on %s: %d operators emulated, %d vendor ops; peak SRAM %.1f of %.1f KiB per core\n",
           s->p.graph.name, s->chip.name, s->planned.ops_emulated, s->planned.ops_vendor,
           (double)s->planned.peak_bytes / 1024, (double)rotor_chip_sram(&s->chip) / 1024);
    const rotor_program *p = s->prog;
    for (int k = 0; k < p->nsegments; k++) {
        const rotor_segment *sg = &p->segments[k];
        printf("segment %d ran pipelined: %s .. %s, %d stages, %lld micro-batches over output dimension %d:",
               k + 1, s->p.graph.ops[sg->first].name, s->p.graph.ops[sg->last].name, sg->nstages,
               (long long)sg->micro, sg->dim);
        for (int j = 0; j < sg->nstages; j++)
            printf("%s %lld x cores %lld-%lld", j ? "," : "", (long long)sg->stages[j].runs,
                   (long long)sg->stages[j].first_core, (long long)(sg->stages[j].first_core + sg->stages[j].cores - 1));
        printf("\n");
    }
    if (p->nsegments)
        printf("pipelined: %d segments, %lld stage runs emulated on their groups\n", s->planned.segments_run,
               (long long)s->planned.stage_runs);
    const rotor_gticca_result *gt = s->icca ? &s->p.t10.gticca : NULL;
    if (gt) {
        printf("graphturbo: %d sub-graph%s run as %lld instances on core groups (T10 on the simplified graph "
               "%.3f us, with them %.3f us)\n", s->planned.subgraphs_run, s->planned.subgraphs_run == 1 ? "" : "s",
               (long long)s->planned.instance_runs, gt->t10_s * 1e6, gt->total_s * 1e6);
        for (int k = 0; k < gt->nsg; k++)
            printf("sub-graph %d: %s .. %s, %lld instances of %lld cores\n", k + 1, s->p.graph.ops[gt->sg[k].first].name,
                   s->p.graph.ops[gt->sg[k].last].name, (long long)gt->sg[k].instances,
                   (long long)gt->sg[k].group_cores);
    }
    printf("time: emulated %.3f us, model %.3f us", s->planned.emulated_s * 1e6,
           (gt && gt->done ? gt->total_s : s->prog->total_s) * 1e6);
    if (sim) printf(", simulated %.3f us", rr.simulated_s * 1e6);
    else printf(", simulator: %s", err.msg);
    printf("\n");
    rotor_replay_result_free(&rr);
}

/* The test data sets of DIR, sorted; -1 when there are more than cap
 * (until 2026-12-04 the first 16 in directory order ran, the rest without
 * a word, and PASS was printed; found by an audit helper). */
static int list_sets(const char *dir, char sets[][4096], int cap) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "test_data_set_", 14)) {
            if (n == cap) {
                closedir(d);
                return -1;
            }
            snprintf(sets[n++], 4096, "%s/%s", dir, e->d_name);
        }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(sets[j - 1], sets[j]) > 0; j--) {
            char t[4096];
            memcpy(t, sets[j], sizeof t);
            memcpy(sets[j], sets[j - 1], sizeof t);
            memcpy(sets[j - 1], t, sizeof t);
        }
    return n;
}

int cmd_run(int argc, char **argv) {
    const char *cmd = "run";
    run_args a = {0};
    int rc = parse_run(argc, argv, &a);
    if (rc >= 0) return rc;
    if (a.sa.train) return cli_run_train(cmd, &a.sa, a.input); /* the gradient check (docs/training.md) */
    rc = 0;
    rotor_error err = {{0}};
    cJSON *root = a.json ? cJSON_CreateObject() : NULL;
    if (root) {
        cJSON_AddStringToObject(root, "format", "rotor-run");
        cJSON_AddNumberToObject(root, "version", 1);
    }
    int failed = 0;
    if (a.check) {
        char model[4200];
        snprintf(model, sizeof model, "%s/model.onnx", a.check);
        static char sets[RUN_MAX_SETS][4096];
        int nsets = list_sets(a.check, sets, RUN_MAX_SETS);
        if (nsets < 0)
            return cli_usage_error(cmd, "--check: %s has more than %d test_data_set_* directories", a.check,
                                   RUN_MAX_SETS);
        if (!nsets) return cli_usage_error(cmd, "--check: %s has no test_data_set_* directory", a.check);
        cJSON *jsets = root ? cJSON_AddArrayToObject(root, "sets") : NULL;
        for (int i = 0; i < nsets && !rc; i++) {
            tensor_list *in = calloc(1, sizeof *in), *out = calloc(1, sizeof *out);
            /* several sets: each set's outputs in a folder of its own,
             * OUT/<set> (made here), so that no set's replace another's */
            char set_out[4200];
            const char *label = strrchr(sets[i], '/') + 1;
            if (a.out && nsets > 1) {
                int n = snprintf(set_out, sizeof set_out, "%s/%s", a.out, label);
                if (n < 0 || (size_t)n >= sizeof set_out) rc = cli_usage_error(cmd, "-o: %s: path too long", a.out);
                else if (mkdir(set_out, 0777) && errno != EEXIST)
                    rc = cli_usage_error(cmd, "-o: %s: cannot make the set's folder (%s)", set_out, strerror(errno));
                else if (!cli_is_dir(set_out))
                    rc = cli_usage_error(cmd, "-o: %s: is not a folder", set_out);
            }
            run_state s = {.a = &a, .out_dir = a.out && nsets > 1 ? set_out : a.out, .check_model = model,
                           .check_sets = sets, .nsets = nsets};
            rotor_status st = in && out ? ROTOR_OK : rotor_nomem(&err);
            if (!st) st = read_numbered(sets[i], "input", in, &err);
            if (!st) st = read_numbered(sets[i], "output", out, &err);
            if (st && !rc) rc = cli_fail(cmd, st, &err);
            if (!rc) rc = run_model(&s, model, in, &err);
            if (!rc && a.out) rc = check_outputs(&s);
            if (!rc) {
                cJSON *j = jsets ? cJSON_CreateObject() : NULL;
                if (j) {
                    cJSON_AddStringToObject(j, "set", label);
                    if (s.randomised) cJSON_AddBoolToObject(j, "random_inputs", true);
                    cJSON_AddItemToArray(jsets, j);
                } else {
                    printf("%s:\n", label);
                    /* said under --check too: a set without input files was
                     * checked against random inputs without a word */
                    if (s.randomised) printf("inputs the set has no file for get deterministic pseudo-random values in [-1, 1)\n");
                }
                failed += report(&s, out, "reference", j);
                if (!root) print_times(&s);
                else if (s.gt) graphturbo_json(j, &s);
                else if (s.icca) gticca_json(j, &s);
                if (a.out && !failed) rc = write_outputs(&s);
            }
            if (in) tensors_free(in);
            if (out) tensors_free(out);
            free(in);
            free(out);
            state_free(&s);
        }
    } else {
        run_state s = {.a = &a, .out_dir = a.out};
        rc = run_model(&s, a.input, NULL, &err);
        if (!rc && a.out) rc = check_outputs(&s);
        if (!rc) {
            if (s.randomised && !root)
                printf("inputs without --data get deterministic pseudo-random values in [-1, 1)\n");
            failed = report(&s, NULL, NULL, root);
            if (!root) print_times(&s);
            else if (s.gt) graphturbo_json(root, &s);
            else if (s.icca) gticca_json(root, &s);
            if (a.out) rc = write_outputs(&s);
        }
        state_free(&s);
    }
    if (root && !rc) {
        cJSON_AddBoolToObject(root, "pass", failed == 0);
        char *text = rotor_json_stamp(root) ? cJSON_Print(root) : NULL; /* with rotor's version */
        if (text) puts(text);
        free(text);
    }
    cJSON_Delete(root);
    if (rc) return rc;
    if (!a.json) printf("%s\n", failed ? "FAIL" : "PASS");
    return failed ? EXIT_NOFIT : 0;
}
