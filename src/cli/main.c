/* rotor — command-line entry point: dispatches to one file per subcommand. */
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define ROTOR_VERSION "0.1.0"

int cli_fail(const char *cmd, rotor_status st, const rotor_error *err) {
    fprintf(stderr, "rotor %s: %s\n", cmd, err->msg);
    if (st == ROTOR_ERR_NOFIT) return EXIT_NOFIT;
    if (st == ROTOR_ERR_NOMEM) return EXIT_NOMEM;
    return EXIT_BADINPUT;
}

int cli_nomem(const char *cmd) {
    fprintf(stderr, "rotor %s: out of memory\n", cmd);
    return EXIT_NOMEM;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rotor %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_BADINPUT;
}

int cli_bad_option(const char *cmd, int ch, char **argv) {
    if (ch == ':') return cli_usage_error(cmd, "%s needs a value", argv[optind - 1]);
    return cli_usage_error(cmd, "unknown option '%s' (try 'rotor %s --help')", argv[optind - 1], cmd);
}

int cli_set_once(const char *cmd, const char *name, const char **slot, const char *value) {
    if (*slot) return cli_usage_error(cmd, "%s given twice ('%s' and '%s')", name, *slot, value);
    *slot = value;
    return 0;
}

int cli_one_input(const char *cmd, int argc, char **argv, const char *missing) {
    if (optind >= argc) return cli_usage_error(cmd, "%s", missing);
    if (optind + 1 < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    return 0;
}

/* --topology: all-to-all or mesh:WxH, set on the chip and validated. */
rotor_status cli_apply_topology(rotor_chip *chip, const char *topo, rotor_error *err) {
    char a[64], b[64], c[64];
    long long w, h;
    char tail;
    if (!strcmp(topo, "all-to-all")) {
        snprintf(a, sizeof a, "topology=all-to-all");
        snprintf(b, sizeof b, "mesh_width=0");
        snprintf(c, sizeof c, "mesh_height=0");
    } else if (sscanf(topo, "mesh:%lldx%lld%c", &w, &h, &tail) == 2 && w > 0 && h > 0) {
        snprintf(a, sizeof a, "topology=mesh");
        snprintf(b, sizeof b, "mesh_width=%lld", w);
        snprintf(c, sizeof c, "mesh_height=%lld", h);
    } else {
        return rotor_fail(err, ROTOR_ERR_INPUT, "--topology: expected all-to-all or mesh:WxH, got '%s'", topo);
    }
    rotor_status st;
    if ((st = rotor_chip_set(chip, a, err)) || (st = rotor_chip_set(chip, b, err)) ||
        (st = rotor_chip_set(chip, c, err)))
        return st;
    if ((st = rotor_chip_validate(chip, err))) rotor_error_prefix(err, "--topology");
    return st;
}

const char *cli_topology_text(const rotor_chip *chip, char *buf, size_t size) {
    if (chip->topology == ROTOR_TOPO_MESH)
        snprintf(buf, size, "mesh %lldx%lld", (long long)chip->mesh_width, (long long)chip->mesh_height);
    else
        snprintf(buf, size, "all-to-all");
    return buf;
}

bool cli_parse_bandwidth(const char *s, double *gbps) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || v > 1e6) return false;
    double scale;
    if (!*end || !strcasecmp(end, "TB/s") || !strcasecmp(end, "TB") || !strcasecmp(end, "T")) scale = 1000.0;
    else if (!strcasecmp(end, "GB/s") || !strcasecmp(end, "GB") || !strcasecmp(end, "G")) scale = 1.0;
    else return false;
    *gbps = v * scale;
    return true;
}

int cli_parse_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return cli_usage_error(cmd, "%s: expected an integer from %lld to %lld, got '%s'", opt,
                               (long long)lo, (long long)hi, s);
    *out = v;
    return 0;
}

int cli_hbm_option(const char *cmd, int ch, char *arg, cli_hbm_args *a, bool *taken) {
    static const struct {
        int ch;
        const char *name;
        size_t off;
    } values[] = {
        {'c', "--chip", offsetof(cli_hbm_args, chip)},     {'H', "--hbm-bw", offsetof(cli_hbm_args, hbm)},
        {'g', "--design", offsetof(cli_hbm_args, design)}, {'b', "--batch", offsetof(cli_hbm_args, batch)},
        {'q', "--seq", offsetof(cli_hbm_args, seq)},       {'l', "--layers", offsetof(cli_hbm_args, layers)},
        {'D', "--dim", offsetof(cli_hbm_args, dims)},      {'I', "--input", offsetof(cli_hbm_args, inputs)},
        {'P', "--tp", offsetof(cli_hbm_args, tp)},         {'m', "--max-orders", offsetof(cli_hbm_args, orders)},
        {'t', "--threads", offsetof(cli_hbm_args, threads)},
    };
    *taken = true;
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++)
        if (values[k].ch == ch) return cli_set_once(cmd, values[k].name, (const char **)((char *)a + values[k].off), arg);
    switch (ch) {
    case 'p': a->prefill = true; return 0;
    case 'N': a->nonblocking = true; return 0;
    case 'j': a->json = true; return 0;
    case 's':
        if (a->nsets == CLI_MAX_SETS) return cli_usage_error(cmd, "more than %d --set options", CLI_MAX_SETS);
        a->sets[a->nsets++] = arg;
        return 0;
    default: *taken = false; return 0;
    }
}

int cli_hbm_workload(const char *cmd, const char *input, const cli_hbm_args *a, rotor_zoo_options *zo,
                     rotor_schedule_options *so) {
    bool onnx = cli_is_onnx(input);
    if (onnx && (a->batch || a->seq || a->layers || a->prefill))
        return cli_usage_error(cmd, "--batch, --seq, --layers and --prefill shape zoo models; bind an ONNX "
                               "file's dimensions with --dim");
    *zo = (rotor_zoo_options){.batch = 1, .phase = ROTOR_PHASE_PREFILL};
    if (!onnx) {
        const rotor_zoo_entry *z = rotor_zoo_find(input);
        if (z && z->llm && !a->prefill) zo->phase = ROTOR_PHASE_DECODE;
    }
    so->sram_nonblocking = a->nonblocking;
    int64_t v = 0;
    if ((a->batch && cli_parse_i64(cmd, "--batch", a->batch, 1, 1 << 20, &zo->batch)) ||
        (a->seq && cli_parse_i64(cmd, "--seq", a->seq, 1, 1 << 24, &zo->seq)) ||
        (a->layers && cli_parse_i64(cmd, "--layers", a->layers, 1, 1000, &zo->layers)) ||
        (a->tp && cli_parse_i64(cmd, "--tp", a->tp, 1, 1024, &so->tensor_parallel)) ||
        (a->orders && cli_parse_i64(cmd, "--max-orders", a->orders, 1, 1 << 24, &so->preload.max_orders)) ||
        (a->threads && cli_parse_i64(cmd, "--threads", a->threads, 1, 1024, &v)))
        return EXIT_BADINPUT;
    so->threads = (int)v;
    return 0;
}

int cli_apply_hbm_bw(const char *cmd, const char *hbm, rotor_chip *chip) {
    if (!hbm) return 0;
    double total;
    if (!cli_parse_bandwidth(hbm, &total))
        return cli_usage_error(cmd, "--hbm-bw: expected a positive bandwidth in TB/s (16, 16TB/s, 8000GB/s), "
                               "got '%s'", hbm);
    if (chip->hbm_controllers == 0)
        return cli_usage_error(cmd, "--hbm-bw: chip '%s' has no HBM (set hbm_bytes, hbm_gbps and "
                               "hbm_controllers, or use ipu-pod4)", chip->name);
    chip->hbm_gbps = total / (double)chip->chips;
    return 0;
}

rotor_status cli_chip(const char *spec, char **sets, int nsets, rotor_chip *out, rotor_error *err) {
    rotor_status st = rotor_chip_resolve(spec ? spec : "ipu-mk2", out, err);
    if (st) return st;
    for (int i = 0; i < nsets; i++)
        if ((st = rotor_chip_set(out, sets[i], err))) return st;
    if ((st = rotor_chip_validate(out, err))) rotor_error_prefix(err, "chip after --set");
    return st;
}

bool cli_is_onnx(const char *spec) {
    size_t n = strlen(spec);
    return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".onnx"));
}

rotor_status cli_load_model(const char *spec, const rotor_zoo_options *zo, const char *dims, const char *inputs,
                            rotor_graph *g, rotor_onnx_stats *stats, rotor_error *err) {
    if (stats) memset(stats, 0, sizeof *stats);
    if (!cli_is_onnx(spec)) {
        if (dims || inputs) {
            rotor_graph_init(g, spec);
            return rotor_fail(err, ROTOR_ERR_INPUT, "--dim and --input shape ONNX files; zoo models take --batch, "
                              "--seq and --layers");
        }
        return rotor_zoo_build(spec, zo, g, err);
    }
    rotor_onnx_options oo = {.dims = dims, .input_shapes = inputs};
    return rotor_onnx_load(spec, &oo, g, stats, err);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_begin(cli_progress *p, const char *cmd, const char *what) {
    p->cmd = cmd;
    p->what = what;
    p->start = now_s();
    p->tty = isatty(2);
    p->drawn = false;
}

void cli_progress_step(void *ctx, int done, int total) {
    cli_progress *p = ctx;
    if (!p->tty || total <= 0) return;
    double t = now_s() - p->start;
    if (t < 1.0) return;
    char bar[31];
    int fill = (int)(30L * done / total);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\rrotor %s: %s [%s] %d/%d, %.1f s ", p->cmd, p->what, bar, done, total, t);
    fflush(stderr);
    p->drawn = true;
}

void cli_progress_end(cli_progress *p) {
    if (p->drawn) fprintf(stderr, "\r%*s\r", 100, "");
    p->drawn = false;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: rotor <command> [options]\n"
            "\n"
            "rotor plans, predicts and checks how DNN operators run on inter-core connected\n"
            "AI chips (Graphcore IPU and kin), after T10's compute-shift execution plans.\n"
            "\n"
            "commands:\n"
            "  plan      find the fastest rTensor plan of one operator (and its Pareto frontier)\n"
            "  verify    run plans on emulated cores with real data and check the result\n"
            "  compile   compile a whole model (T10 idle/active plans), with the VGM baseline\n"
            "  model     list a model's operators (zoo or ONNX file), FLOPs and weights\n"
            "  simulate  replay a compiled program on the event-driven chip simulator\n"
            "  schedule  schedule a model held in HBM (Elk preloads), with its baselines\n"
            "  explore   sweep a chip parameter (HBM, NoC, cores, FLOPS) over the schedules\n"
            "\n"
            "  rotor <command> --help   options of one command\n"
            "  rotor --version          print the version\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_BADINPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("rotor %s\n", ROTOR_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "plan")) return cmd_plan(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify")) return cmd_verify(argc - 1, argv + 1);
    if (!strcmp(cmd, "compile")) return cmd_compile(argc - 1, argv + 1);
    if (!strcmp(cmd, "model")) return cmd_model(argc - 1, argv + 1);
    if (!strcmp(cmd, "simulate")) return cmd_simulate(argc - 1, argv + 1);
    if (!strcmp(cmd, "schedule")) return cmd_schedule(argc - 1, argv + 1);
    if (!strcmp(cmd, "explore")) return cmd_explore(argc - 1, argv + 1);
    fprintf(stderr, "rotor: unknown command '%s' (try 'rotor --help')\n", cmd);
    return EXIT_BADINPUT;
}
