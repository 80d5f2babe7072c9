/* test_zoo.c — the built-in models (src/model/zoo.c): parameter counts against
 * the published ones, exact counts and FLOPs by hand, decode vs prefill,
 * grouped-query attention, and bad requests. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/model/zoo.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* Building model with options o fails as bad input, with want in the message. */
static void refused(const char *model, rotor_zoo_options o, const char *want) {
    rotor_graph g;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build(model, &o, &g, &err), ROTOR_ERR_INPUT, "%s", model);
    assert_msg_has(err, want);
    rotor_graph_free(&g);
}

static rotor_graph_totals build(const char *name, rotor_zoo_options o, rotor_graph *g) {
    rotor_error err;
    cr_assert_eq(rotor_zoo_build(name, &o, g, &err), ROTOR_OK, "%s: %s", name, err.msg);
    rotor_graph_totals t;
    rotor_graph_totals_of(g, &t);
    return t;
}

/* Every model's weights are within 1% of the published count, and exactly
 * the count the architecture gives (pinned so that a change shows). */
Test(zoo, every_model_matches_its_published_parameter_count_within_1_percent) {
    static const struct { const char *name; long long exact; } want[] = {
        {"bert-base", 109482240},     {"bert-large", 335141888},   {"vit-base", 86567656},
        {"vit-large", 304326632},     {"resnet-18", 11689512},     {"resnet-50", 25557032},
        {"nerf", 595844},             {"opt-1.3b", 1315758080},    {"opt-13b", 12853473280},
        {"opt-30b", 29974540288},     {"llama2-7b", 6738415616},   {"llama2-13b", 13015864320},
        {"llama2-70b", 68976648192},  {"gemma2-27b", 27227128320}, {"dit-xl", 674966048},
        /* T10 Table 2's 24K NeRF at 4 x 64: fc0 63*64+64, fc1-3 3*(64*64+64),
         * sigma 64+1, feature 64*64+64, dir_fc 91*32+32, rgb 32*3+3 */
        {"nerf-t10", 4096 + 12480 + 65 + 4160 + 2944 + 99},
        /* GraphTurbo Table 2: torchvision's counts; DLRM's tables (24,034,227,072)
         * and MLPs 13-512-256-128 (171,392) and 479-1024-1024-512-256-1
         * (2,197,505); Conformer-M with its LSTM decoder step (docs/zoo.md) */
        {"mobilenet-v2", 3504872},    {"densenet-121", 7978856},
        {"dlrm", 24034227072LL + 171392 + 2197505}, {"conformer-m", 30541312},
        /* KAPLA's networks, without the convolutions' biases (docs/zoo.md) */
        {"alexnet", 60963848},        {"vgg-16", 138353320},       {"googlenet", 6991272},
        {"mobilenet-v1", 4231976},    {"mlp-l", 3184010},          {"lstm", 32016000},
        {"retnet-1.3b", 1311086592},
    };
    int n = (int)(sizeof want / sizeof want[0]);
    cr_assert_eq(rotor_zoo_count(), n, "the zoo has %d models, the test knows %d", rotor_zoo_count(), n);
    for (int i = 0; i < n; i++) {
        const rotor_zoo_entry *e = rotor_zoo_find(want[i].name);
        cr_assert_not_null(e, "%s is not in the zoo", want[i].name);
        rotor_graph g;
        rotor_graph_totals t = build(want[i].name, (rotor_zoo_options){0}, &g);
        cr_assert_eq(t.weight_params, want[i].exact, "%s: %lld weights", want[i].name,
                     (long long)t.weight_params);
        double rel = fabs((double)t.weight_params / e->published_params - 1);
        cr_assert_lt(rel, 0.01, "%s: %.3f%% from the published %.4g", want[i].name, 100 * rel,
                     e->published_params);
        rotor_graph_free(&g);
    }
}

/* BERT-Base by hand: embeddings 30522*768 + 512*768 + 2*768 + LN 2*768;
 * per layer QKV 768*2304+2304, output 768*768+768, FFN 768*3072+3072 +
 * 3072*768+768, two LNs 4*768; pooler 768*768+768. */
Test(zoo, bert_base_weights_add_up_by_hand) {
    long long emb = 30522LL * 768 + 512 * 768 + 2 * 768 + 2 * 768;
    long long layer = 768LL * 2304 + 2304 + 768 * 768 + 768 + 768 * 3072 + 3072 + 3072 * 768 + 768 + 4 * 768;
    long long pool = 768LL * 768 + 768;
    rotor_graph g;
    rotor_graph_totals t = build("bert-base", (rotor_zoo_options){0}, &g);
    cr_assert_eq(t.weight_params, emb + 12 * layer + pool);
    rotor_graph_free(&g);
}

/* BERT-Large, batch 8, seq 128: each layer's MatMuls are
 * 2 T (d*3d + d*d + 2 d*f) + attention 2 * 2 * b*h*s*s*hd. */
Test(zoo, bert_large_layer_matmul_flops_are_the_textbook_count) {
    rotor_graph g;
    build("bert-large", (rotor_zoo_options){.batch = 8}, &g);
    double T = 8 * 128, d = 1024, f = 4096;
    double dense = 2 * T * (d * 3 * d + d * d + 2 * d * f);
    double attn = 2 * 2 * (8.0 * 16) * 128 * 128 * 64;
    double got = 0;
    for (int o = 0; o < g.nops; o++)
        if (strncmp(g.ops[o].name, "l0.", 3) == 0 && strcmp(g.ops[o].type, "MatMul") == 0)
            got += g.ops[o].flops;
    cr_assert_float_eq(got, dense + attn, 1e-6 * got);
    rotor_graph_free(&g);
}

Test(zoo, decode_reads_a_kv_cache_of_seq_positions_and_one_token_per_sequence) {
    rotor_graph pre, dec;
    rotor_graph_totals tp = build("llama2-7b", (rotor_zoo_options){.batch = 4, .seq = 512, .layers = 2}, &pre);
    rotor_graph_totals td = build("llama2-7b",
                                  (rotor_zoo_options){.batch = 4, .seq = 512, .layers = 2,
                                                      .phase = ROTOR_PHASE_DECODE},
                                  &dec);
    cr_assert_eq(tp.kv_bytes, 0);
    /* 2 layers x K and V x batch 4 x 32 heads x 512 x 128 x 2 bytes */
    cr_assert_eq(td.kv_bytes, 2LL * 2 * 4 * 32 * 512 * 128 * 2);
    cr_assert_eq(tp.weight_params, td.weight_params);
    int q = rotor_graph_find_value(&dec, "l0.qkv.out");
    cr_assert_geq(q, 0);
    cr_assert_eq(dec.values[q].shape[0], 4, "one token per sequence");
    cr_assert_eq(pre.values[rotor_graph_find_value(&pre, "l0.qkv.out")].shape[0], 4 * 512);
    rotor_graph_free(&pre);
    rotor_graph_free(&dec);
}

Test(zoo, llama2_70b_groups_64_query_heads_over_8_kv_heads) {
    rotor_graph g;
    build("llama2-70b", (rotor_zoo_options){.batch = 32, .seq = 2048, .layers = 1,
                                            .phase = ROTOR_PHASE_DECODE},
          &g);
    int kc = rotor_graph_find_value(&g, "l0.k_cache");
    cr_assert_geq(kc, 0);
    cr_assert_eq(g.values[kc].shape[1], 8);
    /* QKV projects 8192 to (64 + 2 * 8) * 128 = 10240 */
    int w = rotor_graph_find_value(&g, "l0.qkv.weight");
    cr_assert_eq(g.values[w].shape[1], 10240);
    bool found = false;
    for (int o = 0; o < g.nops; o++)
        if (strcmp(g.ops[o].name, "l0.attn_scores") == 0) {
            const rotor_expr *e = &g.ops[o].expr;
            cr_assert_eq(e->extent[rotor_expr_axis(e, "g")], 8);
            cr_assert_eq(e->extent[rotor_expr_axis(e, "r")], 8);
            cr_assert_eq(e->extent[rotor_expr_axis(e, "n")], 2048);
            found = true;
        }
    cr_assert(found);
    rotor_graph_free(&g);
}

Test(zoo, gemma2_local_layers_decode_over_their_4096_position_window) {
    /* Gemma 2 (Gemma Team 2024, §2): every other layer, the first included,
     * attends only the last 4096 positions.  At a context of 8192 those
     * layers' caches hold 4096 positions and their scores span 4096; the
     * global layers' 8192.  At 4096 and below nothing changes. */
    rotor_graph g;
    rotor_graph_totals t = build("gemma2-27b", (rotor_zoo_options){.batch = 2, .seq = 8192, .layers = 3,
                                                                   .phase = ROTOR_PHASE_DECODE},
                                 &g);
    int64_t want[3] = {4096, 8192, 4096};
    for (int l = 0; l < 3; l++) {
        char nm[32];
        snprintf(nm, sizeof nm, "l%d.k_cache", l);
        int kc = rotor_graph_find_value(&g, nm);
        cr_assert_geq(kc, 0);
        cr_assert_eq(g.values[kc].shape[2], want[l], "%s", nm);
        snprintf(nm, sizeof nm, "l%d.attn_scores", l);
        bool found = false;
        for (int o = 0; o < g.nops; o++)
            if (strcmp(g.ops[o].name, nm) == 0) {
                cr_assert_eq(g.ops[o].expr.extent[rotor_expr_axis(&g.ops[o].expr, "n")], want[l], "%s", nm);
                found = true;
            }
        cr_assert(found, "%s", nm);
    }
    /* K and V x batch 2 x 16 KV heads x 128 x 2 bytes, over 4096 + 8192 + 4096 positions */
    cr_assert_eq(t.kv_bytes, 2LL * 2 * 16 * 128 * 2 * (4096 + 8192 + 4096));
    rotor_graph_free(&g);
    t = build("gemma2-27b", (rotor_zoo_options){.batch = 2, .seq = 4096, .layers = 3, .phase = ROTOR_PHASE_DECODE},
              &g);
    cr_assert_eq(t.kv_bytes, 2LL * 2 * 16 * 128 * 2 * 3 * 4096);
    rotor_graph_free(&g);
    /* the prefill's local layers would attend a band: refused past the window */
    t = build("gemma2-27b", (rotor_zoo_options){.batch = 1, .seq = 4096, .layers = 2}, &g);
    rotor_graph_free(&g);
    refused("gemma2-27b", (rotor_zoo_options){.batch = 1, .seq = 4097, .layers = 2},
            "a prefill longer than its local layers' 4096-position sliding window is not modelled");
}

Test(zoo, each_layer_adds_the_same_operators_and_batch_adds_none) {
    rotor_graph g1, g2, g4;
    int n1 = build("bert-base", (rotor_zoo_options){.layers = 1}, &g1).ops;
    int n2 = build("bert-base", (rotor_zoo_options){.layers = 2}, &g2).ops;
    int n4 = build("bert-base", (rotor_zoo_options){.layers = 4, .batch = 16}, &g4).ops;
    /* a BERT layer: norm, QKV + bias, scores, softmax, context, output + bias,
     * residual, norm, FFN up + bias, GELU, down + bias, residual */
    cr_assert_eq(n2 - n1, 16);
    cr_assert_eq(n4 - n2, 2 * 16);
    rotor_graph_free(&g1);
    rotor_graph_free(&g2);
    rotor_graph_free(&g4);
}

Test(zoo, unknown_models_and_bad_sizes_are_refused) {
    rotor_graph g;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("bert-huge", NULL, &g, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "unknown model 'bert-huge' (the zoo has bert-base, bert-large");
    rotor_graph_free(&g);
    refused("bert-base", (rotor_zoo_options){.batch = -1}, "must be positive");
    refused("llama2-7b", (rotor_zoo_options){.batch = 1LL << 40}, "out of range");
    refused("vit-base", (rotor_zoo_options){.phase = ROTOR_PHASE_DECODE}, "vit-base has no decode phase");
    refused("opt-13b", (rotor_zoo_options){.seq = 4096}, "seq 4096 exceeds the 2048 learned positions");
}

/* A size that would change nothing is refused, not ignored (issue 19): the
 * image fixes a ViT's or DiT's tokens, a ResNet has 4 stages, NeRF 8 layers. */
Test(zoo, sizes_a_model_would_ignore_are_refused) {
    rotor_graph g;
    rotor_error err;
    refused("vit-base", (rotor_zoo_options){.seq = 64},
            "vit-base: seq 64: its sequence is 197 tokens, fixed by its 224 x 224 images");
    refused("dit-xl", (rotor_zoo_options){.seq = 128},
            "dit-xl: seq 128: its sequence is 256 tokens, fixed by its 32 x 32 images");
    refused("resnet-50", (rotor_zoo_options){.layers = 6}, "resnet-50: layers 6: it has 4 stages");
    refused("nerf", (rotor_zoo_options){.layers = 9}, "nerf: layers 9: it has 8 layers");
    /* a transformer's own count (1000 for every one until 2026-12-04) */
    refused("llama2-13b", (rotor_zoo_options){.layers = 41}, "llama2-13b: layers 41: it has 40 layers");
    refused("bert-base", (rotor_zoo_options){.layers = 13}, "bert-base: layers 13: it has 12 layers");
    /* no sequence to set (it was ignored) */
    refused("mlp-l", (rotor_zoo_options){.seq = 16}, "mlp-l: seq 16: it has no sequence (a sample is one 784-wide vector)");
    refused("lstm", (rotor_zoo_options){.seq = 16}, "lstm: seq 16: it has no sequence (one time step of every layer)");
    /* the fixed count itself, and fewer stages or layers, are fine */
    cr_assert_eq(rotor_zoo_build("vit-base", &(rotor_zoo_options){.seq = 197, .layers = 1}, &g, &err), ROTOR_OK,
                 "%s", err.msg);
    rotor_graph_free(&g);
    cr_assert_eq(rotor_zoo_build("resnet-18", &(rotor_zoo_options){.layers = 2}, &g, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&g);
}

/* ---- GraphTurbo Table 2's models (docs/zoo.md) -------------------------- */

/* The operators of type `type` whose names contain `part`. */
static int count_ops(const rotor_graph *g, const char *type, const char *part) {
    int n = 0;
    for (int o = 0; o < g->nops; o++)
        if ((!type || strcmp(g->ops[o].type, type) == 0) && strstr(g->ops[o].name, part)) n++;
    return n;
}

/* The shape of value name, as "AxBxC". */
static const char *shape_of(const rotor_graph *g, const char *name, char *buf, size_t size) {
    int v = rotor_graph_find_value(g, name);
    cr_assert_geq(v, 0, "no value %s", name);
    size_t n = 0;
    buf[0] = 0;
    for (int d = 0; d < g->values[v].rank; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "x" : "", (long long)g->values[v].shape[d]);
    return buf;
}

/* Builds name at o, checks the graph, its operator and vendor counts and
 * its histogram, and that out is the model output of shape want. */
static void built_as(const char *name, rotor_zoo_options o, rotor_graph *g, int ops, int vendor, const char *hist,
                     const char *out, const char *want) {
    rotor_error err;
    rotor_graph_totals t = build(name, o, g);
    cr_assert_eq(rotor_graph_validate(g, &err), ROTOR_OK, "%s: %s", name, err.msg);
    cr_assert_eq(t.ops, ops, "%s: %d operators", name, t.ops);
    cr_assert_eq(t.vendor_ops, vendor, "%s: %d vendor operators", name, t.vendor_ops);
    char s[64], *h = rotor_graph_histogram(g);
    cr_assert_not_null(h);
    cr_assert_str_eq(h, hist, "%s", name);
    free(h);
    cr_assert(g->values[rotor_graph_find_value(g, out)].is_output, "%s: %s is no output", name, out);
    cr_assert_str_eq(shape_of(g, out, s, sizeof s), want, "%s: %s", name, out);
}

/* 17 inverted-residual blocks (one depthwise 3x3 each), 10 with a residual
 * add (stride 1, channels kept: 1 + 2 + 3 + 2 + 2 over the seven stages);
 * 34 ReLU6 in the blocks (none after a projection) + stem + last conv. */
Test(zoo, mobilenet_v2_has_17_inverted_residual_blocks_10_with_a_residual_add) {
    rotor_graph g;
    built_as("mobilenet-v2", (rotor_zoo_options){.batch = 2}, &g, 152, 53,
             "BatchNormalization 52, Conv 52, Clip 35, Add 11, GlobalAveragePool 1, MatMul 1",
             "classifier.biased", "2x1000");
    int dw = 0;
    for (int o = 0; o < g.nops; o++)
        if (strstr(g.ops[o].name, ".dw") && !strchr(strstr(g.ops[o].name, ".dw") + 1, '.')) {
            cr_assert_str_eq(g.ops[o].type, "Conv");
            cr_assert(strstr(g.ops[o].expr.text, "* W[c,kh,kw]"), "%s is depthwise", g.ops[o].name);
            dw++;
        }
    cr_assert_eq(dw, 17);
    cr_assert_eq(count_ops(&g, "Add", ".add"), 10);
    char s[64];
    cr_assert_str_eq(shape_of(&g, "b16.project.bn", s, sizeof s), "2x320x7x7");
    cr_assert_str_eq(shape_of(&g, "conv_last.relu6", s, sizeof s), "2x1280x7x7");
    /* multiply-adds per image: the convolutions' 299,494,272 and the
     * classifier's 1,280,000 (Sandler et al. Table 4: 300M) */
    double macs = 0;
    for (int o = 0; o < g.nops; o++)
        if (strcmp(g.ops[o].type, "Conv") == 0 || strcmp(g.ops[o].type, "MatMul") == 0) macs += g.ops[o].flops / 4;
    cr_assert_float_eq(macs, 299494272.0 + 1280000, 0.5, "%.0f multiply-adds per image", macs);
    cr_assert_lt(fabs(macs / 300e6 - 1), 0.01);
    rotor_graph_free(&g);
}

/* Dense blocks of 6, 12, 24, 16 layers, growth 32: 64 + 6*32 = 256 -> 128,
 * + 12*32 = 512 -> 256, + 24*32 = 1024 -> 512, + 16*32 = 1024 channels. */
Test(zoo, densenet_121_last_dense_block_ends_with_1024_channels) {
    rotor_graph g;
    built_as("densenet-121", (rotor_zoo_options){0}, &g, 427, 184,
             "BatchNormalization 121, Relu 121, Conv 120, Concat 58, AveragePool 3, Add 1, GlobalAveragePool 1, "
             "MatMul 1, MaxPool 1",
             "classifier.biased", "1x1000");
    char s[64];
    cr_assert_str_eq(shape_of(&g, "db0.l5.concat", s, sizeof s), "1x256x56x56");
    cr_assert_str_eq(shape_of(&g, "t0.pool", s, sizeof s), "1x128x28x28");
    cr_assert_str_eq(shape_of(&g, "db2.l23.concat", s, sizeof s), "1x1024x14x14");
    cr_assert_str_eq(shape_of(&g, "db3.l15.concat", s, sizeof s), "1x1024x7x7");
    /* pre-activation: every convolution after conv0 reads a ReLU of a BatchNorm */
    for (int o = 0; o < g.nops; o++) {
        if (strcmp(g.ops[o].type, "Conv") != 0 || strcmp(g.ops[o].name, "conv0") == 0) continue;
        const rotor_op *relu = &g.ops[g.values[g.ops[o].inputs[0]].producer];
        cr_assert_str_eq(relu->type, "Relu", "%s", g.ops[o].name);
        cr_assert_str_eq(g.ops[g.values[relu->inputs[0]].producer].type, "BatchNormalization", "%s", g.ops[o].name);
    }
    rotor_graph_free(&g);
}

/* The dot interaction of 27 vectors of 128: the 351 pairs below the
 * diagonal and the 128 dense features make the top MLP's 479 inputs. */
Test(zoo, dlrm_interaction_gives_479_features_from_26_tables) {
    rotor_graph g;
    built_as("dlrm", (rotor_zoo_options){.batch = 1024}, &g, 54, 29,
             "Gather 27, MatMul 9, Add 8, Relu 7, Concat 2, Sigmoid 1", "top.sigmoid", "1024x1");
    char s[64];
    cr_assert_str_eq(shape_of(&g, "interact.dot", s, sizeof s), "1024x27x27");
    cr_assert_str_eq(shape_of(&g, "interact.out", s, sizeof s), "1024x479");
    cr_assert_str_eq(shape_of(&g, "emb0.table", s, sizeof s), "39884406x128");
    cr_assert_str_eq(shape_of(&g, "emb25.table", s, sizeof s), "36x128");
    cr_assert_eq(count_ops(&g, "Gather", "emb"), 26);
    rotor_graph_free(&g);
    /* seq caps every table's rows (DLRM's --max-ind-range): 8 tables exceed
     * 400,000, and the others hold 121,165 rows */
    rotor_graph_totals t = build("dlrm", (rotor_zoo_options){.seq = 400000}, &g);
    cr_assert_eq(t.weight_params, (8LL * 400000 + 121165) * 128 + 171392 + 2197505);
    rotor_graph_free(&g);
    /* layers keeps the first sparse features: 3 of them, 4 * 3 / 2 + 128 */
    build("dlrm", (rotor_zoo_options){.layers = 3}, &g);
    cr_assert_str_eq(shape_of(&g, "interact.out", s, sizeof s), "1x134");
    rotor_graph_free(&g);
}

/* Conformer-M: 16 blocks of 37 operators (FFN/2 7, MHSA 12, Conv 10, FFN/2
 * 7, LayerNorm 1), the front end's 8 and the decoder step's 6; 1000 frames
 * subsample to (1000 - 3) / 2 + 1 = 499, then 249. */
Test(zoo, conformer_m_has_16_blocks_over_249_subsampled_frames) {
    rotor_graph g, g2;
    built_as("conformer-m", (rotor_zoo_options){.batch = 12}, &g, 16 * 37 + 8 + 6, 112,
             "Add 213, MatMul 195, LayerNormalization 80, Sigmoid 48, Conv 18, Mul 18, BatchNormalization 16, "
             "Softmax 16, Relu 2",
             "l15.norm_out", "2988x256");
    cr_assert_eq(count_ops(&g, "LayerNormalization", "norm_out"), 16);
    cr_assert_eq(count_ops(&g, "Conv", "conv.dw"), 16);
    char s[64];
    cr_assert_str_eq(shape_of(&g, "sub.conv2.relu", s, sizeof s), "12x256x249x19");
    cr_assert_str_eq(shape_of(&g, "l0.mhsa.scores", s, sizeof s), "48x249x249");
    cr_assert_str_eq(shape_of(&g, "l0.conv.dw.weight", s, sizeof s), "256x1x32");
    cr_assert_str_eq(shape_of(&g, "dec.h_next", s, sizeof s), "12x640");
    /* a block's weights by hand: FFNs 2 x 526,080, MHSA 329,728 (with the
     * relative-position projection and biases), Conv 206,592, LayerNorm 512 */
    rotor_graph_totals t1 = build("conformer-m", (rotor_zoo_options){.layers = 1}, &g2);
    cr_assert_eq(t1.weight_params, 30541312 - 15 * (2 * 526080 + 329728 + 206592 + 512));
    rotor_graph_free(&g);
    rotor_graph_free(&g2);
}

/* Table 2's BERT-128/256/384/512 are MLPerf's BERT-Large at those lengths:
 * bert-large --seq N, the same weights, attention over N x N. */
Test(zoo, bert_large_runs_at_graphturbo_s_four_sequence_lengths) {
    static const int64_t seq[4] = {128, 256, 384, 512}, batch[4] = {32, 16, 8, 8};
    for (int i = 0; i < 4; i++) {
        rotor_graph g;
        rotor_graph_totals t = build("bert-large", (rotor_zoo_options){.batch = batch[i], .seq = seq[i]}, &g);
        cr_assert_eq(t.weight_params, 335141888);
        int v = rotor_graph_find_value(&g, "l23.scores");
        cr_assert_eq(g.values[v].shape[0], batch[i] * 16);
        cr_assert_eq(g.values[v].shape[1], seq[i]);
        cr_assert_eq(g.values[v].shape[2], seq[i]);
        rotor_graph_free(&g);
    }
    refused("bert-large", (rotor_zoo_options){.seq = 513}, "seq 513 exceeds the 512 learned positions");
}

Test(zoo, graphturbo_models_refuse_sizes_they_would_ignore) {
    refused("mobilenet-v2", (rotor_zoo_options){.layers = 8}, "mobilenet-v2: layers 8: it has 7 stages");
    refused("densenet-121", (rotor_zoo_options){.layers = 5}, "densenet-121: layers 5: it has 4 dense blocks");
    refused("dlrm", (rotor_zoo_options){.layers = 27}, "dlrm: layers 27: it has 26 sparse features");
    refused("dlrm", (rotor_zoo_options){.seq = 40000001}, "at most 2^20, 40,000,000 rows, 1000");
    refused("conformer-m", (rotor_zoo_options){.layers = 17}, "conformer-m: layers 17: it has 16 layers");
    refused("conformer-m", (rotor_zoo_options){.seq = 6}, "conformer-m: seq 6: the subsampling needs at least 7 frames");
}

/* AlexNet by hand (Krizhevsky et al. 2012, Figure 2), two towers:
 * conv1 2*48*3*11*11 = 34,848; conv2 2*128*48*5*5 = 307,200; conv3 reads
 * both towers, 2*192*256*3*3 = 884,736; conv4 2*192*192*9 = 663,552; conv5
 * 2*128*192*9 = 442,368; fc6 256*6*6*4096 + 4096; fc7 4096*4096 + 4096; fc8
 * 4096*1000 + 1000.  The 227 x 227 input gives 55, 27, 13 and 6 on a side,
 * and fc6 is one contraction over the 256 x 6 x 6 map. */
Test(zoo, alexnet_adds_up_by_hand_and_its_sides_are_figure_2s) {
    rotor_graph g;
    rotor_graph_totals t = build("alexnet", (rotor_zoo_options){.batch = 2}, &g);
    long long conv = 34848 + 307200 + 884736 + 663552 + 442368;
    long long fc = 9216LL * 4096 + 4096 + 4096LL * 4096 + 4096 + 4096LL * 1000 + 1000;
    cr_assert_eq(t.weight_params, conv + fc);
    int fc6 = -1, pool5 = -1;
    for (int i = 0; i < g.nops; i++) {
        if (!strcmp(g.ops[i].name, "fc6")) fc6 = i;
        if (!strcmp(g.ops[i].name, "pool5_b")) pool5 = i;
    }
    cr_assert(fc6 >= 0 && pool5 >= 0);
    /* C[b,n] += A[b,c,h,w] * W[n,c,h,w]: 2 x batch 2 x 9,216 x 4,096 */
    cr_assert_eq(g.ops[fc6].expr.naxes, 5);
    cr_assert_eq(g.ops[fc6].flops, 2.0 * 2 * 9216 * 4096);
    const rotor_value *p = &g.values[g.ops[pool5].outputs[0]];
    cr_assert_eq(p->rank, 4);
    cr_assert(p->shape[0] == 2 && p->shape[1] == 128 && p->shape[2] == 6 && p->shape[3] == 6);
    rotor_graph_free(&g);
}

/* The LSTM's 4 layers: each reads the layer below's h', and its weights are
 * 4 gates x 1000 x (1000 + 1000) plus one bias of 4000; --layers cuts them,
 * and a fifth is refused. */
Test(zoo, lstm_layers_chain_and_a_fifth_is_refused) {
    rotor_graph g;
    rotor_graph_totals t = build("lstm", (rotor_zoo_options){.layers = 2}, &g);
    cr_assert_eq(t.weight_params, 2 * (2LL * 1000 * 4000 + 4000));
    rotor_graph_free(&g);
    refused("lstm", (rotor_zoo_options){.layers = 5}, "lstm: layers 5: it has 4 layers");
    refused("googlenet", (rotor_zoo_options){.layers = 10}, "googlenet: layers 10: it has 9 Inception modules");
}

/* RetNet-1.3B by hand: 24 layers of 12 d^2 (Q, K: d x d; V, G: d x 2d; out
 * 2d x d; FFN d x 2d and 2d x d) and two LayerNorms (4d), the tied table of
 * 50,257 x d and the final norm (2d), d = 2048.  Decoding one token per
 * sequence updates each layer's state [b, 8, 256, 512] (3 FLOPs an element)
 * and reads it once: S' = gamma S + K^T V, O = Q S'. */
Test(zoo, retnet_counts_by_hand_and_decodes_through_its_state) {
    const long long d = 2048;
    rotor_graph g;
    rotor_graph_totals t = build("retnet-1.3b", (rotor_zoo_options){0}, &g);
    cr_assert_eq(t.weight_params, 24 * (12 * d * d + 4 * d) + 50257 * d + 2 * d);
    rotor_graph_free(&g);
    t = build("retnet-1.3b", (rotor_zoo_options){.batch = 4, .layers = 1, .phase = ROTOR_PHASE_DECODE}, &g);
    int upd = -1, ret = -1;
    for (int i = 0; i < g.nops; i++) {
        if (!strcmp(g.ops[i].name, "l0.state_next")) upd = i;
        if (!strcmp(g.ops[i].name, "l0.retention")) ret = i;
    }
    cr_assert(upd >= 0 && ret >= 0);
    cr_assert_eq(g.ops[upd].flops, 3.0 * 4 * 8 * 256 * 512);
    cr_assert_eq(g.ops[ret].flops, 2.0 * 4 * 8 * 256 * 512);
    cr_assert_eq(t.kv_bytes, 2LL * 4 * 8 * 256 * 512); /* the state, FP16 */
    rotor_graph_free(&g);
}

/* Nothing a model computes is thrown away: every value an operator writes
 * is read by another or is an output (DiT-XL computed its adaLN shift,
 * scale and gates and never applied them until 2026-12-02: 29 such values,
 * their FLOPs counted and their element-wise operators missing).  Two
 * layers each, decode too where a model has it. */
Test(zoo, every_value_an_operator_writes_is_read_or_an_output) {
    for (int i = 0; i < rotor_zoo_count(); i++) {
        const rotor_zoo_entry *e = rotor_zoo_at(i);
        for (int dec = 0; dec <= (int)e->llm; dec++) {
            rotor_zoo_options o = {.layers = rotor_zoo_layers(e->name) > 2 ? 2 : 0,
                                   .phase = dec ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL};
            rotor_graph g;
            rotor_error err = {{0}};
            cr_assert_eq(rotor_zoo_build(e->name, &o, &g, &err), ROTOR_OK, "%s: %s", e->name, err.msg);
            for (int v = 0; v < g.nvalues; v++) {
                const rotor_value *x = &g.values[v];
                cr_assert(x->producer < 0 || x->consumers > 0 || x->is_output, "%s%s: '%s' is written and never read",
                          e->name, dec ? " (decode)" : "", x->name);
            }
            rotor_graph_free(&g);
        }
    }
}
