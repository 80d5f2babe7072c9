/* rotor compile — whole-model compilation of a zoo model (docs/compile.md),
 * the VGM baseline beside it (docs/vgm.md), batch sweeps, program files. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rotor/compile/compile.h"
#include "rotor/model/group.h"
#include "rotor/compile/program.h"
#include "rotor/compile/vgm.h"
#include "rotor/model/zoo.h"

#define MAX_SETS 32
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
            "  --chip NAME|FILE    preset (ipu-mk2, ipu-pod4) or chip file; default ipu-mk2\n"
            "  --set KEY=VALUE     override one chip field (repeatable)\n"
            "  --batch N[,N...]    batch size; a list sweeps, doubling from the last until the\n"
            "                      model no longer fits (that one is marked x); default 1\n"
            "  --seq N             sequence length (default: the model's)\n"
            "  --layers N          layers (default: the model's)\n"
            "  --decode            the LLMs' decode step instead of prefill\n"
            "  --dim k=v,...       bind an ONNX file's symbolic dimensions (e.g. batch=8,seq=128)\n"
            "  --input NAME=AxB,.. replace an ONNX input's declared shape\n"
            "  --baseline vgm      compile with the virtual-global-memory baseline instead\n"
            "  --compare           also compile with the VGM baseline and print the speedup\n"
            "  -o FILE             write the program (rotor-program JSON, docs/program-format.md)\n"
            "  --format FMT        table (default) or json (the program on stdout)\n"
            "  --threads N         search threads (default: all cores)\n"
            "  --list              list the zoo\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 compiled, 1 the model does not fit, 2 bad input\n");
}

static int list_zoo(void) {
    for (int i = 0; i < rotor_zoo_count(); i++) {
        const rotor_zoo_entry *e = rotor_zoo_at(i);
        printf("%-12s %-8s %s\n", e->name, e->llm ? "llm" : "", e->description);
    }
    return 0;
}

static void print_table(const rotor_graph *g, const rotor_compile_result *r, const rotor_chip *chip) {
    printf("%-28s %-20s %11s %6s %11s %10s %10s\n", "operator", "type", "time (us)", "share",
           "setup (us)", "idle (B)", "active (B)");
    for (int o = 0; o < r->nops; o++) {
        const rotor_op_schedule *s = &r->ops[o];
        double t = s->exec_s + s->setup_s;
        printf("%-28.28s %-20.20s %11.3f %5.1f%% %11.3f %10lld %10lld\n", g->ops[o].name,
               g->ops[o].type, t * 1e6, 100 * t / r->total_s, s->setup_s * 1e6,
               (long long)s->idle_bytes, (long long)s->active_bytes);
    }
    printf("\ntotal %.3f us: compute %.3f, communication %.3f, reduction %.3f, setup %.3f, vendor ops %.3f\n",
           r->total_s * 1e6, r->compute_s * 1e6, r->comm_s * 1e6, r->reduction_s * 1e6,
           r->setup_s * 1e6, r->vendor_s * 1e6);
    printf("SRAM per core: idle %lld B, peak %lld B of %lld (%.1f%%); %d operators, %d exact searches, "
           "%d reconciliation steps\n",
           (long long)r->idle_bytes, (long long)r->peak_bytes, (long long)chip->sram_bytes,
           100.0 * (double)r->peak_bytes / (double)chip->sram_bytes, r->nops, r->searches, r->ncurve);
}

static void print_vgm(const rotor_vgm_result *v) {
    printf("VGM baseline: total %.3f us: compute %.3f, load %.3f, store %.3f, vendor ops %.3f; "
           "VGM slice %lld B per core, %lld B left for sub-operators\n",
           v->total_s * 1e6, v->compute_s * 1e6, v->load_s * 1e6, v->store_s * 1e6, v->vendor_s * 1e6,
           (long long)v->vgm_bytes, (long long)v->local_bytes);
}

int cmd_compile(int argc, char **argv) {
    const char *cmd = "compile";
    const char *chip_spec = NULL, *dims = NULL, *inputs = NULL, *batch = NULL, *seq = NULL, *layers = NULL,
               *baseline = NULL, *outfile = NULL, *format = NULL, *threads = NULL;
    char *sets[MAX_SETS];
    int nsets = 0;
    bool compare = false, decode = false;
    static const struct option opts[] = {
        {"chip", required_argument, 0, 'c'},  {"set", required_argument, 0, 's'},
        {"batch", required_argument, 0, 'b'}, {"seq", required_argument, 0, 'q'},
        {"layers", required_argument, 0, 'l'}, {"decode", no_argument, 0, 'd'},
        {"baseline", required_argument, 0, 'B'}, {"compare", no_argument, 0, 'C'},
        {"format", required_argument, 0, 'f'}, {"threads", required_argument, 0, 't'},
        {"list", no_argument, 0, 'L'},         {"help", no_argument, 0, 'h'},
        {"dim", required_argument, 0, 'D'},    {"input", required_argument, 0, 'I'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        const char **slot = NULL;
        const char *name = NULL;
        switch (ch) {
        case 'c': slot = &chip_spec; name = "--chip"; break;
        case 'b': slot = &batch; name = "--batch"; break;
        case 'q': slot = &seq; name = "--seq"; break;
        case 'l': slot = &layers; name = "--layers"; break;
        case 'B': slot = &baseline; name = "--baseline"; break;
        case 'f': slot = &format; name = "--format"; break;
        case 't': slot = &threads; name = "--threads"; break;
        case 'o': slot = &outfile; name = "-o"; break;
        case 'D': slot = &dims; name = "--dim"; break;
        case 'I': slot = &inputs; name = "--input"; break;
        case 'd': decode = true; break;
        case 'C': compare = true; break;
        case 's':
            if (nsets == MAX_SETS) return cli_usage_error(cmd, "more than %d --set options", MAX_SETS);
            sets[nsets++] = optarg;
            break;
        case 'L': return list_zoo();
        case 'h': compile_usage(stdout); return 0;
        default: return cli_bad_option(cmd, ch, argv);
        }
        if (slot && cli_set_once(cmd, name, slot, optarg)) return EXIT_BADINPUT;
    }
    if (cli_one_input(cmd, argc, argv, "a model is required (try 'rotor compile --list')")) return EXIT_BADINPUT;
    const char *model = argv[optind];
    bool vgm_only = false;
    if (baseline) {
        if (strcmp(baseline, "vgm") != 0) return cli_usage_error(cmd, "--baseline: expected vgm, got '%s'", baseline);
        vgm_only = true;
    }
    if (vgm_only && compare) return cli_usage_error(cmd, "--baseline vgm conflicts with --compare");
    bool json = false;
    if (format && !strcmp(format, "json")) json = true;
    else if (format && strcmp(format, "table") != 0)
        return cli_usage_error(cmd, "--format: expected table or json, got '%s'", format);
    if (vgm_only && (json || outfile))
        return cli_usage_error(cmd, "--baseline vgm writes no program (drop -o / --format json)");

    if (cli_is_onnx(model) && (batch || seq || layers || decode))
        return cli_usage_error(cmd, "--batch, --seq, --layers and --decode shape zoo models; bind an ONNX file's "
                               "dimensions with --dim (e.g. --dim batch=8)");
    rotor_zoo_options zo = {0};
    int64_t v;
    if (seq) {
        if (cli_parse_i64(cmd, "--seq", seq, 1, 1 << 24, &v)) return EXIT_BADINPUT;
        zo.seq = v;
    }
    if (layers) {
        if (cli_parse_i64(cmd, "--layers", layers, 1, 1000, &v)) return EXIT_BADINPUT;
        zo.layers = v;
    }
    zo.phase = decode ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL;
    rotor_compile_options co = {0};
    if (threads) {
        if (cli_parse_i64(cmd, "--threads", threads, 1, 1024, &v)) return EXIT_BADINPUT;
        co.threads = (int)v;
    }
    int64_t batches[MAX_BATCHES];
    int nb = 0;
    if (!batch) batches[nb++] = 1;
    for (const char *p = batch; p && *p;) {
        const char *comma = strchr(p, ',');
        char item[32];
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= sizeof item) return cli_usage_error(cmd, "--batch: expected N[,N...], got '%s'", batch);
        memcpy(item, p, len);
        item[len] = '\0';
        if (nb == MAX_BATCHES) return cli_usage_error(cmd, "--batch: at most %d sizes", MAX_BATCHES);
        if (cli_parse_i64(cmd, "--batch", item, 1, 1 << 20, &batches[nb])) return EXIT_BADINPUT;
        if (nb > 0 && batches[nb] <= batches[nb - 1])
            return cli_usage_error(cmd, "--batch: sizes must increase ('%s')", batch);
        nb++;
        p = comma ? comma + 1 : p + len;
    }
    bool sweep = nb > 1;
    if (sweep && (json || outfile)) return cli_usage_error(cmd, "a --batch sweep writes no program (drop -o / --format json)");

    rotor_error err = {{0}};
    rotor_status st;
    rotor_chip chip;
    if ((st = cli_chip(chip_spec, sets, nsets, &chip, &err))) return cli_fail(cmd, st, &err);

    if (sweep) printf("%-8s %14s %14s %9s\n", "batch", vgm_only ? "VGM (us)" : "T10 (us)",
                      compare ? "VGM (us)" : "", compare ? "speedup" : "");
    int rc = 0;
    for (int i = 0;; i++) {
        int64_t b = i < nb ? batches[i] : batches[nb - 1] * ((int64_t)1 << (i - nb + 1));
        if (i >= nb && (!sweep || b > (1 << 20))) break;
        zo.batch = b;
        rotor_graph raw, g;
        rotor_group_stats gs;
        if ((st = cli_load_model(model, &zo, dims, inputs, &raw, NULL, &err))) {
            rotor_graph_free(&raw);
            return cli_fail(cmd, st, &err);
        }
        /* plan the operators that cost time: epilogues fused, layout folded */
        st = rotor_group(&raw, &g, &gs, &err);
        rotor_graph_free(&raw);
        if (st) {
            rotor_graph_free(&g);
            return cli_fail(cmd, st, &err);
        }
        char what[96];
        snprintf(what, sizeof what, "batch %lld: operator shapes searched", (long long)b);
        cli_progress prog;
        cli_progress_begin(&prog, cmd, what);
        co.progress = cli_progress_step;
        co.progress_ctx = &prog;
        rotor_compile_result r = {0};
        rotor_vgm_result vr = {0};
        rotor_status s1 = vgm_only ? ROTOR_OK : rotor_compile(&g, &chip, &co, &r, &err);
        rotor_error verr = {{0}};
        rotor_status s2 = (vgm_only || compare) ? rotor_vgm_compile(&g, &chip, &vr, &verr) : ROTOR_OK;
        cli_progress_end(&prog);
        if (vgm_only) {
            s1 = s2;
            err = verr;
        }
        if (s1 && s1 != ROTOR_ERR_NOFIT) {
            rotor_graph_free(&g);
            return cli_fail(cmd, s1, &err);
        }
        if (sweep) {
            if (s1) {
                printf("%-8lld %14s\n", (long long)b, "x");
                rotor_graph_free(&g);
                rotor_vgm_result_free(&vr);
                if (i == 0) rc = cli_fail(cmd, s1, &err);
                break;
            }
            double t = vgm_only ? vr.total_s : r.total_s;
            if (compare && !s2)
                printf("%-8lld %14.3f %14.3f %8.2fx\n", (long long)b, t * 1e6, vr.total_s * 1e6, vr.total_s / t);
            else if (compare)
                printf("%-8lld %14.3f %14s %9s\n", (long long)b, t * 1e6, "x", "");
            else
                printf("%-8lld %14.3f\n", (long long)b, t * 1e6);
        } else {
            if (s1) {
                rc = cli_fail(cmd, s1, &err);
            } else if (vgm_only) {
                printf("%s, batch %lld, on %s (%lld cores)\n", model, (long long)b, chip.name,
                       (long long)rotor_chip_cores(&chip));
                print_vgm(&vr);
            } else {
                char *text = NULL;
                if ((json || outfile) && (st = rotor_program_write(&g, &chip, &r, &text, &err))) {
                    rc = cli_fail(cmd, st, &err);
                } else {
                    if (outfile) {
                        FILE *f = fopen(outfile, "w");
                        if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) {
                            fprintf(stderr, "rotor compile: %s: cannot write\n", outfile);
                            rc = EXIT_BADINPUT;
                        }
                        if (f) fclose(f);
                    }
                    if (json) {
                        puts(text);
                    } else {
                        printf("%s, batch %lld, on %s (%lld cores); %d operators grouped into %d "
                               "(%d epilogues fused, %d layout ops folded)\n\n",
                               model, (long long)b, chip.name, (long long)rotor_chip_cores(&chip),
                               gs.ops_before, gs.ops_after, gs.fused, gs.folded);
                        print_table(&g, &r, &chip);
                        if (compare && !s2) {
                            print_vgm(&vr);
                            printf("T10 over VGM: %.2fx\n", vr.total_s / r.total_s);
                        } else if (compare) {
                            printf("VGM baseline: %s\n", verr.msg);
                        }
                    }
                }
                free(text);
            }
        }
        rotor_compile_result_free(&r);
        rotor_vgm_result_free(&vr);
        rotor_graph_free(&g);
        if (!sweep || rc) break;
    }
    return rc;
}
