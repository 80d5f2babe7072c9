/* docgt.c — GraphTurbo's documents (pipeline/doc.h): `rotor compile
 * --group graphturbo --json` and `rotor simulate --group graphturbo
 * --json`, on a chip with a global buffer (the DSA steps, compile/dsa.h)
 * and without one (instances on core groups, compile/gticca.h).  Built
 * here, so that the command line and rotor_doc (Python) print the same
 * bytes; formats in docs/graphturbo.md and docs/simulator.md. */
#include "rotor/pipeline/doc.h"

#include "pipeline/docint.h"

#include <cjson/cJSON.h>

/* A document's root: its format and version, the model and the chip; NULL
 * when out of memory. */
static cJSON *json_root(const char *format, int version, const char *model, const rotor_chip *chip) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "format", format);
    cJSON_AddNumberToObject(root, "version", version);
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddStringToObject(root, "chip", chip->name);
    /* an ONNX file's batch is its own: the batch fields then count runs of
     * the file (1), and a throughput runs of it a second (a key added
     * 2026-12-02, the documents' versions kept) */
    cJSON_AddBoolToObject(root, "file_batch", rotor_model_is_onnx(model));
    return root;
}

cJSON *rotor_doc_dsa_tensors_json(cJSON *o, const char *key, const int tensors[3], int inputs) {
    cJSON *t = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(t, "lb", tensors[ROTOR_GT_LB]);
    cJSON_AddNumberToObject(t, "gb", tensors[ROTOR_GT_GB]);
    cJSON_AddNumberToObject(t, "ddr", tensors[ROTOR_GT_DDR]);
    cJSON_AddNumberToObject(t, "inputs", inputs); /* the model's, in DDR too (version 2) */
    return t;
}

cJSON *rotor_doc_dsa_loop_json(const rotor_dsa_loops *lp, rotor_dsa_step k) {
    const rotor_dsa_loop *l = &lp->step[k];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "step", rotor_dsa_step_name(k));
    cJSON_AddNumberToObject(o, "passes", (double)l->passes);
    cJSON_AddNumberToObject(o, "batch_per_pass", (double)(lp->batch / l->passes));
    cJSON_AddNumberToObject(o, "seconds", rotor_dsa_loop_s(l));
    cJSON_AddNumberToObject(o, "pass_seconds", l->pass.seconds);
    cJSON_AddNumberToObject(o, "speedup", rotor_dsa_loop_s(&lp->step[ROTOR_DSA_PER_LAYER]) / rotor_dsa_loop_s(l));
    rotor_doc_dsa_tensors_json(o, "tensors", l->pass.tensors, l->pass.input_values); /* of one pass */
    cJSON_AddNumberToObject(o, "ddr_bytes", (double)l->passes * l->pass.ddr_bytes); /* of all passes */
    return o;
}

cJSON *rotor_doc_gticca_sg_json(const rotor_graph *g, const rotor_gticca_sg *s) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "first", g->ops[s->first].name);
    cJSON_AddStringToObject(o, "last", g->ops[s->last].name);
    cJSON_AddNumberToObject(o, "operators", s->last - s->first + 1);
    cJSON_AddNumberToObject(o, "instances", (double)s->instances);
    cJSON_AddNumberToObject(o, "group_cores", (double)s->group_cores);
    cJSON_AddNumberToObject(o, "t10_s", s->t10_s);
    cJSON_AddNumberToObject(o, "grouped_s", s->grouped_s);
    cJSON_AddNumberToObject(o, "penalty_s", s->penalty_s);
    cJSON_AddNumberToObject(o, "t10_compute_s", s->t10_compute_s);
    cJSON_AddNumberToObject(o, "compute_s", s->compute_s);
    cJSON_AddNumberToObject(o, "peak_bytes", (double)s->peak_bytes);
    cJSON_AddNumberToObject(o, "extra_idle_bytes", (double)s->extra_idle_bytes);
    return o;
}

/* The graphturbo step's values, where it keeps each (rotor_pipeline.values):
 * bytes and blocks of one of its passes. */
static cJSON *dsa_values_json(const rotor_pipeline *p) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "step", rotor_dsa_step_name(ROTOR_DSA_GRAPHTURBO));
    cJSON_AddNumberToObject(o, "passes", (double)p->values_passes);
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (int i = 0; i < p->nvalues; i++) {
        const rotor_dsa_value *v = &p->values[i];
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, r);
        cJSON_AddStringToObject(r, "value", p->graph.values[v->value].name);
        cJSON_AddStringToObject(r, "level", rotor_gt_scope_name(v->level));
        cJSON_AddNumberToObject(r, "bytes", (double)v->bytes);
        cJSON_AddStringToObject(r, "first", p->graph.ops[v->first_op].name);
        cJSON_AddStringToObject(r, "last", p->graph.ops[v->last_op].name);
        cJSON_AddNumberToObject(r, "instances", (double)v->instances);
        cJSON_AddBoolToObject(r, "intermediate", v->intermediate);
        cJSON_AddBoolToObject(r, "output", v->output);
        cJSON *b = cJSON_AddObjectToObject(r, "blocks"); /* a sub-graph's output: its instances' blocks */
        cJSON_AddNumberToObject(b, "lb", (double)v->blocks[ROTOR_GT_LB]);
        cJSON_AddNumberToObject(b, "gb", (double)v->blocks[ROTOR_GT_GB]);
        cJSON_AddNumberToObject(b, "ddr", (double)v->blocks[ROTOR_GT_DDR]);
    }
    return o;
}

/* "rotor-graphturbo": the five steps in one pass, and §5.1's loops unless
 * they did not run (--no-loops). */
static cJSON *dsa_json(const rotor_pipeline *p, const rotor_chip *chip, const char *model, int64_t batch) {
    /* version 2: "tensors" without the model's inputs, and "inputs" */
    cJSON *root = json_root("rotor-graphturbo", 2, model, chip);
    if (!root) return NULL;
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
        cJSON_AddStringToObject(o, "order", rotor_gt_order_name(r->order));
        rotor_doc_dsa_tensors_json(o, "tensors", r->tensors, r->input_values);
        cJSON_AddNumberToObject(o, "ddr_bytes", r->ddr_bytes);
        /* what DDR holds at once, the chip's weights and its clusters' activations */
        cJSON_AddNumberToObject(o, "ddr_held_bytes", rotor_dsa_ddr_need(&p->graph, &p->cluster, r, 1));
        cJSON_AddNumberToObject(o, "gb_bytes", r->gb_bytes);
        cJSON_AddNumberToObject(o, "matrix_s", r->mm_s);
        cJSON_AddNumberToObject(o, "vector_s", r->vec_s);
        cJSON_AddNumberToObject(o, "ddr_s", r->ddr_s);
        cJSON_AddNumberToObject(o, "gb_s", r->gb_s);
    }
    const rotor_dsa_loops *lp = &p->loops;
    if (lp->ran) { /* §5.1's passes; none with --no-loops */
        cJSON *lo = cJSON_AddObjectToObject(root, "loops");
        cJSON_AddNumberToObject(lo, "tried", lp->tried);
        cJSON_AddBoolToObject(lo, "file_batch", lp->file_batch); /* an ONNX file: one pass, no steps */
        cJSON *ls = lp->file_batch ? NULL : cJSON_AddArrayToObject(lo, "steps");
        for (int k = 0; ls && k < ROTOR_DSA_STEPS; k++) {
            cJSON *o = rotor_doc_dsa_loop_json(lp, (rotor_dsa_step)k);
            cJSON_AddItemToArray(ls, o);
            double s = rotor_dsa_loop_s(&lp->step[k]);
            cJSON_AddNumberToObject(o, "throughput", (double)(lp->batch * chip->clusters) / s);
        }
    }
    if (p->values) /* --values (a key added 2026-12-03, the version kept) */
        cJSON_AddItemToObject(root, "values", dsa_values_json(p));
    return root;
}

/* "rotor-graphturbo-icca": gticca's sub-graphs against T10 alone. */
static cJSON *icca_json(const rotor_pipeline *p, const rotor_chip *chip, const char *model, int64_t batch) {
    const rotor_gticca_result *r = &p->t10.gticca;
    cJSON *root = json_root("rotor-graphturbo-icca", 1, model, chip);
    if (!root) return NULL;
    cJSON_AddNumberToObject(root, "batch", (double)batch);
    cJSON_AddNumberToObject(root, "cores", (double)rotor_chip_cores(chip));
    cJSON_AddNumberToObject(root, "operators", p->graph.nops);
    cJSON_AddNumberToObject(root, "t10_s", r->t10_s);
    cJSON_AddNumberToObject(root, "total_s", r->total_s);
    cJSON_AddNumberToObject(root, "compute_s", p->t10.compute_s);
    cJSON_AddNumberToObject(root, "candidates", r->candidates);
    cJSON_AddNumberToObject(root, "compiles", r->compiles);
    cJSON_AddNumberToObject(root, "dropped_for_sram", r->dropped);
    /* the SRAM T10's schedule leaves a core at its fullest operator, the
     * room the instances' copies compete for (a key added 2026-12-04, the
     * version kept) */
    cJSON_AddNumberToObject(root, "t10_free_bytes", (double)(rotor_chip_sram(chip) - p->t10.peak_bytes));
    cJSON *sgs = cJSON_AddArrayToObject(root, "subgraphs");
    for (int k = 0; k < r->nsg; k++) cJSON_AddItemToArray(sgs, rotor_doc_gticca_sg_json(&p->graph, &r->sg[k]));
    return root;
}

rotor_status rotor_doc_graphturbo(const rotor_pipeline *p, const rotor_chip *chip, const char *model, int64_t batch,
                                  char **out, rotor_error *err) {
    return rotor_doc_print(rotor_chip_has_gb(chip) ? dsa_json(p, chip, model, batch)
                                                   : icca_json(p, chip, model, batch),
                           out, err);
}

/* One step's model against simulation, as fields of o. */
static void gtsim_step_json(cJSON *o, const rotor_gtreplay_result *r) {
    cJSON_AddStringToObject(o, "step", rotor_dsa_step_name(r->step));
    cJSON_AddNumberToObject(o, "model_s", r->model_s);
    cJSON_AddNumberToObject(o, "simulated_s", r->simulated_s);
    cJSON_AddNumberToObject(o, "difference", r->model_s > 0 ? r->simulated_s / r->model_s - 1 : 0);
    cJSON_AddNumberToObject(o, "instances", (double)r->instances);
    cJSON_AddNumberToObject(o, "tasks", (double)r->tasks);
    cJSON *b = cJSON_AddObjectToObject(o, "busy_s");
    for (int i = 0; i < ROTOR_GTREPLAY_NRES; i++)
        cJSON_AddNumberToObject(b, rotor_gtreplay_res_name((rotor_gtreplay_res)i), r->busy_s[i]);
}

rotor_status rotor_doc_graphturbo_sim(const char *model, const rotor_chip *chip, int64_t batch,
                                      const rotor_gtreplay_result r[ROTOR_DSA_STEPS], const rotor_dsa_loops *lp,
                                      const rotor_gtreplay_result *lr, char **out, rotor_error *err) {
    /* version 2 (2026-12-02): busy_s has the GB's two sides, "GB read" and
     * "GB write", where version 1 had one "GB" */
    cJSON *root = json_root("rotor-graphturbo-sim", 2, model, chip);
    if (!root) return rotor_nomem(err);
    cJSON_AddNumberToObject(root, "batch", (double)batch);
    cJSON_AddNumberToObject(root, "clusters", (double)chip->clusters);
    cJSON_AddNumberToObject(root, "tiles", ROTOR_GTREPLAY_TILES);
    cJSON *steps = cJSON_AddArrayToObject(root, "steps");
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
        cJSON *o = cJSON_CreateObject();
        gtsim_step_json(o, &r[k]);
        cJSON_AddItemToArray(steps, o);
    }
    /* §5.1's passes, as rotor compile --group graphturbo chose them: times of all passes, tasks of one
     * (none with --no-loops; an ONNX file's batch is its own: loops_tried 1) */
    if (lr) {
        cJSON_AddNumberToObject(root, "loops_tried", lp->tried);
        cJSON_AddBoolToObject(root, "loops_file_batch", lp->file_batch);
    }
    cJSON *loops = lr ? cJSON_AddArrayToObject(root, "loops") : NULL;
    for (int k = 0; loops && k < ROTOR_DSA_STEPS; k++) {
        cJSON *o = cJSON_CreateObject();
        gtsim_step_json(o, &lr[k]);
        cJSON_AddNumberToObject(o, "passes", (double)lp->step[k].passes);
        cJSON_AddItemToArray(loops, o);
    }
    return rotor_doc_print(root, out, err);
}

rotor_status rotor_doc_graphturbo_icca_sim(const char *model, const rotor_chip *chip, int64_t batch,
                                           const rotor_graph *g, const rotor_gticca_replay_result *r, char **out,
                                           rotor_error *err) {
    cJSON *root = json_root("rotor-graphturbo-icca-sim", 1, model, chip);
    if (!root) return rotor_nomem(err);
    cJSON_AddNumberToObject(root, "batch", (double)batch);
    cJSON_AddNumberToObject(root, "cores", (double)rotor_chip_cores(chip));
    cJSON_AddNumberToObject(root, "t10_model_s", r->t10_model_s);
    cJSON_AddNumberToObject(root, "t10_simulated_s", r->t10_simulated_s);
    cJSON_AddNumberToObject(root, "model_s", r->model_s);
    cJSON_AddNumberToObject(root, "simulated_s", r->simulated_s);
    cJSON_AddNumberToObject(root, "difference", r->model_s > 0 ? r->simulated_s / r->model_s - 1 : 0);
    cJSON_AddNumberToObject(root, "tasks", (double)r->tasks);
    cJSON *sgs = cJSON_AddArrayToObject(root, "subgraphs");
    for (int k = 0; k < r->nsg; k++) {
        const rotor_gticca_replay_sg *s = &r->sg[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "first", g->ops[s->first].name);
        cJSON_AddStringToObject(o, "last", g->ops[s->last].name);
        const struct {
            const char *key;
            double v;
        } f[] = {{"instances", (double)s->instances},
                 {"group_cores", (double)s->group_cores},
                 {"model_s", s->model_s},
                 {"simulated_s", s->simulated_s},
                 {"difference", s->model_s > 0 ? s->simulated_s / s->model_s - 1 : 0},
                 {"model_instance_s", s->model_instance_s},
                 {"simulated_instance_s", s->simulated_instance_s},
                 {"model_entry_s", s->model_entry_s},
                 {"simulated_entry_s", s->simulated_entry_s},
                 {"model_lost_s", s->model_lost_s},
                 {"simulated_lost_s", s->simulated_lost_s}};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) cJSON_AddNumberToObject(o, f[i].key, f[i].v);
        cJSON_AddItemToArray(sgs, o);
    }
    return rotor_doc_print(root, out, err);
}
