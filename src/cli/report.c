/* rotor report — one self-contained HTML file of a model's results
 * (docs/report.md): the compile (T10 with the VGM baseline beside it), its
 * replay on the simulator and, on a chip with HBM, Elk's schedule.  Every
 * chart is drawn from rotor's own results for the model asked:
 *   frontiers   each operator's Pareto frontier, the chosen plan ringed
 *               (T10 Figure 16);
 *   algorithm1  the (idle memory, time) points Algorithm 1 explored (T10
 *               Figure 19);
 *   op-times    time per operator shape (summed over its operators) split
 *               into compute, shift, reduction and setup, T10 against
 *               VGM's compute, load and store;
 *   heatmap     each core's busy share in the simulated run, shaded from
 *               the smallest share to the largest;
 *   energy      the energy model's joules (docs/energy.md): the compiled
 *               program's events, the simulator's, each design's;
 *   timeline    the schedule's preloads, executions and stalls, one row
 *               per layer (Elk Figure 10 style) and the Figure 18
 *               breakdown per design;
 *   sweeps      where explore's sweeps are (rotor explore --report).
 * A section that does not apply (no HBM, no fit in SRAM) says why.
 * Decisions: a zoo LLM runs its decode step unless --prefill, in every
 * section, as rotor schedule does; the heat map lays an all-to-all chip's
 * cores out row by row in the squarest grid its core count divides into
 * (a mesh: the mesh); the timeline shows the Full design when it was run,
 * else the last one asked for; the command line shows the output file by
 * its last path component (the page carries no paths, so the same input
 * gives the same bytes wherever it is written). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pipeline/docint.h"
#include "rotor/base/version.h"
#include "rotor/compile/energy.h"
#include "rotor/hbm/schedule.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/pipeline/report.h"
#include "rotor/sim/replay.h"
#include "rotor/sim/sim.h"

static const char *const CMD = "report";

static void report_usage(FILE *f) {
    fprintf(f,
            "usage: rotor report MODEL|FILE.onnx [-o FILE.html] [options]\n"
            "\n"
            "Writes one self-contained HTML file (inline SVG, no network fetches) of the model's\n"
            "results: the run (model, batch, sequence, chip, command line, version), one Pareto\n"
            "frontier per operator shape with its count and the chosen plans, Algorithm 1's curve,\n"
            "time bars per operator shape of T10 against VGM, a heat map of the cores' busy time in\n"
            "the simulated run, the energy by event and, on a chip with HBM, the Elk schedule's\n"
            "timeline (one row per layer) and its breakdown per design (docs/report.md).  Sections\n"
            "that do not apply say why.\n"
            "\n"
            "  -o, --output FILE   the HTML file (default MODEL-report.html; a directory: into it)\n"
            "  --chip NAME|FILE    preset or chip file; default ipu-mk2 (ipu-pod4 has HBM)\n"
            "  --set KEY=VALUE     override one chip field (repeatable)\n"
            "  --topology T        all-to-all or mesh:WxH, for the simulator and the schedule\n"
            "  --batch N, --seq N, --layers N, --dim k=v,..., --input NAME=AxB,.., --value NAME=SPEC\n"
            "                      shape the model, as in rotor compile\n"
            "  --max-model-bytes N refuse a model file over N bytes (default 2 GiB, docs/onnx.md)\n"
            "  --simplify          fold BatchNormalization into its convolution and fold constants\n"
            "                      before grouping (docs/simplify.md)\n"
            "  --prefill           an LLM's prefill instead of its decode step (--decode, the default)\n"
            "  --hbm-bw BW         total HBM bandwidth of all chips (TB/s)\n"
            "  --design D,...      the schedule's designs (default all)\n"
            "  --tp N              chips the model is split over in the schedule\n"
            "  --threads N         search threads\n"
            CLI_CACHE_USAGE
            "  --list              list the zoo\n"
            "  -q, --quiet         no progress on stderr, and no 'wrote FILE' line on stdout\n"
            "  --progress WHEN     auto (a bar on a terminal), always (also lines every 5 s in a log), never\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 written, 1 the model fits neither in SRAM nor (no HBM) anywhere, 2 bad input\n");
}

typedef struct report_args {
    cli_hbm_args ha;
    const char *input, *outfile, *topology;
} report_args;

/* Everything the page is drawn from. */
typedef struct report {
    const char *model;
    int argc;                   /* the command line, from "report" on */
    char **argv;
    rotor_pipeline_options po;  /* the workload: batch, seq, phase, --dim */
    rotor_chip chip;
    rotor_pipeline comp;        /* t10, vgm, program */
    rotor_status comp_st;       /* ROTOR_OK, or NOFIT (with HBM: the schedule still runs) */
    rotor_error comp_err;
    rotor_replay_result rr;
    double *busy;               /* per core: compute busy / makespan, with the replay */
    bool replayed;
    rotor_pipeline sched;       /* schedule, with HBM */
    bool has_hbm, scheduled, decode, quiet;
    rotor_error sched_err;      /* why the schedule did not fit, when the compile did */
    int nruns;
    rotor_preload_design designs[ROTOR_PRELOAD_NDESIGNS];
    rotor_schedule_report runs[ROTOR_PRELOAD_NDESIGNS];
} report;

static double us(int64_t ps) { return (double)ps * 1e-6; }

/* ---- the work ------------------------------------------------------------ */

/* The replay of the compiled program, streamed (it keeps only the tasks in
 * flight, docs/simulator.md "Streaming"), with each core's compute busy time
 * over the makespan. */
static rotor_status replay(report *r, rotor_error *err) {
    int64_t cores = rotor_chip_cores(&r->chip);
    int64_t *busy = calloc((size_t)cores, sizeof *busy);
    if (!busy || !(r->busy = calloc((size_t)cores, sizeof *r->busy))) {
        free(busy);
        return rotor_nomem(err);
    }
    cli_progress bar;
    cli_progress_begin(&bar, CMD, "replaying", r->quiet);
    rotor_replay_options ro = {.progress = {cli_progress_sim, &bar}, .core_busy_ps = busy};
    rotor_status st = rotor_replay(&r->comp.program, &r->chip, &ro, &r->rr, NULL, err);
    cli_progress_end(&bar);
    double ms = (double)r->rr.stats.makespan_ps;
    for (int64_t c = 0; !st && c < cores; c++) r->busy[c] = ms > 0 ? 100.0 * (double)busy[c] / ms : 0;
    free(busy);
    r->replayed = !st;
    return st;
}

/* The HBM schedule of the same model, every design asked for. */
static int schedule(report *r, const rotor_pipeline_options *base, const rotor_schedule_options *so,
                    const rotor_preload_design *designs, int nd) {
    rotor_pipeline_options po = *base;
    po.t10 = po.vgm = po.vgm_oracle = po.program = false;
    rotor_schedule_options sso = *so;
    po.schedule = &sso;
    cli_progress bar;
    cli_progress_begin(&bar, CMD, "schedule: shard shapes searched", r->quiet);
    sso.progress = cli_progress_step;
    sso.progress_ctx = &bar;
    rotor_error err = {{0}};
    rotor_status st = rotor_pipeline_run(&po, &r->chip, &r->sched, &err);
    cli_progress_end(&bar);
    for (int i = 0; i < nd && !st; i++) {
        st = rotor_schedule_run(r->sched.schedule, designs[i], &r->runs[i], &err);
        if (!st) r->designs[r->nruns++] = designs[i];
    }
    if (st == ROTOR_ERR_NOFIT && !r->comp_st) { /* the compile's sections stand; the schedule's say why not */
        r->sched_err = err;
        return 0;
    }
    if (st) return cli_fail(CMD, st, &err);
    r->scheduled = true;
    return 0;
}

/* ---- the page ------------------------------------------------------------ */

/* A figure's end with its caption (printf-style), and its section's. */
__attribute__((format(printf, 2, 3))) static void end_figure(FILE *f, const char *fmt, ...) {
    char cap[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cap, sizeof cap, fmt, ap);
    va_end(ap);
    cli_html_figure_end(f, cap);
    cli_html_section_end(f);
}

/* An argument as a POSIX shell reads it back: bare when it holds only
 * characters no shell treats specially, else in single quotes. */
static void shell_word(FILE *f, const char *a) {
    bool bare = *a != 0;
    for (const char *q = a; *q; q++)
        bare = bare && (strchr("_.,=:/+%@-", *q) || (*q >= '0' && *q <= '9') || ((*q | 32) >= 'a' && (*q | 32) <= 'z'));
    if (bare) {
        cli_xml_text(f, a);
        return;
    }
    fputc('\'', f);
    for (const char *q = a; *q; q++) {
        char c[2] = {*q, 0};
        cli_xml_text(f, *q == '\'' ? "'\\''" : c);
    }
    fputc('\'', f);
}

static const char *last_component(const char *path) {
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* The command line, the output file by its last path component. */
static void command_line(FILE *f, const report *r) {
    fputs("rotor", f);
    for (int i = 0; i < r->argc; i++) {
        const char *a = r->argv[i], *prev = i ? r->argv[i - 1] : "";
        fputc(' ', f);
        if (!strcmp(prev, "-o") || !strcmp(prev, "--output")) shell_word(f, last_component(a));
        else if (!strncmp(a, "--output=", 9) || (!strncmp(a, "-o", 2) && a[2] && a[1] != '-')) {
            size_t k = a[1] == '-' ? 9 : 2;
            fprintf(f, "%.*s", (int)k, a);
            shell_word(f, last_component(a + k));
        } else shell_word(f, a);
    }
}

static void run_row(FILE *f, const char *field, const char *value) {
    fprintf(f, "<tr data-field=\"%s\"><td>%s</td><td>", field, field);
    cli_xml_text(f, value);
    fputs("</td></tr>\n", f);
}

/* What was run: the model as shaped, the chip, the command, the version. */
static void section_run(FILE *f, const report *r) {
    cli_html_section(f, "run", "Run");
    const rotor_zoo_options *z = &r->po.zoo;
    bool onnx = rotor_model_is_onnx(r->model);
    const rotor_zoo_entry *ze = onnx ? NULL : rotor_zoo_find(r->model);
    char v[512];
    fputs("<table class=\"run\">\n", f);
    if (ze) snprintf(v, sizeof v, "%s (%s)", r->model, ze->description);
    run_row(f, "model", ze ? v : r->model);
    if (onnx) {
        snprintf(v, sizeof v, "as the file's dimensions are bound%s%s", r->po.onnx.dims ? ": --dim " : " (no --dim)",
                 r->po.onnx.dims ? r->po.onnx.dims : "");
        run_row(f, "batch", v);
        run_row(f, "sequence", v);
    } else {
        snprintf(v, sizeof v, "%lld", (long long)(z->batch ? z->batch : 1));
        run_row(f, "batch", v);
        /* the model's own figures are its description's, on the model row:
         * under "sequence" they read as this run's (a 2-layer Llama 2 13B
         * showed "40 x 5120"; found by an audit helper) */
        if (z->seq) snprintf(v, sizeof v, "%lld", (long long)z->seq);
        else snprintf(v, sizeof v, "the model's default (docs/zoo.md)");
        run_row(f, "sequence", v);
        int64_t all = rotor_zoo_layers(r->model);
        if (z->layers) snprintf(v, sizeof v, "%lld of the model's %lld", (long long)z->layers, (long long)all);
        else snprintf(v, sizeof v, "all (%lld)", (long long)all);
        if (all > 0) run_row(f, "layers", v);
        if (ze && ze->llm) run_row(f, "phase", r->decode ? "decode (one token per sequence)" : "prefill");
    }
    char topo[64];
    int used = snprintf(v, sizeof v, "%s: %lld chip%s x %lld cores, %s", r->chip.name, (long long)r->chip.chips,
                        r->chip.chips > 1 ? "s" : "", (long long)r->chip.cores_per_chip,
                        rotor_chip_topology_text(&r->chip, topo, sizeof topo));
    /* as run: --hbm-bw and --tp change the schedule's figures */
    if (r->has_hbm && used > 0 && (size_t)used < sizeof v)
        snprintf(v + used, sizeof v - (size_t)used, ", HBM %.6g TB/s in all",
                 r->chip.hbm_gbps * (double)r->chip.chips / 1000.0);
    run_row(f, "chip", v);
    if (r->has_hbm && r->sched.schedule) {
        snprintf(v, sizeof v, "%lld of %lld chips", (long long)r->sched.schedule->tensor_parallel, (long long)r->chip.chips);
        run_row(f, "tensor parallel", v);
    }
    fputs("<tr data-field=\"command\"><td>command</td><td><code>", f);
    command_line(f, r);
    fputs("</code></td></tr>\n", f);
    run_row(f, "version", "rotor " ROTOR_VERSION);
    fputs("</table>\n", f);
    cli_html_section_end(f);
}

static void section_summary(FILE *f, const report *r) {
    cli_html_section(f, "summary", "Summary");
    char topo[64];
    fprintf(f, "<table>\n<tr><th>what</th><th>value</th></tr>\n");
    fprintf(f, "<tr><td>chip</td><td>");
    cli_xml_text(f, r->chip.name);
    fprintf(f, ": %lld chip%s x %lld cores, %s, %lld B SRAM per core</td></tr>\n", (long long)r->chip.chips,
            r->chip.chips > 1 ? "s" : "", (long long)r->chip.cores_per_chip,
            rotor_chip_topology_text(&r->chip, topo, sizeof topo), (long long)rotor_chip_sram(&r->chip));
    if (r->comp_st) {
        fputs("<tr><td>T10 compile</td><td>", f);
        cli_xml_text(f, r->comp_err.msg);
        fputs("</td></tr>\n", f);
    } else {
        const rotor_compile_result *t = &r->comp.t10;
        fprintf(f, "<tr><td>operators (grouped)</td><td>%d</td></tr>\n", t->nops);
        fprintf(f, "<tr><td>T10 predicted time</td><td>%.3f us</td></tr>\n", t->total_s * 1e6);
        if (!r->comp.vgm_status)
            fprintf(f, "<tr><td>VGM baseline (Roller)</td><td>%.3f us (T10 %.2fx faster)</td></tr>\n",
                    r->comp.vgm.total_s * 1e6, r->comp.vgm.total_s / t->total_s);
        fprintf(f, "<tr><td>SRAM per core</td><td>idle %lld B, peak %lld B</td></tr>\n", (long long)t->idle_bytes,
                (long long)t->peak_bytes);
        /* what `rotor compile` notes under its totals, on a mesh */
        char note[320];
        for (int k = 0; k < 2; k++)
            if (k ? rotor_compile_mesh_setup_note(&r->chip, t, note, sizeof note)
                  : rotor_chip_mesh_caveat(&r->chip, note, sizeof note)) {
                fputs("<tr><td>note</td><td>", f);
                cli_xml_text(f, note);
                fputs("</td></tr>\n", f);
            }
    }
    if (r->replayed)
        fprintf(f, "<tr><td>simulated time</td><td>%.3f us (model %+.2f%%), %lld tasks</td></tr>\n",
                r->rr.simulated_s * 1e6,
                r->rr.predicted_s > 0 ? 100.0 * (r->rr.simulated_s / r->rr.predicted_s - 1) : 0.0,
                (long long)r->rr.stats.tasks);
    for (int i = 0; i < r->nruns; i++)
        fprintf(f, "<tr><td>schedule %s</td><td>%.4f ms per %s</td></tr>\n", rotor_preload_designs[r->designs[i]].name,
                r->runs[i].latency_s * 1e3, r->decode ? "token (decode step)" : "step");
    fputs("</table>\n", f);
    fputs("<nav><a href=\"#frontiers\">frontiers</a><a href=\"#algorithm1\">Algorithm 1</a>"
          "<a href=\"#op-times\">operator times</a><a href=\"#heatmap\">core heat map</a><a href=\"#energy\">energy</a>"
          "<a href=\"#timeline\">schedule timeline</a><a href=\"#breakdown\">Elk breakdown</a>"
          "<a href=\"#sweeps\">sweeps</a></nav>\n",
          f);
    cli_html_section_end(f);
}

/* The vendor operators after the frontiers, one name per shape with its
 * count, as the charts are. */
static int vendor_list(FILE *f, const report *r, int vendor) {
    rotor_report_group *g = NULL;
    int n = 0;
    rotor_error err = {{0}};
    if (rotor_report_groups(&r->comp.graph, &r->comp.t10, true, &g, &n, NULL, &err)) return cli_nomem(CMD);
    fprintf(f, "<p class=\"vendor\">%d vendor operators (no tensor expression, so no plans): ", vendor);
    for (int k = 0, shown = 0; k < n; k++) {
        const rotor_op *op = &r->comp.graph.ops[g[k].first];
        if (!op->vendor) continue;
        fputs(shown++ ? ", " : "", f);
        cli_xml_text(f, op->name);
        if (g[k].count > 1) fprintf(f, " x%d", g[k].count);
    }
    fputs("</p>\n", f);
    free(g);
    return 0;
}

/* One group's chart: its frontier, the plans its operators chose. */
static void frontier_chart(FILE *f, const report *r, const rotor_report_group *g, const int *group_of, int k,
                           double *buf, int *chosen, int most) {
    const rotor_compile_result *t = &r->comp.t10;
    const rotor_frontier *fr = &t->frontiers[t->ops[g->first].frontier];
    for (int i = 0; i < fr->n; i++) {
        buf[i] = (double)fr->v[i].info.memory / 1024.0;
        buf[most + i] = fr->v[i].cost.total * 1e6;
        chosen[i] = 0;
    }
    for (int o = 0; o < t->nops; o++)
        if (group_of[o] == k && t->ops[o].active >= 0 && t->ops[o].active < fr->n) chosen[t->ops[o].active]++;
    char title[160];
    if (g->count > 1) snprintf(title, sizeof title, "%.60s x%d", r->comp.graph.ops[g->first].name, g->count);
    else snprintf(title, sizeof title, "%.60s", r->comp.graph.ops[g->first].name);
    cli_frontier_chart c = {title, fr->n, buf, buf + most, chosen, fr->truncated};
    fprintf(f, "<figure class=\"chart\" data-kind=\"frontier\" data-count=\"%d\">\n", g->count);
    cli_svg_frontier(f, &c);
    cli_html_figure_end(f, NULL);
}

/* Why the compile gave no plans: the SRAM only when that is what it said
 * (ROTOR_ERR_NOFIT); every failure was called that until 2026-12-04, a
 * package of 4 chips, which T10 refuses to compile, among them (found by an
 * audit helper). */
static const char *not_compiled(const report *r) {
    return r->comp_st == ROTOR_ERR_NOFIT ? "The model does not fit in the chip's SRAM" : "The model was not compiled";
}

/* T10 Figure 16, one chart per distinct operator shape (vendor operators
 * have no plans): a model's repeated layers share one chart, with their
 * count. */
static int section_frontiers(FILE *f, const report *r) {
    cli_html_section(f, "frontiers", "Pareto frontiers of the operator shapes (T10 Figure 16)");
    if (r->comp_st) {
        cli_html_section_na(f, "%s, so it has no compiled plans: %s", not_compiled(r), r->comp_err.msg);
        return 0;
    }
    const rotor_compile_result *t = &r->comp.t10;
    rotor_report_group *groups = NULL;
    int ng = 0, vendor = 0, most = 1;
    int *group_of = malloc(sizeof *group_of * (size_t)(t->nops ? t->nops : 1));
    rotor_error err = {{0}};
    if (!group_of || rotor_report_groups(&r->comp.graph, t, false, &groups, &ng, group_of, &err)) {
        free(group_of);
        return cli_nomem(CMD);
    }
    for (int o = 0; o < t->nops; o++) vendor += t->ops[o].vendor;
    for (int i = 0; i < t->nfrontiers; i++) most = t->frontiers[i].n > most ? t->frontiers[i].n : most;
    cli_html_p(f, "Each operator shape's frontier of (memory per core, predicted time) as the compile searched it, "
                  "once per shape (expression and extents): %d operators with plans in %d shapes, the count after "
                  "the name (x24: 24 operators of that shape). Ringed in red: the active plans Algorithm 1 chose "
                  "for them.",
               t->nops - vendor, ng);
    double *buf = malloc(sizeof(double) * 2 * (size_t)most);
    int *chosen = malloc(sizeof(int) * (size_t)most);
    int rc = buf && chosen ? 0 : cli_nomem(CMD);
    if (!rc) {
        fputs("<div class=\"grid\">\n", f);
        for (int k = 0; k < ng; k++) frontier_chart(f, r, &groups[k], group_of, k, buf, chosen, most);
        fputs("</div>\n", f);
        if (vendor) rc = vendor_list(f, r, vendor);
        if (!rc) cli_html_section_end(f);
    }
    free(buf);
    free(chosen);
    free(groups);
    free(group_of);
    return rc;
}

/* T10 Figure 19: Algorithm 1's explored points, and the one it kept. */
static int section_algorithm1(FILE *f, const report *r) {
    cli_html_section(f, "algorithm1", "Algorithm 1: idle memory against end-to-end time (T10 Figure 19)");
    if (r->comp_st) {
        cli_html_section_na(f, "%s%s (%s).", not_compiled(r),
                            r->comp_st == ROTOR_ERR_NOFIT ? ": Algorithm 1 found no assignment" : "", r->comp_err.msg);
        return 0;
    }
    const rotor_compile_result *t = &r->comp.t10;
    int n = t->ncurve;
    double *x = malloc(sizeof(double) * (size_t)(n + 1)), *y = malloc(sizeof(double) * (size_t)(n + 1));
    if (!x || !y) {
        free(x);
        free(y);
        return cli_nomem(CMD);
    }
    for (int i = 0; i < n; i++) {
        x[i] = (double)t->curve[i].idle_bytes / 1024.0;
        y[i] = t->curve[i].total_s * 1e6;
    }
    x[n] = (double)t->idle_bytes / 1024.0;
    y[n] = t->total_s * 1e6;
    cli_series s[2] = {{"explored step", n, x, y, false}, {"kept (the compiled result)", 1, x + n, y + n, false}};
    cli_plot p = {"Algorithm 1's reconciliation steps", "idle memory per core (KiB)", "end-to-end time (us)", false,
                  false};
    cli_html_figure_begin(f, "algorithm1");
    cli_svg_lines_inline(f, &p, s, 2);
    char cap[160];
    snprintf(cap, sizeof cap, "%d steps; steps where an active plan did not fit are left out.", n);
    cli_html_figure_end(f, cap);
    free(x);
    free(y);
    cli_html_section_end(f);
    return 0;
}

/* Adds operator o's times to its group's rows (T10, then VGM's). */
static void add_op_times(const report *r, int o, double *d, bool vgm) {
    const rotor_op_schedule *s = &r->comp.t10.ops[o];
    d[0] += s->compute_s * 1e6;
    d[1] += (s->comm_s - s->hidden_s) * 1e6; /* the shifts not under compute */
    d[2] += s->reduction_s * 1e6;
    d[3] += s->setup_s * 1e6;
    if (!vgm) return;
    const rotor_vgm_op *g = &r->comp.vgm.ops[o];
    d[6] += g->compute_s * 1e6;
    d[10] += g->load_s * 1e6;
    d[11] += g->store_s * 1e6;
}

/* Per-operator times: T10's compute, shift, reduction and setup against
 * VGM's compute, load and store, two bars per operator shape (summed over
 * its operators: what the shape adds to the end-to-end time), so that a
 * model's repeated layers take one pair of bars, not one per layer. */
static int section_op_times(FILE *f, const report *r) {
    cli_html_section(f, "op-times", "Time per operator shape, T10 against VGM");
    if (r->comp_st) {
        cli_html_section_na(f, "%s under T10: %s", not_compiled(r), r->comp_err.msg);
        return 0;
    }
    static const cli_bar_cat cats[] = {{"compute", "#1f77b4"},    {"shift", "#ff7f0e"},
                                       {"reduction", "#2ca02c"},  {"setup", "#9467bd"},
                                       {"VGM load", "#8c564b"},   {"VGM store", "#e377c2"}};
    const rotor_compile_result *t = &r->comp.t10;
    bool vgm = r->comp.vgm_status == ROTOR_OK;
    if (!vgm) cli_html_na(f, "The VGM baseline does not fit, so only T10's bars are drawn: %s", r->comp.vgm_err.msg);
    rotor_report_group *groups = NULL;
    int ng = 0, *group_of = malloc(sizeof(int) * (size_t)(t->nops ? t->nops : 1));
    rotor_error err = {{0}};
    int rc = !group_of || rotor_report_groups(&r->comp.graph, t, true, &groups, &ng, group_of, &err) ? cli_nomem(CMD)
                                                                                                  : 0;
    int per = vgm ? 2 : 1, nrows = ng * per;
    double *v = rc ? NULL : calloc((size_t)(nrows ? nrows : 1) * 6, sizeof *v);
    char (*names)[96] = rc ? NULL : calloc((size_t)(nrows ? nrows : 1), sizeof *names);
    const char **labels = rc ? NULL : calloc((size_t)(nrows ? nrows : 1), sizeof *labels);
    int *group = rc ? NULL : calloc((size_t)(nrows ? nrows : 1), sizeof *group);
    if (!rc && (!v || !names || !labels || !group)) rc = cli_nomem(CMD);
    for (int o = 0; o < t->nops && !rc; o++) add_op_times(r, o, v + group_of[o] * per * 6, vgm);
    for (int k = 0; k < ng && !rc; k++) {
        const rotor_report_group *g = &groups[k];
        int row = k * per;
        if (g->count > 1) snprintf(names[row], sizeof names[row], "%.60s x%d T10", r->comp.graph.ops[g->first].name, g->count);
        else snprintf(names[row], sizeof names[row], "%.70s T10", r->comp.graph.ops[g->first].name);
        labels[row] = names[row];
        group[row] = k;
        if (vgm) {
            snprintf(names[row + 1], sizeof names[row + 1], "VGM");
            labels[row + 1] = names[row + 1];
            group[row + 1] = k;
        }
    }
    cli_bars b = {"Predicted time per operator shape, summed over its operators", "time (us)", 6, cats, nrows, ng,
                  labels, group, v};
    if (!rc) {
        cli_html_figure_begin(f, "op-times");
        cli_svg_bars(f, &b);
        end_figure(f, "%d operators in %d shapes (xN: N operators of the shape, their times summed). T10: the active "
                      "plans' compute, shifts (communication) and reduction, and the setup that gathers them; VGM "
                      "(Roller's tiles): compute, loads from and stores to the global memory slices.",
                   t->nops, ng);
    }
    free(v);
    free(names);
    free(labels);
    free(group);
    free(groups);
    free(group_of);
    return rc;
}

/* Each core's compute busy share, chips side by side. */
static void section_heatmap(FILE *f, const report *r) {
    cli_html_section(f, "heatmap", "Core utilisation in the simulated run");
    if (!r->replayed) {
        cli_html_section_na(f, "No program to replay: %s (%s).", not_compiled(r), r->comp_err.msg);
        return;
    }
    int64_t n = r->chip.cores_per_chip, w = n, h = 1;
    bool mesh = r->chip.topology == ROTOR_TOPO_MESH;
    if (mesh) {
        w = r->chip.mesh_width;
        h = r->chip.mesh_height;
    } else {
        for (int64_t d = 1; d * d <= n; d++)
            if (n % d == 0) h = d;
        w = n / h;
        if (w > 4 * h) { /* no square-ish factorisation: rows of ceil(sqrt(n)), the last one short */
            w = (int64_t)ceil(sqrt((double)n));
            h = (n + w - 1) / w;
        }
    }
    cli_heatmap hm = {"Compute busy time per core (share of the simulated makespan)", "% busy", r->busy, r->chip.chips,
                      n, w, h, mesh};
    cli_html_figure_begin(f, "heatmap");
    cli_svg_heatmap(f, &hm);
    char cap[256];
    snprintf(cap, sizeof cap, "%lld cores; the sum of each core's compute tasks over the makespan of %.3f us "
                              "(the simulator's task timings; shifts and setup are not counted).",
             (long long)rotor_chip_cores(&r->chip), r->rr.simulated_s * 1e6);
    cli_html_figure_end(f, cap);
    cli_html_section_end(f);
}

static const char *no_hbm(const report *r) {
    return r->has_hbm ? r->sched_err.msg
                      : "The chip has no HBM, so the model is not scheduled from it (Elk); give a chip with HBM, "
                        "e.g. --chip ipu-pod4.";
}

/* A timeline lane's label: "layer 3 (12 operators)", or the names of a
 * run of operators outside layers. */
static void lane_label(const rotor_schedule *s, const int *lane_of, int lane, int layer_no, char *buf, size_t size) {
    int first = -1, last = -1;
    for (int o = 0; o < s->nops; o++)
        if (lane_of[o] == lane) {
            if (first < 0) first = o;
            last = o;
        }
    int n = last - first + 1;
    if (s->ops[first].layer) snprintf(buf, size, "layer %d (%d operator%s)", layer_no, n, n > 1 ? "s" : "");
    else if (n == 1) snprintf(buf, size, "%.40s", s->ops[first].name);
    else snprintf(buf, size, "%.20s .. %.20s (%d)", s->ops[first].name, s->ops[last].name, n);
}

/* One row of the energy section: what was priced, per what, its joules. */
typedef struct energy_row {
    char what[96];
    const char *per;
    rotor_energy e;
} energy_row;

/* The energy model's numbers (docs/energy.md), as the subcommands print
 * them: the compiled program's events over its predicted time (rotor
 * compile --energy), the replay's events over the simulated time (rotor
 * simulate), each design's events over its latency on the tensor-parallel
 * chips (rotor schedule).  A row that cannot be counted is left out, its
 * reason in *why. */
static int energy_rows(const report *r, energy_row *rows, rotor_error *why) {
    int n = 0;
    const char *per = rotor_doc_energy_per(r->decode, r->po.zoo.batch, "inference");
    rotor_energy_counts c;
    if (!r->comp_st) {
        rotor_error err = {{0}};
        if (rotor_energy_program(&r->comp.program, &r->chip, &c, &err)) *why = err;
        else {
            rows[n] = (energy_row){.what = "T10 compile (model)", .per = per};
            rotor_energy_price(&r->chip, &c, r->comp.t10.total_s, &rows[n++].e);
        }
    }
    if (r->replayed) {
        c = rotor_sim_energy_counts(&r->rr.stats);
        rows[n] = (energy_row){.what = "simulated run", .per = per};
        rotor_energy_price(&r->chip, &c, r->rr.simulated_s, &rows[n++].e);
    }
    for (int i = 0; i < r->nruns; i++) {
        rotor_error err = {{0}};
        if (rotor_schedule_energy(r->sched.schedule, &r->runs[i], &c, &err)) {
            *why = err;
            continue;
        }
        rotor_chip pkg = r->sched.schedule->chip;
        pkg.chips = r->sched.schedule->tensor_parallel; /* static power of the chips the schedule runs on */
        snprintf(rows[n].what, sizeof rows[n].what, "schedule %s", rotor_preload_designs[r->designs[i]].name);
        rows[n].per = rotor_doc_energy_per(r->decode, r->po.zoo.batch, "step");
        rotor_energy_price(&pkg, &c, r->runs[i].latency_s, &rows[n++].e);
    }
    return n;
}

/* Energy per inference or token, by event (docs/energy.md). */
static void section_energy(FILE *f, const report *r) {
    cli_html_section(f, "energy", "Energy (docs/energy.md)");
    energy_row rows[2 + ROTOR_PRELOAD_NDESIGNS];
    rotor_error why = {{0}};
    int n = energy_rows(r, rows, &why);
    if (why.msg[0]) cli_html_na(f, "Some energy could not be counted: %s", why.msg);
    if (n == 0) {
        cli_html_section_na(f, "Nothing ran to count: %s", r->comp_st ? r->comp_err.msg : no_hbm(r));
        return;
    }
    cli_html_p(f, "The chip's energy coefficients (estimates: docs/chip-format.md) times the events counted: FLOPs, "
                  "SRAM bytes, byte-hops, HBM and inter-chip bytes, plus static power times the time. Compare "
                  "designs and plans priced alike, not as measured joules.");
    fputs("<table class=\"energy\">\n<tr><th>what</th><th>per</th><th>total J</th><th>compute J</th><th>SRAM J</th>"
          "<th>links J</th><th>HBM J</th><th>inter-chip J</th><th>static J</th><th>time s</th><th>EDP J s</th></tr>\n",
          f);
    double most = 0;
    for (int i = 0; i < n; i++) {
        const rotor_energy *e = &rows[i].e;
        fputs("<tr><td>", f);
        cli_xml_text(f, rows[i].what);
        fprintf(f, "</td><td>%s</td><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>%.4g</td>"
                   "<td>%.4g</td><td>%.4g</td><td>%.4g</td></tr>\n",
                rows[i].per, e->total_j, e->compute_j, e->sram_j, e->link_j, e->hbm_j, e->interchip_j, e->static_j,
                e->seconds, e->edp);
        most = fmax(most, e->total_j);
    }
    fputs("</table>\n", f);
    /* the bars in mJ or uJ when the totals are under a joule */
    double scale = most >= 1 ? 1 : most >= 1e-3 ? 1e3 : 1e6;
    const char *unit = most >= 1 ? "energy (J)" : most >= 1e-3 ? "energy (mJ)" : "energy (uJ)";
    static const cli_bar_cat cats[] = {{"compute", "#1f77b4"}, {"SRAM", "#ff7f0e"},      {"links", "#2ca02c"},
                                       {"HBM", "#d62728"},     {"inter-chip", "#9467bd"}, {"static", "#7f7f7f"}};
    double v[(2 + ROTOR_PRELOAD_NDESIGNS) * 6];
    const char *labels[2 + ROTOR_PRELOAD_NDESIGNS];
    for (int i = 0; i < n; i++) {
        const rotor_energy *e = &rows[i].e;
        double *d = v + i * 6;
        d[0] = e->compute_j * scale;
        d[1] = e->sram_j * scale;
        d[2] = e->link_j * scale;
        d[3] = e->hbm_j * scale;
        d[4] = e->interchip_j * scale;
        d[5] = e->static_j * scale;
        labels[i] = rows[i].what;
    }
    cli_bars b = {"Energy by event", unit, 6, cats, n, 1, labels, NULL, v};
    cli_html_figure_begin(f, "energy");
    cli_svg_bars(f, &b);
    cli_html_figure_end(f, "The compile's row prices the program's events over its predicted time (rotor compile "
                           "--energy), the simulated run's the simulator's events over the simulated time (rotor "
                           "simulate), a design's its schedule's events over its latency (rotor schedule).");
    cli_html_section_end(f);
}

/* Elk Figure 10 style: one row per layer (rotor_report_layer_rows) of the
 * timeline's design, each operator's bars in its layer's row. */
static int section_timeline(FILE *f, const report *r) {
    cli_html_section(f, "timeline", "Schedule timeline: preloads, executions and stalls (Elk Figure 10 style)");
    if (!r->scheduled) {
        cli_html_section_na(f, "%s%s", r->has_hbm ? "The HBM schedule does not fit: " : "", no_hbm(r));
        return 0;
    }
    int k = r->nruns - 1;
    for (int i = 0; i < r->nruns; i++)
        if (r->designs[i] == ROTOR_PRELOAD_FULL) k = i;
    const rotor_schedule *s = r->sched.schedule;
    const rotor_preload_result *res = &r->runs[k].result;
    size_t n1 = (size_t)(res->nops ? res->nops : 1);
    cli_timeline_row *rows = calloc(n1, sizeof *rows);
    int *lane_of = calloc(n1, sizeof *lane_of);
    char (*labels)[96] = calloc(n1, sizeof *labels);
    const char **lp = calloc(n1, sizeof *lp);
    int rc = rows && lane_of && labels && lp ? 0 : cli_nomem(CMD);
    int nlanes = rc ? 0 : rotor_report_layer_rows(s, lane_of);
    for (int o = 0, layer_no = 0, lane = -1; !rc && o < res->nops; o++) {
        const rotor_preload_op_result *x = &res->ops[o];
        rows[o] = (cli_timeline_row){s->ops[o].name, us(x->pre_start_ps), us(x->pre_end_ps), us(x->exe_start_ps),
                                     us(x->exe_end_ps), us(x->stall_ps)};
        if (lane_of[o] == lane) continue;
        lane = lane_of[o];
        layer_no += s->ops[o].layer != 0;
        lane_label(s, lane_of, lane, layer_no, labels[lane], sizeof labels[lane]);
        lp[lane] = labels[lane];
    }
    if (!rc) {
        /* the title in the axis's unit (us), not ms (issue 46) */
        cli_html_figure_begin(f, "timeline");
        char t[200];
        snprintf(t, sizeof t, "%s design, one chip of %lld (tensor parallel): %.1f us per %s",
                 rotor_preload_designs[r->designs[k]].name, (long long)s->tensor_parallel, r->runs[k].latency_s * 1e6,
                 r->decode ? "token" : "step");
        cli_svg_timeline(f, &(cli_timeline){t, res->nops, nlanes, rows, lane_of, lp});
        end_figure(f, "The analytical schedule (rotor schedule --per-op) of %d operators in %d rows, one per layer "
                      "(Elk's layer ids) and one per run of operators outside layers: each operator's preload from "
                      "HBM and its execution, with the stall inside the execution drawn at its end.",
                   res->nops, nlanes);
    }
    free(rows);
    free(lane_of);
    free(labels);
    free(lp);
    return rc;
}

/* Elk Figure 18a: each design's latency split by what runs. */
static void section_breakdown(FILE *f, const report *r) {
    cli_html_section(f, "breakdown", "Latency breakdown per design (Elk Figure 18)");
    if (!r->scheduled) {
        cli_html_section_na(f, "%s%s", r->has_hbm ? "The HBM schedule does not fit: " : "", no_hbm(r));
        return;
    }
    static const cli_bar_cat cats[] = {{"preload only", "#ff7f0e"}, {"execute only", "#1f77b4"},
                                       {"overlap", "#2ca02c"},      {"stall", "#d62728"},
                                       {"idle", "#7f7f7f"}};
    double v[ROTOR_PRELOAD_NDESIGNS * 5];
    const char *labels[ROTOR_PRELOAD_NDESIGNS];
    for (int i = 0; i < r->nruns; i++) {
        const rotor_preload_breakdown *b = &r->runs[i].result.breakdown;
        double *d = v + i * 5;
        d[0] = us(b->preload_ps);
        d[1] = us(b->execute_ps);
        d[2] = us(b->overlap_ps);
        d[3] = us(b->stall_ps);
        d[4] = us(b->idle_ps);
        labels[i] = rotor_preload_designs[r->designs[i]].name;
    }
    cli_bars b = {"Per-token (or per-step) latency by what runs", "time (us)", 5, cats, r->nruns, 1, labels, NULL, v};
    cli_html_figure_begin(f, "breakdown");
    cli_svg_bars(f, &b);
    cli_html_figure_end(f, "Preload only: HBM loading while no operator computes; execute only: computing without "
                           "a preload; overlap: both; stall: executions held up by contention (docs/schedule.md).");
    cli_html_section_end(f);
}

static void section_sweeps(FILE *f, const report *r) {
    cli_html_section(f, "sweeps", "Design-space sweeps");
    cli_html_section_na(f, "A sweep schedules the model at many chips; it has its own report: rotor explore %s "
                           "--sweep hbm-bw=2,4,8,16 --report FILE.html (docs/explore.md).",
                        r->model);
}

static int write_page(FILE *f, const report *r) {
    char title[160], sub[320];
    snprintf(title, sizeof title, "rotor report: %s on %s", r->comp.graph.name[0] ? r->comp.graph.name : r->model,
             r->chip.name);
    snprintf(sub, sizeof sub, "T10 compile with the VGM baseline, the simulator's replay%s; rotor's own results, "
                              "deterministic for the same input.",
             r->has_hbm ? " and Elk's HBM schedule" : "");
    cli_html_begin(f, title, sub);
    section_run(f, r);
    section_summary(f, r);
    int rc = section_frontiers(f, r);
    if (!rc) rc = section_algorithm1(f, r);
    if (!rc) rc = section_op_times(f, r);
    if (!rc) section_heatmap(f, r);
    if (!rc) section_energy(f, r);
    if (!rc) rc = section_timeline(f, r);
    if (!rc) section_breakdown(f, r);
    if (!rc) section_sweeps(f, r);
    cli_html_end(f);
    return rc;
}

/* ---- the command --------------------------------------------------------- */

static int parse_report(int argc, char **argv, report_args *a) {
    static const cli_opt own[] = {
        {"output", 'o', CLI_VALUE, offsetof(report_args, outfile), 0, 0},
        {"topology", 0, CLI_VALUE, offsetof(report_args, topology), 0, 0},
        {"hbm-bw", 0, CLI_VALUE, offsetof(report_args, ha.hbm), 0, 0},
        {"design", 0, CLI_VALUE, offsetof(report_args, ha.design), 0, 0},
        {"tp", 0, CLI_VALUE, offsetof(report_args, ha.tp), 0, 0},
        {0}};
    int rc = cli_parse_options(CMD, argc, argv, CLI_TAKES_ALL | CLI_TAKES_CACHE, &a->ha.m, own, a, report_usage, cli_list_zoo, &a->input,
                               "a model is required (try --help)");
    return rc >= 0 ? rc : -1;
}

static void report_free(report *r) {
    rotor_pipeline_free(&r->comp);
    rotor_pipeline_free(&r->sched);
    rotor_replay_result_free(&r->rr);
    for (int i = 0; i < r->nruns; i++) rotor_schedule_report_free(&r->runs[i]);
    free(r->busy);
    free(r);
}

/* The compile and its replay; a model that does not fit, or a chip of
 * several chips (T10's compile plans one), is kept as the reason when the
 * schedule can still run; any other failure ends the run. */
static int compile_and_replay(report *r, const rotor_pipeline_options *base) {
    rotor_pipeline_options po = *base;
    po.t10 = po.vgm = po.program = true;
    cli_progress bar;
    cli_progress_begin(&bar, CMD, "compiling: operator shapes searched", r->quiet);
    po.compile.progress = cli_progress_step;
    po.compile.progress_ctx = &bar;
    r->comp_st = rotor_pipeline_run(&po, &r->chip, &r->comp, &r->comp_err);
    cli_progress_end(&bar);
    if (!r->comp_st) cli_cache_warn(CMD, &po.compile, &r->comp.t10);
    if ((r->comp_st == ROTOR_ERR_NOFIT || (r->comp_st && r->chip.chips > 1)) && r->has_hbm) return 0;
    if (r->comp_st) return cli_fail(CMD, r->comp_st, &r->comp_err);
    rotor_error err = {{0}};
    rotor_status st = replay(r, &err);
    return st ? cli_fail(CMD, st, &err) : 0;
}

/* The report of parsed arguments a; typed: the command line as typed. */
static int report_main(int argc, char **typed, const report_args *pa) {
    report_args a = *pa;
    int rc;
    rotor_pipeline_options po = {0};
    rotor_schedule_options so = {0};
    if (cli_hbm_workload(CMD, a.input, &a.ha, &po, &so)) return EXIT_BADINPUT;
    rotor_preload_design designs[ROTOR_PRELOAD_NDESIGNS];
    int nd = 0;
    if ((rc = cli_parse_designs(CMD, a.ha.design, designs, &nd))) return rc;
    report *r = calloc(1, sizeof *r);
    if (!r) return cli_nomem(CMD);
    r->model = a.input;
    r->argc = argc;
    r->argv = typed;
    r->po = po;
    r->quiet = a.ha.m.quiet;
    r->decode = po.zoo.phase == ROTOR_PHASE_DECODE;
    rotor_error err = {{0}};
    rotor_status st = cli_chip(a.ha.m.chip, a.ha.m.sets, a.ha.m.nsets, &r->chip, &err);
    if (!st && a.topology) st = cli_apply_topology(&r->chip, a.topology, &err);
    rc = st ? cli_fail(CMD, st, &err) : cli_apply_hbm_bw(CMD, a.ha.hbm, a.ha.m.sets, a.ha.m.nsets, &r->chip);
    r->has_hbm = r->chip.hbm_controllers > 0 && r->chip.hbm_gbps > 0;
    if (!rc && !r->has_hbm && (a.ha.design || a.ha.tp))
        rc = cli_usage_error(CMD, "--design and --tp shape the HBM schedule; chip '%s' has no HBM", r->chip.name);
    if (!rc && so.tensor_parallel > r->chip.chips)
        rc = cli_usage_error(CMD, "--tp: expected 1..%lld (the chips of %s), got %lld", (long long)r->chip.chips,
                             r->chip.name, (long long)so.tensor_parallel);
    cli_output out = {0};
    if (!rc) rc = cli_output_open_model(CMD, "-o", a.outfile, a.input, "-report.html", &out);
    if (rc) {
        report_free(r);
        return rc;
    }
    rc = compile_and_replay(r, &po);
    if (!rc && r->has_hbm) rc = schedule(r, &po, &so, designs, nd);
    if (!rc) rc = write_page(out.f, r);
    if (!rc) rc = cli_output_commit(CMD, "-o", &out);
    cli_output_abort(&out);
    if (!rc && !out.is_stdout && !a.ha.m.quiet) printf("rotor report: wrote %s\n", out.path);
    report_free(r);
    return rc;
}

int cmd_report(int argc, char **argv) {
    report_args a = {0};
    /* the command line as typed, for the page's header: getopt reorders argv */
    char **typed = malloc(sizeof *typed * (size_t)(argc + 1));
    if (!typed) return cli_nomem(CMD);
    memcpy(typed, argv, sizeof *typed * (size_t)argc);
    int rc = parse_report(argc, argv, &a);
    if (rc >= 0) {
        free(typed);
        return rc;
    }
    rc = report_main(argc, typed, &a);
    free(typed);
    return rc;
}
