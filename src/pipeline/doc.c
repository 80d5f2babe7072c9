/* doc.c — the documents of the commands (pipeline/doc.h): built here,
 * printed by the CLI, returned to Python.  The command line's options,
 * read from an options object, are docopts.c's. */
#include "rotor/pipeline/doc.h"

#include "base/jsontext.h"
#include "pipeline/docint.h"
#include "rotor/compile/energy.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

void rotor_free(void *p) { free(p); }

rotor_status rotor_doc_print(cJSON *root, char **out, rotor_error *err) {
    *out = root && rotor_json_stamp(root) ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return *out ? ROTOR_OK : rotor_nomem(err);
}

/* With compare: the program with a "comparison" object beside its totals
 * (docs/program-format.md; readers ignore it).  The text is read back and
 * written again, as the command always printed it. */
static rotor_status add_comparison(const rotor_pipeline *p, char **text, rotor_error *err) {
    cJSON *root = cJSON_Parse(*text);
    free(*text);
    *text = NULL;
    if (!root) return rotor_nomem(err);
    cJSON *c = cJSON_AddObjectToObject(root, "comparison");
    cJSON_AddStringToObject(c, "baseline", "vgm");
    cJSON_AddNumberToObject(c, "t10_s", p->t10.total_s);
    if (p->vgm_status == ROTOR_OK) {
        cJSON_AddNumberToObject(c, "vgm_s", p->vgm.total_s);
        cJSON_AddNumberToObject(c, "t10_over_vgm", p->vgm.total_s / p->t10.total_s);
    } else {
        cJSON_AddStringToObject(c, "vgm_error", p->vgm_err.msg);
    }
    if (p->oracle_status == ROTOR_OK) {
        cJSON_AddNumberToObject(c, "vgm_oracle_s", p->oracle.total_s);
        cJSON_AddNumberToObject(c, "t10_over_vgm_oracle", p->oracle.total_s / p->t10.total_s);
    } else {
        cJSON_AddStringToObject(c, "vgm_oracle_error", p->oracle_err.msg);
    }
    return rotor_doc_print(root, text, err);
}

rotor_status rotor_doc_compile(const rotor_pipeline *p, const rotor_chip *chip, bool compare, char **out,
                               rotor_error *err) {
    *out = NULL;
    char *text = NULL;
    rotor_status st = rotor_program_write(&p->graph, chip, &p->t10, &text, err);
    if (st) return st;
    /* energy per inference (docs/energy.md): the program's events over its time */
    rotor_energy_counts ec;
    rotor_energy en;
    if (p->has_energy) ec = p->energy; /* counted by the pipeline (options.energy) */
    else if ((st = rotor_energy_program(&p->program, chip, &ec, err))) {
        free(text);
        return st;
    }
    rotor_energy_price(chip, &ec, p->t10.total_s, &en);
    char *with = rotor_doc_energy_splice(text, "inference", &ec, &en);
    free(text);
    if (!with) return rotor_nomem(err);
    if (compare && (st = add_comparison(p, &with, err))) return st;
    *out = with;
    return ROTOR_OK;
}

static cJSON *simulation_json(const rotor_program *p, const rotor_chip *chip, const rotor_replay_result *r) {
    char topo[64];
    const rotor_sim_stats *s = &r->stats;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "rotor-simulation");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "model", p->model);
    cJSON_AddStringToObject(root, "chip", chip->name);
    cJSON_AddStringToObject(root, "topology", rotor_chip_topology_text(chip, topo, sizeof topo));
    /* a program replayed on another network than it was compiled for: the
     * model's times are that network's (docs/simulator.md, "Another chip") */
    if (*p->topology && strcmp(p->topology, topo)) cJSON_AddStringToObject(root, "compiled_topology", p->topology);
    /* ... or on a chip with other fields: their keys */
    const char *other[ROTOR_CHIP_FIELDS_MAX];
    int nother = p->has_compiled_chip
                     ? rotor_chip_differences(&p->compiled_chip, chip, false, other, ROTOR_CHIP_FIELDS_MAX)
                     : 0;
    if (nother) {
        cJSON *keys = cJSON_AddArrayToObject(root, "compiled_chip_differs");
        for (int i = 0; i < nother; i++) cJSON_AddItemToArray(keys, cJSON_CreateString(other[i]));
    }
    cJSON_AddNumberToObject(root, "cores", (double)p->cores);
    cJSON_AddNumberToObject(root, "simulated_s", r->simulated_s);
    cJSON_AddNumberToObject(root, "predicted_s", r->predicted_s);
    cJSON_AddNumberToObject(root, "error", r->predicted_s > 0 ? r->simulated_s / r->predicted_s - 1 : 0);
    cJSON_AddNumberToObject(root, "tasks", (double)s->tasks);
    cJSON_AddNumberToObject(root, "events", (double)s->events);
    cJSON *b = cJSON_AddObjectToObject(root, "breakdown_s");
    for (int c = 0; c < ROTOR_SIM_NCATS; c++)
        cJSON_AddNumberToObject(b, rotor_sim_category_name((rotor_sim_category)c), s->exposed_ps[c] * 1e-12);
    cJSON_AddNumberToObject(b, "idle", s->idle_ps * 1e-12);
    cJSON_AddNumberToObject(root, "contended_s", s->contended_ps * 1e-12);
    cJSON_AddNumberToObject(root, "stall_s", s->stall_ps * 1e-12);
    cJSON *u = cJSON_AddObjectToObject(root, "utilisation");
    cJSON_AddNumberToObject(u, "flops", s->flops_util);
    cJSON_AddNumberToObject(u, "cores", s->compute_util);
    cJSON_AddNumberToObject(u, "links_mean", s->link_util_mean);
    cJSON_AddNumberToObject(u, "links_peak", s->link_util_peak);
    cJSON_AddNumberToObject(u, "interchip", s->interchip_util);
    cJSON_AddNumberToObject(u, "hbm", s->hbm_util);
    rotor_energy_counts ec = rotor_sim_energy_counts(s);
    rotor_energy en;
    rotor_energy_price(chip, &ec, r->simulated_s, &en);
    rotor_doc_energy_json(root, "inference", &ec, &en);
    cJSON *ops = cJSON_AddArrayToObject(root, "operators");
    for (int o = 0; o < r->nops; o++) {
        const rotor_replay_op *x = &r->ops[o];
        char why[160];
        rotor_replay_explain(x, why, sizeof why);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", p->ops[o].name);
        cJSON_AddStringToObject(j, "type", p->ops[o].type);
        cJSON_AddNumberToObject(j, "predicted_s", x->predicted_s);
        cJSON_AddNumberToObject(j, "simulated_s", x->simulated_s);
        cJSON_AddNumberToObject(j, "setup_s", x->simulated_setup_s);
        cJSON_AddNumberToObject(j, "main_s", x->simulated_main_s);
        cJSON_AddNumberToObject(j, "reduction_s", x->simulated_reduction_s);
        cJSON_AddNumberToObject(j, "wait_s", x->wait_s);
        cJSON_AddStringToObject(j, "where", why);
        if (x->segment) cJSON_AddNumberToObject(j, "segment", x->segment);
        cJSON_AddItemToArray(ops, j);
    }
    return root;
}

rotor_status rotor_doc_simulation(const rotor_program *p, const rotor_chip *chip, const rotor_replay_result *r,
                                  char **out, rotor_error *err) {
    return rotor_doc_print(simulation_json(p, chip, r), out, err);
}
