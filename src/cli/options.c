/* rotor CLI — the one option loop of every subcommand (cli_parse_options:
 * the shared options, parsed in one place, and each subcommand's own, from
 * its table), and the parsers of values that more than one subcommand
 * takes (integers, bandwidths, topologies, the chip with its --set
 * overrides). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "pipeline/docint.h"
#include "rotor/pipeline/doc.h"
#include "rotor/compile/dsa.h"
#include "rotor/base/suggest.h"

/* The shared options: name, group, and the slot in cli_shared_args: a
 * string, or a bool for a flag (--set and --value, repeatable, are apart).
 * An entry with `now` is an old spelling of the option `now`, which it
 * fills, with a deprecation note (issue 24: one vocabulary; the old
 * spellings keep working for one release). */
static const struct {
    const char *name;
    unsigned group;
    size_t off;
    bool flag;
    const char *now;
} SHARED[] = {
    {"chip", CLI_TAKES_CHIP, offsetof(cli_shared_args, chip), false, NULL},
    {"set", CLI_TAKES_CHIP, 0, false, NULL},
    {"batch", CLI_TAKES_SHAPE, offsetof(cli_shared_args, batch), false, NULL},
    {"seq", CLI_TAKES_SHAPE, offsetof(cli_shared_args, seq), false, NULL},
    {"layers", CLI_TAKES_SHAPE, offsetof(cli_shared_args, layers), false, NULL},
    {"dim", CLI_TAKES_SHAPE | CLI_TAKES_DIM, offsetof(cli_shared_args, dims), false, NULL},
    {"dims", CLI_TAKES_SHAPE | CLI_TAKES_DIM, offsetof(cli_shared_args, dims), false, "dim"},
    {"input", CLI_TAKES_SHAPE, offsetof(cli_shared_args, inputs), false, NULL},
    {"value", CLI_TAKES_SHAPE, 0, false, NULL},
    {"max-model-bytes", CLI_TAKES_SHAPE, offsetof(cli_shared_args, max_model_bytes), false, NULL},
    {"decode", CLI_TAKES_PHASE, offsetof(cli_shared_args, decode), true, NULL},
    {"prefill", CLI_TAKES_PHASE, offsetof(cli_shared_args, prefill), true, NULL},
    {"simplify", CLI_TAKES_SHAPE, offsetof(cli_shared_args, simplify), true, NULL},
    {"train", CLI_TAKES_SHAPE, offsetof(cli_shared_args, train), true, NULL},
    {"optimizer", CLI_TAKES_SHAPE, offsetof(cli_shared_args, optimizer), false, NULL},
    {"threads", CLI_TAKES_THREADS, offsetof(cli_shared_args, threads), false, NULL},
    {"cache", CLI_TAKES_CACHE, offsetof(cli_shared_args, cache), false, NULL},
    {"no-cache", CLI_TAKES_CACHE, offsetof(cli_shared_args, no_cache), true, NULL},
    {"cache-size", CLI_TAKES_CACHE, offsetof(cli_shared_args, cache_size), false, NULL},
};
#define NSHARED ((int)(sizeof SHARED / sizeof SHARED[0]))
#define MAX_OWN 32
/* getopt codes: above any character, so no short option collides */
enum { CODE_HELP = 'h', CODE_QUIET = 'q', CODE_LIST = 0x100, CODE_PROGRESS = 0x101, CODE_SHARED = 0x200, CODE_OWN = 0x300 };

int cli_list_zoo(void) {
    for (int i = 0; i < rotor_zoo_count(); i++) {
        const rotor_zoo_entry *e = rotor_zoo_at(i);
        printf("%-12s %-8s %s\n", e->name, e->llm ? "llm" : "", e->description);
    }
    return 0;
}

void cli_deprecated(const char *cmd, bool quiet, const char *old, const char *now) {
    if (!quiet) fprintf(stderr, "rotor %s: %s is deprecated, write %s (%s goes in the next release)\n", cmd, old, now, old);
}

/* "--name", or "-c" for an option known only by its short character. */
static void opt_label(const cli_opt *o, char *buf, size_t size) {
    if (o->name) snprintf(buf, size, "--%s", o->name);
    else snprintf(buf, size, "-%c", o->short_ch);
}

static int set_once(const char *cmd, const char *label, const char **slot, const char *value) {
    if (*slot) return cli_usage_error(cmd, "%s given twice ('%s' and '%s')", label, *slot, value);
    *slot = value;
    return 0;
}

static int flag_once(const char *cmd, const char *label, bool *b) {
    if (*b) return cli_usage_error(cmd, "%s given twice", label);
    *b = true;
    return 0;
}

/* One of the subcommand's own options, value arg, into args. */
static int take_own(const char *cmd, const cli_opt *o, char *arg, void *args) {
    char label[48];
    opt_label(o, label, sizeof label);
    char *base = args;
    switch (o->kind) {
    case CLI_VALUE: return set_once(cmd, label, (const char **)(base + o->off), arg);
    case CLI_FLAG: return flag_once(cmd, label, (bool *)(base + o->off));
    case CLI_MANY: {
        int *n = (int *)(base + o->count_off);
        if (*n == o->max) return cli_usage_error(cmd, "more than %d %s options", o->max, label);
        ((const char **)(base + o->off))[(*n)++] = arg;
        return 0;
    }
    }
    return 0;
}

/* One shared option k, value arg, into sa. */
static int take_shared(const char *cmd, int k, char *arg, cli_shared_args *sa) {
    char label[48];
    snprintf(label, sizeof label, "--%s", SHARED[k].now ? SHARED[k].now : SHARED[k].name);
    if (SHARED[k].flag) return flag_once(cmd, label, (bool *)((char *)sa + SHARED[k].off));
    if (!strcmp(SHARED[k].name, "value")) {
        if (sa->nvalues == CLI_MAX_SETS) return cli_usage_error(cmd, "more than %d --value options", CLI_MAX_SETS);
        sa->values[sa->nvalues++] = arg;
        return 0;
    }
    if (strcmp(SHARED[k].name, "set") != 0) return set_once(cmd, label, (const char **)((char *)sa + SHARED[k].off), arg);
    if (sa->nsets == CLI_MAX_SETS) return cli_usage_error(cmd, "more than %d --set options", CLI_MAX_SETS);
    sa->sets[sa->nsets++] = arg;
    return 0;
}

/* "unknown option '--jsn' (did you mean '--json'?)": the closest of the
 * long options the subcommand takes (old spellings left out). */
static int unknown_option(const char *cmd, const char *arg, const struct option *opts, int n) {
    const char *names[NSHARED + MAX_OWN + 5];
    int nn = 0;
    /* the subcommand's own options first: a tie goes to them ("--bset": --best, not --set) */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            bool shared = opts[i].val >= CODE_SHARED && opts[i].val < CODE_SHARED + NSHARED, old = false;
            for (int k = 0; k < NSHARED; k++) old |= SHARED[k].now && !strcmp(SHARED[k].name, opts[i].name);
            if (!old && shared == (pass == 1)) names[nn++] = opts[i].name;
        }
    char hint[96] = "";
    if (arg[0] == '-' && arg[1] == '-') {
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
        const char *near = rotor_suggest(word, names, nn);
        if (near) snprintf(hint, sizeof hint, " (did you mean '--%s'?)", near);
    }
    return cli_usage_error(cmd, "unknown option '%s'%s (try 'rotor %s --help')", arg, hint, cmd);
}

/* --progress=auto|always|never (cli.h, cli_progress_mode). */
static int take_progress(const char *cmd, const char *arg) {
    static const char *const names[] = {"auto", "always", "never"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(arg, names[i])) {
            cli_progress_set_mode((cli_progress_mode)i);
            return 0;
        }
    char hint[64];
    return cli_usage_error(cmd, "--progress: expected auto, always or never, got '%s'%s", arg,
                           rotor_suggest_phrase(arg, names, 3, hint, sizeof hint));
}

/* getopt_long takes any unambiguous prefix of a long option ("--lay" for
 * --layers): a script that abbreviates would break, or change meaning, the
 * day an option sharing the prefix is added, so rotor takes only whole
 * names (issue 46) and refuses a prefix in one line naming the option it
 * would have been.  The word after an option that takes a value is that
 * value, not an option, and "--" ends the options. */
static int refuse_abbreviation(const char *cmd, int argc, char **argv, const struct option *opts, int n) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) return 0;
        if (a[0] != '-' || a[1] != '-') continue;
        size_t len = strcspn(a + 2, "=");
        int whole = -1, prefix = -1;
        for (int k = 0; k < n; k++) {
            if (strncmp(opts[k].name, a + 2, len) != 0) continue;
            if (strlen(opts[k].name) == len) whole = k;
            else if (prefix < 0) prefix = k;
        }
        if (whole >= 0) {
            if (opts[whole].has_arg == required_argument && !a[2 + len]) i++;
        } else if (prefix >= 0 && len > 0) {
            return cli_usage_error(cmd, "unknown option '--%.*s' (did you mean '--%s'? options are not abbreviated)",
                                   (int)len, a + 2, opts[prefix].name);
        }
    }
    return 0;
}

int cli_parse_options(const char *cmd, int argc, char **argv, unsigned takes, cli_shared_args *sa, const cli_opt *own,
                      void *args, void (*usage)(FILE *), int (*list)(void), const char **input, const char *missing) {
    struct option opts[NSHARED + MAX_OWN + 5];
    char shorts[2 * MAX_OWN + 8] = ":hq";
    int n = 0, ns = 3, nown = 0;
    for (int k = 0; k < NSHARED; k++)
        if (takes & SHARED[k].group)
            opts[n++] = (struct option){SHARED[k].name, SHARED[k].flag ? no_argument : required_argument, 0,
                                        CODE_SHARED + k};
    for (; own && nown < MAX_OWN && (own[nown].name || own[nown].short_ch); nown++) {
        const cli_opt *o = &own[nown];
        int has = o->kind == CLI_FLAG ? no_argument : required_argument;
        if (o->name) opts[n++] = (struct option){o->name, has, 0, CODE_OWN + nown};
        if (o->short_ch) {
            shorts[ns++] = o->short_ch;
            if (has == required_argument) shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    opts[n++] = (struct option){"help", no_argument, 0, CODE_HELP};
    opts[n++] = (struct option){"quiet", no_argument, 0, CODE_QUIET};
    opts[n++] = (struct option){"progress", required_argument, 0, CODE_PROGRESS};
    if (list) opts[n++] = (struct option){"list", no_argument, 0, CODE_LIST};
    opts[n] = (struct option){0, 0, 0, 0};
    sa->takes_cache = takes & CLI_TAKES_CACHE;
    int arc = refuse_abbreviation(cmd, argc, argv, opts, n);
    if (arc) return arc;
    optind = 1;
    opterr = 0;
    int ch, rc = 0;
    bool listed = false;
    const char *old[NSHARED]; /* old spellings used, noted once each after the loop (--quiet may follow) */
    int nold = 0;
    while (!rc && (ch = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
        if (ch == CODE_HELP) {
            usage(stdout);
            return 0;
        }
        if (ch == CODE_QUIET) {
            rc = flag_once(cmd, "--quiet", &sa->quiet);
        } else if (ch == CODE_LIST) {
            listed = true;
        } else if (ch == CODE_PROGRESS) {
            rc = take_progress(cmd, optarg);
        } else if (ch >= CODE_OWN && ch < CODE_OWN + nown) {
            rc = take_own(cmd, &own[ch - CODE_OWN], optarg, args);
        } else if (ch >= CODE_SHARED && ch < CODE_SHARED + NSHARED) {
            int k = ch - CODE_SHARED;
            rc = take_shared(cmd, k, optarg, sa);
            bool seen = false;
            for (int i = 0; i < nold; i++) seen |= !strcmp(old[i], SHARED[k].name);
            if (SHARED[k].now && !seen) old[nold++] = SHARED[k].name;
        } else {
            int k = 0;
            while (k < nown && own[k].short_ch != ch) k++;
            if (k < nown) rc = take_own(cmd, &own[k], optarg, args);
            else if (ch == ':') rc = cli_usage_error(cmd, "%s needs a value", argv[optind - 1]);
            else rc = unknown_option(cmd, argv[optind - 1], opts, n);
        }
    }
    if (rc) return rc;
    /* the chip file's per-chip field on the command line: the old spelling of hbm-bw */
    for (int i = 0; i < sa->nsets; i++)
        if (!strncmp(sa->sets[i], "hbm_gbps=", 9)) {
            cli_deprecated(cmd, sa->quiet, "--set hbm_gbps",
                           "--set hbm-bw=BW, the HBM of all chips, a bare number in TB/s "
                           "(hbm_gbps=136 on one chip is hbm-bw=136GB/s)");
            break;
        }
    for (int i = 0; i < nold; i++) {
        char was[48], now[48];
        snprintf(was, sizeof was, "--%s", old[i]);
        for (int k = 0; k < NSHARED; k++)
            if (!strcmp(SHARED[k].name, old[i])) snprintf(now, sizeof now, "--%s", SHARED[k].now);
        cli_deprecated(cmd, sa->quiet, was, now);
    }
    if (listed) return list();
    if (!input) {
        if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (optind >= argc) return cli_usage_error(cmd, "%s", missing);
    if (optind + 1 < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    *input = argv[optind];
    return -1;
}

/* --solver: exact (the default), fast (KAPLA §IV-C), or KAPLA's baselines random and ml (docs/kapla.md). */
int cli_parse_objective(const char *cmd, cli_pipeline_args *a) {
    if (a->objective_name && !rotor_pipeline_objective_find(a->objective_name, &a->objective))
        return cli_usage_error(cmd, "--objective: expected latency or throughput, got '%s'", a->objective_name);
    if (a->objective_name && !a->pipeline) return cli_usage_error(cmd, "--objective needs --pipeline");
    return 0;
}

int cli_parse_solver(const char *cmd, const char *text, rotor_solver *out) {
    *out = ROTOR_SOLVER_EXACT;
    if (!text || rotor_solver_find(text, out)) return 0;
    static const char *const names[] = {"exact", "fast", "random", "ml"};
    const char *near = rotor_suggest(text, names, 4);
    char hint[48] = "";
    if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    return cli_usage_error(cmd, "--solver: expected exact, fast, random or ml, got '%s'%s", text, hint);
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

bool cli_parse_bandwidth(const char *s, double *gbps) {
    return rotor_bandwidth_parse(s, gbps); /* the one reading, --set hbm-bw's too (base/chip.c) */
}

int cli_parse_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    /* strtoll skips leading white space, which a trailing one is not: both
     * refused; and one past the range saturates (2^65 read as 2^63 - 1,
     * accepted until 2026-12-04; found by an audit helper) */
    if (end == s || *end || isspace((unsigned char)s[0]) || errno == ERANGE || v < lo || v > hi)
        return cli_usage_error(cmd, "%s: expected an integer from %lld to %lld, got '%s'", opt,
                               (long long)lo, (long long)hi, s);
    *out = v;
    return 0;
}

const char *cli_batch_words(const char *model, int64_t batch, char *buf, size_t size) {
    if (rotor_model_is_onnx(model)) snprintf(buf, size, "the file's batch");
    else snprintf(buf, size, "batch %lld", (long long)batch);
    return buf;
}

void cli_quantized_note(int n, const rotor_chip *chip) {
    if (n)
        printf("(%d operators over quantized integers are priced at the chip's %lld-byte elements and %.6g TFLOP/s, "
               "not their own element size or rate; docs/cost-model.md)\n", n, (long long)chip->element_bytes,
               chip->matrix_tflops);
}

int cli_shared_model(const char *cmd, const char *input, const cli_shared_args *a, bool batch_list,
                     rotor_pipeline_options *po) {
    po->model = input;
    po->onnx.dims = a->dims;
    po->onnx.input_shapes = a->inputs;
    po->onnx.values = (const char *const *)a->values;
    po->onnx.nvalues = a->nvalues;
    po->simplify = a->simplify;
    po->train = po->onnx.train = a->train;
    if (a->optimizer && !a->train) return cli_usage_error(cmd, "--optimizer: only with --train");
    if (a->optimizer && !rotor_optimizer_parse(a->optimizer, &po->train_opt.optimizer))
        return cli_usage_error(cmd, "--optimizer: expected sgd or adam, got '%s'", a->optimizer);
    if (a->train && a->simplify)
        return cli_usage_error(cmd, "--train and --simplify: simplification folds the inference graph");
    if (a->decode && a->prefill) return cli_usage_error(cmd, "--decode and --prefill: give one");
    if (rotor_model_is_onnx(input) && (a->batch || a->seq || a->layers || a->decode || a->prefill))
        return cli_usage_error(cmd, "--batch, --seq, --layers, --decode and --prefill shape zoo models; bind an "
                               "ONNX file's dimensions with --dim (e.g. --dim batch=8)");
    /* the model file's size limit (docs/onnx.md, "Size limit"); a zoo model reads no file */
    if (a->max_model_bytes &&
        cli_parse_i64(cmd, "--max-model-bytes", a->max_model_bytes, 1, INT64_MAX, &po->onnx.max_bytes))
        return EXIT_BADINPUT;
    /* --decode on a model without one is the zoo's refusal; --prefill is
     * every model's default, so the zoo cannot tell it was asked: refused
     * here alike (it was accepted and did nothing; found by an audit helper) */
    const rotor_zoo_entry *ze = rotor_model_is_onnx(input) ? NULL : rotor_zoo_find(input);
    if (a->prefill && ze && !ze->llm)
        return cli_usage_error(cmd, "--prefill: %s has no prefill phase (only the LLMs do)", input);
    if (a->decode) po->zoo.phase = ROTOR_PHASE_DECODE;
    if (a->prefill) po->zoo.phase = ROTOR_PHASE_PREFILL;
    if ((a->batch && !batch_list && cli_parse_i64(cmd, "--batch", a->batch, 1, CLI_MAX_BATCH, &po->zoo.batch)) ||
        (a->seq && cli_parse_i64(cmd, "--seq", a->seq, 1, 1 << 24, &po->zoo.seq)) ||
        (a->layers && cli_parse_i64(cmd, "--layers", a->layers, 1, 1000, &po->zoo.layers)))
        return EXIT_BADINPUT;
    /* the resolved path is kept in the args, which every subcommand owns
     * (never a const object: the cast drops only this parameter's promise) */
    if (cli_shared_cache(cmd, (cli_shared_args *)a, &po->compile)) return EXIT_BADINPUT;
    return cli_shared_threads(cmd, a, &po->compile.threads);
}

/* "256M", "1G", "65536": bytes, with an optional K, M or G (powers of 1024). */
static bool parse_size(const char *s, int64_t *out) {
    char *end;
    long long v = strtoll(s, &end, 10);
    int shift = !*end ? 0 : !strcmp(end, "K") ? 10 : !strcmp(end, "M") ? 20 : !strcmp(end, "G") ? 30 : -1;
    if (end == s || shift < 0 || v < 1 || v > (INT64_MAX >> shift)) return false;
    *out = (int64_t)v << shift;
    return true;
}

int cli_shared_cache(const char *cmd, cli_shared_args *a, rotor_compile_options *co) {
    if (!a->takes_cache) return 0;
    if (a->no_cache && (a->cache || a->cache_size))
        return cli_usage_error(cmd, "--no-cache with --cache or --cache-size: give one");
    if (a->cache_size && !parse_size(a->cache_size, &co->cache_limit))
        return cli_usage_error(cmd, "--cache-size: expected a size in bytes, with K, M or G (256M), got '%s'",
                               a->cache_size);
    if (a->cache && !*a->cache) return cli_usage_error(cmd, "--cache: expected a directory, got ''");
    const char *off = getenv("ROTOR_NO_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = 0;
    co->cache_dir = NULL;
    if (a->no_cache) return 0;
    /* an explicit --cache wins over the test environment's default */
    if (a->cache) n = snprintf(a->cache_path, sizeof a->cache_path, "%s", a->cache);
    else if (off && *off && strcmp(off, "0") != 0) return 0;
    /* XDG: a relative XDG_CACHE_HOME is invalid and ignored */
    else if (xdg && xdg[0] == '/') n = snprintf(a->cache_path, sizeof a->cache_path, "%s/rotor", xdg);
    else if (home && home[0] == '/') n = snprintf(a->cache_path, sizeof a->cache_path, "%s/.cache/rotor", home);
    else return 0;
    if (n < 0 || (size_t)n >= sizeof a->cache_path)
        return cli_usage_error(cmd, "--cache: the directory's path is over %zu bytes", sizeof a->cache_path - 1);
    co->cache_dir = a->cache_path;
    return 0;
}

void cli_cache_warn(const char *cmd, const rotor_compile_options *co, const rotor_compile_result *r) {
    if (r->cache_damaged)
        fprintf(stderr, "rotor %s: warning: plan cache %s: %d damaged %s ignored and rewritten\n", cmd,
                co->cache_dir, r->cache_damaged, r->cache_damaged == 1 ? "entry" : "entries");
}

int cli_shared_threads(const char *cmd, const cli_shared_args *a, int *threads) {
    int64_t v = 0;
    if (a->threads && cli_parse_i64(cmd, "--threads", a->threads, 1, 1024, &v)) return EXIT_BADINPUT;
    *threads = (int)v;
    return 0;
}

int cli_expr(const char *cmd, const char *expr, const char *dims, bool check_eval, rotor_expr *e) {
    rotor_error err = {{0}};
    rotor_status st = rotor_doc_expr(expr, dims, e, &err); /* the library's reading (pipeline/doc.h) */
    if (st) return cli_fail(cmd, st, &err);
    if (check_eval && e->op_class != ROTOR_OP_CONTRACTION && (st = rotor_expr_check_eval(e, &err))) {
        rotor_error_prefix(&err, "--expr");
        return cli_fail(cmd, st, &err);
    }
    return 0;
}

int cli_hbm_workload(const char *cmd, const char *input, const cli_hbm_args *a, rotor_pipeline_options *po,
                     rotor_schedule_options *so) {
    po->zoo = (rotor_zoo_options){.batch = 1, .phase = ROTOR_PHASE_PREFILL};
    if (!rotor_model_is_onnx(input)) {
        const rotor_zoo_entry *z = rotor_zoo_find(input);
        if (z && z->llm) po->zoo.phase = ROTOR_PHASE_DECODE;
    }
    if (cli_shared_model(cmd, input, &a->m, false, po)) return EXIT_BADINPUT;
    so->sram_nonblocking = a->nonblocking;
    so->threads = po->compile.threads;
    if ((a->tp && cli_parse_i64(cmd, "--tp", a->tp, 1, 1024, &so->tensor_parallel)) ||
        (a->orders && cli_parse_i64(cmd, "--max-orders", a->orders, 1, 1 << 24, &so->preload.max_orders)))
        return EXIT_BADINPUT;
    return 0;
}

/* --design: a comma list of design names, or "all" (NULL too), into out
 * (room for ROTOR_PRELOAD_NDESIGNS); 0, or the exit status after the message. */
int cli_parse_designs(const char *cmd, const char *list, rotor_preload_design *out, int *n) {
    rotor_error err = {{0}};
    rotor_status st = rotor_doc_designs(list, out, n, &err); /* the library's reading (pipeline/doc.h) */
    return st ? cli_fail(cmd, st, &err) : 0;
}

bool cli_set_key_is(const char *set, const char *key) {
    size_t n = strcspn(set, "=");
    return n == strlen(key) && !strncmp(set, key, n);
}

int cli_apply_hbm_bw(const char *cmd, const char *hbm, char *const *sets, int nsets, rotor_chip *chip) {
    if (!hbm) return 0;
    /* one bandwidth: --set of it as well was settled silently, --hbm-bw
     * winning in either order (found by an audit helper) */
    for (int i = 0; i < nsets; i++)
        if (cli_set_key_is(sets[i], "hbm_gbps") || cli_set_key_is(sets[i], "hbm-bw"))
            return cli_usage_error(cmd, "--hbm-bw and --set %.*s: give one", (int)strcspn(sets[i], "="), sets[i]);
    double total;
    if (!cli_parse_bandwidth(hbm, &total))
        return cli_usage_error(cmd, "--hbm-bw: expected a positive bandwidth in TB/s (16, 16TB/s, 8000GB/s), "
                               "got '%s'", hbm);
    if (chip->hbm_controllers == 0)
        return cli_usage_error(cmd, "--hbm-bw: chip '%s' has no HBM (set hbm_bytes, hbm_gbps and "
                               "hbm_controllers, or use ipu-pod4)", chip->name);
    double per;
    if (!rotor_hbm_bw_per_chip(total, chip->chips, &per))
        return cli_usage_error(cmd, "--hbm-bw: '%s' over %lld chips is %.3g GB/s a chip, below the least (%g GB/s)",
                               hbm, (long long)chip->chips, per, ROTOR_RATE_MIN);
    chip->hbm_gbps = per;
    return 0;
}

int cli_graphturbo_sets(const char *cmd, const char *spec, char *const *sets, int nsets, const rotor_chip *chip) {
    rotor_chip base, one;
    rotor_dsa_cluster cl;
    rotor_error err;
    /* a chip the schedule refuses is refused for that, in its words */
    if (rotor_dsa_cluster_of(chip, &cl, &err) || cli_chip(spec, NULL, 0, &base, &err)) return 0;
    for (int i = 0; i < nsets; i++) {
        const char *keys[ROTOR_CHIP_FIELDS_MAX];
        /* alone on the chip named (a set that needs another to be valid is
         * judged with it by the compile) */
        if (cli_chip(spec, &sets[i], 1, &one, &err) || !rotor_chip_differences(&base, &one, true, keys, 1)) continue;
        if (!rotor_dsa_tells_apart(&base, &one))
            return cli_usage_error(cmd, "--set %.*s: on %s (a chip with a global buffer) --group graphturbo times its "
                                   "schedules by the clusters' compute, LB, GB and DDR (docs/graphturbo.md, \"Time\"), "
                                   "which it changes none of",
                                   (int)strcspn(sets[i], "="), sets[i], chip->name);
    }
    return 0;
}

rotor_status cli_chip(const char *spec, char *const *sets, int nsets, rotor_chip *out, rotor_error *err) {
    return rotor_doc_chip(spec, (const char *const *)sets, nsets, out, err); /* pipeline/doc.h */
}
