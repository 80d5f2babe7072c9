/* compile.c — whole-model compilation onto distributed SRAM: per-operator
 * Pareto frontiers, idle and active layouts, setup cost, and T10's
 * inter-operator memory reconciliation (T10 §4.3.2, Algorithm 1).
 *
 * Decisions where T10 is silent (docs/compile.md repeats them):
 *  - Resident data are an operator's weights and kv-cache inputs (and
 *    expression tensors that name no graph value: folded constants).  They
 *    stay in SRAM for the whole run in the operator's idle layout.
 *  - An idle layout refines one frontier plan (its base): it keeps the base's
 *    F_op and splits every weight partition a further k ways across the
 *    base's replicas (k divides the rings R_X, the temporal factors grow by
 *    k), as T10 Figure 9 suggests.  Setup into the base plan is then an
 *    all-gather inside each group of k cores: every core receives
 *    (k - 1) / k of its partition.  Into any other plan a core is charged
 *    its whole active weight partition (it may hold none of it).
 *  - Hand-off (T10 §5, "the program may rearrange the data on cores if
 *    necessary"; op/handoff.h): a producer leaves its output where its
 *    active plan computed it.  A consumer whose tensor reads that output
 *    element for element gathers straight from there: each core receives
 *    the elements of its step-0 partition it does not hold, and setup
 *    charges the busiest receiver.  Every consumer of a value gathers from
 *    the producer's layout, which stays put while the value lives.
 *  - Where the graph does not say which element is which (the consumer
 *    reads a slice, a transposed or padded view, or a vendor op produced
 *    the value, or it is a model input), the value waits in the even layout
 *    (ceil(bytes / N) per core) and the consumer gathers its partition
 *    less the even share it holds.  The move into the even layout is
 *    counted once, in that gather.
 *  - Live activations are charged their even share of SRAM either way: a
 *    producer's layout can hold more on some cores (fewer cores, padding),
 *    which Algorithm 1's memory budget does not see (docs/compile.md).
 *  - Setup time is the bytes one core receives over beta (every core
 *    receives in parallel, one link each), plus alpha per gather round.
 *  - Operators outside tensor expressions (vendor ops) run at the vector
 *    rate on every core: flops / (N R_vec); they hold their inputs and
 *    outputs in the even layout and need no setup.
 *  - Sizes use the chip's element size, as the cost model does. */
#include "rotor/compile/compile.h"

#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compileint.h"
#include "compile/handoffcache.h"
#include "rotor/compile/planstore.h"
#include "rotor/base/clock.h"
#include "rotor/base/divisors.h"
#include "rotor/compile/opelem.h"
#include "rotor/compile/program.h"
#include "rotor/op/handoff.h"
#include "rotor/base/hashtab.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/plan.h"

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* "text|m=32,k=5120,..." identifies an operator shape. */
static char *shape_key(const rotor_expr *e, rotor_op_elem d) {
    size_t cap = strlen(e->text) + 32 * (size_t)(e->naxes + 2);
    char *k = malloc(cap);
    if (!k) return NULL;
    size_t n = (size_t)snprintf(k, cap, "%s|", e->text);
    for (int a = 0; a < e->naxes && n < cap; a++)
        n += (size_t)snprintf(k + n, cap - n, "%s=%lld,", e->axis_name[a], (long long)e->extent[a]);
    /* an operator over quantized integers is costed at its own element size
     * and rate (opelem.h): another shape */
    if ((d.bytes || d.int8) && n < cap)
        snprintf(k + n, cap - n, "|e=%lld%s", (long long)d.bytes, d.int8 ? ",int8" : "");
    return k;
}

/* ---- setup -------------------------------------------------------------- */

/* Idle bytes per core of plan c's resident tensors split k further ways. */
static int64_t idle_bytes_of(const op_state *s, const rotor_expr *e, const rotor_candidate *c,
                             int64_t k) {
    int64_t b = 0;
    for (int t = 0; t < e->ntensors; t++)
        if (s->kind[t] == T_RESIDENT) {
            int64_t kt = k < c->info.rings[t] ? k : c->info.rings[t];
            while (c->info.rings[t] % kt) kt--; /* the largest divisor of R_X not above k */
            b += ceil_div(c->info.bytes[t], kt);
        }
    return b;
}

/* The hand-off part of op s's setup into plan c: the elements through the
 * busiest port, in or out, over its hand-off inputs together (0: none).  A
 * core's port carries what it receives and, for the producers, what it
 * sends; the busier side bounds the exchange (the replay schedules it close
 * to that bound).  False on failure (cc->hst set). */
static bool handoff_most(const compiler *cc, const op_state *s, const rotor_expr *e, const rotor_candidate *c,
                         int64_t *most, int64_t *link, int64_t *hops) {
    compiler *m = (compiler *)cc; /* the cache and the error are the compiler's scratch */
    handoff_input in[ROTOR_MAX_TENSORS];
    int nr = 0;
    *most = 0;
    for (int t = 1; t < e->ntensors; t++) {
        if (s->src[t] < 0) continue;
        const op_state *p = &cc->st[s->src[t]];
        if (p->active < 0) continue; /* producer does not fit: the total is INFINITY anyway */
        in[nr++] = (handoff_input){.f = p->frontier, .e = &cc->g->ops[s->src[t]].expr,
                                   .p = &cc->fr[p->frontier].v[p->active].plan, .t = t, .view = &s->view[t],
                                   .chip = &cc->fchip[p->frontier]};
    }
    rotor_status st = handoff_cache_setup(m->hc, in, nr, s->frontier, e, &c->plan, &cc->fchip[s->frontier], most,
                                          link, hops, &m->herr);
    if (st) {
        /* name the consumer (the message is the placement's or the count's:
         * conformer-m at batch 16 met a frontier plan of an attention
         * operator that op/place.c cannot lay out) */
        for (int o = 0; o < cc->g->nops; o++)
            if (&cc->g->ops[o].expr == e) {
                char prefix[200];
                snprintf(prefix, sizeof prefix, "op '%s' (%s), pricing the hand-off into one of its plans",
                         cc->g->ops[o].name, cc->g->ops[o].type);
                rotor_error_prefix(&m->herr, prefix);
                break;
            }
        if (!m->hst) m->hst = st;
    }
    return !st;
}

/* The hand-off part of a setup (handoff_most) into one plan: it depends on
 * neither the idle base nor the split k, so best_move prices it once per
 * operator for all its splits (issue 45). */
typedef struct handoff_part {
    bool ok; /* false: a hand-off failed (cc->hst set) */
    int64_t most, link, far;
} handoff_part;

static handoff_part handoff_part_of(const compiler *cc, const op_state *s, const rotor_expr *e,
                                    const rotor_candidate *c) {
    handoff_part h = {.ok = true};
    if (cc->hc) h.ok = handoff_most(cc, s, e, c, &h.most, &h.link, &h.far);
    return h;
}

/* One operator's setups, per point j of its frontier, while the key holds:
 * its frontier's points unchanged (gen) and each hand-off producer's active
 * plan (index and its frontier's gen) as when they were priced.  known[j]
 * bit 1: h[j], the hand-off part, is known; bit 2: t[j], the seconds from
 * the idle layout (base, k) too.  The walk moves one operator's idle layout
 * a step and re-prices every operator's candidates (pick_active), whose
 * setups mostly stand (issue 45).  A failed hand-off is not kept: the walk
 * reports the failure where the serial walk meets it (walk_more). */
typedef struct setup_memo {
    int n, gen, base;
    int64_t k;
    int key_active[ROTOR_MAX_TENSORS], key_gen[ROTOR_MAX_TENSORS];
    handoff_part *h;
    double *t;
    unsigned char *known;
    unsigned epoch; /* counts the times the key changed (best_move's cache) */
    /* best_move's splits of the active plan's idle layout while the key,
     * the active plan and the idle layout stand: each k with the bytes b
     * it holds and the setup seconds dt it saves (dm = b - idle_bytes > 0
     * and dt > 0 only), ascending in k; valid when moves_epoch == epoch */
    struct split_move *moves;
    int nmoves;
    struct split_key {
        unsigned epoch;
        int active, base;
        int64_t k, bytes;
    } moves_key;
    bool moves_valid;
} setup_memo;

typedef struct split_move {
    int64_t k, b;
    double dt;
} split_move;

static void setup_memo_clear(setup_memo *m) {
    free(m->h);
    free(m->t);
    free(m->known);
    free(m->moves);
    *m = (setup_memo){0};
}

/* Operator o's memo, emptied if its key no longer holds; NULL: none (no
 * hand-offs priced, outside the walk, or out of memory). */
static setup_memo *setup_memo_of(const compiler *cc, int o) {
    if (!cc->hc || !cc->memo) return NULL;
    const op_state *s = &cc->st[o];
    const rotor_expr *e = &cc->g->ops[o].expr;
    const rotor_frontier *f = &cc->fr[s->frontier];
    setup_memo *m = &cc->memo[o]; /* the memo is the compiler's scratch, as the hand-off cache */
    bool valid = m->h && m->n == f->n && m->gen == cc->fr_gen[s->frontier];
    for (int t = 1; t < e->ntensors; t++) {
        if (s->src[t] < 0) continue;
        const op_state *p = &cc->st[s->src[t]];
        int ka = p->active, kg = p->frontier >= 0 ? cc->fr_gen[p->frontier] : 0;
        if (m->key_active[t] != ka || m->key_gen[t] != kg) valid = false;
        m->key_active[t] = ka;
        m->key_gen[t] = kg;
    }
    if (valid) return m;
    m->epoch++;
    if (m->n != f->n || !m->h) {
        free(m->h);
        free(m->t);
        free(m->known);
        size_t n = (size_t)(f->n ? f->n : 1);
        m->h = malloc(n * sizeof *m->h);
        m->t = malloc(n * sizeof *m->t);
        m->known = malloc(n);
        if (!m->h || !m->t || !m->known) {
            setup_memo_clear(m);
            return NULL;
        }
        m->n = f->n;
    }
    memset(m->known, 0, (size_t)m->n);
    m->gen = cc->fr_gen[s->frontier];
    return m;
}

/* The hand-off part of operator o's setup into its frontier's point j,
 * from its memo m (NULL: none) when known (*scratch: when it is not kept). */
static const handoff_part *handoff_memo(const compiler *cc, setup_memo *m, int o, int j, handoff_part *scratch) {
    if (m && (m->known[j] & 1)) return &m->h[j];
    const op_state *s = &cc->st[o];
    *scratch = handoff_part_of(cc, s, &cc->g->ops[o].expr, &cc->fr[s->frontier].v[j]);
    if (m && scratch->ok) {
        m->h[j] = *scratch;
        m->known[j] |= 1;
    }
    return scratch;
}

static void setup_memo_free(compiler *cc) {
    for (int o = 0; cc->memo && o < cc->g->nops; o++) setup_memo_clear(&cc->memo[o]);
    free(cc->memo);
    free(cc->fr_gen);
    cc->memo = NULL;
    cc->fr_gen = NULL;
}

/* compile_setup_mesh with the hand-off part h of plan j already priced. */
static void setup_with(const compiler *cc, const op_state *s, const rotor_expr *e, const rotor_frontier *f, int j,
                       int base, int64_t k, const handoff_part *h, int64_t *bytes, int64_t *nrounds,
                       int64_t *link_bytes, int64_t *hops) {
    const rotor_candidate *c = &f->v[j];
    int64_t recv = 0, rounds = 0;
    for (int t = 0; t < e->ntensors; t++) {
        if (s->kind[t] == T_RESIDENT) {
            int64_t held = 0;
            if (base == j) {
                int64_t kt = k < c->info.rings[t] ? k : c->info.rings[t];
                while (c->info.rings[t] % kt) kt--;
                held = ceil_div(c->info.bytes[t], kt);
                if (kt - 1 > rounds) rounds = kt - 1;
            } else if (rounds < 1) {
                rounds = 1;
            }
            recv += c->info.bytes[t] - held;
        } else if (s->kind[t] == T_ACTIVATION && (s->src[t] < 0 || !cc->hc)) {
            int64_t need = c->info.bytes[t] - s->even[t];
            if (need > 0) {
                recv += need;
                if (rounds < 1) rounds = 1;
            }
        }
    }
    if (!h->ok) {
        *bytes = -1;
        *nrounds = 0;
        return;
    }
    int64_t most = h->most;
    if (most > 0) {
        recv += most * s->elem;
        if (rounds < 1) rounds = 1;
    }
    *bytes = recv;
    *nrounds = rounds;
    if (!link_bytes) return;
    /* a mesh (docs/cost-model.md, "On a 2D mesh", "Setup"): the hand-off's
     * busiest link or port (the replay's exchange still takes turns at the
     * ports), and the rest's gathers from the nearest cores, on top */
    int64_t gather, ghops;
    rotor_mesh_gather(&cc->fchip[s->frontier], recv - most * s->elem, rounds, &gather, &ghops);
    *link_bytes = (h->link > most ? h->link : most) * s->elem + gather;
    *hops = h->far > ghops ? h->far : ghops;
}

/* Setup of operator o into frontier plan j from idle layout (base, k): the
 * bytes the busiest core receives and the gather rounds (alphas) it pays.
 * Resident data and even-layout gathers load every core alike; hand-off
 * gathers differ per core.  The simulator's replay emits these (docs/
 * simulator.md, "Replay").  *bytes is -1 after a hand-off failure. */
void compile_setup_need(const compiler *cc, const op_state *s, const rotor_expr *e, const rotor_frontier *f, int j,
                        int base, int64_t k, int64_t *bytes, int64_t *nrounds) {
    compile_setup_mesh(cc, s, e, f, j, base, k, bytes, nrounds, NULL, NULL);
}

void compile_setup_mesh(const compiler *cc, const op_state *s, const rotor_expr *e, const rotor_frontier *f, int j,
                        int base, int64_t k, int64_t *bytes, int64_t *nrounds, int64_t *link_bytes, int64_t *hops) {
    handoff_part h = handoff_part_of(cc, s, e, &f->v[j]);
    setup_with(cc, s, e, f, j, base, k, &h, bytes, nrounds, link_bytes, hops);
}

/* The setup's seconds, its hand-off part h priced (NULL: priced here). */
static double setup_time_with(const compiler *cc, const op_state *s, const rotor_expr *e, const rotor_frontier *f,
                              int j, int base, int64_t k, const handoff_part *h) {
    handoff_part own;
    if (!h) {
        own = handoff_part_of(cc, s, e, &f->v[j]);
        h = &own;
    }
    int64_t bytes, rounds, link, hops;
    if (cc->chip->topology == ROTOR_TOPO_MESH) {
        setup_with(cc, s, e, f, j, base, k, h, &bytes, &rounds, &link, &hops);
        return bytes < 0 ? INFINITY : rotor_mesh_setup_s(cc->chip, link, rounds, hops);
    }
    setup_with(cc, s, e, f, j, base, k, h, &bytes, &rounds, NULL, NULL);
    return bytes < 0 ? INFINITY : rotor_compile_setup_s(cc->chip, bytes, rounds);
}

/* Operator o's memo (setup_memo_of) for setups from its idle layout. */
static setup_memo *setup_memo_idle(const compiler *cc, int o) {
    setup_memo *m = setup_memo_of(cc, o);
    const op_state *s = &cc->st[o];
    if (m && (m->base != s->idle_base || m->k != s->idle_k)) { /* another idle layout: its seconds */
        for (int x = 0; x < m->n; x++) m->known[x] &= 1;
        m->base = s->idle_base;
        m->k = s->idle_k;
    }
    return m;
}

/* Operator s's setup seconds into point j from its idle layout, in the
 * walk: s is cc->st's, m its memo from setup_memo_idle with nothing
 * changed since (NULL: none). */
static double setup_time(const compiler *cc, setup_memo *m, const op_state *s, const rotor_expr *e,
                         const rotor_frontier *f, int j) {
    int o = (int)(s - cc->st);
    int base = s->idle_base;
    int64_t k = s->idle_k;
    if (m && (m->known[j] & 2)) return m->t[j];
    handoff_part scratch;
    const handoff_part *h = handoff_memo(cc, m, o, j, &scratch);
    double t = setup_time_with(cc, s, e, f, j, base, k, h);
    if (m && h->ok) {
        m->t[j] = t;
        m->known[j] |= 2;
    }
    return t;
}

double rotor_compile_setup_s(const rotor_chip *chip, int64_t bytes, int64_t rounds) {
    return rotor_cost_shift_s(chip, bytes, rounds);
}

void rotor_compile_mesh_setups(const rotor_chip *chip, const rotor_compile_result *r, double *setup_s,
                               double *bound_s) {
    *setup_s = *bound_s = 0;
    if (chip->topology != ROTOR_TOPO_MESH) return;
    for (int o = 0; o < r->nops; o++) {
        const rotor_op_schedule *s = &r->ops[o];
        if (!rotor_compile_setup_counted(s->vendor, s->segment, s->setup_bytes)) continue;
        *setup_s += s->setup_s;
        *bound_s += rotor_mesh_setup_s(chip, s->setup_link_bytes, s->setup_rounds, s->setup_hops);
    }
}

bool rotor_compile_mesh_setup_note(const rotor_chip *chip, const rotor_compile_result *r, char *buf, size_t size) {
    double setup, bound;
    rotor_compile_mesh_setups(chip, r, &setup, &bound);
    if (size) buf[0] = '\0';
    if (!(bound > 0 && setup > 1.25 * bound)) return false;
    snprintf(buf, size,
             "the setups' exchanges take %.3f us, %.2fx what their busiest links bound them to (%.3f us); %s "
             "(docs/mesh.md, \"Setup\")",
             setup * 1e6, setup / bound, bound * 1e6,
             !r->mesh_refined  ? "the plans were chosen by that bound"
             : r->mesh_stopped ? "the walk chose the plans by that bound, then each by the exchanges where another "
                                 "plan was faster, until its budget of work ran out"
                               : "the walk chose the plans by that bound, then each by the exchanges where another "
                                 "plan was faster");
    return true;
}

/* ---- frontiers ---------------------------------------------------------- */

/* The frontier slot of op's shape, made empty (n = 0) if it is new; the
 * searches run later, all slots at once (frontiers_search). */
static rotor_status frontier_slot(compiler *cc, int o, int *out, rotor_error *err) {
    rotor_op_elem d = rotor_op_elem_of(cc->g, o);
    char *key = shape_key(&cc->g->ops[o].expr, d);
    if (!key) return rotor_nomem(err);
    for (int i = 0; i < cc->nfr; i++)
        if (strcmp(cc->keys[i], key) == 0) {
            free(key);
            *out = i;
            return ROTOR_OK;
        }
    rotor_frontier *nf = realloc(cc->fr, (size_t)(cc->nfr + 1) * sizeof *nf);
    if (nf) cc->fr = nf;
    char **nk = nf ? realloc(cc->keys, (size_t)(cc->nfr + 1) * sizeof *nk) : NULL;
    if (nk) cc->keys = nk;
    int *no = nk ? realloc(cc->fr_op, (size_t)(cc->nfr + 1) * sizeof *no) : NULL;
    if (no) cc->fr_op = no;
    rotor_chip *nc = no ? realloc(cc->fchip, (size_t)(cc->nfr + 1) * sizeof *nc) : NULL;
    if (nc) cc->fchip = nc;
    if (!nc) {
        free(key);
        return rotor_nomem(err);
    }
    cc->fr[cc->nfr] = (rotor_frontier){0};
    cc->keys[cc->nfr] = key;
    cc->fr_op[cc->nfr] = o;
    cc->fchip[cc->nfr] = rotor_chip_for_op(cc->chip, d);
    *out = cc->nfr++;
    return ROTOR_OK;
}

/* The default frontier cut (docs/compile.md, "Frontiers cut at a time
 * ratio"): 2x the fastest for plain contractions, whose single-pass frontier
 * search is cheap up to there; the fastest plan alone (1x) where a tensor has
 * a compound dimension (convolutions), whose frontier costs one capped
 * search per point: the rest is searched one cap at a time, where the walk
 * needs it (frontier_learn). */
static double default_ratio(const rotor_expr *e) {
    for (int t = 0; t < e->ntensors; t++)
        for (int d = 0; d < e->tensors[t].ndims; d++)
            if (e->tensors[t].dims[d].nterms > 1) return ROTOR_COMPILE_FRONTIER_RATIO_COMPOUND;
    return ROTOR_COMPILE_FRONTIER_RATIO;
}

/* Searches frontier i: the plans within `ratio` of the fastest (0: the
 * default for its shape; negative: the whole frontier), with `threads`
 * search threads. */
static double first_ratio(const compiler *cc, int i, double ratio) {
    ratio = ratio > 0 ? ratio : ratio == 0 ? default_ratio(&cc->g->ops[cc->fr_op[i]].expr) : 0;
    /* the fast solver's whole frontier costs a few of its solves: no
     * capped searches later (and it has no sessions, nor have the baselines) */
    return cc->solver != ROTOR_SOLVER_EXACT ? 0 : ratio;
}

/* Frontier i's first search as the plan cache recorded it. */
static rotor_status frontier_cached(compiler *cc, int i, const rotor_plancache_entry *pe, rotor_error *err) {
    rotor_candidate *v = malloc((size_t)(pe->nfirst ? pe->nfirst : 1) * sizeof *v);
    if (!v) return rotor_nomem(err);
    if (pe->nfirst) memcpy(v, pe->first, (size_t)pe->nfirst * sizeof *v);
    free(cc->fr[i].v);
    cc->fr[i] = (rotor_frontier){.n = pe->nfirst, .v = v, .truncated = pe->first_truncated};
    cc->tcut[i] = pe->first_tcut;
    return ROTOR_OK;
}

static rotor_status frontier_search_run(compiler *cc, int i, double ratio, int threads, rotor_error *err);

/* The first search, from the plan cache when it has it (recorded there
 * when it does not). */
static rotor_status frontier_search(compiler *cc, int i, double ratio, int threads, rotor_error *err) {
    rotor_plancache_entry *pe = cc->pce ? &cc->pce[i] : NULL;
    if (pe && pe->has_first) return frontier_cached(cc, i, pe, err);
    rotor_status st = frontier_search_run(cc, i, ratio, threads, err);
    if (!st && pe) st = rotor_plancache_set_first(pe, cc->fr[i].v, cc->fr[i].n, cc->fr[i].truncated, cc->tcut[i], err);
    return st;
}

static rotor_status frontier_search_run(compiler *cc, int i, double ratio, int threads, rotor_error *err) {
    const rotor_op *op = &cc->g->ops[cc->fr_op[i]];
    ratio = first_ratio(cc, i, ratio);
    if (ratio == 1.0 && default_ratio(&op->expr) == ROTOR_COMPILE_FRONTIER_RATIO_COMPOUND) {
        /* the fastest plan alone, from the session that will search the
         * rest of this frontier (frontier_learn), so that the plans it
         * costs seed the capped searches to come */
        rotor_search_options so = {.threads = threads, .pool = cc->spool};
        rotor_status st = rotor_search_session_open(&op->expr, &cc->fchip[i], &so, &cc->sess[i], err);
        rotor_candidate *v = st ? NULL : malloc(sizeof *v);
        if (!st && !v) st = rotor_nomem(err);
        if (!st) st = rotor_search_session_best(cc->sess[i], 0, threads, v, NULL, err);
        if (st) {
            free(v);
            char prefix[160];
            snprintf(prefix, sizeof prefix, "op '%s' (%s)", op->name, op->type);
            rotor_error_prefix(err, prefix);
            return st;
        }
        free(cc->fr[i].v);
        cc->fr[i].n = 1;
        cc->fr[i].v = v;
        cc->fr[i].truncated = true;
        /* every other frontier point is slower than the fastest */
        cc->tcut[i] = v->cost.total;
        return ROTOR_OK;
    }
    rotor_search_options so = {
        .pareto = true, .pareto_time_ratio = ratio, .threads = threads, .solver = cc->solver, .pool = cc->spool};
    rotor_search_result r;
    rotor_status st = rotor_search(&op->expr, &cc->fchip[i], &so, &r, err);
    if (st) {
        char prefix[160];
        snprintf(prefix, sizeof prefix, "op '%s' (%s)", op->name, op->type);
        rotor_error_prefix(err, prefix);
        return st;
    }
    free(cc->fr[i].v);
    cc->fr[i].n = r.npareto;
    cc->fr[i].v = r.pareto; /* taken over from the search result */
    cc->fr[i].truncated = ratio > 0;
    /* the search keeps every frontier point no slower than the ratio allows */
    cc->tcut[i] = ratio > 0 && r.npareto > 0 ? r.pareto[0].cost.total * ratio : INFINITY;
    return ROTOR_OK;
}

/* The points of a frontier found so far, and what they tell.  The search
 * first gives each shape an exact prefix of its frontier (the points within
 * the time ratio), so point j is the fastest plan of all under any cap from
 * its own memory up to the previous point's memory - 1 (cov[j]; the
 * fastest point: any cap).  Below the prefix the walk asks for the fastest
 * plan under an operator's cap c (Algorithm 1, line 6): one exact search
 * with memory_cap = c answers it directly (frontier_learn).  That plan is a
 * frontier point: the frontier's first point with memory <= c is the
 * fastest plan under the previous point's memory - 1, which includes every
 * plan under c.  So the walk needs one search per cap it meets, not one
 * per frontier point it passes (T10 §4.3.2 walks whole frontiers; this is
 * the same walk, the frontier searched lazily). */
enum { PICK_NONE = -1, PICK_SEARCH = -2 };

/* Is every plan under `cap` bytes known to execute slower than t?  (A
 * fact for a larger cap holds for a smaller one, and for a smaller t.) */
static bool slow_beyond(const slow_known *k, int64_t cap, double t) {
    for (int x = 0; x < k->n; x++)
        if (cap <= k->cap[x] && t <= k->t[x]) return true;
    return false;
}

static void slow_note(slow_known *k, int64_t cap, double t) {
    if (slow_beyond(k, cap, t)) return;
    k->cap[k->next] = cap;
    k->t[k->next] = t;
    k->next = (k->next + 1) % SLOW_MAX;
    if (k->n < SLOW_MAX) k->n++;
}

static int frontier_pick(const compiler *cc, int i, int64_t cap) {
    const rotor_frontier *f = &cc->fr[i];
    for (int j = 0; j < f->n; j++)
        if (f->v[j].info.memory <= cap) return cap <= cc->cov[i][j] ? j : PICK_SEARCH;
    return cap <= cc->none_upto[i] ? PICK_NONE : PICK_SEARCH;
}

/* Algorithm 1, line 6, end to end: op s's frontier plan under `cap` with the
 * least execution + setup from its idle layout (T10 Algorithm 1 sums the
 * two; choosing by execution alone lets a plan that replicates a large
 * activation win and then pay for its gather).  From the fastest plan
 * under the cap (frontier_pick) it walks the leaner points while their
 * execution alone is below the best sum found: setup is never negative, so
 * no later point can win.  Ties: the faster execution (the earlier point).
 * Returns the point, PICK_NONE, or PICK_SEARCH with *need_cap the cap whose
 * exact search (frontier_learn) the walk needs next and *need_t the time
 * above which its answer does not matter (INFINITY: it always does). */
static int pick_active(const compiler *cc, const op_state *s, const rotor_expr *e, int64_t cap, int64_t *need_cap,
                       double *need_t) {
    int i = s->frontier;
    const rotor_frontier *f = &cc->fr[i];
    int j = frontier_pick(cc, i, cap);
    *need_t = INFINITY;
    if (j < 0) {
        *need_cap = cap;
        return j;
    }
    int best = j;
    setup_memo *m = setup_memo_idle(cc, (int)(s - cc->st));
    double best_sum = f->v[j].cost.total + setup_time(cc, m, s, e, f, j);
    for (;;) {
        /* the next leaner frontier point: the fastest plan under v[j]'s
         * memory - 1, known when its cover reaches that cap */
        int64_t below = f->v[j].info.memory - 1;
        if (below <= cc->none_upto[i]) break; /* none leaner */
        if (j + 1 >= f->n || cc->cov[i][j + 1] < below) {
            if (best_sum <= cc->tcut[i]) break; /* every unknown point executes slower */
            if (slow_beyond(&cc->slow[i], below, best_sum)) break; /* ... known so from a search */
            /* the loop stops at the next point unless it executes faster
             * than best_sum: a slower one need not be found */
            *need_cap = below;
            *need_t = best_sum;
            return PICK_SEARCH;
        }
        j++;
        if (f->v[j].cost.total >= best_sum) break;
        double sum = f->v[j].cost.total + setup_time(cc, m, s, e, f, j);
        if (sum < best_sum) {
            best = j;
            best_sum = sum;
        }
    }
    return best;
}

/* Frontier i's points as the initial search left them: an exact prefix,
 * the whole frontier unless truncated. */
static rotor_status frontier_know_init(compiler *cc, int i, rotor_error *err) {
    rotor_frontier *f = &cc->fr[i];
    free(cc->cov[i]);
    cc->cov[i] = malloc((size_t)(f->n ? f->n : 1) * sizeof **cc->cov);
    if (!cc->cov[i]) return rotor_nomem(err);
    for (int j = 0; j < f->n; j++) cc->cov[i][j] = j ? f->v[j - 1].info.memory - 1 : INT64_MAX;
    cc->none_upto[i] = f->truncated || f->n == 0 ? -1 : f->v[f->n - 1].info.memory - 1;
    return ROTOR_OK;
}

/* The whole rest of frontier i at once, for shapes whose single-pass
 * frontier search is cheap (plain contractions): the frontier of the plans
 * leaner than its leanest point, which is the whole frontier's tail (a
 * frontier restricted to a memory cap is the whole frontier's points under
 * it).  The frontier is then whole. */
static rotor_status frontier_tail(compiler *cc, int i, int threads, int *hits, rotor_error *err) {
    rotor_frontier *f = &cc->fr[i];
    const rotor_op *op = &cc->g->ops[cc->fr_op[i]];
    int64_t below = f->v[f->n - 1].info.memory - 1;
    rotor_search_options so = {
        .pareto = true, .threads = threads, .constraints = {.memory_cap = below}, .pool = cc->spool};
    rotor_search_result r = {0};
    rotor_plancache_entry *pe = cc->pce ? &cc->pce[i] : NULL;
    int n = 0;
    if (pe && rotor_plancache_tail(pe, below, &r.pareto, &r.npareto)) {
        (*hits)++;
        n = r.npareto;
    } else if (pe && r.npareto < 0) {
        return rotor_nomem(err);
    } else {
        rotor_status st = below > 0 ? rotor_search(&op->expr, &cc->fchip[i], &so, &r, err) : ROTOR_ERR_NOFIT;
        if (st && st != ROTOR_ERR_NOFIT) {
            char prefix[160];
            snprintf(prefix, sizeof prefix, "op '%s' (%s)", op->name, op->type);
            rotor_error_prefix(err, prefix);
            return st;
        }
        n = st ? 0 : r.npareto;
        if (pe && (st = rotor_plancache_note_tail(pe, below, r.pareto, n, err))) {
            rotor_search_result_free(&r);
            return st;
        }
    }
    rotor_candidate *v = realloc(f->v, (size_t)(f->n + n + 1) * sizeof *v);
    if (v) f->v = v;
    int64_t *cv = v ? realloc(cc->cov[i], (size_t)(f->n + n + 1) * sizeof *cv) : NULL;
    if (cv) cc->cov[i] = cv;
    if (!cv) {
        rotor_search_result_free(&r);
        return rotor_nomem(err);
    }
    for (int k = 0; k < n; k++) {
        cv[f->n] = f->v[f->n - 1].info.memory - 1;
        f->v[f->n++] = r.pareto[k];
    }
    rotor_search_result_free(&r);
    cc->none_upto[i] = f->v[f->n - 1].info.memory - 1;
    f->truncated = false;
    if (cc->fr_gen) cc->fr_gen[i]++; /* new points (handoff_memo) */
    return ROTOR_OK;
}

/* An operator's choice in the walk's best schedule (walk_state.best): the
 * only fields of op_state the walk changes (compile_walk, assign_active),
 * so a step that improves copies these, not the whole state with its views
 * (issue 45: the whole copy was 14% of a warm Conformer-M compile). */
typedef struct walk_pick {
    int active, idle_base;
    int64_t idle_k, idle_bytes;
} walk_pick;

/* ---- Searches ahead ------------------------------------------------------
 *
 * The walk asks most frontiers for one point after another down their
 * memory (pick_active): a frontier's next search is nearly always under
 * its leanest known point's memory - 1, wanted up to the time of its last
 * search (DenseNet-121 at batch 128: 728 of its 794 capped searches; the
 * other 66 are each frontier's first).  Between its batches of searches
 * the walk prices the setups of the points found (assign_active and
 * best_move, one thread: a quarter of that compile's wall time), while the
 * other threads wait.  So the walk runs in a team (walk_ahead) whose other
 * threads search ahead meanwhile, a task each search (ahead_task): each
 * frontier's foreseen next search in turn, and the walk's search that
 * matches one takes its answer (ahead_answer).
 *
 * Exact: a session's search under (cap, t) gives the fastest plan under
 * cap when it runs in at most t (its ties as without t), else no plan
 * (op/search.h).  So an answer under (cap, t_a) that found a point p
 * answers (cap, t) for every t (p when p runs in at most t, else no plan),
 * and one that found none answers every t <= t_a.  The walk's decisions,
 * its searches, their answers and so the plan are those without searching
 * ahead; which searches ran ahead depends on timing, no answer does (what
 * a session keeps holds under any cap).  An answer the walk does not take
 * is dropped at the frontier's next search.
 *
 * A frontier is searched by one thread at a time: each side claims it
 * (ctx.ahead_claim: AHEAD_RUN for a search ahead, which never waits for it,
 * AHEAD_WALK for the walk's own, which waits for a search ahead to end)
 * before it reads the frontier's state beyond its points or uses its
 * session.  The walk changes a frontier's points only under its claim, and
 * a search ahead reads them only under its own. */

enum { AHEAD_FREE = 0, AHEAD_RUN = 1, AHEAD_WALK = 2 };

/* Frontier i's search under (cap, tmax) answered from the search made ahead
 * (*found, *st as the search would give them): false when there is none
 * that answers it.  The slot is spent either way.  The walk's claim held. */
static bool ahead_answer(compiler *cc, int i, int64_t cap, double tmax, rotor_candidate *found, rotor_status *st) {
    ahead_slot *a = cc->ahead ? &cc->ahead[i] : NULL;
    if (!a || !a->have) return false;
    a->have = false;
    if (a->cap != cap || cap <= 0 || (a->st != ROTOR_OK && rotor_search_time_cap(tmax) > a->t)) return false;
    a->used++;
    if (a->st == ROTOR_OK) {
        *found = a->found;
        *st = found->cost.total <= rotor_search_time_cap(tmax) ? ROTOR_OK : ROTOR_ERR_NOFIT;
    } else {
        *st = ROTOR_ERR_NOFIT;
    }
    return true;
}

struct walk_need;
static bool need_answered(const compiler *cc, const struct walk_need *nd);

/* Frontier i's foreseen next search: under its leanest point's memory - 1,
 * up to its last search's time; false when the walk cannot ask it (no
 * session, a plain frontier, nothing leaner, or answered without a
 * search).  A claim on i held. */
static bool ahead_want(const compiler *cc, int i, int64_t *cap, double *t);

/* Frontier i's foreseen search, made now into its slot (a claim on i held):
 * false when there is none to make. */
static bool ahead_search(compiler *cc, int i) {
    ahead_slot *a = &cc->ahead[i];
    int64_t cap;
    double t;
    if (a->have || !ahead_want(cc, i, &cap, &t)) return false;
    rotor_error e;
    rotor_candidate c;
    bool stopped = false;
    rotor_status st = rotor_search_session_until(cc->sess[i], cap, t, 1, cc->ahead_wait ? NULL : &cc->ahead_cancel,
                                                 &stopped, &c, NULL, &e);
    /* given up (the walk wants the frontier, or is done), or out of
     * memory: the walk searches it itself */
    if (stopped || (st && st != ROTOR_ERR_NOFIT)) return true;
    a->cap = cap;
    a->t = rotor_search_time_cap(t);
    a->st = st;
    if (!st) a->found = c;
    a->have = true;
    return true;
}

/* One search ahead, the next frontier after the last one looked at that is
 * free and has one to make, then itself again as a new task (so that the
 * walk's own search tasks, queued meanwhile, wait for at most one search);
 * none left, or the walk done, it ends, and the walk starts it again after
 * its next batch (ahead_start). */
static void ahead_task(compiler *cc) {
    for (int k = 0; k < cc->nfr && !atomic_load(&cc->ahead_stop); k++) {
        int i = atomic_fetch_add(&cc->ahead_next, 1) % cc->nfr;
        int free_ = AHEAD_FREE;
        if (!atomic_compare_exchange_strong(&cc->ahead_claim[i], &free_, AHEAD_RUN)) continue;
        /* a give-up asked before this search is not this one's; the walk
         * asks again while it waits, and says it is done before it asks */
        atomic_store(&cc->ahead_cancel, false);
        if (atomic_load(&cc->ahead_stop)) {
            atomic_store(&cc->ahead_claim[i], AHEAD_FREE);
            break;
        }
        bool did = ahead_search(cc, i);
        atomic_store(&cc->ahead_claim[i], AHEAD_FREE);
        if (did) {
#pragma omp task
            ahead_task(cc);
            return;
        }
    }
    atomic_store(&cc->ahead_live, false);
}

/* The searches ahead, started unless running (the walk's thread, in the
 * team of walk_ahead).  With options.ahead_wait, made here instead, every
 * one foreseen, so that which are made does not depend on timing. */
static void ahead_start(compiler *cc) {
    if (!cc->ahead_team) return;
    if (cc->ahead_wait) {
        for (int i = 0; i < cc->nfr; i++) ahead_search(cc, i);
        return;
    }
    if (atomic_exchange(&cc->ahead_live, true)) return;
    /* from a task: the chain is then not a child of the walk's task, which
     * its taskwait (learn_batch) would wait for */
#pragma omp task
    {
#pragma omp task
        ahead_task(cc);
    }
}

/* The walk's claim on frontier i, waiting for a search ahead of it to end. */
static void ahead_claim(compiler *cc, int i) {
    if (!cc->ahead_team) return;
    for (;;) {
        int free_ = AHEAD_FREE;
        if (atomic_compare_exchange_weak(&cc->ahead_claim[i], &free_, AHEAD_WALK)) return;
        atomic_store(&cc->ahead_cancel, true); /* the search ahead of it gives up */
        sched_yield();
    }
}

static void ahead_release(compiler *cc, int i) {
    if (cc->ahead_team) atomic_store(&cc->ahead_claim[i], AHEAD_FREE);
}

/* One exact search of frontier i under `cap`: the point it finds joins the
 * frontier in memory order (or widens the cover of the same point, found
 * before under a smaller cap), or no plan fits under cap.  A point inserted
 * before others shifts their indices: the operators' choices in st and
 * snap (NULL: none) follow.  With tmax finite the caller wants the point
 * only if it executes in at most tmax (pick_active): the search prunes by
 * that time too, and when it finds nothing the frontier learns only that
 * every plan under cap is slower than tmax (cc->slow), which is all the
 * walk asked.  The point it finds, if any, is the same.  It searches with
 * run_threads threads, always given (> 0): a session's own count is the
 * one it was opened with, and frontiers_search opens most sessions inside
 * its parallel loop with one thread, so a walk that left the count to the
 * session searched its chains of capped searches (Conformer-M's sub.conv2
 * at batch 64: 14 in a row, most of its compile) on one thread while the
 * other idled (issue 45, docs/performance.md, "thirty-fifth session").
 * *hits counts the answers the plan cache gave. */
static rotor_status frontier_learn_body(compiler *cc, int i, int64_t cap, double tmax, int threads, int run_threads,
                                        walk_pick *snap, int *hits, rotor_error *err) {
    rotor_frontier *f = &cc->fr[i];
    const rotor_op *op = &cc->g->ops[cc->fr_op[i]];
    if (default_ratio(&op->expr) != ROTOR_COMPILE_FRONTIER_RATIO_COMPOUND)
        return frontier_tail(cc, i, run_threads, hits, err);
    rotor_status st = ROTOR_OK;
    rotor_candidate found;
    if (cc->ahead) cc->ahead[i].last_t = tmax;
    rotor_plancache_entry *pe = cc->pce ? &cc->pce[i] : NULL;
    int known = pe ? rotor_plancache_point(pe, cap, &found) : -1;
    if (known < 0 && pe && cap > 0 && tmax < INFINITY && rotor_plancache_slow(pe, cap, tmax)) {
        (*hits)++; /* a time-capped search's answer, recorded: as below */
        slow_note(&cc->slow[i], cap, tmax);
        return ROTOR_OK;
    }
    if (known >= 0) {
        (*hits)++;
        st = known ? ROTOR_OK : ROTOR_ERR_NOFIT;
    } else {
        /* answered ahead as the search would, or searched now */
        if (!ahead_answer(cc, i, cap, tmax, &found, &st)) {
            if (!cc->sess[i]) {
                rotor_search_options so = {.threads = threads, .pool = cc->spool};
                st = rotor_search_session_open(&op->expr, &cc->fchip[i], &so, &cc->sess[i], err);
            }
            if (!st)
                st = cap > 0 ? rotor_search_session_within(cc->sess[i], cap, tmax, run_threads, &found, NULL, err)
                             : ROTOR_ERR_NOFIT;
        }
        if (st == ROTOR_ERR_NOFIT && cap > 0 && tmax < INFINITY) {
            slow_note(&cc->slow[i], cap, tmax);
            return pe ? rotor_plancache_note_slow(pe, cap, tmax, err) : ROTOR_OK;
        }
        rotor_status cst = ROTOR_OK;
        if (pe && (!st || st == ROTOR_ERR_NOFIT)) cst = rotor_plancache_note_point(pe, cap, st ? NULL : &found, err);
        if (cst) return cst;
    }
    if (st == ROTOR_ERR_NOFIT) {
        if (cap > cc->none_upto[i]) cc->none_upto[i] = cap;
        return ROTOR_OK;
    }
    if (st) {
        char prefix[160];
        snprintf(prefix, sizeof prefix, "op '%s' (%s)", op->name, op->type);
        rotor_error_prefix(err, prefix);
        return st;
    }
    int64_t m = found.info.memory;
    int at = 0;
    while (at < f->n && f->v[at].info.memory > m) at++;
    if (at < f->n && f->v[at].info.memory == m) {
        if (cap > cc->cov[i][at]) cc->cov[i][at] = cap;
        return ROTOR_OK;
    }
    rotor_candidate *v = realloc(f->v, (size_t)(f->n + 1) * sizeof *v);
    if (v) f->v = v;
    int64_t *cv = v ? realloc(cc->cov[i], (size_t)(f->n + 1) * sizeof *cv) : NULL;
    if (cv) cc->cov[i] = cv;
    if (!cv) return rotor_nomem(err);
    memmove(&f->v[at + 1], &f->v[at], (size_t)(f->n - at) * sizeof *f->v);
    memmove(&cv[at + 1], &cv[at], (size_t)(f->n - at) * sizeof *cv);
    f->v[at] = found;
    cv[at] = cap;
    f->n++;
    f->truncated = true;
    if (cc->fr_gen) cc->fr_gen[i]++; /* the memo's indices shifted (handoff_memo) */
    for (int o = 0; o < cc->g->nops; o++) {
        op_state *s = &cc->st[o];
        if (s->frontier != i) continue; /* fixed before the walk: the snapshot's too */
        if (s->active >= at) s->active++;
        if (s->idle_base >= at) s->idle_base++;
        if (snap && snap[o].active >= at) snap[o].active++;
        if (snap && snap[o].idle_base >= at) snap[o].idle_base++;
    }
    return ROTOR_OK;
}

/* frontier_learn_body under the walk's claim on frontier i ("Searches ahead"). */
static rotor_status frontier_learn_run(compiler *cc, int i, int64_t cap, double tmax, int threads, int run_threads,
                                       walk_pick *snap, int *hits, rotor_error *err) {
    ahead_claim(cc, i);
    rotor_status st = frontier_learn_body(cc, i, cap, tmax, threads, run_threads, snap, hits, err);
    ahead_release(cc, i);
    return st;
}

/* frontier_learn_run alone, on every thread, its wall time counted as
 * search (the profile). */
static rotor_status frontier_learn(compiler *cc, int i, int64_t cap, double tmax, int threads, walk_pick *snap,
                                   rotor_error *err) {
    double t0 = rotor_clock_s();
    int nthreads = threads > 0 ? threads : omp_get_max_threads();
    rotor_status st = frontier_learn_run(cc, i, cap, tmax, threads, nthreads, snap, &cc->cache_hits, err);
    cc->search_s += rotor_clock_s() - t0;
    return st;
}

/* Every slot's plan cache entry, before the first searches (docs/
 * compile.md, "Plan cache"): a shape found there is not searched. */
static rotor_status cache_load(compiler *cc, double ratio, rotor_error *err) {
    /* the hand-offs' prices (compile/handoffstore.c), memoised by content
     * and, with a cache, kept in its directory */
    int damaged = 0;
    rotor_status hst =
        cc->hc ? handoff_cache_persist(cc->hc, cc->cache_dir, cc->store, cc->nfr, cc->keys, cc->fchip, &damaged, err)
               : ROTOR_OK;
    cc->cache_damaged += damaged;
    if (hst || (!cc->cache_dir && !cc->store)) return hst;
    if (!(cc->pce = calloc((size_t)(cc->nfr ? cc->nfr : 1), sizeof *cc->pce))) return rotor_nomem(err);
    for (int i = 0; i < cc->nfr; i++) {
        char *key = rotor_plancache_key(cc->keys[i], &cc->fchip[i], cc->solver, first_ratio(cc, i, ratio));
        if (!key) return rotor_nomem(err);
        /* the run's store first (planstore.h), then the disk */
        bool in_store = false;
        rotor_plancache_read how = ROTOR_PLANCACHE_MISS;
        rotor_status st = cc->store ? rotor_plan_store_get(cc->store, key, &cc->pce[i], &in_store, err) : ROTOR_OK;
        if (!st && !in_store && cc->cache_dir) {
            rotor_plancache_entry_free(&cc->pce[i]);
            st = rotor_plancache_load(cc->cache_dir, key, &cc->pce[i], &how, err);
        }
        free(key);
        if (st) return st;
        cc->cache_damaged += how == ROTOR_PLANCACHE_DAMAGED;
        cc->cache_hits += cc->pce[i].has_first;
    }
    return ROTOR_OK;
}

/* Every entry that learned something, written back, then the directory
 * cut to its limit, oldest first (best effort). */
static void cache_store(compiler *cc) {
    bool wrote = false;
    rotor_error serr; /* the store is best effort too: an answer it misses is searched again */
    for (int i = 0; cc->pce && i < cc->nfr; i++) {
        if (cc->store && cc->pce[i].has_first) (void)rotor_plan_store_put(cc->store, &cc->pce[i], &serr);
        if (cc->cache_dir && cc->pce[i].dirty && cc->pce[i].has_first)
            wrote |= rotor_plancache_store(cc->cache_dir, &cc->pce[i]);
    }
    wrote |= handoff_cache_save(cc->hc);
    /* GraphTurbo's instance compiles leave the limit to this one scan */
    if ((wrote || compile_gticca_ran(cc)) && cc->cache_dir && !cc->cache_evict_later)
        rotor_plancache_evict(cc->cache_dir, cc->cache_limit);
}

/* Every slot's frontier.  With at least as many distinct shapes as threads
 * the shapes run in parallel, one search thread each; otherwise one after
 * another with every thread.  Searches are deterministic whatever their
 * thread count, so the result is too; the first failing shape in graph
 * order is reported. */
static rotor_status frontiers_search(compiler *cc, const rotor_compile_options *opt, double ratio,
                                     rotor_error *err) {
    int threads = opt ? opt->threads : 0;
    int nthreads = threads > 0 ? threads : omp_get_max_threads();
    void (*progress)(void *, int, int) = opt ? opt->progress : NULL;
    if (progress) progress(opt->progress_ctx, 0, cc->nfr);
    if (cc->nfr < nthreads) {
        for (int i = 0; i < cc->nfr; i++) {
            rotor_status st = frontier_search(cc, i, ratio, nthreads, err);
            if (st) return st;
            if (progress) progress(opt->progress_ctx, i + 1, cc->nfr);
        }
        return ROTOR_OK;
    }
    rotor_status *sts = calloc((size_t)cc->nfr, sizeof *sts);
    rotor_error *errs = calloc((size_t)cc->nfr, sizeof *errs);
    if (!sts || !errs) {
        free(sts);
        free(errs);
        return rotor_nomem(err);
    }
    int done = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int i = 0; i < cc->nfr; i++) {
        sts[i] = frontier_search(cc, i, ratio, 1, &errs[i]);
        if (progress) {
#pragma omp critical(rotor_compile_progress)
            progress(opt->progress_ctx, ++done, cc->nfr);
        }
    }
    rotor_status st = ROTOR_OK;
    for (int i = 0; i < cc->nfr && !st; i++)
        if (sts[i]) {
            st = sts[i];
            *err = errs[i];
        }
    free(sts);
    free(errs);
    return st;
}

/* ---- liveness ----------------------------------------------------------- */

rotor_status rotor_compile_liveness(const rotor_graph *g, int64_t elem, int64_t cores,
                                    int64_t *live_other, int64_t *live_all, rotor_error *err) {
    int n = g->nops;
    int64_t *delta = calloc((size_t)n + 1, sizeof *delta);
    int *last = malloc(sizeof(int) * (size_t)(g->nvalues ? g->nvalues : 1));
    if (!delta || !last) {
        free(delta);
        free(last);
        return rotor_nomem(err);
    }
    for (int v = 0; v < g->nvalues; v++) last[v] = -1;
    for (int o = 0; o < n; o++)
        for (int i = 0; i < g->ops[o].ninputs; i++) last[g->ops[o].inputs[i]] = o;
    for (int v = 0; v < g->nvalues; v++) {
        const rotor_value *x = &g->values[v];
        if (x->role != ROTOR_ROLE_ACTIVATION) continue;
        int from = x->producer < 0 ? 0 : x->producer;
        int to = x->is_output ? n - 1 : (last[v] > from ? last[v] : from);
        int64_t share = ceil_div(x->elements * rotor_value_elem_bytes(elem, x), cores);
        delta[from] += share;
        delta[to + 1] -= share;
    }
    int64_t run = 0;
    for (int o = 0; o < n; o++) {
        run += delta[o];
        int64_t own = 0;
        const rotor_op *op = &g->ops[o];
        for (int i = 0; i < op->ninputs + op->noutputs; i++) {
            int v = i < op->ninputs ? op->inputs[i] : op->outputs[i - op->ninputs];
            bool dup = false;
            for (int j = 0; j < i && !dup; j++)
                dup = (j < op->ninputs ? op->inputs[j] : op->outputs[j - op->ninputs]) == v;
            if (dup || g->values[v].role != ROTOR_ROLE_ACTIVATION) continue;
            own += ceil_div(g->values[v].elements * rotor_value_elem_bytes(elem, &g->values[v]), cores);
        }
        if (live_other) live_other[o] = run - own;
        if (live_all) live_all[o] = run;
    }
    free(delta);
    free(last);
    return ROTOR_OK;
}

/* ---- Algorithm 1 -------------------------------------------------------- */

/* A search the walk needs (assign_active): frontier fr under cap, its
 * answer wanted only up to time t (pick_active), for operator op. */
typedef struct walk_need {
    int op, fr;
    int64_t cap;
    double t;
} walk_need;

/* The searches one pass of the walk needs, run together (walk_more,
 * learn_batch), and the scratch that finds them.  max 1: the serial walk
 * (options.serial_walk). */
typedef struct walk_batch {
    int max, n;
    walk_need *need;        /* [nfr] */
    unsigned char *unknown; /* [nops]: its choice waits on a search */
    unsigned char *claimed; /* [nfr]: a search of it may come first */
    int *saved;             /* [nops]: the choices walk_more overwrote */
    rotor_status *st;       /* [nfr], per need */
    rotor_error *err;       /* [nfr] */
    int *hits;              /* [nfr] */
    int *search;            /* [nfr]: the needs learn_batch searches */
} walk_batch;

/* The searches the serial walk (one search, then assign_active again) is
 * sure to make next, beyond the first need (operator first, under
 * first_cap): a frontier's search answers only operators of that
 * frontier, so an operator's need is the serial walk's next search of its
 * frontier when no operator before it waits on a search of its frontier
 * (claimed) or feeds it a hand-off still unknown (its setup would differ),
 * and when no operator before it may turn out not to fit (the serial walk
 * searches nothing past the first misfit).  One that waits on a search
 * fits if a point known fits its cap (frontier_pick; points are only
 * added).  Every choice here is the one the serial walk makes (resolved
 * choices do not depend on points found later: a search's answer is the
 * least by (time, memory, plan order), docs/compile.md), and the choices
 * of the operators after first are put back as assign_active left them. */
/* Algorithm 1, line 6's cap: the SRAM an operator's active plan may take
 * while every other operator keeps its idle layout (idle_total in all) and
 * the activations live across it stay. */
static int64_t op_cap(const compiler *cc, const op_state *s, int64_t idle_total) {
    return cc->sram - (idle_total - s->idle_bytes) - s->live;
}

static void walk_more(compiler *cc, int64_t idle_total, int first, int64_t first_cap, walk_batch *b) {
    const rotor_graph *g = cc->g;
    if (frontier_pick(cc, cc->st[first].frontier, first_cap) < 0) return;
    memset(b->unknown, 0, (size_t)g->nops);
    memset(b->claimed, 0, (size_t)cc->nfr);
    b->unknown[first] = 1;
    b->claimed[cc->st[first].frontier] = 1;
    int last = first; /* the last operator looked at */
    rotor_status hst = cc->hst;
    for (int o = first + 1; o < g->nops && b->n < b->max && !cc->hst; o++) {
        op_state *s = &cc->st[o];
        b->saved[o] = s->active;
        last = o;
        int64_t cap = op_cap(cc, s, idle_total);
        if (s->frontier < 0) {
            if (s->vendor_bytes > cap) break; /* the serial walk's misfit */
            s->active = 0;
            continue;
        }
        int i = s->frontier;
        bool sure = !b->claimed[i];
        for (int t = 1; sure && t < g->ops[o].expr.ntensors; t++)
            sure = s->src[t] < 0 || (s->src[t] < o && !b->unknown[s->src[t]]);
        int64_t need_cap = cap;
        double need_t = INFINITY;
        int a = sure ? pick_active(cc, s, &g->ops[o].expr, cap, &need_cap, &need_t) : PICK_SEARCH;
        if (a == PICK_SEARCH) {
            if (sure) b->need[b->n++] = (walk_need){.op = o, .fr = i, .cap = need_cap, .t = need_t};
            b->unknown[o] = 1;
            b->claimed[i] = 1;
            if (frontier_pick(cc, i, cap) < 0) break; /* it may not fit */
            continue;
        }
        if (a < 0) break; /* the serial walk's misfit */
        s->active = a;
    }
    for (int k = first + 1; k <= last; k++) cc->st[k].active = b->saved[k];
    if (cc->hst && !hst) { /* a hand-off failed here: the serial walk reports it when it gets there */
        cc->hst = ROTOR_OK;
        b->n = 1;
    }
}

/* Chooses every operator's active plan for the current idle layouts and
 * returns the end-to-end time (INFINITY if one does not fit; *misfit then
 * names the first in graph order and *cap_of its cap).  When the points
 * found so far cannot tell an operator's fastest fitting plan, before any
 * misfit, it stops with b->need[0] naming the operator, its cap and time,
 * and with the other searches the serial walk would make next (walk_more)
 * unless b->max is 1: the caller searches (learn_batch) and asks again. */
static double assign_active(compiler *cc, int64_t idle_total, int *misfit, int64_t *cap_of, walk_batch *b) {
    const rotor_graph *g = cc->g;
    double total = 0;
    *misfit = -1;
    b->n = 0;
    for (int o = 0; o < g->nops; o++) {
        op_state *s = &cc->st[o];
        int64_t cap = op_cap(cc, s, idle_total);
        if (s->frontier < 0) {
            if (s->vendor_bytes > cap) {
                if (*misfit < 0) {
                    *misfit = o;
                    *cap_of = cap;
                }
                s->active = -1;
                total = INFINITY;
                continue;
            }
            s->active = 0;
            total += s->vendor_s;
            continue;
        }
        const rotor_frontier *f = &cc->fr[s->frontier];
        int64_t need_cap = cap;
        double need_t;
        s->active = pick_active(cc, s, &g->ops[o].expr, cap, &need_cap, &need_t);
        if (s->active == PICK_SEARCH && *misfit < 0) {
            b->need[b->n++] = (walk_need){.op = o, .fr = s->frontier, .cap = need_cap, .t = need_t};
            if (b->max > 1) walk_more(cc, idle_total, o, cap, b);
            return INFINITY;
        }
        if (s->active < 0) {
            s->active = -1;
            if (*misfit < 0) {
                *misfit = o;
                *cap_of = cap;
            }
            total = INFINITY;
            continue;
        }
        total += f->v[s->active].cost.total +
                 setup_time(cc, setup_memo_idle(cc, o), s, &g->ops[o].expr, f, s->active);
    }
    return total;
}

/* Operator o's splits of its active plan's idle layout that hold more
 * bytes and save setup seconds (best_move), listed in *v (*n of them,
 * ascending in k); from the memo m while its key, the active plan and the
 * idle layout stand (NULL: none).  Returns false on no memory. */
static bool split_moves(compiler *cc, setup_memo *m, int o, split_move **v, int *n, split_move *scratch) {
    const op_state *s = &cc->st[o];
    struct split_key key = {.active = s->active, .base = s->idle_base, .k = s->idle_k, .bytes = s->idle_bytes};
    if (m) key.epoch = m->epoch;
    const struct split_key *was = m ? &m->moves_key : NULL;
    if (m && m->moves_valid && was->epoch == key.epoch && was->active == key.active && was->base == key.base &&
        was->k == key.k && was->bytes == key.bytes) {
        *v = m->moves;
        *n = m->nmoves;
        return true;
    }
    const rotor_frontier *f = &cc->fr[s->frontier];
    const rotor_expr *e = &cc->g->ops[o].expr;
    const rotor_candidate *c = &f->v[s->active];
    /* the hand-off part is the same for every split (issue 45) */
    handoff_part hs;
    const handoff_part *h = handoff_memo(cc, m, o, s->active, &hs);
    double now = setup_time_with(cc, s, e, f, s->active, s->idle_base, s->idle_k, h);
    int64_t rmax = 1;
    for (int t = 0; t < e->ntensors; t++)
        if (s->kind[t] == T_RESIDENT && c->info.rings[t] > rmax) rmax = c->info.rings[t];
    /* the splits k | rmax, ascending (the first of equal ratios wins);
     * rings <= N <= 2^30 (the chip's limits), and ROTOR_MAX_DIVISORS holds
     * the divisors of any n <= 2^32 */
    int64_t div[ROTOR_MAX_DIVISORS];
    int ndiv = rotor_divisors(rmax, div, ROTOR_MAX_DIVISORS), k = 0;
    for (int i = 0; i < ndiv; i++) {
        int64_t b = idle_bytes_of(s, e, c, div[i]);
        if (b - s->idle_bytes <= 0) continue;
        double dt = now - setup_time_with(cc, s, e, f, s->active, s->active, div[i], h);
        if (dt <= 0) continue;
        scratch[k++] = (split_move){div[i], b, dt};
    }
    *v = scratch;
    *n = k;
    if (!m || !h->ok) return true; /* a failed hand-off is not kept (setup_memo) */
    split_move *keep = realloc(m->moves, (size_t)(k ? k : 1) * sizeof *keep);
    if (!keep) return false;
    memcpy(keep, scratch, (size_t)k * sizeof *keep);
    m->moves = keep;
    m->nmoves = k;
    m->moves_key = key;
    m->moves_valid = true;
    return true;
}

/* The move with the highest -dT_S / dM_I: some operator's idle layout
 * refining its current active plan with a smaller split.  Returns false
 * when none reduces setup within the SRAM. */
static bool best_move(compiler *cc, int64_t idle_total, int *mo, int64_t *mk, int64_t *mbytes) {
    const rotor_graph *g = cc->g;
    double best = 0;
    bool found = false;
    split_move scratch[ROTOR_MAX_DIVISORS];
    for (int o = 0; o < g->nops; o++) {
        op_state *s = &cc->st[o];
        if (s->frontier < 0 || s->active < 0) continue;
        split_move *v;
        int n;
        if (!split_moves(cc, setup_memo_of(cc, o), o, &v, &n, scratch)) {
            /* out of memory keeping them: this operator's splits unpriced
             * would change the walk, so it stops like a failed hand-off */
            if (!cc->hst) cc->hst = rotor_nomem(&cc->herr);
            return false;
        }
        for (int i = 0; i < n; i++) {
            int64_t dm = v[i].b - s->idle_bytes;
            if (idle_total + dm > cc->sram) continue;
            double ratio = v[i].dt / (double)dm;
            if (!found || ratio > best) {
                best = ratio;
                found = true;
                *mo = o;
                *mk = v[i].k;
                *mbytes = v[i].b;
            }
        }
    }
    return found;
}

/* With walk_jumps.  Where no move refines an idle layout, T10's walk ends,
 * and its end can be a fixed point: the idle layouts follow the active plans and the active
 * plans are the cheapest from those layouts, so a plan that executes
 * faster but gathers its weights again is never taken (docs/compile.md,
 * "Jumps"; BERT-Base 219.842 us, ResNet-18 34.199 us at batch 1).  A jump
 * moves on from there: the operator whose fastest plan under its cap would
 * gain most, its execution plus setup now less that plan's execution (the
 * most it could gain: setup is never negative), takes that plan, whole, as
 * its idle layout, and the walk goes on.  Each operator jumps at most once,
 * so the walk ends; the best point is kept, so it never ends worse.
 * Decisions: the fastest plan, not every point; ties: the first operator;
 * a jump that would leave the SRAM is not taken. */
static bool best_jump(compiler *cc, int64_t idle_total, const unsigned char *jumped, int *mo, int *mj,
                      int64_t *mbytes) {
    const rotor_graph *g = cc->g;
    double best = 0;
    bool found = false;
    for (int o = 0; o < g->nops; o++) {
        op_state *s = &cc->st[o];
        if (jumped[o] || s->frontier < 0 || s->active < 0) continue;
        const rotor_frontier *f = &cc->fr[s->frontier];
        const rotor_expr *e = &g->ops[o].expr;
        int64_t cap = op_cap(cc, s, idle_total);
        int j = frontier_pick(cc, s->frontier, cap);
        if (j < 0 || (j == s->idle_base && s->idle_k == 1)) continue;
        double now = f->v[s->active].cost.total + setup_time(cc, setup_memo_idle(cc, o), s, e, f, s->active);
        double gain = now - f->v[j].cost.total;
        if (gain <= 0) continue;
        int64_t b = idle_bytes_of(s, e, &f->v[j], 1);
        if (idle_total - s->idle_bytes + b > cc->sram) continue;
        if (!found || gain > best) {
            best = gain;
            found = true;
            *mo = o, *mj = j, *mbytes = b;
        }
    }
    return found;
}

/* Operator o's row of the schedule from the compiler's state: its plans,
 * hand-offs and setup (on a mesh priced by the exchange's bound; the
 * exchange itself is mesh_setups'). */
static void op_row(const compiler *cc, int o, rotor_op_schedule *r) {
    const rotor_graph *g = cc->g;
    const op_state *s = &cc->st[o];
    memset(r, 0, sizeof *r);
    r->op = o;
    r->frontier = s->frontier;
    r->active = s->active;
    r->idle_base = s->idle_base;
    r->idle_split = s->idle_k;
    r->idle_bytes = s->idle_bytes;
    r->live_bytes = s->live;
    for (int t = 1; s->frontier >= 0 && cc->hc && t < g->ops[o].expr.ntensors; t++)
        if (s->src[t] >= 0 && cc->st[s->src[t]].active >= 0) {
            r->handoff[t] = 1 + s->src[t];
            r->handoff_view[t] = s->view[t];
        }
    if (s->frontier < 0) {
        r->vendor = true;
        r->active_bytes = s->vendor_bytes;
        r->exec_s = r->compute_s = s->vendor_s;
        return;
    }
    const rotor_frontier *f = &cc->fr[s->frontier];
    const rotor_candidate *c = &f->v[s->active];
    r->active_bytes = c->info.memory;
    r->exec_s = c->cost.total;
    r->compute_s = c->cost.compute;
    r->comm_s = c->cost.comm;
    r->reduction_s = c->cost.reduction;
    r->hidden_s = c->cost.hidden;
    if (cc->chip->topology == ROTOR_TOPO_MESH) {
        compile_setup_mesh(cc, s, &g->ops[o].expr, f, s->active, s->idle_base, s->idle_k, &r->setup_bytes,
                           &r->setup_rounds, &r->setup_link_bytes, &r->setup_hops);
        r->setup_s = rotor_mesh_setup_s(cc->chip, r->setup_link_bytes, r->setup_rounds, r->setup_hops);
    } else {
        compile_setup_need(cc, s, &g->ops[o].expr, f, s->active, s->idle_base, s->idle_k, &r->setup_bytes,
                           &r->setup_rounds);
        r->setup_s = rotor_compile_setup_s(cc->chip, r->setup_bytes, r->setup_rounds);
    }
}

/* The schedule's totals from its rows. */
static void schedule_sums(const compiler *cc, rotor_compile_result *out) {
    const rotor_graph *g = cc->g;
    out->total_s = out->setup_s = out->compute_s = out->comm_s = out->reduction_s = out->hidden_s = 0;
    out->vendor_s = 0;
    out->idle_bytes = 0;
    out->peak_bytes = 0;
    for (int o = 0; o < g->nops; o++) out->idle_bytes += cc->st[o].idle_bytes;
    for (int o = 0; o < g->nops; o++) {
        const rotor_op_schedule *r = &out->ops[o];
        if (r->vendor) {
            out->vendor_s += r->exec_s;
        } else {
            out->compute_s += r->compute_s;
            out->comm_s += r->comm_s;
            out->reduction_s += r->reduction_s;
            out->hidden_s += r->hidden_s;
            out->setup_s += r->setup_s;
        }
        out->total_s += r->exec_s + r->setup_s;
        int64_t peak = out->idle_bytes - cc->st[o].idle_bytes + cc->st[o].live + r->active_bytes;
        if (peak > out->peak_bytes) out->peak_bytes = peak;
    }
}

static void fill_schedule(const compiler *cc, rotor_compile_result *out) {
    for (int o = 0; o < cc->g->nops; o++) op_row(cc, o, &out->ops[o]);
    schedule_sums(cc, out);
}

/* An operator's setup on a mesh as the replay runs it: the exchange's
 * makespan, and the busiest link's bytes and longest route of the pieces
 * it really moves (the program's bound, setup_link_bytes and setup_hops). */
typedef struct mesh_setup {
    double s;
    int64_t link_bytes, hops;
    int64_t work; /* the packets its exchange scheduled (rotor_mesh_exchange_within) */
} mesh_setup;


/* Whether row r's setup is an exchange: a planned operator that receives
 * bytes (the others keep the setup op_row gave them). */
static bool row_exchanges(const rotor_op_schedule *r) { return !r->vendor && r->setup_bytes > 0; }

/* Operator o's setup pieces (rotor_setup_pieces_make), row r as op_row
 * made it from the compiler's state, and what they load: x's busiest link
 * and longest route, and *floor, a time no exchange of them beats (every
 * byte through the busiest link crosses it in turn, and the longest route
 * pays its hops' latencies).  *made false: the operator has no setup bytes,
 * and x keeps its row's setup. */
static rotor_status op_pieces(const compiler *cc, int o, const rotor_op_schedule *r, rotor_setup_pieces *pcs,
                              bool *made, mesh_setup *x, double *floor, rotor_error *err) {
    const rotor_graph *g = cc->g;
    *x = (mesh_setup){.s = r->setup_s, .link_bytes = r->setup_link_bytes, .hops = r->setup_hops};
    *made = false;
    *floor = x->s;
    if (!row_exchanges(r)) return ROTOR_OK;
    const op_state *s = &cc->st[o];
    const rotor_candidate *c = &cc->fr[s->frontier].v[s->active];
    rotor_setup_consumer con = {.expr = &g->ops[o].expr, .plan = &c->plan, .info = &c->info,
                                .chip = &cc->fchip[s->frontier], .setup_bytes = r->setup_bytes,
                                .setup_rounds = r->setup_rounds};
    rotor_setup_input in[ROTOR_MAX_TENSORS];
    int nin = 0;
    for (int t = 1; t < g->ops[o].expr.ntensors; t++) {
        if (!r->handoff[t]) continue;
        const op_state *p = &cc->st[r->handoff[t] - 1];
        const rotor_candidate *pc = &cc->fr[p->frontier].v[p->active];
        in[nin++] = (rotor_setup_input){.expr = &g->ops[r->handoff[t] - 1].expr, .plan = &pc->plan,
                                        .info = &pc->info, .chip = &cc->fchip[p->frontier],
                                        .view = &r->handoff_view[t], .t = t};
    }
    rotor_status st = rotor_setup_pieces_make(&con, in, nin, cc->chip, rotor_chip_cores(cc->chip), pcs, err);
    if (st) return st;
    *made = true;
    rotor_mesh_load load = {0};
    st = rotor_mesh_load_init(&load, cc->chip, err);
    x->link_bytes = x->hops = 0;
    x->s = 0;
    for (int64_t i = 0; !st && pcs->handed && i < pcs->n; i++) {
        int64_t h = rotor_mesh_load_add(&load, pcs->v[i][1], pcs->v[i][0], pcs->v[i][2]);
        if (h > x->hops) x->hops = h;
    }
    if (!st) x->link_bytes = rotor_mesh_load_max(&load);
    rotor_mesh_load_free(&load);
    /* each packet's time on a link is rounded to the picosecond
     * (meshmap.c, schedule_order): a picosecond a packet off the floor */
    int64_t packets =
        pcs->handed ? rotor_mesh_exchange_packets((const int64_t(*)[3])pcs->v, pcs->n, rotor_exchange_packet(pcs->most))
                    : 0;
    *floor = pcs->handed ? fmax(0, fmax((double)x->link_bytes / rotor_chip_link_bw(cc->chip),
                                        (double)x->hops * rotor_chip_link_latency(cc->chip)) *
                                           (1 - 1e-9) -
                                       (double)packets * 1e-12)
                         : 0;
    if (st) rotor_setup_pieces_free(pcs), *made = false;
    return st;
}

/* The exchange of pieces made by op_pieces (rotor_mesh_exchange_within):
 * its makespan into x->s, or, when it exceeds limit_s, a time above it
 * (*over set); the pieces freed. */
static rotor_status pieces_exchange(const compiler *cc, rotor_setup_pieces *pcs, double limit_s, mesh_setup *x,
                                    bool *over, int64_t *work, rotor_error *err) {
    int64_t np, span = 0, limit = INT64_MAX;
    if (limit_s < 0) limit_s = 0;
    if (limit_s < 1e6) limit = (int64_t)ceil(limit_s * 1e12) + 1; /* a million seconds: none */
    rotor_status st = ROTOR_OK;
    if (pcs->handed)
        st = rotor_mesh_exchange_within(cc->chip, (const int64_t(*)[3])pcs->v, pcs->n,
                                        rotor_exchange_packet(pcs->most), limit, NULL, &np, &span, work, err);
    rotor_setup_pieces_free(pcs);
    x->s = (double)span * 1e-12;
    *over = span > limit;
    return st;
}

/* Operator o's setup as the replay runs it, row r as op_row made it. */
static rotor_status op_exchange(const compiler *cc, int o, const rotor_op_schedule *r, mesh_setup *x, int64_t *work,
                                rotor_error *err) {
    rotor_setup_pieces pcs;
    bool made;
    double floor;
    bool over;
    rotor_status st = op_pieces(cc, o, r, &pcs, &made, x, &floor, err);
    if (!st && made) st = pieces_exchange(cc, &pcs, INFINITY, x, &over, &x->work, err);
    *work += x->work;
    return st;
}

/* The exchanges priced so far, by what their pieces are made of
 * (rotor_setup_pieces_make's arguments, op_pieces): the consumer's
 * frontier (its shape and group chip) and plan, its setup bytes and
 * rounds, and each hand-off's tensor, producer frontier and plan and view.
 * A model's repeated layers ask the same exchanges (BERT-Large's 24), and
 * a later pass of mesh_refine most of the last one's. */
#define XKEY_MAX (4 + ROTOR_MAX_TENSORS * (5 + 3 * ROTOR_MAX_DIMS))

static int64_t xkey(const compiler *cc, int o, const rotor_op_schedule *r, int64_t *k) {
    const op_state *s = &cc->st[o];
    int64_t n = 0;
    k[n++] = s->frontier, k[n++] = s->active, k[n++] = r->setup_bytes, k[n++] = r->setup_rounds;
    for (int t = 1; t < ROTOR_MAX_TENSORS; t++) {
        if (!r->handoff[t]) continue;
        const op_state *p = &cc->st[r->handoff[t] - 1];
        const rotor_view *v = &r->handoff_view[t];
        k[n++] = t, k[n++] = p->frontier, k[n++] = p->active, k[n++] = v->set, k[n++] = v->unknown;
        for (int d = 0; d < ROTOR_MAX_DIMS; d++) k[n++] = v->dim[d], k[n++] = v->step[d], k[n++] = v->offset[d];
    }
    return n * (int64_t)sizeof *k;
}

/* Each row's setup from x, and the totals again. */
static void mesh_apply(const compiler *cc, rotor_compile_result *out, const mesh_setup *x) {
    for (int o = 0; o < cc->g->nops; o++) {
        rotor_op_schedule *r = &out->ops[o];
        r->setup_s = x[o].s;
        r->setup_link_bytes = x[o].link_bytes;
        r->setup_hops = x[o].hops;
    }
    schedule_sums(cc, out);
}

/* On a mesh, each operator's setup is the exchange the replay will run:
 * its makespan is the setup time reported, where the walk chose the plans
 * by the exchange's bound (the busiest link, rotor_mesh_setup_s), and
 * mesh_refine then by the makespans.  A long shuffle takes a few times its
 * busiest link's time (docs/mesh.md, "Setup").  x: each operator's. */
static rotor_status mesh_setups(const compiler *cc, rotor_compile_result *out, mesh_setup *x, rotor_hashtab *tab,
                                int64_t *work, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    int64_t k[XKEY_MAX];
    for (int o = 0; o < cc->g->nops && !st; o++) {
        const rotor_op_schedule *r = &out->ops[o];
        if (!row_exchanges(r)) {
            x[o] = (mesh_setup){.s = r->setup_s, .link_bytes = r->setup_link_bytes, .hops = r->setup_hops};
            continue;
        }
        int64_t len = xkey(cc, o, r, k);
        const mesh_setup *hit = rotor_hashtab_find(tab, k, len);
        if (hit) { /* its work counted as if run: the budget follows the model's size */
            x[o] = *hit;
            *work += hit->work;
            continue;
        }
        st = op_exchange(cc, o, r, &x[o], work, err);
        if (!st) st = rotor_hashtab_add(tab, k, len, &x[o], NULL, NULL, err);
    }
    if (!st) mesh_apply(cc, out, x);
    return st;
}

#define MESH_REFINE_PASSES 4 /* passes over the operators at most (a decision: ResNet-18 settles in 2) */
/* The refinement schedules at most this many times the packets the
 * walk's own exchanges scheduled (mesh_setups; counted, so the result
 * does not depend on the machine), a memo hit counted as the exchange it
 * saves.  A decision, measured 2026-12-04 on ipu-mk2-mesh: at 4 ResNet-18
 * (176.566 us), ResNet-50 (607.005), BERT-Large (1,397.853), BERT-Base at
 * batch 4 (1,313.362) and MobileNet-v1 (276.694) end where an unbounded
 * refinement ends; at 2 ResNet-18 stops at 183.218.  The wafer's exchanges
 * of millions of pieces (wse2, llama2-7b's decode layer) spend it all and
 * move nothing. */
#define MESH_REFINE_WORK 4

/* The walk chooses each plan by its setups' bounds, and on a mesh their
 * exchanges take 2 to 4 times those (docs/mesh.md, "Setup"): a plan whose
 * hand-offs cross the mesh in long routes looks cheaper to the walk than it
 * is.  So, the walk done, each operator in turn takes the frontier point
 * under its cap (its idle layout and every other plan kept) that makes
 * its execution, its setup and its consumers' setups, each exchange's
 * makespan, least; passes repeat while one moves.  Only a strict gain
 * moves (a relative 1e-9), so the schedule never ends slower than the
 * walk's; a point whose setups' bounds (the walk's pricing) already cost
 * the current makespans or more is not exchanged (a decision: the bound
 * is the walk's, not proven below every exchange), nor one whose pieces'
 * floors (op_pieces) do; an exchange stops once it cannot gain
 * (rotor_mesh_exchange_within).  Exchanges are kept by what they are made
 * of (xkey), so a later pass, and a repeated layer, ask few again.  The
 * work is bounded (MESH_REFINE_WORK); where it runs out, the plans chosen
 * so far stay and the note says so.  The same exchanges the replay runs,
 * so the simulator agrees as before. */
static rotor_status mesh_refine(compiler *cc, rotor_compile_result *out, mesh_setup *x, rotor_hashtab *tab,
                                int64_t budget, int *moves, bool *stopped, rotor_error *err) {
    const rotor_graph *g = cc->g;
    int n = g->nops;
    *moves = 0;
    *stopped = false;
    int64_t spent = 0;
    int *at = calloc((size_t)n + 1, sizeof *at), *use = calloc((size_t)n * ROTOR_MAX_TENSORS + 1, sizeof *use);
    mesh_setup *tx = calloc((size_t)n + 1, sizeof *tx), *bx = calloc((size_t)n + 1, sizeof *bx);
    rotor_op_schedule *row = calloc((size_t)n + 1, sizeof *row);
    rotor_setup_pieces *pcs = calloc((size_t)n + 1, sizeof *pcs);
    double *fl = calloc((size_t)n + 1, sizeof *fl);
    bool *made = calloc((size_t)n + 1, sizeof *made);
    int64_t(*key)[XKEY_MAX] = calloc((size_t)n + 1, sizeof *key), *klen = calloc((size_t)n + 1, sizeof *klen);
    rotor_status st = at && use && tx && bx && row && pcs && fl && made && key && klen ? ROTOR_OK : rotor_nomem(err);
    /* each operator's consumers by hand-off (use[at[p]..at[p+1]-1]), once each */
    for (int p = 0; !st && p < n; p++) {
        at[p + 1] = at[p];
        for (int c = p + 1; c < n; c++) {
            bool hands = false;
            for (int t = 1; t < ROTOR_MAX_TENSORS && !hands; t++) hands = out->ops[c].handoff[t] == p + 1;
            if (hands) use[at[p + 1]++] = c;
        }
    }
    int64_t idle_total = 0;
    for (int o = 0; o < n; o++) idle_total += cc->st[o].idle_bytes;
    bool moved = true;
    for (int pass = 0; !st && !*stopped && moved && pass < MESH_REFINE_PASSES; pass++) {
        moved = false;
        for (int o = 0; !st && !*stopped && o < n; o++) {
            op_state *s = &cc->st[o];
            if (s->frontier < 0 || s->active < 0) continue;
            const rotor_frontier *f = &cc->fr[s->frontier];
            int64_t cap = op_cap(cc, s, idle_total);
            int keep = s->active, best = -1, nc = at[o + 1] - at[o];
            const int *cons = use + at[o];
            double now = out->ops[o].exec_s + x[o].s;
            for (int i = 0; i < nc; i++) now += x[cons[i]].s;
            double cut = now * (1 - 1e-9);
            for (int j = 0; !st && !*stopped && j < f->n; j++) {
                if (j == keep || f->v[j].info.memory > cap) continue;
                s->active = j;
                op_row(cc, o, &row[0]);
                double lb = row[0].exec_s + row[0].setup_s;
                for (int i = 0; i < nc; i++) {
                    op_row(cc, cons[i], &row[1 + i]);
                    lb += row[1 + i].setup_s;
                }
                if (cc->hst == ROTOR_ERR_NOMEM) {
                    st = cc->hst;
                    if (err) *err = cc->herr;
                    break;
                }
                if (cc->hst) { /* a pair the walk never priced and the placer refuses: no point of it */
                    cc->hst = ROTOR_OK;
                    continue;
                }
                if (!(lb < cut)) continue;
                /* the pieces' floors, then the exchanges while they can still gain */
                double t = row[0].exec_s;
                int k = 0;
                for (; !st && k <= nc; k++) {
                    int q = k ? cons[k - 1] : o;
                    const mesh_setup *hit = NULL;
                    if (row_exchanges(&row[k])) {
                        klen[k] = xkey(cc, q, &row[k], key[k]);
                        hit = rotor_hashtab_find(tab, key[k], klen[k]);
                    }
                    if (hit) {
                        tx[k] = *hit;
                        made[k] = false;
                        t += hit->s;
                        continue;
                    }
                    st = op_pieces(cc, q, &row[k], &pcs[k], &made[k], &tx[k], &fl[k], err);
                    t += fl[k];
                }
                for (int i = 0; !st && i <= nc && t < cut; i++) {
                    if (!made[i]) continue;
                    if (spent >= budget) { /* the budget spent: the plans so far are kept */
                        *stopped = true;
                        break;
                    }
                    t -= fl[i];
                    bool over;
                    tx[i].work = 0;
                    st = pieces_exchange(cc, &pcs[i], cut - t, &tx[i], &over, &tx[i].work, err);
                    spent += tx[i].work;
                    made[i] = false;
                    t += tx[i].s;
                    if (!st && !over) st = rotor_hashtab_add(tab, key[i], klen[i], &tx[i], NULL, NULL, err);
                }
                for (int i = 0; i < k; i++)
                    if (made[i]) rotor_setup_pieces_free(&pcs[i]), made[i] = false;
                if (st && st != ROTOR_ERR_NOMEM) { /* pieces the placer refuses: no point of it either */
                    st = ROTOR_OK;
                    continue;
                }
                if (st || *stopped || !(t < cut)) continue;
                cut = t * (1 - 1e-9);
                best = j;
                memcpy(bx, tx, (size_t)(nc + 1) * sizeof *bx);
            }
            s->active = best >= 0 ? best : keep;
            if (st || best < 0) continue;
            moved = true;
            ++*moves;
            op_row(cc, o, &out->ops[o]);
            x[o] = bx[0];
            for (int i = 0; i < nc; i++) {
                op_row(cc, cons[i], &out->ops[cons[i]]);
                x[cons[i]] = bx[1 + i];
            }
        }
    }
    if (!st) mesh_apply(cc, out, x);
    free(at), free(use), free(tx), free(bx), free(row), free(pcs), free(fl), free(made), free(key), free(klen);
    return st;
}

static rotor_status prepare(compiler *cc, const rotor_compile_options *opt, int *searches,
                            rotor_error *err) {
    const rotor_graph *g = cc->g;
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        op_state *s = &cc->st[o];
        s->idle_k = 1;
        if (op->vendor) {
            s->frontier = -1;
            s->vendor_s = op->flops / ((double)cc->cores * rotor_chip_vector_rate(cc->chip));
            for (int i = 0; i < op->ninputs + op->noutputs; i++) {
                int v = i < op->ninputs ? op->inputs[i] : op->outputs[i - op->ninputs];
                int64_t share = ceil_div(g->values[v].elements * rotor_value_elem_bytes(cc->elem, &g->values[v]),
                                         cc->cores);
                if (g->values[v].role == ROTOR_ROLE_ACTIVATION) s->vendor_bytes += share;
                else s->vendor_idle += share;
            }
            s->idle_bytes = s->vendor_idle;
            continue;
        }
        const rotor_expr *e = &op->expr;
        rotor_op_elem d = rotor_op_elem_of(g, o);
        s->elem = d.bytes ? d.bytes : cc->elem;
        for (int t = 0; t < e->ntensors; t++) {
            int v = op->tensor_value[t];
            s->src[t] = t > 0 && rotor_compile_handoff_view(g, o, t, &s->view[t]) ? g->values[v].producer : -1;
            if (t == 0) s->kind[t] = T_OUTPUT;
            else if (v < 0 || g->values[v].role != ROTOR_ROLE_ACTIVATION) s->kind[t] = T_RESIDENT;
            else s->kind[t] = T_ACTIVATION;
            int64_t n = rotor_tensor_elements(e, t);
            int64_t bytes;
            if (!rotor_mul_i64(n, s->elem, &bytes))
                return rotor_fail(err, ROTOR_ERR_INPUT, "op '%s' (%s): tensor %s overflows 64 bits",
                                  op->name, op->type, e->tensors[t].name);
            s->even[t] = ceil_div(bytes, cc->cores);
        }
        rotor_status st = frontier_slot(cc, o, &s->frontier, err);
        if (st) return st;
    }
    cc->sess = calloc((size_t)(cc->nfr ? cc->nfr : 1), sizeof *cc->sess);
    cc->tcut = malloc((size_t)(cc->nfr ? cc->nfr : 1) * sizeof *cc->tcut);
    cc->slow = calloc((size_t)(cc->nfr ? cc->nfr : 1), sizeof *cc->slow);
    cc->ahead = calloc((size_t)(cc->nfr ? cc->nfr : 1), sizeof *cc->ahead);
    cc->ahead_claim = malloc((size_t)(cc->nfr ? cc->nfr : 1) * sizeof *cc->ahead_claim);
    if (!cc->sess || !cc->tcut || !cc->slow || !cc->ahead || !cc->ahead_claim) return rotor_nomem(err);
    for (int i = 0; i < cc->nfr; i++) {
        cc->ahead[i].last_t = INFINITY;
        atomic_init(&cc->ahead_claim[i], AHEAD_FREE);
    }
    double t0 = rotor_clock_s();
    rotor_status st = cache_load(cc, opt ? opt->frontier_ratio : 0, err);
    if (!st) st = frontiers_search(cc, opt, opt ? opt->frontier_ratio : 0, err);
    cc->search_s += rotor_clock_s() - t0;
    if (st) return st;
    *searches = cc->nfr;
    cc->cov = calloc((size_t)(cc->nfr ? cc->nfr : 1), sizeof *cc->cov);
    cc->none_upto = malloc((size_t)(cc->nfr ? cc->nfr : 1) * sizeof *cc->none_upto);
    if (!cc->cov || !cc->none_upto) return rotor_nomem(err);
    for (int i = 0; i < cc->nfr; i++)
        if ((st = frontier_know_init(cc, i, err))) return st;
    for (int o = 0; o < g->nops; o++) {
        op_state *s = &cc->st[o];
        if (s->frontier < 0) continue;
        const rotor_expr *e = &g->ops[o].expr;
        /* Algorithm 1, line 3: the memory-minimal idle layout over every
         * frontier plan and split (ties: the first plan, the largest k). */
        const rotor_frontier *f = &cc->fr[s->frontier];
        s->idle_bytes = INT64_MAX;
        for (int j = 0; j < f->n; j++) {
            int64_t rmax = 1;
            for (int t = 0; t < e->ntensors; t++)
                if (s->kind[t] == T_RESIDENT && f->v[j].info.rings[t] > rmax) rmax = f->v[j].info.rings[t];
            int64_t b = idle_bytes_of(s, e, &f->v[j], rmax);
            if (b < s->idle_bytes) {
                s->idle_bytes = b;
                s->idle_base = j;
                s->idle_k = rmax;
            }
        }
    }
    return ROTOR_OK;
}

/* The compiler's state for g on chip: one owner, compiler_new and
 * compiler_free.  The frontiers found go to the result (rotor_compile),
 * everything else is freed here. */
static rotor_status compiler_new(compiler *cc, const rotor_graph *g, const rotor_chip *chip,
                                 const rotor_compile_options *opt, rotor_error *err) {
    *cc = (compiler){.g = g, .chip = chip};
    cc->cores = rotor_chip_cores(chip);
    cc->sram = rotor_chip_sram(chip);
    cc->elem = chip->element_bytes;
    cc->solver = opt ? opt->solver : ROTOR_SOLVER_EXACT;
    cc->cache_dir = opt ? opt->cache_dir : NULL;
    cc->cache_limit = opt ? opt->cache_limit : 0;
    cc->cache_evict_later = opt && opt->cache_evict_later;
    cc->store = opt ? opt->plan_store : NULL;
    cc->ahead_wait = opt && opt->ahead_wait;
    cc->st = calloc((size_t)g->nops, sizeof *cc->st);
    if (!cc->st) return rotor_nomem(err);
    if (!(opt && opt->even_layout) && !(cc->hc = handoff_cache_new(chip))) return rotor_nomem(err);
    /* the caller's search buffers (options.search_pool), else our own */
    cc->spool = opt ? opt->search_pool : NULL;
    if (cc->spool) return ROTOR_OK;
    if (!(cc->spool = rotor_search_pool_new())) return rotor_nomem(err);
    cc->spool_own = true;
    return ROTOR_OK;
}

static void compiler_free(compiler *cc) {
    setup_memo_free(cc);
    compile_gticca_free(cc->gt);
    handoff_cache_free(cc->hc);
    free(cc->st);
    for (int i = 0; i < cc->nfr; i++) {
        free(cc->keys[i]);
        if (cc->cov) free(cc->cov[i]);
        if (cc->sess) rotor_search_session_close(cc->sess[i]);
        if (cc->pce) rotor_plancache_entry_free(&cc->pce[i]);
    }
    free(cc->pce);
    free(cc->sess);
    if (cc->spool_own) rotor_search_pool_free(cc->spool); /* after the sessions that borrow from it */
    free(cc->tcut);
    free(cc->slow);
    free(cc->ahead);
    free((void *)cc->ahead_claim);
    free(cc->cov);
    free(cc->none_upto);
    free(cc->keys);
    free(cc->fr_op);
    free(cc->fchip);
}

/* Every operator's live activation bytes (rotor_compile_liveness). */
static rotor_status compile_live(compiler *cc, rotor_error *err) {
    const rotor_graph *g = cc->g;
    int64_t *live = malloc(sizeof(int64_t) * (size_t)g->nops);
    if (!live) return rotor_nomem(err);
    rotor_status st = rotor_compile_liveness(g, cc->elem, cc->cores, live, NULL, err);
    for (int o = 0; !st && o < g->nops; o++) cc->st[o].live = live[o];
    free(live);
    return st;
}

/* Appends (idle, t) to the result's memory-time curve (room for *cap). */
static rotor_status curve_push(rotor_compile_result *out, int *cap, int64_t idle, double t, rotor_error *err) {
    if (out->ncurve == *cap) {
        rotor_curve_point *nc = realloc(out->curve, (size_t)*cap * 2 * sizeof *nc);
        if (!nc) return rotor_nomem(err);
        *cap *= 2;
        out->curve = nc;
    }
    out->curve[out->ncurve].idle_bytes = idle;
    out->curve[out->ncurve].total_s = t;
    out->ncurve++;
    return ROTOR_OK;
}

/* Is need nd answered without a search: by the plan cache (as
 * frontier_learn_run and frontier_tail ask it), or under a cap nothing
 * fits? */
static bool need_answered(const compiler *cc, const walk_need *nd) {
    const rotor_plancache_entry *pe = cc->pce ? &cc->pce[nd->fr] : NULL;
    if (default_ratio(&cc->g->ops[cc->fr_op[nd->fr]].expr) != ROTOR_COMPILE_FRONTIER_RATIO_COMPOUND) {
        const rotor_frontier *f = &cc->fr[nd->fr];
        int64_t below = f->v[f->n - 1].info.memory - 1;
        for (int a = 0; pe && a < pe->nanswers; a++)
            if (pe->answers[a].kind == ROTOR_PLANCACHE_TAIL && below <= pe->answers[a].cap) return true;
        return below <= 0;
    }
    rotor_candidate known;
    return nd->cap <= 0 ||
           (pe && (rotor_plancache_point(pe, nd->cap, &known) >= 0 ||
                   (nd->t < INFINITY && rotor_plancache_slow(pe, nd->cap, nd->t))));
}

static bool ahead_want(const compiler *cc, int i, int64_t *cap, double *t) {
    const rotor_frontier *f = &cc->fr[i];
    if (!cc->sess[i] || f->n == 0 ||
        default_ratio(&cc->g->ops[cc->fr_op[i]].expr) != ROTOR_COMPILE_FRONTIER_RATIO_COMPOUND)
        return false;
    int64_t below = f->v[f->n - 1].info.memory - 1;
    double last = cc->ahead[i].last_t;
    /* as pick_active: nothing leaner, or known slower than its time */
    if (below <= 0 || below <= cc->none_upto[i] || last <= cc->tcut[i] || slow_beyond(&cc->slow[i], below, last))
        return false;
    walk_need nd = {.op = cc->fr_op[i], .fr = i, .cap = below, .t = last};
    if (need_answered(cc, &nd)) return false;
    *cap = below;
    *t = last;
    return true;
}

/* The searches of b, each frontier's own (its points, covers, facts,
 * session and cache entry; a point inserted shifts only its operators'
 * indices), so they run in parallel, one search thread each; the results
 * do not depend on the order, the first failure in b's order is reported.
 * The pool of buffers takes a lock (op/search.c).  The needs the plan
 * cache answers are read first, in the calling thread: a warm compile's
 * batches then wake no thread (on a loaded machine a woken thread waits
 * for a time slice, milliseconds per batch). */
/* b's x-th search (b->search[x]) with `each` search threads. */
static void learn_one(compiler *cc, walk_batch *b, int x, int threads, int each, walk_pick *snap) {
    int k = b->search[x];
    const walk_need *nd = &b->need[k];
    b->st[k] = frontier_learn_run(cc, nd->fr, nd->cap, nd->t, threads, each, snap, &b->hits[k], &b->err[k]);
}

static rotor_status learn_batch(compiler *cc, walk_batch *b, int threads, walk_pick *snap, rotor_error *err) {
    if (b->n == 1) return frontier_learn(cc, b->need[0].fr, b->need[0].cap, b->need[0].t, threads, snap, err);
    int nthreads = threads > 0 ? threads : omp_get_max_threads();
    double t0 = rotor_clock_s();
    int nsearch = 0;
    for (int k = 0; k < b->n; k++) {
        const walk_need *nd = &b->need[k];
        b->hits[k] = 0;
        b->st[k] = ROTOR_OK;
        if (need_answered(cc, nd))
            b->st[k] = frontier_learn_run(cc, nd->fr, nd->cap, nd->t, threads, 1, snap, &b->hits[k], &b->err[k]);
        else
            b->search[nsearch++] = k;
    }
    /* one search left: every thread on it, as frontier_learn */
    int team = nthreads < nsearch ? nthreads : nsearch > 1 ? nsearch : 1, each = nsearch == 1 ? nthreads : 1;
    if ((cc->beside || cc->ahead_team) && team > 1) {
        /* in the team of GraphTurbo's instance compiles (walk_beside) or
         * of the searches ahead (walk_ahead): a task each, the walk's
         * thread running its own while it waits */
        for (int x = 0; x < nsearch; x++) {
#pragma omp task
            learn_one(cc, b, x, threads, 1, snap);
        }
#pragma omp taskwait
    } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) if (team > 1)
        for (int x = 0; x < nsearch; x++) learn_one(cc, b, x, threads, each, snap);
    }
    cc->search_s += rotor_clock_s() - t0;
    rotor_status st = ROTOR_OK;
    for (int k = 0; k < b->n; k++) {
        cc->cache_hits += b->hits[k];
        if (!st && b->st[k]) {
            st = b->st[k];
            if (err) *err = b->err[k];
        }
    }
    return st;
}

static void walk_batch_free(walk_batch *b) {
    free(b->need);
    free(b->unknown);
    free(b->claimed);
    free(b->saved);
    free(b->st);
    free(b->err);
    free(b->hits);
    free(b->search);
}

static rotor_status walk_batch_new(const compiler *cc, bool serial, walk_batch *b, rotor_error *err) {
    size_t nf = (size_t)(cc->nfr ? cc->nfr : 1), no = (size_t)cc->g->nops;
    *b = (walk_batch){.max = serial ? 1 : (int)nf};
    b->need = malloc(nf * sizeof *b->need);
    b->unknown = malloc(no);
    b->claimed = malloc(nf);
    b->saved = malloc(no * sizeof *b->saved);
    b->st = malloc(nf * sizeof *b->st);
    b->err = malloc(nf * sizeof *b->err);
    b->hits = malloc(nf * sizeof *b->hits);
    b->search = malloc(nf * sizeof *b->search);
    if (b->need && b->unknown && b->claimed && b->saved && b->st && b->err && b->hits && b->search) return ROTOR_OK;
    walk_batch_free(b);
    return rotor_nomem(err);
}

/* Where the greedy walk stands: the idle memory, the best schedule and its
 * time, and the first point's misfit (the message when nothing fits). */
typedef struct walk_state {
    int64_t idle_total;
    walk_pick *best;
    double best_t;
    int first_misfit;
    int64_t first_cap;
    int cap_curve; /* out->curve's room */
    bool lone;     /* the walk left the team of walk_ahead for a batch of one search */
    unsigned char *jumped; /* [nops]: the operator's idle layout has jumped (best_jump); NULL: no jumps */
} walk_state;

/* Does batch b search exactly one frontier (the others answered without
 * a search: learn_batch's lone search, run on every thread)? */
static bool batch_lone(const compiler *cc, const walk_batch *b) {
    int n = 0;
    for (int k = 0; k < b->n && n < 2; k++) n += !need_answered(cc, &b->need[k]);
    return n == 1;
}

/* Operator o's idle layout becomes split k of frontier point base, holding
 * bytes a core: a move's (base, its active plan) or a jump's (k 1). */
static void take_idle(compiler *cc, walk_state *w, int o, int base, int64_t k, int64_t bytes) {
    w->idle_total += bytes - cc->st[o].idle_bytes;
    cc->st[o].idle_bytes = bytes;
    cc->st[o].idle_base = base;
    cc->st[o].idle_k = k;
}

/* Algorithm 1: keep the best end-to-end time over the greedy walk, each
 * step moving one operator's idle layout to its best trade.  In the team
 * of walk_ahead it returns at a batch of one search (w->lone), which
 * walk_ahead runs before it walks on. */
static rotor_status compile_walk(compiler *cc, int threads, walk_batch *b, rotor_compile_result *out,
                                 walk_state *w, rotor_error *err) {
    if (!out->curve) {
        w->cap_curve = 64;
        out->curve = malloc((size_t)w->cap_curve * sizeof *out->curve);
        if (!out->curve) return rotor_nomem(err);
    }
    rotor_status st = ROTOR_OK;
    while (!st) {
        int misfit;
        int64_t cap_of = 0;
        double t = assign_active(cc, w->idle_total, &misfit, &cap_of, b);
        if (cc->hst) break;
        if (b->n > 0 && cc->ahead_team && batch_lone(cc, b)) {
            /* one search: walk_ahead runs it outside the team, on every
             * thread, as learn_batch does */
            w->lone = true;
            return ROTOR_OK;
        }
        if (b->n > 0) {
            /* the points found so far cannot tell: search under the caps */
            st = learn_batch(cc, b, threads, w->best, err);
            out->searches += b->n;
            ahead_start(cc);
            continue;
        }
        if (out->ncurve == 0) {
            w->first_misfit = misfit;
            w->first_cap = cap_of;
        }
        if ((st = curve_push(out, &w->cap_curve, w->idle_total, t, err))) break;
        if (t < w->best_t) {
            w->best_t = t;
            for (int o = 0; o < cc->g->nops; o++) {
                const op_state *s = &cc->st[o];
                w->best[o] = (walk_pick){s->active, s->idle_base, s->idle_k, s->idle_bytes};
            }
        }
        if (misfit >= 0) break; /* more idle memory leaves even less room */
        int mo;
        int64_t mk, mb;
        if (!best_move(cc, w->idle_total, &mo, &mk, &mb) || cc->hst) {
            int mj;
            if (cc->hst || !w->jumped || !best_jump(cc, w->idle_total, w->jumped, &mo, &mj, &mb)) break;
            w->jumped[mo] = 1;
            out->jumps++;
            take_idle(cc, w, mo, mj, 1, mb);
            continue;
        }
        take_idle(cc, w, mo, cc->st[mo].active, mk, mb);
    }
    if (!st && cc->hst) {
        if (err) *err = cc->herr;
        st = cc->hst;
    }
    return st;
}

/* The walk in a team whose other threads search ahead ("Searches ahead"),
 * when it has more than one thread and searches in batches.  A batch of
 * one search runs outside the team, on every thread (a session's pass 2
 * runs in parallel; in the team it would have one thread): the walk leaves
 * the team for it, and the searches ahead stop until it is done. */
static rotor_status walk_ahead(compiler *cc, int threads, walk_batch *b, rotor_compile_result *out, walk_state *w,
                               rotor_error *err) {
    int team = threads > 0 ? threads : omp_get_max_threads();
    if (team < 2 || b->max <= 1) return compile_walk(cc, threads, b, out, w, err);
    rotor_status st = ROTOR_OK;
    for (;;) {
        w->lone = false;
        atomic_store(&cc->ahead_stop, false);
        atomic_store(&cc->ahead_cancel, false);
        atomic_store(&cc->ahead_live, false);
#pragma omp parallel num_threads(team)
#pragma omp single
        {
            /* a team of one (nested in another): nothing to search beside */
            cc->ahead_team = omp_get_num_threads() > 1;
            ahead_start(cc);
            st = compile_walk(cc, threads, b, out, w, err);
            atomic_store(&cc->ahead_stop, true);
            atomic_store(&cc->ahead_cancel, true);
        }
        cc->ahead_team = false;
        if (st || !w->lone) return st;
        if ((st = learn_batch(cc, b, threads, w->best, err))) return st;
        out->searches += b->n;
    }
}

/* The walk, with GraphTurbo's instance compiles beside it (gticca.c,
 * options.graphturbo): the simplified graph's walk batches 1.7 searches a
 * round on ResNet-50 (a convolution whose input comes by hand-off from one
 * still waiting on a search waits a round), so its second thread mostly
 * waits; the instance compiles need nothing of the walk.  One team: this
 * thread walks (its searches' own parallel loops, nested, run on it
 * alone), the instance compiles run as tasks on the others, and a batch of
 * several searches becomes tasks too (learn_batch), run by whichever
 * thread is free.  The walk's result does not depend on its threads, nor
 * the instance compiles' on their order (compile_gticca_spawn), so the
 * plan is that of one thread. */
static rotor_status walk_beside(compiler *cc, int threads, walk_batch *b, rotor_compile_result *out, walk_state *w,
                                rotor_error *err) {
    int team = compile_gticca_team(cc, threads);
    if (team < 2) return walk_ahead(cc, threads, b, out, w, err);
    rotor_status st = ROTOR_OK;
    cc->beside = true;
#pragma omp parallel num_threads(team)
#pragma omp single
    {
        /* from a task: the instance compiles are then not the walk's
         * thread's children, which its taskwait would run */
#pragma omp task
        compile_gticca_spawn(cc, team);
        st = compile_walk(cc, threads, b, out, w, err);
    }
    cc->beside = false;
    return st;
}

/* No point of the walk fits: the shortfall is against the first misfit's
 * leanest plan, the end of its whole frontier, searched now point by point
 * if need be. */
static rotor_status compile_nofit(compiler *cc, int threads, rotor_compile_result *out, const walk_state *w,
                                  rotor_error *err) {
    rotor_status st = ROTOR_OK;
    int fi = cc->st[w->first_misfit].frontier;
    int64_t first_short = cc->st[w->first_misfit].vendor_bytes - w->first_cap;
    while (fi >= 0 && !st) {
        rotor_frontier *f = &cc->fr[fi];
        int64_t below = f->v[f->n - 1].info.memory - 1;
        if (below <= cc->none_upto[fi]) break;
        st = frontier_learn(cc, fi, below, INFINITY, threads, NULL, err);
        out->searches++;
    }
    if (st) return st;
    if (fi >= 0) first_short = cc->fr[fi].v[cc->fr[fi].n - 1].info.memory - w->first_cap;
    const rotor_op *op = &cc->g->ops[w->first_misfit];
    return rotor_fail(err, ROTOR_ERR_NOFIT,
                      "the model does not fit in %lld bytes of SRAM per core: op '%s' (%s) "
                      "lacks %lld bytes per core for its leanest plan (idle %lld B of every "
                      "operator, %lld B of live activations)",
                      (long long)cc->sram, op->name, op->type, (long long)first_short,
                      (long long)w->idle_total, (long long)cc->st[w->first_misfit].live);
}

rotor_status rotor_compile(const rotor_graph *g, const rotor_chip *chip,
                           const rotor_compile_options *opt, rotor_compile_result *out,
                           rotor_error *err) {
    memset(out, 0, sizeof *out);
    out->solver = opt ? opt->solver : ROTOR_SOLVER_EXACT;
    if (g->nops == 0) return rotor_fail(err, ROTOR_ERR_INPUT, "compile: the graph '%s' has no operators", g->name);
    if (opt && opt->pipeline) {
        rotor_status pst = compile_segments_check(chip, err);
        if (pst) return pst;
    }
    if (opt && opt->graphturbo) {
        rotor_status gst = compile_gticca_check(chip, err);
        if (gst) return gst;
    }
    /* T10's plans price one chip's exchange: over several chips the
     * simulator charges the crossing they leave out (+189 % on mlp-l over
     * ipu-pod4's 4 chips, +254 % on a ViT-Base layer; found by an audit
     * helper, 2026-12-03).  Several chips are scheduled by tensor
     * parallelism, each chip's shard planned by T10 (hbm/schedule.h), which
     * prices what crosses. */
    rotor_status one = rotor_chip_require_one(chip, "compile", err);
    if (one) return one;
    int threads = opt ? opt->threads : 0;
    double t_start = rotor_clock_s(), t_walk = 0, t_hand = 0, t_pipe = 0;
    compiler cc;
    walk_state w = {.best_t = INFINITY, .first_misfit = -1};
    rotor_status st = compiler_new(&cc, g, chip, opt, err);
    if (st) goto done;
    if (!(out->ops = calloc((size_t)g->nops, sizeof *out->ops))) {
        st = rotor_nomem(err);
        goto done;
    }
    if ((st = prepare(&cc, opt, &out->searches, err)) || (st = compile_live(&cc, err))) goto done;
    for (int o = 0; o < g->nops; o++) w.idle_total += cc.st[o].idle_bytes;
    /* cleared: frontier_learn shifts the snapshot's indices before the
     * walk's first point fills it (valgrind saw those reads) */
    if (!(w.best = calloc((size_t)g->nops, sizeof *w.best)) ||
        (opt && opt->walk_jumps && !(w.jumped = calloc((size_t)g->nops, 1)))) {
        st = rotor_nomem(err);
        goto done;
    }
    walk_batch batch;
    bool memo = !(opt && opt->walk_unmemoised);
    if ((memo && !(cc.memo = calloc((size_t)g->nops, sizeof *cc.memo))) ||
        !(cc.fr_gen = calloc((size_t)(cc.nfr ? cc.nfr : 1), sizeof *cc.fr_gen))) {
        st = rotor_nomem(err);
        goto done;
    }
    if (opt && opt->graphturbo && (st = compile_gticca_begin(&cc, opt, err))) goto done;
    if ((st = walk_batch_new(&cc, opt && opt->serial_walk, &batch, err))) goto done;
    t_walk = rotor_clock_s();
    double search_before = cc.search_s;
    st = walk_beside(&cc, threads, &batch, out, &w, err);
    walk_batch_free(&batch);
    setup_memo_free(&cc); /* the walk's: segments and GraphTurbo price setups of copies of the states */
    /* the walk less its own searches and the hand-offs it priced */
    t_walk = rotor_clock_s() - t_walk - (cc.search_s - search_before) - handoff_cache_seconds(cc.hc);
    if (st) goto done;
    if (!isfinite(w.best_t)) {
        st = compile_nofit(&cc, threads, out, &w, err);
        goto done;
    }
    for (int o = 0; o < g->nops; o++) {
        cc.st[o].active = w.best[o].active;
        cc.st[o].idle_base = w.best[o].idle_base;
        cc.st[o].idle_k = w.best[o].idle_k;
        cc.st[o].idle_bytes = w.best[o].idle_bytes;
    }
    out->nops = g->nops;
    fill_schedule(&cc, out);
    t_hand = rotor_clock_s();
    if (!cc.hst && chip->topology == ROTOR_TOPO_MESH) {
        mesh_setup *mx = calloc((size_t)g->nops + 1, sizeof *mx);
        rotor_hashtab *tab = NULL;
        st = mx ? rotor_hashtab_new(sizeof(mesh_setup), 64, NULL, &tab, err) : rotor_nomem(err);
        int64_t work = 0;
        if (!st) st = mesh_setups(&cc, out, mx, tab, &work, err);
        if (!st && !cc.hst && !(opt && opt->mesh_bound_plans)) {
            out->mesh_refined = true;
            st = mesh_refine(&cc, out, mx, tab, MESH_REFINE_WORK * (work > 0 ? work : 1), &out->mesh_moves,
                             &out->mesh_stopped, err);
        }
        rotor_hashtab_free(tab);
        free(mx);
    }
    t_hand = rotor_clock_s() - t_hand;
    if (cc.hst) {
        if (err) *err = cc.herr;
        st = cc.hst;
    }
    if (!st && opt && opt->pipeline) {
        t_pipe = rotor_clock_s();
        double hand_before = handoff_cache_seconds(cc.hc);
        st = compile_segments(&cc, opt, out, err);
        t_pipe = rotor_clock_s() - t_pipe;
        t_hand -= handoff_cache_seconds(cc.hc) - hand_before; /* the segments' own, counted in t_pipe */
    }
    if (!st && opt && opt->graphturbo) st = compile_gticca(&cc, opt, out, err);
done:
    free(w.best);
    free(w.jumped);
    cache_store(&cc);
    out->cache_hits = cc.cache_hits;
    out->cache_damaged = cc.cache_damaged;
    for (int i = 0; cc.ahead && i < cc.nfr; i++) out->searches_ahead += cc.ahead[i].used;
    out->profile = (rotor_compile_profile){
        .search_s = cc.search_s,
        .handoff_s = handoff_cache_seconds(cc.hc) + t_hand,
        .reconcile_s = fmax(0, t_walk),
        .pipeline_s = t_pipe,
        .total_s = rotor_clock_s() - t_start,
    };
    out->frontiers = cc.fr; /* the result's from here */
    out->nfrontiers = cc.nfr;
    compiler_free(&cc);
    if (st) rotor_compile_result_free(out);
    return st;
}

void rotor_compile_result_free(rotor_compile_result *r) {
    if (!r) return;
    for (int i = 0; i < r->nfrontiers; i++) free(r->frontiers[i].v);
    free(r->frontiers);
    free(r->ops);
    free(r->curve);
    for (int i = 0; i < r->nsegments; i++) rotor_segment_free(&r->segments[i]);
    free(r->segments);
    rotor_gticca_result_free(&r->gticca);
    memset(r, 0, sizeof *r);
}
