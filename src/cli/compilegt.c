/* compilegt.c — `rotor compile --group graphturbo`: GraphTurbo's schedules
 * of one cluster's share of the batch on a chip with a memory hierarchy,
 * the per-layer baseline and the four steps of its Fig. 15, as a table or
 * JSON (format rotor-graphturbo, version 1; docs/graphturbo.md). */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "cli.h"
#include "rotor/compile/dsa.h"
#include "rotor/pipeline/pipeline.h"

static const char *order_name(rotor_gt_order_kind k) { return k == ROTOR_GT_DFS ? "dfs" : "bfs"; }

static int print_json(const char *model, const rotor_chip *chip, int64_t batch, const rotor_pipeline *p) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return cli_nomem("compile");
    cJSON_AddStringToObject(root, "format", "rotor-graphturbo");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddStringToObject(root, "chip", chip->name);
    cJSON_AddNumberToObject(root, "batch_per_cluster", (double)batch);
    cJSON_AddNumberToObject(root, "clusters", (double)chip->clusters);
    cJSON_AddNumberToObject(root, "operators", p->graph.nops);
    cJSON *steps = cJSON_AddArrayToObject(root, "steps");
    const rotor_dsa_result *base = &p->dsa[ROTOR_DSA_PER_LAYER];
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
        const rotor_dsa_result *r = &p->dsa[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(steps, o);
        cJSON_AddStringToObject(o, "step", rotor_dsa_step_name(r->step));
        cJSON_AddNumberToObject(o, "seconds", r->seconds);
        cJSON_AddNumberToObject(o, "speedup", base->seconds / r->seconds);
        cJSON_AddNumberToObject(o, "throughput", (double)(batch * chip->clusters) / r->seconds);
        cJSON_AddNumberToObject(o, "subgraphs", r->subgraphs);
        cJSON_AddNumberToObject(o, "instances", (double)r->instances);
        cJSON_AddStringToObject(o, "order", order_name(r->order));
        cJSON *t = cJSON_AddObjectToObject(o, "tensors");
        cJSON_AddNumberToObject(t, "lb", r->tensors[ROTOR_GT_LB]);
        cJSON_AddNumberToObject(t, "gb", r->tensors[ROTOR_GT_GB]);
        cJSON_AddNumberToObject(t, "ddr", r->tensors[ROTOR_GT_DDR]);
        cJSON_AddNumberToObject(o, "ddr_bytes", r->ddr_bytes);
        cJSON_AddNumberToObject(o, "gb_bytes", r->gb_bytes);
        cJSON_AddNumberToObject(o, "matrix_s", r->mm_s);
        cJSON_AddNumberToObject(o, "vector_s", r->vec_s);
        cJSON_AddNumberToObject(o, "ddr_s", r->ddr_s);
        cJSON_AddNumberToObject(o, "gb_s", r->gb_s);
    }
    return cli_print_json("compile", root);
}

int cli_compile_graphturbo(const char *model, const rotor_chip *chip, int64_t batch, const rotor_pipeline *p,
                           bool json) {
    if (json) return print_json(model, chip, batch, p);
    char share[64];
    if (rotor_model_is_onnx(model)) snprintf(share, sizeof share, "the file's batch");
    else snprintf(share, sizeof share, "batch %lld", (long long)batch);
    printf("%s, %s a cluster x %lld clusters on %s: GraphTurbo's schedules (docs/graphturbo.md); "
           "%d operators simplified and grouped into %d (%d BatchNormalizations folded)\n\n",
           model, share, (long long)chip->clusters, chip->name, p->simplify.ops_before, p->graph.nops,
           p->simplify.bn_folded);
    printf("%-11s %13s %8s %13s %10s %9s %6s %5s %5s %5s %10s %10s\n", "step", "time (us)", "speedup",
           "throughput/s", "sub-graphs", "instances", "order", "LB", "GB", "DDR", "DDR (MB)", "GB (MB)");
    const rotor_dsa_result *base = &p->dsa[ROTOR_DSA_PER_LAYER];
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
        const rotor_dsa_result *r = &p->dsa[k];
        printf("%-11s %13.3f %7.2fx %13.1f %10d %9lld %6s %5d %5d %5d %10.1f %10.1f\n", rotor_dsa_step_name(r->step),
               r->seconds * 1e6, base->seconds / r->seconds, (double)(batch * chip->clusters) / r->seconds,
               r->subgraphs, (long long)r->instances, order_name(r->order), r->tensors[ROTOR_GT_LB],
               r->tensors[ROTOR_GT_GB], r->tensors[ROTOR_GT_DDR], r->ddr_bytes / 1e6, r->gb_bytes / 1e6);
    }
    const rotor_dsa_result *g = &p->dsa[ROTOR_DSA_GRAPHTURBO];
    printf("\ngraphturbo: busy matrix units %.3f us, vector units %.3f us, DDR %.3f us, GB %.3f us, of %.3f us\n",
           g->mm_s * 1e6, g->vec_s * 1e6, g->ddr_s * 1e6, g->gb_s * 1e6, g->seconds * 1e6);
    return 0;
}
