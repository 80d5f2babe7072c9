/* rotor schedule — Elk's HBM preload schedule of a model (docs/schedule.md):
 * per-token latency, the Figure 18a breakdown, HBM and interconnect
 * utilisation, TFLOPS and the percentage of Ideal, per design. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rotor/base/clock.h"
#include "rotor/base/version.h"
#include "pipeline/docint.h"
#include "rotor/pipeline/doc.h"
#include "rotor/model/group.h"
#include "rotor/hbm/schedreplay.h"
#include "rotor/sim/replay.h"
#include "rotor/hbm/schedule.h"


static void schedule_usage(FILE *f) {
    fprintf(f,
            "usage: rotor schedule MODEL|FILE.onnx [options]\n"
            "\n"
            "Schedules a model that lives in HBM (Elk): which operators' weights are preloaded\n"
            "while another executes, how each core's SRAM is split between execution and\n"
            "preload space, and in what order to preload.  The model is split over the chips by\n"
            "tensor parallelism; each operator's execute plans are its T10 Pareto frontier.\n"
            "LLMs run their decode step (one token, a KV cache of --seq) unless --prefill.\n"
            "\n"
            "  --chip NAME|FILE    preset or chip file with HBM; default ipu-pod4\n"
            "  --set KEY=VALUE     override one chip field (repeatable)\n"
            "  --hbm-bw BW         total HBM bandwidth of all chips: TB/s, or with a unit\n"
            "                      (16, 16TB/s, 8000GB/s); default the chip's (ipu-pod4: 16 TB/s)\n"
            "  --design D,...      basic, static, dyn, full, ideal, roofline, or all (default all)\n"
            "  --batch N           batch size (default 1)\n"
            "  --seq N             sequence length (LLM decode: the KV cache; default 2048)\n"
            "  --layers N          layers (default: the model's)\n"
            "  --prefill           an LLM's prefill instead of its decode step (--decode, the default)\n"
            "  --dim k=v,..., --input NAME=AxB,.., --value NAME=SPEC\n"
            "                      shape an ONNX file, as in rotor model\n"
            "  --max-model-bytes N refuse a model file over N bytes (default 2 GiB, docs/onnx.md)\n"
            "  --simplify          fold BatchNormalization into its convolution and fold constants\n"
            "                      before grouping (docs/simplify.md)\n"
            "  --train             the training step: loss, backward pass, optimizer update\n"
            "                      (docs/training.md); --optimizer sgd (default) or adam\n"
            "  --tp N              chips the model is split over (default: all of them)\n"
            "  --sram-nonblocking  inter-core writes do not pause a core's SRAM accesses\n"
            "  --max-orders N      preload orders tried per layer (default 5040)\n"
            "  --no-refine         dyn, full: Elk's induction alone, without the refinement\n"
            "                      against the forward timing (docs/preload.md)\n"
            "  --per-op            also list every operator of the last design\n"
            "  --profile           the wall seconds of each phase on stderr: load, group, schedule\n"
            "                      (its shard searches), designs, replay (docs/performance.md)\n"
            "  --json              print JSON (rotor-schedule, version 1)\n"
            "  --trace FILE        write the last design's schedule as Chrome trace-event JSON\n"
            "                      (with --simulate: the simulator's trace of the last design;\n"
            "                      above 300000 tasks it keeps cores 0-63 unless a filter is given)\n"
            "  --trace-ops NAMES   with --simulate: trace only these operators (l0.* a prefix)\n"
            "  --trace-window A:B  with --simulate: trace only tasks overlapping A..B microseconds\n"
            "  --trace-cores LIST  with --simulate: trace only these cores (0-63,100); all: every task\n"
            "  --simulate          replay every shown design but ideal and roofline on the event-driven\n"
            "                      simulator (one chip: preloads, distribution, tiles, shifts)\n"
            "                      and print simulated vs analytical latency\n"
            "  --topology T        the network: all-to-all (the chip's default) or mesh:WxH;\n"
            "                      on a mesh HBM enters through the edge ports (schedule and\n"
            "                      --simulate alike)\n"
            "  --solver S          plan search: exact (default, the optimum) or fast (KAPLA's\n"
            "                      greedy solver, near-optimal and far faster; docs/kapla.md);\n"
            "                      random or ml: KAPLA's baselines R and M\n"
            "  --threads N         plan-search threads (default: all cores)\n"
            "  --list              list the zoo\n"
            "  -q, --quiet         no progress and no note on what a trace kept, on stderr\n"
            "  --progress WHEN     auto (a bar on a terminal), always (also lines every 5 s in a log), never\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 scheduled, 1 an operator does not fit, 2 bad input\n");
}

/* one design run (and replayed with --simulate): the library's (pipeline/doc.h) */
typedef rotor_doc_schedule_run run;

/* Writes --trace's text (NULL: out of memory) into the output opened before
 * the work, commits it and frees the text. */
static int write_trace_text(cli_output *out, char *text) {
    if (!text) {
        cli_output_abort(out);
        return cli_nomem("schedule");
    }
    fputs(text, out->f); /* a failed write sets the stream's error, which the commit reports */
    free(text);
    return cli_output_commit("schedule", "--trace", out);
}

static double us(int64_t ps) { return (double)ps * 1e-6; }
static double pct(double a, double b) { return b > 0 ? 100.0 * a / b : 0.0; }

/* Simulated vs analytical, one row per replayed design. */
static void print_sim(const rotor_chip *simchip, const run *runs, int nruns, const char *per) {
    char topo[64];
    const run *any = NULL;
    for (int i = 0; i < nruns && !any; i++)
        if (runs[i].simulated) any = &runs[i];
    if (!any) return;
    printf("\nsimulated on one chip (%s, %lld cores, %lld HBM controllers; preload pieces of %lld B):\n",
           rotor_chip_topology_text(simchip, topo, sizeof topo), (long long)rotor_chip_cores(simchip),
           (long long)simchip->hbm_controllers, (long long)any->sim.piece_bytes);
    printf("%-7s %13s %12s %8s %10s %11s %9s %6s %7s %7s\n", "design", "analytical ms", "simulated ms", "diff %",
           "tasks", "events", "replay s", "HBM %", "link %", "peak %");
    for (int i = 0; i < nruns; i++) {
        const rotor_schedule_replay_result *r = &runs[i].sim;
        if (!runs[i].simulated) continue;
        printf("%-7s %13.4f %12.4f %+8.2f %10lld %11lld %9.2f %6.1f %7.1f %7.1f\n",
               rotor_preload_designs[runs[i].design].name, (double)r->analytical_ps * 1e-9,
               (double)r->simulated_ps * 1e-9, 100.0 * r->error, (long long)r->stats.tasks,
               (long long)r->stats.events, runs[i].sim_seconds, 100.0 * r->stats.hbm_util,
               100.0 * r->stats.link_util_mean, 100.0 * r->stats.link_util_peak);
    }
    /* the simulator's own event counts (docs/energy.md): one chip, no all-reduce */
    char what[48];
    snprintf(what, sizeof what, "per %s on one chip", per);
    for (int i = 0; i < nruns; i++) {
        if (!runs[i].simulated) continue;
        rotor_energy_counts ec = rotor_sim_energy_counts(&runs[i].sim.stats);
        rotor_energy en;
        rotor_energy_price(simchip, &ec, (double)runs[i].sim.simulated_ps * 1e-12, &en);
        printf("%s: ", rotor_preload_designs[runs[i].design].name);
        cli_energy_print(what, &en);
    }
}


static void print_text(const rotor_graph *g, const rotor_schedule *s, const run *runs, int nruns,
                       const run *ideal, const run *basic, bool per_op, const char *per) {
    int64_t T = s->tensor_parallel;
    printf("%s on %s: %lld chip%s x %lld cores, HBM %.0f GB/s per chip, %d operators per chip "
           "(%lld shards), %d shapes searched by the %s solver\n",
           g->name, s->chip.name, (long long)T, T > 1 ? "s" : "", (long long)s->chip.cores_per_chip,
           s->chip.hbm_gbps, s->nops, (long long)(s->nops * T), s->searches, rotor_solver_name(s->solver));
    printf("HBM per chip per step: %.1f MB (%.3f ms at full bandwidth); %.1f GFLOP per step\n",
           (double)s->hbm_bytes / 1e6, (double)s->hbm_bytes / (s->chip.hbm_gbps * 1e9) * 1e3,
           s->model_flops / 1e9);
    cli_quantized_note(s->quantized_ops, &s->chip);
    if (s->prefill_kv_bytes > 0)
        printf("not priced: the prefill writes %.1f MB of KV cache per chip to HBM (%.3f ms at full bandwidth), "
               "which the HBM time, utilisation and energy below leave out (docs/schedule.md)\n",
               (double)s->prefill_kv_bytes / 1e6, (double)s->prefill_kv_bytes / (s->chip.hbm_gbps * 1e9) * 1e3);
    if (s->train_write_bytes > 0)
        printf("not priced: the training step's update writes %.1f MB per chip back to HBM (the new weights, and "
               "Adam's moments; %.3f ms at full bandwidth), which the HBM time, utilisation and energy below leave "
               "out (docs/schedule.md)\n",
               (double)s->train_write_bytes / 1e6, (double)s->train_write_bytes / (s->chip.hbm_gbps * 1e9) * 1e3);
    if (s->reshard_ps > 0)
        printf("reshards between the chips' cuts: %.3f us per step, inside the operators' execution "
               "(--per-op lists them; docs/schedule.md, \"Reshards\")\n", (double)s->reshard_ps * 1e-6);
    if (s->hbm_intake > 0)
        printf("mesh %lldx%lld: HBM enters through the edge ports, at most %.0f GB/s per chip (%.3f ms)\n",
               (long long)s->chip.mesh_width, (long long)s->chip.mesh_height, s->hbm_intake / 1e9,
               (double)s->hbm_bytes / s->hbm_intake * 1e3);
    printf("\n");
    printf("%-8s %12s %8s %7s %10s %10s %10s %10s %6s %6s %8s %8s\n", "design", "latency ms", "x basic",
           "% ideal", "preload ms", "execute ms", "overlap ms", "stall ms", "HBM %", "link %", "TFLOPS",
           "sched s");
    for (int i = 0; i < nruns; i++) {
        const rotor_schedule_report *r = &runs[i].rep;
        const rotor_preload_breakdown *b = &r->result.breakdown;
        printf("%-8s %12.4f %8.3f %7.2f %10.4f %10.4f %10.4f %10.4f %6.1f %6.1f %8.2f %8.3f\n",
               rotor_preload_designs[runs[i].design].name, r->latency_s * 1e3,
               basic ? basic->rep.latency_s / r->latency_s : 0.0,
               ideal ? pct(ideal->rep.latency_s, r->latency_s) : 0.0, us(b->preload_ps) * 1e-3,
               us(b->execute_ps) * 1e-3, us(b->overlap_ps) * 1e-3, us(b->stall_ps) * 1e-3,
               100.0 * r->hbm_util, 100.0 * r->link_util, r->tflops, runs[i].seconds);
    }
    char what[32], caveat[320];
    if (rotor_schedule_latency_caveat(&s->chip, caveat, sizeof caveat)) printf("note: %s\n", caveat);
    snprintf(what, sizeof what, "per %s", per);
    for (int i = 0; i < nruns; i++) {
        rotor_energy_counts ec;
        rotor_energy en;
        rotor_error err = {{0}};
        if (i == 0) printf("\n");
        printf("%s: ", rotor_preload_designs[runs[i].design].name);
        if (rotor_doc_schedule_energy(s, &runs[i], &ec, &en, &err)) printf("energy: %s\n", err.msg);
        else cli_energy_print(what, &en);
    }
    if (ideal && ideal >= runs && ideal < runs + nruns) /* shown, not only timed for "% ideal" */
        printf("\nIdeal has its own interconnect and SRAM space for preloads (Elk §6.1): its link %% counts both.\n"
               "%s", s->pchip.sram_blocking
                         ? "Its preload writes still pause a core's SRAM (contention 3, which Ideal keeps); roofline "
                           "takes that away too.\n"
                         : "");
    if (per_op && nruns) {
        const run *x = &runs[nruns - 1];
        printf("\n%s, per operator (times in us from the start):\n", rotor_preload_designs[x->design].name);
        printf("%-28s %-11s %10s %5s %4s %4s %11s %11s %11s %11s %9s %9s", "operator", "shard", "HBM MB", "plan",
               "c", "p", "preload", "pre end", "exec", "exec end", "stall", "reshard");
        if (x->simulated) printf(" %11s %11s %11s", "sim pre end", "sim exec", "sim end");
        printf("\n");
        for (int o = 0; o < s->nops; o++) {
            const rotor_preload_op_result *r = &x->rep.result.ops[o];
            printf("%-28.28s %-11s %10.3f %5d %4lld %4d %11.3f %11.3f %11.3f %11.3f %9.3f %9.3f", s->ops[o].name,
                   rotor_shard_name(s->ops[o].shard), (double)s->ops[o].hbm_bytes / 1e6, r->plan,
                   (long long)r->chunks, r->preload_number, us(r->pre_start_ps), us(r->pre_end_ps),
                   us(r->exe_start_ps), us(r->exe_end_ps), us(r->stall_ps), us(s->ops[o].reshard_ps));
            if (x->simulated) {
                const rotor_schedule_replay_op *q = &x->sim.ops[o];
                printf(" %11.3f %11.3f %11.3f", us(q->pre_end_ps), us(q->exe_start_ps), us(q->exe_end_ps));
            }
            printf("\n");
        }
    }
}


/* Chrome trace of one schedule: the HBM preloads on one track, the
 * executions (and their stalls) on another. */
static int write_trace(cli_output *out, const rotor_schedule *s, const run *x) {
    cJSON *root = cJSON_CreateObject();
    cJSON *ev = cJSON_AddArrayToObject(root, "traceEvents");
    /* the trace-event format's place for the writer's own keys */
    cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "otherData"), "rotor_version", rotor_version());
    const char *tracks[2] = {"hbm preload", "execute"};
    for (int t = 0; t < 2; t++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", "thread_name");
        cJSON_AddStringToObject(m, "ph", "M");
        cJSON_AddNumberToObject(m, "pid", 0);
        cJSON_AddNumberToObject(m, "tid", t);
        cJSON_AddItemToObject(m, "args", cJSON_CreateObject());
        cJSON_AddStringToObject(cJSON_GetObjectItem(m, "args"), "name", tracks[t]);
        cJSON_AddItemToArray(ev, m);
    }
    for (int o = 0; o < s->nops; o++) {
        const rotor_preload_op_result *r = &x->rep.result.ops[o];
        for (int t = 0; t < 2; t++) {
            int64_t a = t ? r->exe_start_ps : r->pre_start_ps, b = t ? r->exe_end_ps : r->pre_end_ps;
            if (b <= a) continue;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", s->ops[o].name);
            cJSON_AddStringToObject(e, "ph", "X");
            cJSON_AddNumberToObject(e, "pid", 0);
            cJSON_AddNumberToObject(e, "tid", t);
            cJSON_AddNumberToObject(e, "ts", us(a));
            cJSON_AddNumberToObject(e, "dur", us(b - a));
            cJSON *args = cJSON_AddObjectToObject(e, "args");
            cJSON_AddNumberToObject(args, "hbm_bytes", (double)s->ops[o].hbm_bytes);
            if (t) cJSON_AddNumberToObject(args, "stall_us", us(r->stall_ps));
            else cJSON_AddNumberToObject(args, "chunks", (double)r->chunks);
            cJSON_AddItemToArray(ev, e);
        }
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return write_trace_text(out, text);
}


/* --simulate: replays every shown design but ideal and roofline (their
 * machines are not a chip) on simchip.  Every replay streams
 * (docs/simulator.md, "Streaming"); with --trace (trace non-NULL) the last
 * one (*traced) writes its trace as it goes. */
static rotor_status simulate_designs(const rotor_schedule *s, const rotor_chip *simchip, run *runs, int shown,
                                     FILE *trace, cli_trace_filter *filter, const run **traced, bool quiet,
                                     rotor_error *err) {
    for (int i = 0; i < shown; i++) {
        if (runs[i].design == ROTOR_PRELOAD_IDEAL || runs[i].design == ROTOR_PRELOAD_ROOFLINE) continue;
        double t0 = omp_get_wtime();
        bool last = true; /* the last design replayed is the one traced */
        for (int j = i + 1; j < shown; j++)
            last &= runs[j].design == ROTOR_PRELOAD_IDEAL || runs[j].design == ROTOR_PRELOAD_ROOFLINE;
        cli_progress bar;
        char what[64];
        snprintf(what, sizeof what, "--simulate (%s):", rotor_preload_designs[runs[i].design].name);
        cli_progress_begin(&bar, "schedule", what, quiet);
        rotor_replay_options ro = {.progress = {cli_progress_sim, &bar}};
        if (trace && last) { /* streamed with the last replay; every preload piece is a task */
            cli_trace_prepare(filter, rotor_schedule_replay_task_estimate(s), rotor_chip_cores(simchip));
            ro.trace = trace;
            ro.trace_filter = &filter->f;
        }
        rotor_status st = rotor_schedule_replay(s, &runs[i].rep, simchip, false, &ro, &runs[i].sim, err);
        cli_progress_end(&bar);
        runs[i].sim_seconds = omp_get_wtime() - t0;
        if (st) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "--simulate (%s)", rotor_preload_designs[runs[i].design].name);
            rotor_error_prefix(err, prefix);
            return st;
        }
        runs[i].simulated = true;
        *traced = &runs[i];
        for (int j = 0; j < i; j++)
            if (runs[j].simulated && runs[j].sim.sim) {
                rotor_sim_free(runs[j].sim.sim);
                runs[j].sim.sim = NULL;
            }
    }
    return ROTOR_OK;
}

/* What `rotor schedule` was asked. */
typedef struct schedule_args {
    cli_hbm_args ha;
    const char *input, *topology, *solver;
    cli_trace_args tr;
    bool per_op, simulate, no_refine, profile;
} schedule_args;

/* What the options make of it: the pipeline's and the schedule's options,
 * the designs, the package and the one chip of it that --simulate replays. */
typedef struct schedule_job {
    rotor_pipeline_options po;
    rotor_schedule_options so;
    rotor_preload_design designs[ROTOR_PRELOAD_NDESIGNS];
    int ndesigns;
    const char *per; /* what one energy figure covers */
    rotor_chip chip, simchip;
} schedule_job;

/* Parses argv into a and checks it into j; returns -1 to go on, else the
 * exit status (0 after --help or --list). */
static int parse_schedule(int argc, char **argv, schedule_args *a, schedule_job *j) {
    const char *cmd = "schedule";
    static const cli_opt own[] = {
        CLI_HBM_OPTS(schedule_args, ha),
        {"per-op", 0, CLI_FLAG, offsetof(schedule_args, per_op), 0, 0},
        {"profile", 0, CLI_FLAG, offsetof(schedule_args, profile), 0, 0},
        CLI_TRACE_OPTS(schedule_args, tr),
        {"simulate", 0, CLI_FLAG, offsetof(schedule_args, simulate), 0, 0},
        {"topology", 0, CLI_VALUE, offsetof(schedule_args, topology), 0, 0},
        {"no-refine", 0, CLI_FLAG, offsetof(schedule_args, no_refine), 0, 0},
        {"solver", 0, CLI_VALUE, offsetof(schedule_args, solver), 0, 0},
        {0}};
    int prc = cli_parse_options(cmd, argc, argv, CLI_TAKES_ALL, &a->ha.m, own, a, schedule_usage, cli_list_zoo,
                                &a->input, "a model is required (try --help)");
    if (prc >= 0) return prc;
    const cli_hbm_args *ha = &a->ha;
    j->so.preload.no_refine = a->no_refine;
    if (cli_hbm_workload(cmd, a->input, ha, &j->po, &j->so)) return EXIT_BADINPUT;
    j->per = rotor_doc_energy_per(j->po.zoo.phase == ROTOR_PHASE_DECODE, j->po.zoo.batch, "step");
    if (cli_parse_solver(cmd, a->solver, &j->so.solver)) return EXIT_BADINPUT;
    j->po.schedule = &j->so;
    int drc = cli_parse_designs(cmd, ha->design, j->designs, &j->ndesigns);
    if (drc) return drc;
    /* --simulate with nothing to replay ran no simulation, silently (found
     * by an audit helper) */
    bool replayable = false;
    for (int i = 0; i < j->ndesigns; i++)
        replayable |= j->designs[i] != ROTOR_PRELOAD_IDEAL && j->designs[i] != ROTOR_PRELOAD_ROOFLINE;
    if (a->simulate && !replayable)
        return cli_usage_error(cmd, "--simulate replays basic, static, dyn and full; --design %s has none of them "
                               "(ideal and roofline are machines of their own)", ha->design);

    rotor_error err = {{0}};
    rotor_status st;
    rotor_chip *chip = &j->chip;
    if ((st = cli_chip(ha->m.chip ? ha->m.chip : "ipu-pod4", ha->m.sets, ha->m.nsets, chip, &err)))
        return cli_fail(cmd, st, &err);
    if (cli_apply_hbm_bw(cmd, ha->hbm, ha->m.sets, ha->m.nsets, chip)) return EXIT_BADINPUT;
    if (j->so.tensor_parallel > chip->chips)
        return cli_usage_error(cmd, "--tp: expected 1..%lld (the chips of %s), got %lld", (long long)chip->chips,
                               chip->name, (long long)j->so.tensor_parallel);

    /* the network: the schedule (HBM through a mesh's edge ports) and the
     * simulator see the same one */
    if (a->topology && (st = cli_apply_topology(chip, a->topology, &err))) return cli_fail(cmd, st, &err);
    /* the simulated chip: one chip of the package, as the schedule's */
    j->simchip = *chip;
    j->simchip.chips = 1;
    j->simchip.interchip_gbps = 0;

    if (a->tr.file && !strcmp(a->tr.file, "-") && ha->json)
        return cli_usage_error(cmd, "--trace - and --json would both write standard output");
    if ((a->tr.ops || a->tr.window || a->tr.cores) && !(a->tr.file && a->simulate))
        return cli_usage_error(cmd, "--trace-ops, --trace-window and --trace-cores filter the simulator's trace: "
                               "give --simulate and --trace FILE");
    return -1;
}

/* --json: the library's document (pipeline/doc.h), printed. */
static int print_json(const rotor_pipeline *p, const run *runs, int shown, const run *ideal, bool per_op,
                      const rotor_chip *simchip, const char *per) {
    char *text = NULL;
    rotor_error err = {{0}};
    rotor_status st = rotor_doc_schedule(&p->graph, p->schedule, runs, shown, ideal, per_op, simchip, per, &text, &err);
    if (!st) cli_puts(text);
    rotor_free(text);
    return st ? cli_fail("schedule", st, &err) : 0;
}

/* The scheduled model p: runs the designs (and --simulate replays them),
 * then writes the trace tr and prints the report; the exit status. */
static int report_designs(const schedule_args *a, const schedule_job *j, const rotor_pipeline *p, cli_output *tr,
                          cli_trace_filter *filter, double t_start) {
    const char *cmd = "schedule";
    const rotor_schedule *s = p->schedule;
    rotor_error err = {{0}};
    run runs[ROTOR_PRELOAD_NDESIGNS + 2];
    memset(runs, 0, sizeof runs);
    int nruns = 0, shown = 0, rc = 0;
    const run *ideal = NULL, *basic = NULL, *traced = NULL;
    double t_designs = rotor_clock_s();
    rotor_status st = rotor_doc_schedule_designs(s, j->designs, j->ndesigns, runs, &nruns, &shown, &err);
    t_designs = rotor_clock_s() - t_designs;
    for (int i = 0; i < nruns; i++) {
        if (runs[i].design == ROTOR_PRELOAD_IDEAL) ideal = &runs[i];
        if (runs[i].design == ROTOR_PRELOAD_BASIC) basic = &runs[i];
    }
    bool quiet = a->ha.m.quiet;
    double t_replay = rotor_clock_s();
    if (!st && a->simulate)
        st = simulate_designs(s, &j->simchip, runs, shown, a->tr.file ? tr->f : NULL, filter, &traced, quiet, &err);
    t_replay = a->simulate ? rotor_clock_s() - t_replay : 0;
    if (!st && a->profile)
        cli_profile_print(cmd, p, &(cli_profile_extra){.designs_s = t_designs, .replay_s = t_replay},
                          rotor_clock_s() - t_start);
    if (st) rc = cli_trace_fail(cmd, a->tr.file ? tr : NULL, st, &err);
    else {
        /* the trace first: a file that cannot be written fails with nothing on stdout */
        if (a->tr.file)
            rc = a->simulate && traced ? cli_trace_done(cmd, tr, filter, &traced->sim.trace, quiet)
                                       : write_trace(tr, s, &runs[shown - 1]);
        if (rc || tr->is_stdout) {
            /* --trace -: the trace alone on stdout */
        } else if (a->ha.json)
            rc = print_json(p, runs, shown, ideal, a->per_op, a->simulate ? &j->simchip : NULL, j->per);
        else {
            print_text(&p->graph, s, runs, shown, ideal, basic, a->per_op, j->per);
            print_sim(&j->simchip, runs, shown, j->per);
        }
    }
    for (int i = 0; i < nruns; i++) {
        rotor_schedule_report_free(&runs[i].rep);
        if (runs[i].simulated) rotor_schedule_replay_result_free(&runs[i].sim);
    }
    return rc;
}

int cmd_schedule(int argc, char **argv) {
    const char *cmd = "schedule";
    schedule_args a = {0};
    schedule_job j = {0};
    int rc = parse_schedule(argc, argv, &a, &j);
    if (rc >= 0) return rc;
    cli_trace_filter filter;
    if (cli_trace_filter_parse(cmd, &a.tr, &filter)) return EXIT_BADINPUT;
    cli_output tr = {0};
    if (a.tr.file && (rc = cli_output_open_model(cmd, "--trace", a.tr.file, a.input, "-schedule-trace.json", &tr))) {
        cli_trace_filter_free(&filter);
        return rc;
    }
    rotor_error err = {{0}};
    rotor_pipeline p;
    cli_progress bar;
    cli_progress_begin(&bar, cmd, "shard shapes searched", a.ha.m.quiet);
    j.so.progress = cli_progress_step;
    j.so.progress_ctx = &bar;
    double t_start = rotor_clock_s();
    rotor_status st = rotor_pipeline_run(&j.po, &j.chip, &p, &err);
    cli_progress_end(&bar);
    rc = st ? cli_fail(cmd, st, &err) : report_designs(&a, &j, &p, &tr, &filter, t_start);
    cli_output_abort(&tr); /* after a failure; a written trace was committed */
    rotor_pipeline_free(&p);
    cli_trace_filter_free(&filter);
    return rc;
}
