/* rotor compile — whole-model compilation of a zoo model (docs/compile.md),
 * the VGM baseline beside it (docs/vgm.md), batch sweeps, program files. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rotor/base/clock.h"
#include "gpucli.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/program.h"
#include "rotor/compile/vgm.h"
#include "rotor/model/zoo.h"
#include "rotor/pipeline/doc.h"
#include "rotor/pipeline/pipeline.h"

#define MAX_BATCHES 32

static void compile_usage(FILE *f) {
    fprintf(f,
            "usage: rotor compile MODEL|FILE.onnx [options]\n"
            "\n"
            "Compiles a zoo model or an ONNX file (docs/onnx.md) onto the chip's distributed SRAM after T10: operators grouped\n"
            "(epilogues fused), the Pareto frontier of every operator, idle and active plans,\n"
            "and the inter-operator memory reconciliation of T10's Algorithm 1.\n"
            "'rotor compile --list' names the models.\n"
            "\n"
            "  --chip NAME|FILE    preset (ipu-mk2, ipu-pod4, ipu-pod16, ipu-mk2-mesh, wormhole-n150,\n"
            "                      wse2, stcp920) or chip file; default ipu-mk2; a GPU (a100-80gb,\n"
            "                      a100-40gb, h100-sxm, or a file of kind gpu) times kernels (docs/gpu.md)\n"
            "  --set KEY=VALUE     override one chip field (repeatable)\n"
            "  --batch N[,N...]    batch size; a list sweeps, doubling from the last until the\n"
            "                      model no longer fits (that one is marked x); default 1\n"
            "  --seq N             sequence length (default: the model's)\n"
            "  --layers N          layers (default: the model's)\n"
            "  --decode            the LLMs' decode step (--prefill, the default: their prefill)\n"
            "  --dim k=v,...       bind an ONNX file's symbolic dimensions (e.g. batch=8,seq=128)\n"
            "  --input NAME=AxB,.. replace an ONNX input's declared shape\n"
            "  --value NAME=SPEC   give a shape-deciding ONNX input its value: FILE.pb or 1,2,3 (repeatable)\n"
            "  --max-model-bytes N refuse a model file over N bytes (default 2 GiB, docs/onnx.md)\n"
            "  --simplify          fold BatchNormalization into its convolution and fold constants\n"
            "                      before grouping (docs/simplify.md)\n"
            "  --train             the training step: loss, backward pass, optimizer update\n"
            "                      (docs/training.md); --optimizer sgd (default) or adam\n"
            "  --baseline KIND     compile with a virtual-global-memory baseline instead:\n"
            "                      vgm (tiles as Roller builds them, docs/vgm.md) or vgm-oracle\n"
            "                      (every split searched; a bound on any VGM compiler)\n"
            "  --compare           also compile with both baselines; the closing line is the\n"
            "                      speedup over vgm (JSON: a \"comparison\" object)\n"
            "  -o, --output FILE   write the program (rotor-program JSON, docs/program-format.md)\n"
            "  --json              print the program on stdout instead of the table\n"
            "  --solver S          plan search: exact (default, the optimum) or fast (KAPLA's\n"
            "                      greedy solver, near-optimal and far faster; docs/kapla.md);\n"
            "                      random or ml: KAPLA's baselines R and M\n"
            "  --walk W            Algorithm 1's walk over idle layouts: t10 (default, the paper's)\n"
            "                      or jumps (where it ends, an operator takes its fastest plan as\n"
            "                      its idle layout and the walk goes on: never slower; docs/compile.md)\n"
            "  --mesh-plans P      on a mesh: exchanges (default: after the walk, each plan is chosen\n"
            "                      again by its setups' exchanges, never slower) or bound (the walk's\n"
            "                      plans, chosen by the exchanges' busiest links; docs/mesh.md, \"Setup\")\n"
            "  --group G           how operators are grouped: fused (default: epilogues fused,\n"
            "                      layout ops folded, docs/group.md), none (the graph as imported:\n"
            "                      the program rotor run --program runs) or graphturbo (GraphTurbo's\n"
            "                      sub-graph instances on a chip with a global buffer, e.g. stcp920:\n"
            "                      the per-layer baseline and the Fig. 15 steps timed, each also\n"
            "                      as passes of fewer images, the fastest shown (§5.1); --batch is\n"
            "                      then one cluster's share; without a global buffer, e.g. ipu-mk2,\n"
            "                      instances on core groups against T10 on the same simplified\n"
            "                      graph; implies --simplify;\n"
            "                      docs/graphturbo.md)\n"
            "  --no-loops          with --group graphturbo on a chip with a global buffer, time\n"
            "                      one pass of the batch only (the passes take a run of the\n"
            "                      model at each divisor of the batch)\n"
            "  --values            with --group graphturbo on a chip with a global buffer, list\n"
            "                      where the graphturbo step keeps each activation value (LB,\n"
            "                      GB or DDR), in the pass the loops chose (JSON: \"values\")\n"
            "  --pipeline          run chains of operators as pipelined segments, each operator\n"
            "                      on its own group of cores, where that is faster (KAPLA;\n"
            "                      one all-to-all chip; docs/kapla.md)\n"
            "  --objective O       what --pipeline minimises: latency (default) or throughput\n"
            "                      (time per batch with batches back to back)\n"
            "  --threads N         search threads (default: all cores)\n"
            CLI_CACHE_USAGE
            "  --list              list the zoo\n"
            "  --profile           the wall seconds of each phase on stderr: load, group, search,\n"
            "                      hand-off, reconciliation, VGM, program (docs/performance.md)\n"
            "  -q, --quiet         no progress on stderr\n"
            "  --progress WHEN     auto (a bar on a terminal), always (also lines every 5 s in a log), never\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 compiled, 1 the model does not fit, 2 bad input\n");
}

static void print_table(const rotor_graph *g, const rotor_compile_result *r, const rotor_chip *chip, bool jumps) {
    printf("%-28s %-20s %11s %6s %11s %10s %10s\n", "operator", "type", "time (us)", "share",
           "setup (us)", "idle (B)", "active (B)");
    for (int o = 0; o < r->nops; o++) {
        const rotor_op_schedule *s = &r->ops[o];
        double t = s->exec_s + s->setup_s;
        char share[16];
        if (s->segment) snprintf(share, sizeof share, "seg %d", s->segment);
        else snprintf(share, sizeof share, "%5.1f%%", 100 * t / r->total_s);
        printf("%-28.28s %-20.20s %11.3f %6s %11.3f %10lld %10lld\n", g->ops[o].name,
               g->ops[o].type, t * 1e6, share, s->setup_s * 1e6,
               (long long)s->idle_bytes, (long long)s->active_bytes);
    }
    if (r->nsegments)
        printf("(seg N: a stage of pipelined segment N below; its times here are those it would take unpipelined)\n");
    printf("\ntotal %.3f us: compute %.3f, communication %.3f", r->total_s * 1e6, r->compute_s * 1e6, r->comm_s * 1e6);
    /* with overlap the parts add up to the total only less the shifts
     * under compute (docs/cost-model.md, "Overlap") */
    if (r->hidden_s > 0) printf(" (%.3f of it under compute)", r->hidden_s * 1e6);
    printf(", reduction %.3f, setup %.3f, vendor ops %.3f", r->reduction_s * 1e6, r->setup_s * 1e6, r->vendor_s * 1e6);
    if (r->nsegments) printf(", pipelined runs %.3f", r->pipeline_s * 1e6);
    printf("\n");
    printf("SRAM per core: idle %lld B, peak %lld B of %lld (%.1f%%); %d operators, %d %s searches, "
           "%d reconciliation steps",
           (long long)r->idle_bytes, (long long)r->peak_bytes, (long long)rotor_chip_sram(chip),
           100.0 * (double)r->peak_bytes / (double)rotor_chip_sram(chip), r->nops, r->searches,
           rotor_solver_name(r->solver), r->ncurve);
    if (jumps) printf(" (%d jumps, --walk jumps)", r->jumps);
    printf("\n");
    char caveat[320];
    if (rotor_chip_mesh_caveat(chip, caveat, sizeof caveat)) printf("note: %s\n", caveat);
    /* the plans saw the bound, the total the schedule: said where they part */
    char setups[320];
    if (rotor_compile_mesh_setup_note(chip, r, setups, sizeof setups)) printf("note: %s\n", setups);
}

/* The pipelined segments (docs/kapla.md, "Pipelining"): one block each. */
static void print_segments(const rotor_graph *g, const rotor_compile_result *r) {
    printf("\npipelined segments (objective %s): %d, %d stage plans searched\n",
           rotor_pipeline_objective_name(r->objective), r->nsegments, r->pipeline_searches);
    if (r->pipeline_kept_out)
        printf("(%d operators over quantized integers stay out of segments: stage plans are priced at the chip's "
               "element size and FP16 rate, not theirs; docs/kapla.md)\n", r->pipeline_kept_out);
    for (int s = 0; s < r->nsegments; s++) {
        const rotor_segment *sg = &r->segments[s];
        double alone = 0;
        for (int o = sg->first; o <= sg->last; o++) alone += r->ops[o].setup_s + r->ops[o].exec_s;
        printf("segment %d: %s .. %s, %lld micro-batches over output dimension %d: setup %.3f us, runs %.3f us, "
               "total %.3f us (unpipelined %.3f us), interval %.3f us\n",
               s + 1, g->ops[sg->first].name, g->ops[sg->last].name, (long long)sg->micro, sg->dim,
               sg->setup_s * 1e6, sg->run_s * 1e6, sg->total_s * 1e6, alone * 1e6, sg->interval_s * 1e6);
        for (int k = 0; k < sg->nstages; k++) {
            const rotor_stage *st = &sg->stages[k];
            printf("  %-26.26s cores %4lld-%-4lld (%4lld) runs %3lld x %9.3f us, setup %8.3f us\n",
                   g->ops[st->op].name, (long long)st->first_core, (long long)(st->first_core + st->cores - 1),
                   (long long)st->cores, (long long)st->runs, st->exec_s * 1e6, st->setup_s * 1e6);
        }
    }
    printf("pipelined total %.3f us, unpipelined %.3f us (%.2fx)\n", r->total_s * 1e6, r->unpipelined_s * 1e6,
           r->unpipelined_s / r->total_s);
    if (r->objective == ROTOR_OBJECTIVE_THROUGHPUT) {
        /* what the choice minimised: a segment's interval in place of its latency */
        double per_batch = r->total_s;
        for (int s = 0; s < r->nsegments; s++) per_batch += r->segments[s].interval_s - r->segments[s].total_s;
        printf("batches back to back: %.3f us per batch, unpipelined %.3f us (%.2fx)\n", per_batch * 1e6,
               r->unpipelined_s * 1e6, r->unpipelined_s / per_batch);
    }
}

static void print_vgm(const rotor_vgm_result *v) {
    printf("%s: total %.3f us: compute %.3f, load %.3f, store %.3f, vendor ops %.3f; "
           "VGM slice %lld B per core, %lld B left for sub-operators\n",
           v->kind == ROTOR_VGM_ORACLE ? "VGM oracle (exhaustive)" : "VGM baseline (Roller)", v->total_s * 1e6, v->compute_s * 1e6, v->load_s * 1e6, v->store_s * 1e6, v->vendor_s * 1e6,
           (long long)v->vgm_bytes, (long long)v->local_bytes);
}

/* --batch N[,N...]: increasing sizes into batches (at most MAX_BATCHES);
 * none gives batch 1. */
static int parse_batches(const char *cmd, const char *batch, int64_t *batches, int *nb) {
    *nb = 0;
    if (!batch) batches[(*nb)++] = 1;
    for (const char *p = batch; p && *p;) {
        const char *comma = strchr(p, ',');
        char item[32];
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= sizeof item) return cli_usage_error(cmd, "--batch: expected N[,N...], got '%s'", batch);
        memcpy(item, p, len);
        item[len] = '\0';
        if (*nb == MAX_BATCHES) return cli_usage_error(cmd, "--batch: at most %d sizes", MAX_BATCHES);
        if (cli_parse_i64(cmd, "--batch", item, 1, CLI_MAX_BATCH, &batches[*nb])) return EXIT_BADINPUT;
        if (*nb > 0 && batches[*nb] <= batches[*nb - 1])
            return cli_usage_error(cmd, "--batch: sizes must increase ('%s')", batch);
        (*nb)++;
        p = comma ? comma + 1 : p + len;
    }
    return 0;
}

/* What `rotor compile` was asked, parsed and checked. */
typedef struct compile_args {
    cli_shared_args sa;
    const char *model, *baseline, *outfile, *format, *solver_name, *group, *walk, *mesh_plans;
    bool compare, vgm_only, json, graphturbo, no_group, jumps, profile, no_loops, values, mesh_bound;
    cli_pipeline_args pl;
    rotor_solver solver;
    rotor_vgm_kind kind; /* with vgm_only */
    int64_t batches[MAX_BATCHES];
    int nb;
} compile_args;

/* Parses argv into a; returns -1 to go on, else the exit status (0 after
 * --help or --list). */
static int parse_compile(int argc, char **argv, compile_args *a) {
    const char *cmd = "compile";
    static const cli_opt own[] = {
        {"baseline", 0, CLI_VALUE, offsetof(compile_args, baseline), 0, 0},
        {"compare", 0, CLI_FLAG, offsetof(compile_args, compare), 0, 0},
        {"format", 0, CLI_VALUE, offsetof(compile_args, format), 0, 0},
        {"group", 0, CLI_VALUE, offsetof(compile_args, group), 0, 0},
        {"walk", 0, CLI_VALUE, offsetof(compile_args, walk), 0, 0},
        {"mesh-plans", 0, CLI_VALUE, offsetof(compile_args, mesh_plans), 0, 0},
        {"json", 0, CLI_FLAG, offsetof(compile_args, json), 0, 0},
        {"output", 'o', CLI_VALUE, offsetof(compile_args, outfile), 0, 0},
        {"solver", 0, CLI_VALUE, offsetof(compile_args, solver_name), 0, 0},
        {"profile", 0, CLI_FLAG, offsetof(compile_args, profile), 0, 0},
        {"no-loops", 0, CLI_FLAG, offsetof(compile_args, no_loops), 0, 0},
        {"values", 0, CLI_FLAG, offsetof(compile_args, values), 0, 0},
        CLI_PIPELINE_OPTS(compile_args, pl),
        {0}};
    int rc = cli_parse_options(cmd, argc, argv, CLI_TAKES_ALL | CLI_TAKES_CACHE, &a->sa, own, a, compile_usage, cli_list_zoo, &a->model,
                               "a model is required (try 'rotor compile --list')");
    if (rc >= 0) return rc;
    if (cli_parse_solver(cmd, a->solver_name, &a->solver)) return EXIT_BADINPUT;
    if (cli_parse_objective(cmd, &a->pl)) return EXIT_BADINPUT;
    if (a->baseline) {
        if (!strcmp(a->baseline, "vgm")) a->kind = ROTOR_VGM_ROLLER;
        else if (!strcmp(a->baseline, "vgm-oracle")) a->kind = ROTOR_VGM_ORACLE;
        else return cli_usage_error(cmd, "--baseline: expected vgm or vgm-oracle, got '%s'", a->baseline);
        a->vgm_only = true;
    }
    if (a->walk && strcmp(a->walk, "t10") != 0 && strcmp(a->walk, "jumps") != 0)
        return cli_usage_error(cmd, "--walk: expected t10 or jumps, got '%s'", a->walk);
    a->jumps = a->walk && !strcmp(a->walk, "jumps");
    if (a->walk && a->baseline) return cli_usage_error(cmd, "--walk: --baseline %s walks no idle layouts", a->baseline);
    if (a->mesh_plans && strcmp(a->mesh_plans, "exchanges") != 0 && strcmp(a->mesh_plans, "bound") != 0)
        return cli_usage_error(cmd, "--mesh-plans: expected exchanges or bound, got '%s'", a->mesh_plans);
    a->mesh_bound = a->mesh_plans && !strcmp(a->mesh_plans, "bound");
    if (a->mesh_plans && a->baseline)
        return cli_usage_error(cmd, "--mesh-plans: --baseline %s chooses no T10 plans", a->baseline);
    rotor_error ferr = {{0}};
    rotor_status fst = rotor_pipeline_group_parse(a->group, &a->graphturbo, &a->no_group, &ferr);
    if (fst) return cli_fail(cmd, fst, &ferr);
    if (a->graphturbo && (a->baseline || a->compare || a->pl.pipeline || a->outfile))
        return cli_usage_error(cmd, "--group graphturbo times GraphTurbo's schedules: it conflicts with %s",
                               a->baseline ? "--baseline" : a->compare ? "--compare" : a->pl.pipeline ? "--pipeline" : "-o");
    fst = rotor_pipeline_graphturbo_flags(a->graphturbo, a->no_loops, a->values, NULL, &ferr);
    if (fst) return cli_fail(cmd, fst, &ferr);
    if (a->pl.pipeline && a->baseline)
        return cli_usage_error(cmd, "--pipeline conflicts with --baseline %s", a->baseline);
    if (a->vgm_only && a->compare)
        return cli_usage_error(cmd, "--baseline %s conflicts with --compare", rotor_vgm_kind_name(a->kind));
    if (a->json && a->format && strcmp(a->format, "json") != 0)
        return cli_usage_error(cmd, "--json conflicts with --format %s", a->format);
    if (a->format && strcmp(a->format, "json") != 0 && strcmp(a->format, "table") != 0)
        return cli_usage_error(cmd, "--format: expected table or json, got '%s'", a->format);
    /* --json, as every subcommand spells it; --format keeps working for one release */
    if (a->format) cli_deprecated(cmd, a->sa.quiet, !strcmp(a->format, "json") ? "--format json" : "--format table",
                                  !strcmp(a->format, "json") ? "--json" : "nothing (the table is the default)");
    if (a->format && !strcmp(a->format, "json")) a->json = true;
    if (a->vgm_only && (a->json || a->outfile))
        return cli_usage_error(cmd, "--baseline %s writes no program (drop -o / --json)",
                               rotor_vgm_kind_name(a->kind));
    if (parse_batches(cmd, a->sa.batch, a->batches, &a->nb)) return EXIT_BADINPUT;
    if (a->graphturbo && a->nb > 1) return cli_usage_error(cmd, "--group graphturbo takes one --batch");
    if (a->nb > 1 && (a->json || a->outfile))
        return cli_usage_error(cmd, "a --batch sweep writes no program (drop -o / --json)");
    if (a->outfile && !strcmp(a->outfile, "-")) {
        if (a->format && !a->json) return cli_usage_error(cmd, "-o - writes the program on stdout: drop --format table");
        a->json = true; /* -o -: the program on stdout, as --json */
        a->outfile = NULL;
    }
    return -1;
}


/* One compiled batch b, not in a sweep: the table (or the VGM summary), the
 * program to the -o output (opened before the work) and/or stdout, the
 * comparison. */
static int print_compiled(const compile_args *a, const rotor_pipeline *p, const rotor_chip *chip, int64_t b,
                          cli_output *out) {
    const char *cmd = "compile";
    if (a->vgm_only) {
        char bw[64];
        printf("%s, %s, on %s (%lld cores)\n", a->model, cli_batch_words(a->model, b, bw, sizeof bw), chip->name,
               (long long)rotor_chip_cores(chip));
        print_vgm(a->kind == ROTOR_VGM_ORACLE ? &p->oracle : &p->vgm);
        return 0;
    }
    rotor_error err = {{0}};
    char *text = NULL;
    rotor_status st;
    /* the document is the library's (pipeline/doc.h): the program, its
     * energy, and with --compare on stdout the comparison */
    if ((out->f || (a->json && !a->compare)) && (st = rotor_doc_compile(p, chip, false, &text, &err)))
        return cli_fail(cmd, st, &err);
    int rc = 0;
    if (out->f) {
        /* a failed write sets the stream's error, which the commit reports */
        fputs(text, out->f);
        fputc('\n', out->f);
        if ((rc = cli_output_commit(cmd, "-o", out))) { /* nothing printed after a failed output */
            free(text);
            return rc;
        }
    }
    if (a->json && a->compare) {
        char *with = NULL;
        if ((st = rotor_doc_compile(p, chip, true, &with, &err))) rc = cli_fail(cmd, st, &err);
        else cli_puts(with);
        rotor_free(with);
    } else if (a->json) {
        cli_puts(text);
    } else {
        /* energy per inference (docs/energy.md): the program's events over its time */
        rotor_energy_counts ec;
        rotor_energy en;
        if (p->has_energy) ec = p->energy; /* the pipeline's (po.energy) */
        else if ((st = rotor_energy_program(&p->program, chip, &ec, &err))) {
            free(text);
            return cli_fail(cmd, st, &err);
        }
        rotor_energy_price(chip, &ec, p->t10.total_s, &en);
        const rotor_group_stats *gs = &p->group;
        char bw[64], topo[64] = "";
        /* a mesh's shape in the header: the plans and the caveat depend on it */
        if (chip->topology == ROTOR_TOPO_MESH) {
            topo[0] = ',', topo[1] = ' ';
            rotor_chip_topology_text(chip, topo + 2, sizeof topo - 2);
        }
        printf("%s, %s, on %s (%lld cores%s), plans by the %s solver; ", a->model,
               cli_batch_words(a->model, b, bw, sizeof bw), chip->name, (long long)rotor_chip_cores(chip), topo,
               rotor_solver_name(a->solver));
        if (a->no_group) printf("%d operators, not grouped (--group none)\n\n", p->graph.nops);
        else printf("%d operators grouped into %d (%d epilogues fused, %d layout ops folded)\n\n", gs->ops_before,
                    gs->ops_after, gs->fused, gs->folded);
        if (p->train.forward_ops) cli_print_train(p); /* --train (docs/training.md) */
        print_table(&p->graph, &p->t10, chip, a->jumps);
        if (a->pl.pipeline) print_segments(&p->graph, &p->t10);
        cli_energy_print("per inference", &en);
        /* the oracle first: the closing line compares with Roller */
        if (a->compare && !p->oracle_status) {
            print_vgm(&p->oracle);
            printf("T10 over the VGM oracle: %.2fx\n", p->oracle.total_s / p->t10.total_s);
        } else if (a->compare) {
            printf("VGM oracle (exhaustive): %s\n", p->oracle_err.msg);
        }
        if (a->compare && !p->vgm_status) {
            print_vgm(&p->vgm);
            printf("T10 over VGM: %.2fx\n", p->vgm.total_s / p->t10.total_s);
        } else if (a->compare) {
            printf("VGM baseline (Roller): %s\n", p->vgm_err.msg);
        }
    }
    rotor_free(text);
    return rc;
}

/* One row of a --batch sweep (st: the design's status, NOFIT marks x). */
static void print_sweep_row(const compile_args *a, const rotor_pipeline *p, rotor_status st, int64_t b) {
    if (st) {
        printf("%-8lld %14s\n", (long long)b, "x");
        return;
    }
    double t = !a->vgm_only ? p->t10.total_s : a->kind == ROTOR_VGM_ORACLE ? p->oracle.total_s : p->vgm.total_s;
    if (!a->compare) {
        printf("%-8lld %14.3f\n", (long long)b, t * 1e6);
        return;
    }
    printf("%-8lld %14.3f", (long long)b, t * 1e6);
    if (!p->vgm_status) printf(" %14.3f %8.2fx", p->vgm.total_s * 1e6, p->vgm.total_s / t);
    else printf(" %14s %9s", "x", "");
    if (!p->oracle_status) printf(" %14.3f %8.2fx\n", p->oracle.total_s * 1e6, p->oracle.total_s / t);
    else printf(" %14s\n", "x");
}

int cmd_compile(int argc, char **argv) {
    const char *cmd = "compile";
    compile_args a = {0};
    int rc = parse_compile(argc, argv, &a);
    if (rc >= 0) return rc;
    rotor_pipeline_options po = {.t10 = !a.vgm_only,
                                 .vgm = (a.vgm_only && a.kind == ROTOR_VGM_ROLLER) || a.compare,
                                 .vgm_oracle = (a.vgm_only && a.kind == ROTOR_VGM_ORACLE) || a.compare};
    /* the placed program, for its energy (one batch, not the VGM alone) */
    po.program = !a.vgm_only && a.nb <= 1;
    po.energy = true; /* with the program: counted once, kept in the plan cache (issue 45) */
    po.zoo.phase = ROTOR_PHASE_PREFILL;
    if (cli_shared_model(cmd, a.model, &a.sa, true, &po)) return EXIT_BADINPUT;
    if (rotor_gpu_spec_is_gpu(a.sa.chip) && a.mesh_plans)
        return cli_usage_error(cmd, "--mesh-plans: chip '%s' is a GPU; it has no mesh", a.sa.chip);
    if (rotor_gpu_spec_is_gpu(a.sa.chip)) { /* a GPU chip: src/cli/compilegpu.c, docs/gpu.md */
        po.zoo.batch = a.batches[0];
        return cli_compile_gpu(&a.sa, a.model, &po, a.nb, a.json,
                               a.baseline ? "--baseline" : a.compare ? "--compare" : a.pl.pipeline ? "--pipeline"
                               : a.graphturbo ? "--group graphturbo" : a.outfile ? "-o" : NULL);
    }
    po.no_group = a.no_group; /* --group none: the graph rotor run executes (docs/run.md) */
    po.compile.walk_jumps = a.jumps; /* docs/compile.md, "Jumps" */
    po.compile.mesh_bound_plans = a.mesh_bound; /* docs/mesh.md, "Setup" */
    po.compile.solver = a.solver;
    po.compile.pipeline = a.pl.pipeline;
    po.compile.objective = a.pl.objective;
    rotor_error err = {{0}};
    rotor_status st;
    rotor_chip chip;
    if ((st = cli_chip(a.sa.chip, a.sa.sets, a.sa.nsets, &chip, &err))) return cli_fail(cmd, st, &err);
    cli_output out = {0};
    if (a.outfile && (rc = cli_output_open_model(cmd, "-o", a.outfile, a.model, ".rotor-program.json", &out)))
        return rc;

    if (a.mesh_plans && chip.topology != ROTOR_TOPO_MESH)
        return cli_usage_error(cmd, "--mesh-plans: chip '%s' is not a mesh; its setups are not routed exchanges",
                               chip.name);
    /* On an ICCA chip (no GB) GraphTurbo's instances run on core groups
     * after T10's schedule (compile/gticca.h), not on DSA clusters */
    bool icca = a.graphturbo && !rotor_chip_has_gb(&chip);
    /* ... and on a chip with one they are timed by formula: no plan is
     * searched, so a solver asked for would change nothing, silently */
    if (a.graphturbo && !icca && a.walk)
        return cli_usage_error(cmd, "--walk: on %s (a chip with a global buffer) --group graphturbo times GraphTurbo's "
                               "schedules and walks no idle layouts", chip.name);
    if (a.graphturbo && !icca && (rc = cli_graphturbo_sets(cmd, a.sa.chip, a.sa.sets, a.sa.nsets, &chip)))
        return rc;
    if (a.graphturbo && !icca && a.solver_name)
        return cli_usage_error(cmd, "--solver: on %s (a chip with a global buffer) --group graphturbo times GraphTurbo's "
                               "schedules and searches no plans", chip.name);
    if ((st = rotor_pipeline_graphturbo_flags(a.graphturbo, a.no_loops, a.values, &chip, &err)))
        return cli_fail(cmd, st, &err);
    if (a.graphturbo) rotor_pipeline_graphturbo_options(&po, &chip, false, a.no_loops);
    po.dsa_values = a.values;
    if (!a.vgm_only && !a.graphturbo) cli_solver_hint(cmd, &chip, a.solver, a.sa.quiet);
    bool sweep = a.nb > 1;
    /* with --pipeline the T10 column is the pipelined schedule's latency */
    const char *t10_head = a.pl.pipeline ? "pipelined (us)" : "T10 (us)";
    if (sweep && a.compare)
        printf("%-8s %14s %14s %9s %14s %9s\n", "batch", t10_head, "VGM (us)", "speedup", "oracle (us)", "speedup");
    else if (sweep)
        printf("%-8s %14s\n", "batch",
               !a.vgm_only ? t10_head : a.kind == ROTOR_VGM_ORACLE ? "oracle (us)" : "VGM (us)");
    rc = 0;
    for (int i = 0; !rc; i++) {
        /* a sweep goes on doubling past the last size until the model no longer fits */
        int64_t b = i < a.nb ? a.batches[i] : a.batches[a.nb - 1] * ((int64_t)1 << (i - a.nb + 1));
        if (i >= a.nb && (!sweep || b > CLI_MAX_BATCH)) break;
        po.zoo.batch = b;
        char what[96], bw[64];
        snprintf(what, sizeof what, "%s: %s", cli_batch_words(a.model, b, bw, sizeof bw),
                 a.graphturbo && !icca ? "numbers of passes scheduled" : "operator shapes searched");
        cli_progress prog;
        cli_progress_begin(&prog, cmd, what, a.sa.quiet);
        po.compile.progress = cli_progress_step;
        po.compile.progress_ctx = &prog;
        rotor_pipeline p;
        double t0 = rotor_clock_s();
        st = rotor_pipeline_run(&po, &chip, &p, &err);
        cli_progress_end(&prog);
        cli_cache_warn(cmd, &po.compile, &p.t10);
        if (a.profile && (!st || p.loaded)) cli_profile_print(cmd, &p, NULL, rotor_clock_s() - t0);
        if (!st && a.vgm_only) {
            st = a.kind == ROTOR_VGM_ORACLE ? p.oracle_status : p.vgm_status;
            err = a.kind == ROTOR_VGM_ORACLE ? p.oracle_err : p.vgm_err;
        }
        if (st && st != ROTOR_ERR_NOFIT) rc = cli_fail(cmd, st, &err);
        else if (sweep) print_sweep_row(&a, &p, st, b);
        else if (a.graphturbo && st) rc = cli_fail(cmd, st, &err);
        else if (a.graphturbo) rc = (icca ? cli_compile_gticca : cli_compile_graphturbo)(a.model, &chip, b, &p, a.json);
        else rc = st ? cli_fail(cmd, st, &err) : print_compiled(&a, &p, &chip, b, &out);
        if (sweep && st == ROTOR_ERR_NOFIT) {
            if (i == 0) rc = cli_fail(cmd, st, &err);
            rotor_pipeline_free(&p);
            break;
        }
        rotor_pipeline_free(&p);
        if (!sweep) break;
    }
    cli_output_abort(&out); /* after a failure; a written program was committed */
    return rc;
}
