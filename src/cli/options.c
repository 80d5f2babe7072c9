/* rotor CLI — the options the subcommands share, each parsed in one place
 * (cli.h: CLI_SHARED_OPTIONS, CLI_HBM_OPTIONS), and the parsers of values
 * that more than one subcommand takes (integers, bandwidths, topologies,
 * the chip with its --set overrides). */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

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

int cli_shared_option(const char *cmd, int ch, char *arg, cli_shared_args *a, bool *taken) {
    static const struct {
        int ch;
        const char *name;
        size_t off;
    } values[] = {
        {CLI_OPT_CHIP, "--chip", offsetof(cli_shared_args, chip)},
        {CLI_OPT_BATCH, "--batch", offsetof(cli_shared_args, batch)},
        {CLI_OPT_SEQ, "--seq", offsetof(cli_shared_args, seq)},
        {CLI_OPT_LAYERS, "--layers", offsetof(cli_shared_args, layers)},
        {CLI_OPT_DIM, "--dim", offsetof(cli_shared_args, dims)},
        {CLI_OPT_INPUT, "--input", offsetof(cli_shared_args, inputs)},
        {CLI_OPT_THREADS, "--threads", offsetof(cli_shared_args, threads)},
    };
    *taken = true;
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++)
        if (values[k].ch == ch) return cli_set_once(cmd, values[k].name, (const char **)((char *)a + values[k].off), arg);
    if (ch == CLI_OPT_SET) {
        if (a->nsets == CLI_MAX_SETS) return cli_usage_error(cmd, "more than %d --set options", CLI_MAX_SETS);
        a->sets[a->nsets++] = arg;
        return 0;
    }
    *taken = false;
    return 0;
}

int cli_shared_model(const char *cmd, const char *input, const cli_shared_args *a, const char *phase_flag,
                     bool phase_given, bool batch_list, rotor_pipeline_options *po) {
    po->model = input;
    po->dims = a->dims;
    po->inputs = a->inputs;
    if (rotor_model_is_onnx(input) && (a->batch || a->seq || a->layers || phase_given))
        return cli_usage_error(cmd, "--batch, --seq, --layers and %s shape zoo models; bind an ONNX file's "
                               "dimensions with --dim (e.g. --dim batch=8)", phase_flag);
    if ((a->batch && !batch_list && cli_parse_i64(cmd, "--batch", a->batch, 1, CLI_MAX_BATCH, &po->zoo.batch)) ||
        (a->seq && cli_parse_i64(cmd, "--seq", a->seq, 1, 1 << 24, &po->zoo.seq)) ||
        (a->layers && cli_parse_i64(cmd, "--layers", a->layers, 1, 1000, &po->zoo.layers)))
        return EXIT_BADINPUT;
    return cli_shared_threads(cmd, a, &po->compile.threads);
}

int cli_shared_threads(const char *cmd, const cli_shared_args *a, int *threads) {
    int64_t v = 0;
    if (a->threads && cli_parse_i64(cmd, "--threads", a->threads, 1, 1024, &v)) return EXIT_BADINPUT;
    *threads = (int)v;
    return 0;
}

int cli_expr(const char *cmd, const char *expr, const char *dims, bool check_eval, rotor_expr *e) {
    rotor_error err = {{0}};
    rotor_status st;
    if ((st = rotor_expr_parse(expr, e, &err))) {
        rotor_error_prefix(&err, "--expr");
        return cli_fail(cmd, st, &err);
    }
    if ((st = rotor_expr_bind(e, dims, &err))) {
        /* binding reports a column of the expression ("column 15: ...") or a dimension */
        rotor_error_prefix(&err, err.msg[0] == 'c' ? "--expr" : "--dims");
        return cli_fail(cmd, st, &err);
    }
    if (check_eval && e->op_class != ROTOR_OP_CONTRACTION && (st = rotor_expr_check_eval(e, &err))) {
        rotor_error_prefix(&err, "--expr");
        return cli_fail(cmd, st, &err);
    }
    return 0;
}

int cli_hbm_option(const char *cmd, int ch, char *arg, cli_hbm_args *a, bool *taken) {
    static const struct {
        int ch;
        const char *name;
        size_t off;
    } values[] = {
        {'H', "--hbm-bw", offsetof(cli_hbm_args, hbm)},      {'g', "--design", offsetof(cli_hbm_args, design)},
        {'P', "--tp", offsetof(cli_hbm_args, tp)},           {'m', "--max-orders", offsetof(cli_hbm_args, orders)},
    };
    int rc = cli_shared_option(cmd, ch, arg, &a->m, taken);
    if (rc || *taken) return rc;
    *taken = true;
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++)
        if (values[k].ch == ch) return cli_set_once(cmd, values[k].name, (const char **)((char *)a + values[k].off), arg);
    switch (ch) {
    case 'p': a->prefill = true; return 0;
    case 'N': a->nonblocking = true; return 0;
    case 'j': a->json = true; return 0;
    default: *taken = false; return 0;
    }
}

int cli_hbm_workload(const char *cmd, const char *input, const cli_hbm_args *a, rotor_pipeline_options *po,
                     rotor_schedule_options *so) {
    po->zoo = (rotor_zoo_options){.batch = 1, .phase = ROTOR_PHASE_PREFILL};
    if (!rotor_model_is_onnx(input)) {
        const rotor_zoo_entry *z = rotor_zoo_find(input);
        if (z && z->llm && !a->prefill) po->zoo.phase = ROTOR_PHASE_DECODE;
    }
    if (cli_shared_model(cmd, input, &a->m, "--prefill", a->prefill, false, po)) return EXIT_BADINPUT;
    so->sram_nonblocking = a->nonblocking;
    so->threads = po->compile.threads;
    if ((a->tp && cli_parse_i64(cmd, "--tp", a->tp, 1, 1024, &so->tensor_parallel)) ||
        (a->orders && cli_parse_i64(cmd, "--max-orders", a->orders, 1, 1 << 24, &so->preload.max_orders)))
        return EXIT_BADINPUT;
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

rotor_status cli_chip(const char *spec, char *const *sets, int nsets, rotor_chip *out, rotor_error *err) {
    rotor_status st = rotor_chip_resolve(spec ? spec : "ipu-mk2", out, err);
    if (st) return st;
    for (int i = 0; i < nsets; i++)
        if ((st = rotor_chip_set(out, sets[i], err))) return st;
    if ((st = rotor_chip_validate(out, err))) rotor_error_prefix(err, "chip after --set");
    return st;
}
