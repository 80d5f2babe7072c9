/* sim.c — the discrete-event engine of the chip simulator (Elk §5
 * "Simulation framework"): the task graph, the event queue and the run.
 *
 * Decisions (docs/simulator.md repeats them, with the reasons):
 *  - Time is int64 picoseconds; every time is at most SIM_TIME_MAX (2^50 ps).
 *  - Events are taken in (time, key) order with key = (kind, task id): at
 *    one instant finishes come first, then starts, then readies, each in
 *    task-id order.  The order never depends on when an event was pushed,
 *    so a run is a pure function of the graph.  The queue (simqueue.h) keeps
 *    the current instant's events apart from the later ones.
 *  - A task lives through three events.  READY (its last dependency has
 *    finished): it claims its core pipeline, or every resource on its route,
 *    from the moment all of them are free; resources serve claims in the
 *    order they come, which is (ready time, task id), so each core and link
 *    is a FIFO (Elk §5: "each core/link maintains its event queue to execute
 *    its events sequentially"; Elk §2.1: the exchange "sequentially serves
 *    each data transfer at full bandwidth").  START and FINISH keep the
 *    running and waiting counts that the time breakdown integrates, and
 *    FINISH releases the dependants.
 *  - The inner loop does no allocation: the queue holds at most one event
 *    per task, and the successor lists are built once per run.  It does
 *    prefetch: a task's READY fetches its successors' records, and a task
 *    released fetches its successor list, so the misses of a large graph
 *    overlap with the work between them (issue 23).  A task that
 *    starts the instant it is ready takes its START inline (it would be the
 *    next START anyway; it only counts and schedules the finish).
 *  - A zero-time compute task is a synchronisation point: it does not queue
 *    for its core.
 *  - A multicast is one task on the deduplicated union of its receivers'
 *    routes (bytes counted once); with pause_receivers it also books each
 *    receiving core, FIFO, when it starts (SRAM blocking, Elk footnote 2). */
#include "rotor/sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simint.h"

#define SIM_MAX_OP (1 << 24)
#define SIM_MAX_BYTES ((int64_t)1 << 53) /* exact as a double */

const char *rotor_sim_category_name(rotor_sim_category c) {
    static const char *const names[ROTOR_SIM_NCATS] = {"compute", "communication", "setup", "hbm"};
    return (unsigned)c < ROTOR_SIM_NCATS ? names[c] : "unknown";
}

/* ---- creation -------------------------------------------------------------- */

rotor_status rotor_sim_create(const rotor_chip *chip, rotor_sim **out, rotor_error *err) {
    *out = NULL;
    rotor_status st = rotor_chip_validate(chip, err);
    if (st != ROTOR_OK) {
        rotor_error_prefix(err, "sim");
        return st;
    }
    int64_t cores = rotor_chip_cores(chip);
    int64_t ctrl = chip->hbm_gbps > 0 ? chip->hbm_controllers : 0;
    if (cores > INT32_MAX / 8 || chip->chips * ctrl > INT32_MAX / 8)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: %lld cores are more than the simulator's int32 node ids hold",
                          (long long)cores);
    rotor_sim *s = calloc(1, sizeof *s);
    if (!s) return rotor_nomem(err);
    s->chip = *chip;
    s->cores = cores;
    s->cpc = chip->cores_per_chip;
    s->ctrl_per_chip = ctrl;
    s->nodes = cores + chip->chips * ctrl;
    s->latency_ps = llround(chip->link_latency_ns * 1000.0); /* <= 1e12 (chip.c's range) */
    s->max_op = -1;
    s->core_free = calloc((size_t)cores, sizeof *s->core_free);
    s->core_busy = calloc((size_t)cores, sizeof *s->core_busy);
    st = s->core_free && s->core_busy ? sim_net_init(s, err) : rotor_nomem(err);
    if (st != ROTOR_OK) {
        rotor_sim_free(s);
        return st;
    }
    *out = s;
    return ROTOR_OK;
}

void rotor_sim_free(rotor_sim *s) {
    if (!s) return;
    sim_tracer_free(s->tracer);
    free(s->core_free);
    free(s->node_chip);
    free(s->amount);
    free(s->core_busy);
    free(s->succ);
    free(s->span);
    sim_queue_free(&s->run.q);
    free(s->res);
    free(s->res_free);
    free(s->res_busy);
    free(s->lanes);
    free(s->scratch);
    free(s->scratch_at);
    free(s->tasks);
    free(s->edges);
    free(s->mcast);
    free(s->mres);
    free(s->mat);
    free(s->mdst);
    free(s->mark);
    for (int64_t i = 0; i < s->nop_names; i++) free(s->op_names[i]);
    free(s->op_names);
    free(s);
}

int64_t rotor_sim_cores(const rotor_sim *s) { return s->cores; }

void rotor_sim_set_progress(rotor_sim *s, rotor_sim_progress_fn fn, void *ctx) {
    s->progress = fn;
    s->progress_ctx = ctx;
}
int64_t rotor_sim_nodes(const rotor_sim *s) { return s->nodes; }
int64_t rotor_sim_task_count(const rotor_sim *s) { return s->ntasks; }

int64_t rotor_sim_hbm_node(const rotor_sim *s, int64_t chip, int64_t ctrl) {
    if (chip < 0 || chip >= s->chip.chips || ctrl < 0 || ctrl >= s->ctrl_per_chip) return -1;
    return s->cores + chip * s->ctrl_per_chip + ctrl;
}

int64_t rotor_sim_hbm_lanes(const rotor_sim *s) { return s->res_hbm0 >= 0 ? s->res[s->res_hbm0].nlanes : 0; }

/* ---- the task graph ------------------------------------------------------------ */

/* Grows *p (n elements of size sz, capacity *cap) to hold n + more. */
static bool grow(void **p, int64_t *cap, int64_t n, int64_t more, size_t sz) {
    if (n + more <= *cap) return true;
    int64_t c = *cap ? *cap : 64;
    while (c < n + more) c *= 2;
    void *q = realloc(*p, (size_t)c * sz);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

/* Whether a task passes the checks every task shares (check_common says
 * why not).  Inline: a replay adds hundreds of millions of tasks, and the
 * message is needed only for a task that fails. */
static inline bool common_ok(const rotor_sim *s, rotor_sim_category cat, int op, const int64_t *deps, int ndeps) {
    if ((unsigned)cat >= ROTOR_SIM_NCATS || op < -1 || op >= SIM_MAX_OP || ndeps < 0 || (ndeps > 0 && !deps) ||
        s->ntasks >= INT32_MAX - 1)
        return false;
    for (int i = 0; i < ndeps; i++)
        if ((uint64_t)deps[i] >= (uint64_t)s->ntasks) return false;
    return true;
}

/* The checks every task shares. */
static rotor_status __attribute__((noinline, cold)) check_common(const rotor_sim *s, rotor_sim_category cat, int op,
                                                                 const int64_t *deps, int ndeps, rotor_error *err) {
    if ((unsigned)cat >= ROTOR_SIM_NCATS)
        return rotor_fail(err, ROTOR_ERR_INPUT, "category: expected 0..%d, got %d", ROTOR_SIM_NCATS - 1,
                          (int)cat);
    if (op < -1 || op >= SIM_MAX_OP)
        return rotor_fail(err, ROTOR_ERR_INPUT, "op: expected -1..%d, got %d", SIM_MAX_OP - 1, op);
    if (ndeps < 0 || (ndeps > 0 && !deps))
        return rotor_fail(err, ROTOR_ERR_INPUT, "deps: %d dependencies %s", ndeps,
                          ndeps < 0 ? "(negative count)" : "but no array");
    for (int i = 0; i < ndeps; i++) {
        if (deps[i] >= 0 && deps[i] < s->ntasks) continue;
        if (s->ntasks == 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "deps[%d]: task %lld does not exist (no tasks yet)", i,
                              (long long)deps[i]);
        return rotor_fail(err, ROTOR_ERR_INPUT, "deps[%d]: task %lld does not exist (tasks so far: 0..%lld)",
                          i, (long long)deps[i], (long long)s->ntasks - 1);
    }
    if (s->ntasks >= INT32_MAX - 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "more than %d tasks", INT32_MAX - 2);
    return ROTOR_OK;
}

/* The same for an array whose elements are one cache line each: it stays
 * aligned to 64 bytes, so a record never straddles two lines (glibc's
 * realloc aligns to 16). */
static bool grow_lines(void **p, int64_t *cap, int64_t n, int64_t more, size_t sz) {
    if (n + more <= *cap) return true;
    int64_t c = *cap ? *cap : 64;
    while (c < n + more) c *= 2;
    void *q = aligned_alloc(64, (size_t)c * sz);
    if (!q) return false;
    if (n > 0) memcpy(q, *p, (size_t)n * sz);
    free(*p);
    *p = q;
    *cap = c;
    return true;
}

/* Room for one more task and for operator op's span (and, streaming, for
 * its event).  Out of line: append asks it only when task_room says no. */
static __attribute__((noinline)) bool grow_task(rotor_sim *s, int32_t op) {
    int64_t n = s->ntasks - s->base;
    if (!grow_lines((void **)&s->tasks, &s->task_cap, n, 1, sizeof *s->tasks) ||
        !grow((void **)&s->amount, &s->amount_cap, n, 1, sizeof *s->amount) ||
        (s->streaming && !sim_queue_reserve(&s->run.q, n + 1)))
        return false;
    int64_t had = s->span_cap;
    if (!grow((void **)&s->span, &s->span_cap, 0, (int64_t)op + 1, sizeof *s->span)) return false;
    for (int64_t i = had; i < s->span_cap; i++) s->span[i] = (sim_span){-1, -1};
    /* tasks kept below which no array needs to grow */
    s->task_room = s->task_cap < s->amount_cap ? s->task_cap : s->amount_cap;
    if (s->streaming && s->run.q.cap < s->task_room) s->task_room = s->run.q.cap;
    return true;
}

static void ev_push(sim_run *r, int64_t t, int kind, int64_t id);
static inline void acc(sim_run *r, int64_t *sum, int64_t v);

/* Streaming: where task t (not yet appended, deps checked to exist) joins the
 * run.  A dependency that has not finished will release it; if every one has
 * finished, it is ready when the last did, which must be now: the run has
 * passed every earlier instant, and a task ready then would have changed it.
 * A retired dependency finished at some instant no later than now, so it
 * never decides: another dependency must.  So a streamed task must depend on
 * something the run has not yet left behind (rotor_sim_advance says how far
 * that is).  append checks this as it reads the dependencies; stream_late
 * says why a task is refused. */
static rotor_status __attribute__((noinline, cold)) stream_late(const rotor_sim *s, const int64_t *deps, int ndeps,
                                                                rotor_error *err) {
    int64_t ready = 0, retired = -1;
    for (int i = 0; i < ndeps; i++) {
        if (deps[i] < s->base) {
            retired = deps[i];
            continue;
        }
        int64_t k = deps[i] - s->base;
        if (sim_task_end(&s->tasks[k]) > ready) ready = sim_task_end(&s->tasks[k]);
    }
    if (retired >= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "the stream added it late: it waits only for tasks that finished before %lld ps, where "
                          "the run is (task %lld was retired)",
                          (long long)s->run.now, (long long)retired);
    return rotor_fail(err, ROTOR_ERR_INPUT,
                      "the stream added it late: it was ready at %lld ps and the run is at %lld ps "
                      "(add a task before advancing past its dependencies)",
                      (long long)ready, (long long)s->run.now);
}

/* The statistics a task adds by running, whenever it runs: its bytes or
 * flops, and the transfer count.  Summed as tasks join a run (rotor_sim_run: all of them at the
 * start; a stream: as they are added), so the loop never reads amounts. */
static inline __attribute__((always_inline)) void count_amount(rotor_sim *s, const sim_task *t, int64_t amount) {
    sim_run *r = &s->run;
    rotor_sim_stats *st = &r->st;
    if (t->kind == SIM_KIND_COMPUTE) {
        acc(r, &st->flops, amount);
        return;
    }
    st->transfers++;
    acc(r, &st->bytes, amount);
    if (t->flags & SIM_F_HBM) acc(r, &st->hbm_bytes, amount);
    if (t->flags & SIM_F_INTERCHIP) acc(r, &st->interchip_bytes, amount);
}

/* Dependant `task` of kept task t: in one of t's two slots, else a new edge
 * at the head of t's list (the pool has room: append grew it). */
static inline void link_dependant(rotor_sim *s, sim_task *t, int32_t task) {
    if (t->next[0] < 0) t->next[0] = task;
    else if (t->next[1] < 0) t->next[1] = task;
    else {
        int32_t e = (int32_t)s->nsucc++;
        s->succ[e] = (sim_succ){task, t->head};
        t->head = e;
        s->live_succ++;
    }
}

/* Appends t with its dependencies; id receives its index.  A whole run keeps
 * the edges (it builds its successor lists when it starts); a streamed run
 * links them at once and queues a task whose dependencies are all done. */
static inline __attribute__((always_inline)) rotor_status append(rotor_sim *s, const sim_task *t, int64_t amount,
                                                                  const int64_t *deps, int ndeps,
                           int64_t *id, rotor_error *err) {
    if (s->streaming && s->ran) return rotor_fail(err, ROTOR_ERR_INPUT, "the stream has ended (rotor_sim_stream_end)");
    int64_t k = s->ntasks - s->base;
    /* room already (nearly always): no call */
    if ((k >= s->task_room || t->op >= s->span_cap) && !grow_task(s, t->op)) return rotor_nomem(err);
    if ((s->streaming ? s->nsucc : s->nedges) + ndeps >= INT32_MAX)
        return rotor_fail(err, ROTOR_ERR_INPUT, "more than %d dependencies%s", INT32_MAX - 1,
                          s->streaming ? " in flight (retire finished tasks)" : "");
    int32_t pending = 0;
    if (s->streaming) {
        if (s->nsucc + ndeps > s->succ_cap && !grow((void **)&s->succ, &s->succ_cap, s->nsucc, ndeps, sizeof *s->succ))
            return rotor_nomem(err);
        /* each unfinished dependency will release it: linked as it is read,
         * in one pass.  A task that waits for none and is late is refused
         * below, and then nothing was linked. */
        int64_t ready = 0;
        for (int i = 0; i < ndeps; i++) {
            int64_t d = deps[i] - s->base;
            if (d < 0) continue; /* retired: finished, never the last */
            sim_task *dt = &s->tasks[d];
            if (dt->pending >= 0) {
                link_dependant(s, dt, (int32_t)s->ntasks);
                pending++;
            } else if (sim_task_end(dt) > ready) {
                ready = sim_task_end(dt);
            }
        }
        if (pending == 0 && ready != s->run.now) return stream_late(s, deps, ndeps, err);
    } else {
        if (!grow((void **)&s->edges, &s->edge_cap, s->nedges, ndeps, sizeof *s->edges)) return rotor_nomem(err);
        for (int i = 0; i < ndeps; i++) s->edges[s->nedges++] = (sim_edge){(int32_t)s->ntasks, (int32_t)deps[i]};
        s->ran = false;
    }
    /* written in place, field by field: a struct assignment went through
     * the stack (t is the caller's, inlined: its fields are values here) */
    sim_task *n = &s->tasks[k];
    n->dur = t->dur;
    n->ready = n->start = 0;
    n->a = t->a;
    n->b = t->b;
    n->op = t->op;
    n->mcast = t->mcast;
    n->pending = pending;
    n->next[0] = n->next[1] = n->head = -1;
    n->lane = t->lane;
    n->kind = t->kind;
    n->cat = t->cat;
    n->flags = t->flags;
    s->amount[k] = amount;
    if (s->streaming) {
        count_amount(s, t, amount);
        if (pending == 0) ev_push(&s->run, s->run.now, EV_READY, s->ntasks);
    }
    if (t->op > s->max_op) s->max_op = t->op;
    if (id) *id = s->ntasks;
    s->ntasks++;
    return ROTOR_OK;
}

static rotor_status task_fail(rotor_sim *s, const char *what, rotor_status st, rotor_error *err) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "sim: %s %lld", what, (long long)s->ntasks);
    rotor_error_prefix(err, prefix);
    return st;
}

rotor_status rotor_sim_add_compute(rotor_sim *s, const rotor_sim_compute *c, int64_t *id,
                                   rotor_error *err) {
    rotor_status st = common_ok(s, c->category, c->op, c->deps, c->ndeps)
                          ? ROTOR_OK
                          : check_common(s, c->category, c->op, c->deps, c->ndeps, err);
    if (st == ROTOR_OK && (c->core < 0 || c->core >= s->cores))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "core: node %lld is not a core (cores 0..%lld)",
                        (long long)c->core, (long long)s->cores - 1);
    if (st == ROTOR_OK && (c->duration_ps < 0 || c->duration_ps > SIM_TIME_MAX))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "duration_ps: expected 0..2^50, got %lld",
                        (long long)c->duration_ps);
    if (st == ROTOR_OK && c->flops < 0)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "flops: expected >= 0, got %lld", (long long)c->flops);
    const rotor_sim_work *w = &c->work;
    if (st == ROTOR_OK && (w->matrix_flops < 0 || w->vector_flops < 0 || w->sram_read < 0 || w->sram_write < 0))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "work: expected counts >= 0");
    rotor_energy_counts e = s->energy;
    if (st == ROTOR_OK && !(rotor_add_i64(e.matrix_flops, w->matrix_flops, &e.matrix_flops) &&
                            rotor_add_i64(e.vector_flops, w->vector_flops, &e.vector_flops) &&
                            rotor_add_i64(e.sram_read_bytes, w->sram_read, &e.sram_read_bytes) &&
                            rotor_add_i64(e.sram_write_bytes, w->sram_write, &e.sram_write_bytes)))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "work: the run's energy counts leave int64");
    if (st != ROTOR_OK) return task_fail(s, "compute task", st, err);
    sim_task t = {.dur = c->duration_ps, .a = (int32_t)c->core, .b = -1,
                  .op = c->op, .lane = -1, .kind = SIM_KIND_COMPUTE, .cat = (uint8_t)c->category};
    st = append(s, &t, c->flops, c->deps, c->ndeps, id, err);
    if (st == ROTOR_OK) s->energy = e;
    return st == ROTOR_OK ? st : task_fail(s, "compute task", st, err);
}

/* count_transfer's failure, off its inline path. */
static rotor_status __attribute__((noinline, cold)) energy_overflow(rotor_error *err) {
    return rotor_fail(err, ROTOR_ERR_INPUT, "bytes: the run's energy counts leave int64");
}

/* The energy events of `bytes` from src to one receiver dst over `hops`
 * (docs/energy.md, "Events"): read once from a source core's SRAM (`read`:
 * the first receiver of a multicast), written into a receiving core's SRAM,
 * bytes * on-chip hops.  Inline: asked once per transfer added. */
static inline rotor_status count_transfer(const rotor_sim *s, int64_t src, int64_t dst, int64_t bytes, int64_t hops,
                                          bool read, rotor_energy_counts *e, rotor_error *err) {
    int64_t bh;
    /* on-chip hops: a route counts crossing chips as one more hop (its
     * latency); inter-chip energy prices that crossing */
    if (sim_node_chip(s, src) != sim_node_chip(s, dst)) hops--;
    bool ok = rotor_mul_i64(bytes, hops, &bh) && rotor_add_i64(e->byte_hops, bh, &e->byte_hops);
    if (ok && read && !sim_node_is_hbm(s, src)) ok = rotor_add_i64(e->sram_read_bytes, bytes, &e->sram_read_bytes);
    if (ok && !sim_node_is_hbm(s, dst)) ok = rotor_add_i64(e->sram_write_bytes, bytes, &e->sram_write_bytes);
    return ok ? ROTOR_OK : energy_overflow(err);
}

/* Why transfer x fails the checks rotor_sim_add_transfer makes inline,
 * in their order, with the task's prefix. */
static rotor_status __attribute__((noinline, cold)) transfer_refused(rotor_sim *s, const rotor_sim_transfer *x,
                                                                     rotor_error *err) {
    rotor_status st = check_common(s, x->category, x->op, x->deps, x->ndeps, err);
    if (st == ROTOR_OK) st = sim_net_check(s, x->src, x->dst, err);
    if (st == ROTOR_OK && (x->bytes < 0 || x->bytes > SIM_MAX_BYTES))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "bytes: expected 0..2^53, got %lld", (long long)x->bytes);
    return st == ROTOR_OK ? st : task_fail(s, "transfer", st, err);
}

/* A transfer's duration on an idle network (sim_net_time), remembered: a
 * replay adds millions of transfers of a few sizes, often interleaved (a
 * hand-off's packets and its remainders), so the division and the rounding
 * are done once per size.  Slot by a hash of the size; gbps 0 never matches
 * (rates are positive), so a zeroed table is empty. */
static inline rotor_status transfer_time(rotor_sim *s, int64_t bytes, double gbps, int64_t hops, int64_t *ps,
                                         rotor_error *err) {
    sim_time_memo *m = &s->times[((uint64_t)bytes * 0x9E3779B97F4A7C15u + (uint64_t)hops) >> (64 - SIM_TIME_MEMO_BITS)];
    if (bytes == m->bytes && hops == m->hops && gbps == m->gbps) {
        *ps = m->ps;
        return ROTOR_OK;
    }
    rotor_status st = sim_net_time(s, bytes, gbps, hops, ps, err);
    if (st == ROTOR_OK) *m = (sim_time_memo){.bytes = bytes, .hops = hops, .ps = *ps, .gbps = gbps};
    return st;
}

rotor_status rotor_sim_add_transfer(rotor_sim *s, const rotor_sim_transfer *x, int64_t *id,
                                    rotor_error *err) {
    /* the checks inline (common_ok, sim_net_ok); the messages only for a
     * transfer that fails them */
    rotor_status st;
    if ((!common_ok(s, x->category, x->op, x->deps, x->ndeps) || !sim_net_ok(s, x->src, x->dst) ||
         (uint64_t)x->bytes > (uint64_t)SIM_MAX_BYTES) &&
        (st = transfer_refused(s, x, err)) != ROTOR_OK)
        return st;
    uint8_t flags = sim_transfer_flags(s, x->src, x->dst);
    int64_t dur, hops;
    double gbps;
    sim_net_rate(s, x->src, x->dst, &gbps, &hops);
    st = transfer_time(s, x->bytes, gbps, hops, &dur, err);
    /* the energy counts a transfer changes, committed once it is in */
    rotor_energy_counts e = s->energy;
    if (st == ROTOR_OK) st = count_transfer(s, x->src, x->dst, x->bytes, hops, true, &e, err);
    if (st != ROTOR_OK) return task_fail(s, "transfer", st, err);
    sim_task t = {.dur = dur, .a = (int32_t)x->src, .b = (int32_t)x->dst,
                  .op = x->op, .lane = -1, .kind = SIM_KIND_TRANSFER, .cat = (uint8_t)x->category,
                  .flags = flags};
    st = append(s, &t, x->bytes, x->deps, x->ndeps, id, err);
    if (st != ROTOR_OK) return task_fail(s, "transfer", st, err);
    s->energy.byte_hops = e.byte_hops;
    s->energy.sram_read_bytes = e.sram_read_bytes;
    s->energy.sram_write_bytes = e.sram_write_bytes;
    return ROTOR_OK;
}

/* The union of the routes src -> dsts, each resource once, appended to
 * s->mres; *hops gets the longest route's hops and *gbps the slowest rate. */
static rotor_status mcast_route(rotor_sim *s, const rotor_sim_multicast *m, sim_mcast *mc, double *gbps,
                                int64_t *hops, rotor_energy_counts *e, rotor_error *err) {
    if (!s->mark) { /* resources, then nodes */
        s->mark = calloc((size_t)(s->nres + s->nodes), sizeof *s->mark);
        if (!s->mark) return rotor_nomem(err);
    }
    if (++s->stamp == 0) { /* wrapped: clear the old stamps */
        memset(s->mark, 0, sizeof *s->mark * (size_t)(s->nres + s->nodes));
        s->stamp = 1;
    }
    uint32_t *node_mark = s->mark + s->nres;
    for (int k = 0; k < m->ndsts; k++) {
        if (node_mark[m->dsts[k]] == s->stamp)
            return rotor_fail(err, ROTOR_ERR_INPUT, "dsts[%d]: node %lld is named twice", k, (long long)m->dsts[k]);
        node_mark[m->dsts[k]] = s->stamp;
    }
    if (!grow((void **)&s->mdst, &s->mdst_cap, s->nmdst, m->ndsts, sizeof *s->mdst))
        return rotor_nomem(err);
    mc->doff = s->nmdst;
    for (int k = 0; k < m->ndsts; k++) s->mdst[s->nmdst++] = (int32_t)m->dsts[k];
    mc->off = s->nmres;
    mc->n = 0;
    mc->ndsts = m->ndsts;
    *gbps = s->chip.link_gbps;
    *hops = 0;
    int64_t chain = 0;
    for (int k = 0; k < m->ndsts; k++) {
        sim_route r;
        rotor_status st;
        int64_t at0 = 0; /* the hops paid before this route's first resource */
        if (m->path && k > 0) { /* a path: receiver k through receiver k - 1 */
            sim_net_route(s, m->dsts[k - 1], m->dsts[k], &r);
            /* energy: receiver k - 1 reads what it forwards from its SRAM */
            if ((st = count_transfer(s, m->dsts[k - 1], m->dsts[k], m->bytes, r.hops, true, e, err))) return st;
            at0 = chain;
            chain += r.hops;
            r.hops = chain;
        } else {
            /* one tree: a load enters the mesh where it serves the first receiver */
            sim_net_route_via(s, m->src, m->dsts[k], m->dsts[0], &r);
            /* energy: each receiver's own route (links a tree shares are counted per receiver) */
            if ((st = count_transfer(s, m->src, m->dsts[k], m->bytes, r.hops, k == 0, e, err))) return st;
            chain = r.hops;
        }
        if (r.hops > *hops) *hops = r.hops;
        if (!grow((void **)&s->mres, &s->mres_cap, s->nmres, r.n, sizeof *s->mres) ||
            !grow((void **)&s->mat, &s->mat_cap, s->nmres, r.n, sizeof *s->mat))
            return rotor_nomem(err);

        for (int64_t i = 0; i < r.n; i++) {
            int32_t res = r.res[i];
            if (s->mark[res] == s->stamp) continue;
            s->mark[res] = s->stamp;
            s->mat[s->nmres] = (int32_t)(at0 + r.at[i]);
            s->mres[s->nmres++] = res;
            mc->n++;
            if (s->res[res].gbps < *gbps) *gbps = s->res[res].gbps;
        }
    }
    return ROTOR_OK;
}

rotor_status rotor_sim_add_multicast(rotor_sim *s, const rotor_sim_multicast *m, int64_t *id,
                                     rotor_error *err) {
    rotor_status st = check_common(s, m->category, m->op, m->deps, m->ndeps, err);
    if (st == ROTOR_OK && (m->ndsts < 1 || !m->dsts))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "ndsts: expected at least 1 receiver, got %d", m->dsts ? m->ndsts : 0);
    if (st == ROTOR_OK && s->nmcast >= INT32_MAX - 1)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "more than %d multicasts", INT32_MAX - 2);
    for (int k = 0; st == ROTOR_OK && k < m->ndsts; k++) {
        st = sim_net_check(s, m->src, m->dsts[k], err);
        if (st) {
            char prefix[48];
            snprintf(prefix, sizeof prefix, "dsts[%d]", k);
            rotor_error_prefix(err, prefix);
        }
    }
    if (st == ROTOR_OK && (m->bytes < 0 || m->bytes > SIM_MAX_BYTES))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "bytes: expected 0..2^53, got %lld", (long long)m->bytes);
    if (st != ROTOR_OK) return task_fail(s, "multicast", st, err);
    if (!grow((void **)&s->mcast, &s->mcast_cap, s->nmcast, 1, sizeof *s->mcast))
        return task_fail(s, "multicast", rotor_nomem(err), err);
    if (m->ndsts == 1) { /* exactly a transfer: no union to keep */
        rotor_sim_transfer x = {.src = m->src, .dst = m->dsts[0], .bytes = m->bytes, .category = m->category,
                                .op = m->op, .deps = m->deps, .ndeps = m->ndeps};
        int64_t tid;
        st = rotor_sim_add_transfer(s, &x, &tid, err);
        if (st) return st;
        if (m->pause_receivers) s->tasks[tid - s->base].flags |= SIM_F_PAUSE;
        if (id) *id = tid;
        return ROTOR_OK;
    }
    sim_mcast mc;
    double gbps = 0;
    int64_t hops = 0, mres0 = s->nmres, mdst0 = s->nmdst;
    rotor_energy_counts e = s->energy;
    st = mcast_route(s, m, &mc, &gbps, &hops, &e, err);
    /* duration: the longest route's hops at the slowest rate on any of them */
    int64_t dur = 0;
    if (st == ROTOR_OK) st = sim_net_time(s, m->bytes, gbps, hops, &dur, err);
    if (st != ROTOR_OK) {
        s->nmres = mres0;
        s->nmdst = mdst0;
        return task_fail(s, "multicast", st, err);
    }
    mc.pause = m->pause_receivers ? llround((double)m->bytes * 1000.0 / s->chip.link_gbps) : 0;
    mc.hops = (int32_t)hops;
    uint8_t flags = 0;
    for (int k = 0; k < m->ndsts; k++)
        if (sim_node_chip(s, m->src) != sim_node_chip(s, m->dsts[k])) flags |= SIM_F_INTERCHIP;
    if (sim_node_is_hbm(s, m->src)) flags |= SIM_F_HBM;
    sim_task t = {.dur = dur, .a = (int32_t)m->src, .b = (int32_t)m->dsts[0],
                  .op = m->op, .lane = -1, .mcast = (int32_t)(s->nmcast + 1), .kind = SIM_KIND_TRANSFER,
                  .cat = (uint8_t)m->category, .flags = flags};
    st = append(s, &t, m->bytes, m->deps, m->ndeps, id, err);
    if (st != ROTOR_OK) {
        s->nmres = mres0;
        s->nmdst = mdst0;
        return task_fail(s, "multicast", st, err);
    }
    s->energy = e;
    s->mcast[s->nmcast++] = mc;
    return ROTOR_OK;
}

rotor_status rotor_sim_add_dep(rotor_sim *s, int64_t task, int64_t dep, rotor_error *err) {
    if (s->streaming)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: dependency %lld -> %lld: a streamed run takes dependencies "
                          "only as tasks are added", (long long)task, (long long)dep);
    if (task < 0 || task >= s->ntasks || dep < 0 || dep >= s->ntasks)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: dependency %lld -> %lld: task %lld does not exist (tasks 0..%lld)",
                          (long long)task, (long long)dep,
                          (long long)(task < 0 || task >= s->ntasks ? task : dep), (long long)s->ntasks - 1);
    if (!grow((void **)&s->edges, &s->edge_cap, s->nedges, 1, sizeof *s->edges))
        return rotor_nomem(err);
    s->edges[s->nedges++] = (sim_edge){(int32_t)task, (int32_t)dep};
    s->ran = false;
    return ROTOR_OK;
}

rotor_status rotor_sim_set_op_name(rotor_sim *s, int op, const char *name, rotor_error *err) {
    if (op < 0 || op >= SIM_MAX_OP)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: op name: op %d is not in 0..%d", op, SIM_MAX_OP - 1);
    if (op >= s->nop_names) {
        char **q = realloc(s->op_names, sizeof *q * (size_t)(op + 1));
        if (!q) return rotor_nomem(err);
        for (int64_t i = s->nop_names; i <= op; i++) q[i] = NULL;
        s->op_names = q;
        s->nop_names = op + 1;
    }
    char *copy = strdup(name);
    if (!copy) return rotor_nomem(err);
    free(s->op_names[op]);
    s->op_names[op] = copy;
    return ROTOR_OK;
}

/* ---- the event queue ----------------------------------------------------------- */

static inline void ev_push(sim_run *r, int64_t t, int kind, int64_t id) {
    sim_queue_push(&r->q, t, (uint64_t)kind << 32 | (uint64_t)id);
}

/* Sums that could in principle leave int64 (a category's resource time over
 * millions of tasks) are checked; the run then fails with a message. */
static inline void acc(sim_run *r, int64_t *sum, int64_t v) {
    if (!rotor_add_i64(*sum, v, sum)) r->overflow = true;
}

/* ---- the run ------------------------------------------------------------------- */

/* Integrates the running and waiting counts over [now, t). */
static void advance(sim_run *r, int64_t t) {
    int64_t dt = t - r->now;
    if (dt <= 0) return;
    rotor_sim_stats *st = &r->st;
    int top = -1;
    for (int c = ROTOR_SIM_NCATS - 1; c >= 0; c--)
        if (r->active[c] > 0) {
            st->active_ps[c] += dt;
            top = c;
        }
    if (top >= 0) st->exposed_ps[top] += dt;
    else st->idle_ps += dt;
    if (r->waiting > 0) st->contended_ps += dt;
    r->now = t;
}

/* A compute task claims its core's pipeline. */
static int64_t claim_core(rotor_sim *s, sim_task *t, int64_t now) {
    if (t->dur == 0) return now; /* a synchronisation point: no time on the core */
    sim_run *r = &s->run;
    int64_t *free_at = &s->core_free[t->a];
    int64_t start = *free_at > now ? *free_at : now;
    *free_at = start + t->dur;
    acc(r, &r->st.compute_wait_ps, start - now);
    s->core_busy[t->a] += t->dur; /* at most the makespan: no overflow */
    return start;
}

/* A transfer claims every resource on its route, res[0 .. n): the head
 * reaches resource i after at[i] hops and the body follows, so resource i
 * is held for `hold` (the bytes' time) from start + at[i] latencies, and
 * the transfer starts at the first instant each is free by then
 * (docs/simulator.md, "Pipelined links").  So on every topology, a
 * multicast too: all-to-all's ports since 2026-12-04 (the in port one
 * latency after the out port), its multicasts (an HBM preload: the
 * controller from the start, each receiver's in port one latency on) from
 * later the same day; until then a multicast held them all for its whole
 * time, latency included, and two preloads into the same cores paid the
 * latency one after the other.  Always inline: with the two ports of
 * sim_net_pair, n is a constant and the loops unroll. */
static inline __attribute__((always_inline)) int64_t claim_all(rotor_sim *s, sim_task *t, const int32_t *res,
                                                               const int32_t *at, int64_t hold, int64_t n,
                                                               int64_t now) {
    sim_run *r = &s->run;
    int64_t start = now, lat = s->latency_ps;
    for (int64_t i = 0; i < n; i++) {
        int64_t f = sim_res_free_at(s, res[i]) - at[i] * lat;
        if (f > start) start = f;
    }
    /* the lane of the pool that names its trace track: the HBM controller's
     * for an HBM transfer, else the inter-chip link's */
    bool hbm = t->flags & SIM_F_HBM;
    t->lane = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t from = start + at[i] * lat;
        int32_t lane = sim_res_take(s, res[i], from + hold, hold);
        if (lane >= 0 && (res[i] == s->res_interchip) != hbm) t->lane = lane;
    }
    rotor_sim_stats *st = &r->st;
    acc(r, &st->stall_ps, start - now);
    if (start > now) r->waiting++;
    return start;
}

/* A transfer's route, then its claim, pipelined (claim_all) over a mesh's
 * links and all-to-all's ports alike. */
static int64_t claim_route(rotor_sim *s, sim_task *t, int64_t now) {
    int32_t pair[2];
    if (t->mcast) {
        const sim_mcast *mc = &s->mcast[t->mcast - 1];
        return claim_all(s, t, s->mres + mc->off, s->mat + mc->off, t->dur - (int64_t)mc->hops * s->latency_ps,
                         mc->n, now);
    }
    /* the out port from the start, the in port pair_hops latencies on, each for the bytes' time */
    if (sim_net_pair(s, t, pair)) {
        const int32_t pair_at[2] = {0, s->topo->pair_hops};
        return claim_all(s, t, pair, pair_at, t->dur - s->topo->pair_hops * s->latency_ps, 2, now);
    }
    sim_route route;
    sim_net_route(s, t->a, t->b, &route);
    return claim_all(s, t, route.res, route.at, t->dur - route.hops * s->latency_ps, route.n, now);
}

/* A multicast with pause_receivers books each receiving core's pipeline as
 * it starts, FIFO behind what the core has booked already. */
static void pause_receivers(rotor_sim *s, const sim_mcast *mc, int64_t now) {
    sim_run *r = &s->run;
    for (int32_t k = 0; k < mc->ndsts; k++) {
        int32_t core = s->mdst[mc->doff + k];
        if (core >= s->cores) continue;
        int64_t *free_at = &s->core_free[core];
        *free_at = (*free_at > now ? *free_at : now) + mc->pause;
        if (*free_at > SIM_TIME_MAX) r->overflow = true;
        acc(r, &r->st.pause_ps, mc->pause);
    }
}

/* The same for a one-receiver multicast (stored as a transfer). */
static void pause_receiver(rotor_sim *s, const sim_task *t, int64_t now) {
    sim_run *r = &s->run;
    int64_t *free_at = &s->core_free[t->b], pause = llround((double)sim_task_amount(s, t) * 1000.0 / s->chip.link_gbps);
    *free_at = (*free_at > now ? *free_at : now) + pause;
    if (*free_at > SIM_TIME_MAX) r->overflow = true;
    acc(r, &r->st.pause_ps, pause);
}

static inline __attribute__((always_inline)) void on_start(rotor_sim *s, int64_t id, int64_t now) {
    sim_run *r = &s->run;
    sim_task *t = &s->tasks[id - s->base];
    r->active[t->cat]++;
    if (t->kind == SIM_KIND_TRANSFER && t->start > t->ready) r->waiting--;
    ev_push(r, sim_task_end(t), EV_FINISH, id);
    if (t->mcast && s->mcast[t->mcast - 1].pause > 0) pause_receivers(s, &s->mcast[t->mcast - 1], now);
    if (t->flags & SIM_F_PAUSE) pause_receiver(s, t, now);
}

static void on_ready(rotor_sim *s, int64_t id, int64_t now) {
    sim_run *r = &s->run;
    sim_task *t = &s->tasks[id - s->base];
    /* what its finish will touch: its first dependants' records */
    if (t->next[0] >= 0) __builtin_prefetch(&s->tasks[t->next[0] - s->base], 1);
    if (t->next[1] >= 0) __builtin_prefetch(&s->tasks[t->next[1] - s->base], 1);
    t->ready = now;
    t->start = t->kind == SIM_KIND_COMPUTE ? claim_core(s, t, now) : claim_route(s, t, now);
    int64_t end = t->start + t->dur; /* both <= SIM_TIME_MAX: no overflow */
    if (end > SIM_TIME_MAX) r->overflow = true;
    acc(r, &r->st.busy_ps[t->cat], t->dur);
    if (t->op >= 0) { /* the operator's span */
        sim_span *sp = &s->span[t->op];
        if (sp->start < 0 || t->start < sp->start) sp->start = t->start;
        if (end > sp->end) sp->end = end;
    }
    if (t->start > now) {
        ev_push(r, t->start, EV_START, id);
        return;
    }
    /* starting now: the START event would come next anyway (starts only
     * count and schedule the finish), so it is taken here, off the heap */
    r->st.events++;
    on_start(s, id, now);
}

/* Releases the dependants.  Their edges are dead from now on: a stream
 * compacts the pool when it retires tasks (rotor_sim_retire). */
static inline void release(rotor_sim *s, int32_t next, int64_t now) {
    if (--s->tasks[next - s->base].pending == 0) ev_push(&s->run, now, EV_READY, next);
}

/* A watched task has finished: its range's latest end and longest wait. */
_Static_assert(ROTOR_SIM_WATCH_MAX == 4, "watch_note finds a range with three comparisons");
static inline void watch_note(sim_watch *w, int64_t id, const sim_task *t) {
    int k = (id >= w->b[1]) + (id >= w->b[2]) + (id >= w->b[3]);
    if (sim_task_end(t) > w->end[k]) w->end[k] = sim_task_end(t);
    if (t->start - t->ready > w->wait[k]) w->wait[k] = t->start - t->ready;
}

static void on_finish(rotor_sim *s, int64_t id, int64_t now) {
    sim_run *r = &s->run;
    sim_task *t = &s->tasks[id - s->base];
    r->active[t->cat]--;
    r->finished++;
    if ((uint64_t)(id - s->watch.b[0]) < s->watch.len) watch_note(&s->watch, id, t);
    int32_t n0 = t->next[0], n1 = t->next[1], e = t->head;
    t->pending = -1;
    t->next[0] = t->next[1] = t->head = -1;
    /* the order does not matter: readies at one instant leave in id order */
    if (n0 >= 0) release(s, n0, now);
    if (n1 >= 0) release(s, n1, now);
    for (; e >= 0; e = s->succ[e].next) {
        release(s, s->succ[e].task, now);
        s->live_succ--;
    }
}

/* Processes events in order.  With until >= 0 it stops once task `until`
 * has finished and every event at that instant is done (the stream's
 * horizon, rotor_sim_advance); with until < 0, when no event is left.  With
 * hold, also before the finish of a task of s->hold_lo .. (rotor_sim_advance_before):
 * a constant at each call, so the loop of every other run has no such test. */
static inline __attribute__((always_inline)) void run_loop(rotor_sim *s, int64_t until, bool hold) {
    sim_run *r = &s->run;
    bool done = false;
    int64_t horizon = 0;
    if (until >= 0 && s->tasks[until - s->base].pending < 0) {
        done = true;
        horizon = sim_task_end(&s->tasks[until - s->base]);
    }
    while (!sim_queue_empty(&r->q) && !r->overflow && !r->q.nomem) {
        if (done && sim_queue_next_time(&r->q) > horizon) break;
        sim_event e = sim_queue_pop(&r->q);
        int64_t id = (int64_t)(e.key & 0xffffffffu);
        int kind = (int)(e.key >> 32);
        if (++r->st.events >= r->tick_at) {
            r->tick_at = (r->st.events | ((1 << 20) - 1)) + 1; /* the next multiple of 2^20 */
            if (s->progress) s->progress(s->progress_ctx, e.t, r->st.events);
        }
        advance(r, e.t);
        switch (kind) {
        case EV_READY: on_ready(s, id, e.t); break;
        case EV_START: on_start(s, id, e.t); break;
        default:
            if (hold && (uint64_t)(id - s->hold_lo) < s->hold_len) {
                /* rotor_sim_advance_before: not this one yet.  Back where it
                 * was (the least key of the instant, which the time has
                 * reached: advance() over no events adds nothing), uncounted */
                r->st.events--;
                sim_queue_push(&r->q, e.t, e.key);
                return;
            }
            on_finish(s, id, e.t);
            if (id == until) {
                done = true;
                horizon = e.t;
            }
            break;
        }
    }
}

static void run_events(rotor_sim *s, int64_t until) { run_loop(s, until, false); }

static void run_events_held(rotor_sim *s) { run_loop(s, -1, true); }

/* A fresh run over the whole graph: resources idle, successor lists built
 * from the edges, each task's in one contiguous stretch of the pool (as a
 * CSR, so that releasing dependants reads memory in order), and the tasks
 * that wait for nothing ready at 0. */
static rotor_status prepare(rotor_sim *s, rotor_error *err) {
    sim_run *r = &s->run;
    sim_queue q = r->q;
    sim_queue_clear(&q);
    *r = (sim_run){.q = q, .tick_at = 1 << 20};
    if (!sim_queue_reserve(&r->q, s->ntasks + 1) ||
        !grow((void **)&s->succ, &s->succ_cap, 0, s->nedges + 1, sizeof *s->succ))
        return rotor_nomem(err);
    memset(s->core_free, 0, sizeof *s->core_free * (size_t)s->cores);
    memset(s->core_busy, 0, sizeof *s->core_busy * (size_t)s->cores);
    for (int64_t i = 0; i <= s->max_op && i < s->span_cap; i++) s->span[i] = (sim_span){-1, -1};
    /* Each task's first two dependants (in edge order) go in its slots; the
     * rest form a CSR built in the task records, with no scratch array: head
     * first counts a task's further dependants, then holds the end of its
     * stretch, and the edges, placed from the last, leave it at the start.
     * An edge kept in a slot is marked (its task negated) while the stretches
     * are filled, then restored: the edges are the graph, kept for the next
     * run. */
    int64_t nt = s->ntasks, ne = s->nedges, pool = 0;
    for (int64_t i = 0; i < nt; i++) {
        sim_task *t = &s->tasks[i];
        t->pending = t->head = 0;
        t->next[0] = t->next[1] = -1;
        count_amount(s, t, s->amount[i]);
    }
    for (int64_t e = 0; e < ne; e++) {
        sim_task *d = &s->tasks[s->edges[e].dep];
        int32_t task = s->edges[e].task;
        s->tasks[task].pending++;
        if (d->next[0] < 0) d->next[0] = task;
        else if (d->next[1] < 0) d->next[1] = task;
        else {
            d->head++;
            pool++;
            continue;
        }
        s->edges[e].task = -1 - task; /* in a slot */
    }
    if (pool > 0) {
        for (int64_t i = 0, end = 0; i < nt; i++) {
            end += s->tasks[i].head;
            s->tasks[i].head = (int32_t)end;
        }
        for (int64_t e = ne - 1; e >= 0; e--) {
            if (s->edges[e].task < 0) {
                s->edges[e].task = -1 - s->edges[e].task;
                continue;
            }
            int32_t at = --s->tasks[s->edges[e].dep].head;
            s->succ[at] = (sim_succ){s->edges[e].task, -1};
        }
    } else { /* every edge is in a slot (T10's graphs: a sub-task feeds the next one and a shift) */
        for (int64_t e = 0; e < ne; e++) s->edges[e].task = -1 - s->edges[e].task;
    }
    /* chain each stretch [head of i, head of i + 1) in order, and queue the
     * tasks that wait for nothing (one pass: the records are read from
     * memory once more, not twice; bench_sim's graphs are 56 MB of them) */
    for (int64_t i = 0; i < nt; i++) {
        sim_task *t = &s->tasks[i];
        int32_t from = pool ? t->head : 0, to = i + 1 < nt && pool ? s->tasks[i + 1].head : (int32_t)pool;
        for (int32_t at = from; at + 1 < to; at++) s->succ[at].next = at + 1;
        if (from == to) t->head = -1;
        if (t->pending == 0) ev_push(r, 0, EV_READY, i);
    }
    s->nsucc = s->live_succ = pool;
    sim_net_reset(s);
    return ROTOR_OK;
}

/* Some tasks never became ready.  Each of them waits for another that never
 * finished (after a run, unfinished is exactly pending > 0), so walking "waits
 * for an unfinished task" from the first must come back on itself.  The
 * message lists that cycle. */
static rotor_status report_cycle(rotor_sim *s, rotor_error *err) {
    int64_t n = s->ntasks, *next = malloc(sizeof *next * (size_t)n);
    if (!next) return rotor_nomem(err);
    for (int64_t i = 0; i < n; i++) next[i] = -1;
    int64_t at = 0, stuck = 0;
    for (int64_t i = 0; i < n; i++) stuck += s->tasks[i].pending > 0;
    while (s->tasks[at].pending <= 0) at++;
    while (next[at] < 0) {
        for (int64_t e = 0; e < s->nedges && next[at] < 0; e++)
            if (s->edges[e].task == at && s->tasks[s->edges[e].dep].pending > 0) next[at] = s->edges[e].dep;
        if (next[at] < 0) { /* cannot happen: it would have become ready */
            free(next);
            return rotor_fail(err, ROTOR_ERR_INPUT, "sim: task %lld never became ready", (long long)at);
        }
        at = next[at];
    }
    char text[ROTOR_ERROR_MAX / 2];
    size_t used = 0;
    int64_t first = at;
    do {
        int w = snprintf(text + used, sizeof text - used, "task %lld waits for ", (long long)at);
        if (w < 0 || (size_t)w >= sizeof text - used) break; /* a long cycle: the message shows its start */
        used += (size_t)w;
        at = next[at];
    } while (at != first);
    free(next);
    return rotor_fail(err, ROTOR_ERR_INPUT, "sim: dependency cycle: %stask %lld (%lld tasks never became ready)",
                      text, (long long)first, (long long)stuck);
}

/* Utilisations, once the events are done. */
static void summarise(rotor_sim *s) {
    sim_run *r = &s->run;
    rotor_sim_stats *st = &r->st;
    st->makespan_ps = r->now;
    st->tasks = s->ntasks;
    st->matrix_flops = s->energy.matrix_flops;
    st->vector_flops = s->energy.vector_flops;
    st->sram_read_bytes = s->energy.sram_read_bytes;
    st->sram_write_bytes = s->energy.sram_write_bytes;
    st->byte_hops = s->energy.byte_hops;
    double span = (double)st->makespan_ps;
    if (span <= 0) return;
    /* the cores' busy times, summed in double: exact while the total is
     * under 2^53 ps (2.5 hours of core time) */
    double busy = 0;
    for (int64_t c = 0; c < s->cores; c++) busy += (double)s->core_busy[c];
    st->compute_util = busy / ((double)s->cores * span);
    /* flops / (TFLOP/s * 1e12 * span * 1e-12 s) */
    st->flops_util = (double)st->flops / (s->chip.matrix_tflops * (double)s->chip.chips * span);
    double sum = 0, peak = 0;
    int64_t links = 0;
    for (int64_t i = 0; i < s->nres; i++) {
        const sim_res *p = &s->res[i];
        if (p->kind == SIM_RES_OUT || p->kind == SIM_RES_IN || p->kind == SIM_RES_LINK) {
            links++;
            sum += (double)s->res_busy[i];
            if ((double)s->res_busy[i] > peak) peak = (double)s->res_busy[i];
        }
    }
    st->link_util_mean = links ? sum / ((double)links * span) : 0;
    st->link_util_peak = peak / span;
    if (s->res_interchip >= 0) {
        const sim_res *p = &s->res[s->res_interchip];
        st->interchip_util = (double)s->res_busy[s->res_interchip] / ((double)p->nlanes * span);
    }
    if (s->res_hbm0 >= 0) /* bytes / (GB/s * 1e9 * span * 1e-12 s) */
        st->hbm_util = (double)st->hbm_bytes * 1000.0 / (s->chip.hbm_gbps * (double)s->chip.chips * span);
}

rotor_energy_counts rotor_sim_energy_counts(const rotor_sim_stats *st) {
    return (rotor_energy_counts){.matrix_flops = st->matrix_flops, .vector_flops = st->vector_flops,
                                 .sram_read_bytes = st->sram_read_bytes, .sram_write_bytes = st->sram_write_bytes,
                                 .byte_hops = st->byte_hops, .hbm_bytes = st->hbm_bytes,
                                 .interchip_bytes = st->interchip_bytes};
}

static rotor_status overflow_error(rotor_error *err) {
    return rotor_fail(err, ROTOR_ERR_INPUT,
                      "sim: simulated time passes 2^50 ps (about 1126 s) or a sum of times leaves int64");
}

/* The events left, then the statistics: the end of a whole run and of a
 * stream.  Tasks that never finished form a cycle, which only
 * rotor_sim_add_dep can close, and a stream refuses it. */
static rotor_status finish_run(rotor_sim *s, rotor_sim_stats *out, rotor_error *err) {
    run_events(s, -1);
    if (s->run.q.nomem) return rotor_nomem(err);
    if (s->run.overflow) return overflow_error(err);
    if (s->run.finished < s->ntasks && s->streaming) /* defensive */
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: stream end: %lld tasks never finished",
                          (long long)(s->ntasks - s->run.finished));
    if (s->run.finished < s->ntasks) return report_cycle(s, err);
    summarise(s);
    *out = s->run.st;
    s->ran = true;
    return ROTOR_OK;
}

rotor_status rotor_sim_run(rotor_sim *s, rotor_sim_stats *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    if (s->streaming)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: a streamed run ends with rotor_sim_stream_end, not rotor_sim_run");
    s->ran = false;
    rotor_status st = prepare(s, err);
    if (st != ROTOR_OK) return st;
    return finish_run(s, out, err);
}

/* ---- streaming ------------------------------------------------------------------- */

rotor_status rotor_sim_stream_begin(rotor_sim *s, rotor_error *err) {
    if (s->streaming || s->ntasks > 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: a stream starts on a simulator with no tasks (it has %lld)",
                          (long long)s->ntasks);
    rotor_status st = prepare(s, err);
    if (st) return st;
    s->streaming = true;
    s->ran = false;
    s->task_room = 0; /* the first task's grow_task sizes the queue too */
    s->unrun = 0;
    s->watch.len = 0;
    return ROTOR_OK;
}

rotor_status rotor_sim_advance(rotor_sim *s, int64_t until, rotor_error *err) {
    if (!s->streaming || s->ran)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: advance: %s", s->ran ? "the stream has ended" : "not streaming");
    if (until < s->base || until >= s->ntasks)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: advance: task %lld is not kept (tasks %lld..%lld)",
                          (long long)until, (long long)s->base, (long long)s->ntasks - 1);
    run_events(s, until);
    if (s->run.q.nomem) return rotor_nomem(err);
    if (s->run.overflow) return overflow_error(err);
    if (s->tasks[until - s->base].pending >= 0) /* no cycle can form while streaming: defensive */
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: advance: task %lld never finished", (long long)until);
    s->unrun = s->ntasks;
    return ROTOR_OK;
}

rotor_status rotor_sim_advance_before(rotor_sim *s, int64_t lo, int64_t hi, rotor_error *err) {
    if (!s->streaming || s->ran)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: advance before: %s",
                          s->ran ? "the stream has ended" : "not streaming");
    if (lo < s->base || hi > s->ntasks || lo > hi)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: advance before: tasks %lld..%lld are not kept (tasks %lld..%lld)",
                          (long long)lo, (long long)hi - 1, (long long)s->base, (long long)s->ntasks - 1);
    s->hold_lo = lo;
    s->hold_len = (uint64_t)(hi - lo);
    run_events_held(s);
    s->hold_len = 0;
    if (s->run.q.nomem) return rotor_nomem(err);
    if (s->run.overflow) return overflow_error(err);
    s->unrun = s->ntasks;
    return ROTOR_OK;
}

rotor_status rotor_sim_retire_finished(rotor_sim *s, rotor_error *err) {
    if (!s->streaming) return rotor_fail(err, ROTOR_ERR_INPUT, "sim: retire: only a streamed run retires tasks");
    int64_t id = s->base;
    while (id < s->ntasks && s->tasks[id - s->base].pending < 0) id++;
    return id - s->base >= s->ntasks - id && id > s->base ? rotor_sim_retire(s, id, err) : ROTOR_OK;
}

rotor_status rotor_sim_watch(rotor_sim *s, const int64_t *bounds, int n, rotor_error *err) {
    if (!s->streaming || s->ran)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: watch: %s", s->ran ? "the stream has ended" : "not streaming");
    if (n < 1 || n > ROTOR_SIM_WATCH_MAX || !bounds)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: watch: expected 1..%d ranges, got %d", ROTOR_SIM_WATCH_MAX,
                          bounds ? n : 0);
    if (bounds[0] < s->unrun)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "sim: watch: task %lld may have run (the tasks added since the last advance start at %lld)",
                          (long long)bounds[0], (long long)s->unrun);
    for (int k = 0; k < n; k++)
        if (bounds[k + 1] < bounds[k])
            return rotor_fail(err, ROTOR_ERR_INPUT, "sim: watch: bounds[%d] = %lld is below bounds[%d] = %lld", k + 1,
                              (long long)bounds[k + 1], k, (long long)bounds[k]);
    sim_watch *w = &s->watch;
    for (int k = 0; k <= ROTOR_SIM_WATCH_MAX; k++) w->b[k] = bounds[k < n ? k : n];
    for (int k = 0; k < ROTOR_SIM_WATCH_MAX; k++) {
        w->end[k] = -1;
        w->wait[k] = 0;
    }
    w->len = (uint64_t)(bounds[n] - bounds[0]);
    return ROTOR_OK;
}

void rotor_sim_watch_timing(const rotor_sim *s, int k, int64_t *end_ps, int64_t *wait_ps) {
    if (k < 0 || k >= ROTOR_SIM_WATCH_MAX) return;
    if (s->watch.end[k] > *end_ps) *end_ps = s->watch.end[k];
    if (wait_ps && s->watch.wait[k] > *wait_ps) *wait_ps = s->watch.wait[k];
}

rotor_status rotor_sim_retire(rotor_sim *s, int64_t below, rotor_error *err) {
    if (!s->streaming)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: retire: only a streamed run retires tasks");
    if (below < s->base || below > s->ntasks)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: retire: task %lld is not kept (tasks %lld..%lld)",
                          (long long)below, (long long)s->base, (long long)s->ntasks);
    int64_t n = below - s->base, keep = s->ntasks - below;
    /* every task has finished (a replay retires at its barriers): no need to
     * read each record to know */
    for (int64_t k = 0; k < n && s->run.finished < s->ntasks; k++)
        if (s->tasks[k].pending >= 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "sim: retire: task %lld has not finished",
                              (long long)(s->base + k));
    for (int64_t k = 0; s->tracer && k < n; k++) sim_tracer_task(s->tracer, s, s->base + k);
    memmove(s->tasks, s->tasks + n, sizeof *s->tasks * (size_t)keep);
    memmove(s->amount, s->amount + n, sizeof *s->amount * (size_t)keep);
    s->base = below;
    /* Multicast routes, appended in task order: those before the first one
     * a kept task uses are dead.  Tasks and routes keep indices into the
     * arrays as they are now, so the survivors are moved down and renumbered. */
    int64_t drop = s->nmcast;
    for (int64_t k = 0; k < keep; k++)
        if (s->tasks[k].mcast && s->tasks[k].mcast - 1 < drop) drop = s->tasks[k].mcast - 1;
    if (drop > 0) {
        int64_t res0 = drop < s->nmcast ? s->mcast[drop].off : s->nmres;
        int64_t dst0 = drop < s->nmcast ? s->mcast[drop].doff : s->nmdst;
        memmove(s->mcast, s->mcast + drop, sizeof *s->mcast * (size_t)(s->nmcast - drop));
        s->nmcast -= drop;
        for (int64_t i = 0; i < s->nmcast; i++) {
            s->mcast[i].off -= res0;
            s->mcast[i].doff -= dst0;
        }
        memmove(s->mres, s->mres + res0, sizeof *s->mres * (size_t)(s->nmres - res0));
        memmove(s->mat, s->mat + res0, sizeof *s->mat * (size_t)(s->nmres - res0));
        s->nmres -= res0;
        memmove(s->mdst, s->mdst + dst0, sizeof *s->mdst * (size_t)(s->nmdst - dst0));
        s->nmdst -= dst0;
        for (int64_t k = 0; k < keep; k++)
            if (s->tasks[k].mcast) s->tasks[k].mcast -= (int32_t)drop;
    }
    /* Most edges are dead (their tasks finished): copy the live ones to the
     * front, each list in one stretch and in its order, so the pool stays
     * the size of the edges in flight and lists read memory in order. */
    if (s->nsucc > 2 * s->live_succ + 64) {
        sim_succ *live = malloc(sizeof *live * (size_t)(s->live_succ + 1));
        if (!live) return rotor_nomem(err);
        int64_t m = 0;
        for (int64_t k = 0; k < keep; k++) {
            int32_t e = s->tasks[k].head;
            if (e < 0) continue;
            s->tasks[k].head = (int32_t)m;
            for (; e >= 0; e = s->succ[e].next, m++) live[m] = (sim_succ){s->succ[e].task, (int32_t)(m + 1)};
            live[m - 1].next = -1;
        }
        memcpy(s->succ, live, sizeof *live * (size_t)m);
        free(live);
        s->nsucc = m;
    }
    return ROTOR_OK;
}

rotor_status rotor_sim_stream_end(rotor_sim *s, rotor_sim_stats *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    if (!s->streaming || s->ran)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: stream end: %s", s->ran ? "the stream has ended" : "not streaming");
    rotor_status st = finish_run(s, out, err);
    if (st) return st;
    if (s->tracer) { /* the tasks still kept, then the trace's end */
        for (int64_t id = s->base; id < s->ntasks; id++) sim_tracer_task(s->tracer, s, id);
        sim_tracer *tr = s->tracer;
        s->tracer = NULL;
        return sim_tracer_end(tr, s, &s->trace_sum, err);
    }
    return ROTOR_OK;
}

/* ---- queries --------------------------------------------------------------------- */

/* A kept task's record; NULL (err set) for an unknown or retired id. */
static const sim_task *kept(const rotor_sim *s, int64_t id, rotor_error *err) {
    if (id >= 0 && id < s->base) {
        rotor_fail(err, ROTOR_ERR_INPUT, "sim: task %lld was retired (tasks kept: %lld..%lld)", (long long)id,
                   (long long)s->base, (long long)s->ntasks - 1);
        return NULL;
    }
    if (id < 0 || id >= s->ntasks) {
        rotor_fail(err, ROTOR_ERR_INPUT, "sim: task %lld does not exist (tasks 0..%lld)", (long long)id,
                   (long long)s->ntasks - 1);
        return NULL;
    }
    return &s->tasks[id - s->base];
}

/* A kept task's timing is known: after a whole run, or once it finished in a stream. */
static bool timed(const rotor_sim *s, const sim_task *t) {
    return s->ran || t->pending < 0;
}

rotor_status rotor_sim_task_timing(const rotor_sim *s, int64_t id, rotor_sim_timing *out,
                                   rotor_error *err) {
    if (!s->ran && !s->streaming) return rotor_fail(err, ROTOR_ERR_INPUT, "sim: no timing before a successful run");
    const sim_task *t = kept(s, id, err);
    if (!t) return ROTOR_ERR_INPUT;
    if (!timed(s, t)) return rotor_fail(err, ROTOR_ERR_INPUT, "sim: task %lld has not finished yet", (long long)id);
    *out = (rotor_sim_timing){t->ready, t->start, sim_task_end(t)};
    return ROTOR_OK;
}

void rotor_sim_range_timing(const rotor_sim *s, int64_t from, int64_t to, int64_t *end_ps, int64_t *wait_ps) {
    if (!s->ran && !s->streaming) return;
    if (from < s->base) from = s->base;
    if (to > s->ntasks) to = s->ntasks;
    for (int64_t id = from; id < to; id++) {
        const sim_task *t = &s->tasks[id - s->base];
        if (!timed(s, t)) continue;
        if (sim_task_end(t) > *end_ps) *end_ps = sim_task_end(t);
        if (wait_ps && t->start - t->ready > *wait_ps) *wait_ps = t->start - t->ready;
    }
}

rotor_status rotor_sim_task_info_of(const rotor_sim *s, int64_t id, rotor_sim_task_info *out, rotor_error *err) {
    const sim_task *t = kept(s, id, err);
    if (!t) return ROTOR_ERR_INPUT;
    bool x = t->kind == SIM_KIND_TRANSFER;
    *out = (rotor_sim_task_info){.transfer = x, .src = t->a, .dst = x && !t->mcast ? t->b : -1, .amount = sim_task_amount(s, t),
                                 .category = (rotor_sim_category)t->cat, .op = t->op};
    return ROTOR_OK;
}

int64_t rotor_sim_core_busy_ps(const rotor_sim *s, int64_t core) {
    return core >= 0 && core < s->cores ? s->core_busy[core] : 0;
}

void rotor_sim_op_span(const rotor_sim *s, int op, int64_t *start_ps, int64_t *end_ps) {
    *start_ps = *end_ps = -1;
    if ((!s->ran && !s->streaming) || op < 0 || op > s->max_op) return;
    *start_ps = s->span[op].start;
    *end_ps = s->span[op].end;
}

rotor_status rotor_sim_transfer_ps(const rotor_sim *s, int64_t src, int64_t dst, int64_t bytes,
                                   int64_t *ps, rotor_error *err) {
    rotor_status st = sim_net_check(s, src, dst, err);
    if (st == ROTOR_OK && (bytes < 0 || bytes > SIM_MAX_BYTES))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "bytes: expected 0..2^53, got %lld", (long long)bytes);
    int64_t hops;
    double gbps;
    if (st == ROTOR_OK) {
        sim_net_rate(s, src, dst, &gbps, &hops);
        st = sim_net_time(s, bytes, gbps, hops, ps, err);
    }
    if (st != ROTOR_OK) rotor_error_prefix(err, "sim");
    return st;
}

rotor_status rotor_sim_route(const rotor_sim *s, int64_t src, int64_t dst, int64_t *res,
                             int64_t cap, int64_t *nres, int64_t *hops, rotor_error *err) {
    rotor_status st = sim_net_check(s, src, dst, err);
    if (st != ROTOR_OK) {
        rotor_error_prefix(err, "sim: route");
        return st;
    }
    sim_route r;
    sim_net_route(s, src, dst, &r);
    for (int64_t i = 0; i < r.n && i < cap; i++) res[i] = r.res[i];
    *nres = r.n;
    *hops = r.hops;
    return ROTOR_OK;
}
