/* schedreplay.c — an Elk HBM schedule replayed event by event on the
 * simulator (Elk §4.5 program order, §5 simulation framework): per operator,
 * in program order, the preloads issued before it (HBM streams of multicast
 * pieces, SRAM pauses; sim/replay.c streams them), then its execution
 * (distribution from peers, the tile replay of its chosen T10 plan, the
 * inter-chip all-reduce, a barrier).  Every decision is in docs/simulator.md,
 * "Replaying an HBM schedule". */
#include "rotor/hbm/schedreplay.h"
#include "rotor/op/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replayer.h"

/* The preload of operator j (its plan and preload state from the report). */
static rotor_status emit_preload(preload_replayer *sr, const rotor_schedule *s, const rotor_schedule_report *rep, int j,
                                 int64_t after, rotor_error *err) {
    const rotor_schedule_op *so = &s->ops[j];
    const rotor_preload_op_result *x = &rep->result.ops[j];
    int nst = 0;
    const rotor_preload_state *ps = rotor_preload_model_states(s->model, j, x->plan, &nst);
    if (!ps || x->state < 0 || x->state >= nst)
        return rotor_fail(err, ROTOR_ERR_INPUT, "plan %d, preload state %d: not in the schedule's model", x->plan,
                          x->state);
    int64_t P = so->plans[x->plan].share, c = ps[x->state].chunks;
    int64_t m = c > 0 && P % c == 0 ? P / c : 1;
    sr->pre_ids[j][0] = rotor_sim_task_count(sr->r.sim);
    rotor_status st = replay_preload_groups(sr, so->hbm_bytes, m, s->nops + j, after, &sr->pre_join[j], err);
    sr->pre_ids[j][1] = rotor_sim_task_count(sr->r.sim);
    return st;
}

/* The execution of operator i: distribution, the tile replay of its chosen
 * plan (vendor: time_ps on every core), the inter-chip all-reduce, a barrier. */
static rotor_status emit_execute(preload_replayer *sr, const rotor_schedule *s, const rotor_schedule_report *rep, int i,
                                 rotor_error *err) {
    const rotor_schedule_op *so = &s->ops[i];
    const rotor_preload_op_result *x = &rep->result.ops[i];
    replayer *r = &sr->r;
    int64_t n = sr->n;
    if (sr->pre_join[i] < 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "its preload (position %d) is not issued before it executes",
                          x->preload_pos);
    sr->deps.n = 0;
    rotor_status st = replay_dep_add(sr, sr->prev_barrier, err);
    if (!st) st = replay_dep_add(sr, sr->pre_join[i], err);
    int64_t start = st ? -1 : replay_zero_join(sr, i, &st, err);
    sr->exe_ids[i][0] = start;
    if (st) return st;
    r->barrier = start;
    for (int64_t c = 0; c < n; c++) r->last[c] = -1;
    replay_inbox_clear(r, n);
    /* distribution: the c - 1 chunks a core lacks, from the cores m, 2m, ...
     * ahead (each round a permutation, as replay_setup) */
    int nst = 0;
    const rotor_preload_state *ps = rotor_preload_model_states(s->model, i, x->plan, &nst);
    if (!ps || x->state < 0 || x->state >= nst)
        return rotor_fail(err, ROTOR_ERR_INPUT, "plan %d, preload state %d: not in the schedule's model", x->plan,
                          x->state);
    int64_t c = ps[x->state].chunks, P = so->plans[x->plan].share, dist = ps[x->state].dist_bytes;
    int64_t m = c > 0 && P % c == 0 ? P / c : 1, rounds = c - 1;
    for (int64_t k = 1; k <= rounds && dist > 0 && !st; k++)
        for (int64_t core = 0; core < n && !st; core++) {
            int64_t piece = rotor_gather_piece(dist, rounds, k), src = (core + k * m) % n;
            if (src == core || piece == 0) continue;
            int64_t deps[1] = {r->inbox[core].n ? r->inbox[core].v[r->inbox[core].n - 1] : start}, id;
            rotor_sim_transfer t = {.src = src, .dst = core, .bytes = piece, .category = ROTOR_SIM_SETUP,
                                    .op = i, .deps = deps, .ndeps = 1};
            st = replay_add_transfer(r, &t, &id, err);
            if (!st) st = replay_idlist_push(&r->inbox[core], id, err);
        }
    if (st) return st;
    if (so->vendor) {
        /* energy (docs/energy.md): the shard's FLOPs on the vector units, split over the cores */
        double fl = so->flops > 0 && so->flops < 9e18 ? so->flops : 0;
        int64_t total = llround(fl), each = total / n, rem = total % n;
        for (int64_t core = 0; core < n && !st; core++) {
            /* its plan's time holds its reshards, which follow as the delay below */
            rotor_sim_compute v = {.core = core, .duration_ps = so->plans[0].time_ps - so->interchip_ps,
                                   .category = ROTOR_SIM_COMPUTE,
                                   .work = {.vector_flops = each + (core < rem)},
                                   .op = i, .deps = r->inbox[core].n ? r->inbox[core].v : &start,
                                   .ndeps = r->inbox[core].n ? (int)r->inbox[core].n : 1};
            st = rotor_sim_add_compute(r->sim, &v, &r->last[core], err);
        }
        replay_inbox_clear(r, n);
    } else {
        if (x->plan < 0 || x->plan >= so->nplans || !so->cands)
            return rotor_fail(err, ROTOR_ERR_INPUT, "plan %d: the operator has %d plans", x->plan, so->nplans);
        const rotor_candidate *cand = &so->cands[x->plan];
        int64_t ids[2];
        /* on a mesh the plan lies as its price assumed (op/meshmap.h) */
        st = replay_lay_out(r, &so->expr, &cand->plan, &cand->info, &s->chip, err);
        if (!st) st = replay_tiles(r, i, &so->expr, &cand->plan, &cand->info, &s->chip, ids, err);
        replay_lay_out_end(r);
        /* cores outside the plan (no task of its own): their distribution
         * still ends before the barrier */
        for (int64_t core = 0; core < n && !st; core++)
            if (r->last[core] < 0 && r->inbox[core].n) r->last[core] = r->inbox[core].v[r->inbox[core].n - 1];
        replay_inbox_clear(r, n);
    }
    if (!st && so->interchip_ps > 0) {
        /* the all-reduce and reshards across chips: a delay on every core once all are done */
        sr->deps.n = 0;
        for (int64_t core = 0; core < n && !st; core++) st = replay_dep_add(sr, r->last[core], err);
        int64_t all = st ? -1 : replay_zero_join(sr, i, &st, err);
        for (int64_t core = 0; core < n && !st; core++) {
            rotor_sim_compute a = {.core = core, .duration_ps = so->interchip_ps, .category = ROTOR_SIM_COMM,
                                   .op = i, .deps = &all, .ndeps = 1};
            st = rotor_sim_add_compute(r->sim, &a, &r->last[core], err);
        }
    }
    if (!st) st = replay_add_barrier(r, i, n, err);
    if (!st) sr->prev_barrier = sr->exe_ids[i][1] = r->barrier;
    sr->exe_ids[i][2] = rotor_sim_task_count(r->sim);
    return st;
}

void rotor_schedule_replay_result_free(rotor_schedule_replay_result *r) {
    if (!r) return;
    free(r->ops);
    rotor_sim_free(r->sim);
    memset(r, 0, sizeof *r);
}

static rotor_status sched_chip(const rotor_schedule *s, const rotor_chip *sim_chip, rotor_chip *out,
                               rotor_error *err) {
    *out = sim_chip ? *sim_chip : s->chip;
    rotor_status st = rotor_chip_validate(out, err);
    if (st) return st;
    if (rotor_chip_cores(out) != s->chip.cores_per_chip)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip %s has %lld cores; the schedule runs on one chip of %lld",
                          out->name, (long long)rotor_chip_cores(out), (long long)s->chip.cores_per_chip);
    if (!(out->hbm_gbps > 0) || out->hbm_controllers <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip %s has no HBM controllers to preload from", out->name);
    return ROTOR_OK;
}

/* The replay's task ids in emission order: consecutive stretches, each a
 * preload (its last task the join) or an execution. */
typedef struct id_stretch {
    int64_t to; /* one past its last task */
    int op;
    bool pre;
} id_stretch;

/* Reads the timing of tasks done .. up to the first that has not finished
 * (all of them after a whole run) into the operators' results; *done and
 * *at (the stretch of task *done) move on. */
static void harvest(const preload_replayer *sr, const id_stretch *str, int64_t *at, int64_t *done, int64_t end,
                    rotor_schedule_replay_result *out) {
    rotor_sim_timing t;
    for (; *done < end && rotor_sim_task_timing(sr->r.sim, *done, &t, NULL) == ROTOR_OK; ++*done) {
        int64_t id = *done;
        while (str[*at].to <= id) ++*at;
        rotor_schedule_replay_op *o = &out->ops[str[*at].op];
        int i = str[*at].op;
        if (str[*at].pre) {
            int64_t from = sr->pre_ids[i][0], to = sr->pre_ids[i][1];
            if (id + 1 < to) { /* a piece: the first to leave HBM starts the preload */
                if (t.start_ps < o->pre_start_ps) o->pre_start_ps = t.start_ps;
                continue;
            }
            o->pre_end_ps = t.end_ps; /* the join */
            if (to - from == 1) o->pre_start_ps = t.ready_ps; /* no bytes: when it was due */
        } else if (id == sr->exe_ids[i][0]) {
            o->exe_start_ps = t.start_ps;
        } else if (id == sr->exe_ids[i][1]) {
            o->exe_end_ps = t.end_ps;
        }
    }
}

/* Without keep_sim the replay streams (docs/simulator.md, "Streaming"): every
 * task emitted for operator i, its preloads' and its execution's, waits for
 * the barrier of operator i - 1 or for a task emitted with it, so the run
 * can go to that barrier before they are added; finished tasks are then
 * read and retired.  Preloads still in flight carry over. */
int64_t rotor_schedule_replay_task_estimate(const rotor_schedule *s) {
    /* every piece of REPLAY_PIECE_BYTES a chip loads from HBM is a task; the
     * executions add fewer (the preloads dominate every LLM schedule) */
    return s->hbm_bytes / REPLAY_PIECE_BYTES;
}

rotor_status rotor_schedule_replay(const rotor_schedule *s, const rotor_schedule_report *rep,
                                   const rotor_chip *sim_chip, bool keep_sim, const rotor_replay_options *opt,
                                   rotor_schedule_replay_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    rotor_replay_options none = {0};
    if (!opt) opt = &none;
    const rotor_preload_result *res = &rep->result;
    if (res->nops != s->nops || !res->ops || !res->order)
        return rotor_fail(err, ROTOR_ERR_INPUT, "the report has %d operators; the schedule has %d", res->nops,
                          s->nops);
    rotor_chip chip;
    rotor_status st = sched_chip(s, sim_chip, &chip, err);
    if (st) return st;
    int n_ops = s->nops;
    preload_replayer sr;
    if ((st = replay_preload_init(&sr, &chip, s->pchip.sram_blocking, n_ops, err))) return st;
    out->ops = calloc((size_t)n_ops, sizeof *out->ops);
    id_stretch *str = malloc(sizeof *str * (size_t)(2 * n_ops + 1));
    if (!out->ops || !str) st = rotor_nomem(err);
    int nstr = 0;
    int64_t at = 0, done = 0, retired = 0;
    char name[ROTOR_SCHEDULE_NAME_MAX + 16];
    for (int i = 0; !st && i < n_ops; i++) {
        snprintf(name, sizeof name, "preload %s", s->ops[i].name);
        st = rotor_sim_set_op_name(sr.r.sim, i, s->ops[i].name, err);
        if (!st) st = rotor_sim_set_op_name(sr.r.sim, n_ops + i, name, err);
        out->hbm_bytes += s->ops[i].hbm_bytes;
        out->ops[i].pre_start_ps = INT64_MAX;
    }
    replay_ticker ticker = {0};
    if (!st) st = replay_run_begin(sr.r.sim, !keep_sim, opt, n_ops, &ticker, err);
    /* program order (Elk §4.5): the preloads issued before execute(i), then execute(i) */
    int k = 0;
    for (int i = 0; !st && i < n_ops; i++) {
        ticker.done = i;
        int q = i + 1 + res->ops[i].preload_number;
        if (q > n_ops || q < k) {
            st = rotor_fail(err, ROTOR_ERR_INPUT,
                            "schedule replay: operator %d '%s': preload_number %d issues %d preloads before it "
                            "executes, expected %d..%d",
                            i, s->ops[i].name, res->ops[i].preload_number, q, k, n_ops);
            break;
        }
        if (!keep_sim && sr.prev_barrier >= 0) {
            st = rotor_sim_advance(sr.r.sim, sr.prev_barrier, err);
            if (!st) harvest(&sr, str, &at, &done, rotor_sim_task_count(sr.r.sim), out);
            /* retiring moves the kept tasks down: only once as many are
             * finished, so each task moves O(1) times.  The barrier stays:
             * the tasks about to be added wait for it. */
            int64_t below = done < sr.prev_barrier ? done : sr.prev_barrier;
            if (!st && below - retired >= rotor_sim_task_count(sr.r.sim) - below) {
                st = rotor_sim_retire(sr.r.sim, below, err);
                retired = below;
            }
            if (st) break;
        }
        for (; k < q && !st; k++) {
            int j = res->order[k];
            if (j < 0 || j >= n_ops || sr.pre_join[j] >= 0) {
                st = rotor_fail(err, ROTOR_ERR_INPUT, "schedule replay: preload order position %d: %d is not a new operator",
                                k, j);
                break;
            }
            st = emit_preload(&sr, s, rep, j, sr.prev_barrier, err);
            str[nstr++] = (id_stretch){rotor_sim_task_count(sr.r.sim), j, true};
            if (st) {
                char prefix[160];
                snprintf(prefix, sizeof prefix, "schedule replay: preload of operator %d '%s'", j, s->ops[j].name);
                rotor_error_prefix(err, prefix);
            }
        }
        if (st) break;
        st = emit_execute(&sr, s, rep, i, err);
        str[nstr++] = (id_stretch){rotor_sim_task_count(sr.r.sim), i, false};
        if (st) {
            char prefix[160];
            snprintf(prefix, sizeof prefix, "schedule replay: operator %d '%s'", i, s->ops[i].name);
            rotor_error_prefix(err, prefix);
        }
    }
    if (!st) st = replay_run_end(sr.r.sim, !keep_sim, opt, &out->stats, &out->trace, err);
    else rotor_sim_set_progress(sr.r.sim, NULL, NULL);
    if (!st) {
        harvest(&sr, str, &at, &done, rotor_sim_task_count(sr.r.sim), out);
        out->design = res->design;
        out->nops = n_ops;
        out->simulated_ps = out->stats.makespan_ps;
        out->analytical_ps = res->latency_ps;
        out->error = res->latency_ps > 0 ? (double)out->simulated_ps / (double)res->latency_ps - 1 : 0;
        out->piece_bytes = REPLAY_PIECE_BYTES;
        for (int i = 0; i < n_ops; i++)
            out->ops[i].tasks = (sr.pre_ids[i][1] - sr.pre_ids[i][0]) + (sr.exe_ids[i][2] - sr.exe_ids[i][0]);
    }
    free(str);
    if (st) {
        replay_preload_free(&sr, false);
        free(out->ops);
        memset(out, 0, sizeof *out);
        return st;
    }
    if (keep_sim) out->sim = sr.r.sim;
    replay_preload_free(&sr, keep_sim);
    return ROTOR_OK;
}
