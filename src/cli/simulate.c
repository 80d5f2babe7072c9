/* rotor simulate — replay a compiled program on the event-driven simulator
 * (docs/simulator.md): total time, breakdown, utilisations, per-operator
 * model-vs-simulation comparison, Chrome trace. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rotor/compile/compile.h"
#include "rotor/model/group.h"
#include "rotor/compile/program.h"
#include "rotor/sim/replay.h"

#define MAX_SETS 32

static void simulate_usage(FILE *f) {
    fprintf(f,
            "usage: rotor simulate PROGRAM.json|MODEL|FILE.onnx [options]\n"
            "\n"
            "Replays a compiled program (rotor compile -o) event by event on the chip simulator:\n"
            "every sub-task, shift, reduction and setup transfer, with links served FIFO, so\n"
            "contention shows.  Given a model, compiles it first (as rotor compile does).\n"
            "\n"
            "  --chip NAME|FILE    preset or chip file; default: the program's chip, else ipu-mk2\n"
            "  --set KEY=VALUE     override one chip field (repeatable)\n"
            "  --topology T        all-to-all, or mesh:WxH (W*H = cores per chip)\n"
            "  --batch N           batch size of a model (default 1)\n"
            "  --seq N, --layers N, --decode, --dim k=v,..., --input NAME=AxB,..\n"
            "                      shape a model, as in rotor compile\n"
            "  --compare           per operator: predicted and simulated time, ratio, and where\n"
            "                      they differ\n"
            "  --trace FILE        write Chrome trace-event JSON (Perfetto, chrome://tracing)\n"
            "  --json              print the summary as JSON (rotor-simulation, version 1)\n"
            "  --threads N         search threads when compiling a model\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 simulated, 1 the model does not fit, 2 bad input\n");
}

static bool is_program(const char *spec) {
    size_t n = strlen(spec);
    return n > 5 && !strcmp(spec + n - 5, ".json");
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
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
            printf("%-28.28s %-14.14s %12.3f %12.3f %8.4f  %s\n", p->ops[o].name, p->ops[o].type,
                   x->predicted_s * 1e6, x->simulated_s * 1e6,
                   x->predicted_s > 0 ? x->simulated_s / x->predicted_s : 1.0, why);
        }
        printf("\n");
    }
    printf("%s on %s (%s, %lld cores): %d operators, %lld tasks, %lld events\n", p->model, chip->name,
           cli_topology_text(chip, topo, sizeof topo), (long long)p->cores, p->nops, (long long)s->tasks,
           (long long)s->events);
    printf("simulated %.3f us, model %.3f us: %+.2f%%\n", r->simulated_s * 1e6, r->predicted_s * 1e6,
           pct(r->simulated_s - r->predicted_s, r->predicted_s));
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
}

static cJSON *summary_json(const rotor_program *p, const rotor_chip *chip, const rotor_replay_result *r) {
    char topo[64];
    const rotor_sim_stats *s = &r->stats;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "rotor-simulation");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "model", p->model);
    cJSON_AddStringToObject(root, "chip", chip->name);
    cJSON_AddStringToObject(root, "topology", cli_topology_text(chip, topo, sizeof topo));
    cJSON_AddNumberToObject(root, "cores", (double)p->cores);
    cJSON_AddNumberToObject(root, "simulated_s", r->simulated_s);
    cJSON_AddNumberToObject(root, "predicted_s", r->predicted_s);
    cJSON_AddNumberToObject(root, "error", r->predicted_s > 0 ? r->simulated_s / r->predicted_s - 1 : 0);
    cJSON_AddNumberToObject(root, "tasks", (double)s->tasks);
    cJSON_AddNumberToObject(root, "events", (double)s->events);
    cJSON *b = cJSON_AddObjectToObject(root, "breakdown_s");
    for (int c = 0; c < ROTOR_SIM_NCATS; c++)
        cJSON_AddNumberToObject(b, rotor_sim_category_name((rotor_sim_category)c), s->exposed_ps[c] * 1e-12);
    cJSON_AddNumberToObject(b, "idle", s->idle_ps * 1e-12);
    cJSON_AddNumberToObject(root, "contended_s", s->contended_ps * 1e-12);
    cJSON_AddNumberToObject(root, "stall_s", s->stall_ps * 1e-12);
    cJSON *u = cJSON_AddObjectToObject(root, "utilisation");
    cJSON_AddNumberToObject(u, "flops", s->flops_util);
    cJSON_AddNumberToObject(u, "cores", s->compute_util);
    cJSON_AddNumberToObject(u, "links_mean", s->link_util_mean);
    cJSON_AddNumberToObject(u, "links_peak", s->link_util_peak);
    cJSON_AddNumberToObject(u, "interchip", s->interchip_util);
    cJSON_AddNumberToObject(u, "hbm", s->hbm_util);
    cJSON *ops = cJSON_AddArrayToObject(root, "operators");
    for (int o = 0; o < r->nops; o++) {
        const rotor_replay_op *x = &r->ops[o];
        char why[160];
        rotor_replay_explain(x, why, sizeof why);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", p->ops[o].name);
        cJSON_AddStringToObject(j, "type", p->ops[o].type);
        cJSON_AddNumberToObject(j, "predicted_s", x->predicted_s);
        cJSON_AddNumberToObject(j, "simulated_s", x->simulated_s);
        cJSON_AddNumberToObject(j, "setup_s", x->simulated_setup_s);
        cJSON_AddNumberToObject(j, "main_s", x->simulated_main_s);
        cJSON_AddNumberToObject(j, "reduction_s", x->simulated_reduction_s);
        cJSON_AddNumberToObject(j, "wait_s", x->wait_s);
        cJSON_AddStringToObject(j, "where", why);
        cJSON_AddItemToArray(ops, j);
    }
    return root;
}

int cmd_simulate(int argc, char **argv) {
    const char *cmd = "simulate";
    const char *chip_spec = NULL, *topo = NULL, *batch = NULL, *seq = NULL, *layers = NULL, *dims = NULL,
               *inputs = NULL, *trace = NULL, *threads = NULL;
    char *sets[MAX_SETS];
    int nsets = 0;
    bool compare = false, json = false, decode = false;
    static const struct option opts[] = {
        {"chip", required_argument, 0, 'c'},   {"set", required_argument, 0, 's'},
        {"topology", required_argument, 0, 'T'}, {"batch", required_argument, 0, 'b'},
        {"seq", required_argument, 0, 'q'},    {"layers", required_argument, 0, 'l'},
        {"decode", no_argument, 0, 'd'},       {"dim", required_argument, 0, 'D'},
        {"input", required_argument, 0, 'I'},  {"trace", required_argument, 0, 'r'},
        {"compare", no_argument, 0, 'C'},      {"json", no_argument, 0, 'j'},
        {"threads", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        const char **slot = NULL;
        const char *name = NULL;
        switch (ch) {
        case 'c': slot = &chip_spec; name = "--chip"; break;
        case 'T': slot = &topo; name = "--topology"; break;
        case 'b': slot = &batch; name = "--batch"; break;
        case 'q': slot = &seq; name = "--seq"; break;
        case 'l': slot = &layers; name = "--layers"; break;
        case 'D': slot = &dims; name = "--dim"; break;
        case 'I': slot = &inputs; name = "--input"; break;
        case 'r': slot = &trace; name = "--trace"; break;
        case 't': slot = &threads; name = "--threads"; break;
        case 'd': decode = true; break;
        case 'C': compare = true; break;
        case 'j': json = true; break;
        case 's':
            if (nsets == MAX_SETS) return cli_usage_error(cmd, "more than %d --set options", MAX_SETS);
            sets[nsets++] = optarg;
            break;
        case 'h': simulate_usage(stdout); return 0;
        default: return cli_bad_option(cmd, ch, argv);
        }
        if (slot && cli_set_once(cmd, name, slot, optarg)) return EXIT_BADINPUT;
    }
    if (cli_one_input(cmd, argc, argv, "a program file or a model is required (try --help)")) return EXIT_BADINPUT;
    const char *input = argv[optind];
    bool from_program = is_program(input);
    if (from_program && (batch || seq || layers || decode || dims || inputs || threads))
        return cli_usage_error(cmd, "--batch, --seq, --layers, --decode, --dim, --input and --threads shape a "
                               "model; a program file is already compiled");
    if (cli_is_onnx(input) && !from_program && (batch || seq || layers || decode))
        return cli_usage_error(cmd, "--batch, --seq, --layers and --decode shape zoo models; bind an ONNX file's "
                               "dimensions with --dim");

    rotor_zoo_options zo = {.batch = 1, .phase = decode ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL};
    rotor_compile_options co = {0};
    int64_t v;
    if ((batch && cli_parse_i64(cmd, "--batch", batch, 1, 1 << 20, &zo.batch)) ||
        (seq && cli_parse_i64(cmd, "--seq", seq, 1, 1 << 24, &zo.seq)) ||
        (layers && cli_parse_i64(cmd, "--layers", layers, 1, 1000, &zo.layers)) ||
        (threads && cli_parse_i64(cmd, "--threads", threads, 1, 1024, &v)))
        return EXIT_BADINPUT;
    if (threads) co.threads = (int)v;

    rotor_error err = {{0}};
    rotor_status st;
    rotor_chip chip;
    rotor_program prog = {0};
    char *text = NULL;
    if (from_program) {
        text = slurp(input);
        if (!text) {
            fprintf(stderr, "rotor simulate: %s: cannot read\n", input);
            return EXIT_BADINPUT;
        }
        char pchip[ROTOR_CHIP_NAME_MAX];
        program_chip(text, pchip, sizeof pchip);
        const char *spec = chip_spec ? chip_spec : *pchip ? pchip : "ipu-mk2";
        if ((st = cli_chip(spec, sets, nsets, &chip, &err))) {
            free(text);
            if (!chip_spec && *pchip) rotor_error_prefix(&err, "the program's chip (give --chip)");
            return cli_fail(cmd, st, &err);
        }
        st = rotor_program_parse(text, input, &chip, &prog, &err);
        free(text);
        text = NULL;
        if (st) return cli_fail(cmd, st, &err);
    } else {
        if ((st = cli_chip(chip_spec, sets, nsets, &chip, &err))) return cli_fail(cmd, st, &err);
        rotor_graph raw, g;
        rotor_group_stats gs;
        if ((st = cli_load_model(input, &zo, dims, inputs, &raw, NULL, &err))) {
            rotor_graph_free(&raw);
            return cli_fail(cmd, st, &err);
        }
        st = rotor_group(&raw, &g, &gs, &err);
        rotor_graph_free(&raw);
        rotor_compile_result r = {0};
        if (!st) {
            cli_progress bar;
            cli_progress_begin(&bar, cmd, "compiling: operator shapes searched");
            co.progress = cli_progress_step;
            co.progress_ctx = &bar;
            st = rotor_compile(&g, &chip, &co, &r, &err);
            cli_progress_end(&bar);
        }
        if (!st) st = rotor_program_write(&g, &chip, &r, &text, &err);
        if (!st) st = rotor_program_parse(text, input, &chip, &prog, &err);
        free(text);
        rotor_compile_result_free(&r);
        rotor_graph_free(&g);
        if (st) {
            rotor_program_free(&prog);
            return cli_fail(cmd, st, &err);
        }
    }
    if (topo && (st = cli_apply_topology(&chip, topo, &err))) {
        rotor_program_free(&prog);
        return cli_fail(cmd, st, &err);
    }

    rotor_replay_result rr;
    rotor_sim *sim = NULL;
    st = rotor_replay(&prog, &chip, &rr, trace ? &sim : NULL, &err);
    if (st) {
        rotor_program_free(&prog);
        return cli_fail(cmd, st, &err);
    }
    int rc = 0;
    if (trace) {
        char *tj = rotor_sim_trace_json(sim, &err);
        FILE *f = tj ? fopen(trace, "w") : NULL;
        if (!tj) {
            rc = cli_fail(cmd, ROTOR_ERR_NOMEM, &err);
        } else if (!f || fputs(tj, f) < 0 || fputc('\n', f) < 0) {
            fprintf(stderr, "rotor simulate: %s: cannot write\n", trace);
            rc = EXIT_BADINPUT;
        }
        if (f && fclose(f) && !rc) {
            fprintf(stderr, "rotor simulate: %s: cannot write\n", trace);
            rc = EXIT_BADINPUT;
        }
        free(tj);
        rotor_sim_free(sim);
    }
    if (!rc) {
        if (json) {
            cJSON *root = summary_json(&prog, &chip, &rr);
            char *out = cJSON_Print(root);
            if (out) puts(out);
            free(out);
            cJSON_Delete(root);
        } else {
            print_table(&prog, &chip, &rr, compare);
        }
    }
    rotor_replay_result_free(&rr);
    rotor_program_free(&prog);
    return rc;
}
