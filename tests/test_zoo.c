/* test_zoo.c — the built-in models (src/model/zoo.c): parameter counts against
 * the published ones, exact counts and FLOPs by hand, decode vs prefill,
 * grouped-query attention, and bad requests. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
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
    /* the fixed count itself, and fewer stages or layers, are fine */
    cr_assert_eq(rotor_zoo_build("vit-base", &(rotor_zoo_options){.seq = 197, .layers = 1}, &g, &err), ROTOR_OK,
                 "%s", err.msg);
    rotor_graph_free(&g);
    cr_assert_eq(rotor_zoo_build("resnet-18", &(rotor_zoo_options){.layers = 2}, &g, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&g);
}
