/* rotor simulate — replay a compiled program on the event-driven simulator
 * (docs/simulator.md): total time, breakdown, utilisations, per-operator
 * model-vs-simulation comparison, Chrome trace.  With --expr and --baseline,
 * a mesh baseline of one GEMM instead (sim/meshbase.c, docs/mesh.md). */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rotor/base/clock.h"
#include "base/jsontext.h"
#include "rotor/pipeline/doc.h"
#include "op/planjson.h"
#include "rotor/base/suggest.h"
#include "rotor/compile/program.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/sim/gticcareplay.h"
#include "rotor/sim/gtreplay.h"
#include "rotor/sim/meshbase.h"
#include "rotor/sim/replay.h"

static void simulate_usage(FILE *f) {
    fprintf(f,
            "usage: rotor simulate PROGRAM.json|MODEL|FILE.onnx [options]\n"
            "       rotor simulate --expr EXPR --dim AXIS=N,... --baseline summa|cannon|gemv|all [--chip C] [--json]\n"
            "\n"
            "Replays a compiled program (rotor compile -o) event by event on the chip simulator:\n"
            "every sub-task, shift, reduction and setup transfer, with links served FIFO, so\n"
            "contention shows.  Given a model, compiles it first (as rotor compile does).\n"
            "With --baseline, simulates a mesh baseline of one GEMM instead (docs/mesh.md): SUMMA\n"
            "or Cannon, or a GEMV reduced along rows then columns (m=1 or n=1), on its best grid\n"
            "of the mesh chip's cores, beside the algorithm's predicted time.  --baseline all: rotor's\n"
            "own plan (the exact search, replayed; and the GEMM compiled, setup included) beside\n"
            "every baseline that applies, in one table.\n"
            "\n"
            "  --chip NAME|FILE    preset or chip file; default: the program's chip, else ipu-mk2\n"
            "  --set KEY=VALUE     override one chip field (repeatable)\n"
            "  --topology T        all-to-all, or mesh:WxH (W*H = cores per chip): a model is\n"
            "                      compiled for it, a program replayed on it\n"
            "  --batch N           batch size of a model (default 1)\n"
            "  --seq N, --layers N, --decode, --prefill, --dim k=v,..., --input NAME=AxB,..,\n"
            "                      --value NAME=SPEC\n"
            "                      shape a model, as in rotor compile\n"
            "  --max-model-bytes N refuse a model file over N bytes (default 2 GiB, docs/onnx.md)\n"
            "  --simplify          fold BatchNormalization into its convolution and fold constants\n"
            "                      before grouping (docs/simplify.md)\n"
            "  --train             the training step: loss, backward pass, optimizer update\n"
            "                      (docs/training.md); --optimizer sgd (default) or adam\n"
            "  --pipeline          compiling a model: run chains of operators as pipelined\n"
            "                      segments, as rotor compile --pipeline does\n"
            "  --objective O       what --pipeline minimises: latency (default) or throughput\n"
            "  --solver S          compiling a model: exact (default) or fast, as in rotor compile\n"
            "  --group G           how a model's operators are grouped: fused (default, the T10\n"
            "                      replay above), none (the graph as imported, as rotor run runs\n"
            "                      it) or graphturbo (GraphTurbo's schedules on a chip\n"
            "                      with a global buffer, e.g. stcp920: each of the five steps'\n"
            "                      sub-graph instances replayed on the cluster's matrix and vector\n"
            "                      units, DDR and GB, beside the model, and again in the passes\n"
            "                      rotor compile chooses (§5.1); --batch is then one cluster's\n"
            "                      share; implies --simplify; docs/simulator.md; on a\n"
            "                      chip without a GB, e.g. ipu-mk2: the sub-graphs' instances on\n"
            "                      core groups replayed beside the model, docs/graphturbo.md)\n"
            "  --no-loops          with --group graphturbo on a chip with a global buffer, replay\n"
            "                      one pass of the batch only\n"
            "  --compare           per operator: predicted and simulated time, ratio, and where\n"
            "                      they differ\n"
            "  --trace FILE        write Chrome trace-event JSON (Perfetto, chrome://tracing); above\n"
            "                      300000 tasks it keeps cores 0-63 unless a filter is given\n"
            "  --trace-ops NAMES   trace only these operators (comma-separated; l0.* a prefix)\n"
            "  --trace-window A:B  trace only tasks overlapping A..B microseconds\n"
            "  --trace-cores LIST  trace only these cores (0-63,100) and transfers to or from them;\n"
            "                      all: every task\n"
            "  --expr EXPR         with --baseline: the GEMM, e.g. 'C[m,n] += A[m,k] * B[k,n]'\n"
            "  --baseline B        with --expr: summa, cannon, gemv or all, on a mesh chip\n"
            "  --json              print the summary as JSON (rotor-simulation, version 1; a\n"
            "                      baseline: rotor-baseline, version 1; all: rotor-baseline-table,\n"
            "                      version 1; --group graphturbo: rotor-graphturbo-sim, version 2, or\n"
            "                      without a GB rotor-graphturbo-icca-sim, version 1)\n"
            "  --threads N         search threads when compiling a model or with --baseline all\n"
            CLI_CACHE_USAGE
            "  --list              list the zoo\n"
            "  --profile           the wall seconds of each phase on stderr: load, group, search,\n"
            "                      hand-off, reconciliation, program, replay (docs/performance.md)\n"
            "  -q, --quiet         no progress and no note on what a trace kept, on stderr\n"
            "  --progress WHEN     auto (a bar on a terminal), always (also lines every 5 s in a log), never\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 simulated, 1 the model (a baseline's tiles) does not fit, 2 bad input\n");
}

static bool is_program(const char *spec) {
    size_t n = strlen(spec);
    return n > 5 && !strcmp(spec + n - 5, ".json");
}

/* The program's "chip" field, if the text is JSON with one. */
static void program_chip(const char *text, char *name, size_t size) {
    name[0] = '\0';
    cJSON *root = cJSON_Parse(text);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "chip");
    if (cJSON_IsString(c)) snprintf(name, size, "%s", c->valuestring);
    cJSON_Delete(root);
}

static double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

/* One line per pipelined segment: the model and the simulation of the whole
 * segment (the replay reports it on its first operator). */
static void print_segments(const rotor_program *p, const rotor_replay_result *r) {
    for (int o = 0; o < r->nops; o++) {
        const rotor_replay_op *x = &r->ops[o];
        if (!x->segment || o != p->segments[x->segment - 1].first) continue;
        const rotor_segment *sg = &p->segments[x->segment - 1];
        printf("segment %d (%s .. %s, %d stages, %lld micro-batches): model %.3f us, simulated %.3f us: %+.2f%%\n",
               x->segment, p->ops[sg->first].name, p->ops[sg->last].name, sg->nstages, (long long)sg->micro,
               x->predicted_s * 1e6, x->simulated_s * 1e6, pct(x->simulated_s - x->predicted_s, x->predicted_s));
    }
}

static void print_table(const rotor_program *p, const rotor_chip *chip, const rotor_replay_result *r,
                        bool compare) {
    char topo[64];
    const rotor_sim_stats *s = &r->stats;
    if (compare) {
        printf("%-28s %-14s %12s %12s %8s  %s\n", "operator", "type", "model (us)", "sim (us)", "sim/model",
               "where they differ");
        for (int o = 0; o < r->nops; o++) {
            const rotor_replay_op *x = &r->ops[o];
            char why[160];
            rotor_replay_explain(x, why, sizeof why);
            if (x->segment && o != p->segments[x->segment - 1].first) {
                printf("%-28.28s %-14.14s %12s %12s %8s  in segment %d, above\n", p->ops[o].name, p->ops[o].type, "-",
                       "-", "-", x->segment);
                continue;
            }
            if (x->segment) snprintf(why + strlen(why), sizeof why - strlen(why), " (segment %d: all its stages)",
                                     x->segment);
            printf("%-28.28s %-14.14s %12.3f %12.3f %8.4f  %s\n", p->ops[o].name, p->ops[o].type,
                   x->predicted_s * 1e6, x->simulated_s * 1e6,
                   x->predicted_s > 0 ? x->simulated_s / x->predicted_s : 1.0, why);
        }
        printf("\n");
    }
    printf("%s on %s (%s, %lld cores): %d operators, %lld tasks, %lld events\n", p->model, chip->name,
           rotor_chip_topology_text(chip, topo, sizeof topo), (long long)p->cores, p->nops, (long long)s->tasks,
           (long long)s->events);
    printf("simulated %.3f us, model %.3f us: %+.2f%%\n", r->simulated_s * 1e6, r->predicted_s * 1e6,
           pct(r->simulated_s - r->predicted_s, r->predicted_s));
    if (*p->topology && strcmp(p->topology, topo))
        printf("the program was compiled for %s: its model times are that network's, not %s's "
               "(docs/simulator.md, \"Another chip\")\n", p->topology, topo);
    const char *other[ROTOR_CHIP_FIELDS_MAX];
    int nother = p->has_compiled_chip
                     ? rotor_chip_differences(&p->compiled_chip, chip, false, other, ROTOR_CHIP_FIELDS_MAX)
                     : 0;
    if (nother) {
        printf("the program was compiled on a chip whose ");
        for (int i = 0; i < nother; i++) printf("%s%s", i ? ", " : "", other[i]);
        printf(" %s from %s's: its model times are that chip's (docs/simulator.md, \"Another chip\")\n",
               nother > 1 ? "differ" : "differs", chip->name);
    }
    print_segments(p, r);
    double ms = (double)s->makespan_ps;
    printf("breakdown: compute %.3f us (%.1f%%), communication %.3f us (%.1f%%), setup %.3f us (%.1f%%), "
           "hbm %.3f us (%.1f%%), idle %.3f us (%.1f%%)\n",
           s->exposed_ps[ROTOR_SIM_COMPUTE] * 1e-6, pct((double)s->exposed_ps[ROTOR_SIM_COMPUTE], ms),
           s->exposed_ps[ROTOR_SIM_COMM] * 1e-6, pct((double)s->exposed_ps[ROTOR_SIM_COMM], ms),
           s->exposed_ps[ROTOR_SIM_SETUP] * 1e-6, pct((double)s->exposed_ps[ROTOR_SIM_SETUP], ms),
           s->exposed_ps[ROTOR_SIM_HBM] * 1e-6, pct((double)s->exposed_ps[ROTOR_SIM_HBM], ms),
           s->idle_ps * 1e-6, pct((double)s->idle_ps, ms));
    printf("contention: links contended %.3f us (%.1f%%); transfers waited %.3f us in total\n",
           s->contended_ps * 1e-6, pct((double)s->contended_ps, ms), s->stall_ps * 1e-6);
    printf("utilisation: FLOPS %.1f%%, cores busy %.1f%%, links mean %.1f%% peak %.1f%%, inter-chip %.1f%%, "
           "HBM %.1f%%\n",
           100 * s->flops_util, 100 * s->compute_util, 100 * s->link_util_mean, 100 * s->link_util_peak,
           100 * s->interchip_util, 100 * s->hbm_util);
    /* the simulator's own event counts over the simulated time (docs/energy.md) */
    rotor_energy_counts ec = rotor_sim_energy_counts(s);
    rotor_energy en;
    rotor_energy_price(chip, &ec, r->simulated_s, &en);
    cli_energy_print("per inference", &en);
}

/* What `rotor simulate` was asked. */
typedef struct simulate_args {
    cli_shared_args sa;
    const char *input, *topo, *solver_name, *group;
    cli_trace_args tr;
    bool compare, json, from_program, graphturbo, no_group, profile, no_loops;
    cli_pipeline_args pl;
    cli_trace_filter filter;
    rotor_solver solver;
} simulate_args;

/* Parses argv into a; returns -1 to go on, else the exit status (0 after --help). */
static int parse_simulate(int argc, char **argv, simulate_args *a) {
    const char *cmd = "simulate";
    static const cli_opt own[] = {
        {"topology", 0, CLI_VALUE, offsetof(simulate_args, topo), 0, 0},
        CLI_TRACE_OPTS(simulate_args, tr),
        {"compare", 0, CLI_FLAG, offsetof(simulate_args, compare), 0, 0},
        {"json", 0, CLI_FLAG, offsetof(simulate_args, json), 0, 0},
        {"profile", 0, CLI_FLAG, offsetof(simulate_args, profile), 0, 0},
        {"solver", 0, CLI_VALUE, offsetof(simulate_args, solver_name), 0, 0},
        {"group", 0, CLI_VALUE, offsetof(simulate_args, group), 0, 0},
        {"no-loops", 0, CLI_FLAG, offsetof(simulate_args, no_loops), 0, 0},
        CLI_PIPELINE_OPTS(simulate_args, pl),
        {0}};
    int rc = cli_parse_options(cmd, argc, argv, CLI_TAKES_ALL | CLI_TAKES_CACHE, &a->sa, own, a, simulate_usage, cli_list_zoo, &a->input,
                               "a program file or a model is required (try --help)");
    if (rc >= 0) return rc;
    a->from_program = is_program(a->input);
    rotor_error ferr = {{0}};
    rotor_status fst = rotor_pipeline_group_parse(a->group, &a->graphturbo, &a->no_group, &ferr);
    if (fst) return cli_fail(cmd, fst, &ferr);
    if (a->group && a->from_program)
        return cli_usage_error(cmd, "--group %s groups a model; a program file is already compiled", a->group);
    fst = rotor_pipeline_graphturbo_flags(a->graphturbo, a->no_loops, false, NULL, &ferr);
    if (fst) return cli_fail(cmd, fst, &ferr);
    if (a->graphturbo && (a->tr.file || a->compare || a->pl.pipeline || a->solver_name || a->topo))
        return cli_usage_error(cmd, "--group graphturbo replays GraphTurbo's schedules: it conflicts with %s",
                               a->tr.file ? "--trace" : a->compare ? "--compare" : a->pl.pipeline ? "--pipeline"
                               : a->solver_name ? "--solver" : "--topology");
    if (a->tr.file && !strcmp(a->tr.file, "-") && a->json)
        return cli_usage_error(cmd, "--trace - and --json would both write standard output");
    if (!a->tr.file && (a->tr.ops || a->tr.window || a->tr.cores))
        return cli_usage_error(cmd, "--trace-ops, --trace-window and --trace-cores filter --trace FILE; give it");
    if (cli_parse_objective(cmd, &a->pl)) return EXIT_BADINPUT;
    if (cli_parse_solver(cmd, a->solver_name, &a->solver)) return EXIT_BADINPUT;
    if (a->from_program && a->solver_name)
        return cli_usage_error(cmd, "--solver chooses a model's plans; a program file is already compiled");
    if (a->from_program && a->pl.pipeline)
        return cli_usage_error(cmd, "--pipeline compiles a model; a program file carries its segments already");
    const cli_shared_args *m = &a->sa;
    if (a->from_program &&
        (m->batch || m->seq || m->layers || m->decode || m->prefill || m->dims || m->inputs || m->nvalues || m->threads))
        return cli_usage_error(cmd, "--batch, --seq, --layers, --decode, --prefill, --dim, --input, --value and "
                               "--threads shape a model; a program file is already compiled");
    if (cli_trace_filter_parse(cmd, &a->tr, &a->filter)) return EXIT_BADINPUT;
    return -1;
}

/* The program of a program file, read and checked on the chip it was
 * compiled on (the one it carries, else the preset it names, else --chip),
 * and in *chip the chip to replay it on: --chip, else that chip, with
 * --set applied either way (docs/simulator.md, "Another chip").  Until
 * 2026-12-04 the file was checked on the replay's chip, so every --chip or
 * --set that changed a time (link_gbps, matrix_tflops, a mesh) refused a
 * sound file: "setup_s ... does not match setup_bytes and setup_rounds"
 * (found by an audit helper). */
static rotor_status read_program(const simulate_args *a, rotor_chip *chip, rotor_program *prog, rotor_error *err) {
    char *text = NULL;
    rotor_status rst = rotor_json_read_text(a->input, &text, err); /* bounded: /dev/zero is refused */
    if (rst) return rst;
    /* The chip the program carries ("chip_file"), whole: not a preset of
     * the same name */
    rotor_chip compiled;
    bool carried = false;
    char pchip[ROTOR_CHIP_NAME_MAX] = "";
    rotor_status st = rotor_doc_program_chip(text, a->input, NULL, 0, &compiled, &carried, err);
    if (!st && !carried) {
        /* a file written before 2026-12-04 names its chip only.  Only a
         * preset is taken from it: a path in someone else's program file
         * must not make rotor open a file the user did not name (a chip
         * file is given with --chip) */
        program_chip(text, pchip, sizeof pchip);
        bool preset = *pchip && rotor_chip_preset(pchip, &compiled, NULL) == ROTOR_OK;
        if (!preset && a->sa.chip) st = cli_chip(a->sa.chip, NULL, 0, &compiled, err);
        else if (!preset && *pchip)
            st = rotor_fail(err, ROTOR_ERR_INPUT,
                            "%s: chip: '%.100s' is not a preset; a program names its chip file only by --chip FILE",
                            a->input, pchip);
        else if (!preset) st = cli_chip("ipu-mk2", NULL, 0, &compiled, err);
    }
    if (!st) st = rotor_program_parse(text, a->input, &compiled, prog, err);
    /* the replay's chip: --chip, else the compiled one, --set on either */
    if (!st && a->sa.chip) st = cli_chip(a->sa.chip, a->sa.sets, a->sa.nsets, chip, err);
    else if (!st && carried) {
        *chip = compiled;
        st = rotor_doc_chip_sets(chip, (const char *const *)a->sa.sets, a->sa.nsets, err);
    }
    else if (!st) st = cli_chip(*pchip ? pchip : "ipu-mk2", a->sa.sets, a->sa.nsets, chip, err);
    free(text);
    /* another network is replayed (the line under the totals says so);
     * other cores are not */
    if (!st && rotor_chip_cores(chip) != prog->cores)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: cores: the program is for %lld cores, the chip has %lld", a->input,
                        (long long)prog->cores, (long long)rotor_chip_cores(chip));
    return st;
}

/* The program of a model, compiled on --chip (and --topology) as rotor
 * compile does.  Until 2026-12-04 --topology was applied after the compile,
 * so a model was compiled for all-to-all and replayed on the mesh (nerf-t10
 * on mesh:32x46: +328 % against a model of 0.673 us, where --set of the
 * same mesh, and rotor report --topology, compiled for it: 2.482 us, found
 * by an audit helper). */
static int compile_program(const simulate_args *a, rotor_chip *chip, rotor_pipeline *p) {
    const char *cmd = "simulate";
    rotor_pipeline_options po = {.zoo = {.batch = 1}, .t10 = true, .program = true, .no_group = a->no_group};
    po.zoo.phase = ROTOR_PHASE_PREFILL;
    if (cli_shared_model(cmd, a->input, &a->sa, false, &po)) return EXIT_BADINPUT;
    rotor_error err = {{0}};
    rotor_status st = cli_chip(a->sa.chip, a->sa.sets, a->sa.nsets, chip, &err);
    if (!st && a->topo) st = cli_apply_topology(chip, a->topo, &err);
    if (st) return cli_fail(cmd, st, &err);
    cli_solver_hint(cmd, chip, a->solver, a->sa.quiet);
    cli_progress bar;
    cli_progress_begin(&bar, cmd, "compiling: operator shapes searched", a->sa.quiet);
    po.compile.progress = cli_progress_step;
    po.compile.progress_ctx = &bar;
    po.compile.pipeline = a->pl.pipeline;
    po.compile.objective = a->pl.objective;
    po.compile.solver = a->solver;
    st = rotor_pipeline_run(&po, chip, p, &err);
    cli_progress_end(&bar);
    if (!st) cli_cache_warn(cmd, &po.compile, &p->t10);
    return st ? cli_fail(cmd, st, &err) : 0;
}

/* ---- --baseline: a mesh baseline of one GEMM (docs/mesh.md, "Baselines") ---- */

typedef struct baseline_args {
    cli_shared_args sa;
    const char *expr, *baseline, *topo;
    bool json;
} baseline_args;

/* argv asks for a baseline: --expr or --baseline before any "--".  Then the
 * options are a baseline's, and there is no program or model. */
static bool wants_baseline(int argc, char **argv) {
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        for (int k = 0; k < 2; k++) {
            const char *name = k ? "--baseline" : "--expr";
            size_t n = strlen(name);
            if (!strncmp(argv[i], name, n) && (argv[i][n] == '\0' || argv[i][n] == '=')) return true;
        }
    return false;
}

static void print_baseline(const rotor_expr *e, const rotor_chip *chip, const rotor_meshbase_result *r) {
    char topo[64], dims[256];
    const rotor_meshbase_grid *g = &r->grid;
    rotor_expr_dims_string(e, dims, sizeof dims);
    printf("%s on %s (%s, %lld cores): %s, %s\n", rotor_meshbase_name(r->kind), chip->name,
           rotor_chip_topology_text(chip, topo, sizeof topo), (long long)rotor_chip_cores(chip), e->text, dims);
    printf("grid %lld x %lld (%lld cores)%s", (long long)g->p, (long long)g->q, (long long)(g->p * g->q),
           g->transposed ? ", transposed" : "");
    if (r->kind == ROTOR_MESHBASE_GEMV) printf(", reduction groups of %lld rows", (long long)g->pk);
    printf(", tile m=%lld k=%lld n=%lld, %lld %s, %lld bytes of SRAM per core\n", (long long)r->tile[0],
           (long long)r->tile[1], (long long)r->tile[2], (long long)r->steps,
           r->kind == ROTOR_MESHBASE_SUMMA ? "k-panels" : "steps", (long long)r->sram_bytes);
    printf("simulated %.3f us, predicted %.3f us: %+.2f%%; compute %.3f us\n", r->simulated_s * 1e6,
           r->predicted_s * 1e6, pct(r->simulated_s - r->predicted_s, r->predicted_s), r->compute_s * 1e6);
    printf("moved %lld bytes in %lld transfers: %lld broadcasts (%lld bytes), %lld shifts (%lld bytes), "
           "%lld reduction transfers (%lld bytes, %lld hops); longest route %lld hops\n",
           (long long)r->bytes, (long long)r->transfers, (long long)r->broadcasts, (long long)r->broadcast_bytes,
           (long long)r->shifts, (long long)r->shift_bytes, (long long)r->reductions, (long long)r->reduction_bytes,
           (long long)r->reduction_hops, (long long)r->max_hops);
    printf("utilisation: FLOPS %.1f%%, cores busy %.1f%%, links mean %.1f%% peak %.1f%%\n",
           100 * r->stats.flops_util, 100 * r->stats.compute_util, 100 * r->stats.link_util_mean,
           100 * r->stats.link_util_peak);
}

/* The head both baseline documents share: format, version 1, the baseline
 * (unless NULL), chip, topology, expression and extents. */
static cJSON *baseline_json_head(const char *format, const char *baseline, const rotor_expr *e,
                                 const rotor_chip *chip) {
    char topo[64], dims[256];
    rotor_expr_dims_string(e, dims, sizeof dims);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", format);
    cJSON_AddNumberToObject(root, "version", 1);
    if (baseline) cJSON_AddStringToObject(root, "baseline", baseline);
    cJSON_AddStringToObject(root, "chip", chip->name);
    cJSON_AddStringToObject(root, "topology", rotor_chip_topology_text(chip, topo, sizeof topo));
    cJSON_AddStringToObject(root, "expr", e->text);
    cJSON_AddStringToObject(root, "dims", dims);
    return root;
}

/* A baseline's grid as the object "grid" of parent. */
static void json_grid(cJSON *parent, const rotor_meshbase_grid *gr) {
    cJSON *g = cJSON_AddObjectToObject(parent, "grid");
    cJSON_AddNumberToObject(g, "rows", (double)gr->p);
    cJSON_AddNumberToObject(g, "cols", (double)gr->q);
    cJSON_AddNumberToObject(g, "group_rows", (double)gr->pk);
    cJSON_AddBoolToObject(g, "transposed", gr->transposed);
}

static void baseline_json(const rotor_expr *e, const rotor_chip *chip, const rotor_meshbase_result *r) {
    cJSON *root = baseline_json_head("rotor-baseline", rotor_meshbase_name(r->kind), e, chip);
    json_grid(root, &r->grid);
    cJSON *t = cJSON_AddObjectToObject(root, "tile");
    static const char *const role[3] = {"m", "k", "n"};
    for (int i = 0; i < 3; i++) cJSON_AddNumberToObject(t, role[i], (double)r->tile[i]);
    const struct { const char *key; double v; } nums[] = {
        {"steps", (double)r->steps}, {"sram_bytes", (double)r->sram_bytes}, {"simulated_s", r->simulated_s},
        {"predicted_s", r->predicted_s}, {"compute_s", r->compute_s},
        {"error", r->predicted_s > 0 ? r->simulated_s / r->predicted_s - 1 : 0}, {"tasks", (double)r->tasks},
        {"bytes", (double)r->bytes}, {"transfers", (double)r->transfers}, {"broadcasts", (double)r->broadcasts},
        {"broadcast_bytes", (double)r->broadcast_bytes}, {"shifts", (double)r->shifts},
        {"shift_bytes", (double)r->shift_bytes}, {"reductions", (double)r->reductions},
        {"reduction_bytes", (double)r->reduction_bytes}, {"reduction_hops", (double)r->reduction_hops},
        {"max_hops", (double)r->max_hops}, {"links_peak", r->stats.link_util_peak}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) cJSON_AddNumberToObject(root, nums[i].key, nums[i].v);
    char *out = rotor_json_stamp(root) ? cJSON_Print(root) : NULL; /* with rotor's version */
    if (out) cli_puts(out);
    free(out);
    cJSON_Delete(root);
}

/* ---- --baseline all: rotor's plan beside every baseline (docs/mesh.md) ---- */

/* "32x32", "32x32 T" (transposed), "32x32 pk 4" (GEMV row groups). */
static void grid_text(const rotor_meshbase_result *r, char *buf, size_t size) {
    int n = snprintf(buf, size, "%lldx%lld", (long long)r->grid.p, (long long)r->grid.q);
    if (n > 0 && (size_t)n < size && r->grid.transposed) n += snprintf(buf + n, size - (size_t)n, " T");
    if (n > 0 && (size_t)n < size && r->kind == ROTOR_MESHBASE_GEMV)
        snprintf(buf + n, size - (size_t)n, " pk %lld", (long long)r->grid.pk);
}

/* rotor's F_op, "m=32 k=1 n=32". */
static void fop_text(const rotor_expr *e, const rotor_plan *p, char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < e->naxes && n < size; a++) {
        int k = snprintf(buf + n, size - n, "%s%s=%lld", a ? " " : "", e->axis_name[a], (long long)p->fop[a]);
        if (k < 0) break;
        n += (size_t)k;
    }
}

static void print_compare(const rotor_expr *e, const rotor_chip *chip, const rotor_meshbase_compare *c) {
    char topo[64], dims[256], g[96];
    const rotor_candidate *rc = &c->rotor;
    rotor_expr_dims_string(e, dims, sizeof dims);
    printf("rotor against the mesh baselines on %s (%s, %lld cores): %s, %s\n", chip->name,
           rotor_chip_topology_text(chip, topo, sizeof topo), (long long)rotor_chip_cores(chip), e->text, dims);
    printf("%-11s %-22s %6s %12s %15s %15s %8s\n", "method", "grid / F_op", "cores", "SRAM/core", "predicted (us)",
           "simulated (us)", "x rotor");
    fop_text(e, &rc->plan, g, sizeof g);
    printf("%-11s %-22s %6lld %12lld %15.3f %15.3f %8.3f\n", "rotor", g, (long long)rc->info.cores,
           (long long)rc->info.memory, c->predicted_s * 1e6, c->simulated_s * 1e6, 1.0);
    const rotor_meshbase_compiled *cp = &c->compiled;
    fop_text(e, &cp->plan, g, sizeof g);
    printf("%-11s %-22s %6lld %12lld %15.3f %15.3f %8.3f\n", "rotor+setup", g, (long long)cp->info.cores,
           (long long)cp->info.memory, cp->predicted_s * 1e6, cp->simulated_s * 1e6, cp->simulated_s / c->simulated_s);
    for (int k = 0; k < ROTOR_MESHBASE_NKINDS; k++) {
        const rotor_meshbase_entry *x = &c->base[k];
        const char *name = rotor_meshbase_name((rotor_meshbase_kind)k);
        if (x->status) {
            printf("%-11s does not apply: %s\n", name, x->why);
            continue;
        }
        grid_text(&x->res, g, sizeof g);
        printf("%-11s %-22s %6lld %12lld %15.3f %15.3f %8.3f\n", name, g, (long long)(x->res.grid.p * x->res.grid.q),
               (long long)x->res.sram_bytes, x->res.predicted_s * 1e6, x->res.simulated_s * 1e6,
               c->simulated_s > 0 ? x->res.simulated_s / c->simulated_s : 0.0);
    }
    printf("rotor's plan: compute %.3f us, shifts %.3f us, reduction %.3f us; longest ring hop %lld, "
           "reduction hop %lld\n",
           rc->cost.compute * 1e6, rc->cost.comm * 1e6, rc->cost.reduction * 1e6, (long long)c->map.hops,
           (long long)c->map.red_hops);
    printf("rotor+setup: the GEMM compiled with its inputs in the even layout; simulated setup %.3f us\n",
           cp->setup_s * 1e6);
    printf("rotor's plan is slower in simulation than %d of the %d baselines that apply; with its setup, "
           "than %d\n", c->faster, c->applied, c->faster_than_compiled);
}

/* One row of the table's "methods": its figures, the ratio to rotor's plan. */
static cJSON *json_row(cJSON *rows, const char *method, int64_t cores, int64_t sram, double predicted,
                       double simulated, double rotor_s) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "method", method);
    cJSON_AddNumberToObject(r, "cores", (double)cores);
    cJSON_AddNumberToObject(r, "sram_bytes", (double)sram);
    cJSON_AddNumberToObject(r, "predicted_s", predicted);
    cJSON_AddNumberToObject(r, "simulated_s", simulated);
    cJSON_AddNumberToObject(r, "ratio", rotor_s > 0 ? simulated / rotor_s : 0);
    cJSON_AddItemToArray(rows, r);
    return r;
}

static void json_fop(cJSON *r, const rotor_expr *e, const rotor_plan *p) {
    cJSON *f = cJSON_AddObjectToObject(r, "fop");
    for (int a = 0; a < e->naxes; a++) cJSON_AddNumberToObject(f, e->axis_name[a], (double)p->fop[a]);
}

static void compare_json(const rotor_expr *e, const rotor_chip *chip, const rotor_meshbase_compare *c) {
    cJSON *root = baseline_json_head("rotor-baseline-table", NULL, e, chip);
    cJSON *rows = cJSON_AddArrayToObject(root, "methods");
    double t = c->simulated_s;
    cJSON *r = json_row(rows, "rotor", c->rotor.info.cores, c->rotor.info.memory, c->predicted_s, t, t);
    json_fop(r, e, &c->rotor.plan);
    cJSON_AddNumberToObject(r, "compute_s", c->rotor.cost.compute);
    cJSON_AddNumberToObject(r, "shifts_s", c->rotor.cost.comm);
    cJSON_AddNumberToObject(r, "reduction_s", c->rotor.cost.reduction);
    const rotor_meshbase_compiled *cp = &c->compiled;
    r = json_row(rows, "rotor+setup", cp->info.cores, cp->info.memory, cp->predicted_s, cp->simulated_s, t);
    json_fop(r, e, &cp->plan);
    cJSON_AddNumberToObject(r, "setup_s", cp->setup_s);
    for (int k = 0; k < ROTOR_MESHBASE_NKINDS; k++) {
        const rotor_meshbase_entry *x = &c->base[k];
        const char *name = rotor_meshbase_name((rotor_meshbase_kind)k);
        if (x->status) {
            r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "method", name);
            cJSON_AddItemToArray(rows, r);
        } else {
            r = json_row(rows, name, x->res.grid.p * x->res.grid.q, x->res.sram_bytes, x->res.predicted_s,
                         x->res.simulated_s, t);
            json_grid(r, &x->res.grid);
        }
        cJSON_AddBoolToObject(r, "applies", x->status == ROTOR_OK);
        if (x->status) cJSON_AddStringToObject(r, "why", x->why);
    }
    cJSON_AddNumberToObject(root, "applied", c->applied);
    cJSON_AddNumberToObject(root, "faster", c->faster);
    cJSON_AddNumberToObject(root, "faster_than_setup", c->faster_than_compiled);
    char *out = rotor_json_stamp(root) ? cJSON_Print(root) : NULL; /* with rotor's version */
    if (out) cli_puts(out);
    free(out);
    cJSON_Delete(root);
}

/* rotor simulate --expr E --dim ... --baseline B: parse, run the library's
 * baseline (B all: rotor's plan and every baseline), print. */
static int cmd_baseline(int argc, char **argv) {
    const char *cmd = "simulate";
    baseline_args a = {0};
    static const cli_opt own[] = {{"expr", 0, CLI_VALUE, offsetof(baseline_args, expr), 0, 0},
                                  {"baseline", 0, CLI_VALUE, offsetof(baseline_args, baseline), 0, 0},
                                  {"topology", 0, CLI_VALUE, offsetof(baseline_args, topo), 0, 0},
                                  {"json", 0, CLI_FLAG, offsetof(baseline_args, json), 0, 0},
                                  {0}};
    int rc = cli_parse_options(cmd, argc, argv, CLI_TAKES_CHIP | CLI_TAKES_DIM | CLI_TAKES_THREADS, &a.sa, own, &a,
                               simulate_usage, NULL, NULL, NULL);
    if (rc >= 0) return rc;
    if (!a.expr) return cli_usage_error(cmd, "--baseline needs --expr, the GEMM it runs");
    if (!a.baseline) return cli_usage_error(cmd, "--expr needs --baseline summa, cannon, gemv or all");
    bool all = !strcmp(a.baseline, "all");
    rotor_meshbase_kind kind = ROTOR_MESHBASE_SUMMA;
    if (!all && !rotor_meshbase_find(a.baseline, &kind)) {
        const char *names[ROTOR_MESHBASE_NKINDS + 1] = {"all"};
        char hint[96];
        for (int k = 0; k < ROTOR_MESHBASE_NKINDS; k++) names[k + 1] = rotor_meshbase_name((rotor_meshbase_kind)k);
        return cli_usage_error(cmd, "--baseline: expected summa, cannon, gemv or all, got '%s'%s", a.baseline,
                               rotor_suggest_phrase(a.baseline, names, ROTOR_MESHBASE_NKINDS + 1, hint, sizeof hint));
    }
    int threads = 0;
    if (!all && a.sa.threads) return cli_usage_error(cmd, "--threads is for --baseline all (rotor's search)");
    if ((rc = cli_shared_threads(cmd, &a.sa, &threads))) return rc;
    rotor_expr e;
    if ((rc = cli_expr(cmd, a.expr, a.sa.dims, false, &e))) return rc;
    rotor_error err = {{0}};
    rotor_chip chip;
    rotor_status st = cli_chip(a.sa.chip, a.sa.sets, a.sa.nsets, &chip, &err);
    if (!st && a.topo) st = cli_apply_topology(&chip, a.topo, &err);
    if (st) return cli_fail(cmd, st, &err);
    if (all) {
        rotor_meshbase_compare *c = malloc(sizeof *c);
        if (!c) return cli_nomem(cmd);
        rotor_meshbase_compare_options co = {.threads = threads, .with_setup = true};
        if ((st = rotor_meshbase_compare_run(&e, &chip, &co, c, &err))) rc = cli_fail(cmd, st, &err);
        else if (a.json) compare_json(&e, &chip, c);
        else print_compare(&e, &chip, c);
        free(c);
        return rc;
    }
    rotor_meshbase_result r;
    if ((st = rotor_meshbase_run(&e, &chip, kind, NULL, &r, &err))) return cli_fail(cmd, st, &err);
    if (a.json) baseline_json(&e, &chip, &r);
    else print_baseline(&e, &chip, &r);
    return 0;
}

/* ---- --group graphturbo: GraphTurbo's schedules replayed (docs/simulator.md,
 * "GraphTurbo's instances") ---- */

/* A document the library built (--json) printed and freed, or its error. */
static int print_doc(rotor_status st, char **out, rotor_error *err) {
    int rc = st ? cli_fail("simulate", st, err) : 0;
    if (!st) cli_puts(*out);
    rotor_free(*out);
    return rc;
}

static void gtsim_table(const char *model, const rotor_chip *chip, int64_t batch, const rotor_gtreplay_result *r,
                        const rotor_dsa_loops *lp, const rotor_gtreplay_result *lr) {
    char share[64];
    printf("%s, %s a cluster x %lld clusters on %s: GraphTurbo's schedules replayed, %d tiles an instance "
           "(docs/simulator.md)\n\n",
           model, cli_batch_words(model, batch, share, sizeof share), (long long)chip->clusters, chip->name,
           ROTOR_GTREPLAY_TILES);
    /* ms, as rotor compile --group graphturbo; us for a graph under 1 ms */
    bool us = r[ROTOR_DSA_PER_LAYER].model_s < 1e-3;
    double k = us ? 1e6 : 1e3;
    const char *u = us ? "us" : "ms";
    char hm[32], hs[32], hb[64];
    snprintf(hm, sizeof hm, "model (%s)", u), snprintf(hs, sizeof hs, "simulated (%s)", u);
    snprintf(hb, sizeof hb, "busy (%s): matrix, vector, DDR, GB read, GB write", u);
    printf("%-11s %11s %15s %10s %9s %8s  %s\n", "step", hm, hs, "difference", "instances", "tasks", hb);
    for (int i = 0; i < ROTOR_DSA_STEPS; i++) {
        const rotor_gtreplay_result *x = &r[i];
        printf("%-11s %11.3f %15.3f %+9.2f%% %9lld %8lld  %.3f, %.3f, %.3f, %.3f, %.3f\n",
               rotor_dsa_step_name(x->step),
               x->model_s * k, x->simulated_s * k, pct(x->simulated_s - x->model_s, x->model_s),
               (long long)x->instances, (long long)x->tasks, x->busy_s[ROTOR_GTREPLAY_MATRIX] * k,
               x->busy_s[ROTOR_GTREPLAY_VECTOR] * k, x->busy_s[ROTOR_GTREPLAY_DDR] * k,
               x->busy_s[ROTOR_GTREPLAY_GB] * k, x->busy_s[ROTOR_GTREPLAY_GB_WRITE] * k);
    }
    if (!lr) return; /* --no-loops */
    bool looped = false;
    for (int i = 0; i < ROTOR_DSA_STEPS; i++) looped |= lp->step[i].passes > 1;
    if (lp->file_batch) printf("\nwith §5.1's loops: not tried, an ONNX file's batch is its own\n");
    else if (lp->tried < 2) printf("\nwith §5.1's loops: a batch of 1 a cluster, one pass\n");
    else if (!looped) printf("\nwith §5.1's loops: every step is fastest in one pass (%d numbers of passes tried)\n", lp->tried);
    if (lp->file_batch || !looped) return;
    printf("\nwith §5.1's loops, as rotor compile --group graphturbo chose them (times of all passes, tasks of one):\n");
    printf("%-11s %6s %11s %15s %10s %9s %8s\n", "step", "passes", hm, hs, "difference", "instances", "tasks");
    for (int i = 0; i < ROTOR_DSA_STEPS; i++) {
        const rotor_gtreplay_result *x = &lr[i];
        printf("%-11s %6lld %11.3f %15.3f %+9.2f%% %9lld %8lld\n", rotor_dsa_step_name(x->step),
               (long long)lp->step[i].passes, x->model_s * k, x->simulated_s * k,
               pct(x->simulated_s - x->model_s, x->model_s), (long long)x->instances, (long long)x->tasks);
    }
}

/* ---- --group graphturbo on an ICCA chip (no GB): the instances on core
 * groups replayed (sim/gticcareplay.h) ---- */

static void gticcasim_table(const simulate_args *a, const rotor_chip *chip, int64_t batch, const rotor_graph *g,
                            const rotor_gticca_replay_result *r) {
    char share[64];
    printf("%s, %s, on %s (%lld cores): GraphTurbo's instances on core groups replayed "
           "(docs/graphturbo.md, \"On an ICCA chip\")\n\n",
           a->input, cli_batch_words(a->input, batch, share, sizeof share), chip->name,
           (long long)rotor_chip_cores(chip));
    printf("%-40s %9s %6s %11s %11s %10s  %s\n", "sub-graph", "instances", "group", "model (us)", "sim (us)",
           "difference", "model / sim (us): instance, entry, lost hand-offs");
    for (int k = 0; k < r->nsg; k++) {
        const rotor_gticca_replay_sg *s = &r->sg[k];
        char name[96];
        snprintf(name, sizeof name, "%.46s..%.46s", g->ops[s->first].name, g->ops[s->last].name);
        printf("%-40s %9lld %6lld %11.3f %11.3f %+9.2f%%  %.3f / %.3f, %.3f / %.3f, %.3f / %.3f\n", name,
               (long long)s->instances, (long long)s->group_cores, s->model_s * 1e6, s->simulated_s * 1e6,
               pct(s->simulated_s - s->model_s, s->model_s), s->model_instance_s * 1e6,
               s->simulated_instance_s * 1e6, s->model_entry_s * 1e6, s->simulated_entry_s * 1e6,
               s->model_lost_s * 1e6, s->simulated_lost_s * 1e6);
    }
    if (!r->nsg) printf("(none: no sub-graph runs faster as instances)\n");
    printf("\nT10 on the simplified graph: model %.3f us, simulated %.3f us: %+.2f%%\n", r->t10_model_s * 1e6,
           r->t10_simulated_s * 1e6, pct(r->t10_simulated_s - r->t10_model_s, r->t10_model_s));
    printf("graphturbo: model %.3f us, simulated %.3f us: %+.2f%%; %lld tasks\n", r->model_s * 1e6,
           r->simulated_s * 1e6, pct(r->simulated_s - r->model_s, r->model_s), (long long)r->tasks);
}

/* The model compiled as rotor compile --group graphturbo does on a chip
 * without a GB (T10's schedule of the simplified graph, the instances
 * priced), its program kept, then the plan replayed. */
static int cmd_gticcasim(const simulate_args *a, const rotor_chip *chip, rotor_pipeline_options *po) {
    const char *cmd = "simulate";
    cli_progress bar;
    cli_progress_begin(&bar, cmd, "compiling: operator shapes searched", a->sa.quiet);
    po->compile.progress = cli_progress_step;
    po->compile.progress_ctx = &bar;
    rotor_error err = {{0}};
    rotor_pipeline p;
    rotor_status st = rotor_pipeline_run(po, chip, &p, &err);
    cli_progress_end(&bar);
    if (!st) cli_cache_warn(cmd, &po->compile, &p.t10);
    po->compile.progress = NULL;
    rotor_gticca_replay_result r = {0};
    if (!st) st = rotor_gticca_replay(&p.graph, chip, &p.program, &p.t10, &po->compile, &r, &err);
    int rc = st ? cli_fail(cmd, st, &err) : 0;
    char *out = NULL;
    if (!rc && a->json)
        rc = print_doc(rotor_doc_graphturbo_icca_sim(a->input, chip, po->zoo.batch, &p.graph, &r, &out, &err), &out, &err);
    else if (!rc) gticcasim_table(a, chip, po->zoo.batch, &p.graph, &r);
    rotor_gticca_replay_result_free(&r);
    rotor_pipeline_free(&p);
    return rc;
}

/* The model's graph as rotor compile --group graphturbo schedules it (one
 * cluster's share, simplified), each step replayed. */
static int cmd_gtsim(const simulate_args *a) {
    const char *cmd = "simulate";
    rotor_pipeline_options po = {.zoo = {.batch = 1}};
    po.zoo.phase = ROTOR_PHASE_PREFILL;
    if (cli_shared_model(cmd, a->input, &a->sa, false, &po)) return EXIT_BADINPUT;
    rotor_error err = {{0}};
    rotor_chip chip;
    rotor_dsa_cluster cl;
    rotor_status st = cli_chip(a->sa.chip, a->sa.sets, a->sa.nsets, &chip, &err);
    /* as rotor compile --group graphturbo: the loops as it chooses them (they need the steps timed) */
    if (!st) rotor_pipeline_graphturbo_options(&po, &chip, true, a->no_loops);
    if (!st && !rotor_chip_has_gb(&chip)) return cmd_gticcasim(a, &chip, &po); /* an ICCA chip: core groups */
    if (!st) st = rotor_dsa_cluster_of(&chip, &cl, &err); /* a chip with a GB but no DDR, in one line, before the work */
    if (st) return cli_fail(cmd, st, &err);
    int src = cli_graphturbo_sets(cmd, a->sa.chip, a->sa.sets, a->sa.nsets, &chip);
    if (src) return src;
    char what[96], bw[64];
    snprintf(what, sizeof what, "%s: numbers of passes scheduled",
             cli_batch_words(a->input, po.zoo.batch, bw, sizeof bw));
    cli_progress prog;
    cli_progress_begin(&prog, cmd, what, a->sa.quiet);
    po.compile.progress = cli_progress_step;
    po.compile.progress_ctx = &prog;
    rotor_pipeline p;
    st = rotor_pipeline_run(&po, &chip, &p, &err);
    cli_progress_end(&prog);
    /* each step replayed, and in its passes (the steps in one pass are r's) */
    rotor_gtreplay_result r[ROTOR_DSA_STEPS], lr[ROTOR_DSA_STEPS];
    bool loops = false;
    if (!st) st = rotor_pipeline_dsa_replay(&po, &chip, &p, r, lr, &loops, &err);
    int rc = st ? cli_fail(cmd, st, &err) : 0;
    char *out = NULL;
    if (!rc && a->json)
        rc = print_doc(rotor_doc_graphturbo_sim(a->input, &chip, po.zoo.batch, r, &p.loops, loops ? lr : NULL, &out, &err),
                       &out, &err);
    else if (!rc) gtsim_table(a->input, &chip, po.zoo.batch, r, &p.loops, loops ? lr : NULL);
    rotor_pipeline_free(&p);
    return rc;
}

int cmd_simulate(int argc, char **argv) {
    const char *cmd = "simulate";
    if (wants_baseline(argc, argv)) return cmd_baseline(argc, argv);
    simulate_args a = {0};
    int rc = parse_simulate(argc, argv, &a);
    if (rc >= 0) return rc;
    if (a.graphturbo && a.profile) {
        cli_trace_filter_free(&a.filter);
        return cli_usage_error(cmd, "--profile times T10's phases: it conflicts with --group graphturbo");
    }
    if (a.graphturbo) {
        rc = cmd_gtsim(&a);
        cli_trace_filter_free(&a.filter);
        return rc;
    }
    rc = 0;
    rotor_error err = {{0}};
    rotor_status st = ROTOR_OK;
    rotor_chip chip;
    rotor_pipeline p = {0};
    cli_output trace = {0};
    if (a.tr.file) {
        char name[300], base[256];
        if (a.from_program) snprintf(base, sizeof base, "%s", a.input);
        else cli_model_base(a.input, base, sizeof base);
        char *slash = strrchr(base, '/'), *dot = strrchr(base, '.');
        if (a.from_program && dot && !strcmp(dot, ".json")) *dot = '\0';
        snprintf(name, sizeof name, "%s-trace.json", slash ? slash + 1 : base);
        if ((rc = cli_output_open(cmd, "--trace", a.tr.file, name, &trace))) {
            cli_trace_filter_free(&a.filter);
            return rc;
        }
    }
    const rotor_program *prog = &p.program;
    double t_start = rotor_clock_s(), t_replay = 0;
    if (a.from_program) {
        if ((st = read_program(&a, &chip, &p.program, &err))) rc = cli_fail(cmd, st, &err);
    } else {
        rc = compile_program(&a, &chip, &p);
    }
    /* a program is replayed on another network (docs/simulator.md, "Another chip") */
    if (!rc && a.from_program && a.topo && (st = cli_apply_topology(&chip, a.topo, &err))) rc = cli_fail(cmd, st, &err);
    rotor_replay_result rr = {0};
    cli_progress bar;
    cli_progress_begin(&bar, cmd, "replaying", a.sa.quiet);
    rotor_replay_options ro = {.progress = {cli_progress_sim, &bar}};
    if (!rc && a.tr.file) { /* streamed with the replay; the default filter from the tasks expected */
        cli_trace_prepare(&a.filter, rotor_replay_task_estimate(prog), prog->cores);
        ro.trace = trace.f;
        ro.trace_filter = &a.filter.f;
    }
    t_replay = rotor_clock_s();
    if (!rc && (st = rotor_replay(prog, &chip, &ro, &rr, NULL, &err))) rc = cli_trace_fail(cmd, &trace, st, &err);
    t_replay = rotor_clock_s() - t_replay;
    cli_progress_end(&bar);
    if (!rc && a.profile)
        cli_profile_print(cmd, &p, &(cli_profile_extra){.replay_s = t_replay}, rotor_clock_s() - t_start);
    if (!rc && a.tr.file) rc = cli_trace_done(cmd, &trace, &a.filter, &rr.trace, a.sa.quiet);
    cli_output_abort(&trace); /* after a failure; a written trace was committed */
    if (rc || trace.is_stdout) {
        /* --trace -: the trace alone on stdout */
    } else if (a.json) {
        char *out = NULL;
        if ((st = rotor_doc_simulation(prog, &chip, &rr, &out, &err))) rc = cli_fail(cmd, st, &err);
        else cli_puts(out);
        rotor_free(out);
    } else {
        print_table(prog, &chip, &rr, a.compare);
    }
    rotor_replay_result_free(&rr);
    rotor_pipeline_free(&p);
    cli_trace_filter_free(&a.filter);
    return rc;
}
