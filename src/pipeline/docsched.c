/* docsched.c — the document of `rotor schedule --json` (format
 * "rotor-schedule", docs/schedule.md): each design run, its energy, its
 * replay when simulated, its operators with --per-op (pipeline/doc.h). */
#include "rotor/pipeline/doc.h"

#include "pipeline/docint.h"
#include "rotor/compile/energy.h"
#include "rotor/hbm/schedreplay.h"
#include "rotor/hbm/schedule.h"

#include <cjson/cJSON.h>
#include <omp.h>
#include <string.h>

static double us(int64_t ps) { return (double)ps * 1e-6; }
static double pct(double a, double b) { return b > 0 ? 100.0 * a / b : 0.0; }

/* One design's energy per token or step (docs/energy.md, "Schedules"):
 * the schedule's events over its latency, on the tensor-parallel chips. */
rotor_status rotor_doc_schedule_energy(const rotor_schedule *s, const rotor_doc_schedule_run *x, rotor_energy_counts *c,
                                       rotor_energy *e, rotor_error *err) {
    rotor_status st = rotor_schedule_energy(s, &x->rep, c, err);
    rotor_chip pkg = s->chip;
    pkg.chips = s->tensor_parallel; /* static power of the chips the schedule runs on */
    if (!st) rotor_energy_price(&pkg, c, x->rep.latency_s, e);
    return st;
}

/* Runs the designs asked for into runs[0 .. *shown), then Basic and Ideal
 * when not asked for (the percentage of Ideal and the speedup over Basic are
 * part of every report); *nruns counts the runs that succeeded (runs
 * [0 .. *nruns) hold reports to free). */
rotor_status rotor_doc_schedule_designs(const rotor_schedule *s, const rotor_preload_design *designs, int ndesigns,
                                        rotor_doc_schedule_run *runs, int *nruns, int *shown, rotor_error *err) {
    rotor_preload_design want[ROTOR_PRELOAD_NDESIGNS + 2];
    int nwant = 0;
    bool has_ideal = false, has_basic = false;
    for (int i = 0; i < ndesigns; i++) {
        want[nwant++] = designs[i];
        has_ideal |= designs[i] == ROTOR_PRELOAD_IDEAL;
        has_basic |= designs[i] == ROTOR_PRELOAD_BASIC;
    }
    *shown = nwant;
    if (!has_basic) want[nwant++] = ROTOR_PRELOAD_BASIC;
    if (!has_ideal) want[nwant++] = ROTOR_PRELOAD_IDEAL;
    rotor_status st = ROTOR_OK;
    for (int i = 0; i < nwant && !st; i++) {
        double t0 = omp_get_wtime();
        st = rotor_schedule_run(s, want[i], &runs[i].rep, err);
        runs[i].design = want[i];
        runs[i].seconds = omp_get_wtime() - t0;
        if (!st) (*nruns)++;
    }
    return st;
}

static cJSON *json_run(const rotor_schedule *s, const rotor_doc_schedule_run *x, const rotor_doc_schedule_run *ideal,
                       bool per_op, const char *per) {
    const rotor_schedule_report *r = &x->rep;
    const rotor_preload_breakdown *b = &r->result.breakdown;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "design", rotor_preload_designs[x->design].name);
    cJSON_AddNumberToObject(o, "latency_us", us(r->result.latency_ps));
    if (ideal) cJSON_AddNumberToObject(o, "percent_of_ideal", pct(ideal->rep.latency_s, r->latency_s));
    cJSON *bd = cJSON_AddObjectToObject(o, "breakdown_us");
    cJSON_AddNumberToObject(bd, "preload", us(b->preload_ps));
    cJSON_AddNumberToObject(bd, "execute", us(b->execute_ps));
    cJSON_AddNumberToObject(bd, "overlap", us(b->overlap_ps));
    cJSON_AddNumberToObject(bd, "stall", us(b->stall_ps));
    cJSON_AddNumberToObject(bd, "idle", us(b->idle_ps));
    cJSON_AddNumberToObject(o, "hbm_util", r->hbm_util);
    cJSON_AddNumberToObject(o, "link_util", r->link_util);
    cJSON_AddNumberToObject(o, "link_bytes_per_core", (double)r->link_bytes);
    cJSON_AddNumberToObject(o, "tflops", r->tflops);
    cJSON_AddNumberToObject(o, "alloc_calls", (double)r->result.alloc_calls);
    cJSON_AddNumberToObject(o, "schedules_timed", (double)r->result.schedules);
    cJSON_AddNumberToObject(o, "refine_moves", (double)r->result.refine_moves);
    cJSON_AddBoolToObject(o, "static_kept", r->result.static_kept);
    rotor_energy_counts ec;
    rotor_energy en;
    rotor_error err = {{0}};
    if (!rotor_doc_schedule_energy(s, x, &ec, &en, &err)) rotor_doc_energy_json(o, per, &ec, &en);
    if (x->simulated) {
        const rotor_schedule_replay_result *q = &x->sim;
        const rotor_sim_stats *t = &q->stats;
        cJSON *m = cJSON_AddObjectToObject(o, "simulation");
        cJSON_AddNumberToObject(m, "simulated_us", us(q->simulated_ps));
        cJSON_AddNumberToObject(m, "analytical_us", us(q->analytical_ps));
        cJSON_AddNumberToObject(m, "difference_percent", 100.0 * q->error);
        cJSON_AddNumberToObject(m, "piece_bytes", (double)q->piece_bytes);
        cJSON_AddNumberToObject(m, "tasks", (double)t->tasks);
        cJSON_AddNumberToObject(m, "events", (double)t->events);
        cJSON_AddNumberToObject(m, "replay_s", x->sim_seconds);
        cJSON *sb = cJSON_AddObjectToObject(m, "breakdown_us");
        for (int c = 0; c < ROTOR_SIM_NCATS; c++)
            cJSON_AddNumberToObject(sb, rotor_sim_category_name((rotor_sim_category)c), us(t->exposed_ps[c]));
        cJSON_AddNumberToObject(sb, "idle", us(t->idle_ps));
        cJSON_AddNumberToObject(m, "hbm_bytes", (double)t->hbm_bytes);
        cJSON_AddNumberToObject(m, "hbm_util", t->hbm_util);
        cJSON_AddNumberToObject(m, "link_util_mean", t->link_util_mean);
        cJSON_AddNumberToObject(m, "link_util_peak", t->link_util_peak);
        cJSON_AddNumberToObject(m, "compute_util", t->compute_util);
        cJSON_AddNumberToObject(m, "stall_us", us(t->stall_ps));
        /* one chip's energy from the simulator's counts; simchip has chips = 1 */
        rotor_energy_counts sc = rotor_sim_energy_counts(t);
        rotor_energy se;
        rotor_chip one = s->chip;
        one.chips = 1;
        rotor_energy_price(&one, &sc, us(q->simulated_ps) * 1e-6, &se);
        rotor_doc_energy_json(m, per, &sc, &se);
    }
    if (per_op) {
        cJSON *ops = cJSON_AddArrayToObject(o, "ops");
        for (int i = 0; i < s->nops; i++) {
            const rotor_preload_op_result *p = &r->result.ops[i];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", s->ops[i].name);
            cJSON_AddNumberToObject(e, "plan", p->plan);
            cJSON_AddNumberToObject(e, "chunks", (double)p->chunks);
            cJSON_AddNumberToObject(e, "preload_number", p->preload_number);
            cJSON_AddNumberToObject(e, "preload_position", p->preload_pos);
            cJSON_AddNumberToObject(e, "preload_start_us", us(p->pre_start_ps));
            cJSON_AddNumberToObject(e, "preload_end_us", us(p->pre_end_ps));
            cJSON_AddNumberToObject(e, "execute_start_us", us(p->exe_start_ps));
            cJSON_AddNumberToObject(e, "execute_end_us", us(p->exe_end_ps));
            cJSON_AddNumberToObject(e, "stall_us", us(p->stall_ps));
            cJSON_AddStringToObject(e, "shard", rotor_shard_name(s->ops[i].shard));
            cJSON_AddNumberToObject(e, "reshard_bytes", (double)s->ops[i].reshard_bytes);
            cJSON_AddNumberToObject(e, "reshard_us", us(s->ops[i].reshard_ps));
            if (x->simulated) {
                const rotor_schedule_replay_op *q = &x->sim.ops[i];
                cJSON_AddNumberToObject(e, "sim_preload_start_us", us(q->pre_start_ps));
                cJSON_AddNumberToObject(e, "sim_preload_end_us", us(q->pre_end_ps));
                cJSON_AddNumberToObject(e, "sim_execute_start_us", us(q->exe_start_ps));
                cJSON_AddNumberToObject(e, "sim_execute_end_us", us(q->exe_end_ps));
            }
            cJSON_AddItemToArray(ops, e);
        }
    }
    return o;
}

rotor_status rotor_doc_schedule(const rotor_graph *g, const rotor_schedule *s, const rotor_doc_schedule_run *runs,
                                int nruns, const rotor_doc_schedule_run *ideal, bool per_op, const rotor_chip *simchip,
                                const char *per, char **out, rotor_error *err) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "rotor-schedule");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "model", g->name);
    cJSON_AddStringToObject(root, "chip", s->chip.name);
    cJSON_AddNumberToObject(root, "tensor_parallel", (double)s->tensor_parallel);
    cJSON_AddNumberToObject(root, "cores_per_chip", (double)s->chip.cores_per_chip);
    cJSON_AddNumberToObject(root, "hbm_gbps_per_chip", s->chip.hbm_gbps);
    char topo[64];
    cJSON_AddStringToObject(root, "topology", rotor_chip_topology_text(&s->chip, topo, sizeof topo));
    if (s->hbm_intake > 0) cJSON_AddNumberToObject(root, "hbm_intake_gbps_per_chip", s->hbm_intake / 1e9);
    cJSON_AddNumberToObject(root, "operators", s->nops);
    cJSON_AddNumberToObject(root, "shapes_searched", s->searches);
    cJSON_AddStringToObject(root, "solver", rotor_solver_name(s->solver));
    cJSON_AddNumberToObject(root, "hbm_bytes_per_chip", (double)s->hbm_bytes);
    cJSON_AddNumberToObject(root, "prefill_kv_bytes_per_chip_not_priced", (double)s->prefill_kv_bytes);
    cJSON_AddNumberToObject(root, "train_write_bytes_per_chip_not_priced", (double)s->train_write_bytes);
    cJSON_AddNumberToObject(root, "reshard_us_per_step", (double)s->reshard_ps * 1e-6);
    cJSON_AddNumberToObject(root, "hbm_held_bytes_per_chip", (double)s->hbm_held); /* within the chip's hbm_bytes */
    /* operators priced at the chip's element size, not their own */
    cJSON_AddNumberToObject(root, "quantized_ops_priced_as_the_chip", s->quantized_ops);
    cJSON_AddNumberToObject(root, "flops", s->model_flops);
    char caveat[320];
    if (rotor_schedule_latency_caveat(&s->chip, caveat, sizeof caveat)) cJSON_AddStringToObject(root, "caveat", caveat);
    if (simchip) {
        cJSON_AddStringToObject(root, "simulated_topology", rotor_chip_topology_text(simchip, topo, sizeof topo));
    }
    cJSON *d = cJSON_AddArrayToObject(root, "designs");
    for (int i = 0; i < nruns; i++) cJSON_AddItemToArray(d, json_run(s, &runs[i], ideal, per_op, per));
    return rotor_doc_print(root, out, err);
}

rotor_status rotor_doc_designs(const char *list, rotor_preload_design *out, int *n, rotor_error *err) {
    *n = 0;
    if (!list || !strcmp(list, "all")) {
        for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++) out[(*n)++] = (rotor_preload_design)d;
        return ROTOR_OK;
    }
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        char name[32];
        if (len == 0 || len >= sizeof name)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "--design: expected names from basic, static, dyn, full, ideal, roofline, got '%s'", list);
        memcpy(name, p, len);
        name[len] = '\0';
        rotor_preload_design d;
        rotor_status st = rotor_preload_design_parse(name, &d, err);
        if (st) {
            rotor_error_prefix(err, "--design");
            return st;
        }
        for (int i = 0; i < *n; i++)
            if (out[i] == d) return rotor_fail(err, ROTOR_ERR_INPUT, "--design: '%s' listed twice", name);
        out[(*n)++] = d;
        p += len;
        if (!*p) break;
        p++;
    }
    return ROTOR_OK;
}
