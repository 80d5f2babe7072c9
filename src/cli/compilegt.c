/* compilegt.c — `rotor compile --group graphturbo`: GraphTurbo's schedules
 * of one cluster's share of the batch on a chip with a memory hierarchy,
 * the per-layer baseline and the four steps of its Fig. 15, as a table or
 * JSON (format rotor-graphturbo, version 1; docs/graphturbo.md; built by
 * the library, pipeline/doc.h, as Python gets it). */
#include <stdio.h>

#include "cli.h"
#include "rotor/compile/dsa.h"
#include "rotor/pipeline/doc.h"
#include "rotor/pipeline/pipeline.h"

/* The document of rotor_doc_graphturbo printed (--json). */
static int print_json(const char *model, const rotor_chip *chip, int64_t batch, const rotor_pipeline *p) {
    rotor_error err = {{0}};
    char *out = NULL;
    rotor_status st = rotor_doc_graphturbo(p, chip, model, batch, &out, &err);
    if (st) return cli_fail("compile", st, &err);
    cli_puts(out);
    rotor_free(out);
    return 0;
}

/* GraphTurbo §5.1's loop execution: each step's fastest number of passes
 * (rotor_pipeline_dsa_loops); one line when there is nothing to choose. */
static void print_loops(const rotor_chip *chip, const rotor_pipeline *p) {
    const rotor_dsa_loops *lp = &p->loops;
    if (!lp->ran) return; /* --no-loops */
    const char *head = "\nloop execution within a cluster (GraphTurbo §5.1):";
    if (lp->file_batch) {
        printf("%s not tried, an ONNX file's batch is its own\n", head);
        return;
    }
    if (lp->tried < 2) {
        printf("%s a batch of 1 a cluster, one pass\n", head);
        return;
    }
    printf("%s each step's fastest of %d ways to run %lld a cluster as passes one after another\n", head,
           lp->tried, (long long)lp->batch);
    printf("%-11s %6s %6s %13s %8s %13s %5s %5s %5s %10s\n", "step", "passes", "a pass", "time (us)", "speedup",
           "throughput/s", "LB", "GB", "DDR", "DDR (MB)");
    const rotor_dsa_loop *base = &lp->step[ROTOR_DSA_PER_LAYER];
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
        const rotor_dsa_loop *l = &lp->step[k];
        double s = rotor_dsa_loop_s(l);
        printf("%-11s %6lld %6lld %13.3f %7.2fx %13.1f %5d %5d %5d %10.1f\n", rotor_dsa_step_name((rotor_dsa_step)k),
               (long long)l->passes, (long long)(lp->batch / l->passes), s * 1e6, rotor_dsa_loop_s(base) / s,
               (double)(lp->batch * chip->clusters) / s, l->pass.tensors[ROTOR_GT_LB],
               l->pass.tensors[ROTOR_GT_GB], l->pass.tensors[ROTOR_GT_DDR], (double)l->passes * l->pass.ddr_bytes / 1e6);
    }
    const rotor_dsa_loop *g = &lp->step[ROTOR_DSA_GRAPHTURBO];
    if (g->passes > 1)
        printf("graphturbo: %lld passes of %lld take %.2fx less time than one pass of %lld\n", (long long)g->passes,
               (long long)(lp->batch / g->passes), p->dsa[ROTOR_DSA_GRAPHTURBO].seconds / rotor_dsa_loop_s(g),
               (long long)lp->batch);
    else
        printf("graphturbo: one pass of %lld is the fastest\n", (long long)lp->batch);
}

/* --values: where the graphturbo step keeps each activation value. */
static void print_values(const rotor_pipeline *p) {
    if (!p->values) return;
    int64_t per = p->loops.ran && !p->loops.file_batch ? p->loops.batch / p->values_passes : 0;
    printf("\nvalues of the graphturbo step");
    if (p->values_passes > 1)
        printf(", in one of its %lld passes of %lld", (long long)p->values_passes, (long long)per);
    printf(" (blocks: its instances' outputs in the LB, GB and DDR; inside: an intermediate of its sub-graph)\n");
    printf("%-32s %5s %12s %9s %15s  %s\n", "value", "level", "bytes", "instances", "blocks LB/GB/DDR",
           "written by");
    for (int i = 0; i < p->nvalues; i++) {
        const rotor_dsa_value *v = &p->values[i];
        char blocks[48];
        if (v->intermediate) snprintf(blocks, sizeof blocks, "inside");
        else
            snprintf(blocks, sizeof blocks, "%lld/%lld/%lld", (long long)v->blocks[ROTOR_GT_LB],
                     (long long)v->blocks[ROTOR_GT_GB], (long long)v->blocks[ROTOR_GT_DDR]);
        const char *first = p->graph.ops[v->first_op].name, *last = p->graph.ops[v->last_op].name;
        printf("%-32s %5s %12lld %9lld %15s  %s%s%s%s\n", p->graph.values[v->value].name,
               rotor_gt_scope_name(v->level), (long long)v->bytes, (long long)v->instances, blocks, first,
               v->first_op == v->last_op ? "" : "..", v->first_op == v->last_op ? "" : last,
               v->output ? " (a model output)" : "");
    }
}

int cli_compile_graphturbo(const char *model, const rotor_chip *chip, int64_t batch, const rotor_pipeline *p,
                           bool json) {
    if (json) return print_json(model, chip, batch, p);
    char share[64];
    cli_batch_words(model, batch, share, sizeof share);
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
               r->subgraphs, (long long)r->instances, rotor_gt_order_name(r->order), r->tensors[ROTOR_GT_LB],
               r->tensors[ROTOR_GT_GB], r->tensors[ROTOR_GT_DDR], r->ddr_bytes / 1e6, r->gb_bytes / 1e6);
    }
    const rotor_dsa_result *g = &p->dsa[ROTOR_DSA_GRAPHTURBO];
    printf("(LB, GB, DDR: the activation values the operators write, as GraphTurbo's Table 3 counts them; the "
           "model's %d input%s, written by the host, %s in DDR too)\n", base->input_values,
           base->input_values == 1 ? "" : "s", base->input_values == 1 ? "is" : "are");
    if (rotor_model_is_onnx(model))
        printf("(throughput/s: runs of the file a second, each cluster running it once at a time)\n");
    printf("\ngraphturbo: busy matrix units %.3f us, vector units %.3f us, DDR %.3f us, GB %.3f us, of %.3f us\n",
           g->mm_s * 1e6, g->vec_s * 1e6, g->ddr_s * 1e6, g->gb_s * 1e6, g->seconds * 1e6);
    rotor_graph_totals t;
    rotor_graph_totals_of(&p->graph, &t);
    printf("DDR holds at most %.1f MB at once in per-layer, %.1f MB in graphturbo (the weights' %.1f MB once, "
           "and each cluster's activations), of %.1f MB\n",
           rotor_dsa_ddr_need(&p->graph, &p->cluster, base, 1) / 1e6,
           rotor_dsa_ddr_need(&p->graph, &p->cluster, g, 1) / 1e6, (double)t.weight_bytes / 1e6,
           (double)chip->hbm_bytes / 1e6);
    print_loops(chip, p);
    print_values(p);
    return 0;
}

/* ---- on an ICCA chip: sub-graph instances on core groups (gticca.h) ---- */

int cli_compile_gticca(const char *model, const rotor_chip *chip, int64_t batch, const rotor_pipeline *p, bool json) {
    if (json) return print_json(model, chip, batch, p);
    const rotor_gticca_result *r = &p->t10.gticca;
    char share[64];
    cli_batch_words(model, batch, share, sizeof share);
    printf("%s, %s, on %s (%lld cores): GraphTurbo's sub-graph instances on core groups "
           "(docs/graphturbo.md, \"On an ICCA chip\"); %d operators simplified and grouped into %d "
           "(%d BatchNormalizations folded)\n\n",
           model, share, chip->name, (long long)rotor_chip_cores(chip), p->simplify.ops_before,
           p->graph.nops, p->simplify.bn_folded);
    printf("%-40s %4s %9s %6s %10s %12s %12s %12s %13s %10s\n", "sub-graph", "ops", "instances", "group",
           "T10 (us)", "compute (us)", "grouped (us)", "compute (us)", "lost h-o (us)", "peak (B)");
    for (int k = 0; k < r->nsg; k++) {
        const rotor_gticca_sg *s = &r->sg[k];
        char name[96];
        snprintf(name, sizeof name, "%.46s..%.46s", p->graph.ops[s->first].name, p->graph.ops[s->last].name);
        printf("%-40s %4d %9lld %6lld %10.3f %12.3f %12.3f %12.3f %13.3f %10lld\n", name, s->last - s->first + 1,
               (long long)s->instances, (long long)s->group_cores, s->t10_s * 1e6, s->t10_compute_s * 1e6,
               s->grouped_s * 1e6, s->compute_s * 1e6, s->penalty_s * 1e6, (long long)s->peak_bytes);
    }
    if (!r->nsg) printf("(none: no sub-graph runs faster as instances%s)\n", r->dropped ? " in the SRAM" : "");
    /* the room T10 leaves says why: its idle layouts may fill the SRAM to
     * cut setup (DenseNet-121 at batch 48: 4,753 B a core left) */
    if (r->dropped)
        printf("%d choice%s turned away: the SRAM could not hold %s instances' copies of %s weights beside the "
               "others' (T10's schedule leaves %lld B a core at its fullest operator; docs/graphturbo.md, \"On an "
               "ICCA chip\")\n", r->dropped, r->dropped == 1 ? "" : "s", r->dropped == 1 ? "its" : "their",
               r->dropped == 1 ? "its" : "their", (long long)(rotor_chip_sram(chip) - p->t10.peak_bytes));
    printf("\nT10 on the simplified graph %.3f us (compute %.3f); graphturbo %.3f us, %.3fx; %d sub-graphs as "
           "instances, %d candidates, %d instance compiles\n",
           r->t10_s * 1e6, p->t10.compute_s * 1e6, r->total_s * 1e6, r->t10_s / r->total_s, r->nsg, r->candidates,
           r->compiles);
    return 0;
}
