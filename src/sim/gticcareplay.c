/* gticcareplay.c — GraphTurbo's instances on an ICCA chip's core groups,
 * replayed (issue 42 items 7 and 8; include/rotor/sim/gticcareplay.h has
 * the decisions, docs/graphturbo.md "On an ICCA chip" the measurements).
 *
 * Three kinds of replay, all rotor_replay's, so every move is the
 * simulator's (the exchange's packet schedule for a hand-off, permutation
 * rounds for a gather) and no cost formula enters:
 *  - T10's program as compiled (T10 alone, and each entry operator's
 *    hand-off);
 *  - the same program with the lost hand-offs turned into the gathers
 *    gticca charged (the operators after a sub-graph);
 *  - each sub-graph's instance program on its group chip.
 * Operators run bulk-synchronously (a barrier after each, replay.c), so a
 * schedule's time is the sum of its operators': the chosen plan is the
 * second replay's total without the grouped operators, plus each
 * sub-graph's instance and entry. */
#include "rotor/sim/gticcareplay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/gticca.h"
#include "rotor/compile/segment.h"
#include "rotor/sim/replay.h"

void rotor_gticca_replay_result_free(rotor_gticca_replay_result *r) {
    if (!r) return;
    free(r->sg);
    memset(r, 0, sizeof *r);
}

/* T10's program with the lost hand-offs of the chosen plan gathered
 * instead: an operator gticca charged a gather (lost_bytes > 0) takes no
 * hand-off from a grouped operator, and receives lost_bytes in lost_rounds.
 * The copy shares p's operators' pointers: free only its ops array. */
static rotor_status program_lost(const rotor_program *p, const rotor_gticca_result *gt, const bool *gone,
                                 rotor_program *q, rotor_error *err) {
    *q = *p;
    q->ops = malloc((size_t)p->nops * sizeof *q->ops);
    if (!q->ops) return rotor_nomem(err);
    memcpy(q->ops, p->ops, (size_t)p->nops * sizeof *q->ops);
    for (int o = 0; o < p->nops && o < gt->nops; o++) {
        rotor_program_op *x = &q->ops[o];
        if (gone[o] || x->vendor || gt->lost_bytes[o] <= 0) continue;
        for (int t = 1; t < x->expr.ntensors; t++)
            if (x->handoff[t] > 0 && gone[x->handoff[t] - 1]) {
                x->handoff[t] = 0;
                memset(&x->handoff_view[t], 0, sizeof x->handoff_view[t]);
            }
        x->setup_bytes = gt->lost_bytes[o];
        x->setup_rounds = gt->lost_rounds[o];
    }
    return ROTOR_OK;
}

/* One instance of sub-graph s compiled as gticca compiles it (T10 on the
 * group chip, the instance graph) and replayed there, into *rr. */
static rotor_status replay_instance(const rotor_graph *g, const rotor_chip *chip, const rotor_gticca_sg *s,
                                    const rotor_compile_options *opt, rotor_replay_result *rr, double *model_s,
                                    rotor_error *err) {
    rotor_graph ig;
    rotor_chip gc;
    rotor_program ip;
    rotor_status st = rotor_gticca_instance_program(g, chip, s, opt, &ig, &gc, &ip, model_s, err);
    if (!st) st = rotor_replay(&ip, &gc, NULL, rr, NULL, err);
    rotor_program_free(&ip);
    rotor_graph_free(&ig);
    if (st) rotor_error_prefix(err, "gticca replay: an instance");
    return st;
}

/* The boundary into s: every operator of it that reads an activation from
 * before it pays, beyond the instance's own setup, up to T10's hand-off
 * into it (gticca.c entry_cost), here as the replays timed both. */
static double entry_replayed(const rotor_graph *g, const rotor_gticca_sg *s, const rotor_replay_result *t10,
                             const rotor_replay_result *inst) {
    double add = 0;
    for (int o = s->first; o <= s->last; o++) {
        bool entry = false;
        const rotor_op *op = &g->ops[o];
        for (int t = 1; t < op->expr.ntensors; t++) {
            int v = op->tensor_value[t], p = v < 0 ? -1 : g->values[v].producer;
            if (v >= 0 && g->values[v].role == ROTOR_ROLE_ACTIVATION && (p < s->first || p > s->last)) entry = true;
        }
        int k = o - s->first;
        if (entry && k < inst->nops)
            add += fmax(0, t10->ops[o].simulated_setup_s - inst->ops[k].simulated_setup_s);
    }
    return add;
}

/* The sub-graph whose operators gave operator o the hand-off it lost
 * (the first such), or -1. */
static int lost_to(const rotor_program *p, const rotor_gticca_replay_sg *sg, int nsg, int o) {
    const rotor_program_op *x = &p->ops[o];
    for (int t = 1; !x->vendor && t < x->expr.ntensors; t++)
        for (int k = 0; k < nsg; k++)
            if (x->handoff[t] - 1 >= sg[k].first && x->handoff[t] - 1 <= sg[k].last) return k;
    return -1;
}

/* The sub-graphs: each instance replayed and its entry; the lost
 * hand-offs after it from the two program replays. */
static rotor_status replay_subgraphs(const rotor_graph *g, const rotor_chip *chip, const rotor_program *prog,
                                     const rotor_gticca_result *gt, const rotor_compile_options *opt,
                                     const rotor_replay_result *plain, const rotor_replay_result *lost,
                                     rotor_gticca_replay_result *out, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    for (int k = 0; k < gt->nsg && !st; k++) {
        const rotor_gticca_sg *s = &gt->sg[k];
        rotor_gticca_replay_sg *x = &out->sg[k];
        rotor_replay_result ir = {0};
        double inst_model = 0;
        st = replay_instance(g, chip, s, opt, &ir, &inst_model, err);
        if (st) break;
        *x = (rotor_gticca_replay_sg){.first = s->first, .last = s->last, .instances = s->instances,
                                      .group_cores = s->group_cores, .model_s = s->grouped_s + s->penalty_s,
                                      .model_instance_s = inst_model, .model_entry_s = s->grouped_s - inst_model,
                                      .model_lost_s = s->penalty_s, .simulated_instance_s = ir.simulated_s,
                                      .simulated_entry_s = entry_replayed(g, s, plain, &ir)};
        out->tasks += ir.stats.tasks;
        rotor_replay_result_free(&ir);
    }
    for (int o = 0; o < prog->nops && !st && gt->nops; o++) {
        if (gt->lost_bytes[o] <= 0) continue;
        int k = lost_to(prog, out->sg, gt->nsg, o);
        if (k >= 0) out->sg[k].simulated_lost_s += lost->ops[o].simulated_s - plain->ops[o].simulated_s;
    }
    for (int k = 0; k < gt->nsg; k++)
        out->sg[k].simulated_s =
            out->sg[k].simulated_instance_s + out->sg[k].simulated_entry_s + out->sg[k].simulated_lost_s;
    return st;
}

rotor_status rotor_gticca_replay(const rotor_graph *g, const rotor_chip *chip, const rotor_program *prog,
                                 const rotor_compile_result *r, const rotor_compile_options *opt,
                                 rotor_gticca_replay_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    const rotor_gticca_result *gt = &r->gticca;
    if (!gt->done) return rotor_fail(err, ROTOR_ERR_INPUT, "gticca replay: the compile ran without --group graphturbo");
    if (prog->nops != g->nops || r->nops != g->nops)
        return rotor_fail(err, ROTOR_ERR_INPUT, "gticca replay: the program has %d operators, the graph %d",
                          prog->nops, g->nops);
    bool *gone = calloc((size_t)g->nops + 1, sizeof *gone);
    out->sg = gt->nsg ? calloc((size_t)gt->nsg, sizeof *out->sg) : NULL;
    if (!gone || (gt->nsg && !out->sg)) {
        free(gone);
        rotor_gticca_replay_result_free(out);
        return rotor_nomem(err);
    }
    out->nsg = gt->nsg;
    for (int k = 0; k < gt->nsg; k++)
        for (int o = gt->sg[k].first; o <= gt->sg[k].last; o++) gone[o] = true;
    rotor_replay_result plain = {0}, lost = {0};
    rotor_program q = {0};
    rotor_status st = rotor_replay(prog, chip, NULL, &plain, NULL, err);
    out->t10_model_s = plain.predicted_s, out->t10_simulated_s = plain.simulated_s;
    out->model_s = gt->total_s, out->simulated_s = plain.simulated_s;
    out->tasks = plain.stats.tasks;
    if (!st && gt->nsg) { /* a plan with no instances is the plain replay, exactly */
        st = program_lost(prog, gt, gone, &q, err);
        if (!st) st = rotor_replay(&q, chip, NULL, &lost, NULL, err);
        if (!st) st = replay_subgraphs(g, chip, prog, gt, opt, &plain, &lost, out, err);
        if (!st) {
            out->tasks += lost.stats.tasks;
            out->simulated_s = lost.simulated_s;
            for (int o = 0; o < g->nops; o++)
                if (gone[o]) out->simulated_s -= lost.ops[o].simulated_s;
            for (int k = 0; k < out->nsg; k++)
                out->simulated_s += out->sg[k].simulated_instance_s + out->sg[k].simulated_entry_s;
        }
    }
    free(q.ops);
    rotor_replay_result_free(&plain);
    rotor_replay_result_free(&lost);
    free(gone);
    if (st) rotor_gticca_replay_result_free(out);
    return st;
}
