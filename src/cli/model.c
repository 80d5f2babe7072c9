/* rotor model — list a model's operators: expressions, shapes, FLOPs and
 * weight bytes, with totals (docs/zoo.md, docs/graph.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rotor/model/group.h"
#include "rotor/model/zoo.h"

static void model_usage(FILE *f) {
    fprintf(f,
            "usage: rotor model MODEL|FILE.onnx [options]\n"
            "\n"
            "Builds a zoo model, or imports an ONNX file (docs/onnx.md), and lists its operators:\n"
            "tensor expression (or vendor op), output shape, FLOPs and weight bytes, then the\n"
            "totals and the operator histogram.  A MODEL containing '/' or ending in .onnx is a file.\n"
            "\n"
            "  --dim k=v,...       bind an ONNX file's symbolic dimensions (e.g. batch=8,seq=128)\n"
            "  --input NAME=AxB,.. replace an ONNX input's declared shape (e.g. input_1=1x3x8)\n"
            "  --batch N           batch size (default 1)\n"
            "  --seq N             sequence length (default: the model's)\n"
            "  --layers N          layers (default: the model's)\n"
            "  --decode            the LLMs' decode step instead of prefill\n"
            "  --group             fuse epilogues and fold layout ops first (docs/group.md)\n"
            "  --json              the graph as JSON (format rotor-graph, docs/graph.md)\n"
            "  --list              list the zoo\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 listed, 2 bad input\n");
}

int cmd_model(int argc, char **argv) {
    const char *cmd = "model";
    const char *batch = NULL, *seq = NULL, *layers = NULL, *dims = NULL, *inputs = NULL;
    bool json = false, decode = false, group = false;
    static const struct option opts[] = {
        {"batch", required_argument, 0, 'b'}, {"seq", required_argument, 0, 'q'},
        {"dim", required_argument, 0, 'D'},   {"input", required_argument, 0, 'I'},
        {"layers", required_argument, 0, 'l'}, {"decode", no_argument, 0, 'd'},
        {"group", no_argument, 0, 'g'},        {"json", no_argument, 0, 'j'},
        {"list", no_argument, 0, 'L'},         {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        const char **slot = NULL;
        const char *name = NULL;
        switch (ch) {
        case 'b': slot = &batch; name = "--batch"; break;
        case 'q': slot = &seq; name = "--seq"; break;
        case 'l': slot = &layers; name = "--layers"; break;
        case 'D': slot = &dims; name = "--dim"; break;
        case 'I': slot = &inputs; name = "--input"; break;
        case 'd': decode = true; break;
        case 'g': group = true; break;
        case 'j': json = true; break;
        case 'L':
            for (int i = 0; i < rotor_zoo_count(); i++) {
                const rotor_zoo_entry *e = rotor_zoo_at(i);
                printf("%-12s %-8s %s\n", e->name, e->llm ? "llm" : "", e->description);
            }
            return 0;
        case 'h': model_usage(stdout); return 0;
        default: return cli_bad_option(cmd, ch, argv);
        }
        if (slot && cli_set_once(cmd, name, slot, optarg)) return EXIT_BADINPUT;
    }
    if (cli_one_input(cmd, argc, argv, "a model is required (try 'rotor model --list')")) return EXIT_BADINPUT;
    if (cli_is_onnx(argv[optind]) && (batch || seq || layers || decode))
        return cli_usage_error(cmd, "--batch, --seq, --layers and --decode shape zoo models; bind an ONNX file's "
                               "dimensions with --dim (e.g. --dim batch=8)");
    rotor_zoo_options zo = {0};
    int64_t v;
    if (batch) {
        if (cli_parse_i64(cmd, "--batch", batch, 1, 1 << 20, &v)) return EXIT_BADINPUT;
        zo.batch = v;
    }
    if (seq) {
        if (cli_parse_i64(cmd, "--seq", seq, 1, 1 << 24, &v)) return EXIT_BADINPUT;
        zo.seq = v;
    }
    if (layers) {
        if (cli_parse_i64(cmd, "--layers", layers, 1, 1000, &v)) return EXIT_BADINPUT;
        zo.layers = v;
    }
    zo.phase = decode ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL;
    rotor_graph g;
    rotor_error err = {{0}};
    rotor_onnx_stats os;
    rotor_status st = cli_load_model(argv[optind], &zo, dims, inputs, &g, &os, &err);
    if (st) {
        rotor_graph_free(&g);
        return cli_fail(cmd, st, &err);
    }
    rotor_group_stats gs = {0};
    if (group) {
        rotor_graph grouped;
        st = rotor_group(&g, &grouped, &gs, &err);
        rotor_graph_free(&g);
        g = grouped;
        if (st) {
            rotor_graph_free(&g);
            return cli_fail(cmd, st, &err);
        }
    }
    if (json) {
        char *text = rotor_graph_to_json(&g);
        if (!text) {
            rotor_graph_free(&g);
            return cli_nomem("model");
        }
        puts(text);
        free(text);
        rotor_graph_free(&g);
        return 0;
    }
    printf("%-26s %-18s %-14s %12s %12s  %s\n", "operator", "type", "output", "GFLOP", "weights (B)",
           "expression");
    for (int o = 0; o < g.nops; o++) {
        const rotor_op *op = &g.ops[o];
        char shape[96];
        rotor_graph_shape_string(&g.values[op->outputs[0]], shape, sizeof shape);
        printf("%-26.26s %-18.18s %-14.14s %12.4f %12lld  %s%s%s\n", op->name, op->type, shape,
               op->flops / 1e9, (long long)op->weight_bytes, op->vendor ? "(vendor op)" : op->expr.text,
               op->nfused ? "  + " : "", op->fused);
    }
    rotor_graph_totals t;
    rotor_graph_totals_of(&g, &t);
    char *hist = rotor_graph_histogram(&g);
    printf("\n%s: %d operators (%d vendor), %.4g GFLOP, %lld weights (%.4g MB), kv cache %.4g MB, "
           "activations %.4g MB\n",
           g.name, t.ops, t.vendor_ops, t.flops / 1e9, (long long)t.weight_params, (double)t.weight_bytes / 1e6,
           (double)t.kv_bytes / 1e6, (double)t.activation_bytes / 1e6);
    if (os.nodes)
        printf("onnx: IR %lld, opset %lld, %d nodes: %d folded to constants, %d spelled-out LayerNorms matched\n",
               (long long)os.ir_version, (long long)os.opset, os.nodes, os.folded, os.layernorms_matched);
    if (group)
        printf("grouped: %d operators into %d (%d epilogues fused, %d layout ops folded)\n", gs.ops_before,
               gs.ops_after, gs.fused, gs.folded);
    printf("histogram: %s\n", hist ? hist : "(out of memory)");
    free(hist);
    rotor_graph_free(&g);
    return 0;
}
