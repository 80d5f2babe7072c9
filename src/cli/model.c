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
            "  --value NAME=SPEC   give a shape-deciding ONNX input its value (a Reshape's shape, a Resize's\n"
            "                      scales...): SPEC is FILE.pb (a TensorProto) or 1,2,3; repeatable\n"
            "  --max-model-bytes N refuse a model file over N bytes (default 2 GiB, docs/onnx.md)\n"
            "  --batch N           batch size (default 1)\n"
            "  --seq N             sequence length (default: the model's)\n"
            "  --layers N          layers (default: the model's)\n"
            "  --decode            the LLMs' decode step (--prefill, the default: their prefill)\n"
            "  --simplify          fold BatchNormalization into its convolution and fold constants\n"
            "                      first (docs/simplify.md)\n"
            "  --group             fuse epilogues and fold layout ops first (docs/group.md)\n"
            "  --json              the graph as JSON (format rotor-graph, docs/graph.md)\n"
            "  --list              list the zoo\n"
            "  -q, --quiet         accepted; model prints no progress\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 listed, 2 bad input\n");
}

/* The operator table and the totals of g (imported with os, grouped with gs
 * when grouped). */
static void print_model(const rotor_graph *g, const rotor_pipeline *p, bool simplified, bool grouped);

/* What `rotor model` was asked. */
typedef struct model_args {
    cli_shared_args sa;
    bool json, group;
} model_args;

int cmd_model(int argc, char **argv) {
    const char *cmd = "model";
    model_args a = {0};
    static const cli_opt own[] = {
        {"group", 0, CLI_FLAG, offsetof(model_args, group), 0, 0},
        {"json", 0, CLI_FLAG, offsetof(model_args, json), 0, 0},
        {0}};
    const char *input = NULL;
    int rc = cli_parse_options(cmd, argc, argv, CLI_TAKES_SHAPE | CLI_TAKES_PHASE, &a.sa, own, &a, model_usage, cli_list_zoo, &input,
                               "a model is required (try 'rotor model --list')");
    if (rc >= 0) return rc;
    bool json = a.json, group = a.group;
    cli_shared_args sa = a.sa;
    rotor_pipeline_options po = {.no_group = !group};
    po.zoo.phase = ROTOR_PHASE_PREFILL;
    if (cli_shared_model(cmd, input, &sa, false, &po)) return EXIT_BADINPUT;
    rotor_error err = {{0}};
    rotor_pipeline p;
    rotor_status st = rotor_pipeline_run(&po, NULL, &p, &err);
    rc = 0;
    if (st) {
        rc = cli_fail(cmd, st, &err);
    } else if (json) {
        char *text = rotor_graph_to_json(&p.graph);
        if (text) cli_puts(text);
        else rc = cli_nomem(cmd);
        free(text);
    } else {
        print_model(&p.graph, &p, po.simplify, group);
    }
    rotor_pipeline_free(&p);
    return rc;
}

static void print_model(const rotor_graph *g, const rotor_pipeline *p, bool simplified, bool grouped) {
    const rotor_onnx_stats *os = &p->onnx;
    const rotor_group_stats *gs = &p->group;
    const rotor_simplify_stats *ss = &p->simplify;
    printf("%-26s %-18s %-14s %12s %12s  %s\n", "operator", "type", "output", "GFLOP", "weights (B)",
           "expression");
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        char shape[96];
        rotor_graph_shape_string(&g->values[op->outputs[0]], shape, sizeof shape);
        printf("%-26.26s %-18.18s %-14.14s %12.4f %12lld  %s%s%s\n", op->name, op->type, shape,
               op->flops / 1e9, (long long)op->weight_bytes, op->vendor ? "(vendor op)" : op->expr.text,
               op->nfused ? "  + " : "", op->fused);
    }
    rotor_graph_totals t;
    rotor_graph_totals_of(g, &t);
    char *hist = rotor_graph_histogram(g);
    printf("\n%s: %d operators (%d vendor), %.4g GFLOP, %lld weights (%.4g MB), kv cache %.4g MB, "
           "activations %.4g MB\n",
           g->name, t.ops, t.vendor_ops, t.flops / 1e9, (long long)t.weight_params, (double)t.weight_bytes / 1e6,
           (double)t.kv_bytes / 1e6, (double)t.activation_bytes / 1e6);
    if (os->nodes)
        printf("onnx: IR %lld, opset %lld, %d nodes: %d folded to constants, %d spelled-out LayerNorms matched\n",
               (long long)os->ir_version, (long long)os->opset, os->nodes, os->folded, os->layernorms_matched);
    if (simplified)
        printf("simplified: %d operators into %d (%d BatchNormalizations folded, %d bias adds made, %d constants "
               "folded)\n",
               ss->ops_before, ss->ops_after, ss->bn_folded, ss->bias_added, ss->const_folded);
    if (grouped)
        printf("grouped: %d operators into %d (%d epilogues fused, %d layout ops folded)\n", gs->ops_before,
               gs->ops_after, gs->fused, gs->folded);
    printf("histogram: %s\n", hist ? hist : "(out of memory)");
    free(hist);
}
