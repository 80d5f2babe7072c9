/* docopts.c — rotor_doc (pipeline/doc.h): a command run from an options
 * object, for callers without the CLI (the Python package, docs/python.md).
 * The keys are the command's long options; each value is checked as the
 * CLI checks the option, and the messages name it the same way ("--batch:
 * ...").  The documents are doc.c's and op/planfile.c's, as the CLI's. */
#include "rotor/pipeline/doc.h"
#include "rotor/pipeline/explore.h"

#include "base/jsontext.h"
#include "rotor/base/gpu.h"
#include "pipeline/docint.h"
#include "rotor/op/cost.h"
#include "rotor/op/expr.h"
#include "rotor/op/planfile.h"
#include "rotor/op/search.h"
#include "rotor/model/zoo.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC_MAX_SETS 64

/* The options of every command rotor_doc runs, as given (NULL, 0: absent). */
typedef struct doc_opts {
    const char *expr, *dim, *chip, *constraints, *cost_model, *solver, *model, *input, *design, *group;
    const char *sets[DOC_MAX_SETS];
    int nsets;
    const char *sweeps[DOC_MAX_SETS];
    int nsweeps;
    int64_t batch, seq, layers, threads, tp, max_orders;
    double pareto_within, hbm_tbps;
    bool pareto, compare, decode, prefill, sram_nonblocking, per_op, no_refine, zip, no_loops, values;
} doc_opts;

/* One option: its name with '-' (the CLI's), its kind, its slot, the
 * commands that take it (DOC_PLAN, ...) and an integer's range. */
enum {
    DOC_PLAN = 1,
    DOC_COMPILE = 2,
    DOC_SIMULATE = 4,
    DOC_SCHEDULE = 8,
    DOC_EXPLORE = 16,
    DOC_HBM = DOC_SCHEDULE | DOC_EXPLORE,
    DOC_MODEL = DOC_COMPILE | DOC_SIMULATE | DOC_HBM,
    DOC_ALL = 31
};
typedef enum { K_STR, K_INT, K_RATIO, K_TBPS, K_FLAG, K_SETS, K_SWEEPS } doc_kind;
typedef struct doc_key {
    const char *name;
    doc_kind kind;
    size_t off;
    unsigned cmds;
    int64_t lo, hi;
} doc_key;

/* The ranges are the CLI's (src/cli/options.c): --batch up to 2^20, --seq
 * 2^24, --layers 1000, --threads 1024. */
static const doc_key KEYS[] = {
    {"expr", K_STR, offsetof(doc_opts, expr), DOC_PLAN, 0, 0},
    {"dim", K_STR, offsetof(doc_opts, dim), DOC_ALL, 0, 0},
    {"chip", K_STR, offsetof(doc_opts, chip), DOC_ALL, 0, 0},
    {"set", K_SETS, offsetof(doc_opts, sets), DOC_ALL, 0, 0},
    {"threads", K_INT, offsetof(doc_opts, threads), DOC_ALL, 1, 1024},
    {"solver", K_STR, offsetof(doc_opts, solver), DOC_ALL, 0, 0},
    {"pareto", K_FLAG, offsetof(doc_opts, pareto), DOC_PLAN, 0, 0},
    {"pareto-within", K_RATIO, offsetof(doc_opts, pareto_within), DOC_PLAN, 0, 0},
    {"constraints", K_STR, offsetof(doc_opts, constraints), DOC_PLAN, 0, 0},
    {"cost-model", K_STR, offsetof(doc_opts, cost_model), DOC_PLAN, 0, 0},
    {"model", K_STR, offsetof(doc_opts, model), DOC_MODEL, 0, 0},
    {"input", K_STR, offsetof(doc_opts, input), DOC_MODEL, 0, 0},
    {"batch", K_INT, offsetof(doc_opts, batch), DOC_MODEL, 1, 1 << 20},
    {"seq", K_INT, offsetof(doc_opts, seq), DOC_MODEL, 1, 1 << 24},
    {"layers", K_INT, offsetof(doc_opts, layers), DOC_MODEL, 1, 1000},
    {"decode", K_FLAG, offsetof(doc_opts, decode), DOC_MODEL, 0, 0},
    {"prefill", K_FLAG, offsetof(doc_opts, prefill), DOC_MODEL, 0, 0},
    {"compare", K_FLAG, offsetof(doc_opts, compare), DOC_COMPILE, 0, 0},
    {"group", K_STR, offsetof(doc_opts, group), DOC_COMPILE | DOC_SIMULATE, 0, 0},
    {"no-loops", K_FLAG, offsetof(doc_opts, no_loops), DOC_COMPILE | DOC_SIMULATE, 0, 0},
    {"values", K_FLAG, offsetof(doc_opts, values), DOC_COMPILE, 0, 0},
    {"hbm-bw", K_TBPS, offsetof(doc_opts, hbm_tbps), DOC_HBM, 0, 0},
    {"design", K_STR, offsetof(doc_opts, design), DOC_HBM, 0, 0},
    {"tp", K_INT, offsetof(doc_opts, tp), DOC_HBM, 1, 1024},
    {"max-orders", K_INT, offsetof(doc_opts, max_orders), DOC_HBM, 1, 1 << 24},
    {"sram-nonblocking", K_FLAG, offsetof(doc_opts, sram_nonblocking), DOC_HBM, 0, 0},
    {"per-op", K_FLAG, offsetof(doc_opts, per_op), DOC_SCHEDULE, 0, 0},
    {"no-refine", K_FLAG, offsetof(doc_opts, no_refine), DOC_SCHEDULE, 0, 0},
    {"sweep", K_SWEEPS, offsetof(doc_opts, sweeps), DOC_EXPLORE, 0, 0},
    {"zip", K_FLAG, offsetof(doc_opts, zip), DOC_EXPLORE, 0, 0},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

/* The key with '_' read as '-' ("pareto_within" is --pareto-within). */
static const doc_key *find_key(const char *name) {
    char k[64];
    snprintf(k, sizeof k, "%s", name);
    for (char *c = k; *c; c++)
        if (*c == '_') *c = '-';
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(KEYS[i].name, k)) return &KEYS[i];
    return NULL;
}

/* One value into its slot, checked as the CLI checks the option. */
static rotor_status read_value(const doc_key *k, const cJSON *v, doc_opts *o, rotor_error *err) {
    char got[96];
    rotor_json_describe(v, got, sizeof got);
    void *slot = (char *)o + k->off;
    switch (k->kind) {
    case K_STR:
        if (!cJSON_IsString(v)) return rotor_fail(err, ROTOR_ERR_INPUT, "--%s: expected a string, got %s", k->name, got);
        *(const char **)slot = v->valuestring;
        return ROTOR_OK;
    case K_FLAG:
        if (!cJSON_IsBool(v)) return rotor_fail(err, ROTOR_ERR_INPUT, "--%s: expected true or false, got %s", k->name, got);
        *(bool *)slot = cJSON_IsTrue(v);
        return ROTOR_OK;
    case K_TBPS: /* --hbm-bw in TB/s, the whole package's, as a number; the CLI's limit */
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 1e3)
            return rotor_fail(err, ROTOR_ERR_INPUT, "--%s: expected a positive bandwidth in TB/s, got %s", k->name, got);
        *(double *)slot = v->valuedouble;
        return ROTOR_OK;
    case K_RATIO:
        /* --pareto-within: a ratio of at least 1 (rotor plan) */
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1) || v->valuedouble > 1e9)
            return rotor_fail(err, ROTOR_ERR_INPUT, "--%s: expected a ratio of at least 1, got %s", k->name, got);
        *(double *)slot = v->valuedouble;
        return ROTOR_OK;
    case K_INT:
        /* the range is checked on the double before the cast (out of range is undefined) */
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= (double)k->lo && v->valuedouble <= (double)k->hi) ||
            v->valuedouble != floor(v->valuedouble))
            return rotor_fail(err, ROTOR_ERR_INPUT, "--%s: expected an integer from %lld to %lld, got %s", k->name,
                              (long long)k->lo, (long long)k->hi, got);
        *(int64_t *)slot = (int64_t)v->valuedouble;
        return ROTOR_OK;
    case K_SETS:
    case K_SWEEPS: { /* one "KEY=VALUE" or a list of them, as --set (--sweep) repeated */
        const cJSON *it = v;
        bool list = cJSON_IsArray(v);
        int *n = k->kind == K_SETS ? &o->nsets : &o->nsweeps;
        if (list) it = v->child;
        for (; it; it = list ? it->next : NULL) {
            if (!cJSON_IsString(it) || *n == DOC_MAX_SETS)
                return rotor_fail(err, ROTOR_ERR_INPUT, "--%s: expected KEY=VALUE or a list of at most %d, got %s",
                                  k->name, DOC_MAX_SETS, got);
            ((const char **)slot)[(*n)++] = it->valuestring;
        }
        return ROTOR_OK;
    }
    }
    return ROTOR_OK;
}

/* options (a JSON object, or NULL / "" for none) into o for command cmd;
 * *root keeps the strings o points into (cJSON_Delete it). */
static rotor_status read_options(const char *command, unsigned cmd, const char *options, doc_opts *o, cJSON **root,
                                 rotor_error *err) {
    memset(o, 0, sizeof *o);
    *root = NULL;
    if (!options || !*options) return ROTOR_OK;
    rotor_status pst = rotor_json_parse(options, strlen(options), "options", root, err);
    if (pst) return pst;
    if (!cJSON_IsObject(*root))
        return rotor_fail(err, ROTOR_ERR_INPUT, "options: expected a JSON object of %s's options", command);
    const cJSON *it;
    cJSON_ArrayForEach(it, *root) {
        const doc_key *k = find_key(it->string);
        if (!k || !(k->cmds & cmd))
            return rotor_fail(err, ROTOR_ERR_INPUT, "options: unknown option '%s' for %s (docs/python.md)", it->string,
                              command);
        rotor_status st = read_value(k, it, o, err);
        if (st) return st;
    }
    return ROTOR_OK;
}

rotor_status rotor_doc_chip_sets(rotor_chip *chip, const char *const *sets, int nsets, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    for (int i = 0; i < nsets; i++)
        if ((st = rotor_chip_set(chip, sets[i], err))) return st;
    if ((st = rotor_chip_validate(chip, err))) rotor_error_prefix(err, "chip after --set");
    return st;
}

rotor_status rotor_doc_chip(const char *spec, const char *const *sets, int nsets, rotor_chip *out, rotor_error *err) {
    rotor_status st = rotor_chip_resolve(spec ? spec : "ipu-mk2", out, err);
    return st ? st : rotor_doc_chip_sets(out, sets, nsets, err);
}

rotor_status rotor_doc_program_chip(const char *text, const char *label, const char *const *sets, int nsets,
                                    rotor_chip *out, bool *carried, rotor_error *err) {
    rotor_status st = rotor_program_chip(text, label, out, carried, err);
    return st || !*carried ? st : rotor_doc_chip_sets(out, sets, nsets, err);
}

rotor_status rotor_doc_expr(const char *expr, const char *dims, rotor_expr *e, rotor_error *err) {
    rotor_status st;
    if ((st = rotor_expr_parse(expr, e, err))) {
        rotor_error_prefix(err, "--expr");
        return st;
    }
    /* binding reports a column of the expression ("column 15: ...") or a dimension */
    if ((st = rotor_expr_bind(e, dims, err))) rotor_error_prefix(err, err->msg[0] == 'c' ? "--expr" : "--dim");
    return st;
}

/* rotor plan --json (docs/plan-format.md). */
static rotor_status doc_plan(const doc_opts *o, char **out, rotor_error *err) {
    if (!o->expr) return rotor_fail(err, ROTOR_ERR_INPUT, "--expr is required");
    if (!o->dim) return rotor_fail(err, ROTOR_ERR_INPUT, "--dim is required (e.g. --dim m=32,k=5120,n=15360)");
    rotor_search_options opt = {.pareto = o->pareto || o->pareto_within > 0, .pareto_time_ratio = o->pareto_within,
                                .threads = (int)o->threads, .model = rotor_cost_model_default()};
    if (o->solver && !rotor_solver_find(o->solver, &opt.solver))
        return rotor_fail(err, ROTOR_ERR_INPUT, "--solver: expected exact, fast, random or ml, got '%s'", o->solver);
    if (o->cost_model && !(opt.model = rotor_cost_model_find(o->cost_model)))
        return rotor_fail(err, ROTOR_ERR_INPUT, "--cost-model: unknown model '%s' (known: v1)", o->cost_model);
    rotor_status st;
    if (o->constraints && (st = rotor_constraints_parse(o->constraints, &opt.constraints, err))) return st;
    rotor_chip chip;
    rotor_expr e;
    rotor_search_result r;
    if ((st = rotor_doc_chip(o->chip, o->sets, o->nsets, &chip, err)) || (st = rotor_doc_expr(o->expr, o->dim, &e, err)) ||
        (st = rotor_search(&e, &chip, &opt, &r, err)))
        return st;
    *out = rotor_planfile_write(&e, &chip, opt.model->name, &r);
    rotor_search_result_free(&r);
    return *out ? ROTOR_OK : rotor_nomem(err);
}

/* The model options of compile, simulate and schedule into po, checked as
 * the CLI checks them (src/cli/options.c, cli_shared_model); phase: the
 * phase unless --decode or --prefill. */
static rotor_status model_options(const doc_opts *o, rotor_phase phase, rotor_pipeline_options *po, rotor_error *err) {
    if (!o->model) return rotor_fail(err, ROTOR_ERR_INPUT, "a model is required (the option \"model\")");
    if (o->decode && o->prefill) return rotor_fail(err, ROTOR_ERR_INPUT, "--decode and --prefill: give one");
    if (rotor_model_is_onnx(o->model) && (o->batch || o->seq || o->layers || o->decode || o->prefill))
        return rotor_fail(err, ROTOR_ERR_INPUT, "--batch, --seq, --layers, --decode and --prefill shape zoo models; "
                          "bind an ONNX file's dimensions with --dim (e.g. --dim batch=8)");
    po->model = o->model;
    po->zoo = (rotor_zoo_options){.batch = o->batch ? o->batch : 1, .seq = o->seq, .layers = o->layers,
                                  .phase = o->decode ? ROTOR_PHASE_DECODE : o->prefill ? ROTOR_PHASE_PREFILL : phase};
    po->onnx.dims = o->dim;
    po->onnx.input_shapes = o->input;
    po->compile.threads = (int)o->threads;
    if (o->solver && !rotor_solver_find(o->solver, &po->compile.solver))
        return rotor_fail(err, ROTOR_ERR_INPUT, "--solver: expected exact, fast, random or ml, got '%s'", o->solver);
    return ROTOR_OK;
}

/* The model of rotor compile / simulate compiled to its program, as they
 * compile it: prefill, batch 1 unless given, the T10 program (and the VGM
 * baselines with compare). */
static rotor_status doc_pipeline(const doc_opts *o, rotor_chip *chip, rotor_pipeline *p, rotor_error *err) {
    memset(p, 0, sizeof *p);
    rotor_pipeline_options po = {.t10 = true, .program = true, .vgm = o->compare, .vgm_oracle = o->compare,
                                 .no_group = o->group && !strcmp(o->group, "none")}; /* checked by rotor_doc */
    rotor_status st = model_options(o, ROTOR_PHASE_PREFILL, &po, err);
    if (!st) st = rotor_doc_chip(o->chip, o->sets, o->nsets, chip, err);
    return st ? st : rotor_pipeline_run(&po, chip, p, err);
}

/* The chip of rotor schedule: ipu-pod4 unless given, --hbm-bw the whole
 * package's bandwidth, --tp at most its chips with check_tp (explore checks
 * it at every point when chips are swept) (src/cli/schedule.c). */
static rotor_status schedule_chip(const doc_opts *o, bool check_tp, rotor_chip *chip, rotor_error *err) {
    rotor_status st = rotor_doc_chip(o->chip ? o->chip : "ipu-pod4", o->sets, o->nsets, chip, err);
    if (st) return st;
    if (o->hbm_tbps > 0 && chip->hbm_controllers == 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--hbm-bw: chip '%s' has no HBM (set hbm_bytes, hbm_gbps and "
                          "hbm_controllers, or use ipu-pod4)", chip->name);
    if (o->hbm_tbps > 0) chip->hbm_gbps = o->hbm_tbps * 1000.0 / (double)chip->chips;
    if (check_tp && o->tp > chip->chips)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--tp: expected 1..%lld (the chips of %s), got %lld",
                          (long long)chip->chips, chip->name, (long long)o->tp);
    return ROTOR_OK;
}

/* The model and schedule options of schedule and explore, as the CLI's
 * cli_hbm_workload reads them: a zoo LLM runs its decode step unless
 * --prefill. */
static rotor_status hbm_workload(const doc_opts *o, rotor_pipeline_options *po, rotor_schedule_options *so,
                                 rotor_error *err) {
    const char *m = o->model ? o->model : "";
    const rotor_zoo_entry *z = rotor_model_is_onnx(m) ? NULL : rotor_zoo_find(m);
    rotor_status st = model_options(o, z && z->llm ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL, po, err);
    *so = (rotor_schedule_options){.tensor_parallel = o->tp, .sram_nonblocking = o->sram_nonblocking,
                                   .threads = po->compile.threads, .solver = po->compile.solver};
    so->preload.max_orders = o->max_orders;
    so->preload.no_refine = o->no_refine;
    return st;
}

/* rotor schedule MODEL --json: the designs asked for (all by default), as
 * the CLI runs them without --simulate (docs/schedule.md). */
static rotor_status doc_schedule(const doc_opts *o, char **out, rotor_error *err) {
    rotor_pipeline_options po = {0};
    rotor_schedule_options so;
    rotor_status st = hbm_workload(o, &po, &so, err);
    po.schedule = &so;
    rotor_preload_design designs[ROTOR_PRELOAD_NDESIGNS];
    int ndesigns = 0;
    rotor_chip chip;
    if (!st) st = rotor_doc_designs(o->design, designs, &ndesigns, err);
    if (!st) st = schedule_chip(o, true, &chip, err);
    if (st) return st;
    rotor_pipeline p;
    rotor_doc_schedule_run runs[ROTOR_PRELOAD_NDESIGNS + 2];
    memset(runs, 0, sizeof runs);
    int nruns = 0, shown = 0;
    if (!(st = rotor_pipeline_run(&po, &chip, &p, err)))
        st = rotor_doc_schedule_designs(p.schedule, designs, ndesigns, runs, &nruns, &shown, err);
    const rotor_doc_schedule_run *ideal = NULL;
    for (int i = 0; i < nruns; i++)
        if (runs[i].design == ROTOR_PRELOAD_IDEAL) ideal = &runs[i];
    const char *per = rotor_doc_energy_per(po.zoo.phase == ROTOR_PHASE_DECODE, po.zoo.batch, "step");
    if (!st) st = rotor_doc_schedule(&p.graph, p.schedule, runs, shown, ideal, o->per_op, NULL, per, out, err);
    for (int i = 0; i < nruns; i++) rotor_schedule_report_free(&runs[i].rep);
    rotor_pipeline_free(&p);
    return st;
}

/* The grid of rotor explore's --sweep and --zip, checked as the CLI checks
 * them (src/cli/explore.c), into g. */
static rotor_status explore_grid(const doc_opts *o, ex_grid *g, rotor_error *err) {
    if (o->nsweeps == 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--sweep KEY=V1,V2,... is required (keys: hbm-bw, noc-bw, cores, "
                          "flops, sram, chips, topology, batch, seq)");
    if (o->nsweeps > EX_NKEYS)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--sweep: at most %d keys, got %d", EX_NKEYS, o->nsweeps);
    if (o->zip && o->nsweeps < 2)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--zip pairs the lists of two or more --sweep keys");
    memset(g, 0, sizeof *g);
    g->zip = o->zip;
    g->naxes = o->nsweeps;
    rotor_status st = ROTOR_OK;
    for (int w = 0; w < o->nsweeps && !st; w++) st = rotor_ex_parse_sweep(o->sweeps[w], &g->axes[w], err);
    if (!st) st = rotor_ex_grid_finish(g, err);
    return st ? st : rotor_ex_grid_check_model(g, o->model ? o->model : "", o->batch != 0, o->seq != 0, err);
}

/* rotor explore MODEL --sweep ... --json: every point of the grid
 * scheduled (in parallel, as the CLI's one rank), no file written, so the
 * document has no "csv" nor "svg" (docs/python.md). */
static rotor_status doc_explore(const doc_opts *o, char **out, rotor_error *err) {
    rotor_pipeline_options po = {0};
    rotor_schedule_options so;
    rotor_status st = hbm_workload(o, &po, &so, err);
    so.solver = ROTOR_SOLVER_EXACT; /* as the CLI's explore, whose schedules ignore --solver (cli_hbm_workload) */
    rotor_preload_design designs[EX_ND];
    int nd = 0;
    bool want[EX_ND] = {0};
    ex_grid *g = malloc(sizeof *g); /* 9 axes of 64 values: too large for a stack frame */
    if (!g) return rotor_nomem(err);
    rotor_chip chip;
    if (!st) st = rotor_doc_designs(o->design, designs, &nd, err);
    if (!st) st = explore_grid(o, g, err);
    if (!st) st = schedule_chip(o, g->axis_of[KEY_CHIPS] < 0, &chip, err);
    for (int k = 0; k < nd; k++) want[designs[k]] = true;
    want[ROTOR_PRELOAD_IDEAL] = true; /* percent_of_ideal in every row */
    ex_point *pts = NULL;
    rotor_pipeline *pls = NULL;
    int nshapes = 0;
    if (!st) st = rotor_ex_prepare(g, &chip, &po, so.tensor_parallel, &pts, &pls, &nshapes, err);
    /* the points' frontiers, shared where they differ only in HBM (hbm/searchmemo.h) */
    so.memo = st ? NULL : rotor_search_memo_new();
    if (!st && !so.memo) st = rotor_nomem(err);
    if (!st) {
        int n = g->npts, threads = so.threads ? (int)so.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (int i = 0; i < n; i++) rotor_ex_point_run(g, &pls[pts[i].shape].graph, &so, want, designs, nd, &pts[i]);
        st = rotor_ex_check_fits(g, pts, err);
    }
    if (!st)
        st = rotor_ex_doc(g, pts, designs, nd, pls[pts[0].shape].graph.name, &chip, NULL, NULL, 0, out, err);
    rotor_ex_points_free(pts, g->npts, pls, nshapes);
    rotor_search_memo_free(so.memo);
    free(g);
    return st;
}

/* rotor simulate MODEL --json: the program replayed (docs/simulator.md). */
static rotor_status doc_simulate(const rotor_pipeline *p, const rotor_chip *chip, char **out, rotor_error *err) {
    rotor_replay_options ro = {0};
    rotor_replay_result rr = {0};
    rotor_status st = rotor_replay(&p->program, chip, &ro, &rr, NULL, err);
    if (!st) st = rotor_doc_simulation(&p->program, chip, &rr, out, err);
    rotor_replay_result_free(&rr);
    return st;
}

/* rotor compile|simulate MODEL --group graphturbo --json (docs/graphturbo.md),
 * as the CLI runs them (src/cli/compile.c, simulate.c): the simplified
 * graph; on a chip with a GB its five steps, compile's with §5.1's loops
 * and simulate's replayed, in their passes too (no_loops: neither); without
 * one, T10's schedule with sub-graphs as instances on core groups, and
 * simulate's replayed. */
static rotor_status doc_graphturbo(const doc_opts *o, unsigned cmd, char **out, rotor_error *err) {
    if (o->compare) /* the CLI's lines (src/cli/compile.c, simulate.c) */
        return rotor_fail(err, ROTOR_ERR_INPUT, "--group graphturbo times GraphTurbo's schedules: it conflicts with --compare");
    if (cmd == DOC_SIMULATE && o->solver)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--group graphturbo replays GraphTurbo's schedules: it conflicts with --solver");
    rotor_pipeline_options po = {0};
    rotor_chip chip;
    rotor_dsa_cluster cl;
    rotor_status st = model_options(o, ROTOR_PHASE_PREFILL, &po, err);
    if (!st) st = rotor_doc_chip(o->chip, o->sets, o->nsets, &chip, err);
    bool gb = !st && rotor_chip_has_gb(&chip);
    if (gb) st = rotor_dsa_cluster_of(&chip, &cl, err); /* a GB without off-chip memory, in one line, before the work */
    if (!st) st = rotor_pipeline_graphturbo_flags(true, o->no_loops, o->values, &chip, err);
    if (st) return st;
    rotor_pipeline_graphturbo_options(&po, &chip, cmd == DOC_SIMULATE, o->no_loops);
    po.dsa_values = o->values;
    rotor_pipeline p;
    st = rotor_pipeline_run(&po, &chip, &p, err);
    if (!st && cmd == DOC_COMPILE) {
        st = rotor_doc_graphturbo(&p, &chip, o->model, po.zoo.batch, out, err);
    } else if (!st && gb) {
        rotor_gtreplay_result r[ROTOR_DSA_STEPS], lr[ROTOR_DSA_STEPS];
        bool looped = false;
        st = rotor_pipeline_dsa_replay(&po, &chip, &p, r, lr, &looped, err);
        if (!st) st = rotor_doc_graphturbo_sim(o->model, &chip, po.zoo.batch, r, &p.loops, looped ? lr : NULL, out, err);
    } else if (!st) {
        rotor_gticca_replay_result r = {0};
        st = rotor_gticca_replay(&p.graph, &chip, &p.program, &p.t10, &po.compile, &r, err);
        if (!st) st = rotor_doc_graphturbo_icca_sim(o->model, &chip, po.zoo.batch, &p.graph, &r, out, err);
        rotor_gticca_replay_result_free(&r);
    }
    rotor_pipeline_free(&p);
    return st;
}

rotor_status rotor_doc(const char *command, const char *options, char **out, rotor_error *err) {
    *out = NULL;
    static const char *const names[] = {"plan", "compile", "simulate", "schedule", "explore"};
    unsigned cmd = 0;
    for (unsigned i = 0; i < 5; i++)
        if (command && !strcmp(command, names[i])) cmd = 1u << i;
    if (!cmd)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "unknown command '%s' (rotor_doc runs plan, compile, simulate, schedule and explore)",
                          command ? command : "(null)");
    doc_opts o;
    cJSON *root;
    rotor_status st = read_options(command, cmd, options, &o, &root, err);
    /* a GPU's plans and compiles are the command line's (src/cli/plangpu.c,
     * compilegpu.c): refused here in a line that says so, not in the chip's
     * "only rotor plan and rotor compile model a GPU", which read as a
     * contradiction from rotor.plan (found by an audit helper) */
    if (!st && o.chip && rotor_gpu_spec_is_gpu(o.chip))
        st = rotor_fail(err, ROTOR_ERR_INPUT,
                        "chip '%s' is a GPU: rotor_doc (and the Python package) models none; the command line's "
                        "rotor plan and rotor compile do (docs/gpu.md)", o.chip);
    if (!st && cmd == DOC_PLAN) st = doc_plan(&o, out, err);
    if (!st && cmd == DOC_SCHEDULE) st = doc_schedule(&o, out, err);
    if (!st && cmd == DOC_EXPLORE) st = doc_explore(&o, out, err);
    bool graphturbo = false, no_group = false;
    if (!st) st = rotor_pipeline_group_parse(o.group, &graphturbo, &no_group, err);
    if (!st) st = rotor_pipeline_graphturbo_flags(graphturbo, o.no_loops, o.values, NULL, err);
    if (!st && graphturbo) {
        st = doc_graphturbo(&o, cmd, out, err);
    } else if (!st && (cmd == DOC_COMPILE || cmd == DOC_SIMULATE)) {
        rotor_chip chip;
        rotor_pipeline p;
        st = doc_pipeline(&o, &chip, &p, err);
        if (!st && cmd == DOC_COMPILE) st = rotor_doc_compile(&p, &chip, o.compare, out, err);
        if (!st && cmd == DOC_SIMULATE) st = doc_simulate(&p, &chip, out, err);
        rotor_pipeline_free(&p);
    }
    cJSON_Delete(root);
    return st;
}
