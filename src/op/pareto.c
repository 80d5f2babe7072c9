/* pareto.c — the Pareto frontier of (time, memory per core) over plans
 * (T10 §4.3.1 keeps it for every operator; Algorithm 1 walks it): the
 * archive that seeds each search with plans earlier ones costed, the front
 * of the single-pass search, and the epsilon-constraint walk. */
#include "searchint.h"

archive *search_archive_new(void) { return calloc(1, sizeof(archive)); }

void search_archive_free(archive *ar) {
    if (!ar) return;
    free(ar->v);
    free(ar);
}

void search_archive_add(archive *ar, const rotor_candidate *cand) {
    int64_t m = cand->info.memory;
    double t = cand->cost.total;
    /* the last entry with memory <= m dominates cand if it is no slower */
    int lo = 0, hi = ar->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ar->v[mid].info.memory <= m) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0 && ar->v[lo - 1].cost.total <= t) return;
    /* drop the entries cand dominates: memory >= m and time >= t */
    int at = lo > 0 && ar->v[lo - 1].info.memory == m ? lo - 1 : lo;
    int end = at;
    while (end < ar->n && ar->v[end].cost.total >= t) end++;
    if (end == at && ar->n == ar->cap) {
        int ncap = ar->cap ? 2 * ar->cap : 8;
        if (ncap > ARCHIVE_MAX) ncap = ARCHIVE_MAX;
        rotor_candidate *nv = ncap > ar->cap ? realloc(ar->v, (size_t)ncap * sizeof *nv) : NULL;
        if (!nv) { /* full, or no room to grow: keep what is there */
            ar->dropped = true;
            return;
        }
        ar->v = nv;
        ar->cap = ncap;
    }
    memmove(&ar->v[at + 1], &ar->v[end], (size_t)(ar->n - end) * sizeof *ar->v);
    ar->n -= end - at - 1;
    ar->v[at] = *cand;
}



bool search_front_add(const rotor_expr *e, front *f, const rotor_candidate *cand) {
    int64_t m = cand->info.memory;
    double t = cand->cost.total;
    int lo = front_upto(f, m);
    if (lo > 0) {
        const rotor_candidate *x = &f->v[lo - 1];
        if (x->cost.total < t) return false;
        if (x->cost.total == t &&
            (x->info.memory < m || rotor_candidate_compare(e, x, cand) <= 0)) return false;
    }
    /* cand stays: drop what it beats (memory >= m and time >= t) */
    int at = lo > 0 && f->v[lo - 1].info.memory == m ? lo - 1 : lo;
    int end = at;
    while (end < f->n && f->v[end].cost.total >= t) end++;
    if (end == at) {
        if (f->n == f->cap) {
            int ncap = f->cap ? 2 * f->cap : 64;
            rotor_candidate *nv = realloc(f->v, (size_t)ncap * sizeof *nv);
            if (!nv) {
                f->oom = true;
                return false;
            }
            f->v = nv;
            f->cap = ncap;
        }
        memmove(&f->v[at + 1], &f->v[at], (size_t)(f->n - at) * sizeof *f->v);
        f->n++;
    } else if (end > at + 1) {
        memmove(&f->v[at + 1], &f->v[end], (size_t)(f->n - end) * sizeof *f->v);
        f->n -= end - at - 1;
    }
    f->v[at] = *cand;
    return true;
}

/* The region of a node of the step search under its joint floor (steps.c,
 * "The joint floor"): every plan below it has memory M <= cap, M >= m, and
 * time T >= t and T >= k - lam M, so T >= tmin(M) = max(t, k - lam M),
 * which does not rise as M grows.  The front read by memory ascending is a
 * staircase: entry j (memory m_j, time t_j) beats, strictly in time with no
 * more memory, every plan with M in [m_j, m_{j+1}) and T > t_j (1 + SLACK);
 * in that interval tmin is least at its last integer M = m_{j+1} - 1 (memory
 * is an integer).  So the region is covered, interval by interval from the
 * one holding m up to the cap, when each interval's least tmin exceeds its
 * entry's time with the slack, or exceeds the time cap with the slack (no
 * such plan is offered: search_offer turns away every plan slower than the
 * cap).  An interval below the front's first entry has no entry: only the
 * time cap covers it.  The slack also covers the rounding of k (a sum of a
 * few doubles, each rounded once, relative error far below 1e-9): a plan so
 * cut is slower than the entry, or than the cap, whatever the rounding, so
 * no frontier point and no tie of one is lost. */
bool search_front_dominates_joint(const worker *w, double t, int64_t m, double lam, double k) {
    const front *f = &w->front;
    const ctx *c = w->c;
    double over = c->time_cap * (1 + SLACK);
    int j = front_upto(f, m) - 1;
    int64_t lo = m;
    for (;;) {
        int64_t hi = j + 1 < f->n && f->v[j + 1].info.memory <= c->cap ? f->v[j + 1].info.memory : c->cap + 1;
        if (lo < hi) {
            double tmin = k - lam * (double)(hi - 1);
            if (tmin < t) tmin = t;
            bool beaten = j >= 0 && f->v[j].cost.total * (1 + SLACK) < tmin;
            if (!beaten && !(tmin > over)) return false;
        }
        if (hi > c->cap) return true;
        lo = hi;
        j++;
    }
}

/* ---- The shared log ------------------------------------------------------
 *
 * Pass 2 of a single-pass frontier search runs its F_op on several threads,
 * each pruning by its own front (search_prune: a node goes when a front
 * entry with no more memory than its memory floor is faster than its time
 * floor, with the slack).  Before, each thread's front held only the plans
 * it found itself, so two threads each searched what the other's plans
 * would have cut.  Now every plan that joins a worker's front is also
 * appended to the search's log, and each worker, before each F_op, adds to
 * its own front the plans the others logged since it last looked.
 *
 * The frontier does not change.  A node is pruned only when a plan that
 * exists (some thread costed it) beats every plan below the node strictly
 * in time with no more memory: none of them can be on the frontier, nor tie
 * a frontier point.  The plan that cut it, or one that beats it, reaches
 * the merged front (merge_workers adds every worker's front to the seed's),
 * and search_front_add keeps exactly the plans that no other plan beats,
 * ties in (time, memory) going to the first in plan order, whatever the
 * order they arrive in.  So the merged front is the frontier of all plans,
 * as it was when each thread pruned alone; only how much each thread
 * searches depends on the timing.  tests/test_search.c compares 2-thread
 * frontiers with the brute force's. */

bool search_front_log_init(front_log *g) {
    memset(g, 0, sizeof *g);
    omp_init_lock(&g->lock);
    return true;
}

void search_front_log_free(front_log *g) {
    omp_destroy_lock(&g->lock);
    free(g->v);
    free(g->who);
    g->v = NULL;
    g->who = NULL;
}

/* cand joined w's front: the other workers may prune by it. */
void search_front_log_push(worker *w, const rotor_candidate *cand) {
    front_log *g = w->c->flog;
    omp_set_lock(&g->lock);
    if (g->n == g->cap) {
        int64_t ncap = g->cap ? 2 * g->cap : 256;
        rotor_candidate *nv = realloc(g->v, (size_t)ncap * sizeof *nv);
        if (nv) g->v = nv;
        int *nw = nv ? realloc(g->who, (size_t)ncap * sizeof *nw) : NULL;
        if (nw) g->who = nw;
        if (nv && nw) g->cap = ncap;
    }
    /* a log that cannot grow only prunes less: every front keeps its own */
    if (g->n < g->cap) {
        g->v[g->n] = *cand;
        g->who[g->n++] = w->tid;
    }
    omp_unset_lock(&g->lock);
}

/* The plans the other workers logged since w last looked, into w's front. */
void search_front_log_pull(worker *w) {
    front_log *g = w->c->flog;
    omp_set_lock(&g->lock);
    for (; w->log_seen < g->n; w->log_seen++)
        if (g->who[w->log_seen] != w->tid) search_front_add(w->c->e, &w->front, &g->v[w->log_seen]);
    omp_unset_lock(&g->lock);
}

/* The frontier by the epsilon-constraint method: the fastest plan (ties:
 * least memory, then plan order) is the first point; each next point is the
 * fastest plan with strictly less memory than the last, until none fits.
 * Every point so found is Pareto-optimal, and every frontier point is found
 * (its memory lies below the previous point's, and nothing faster fits
 * there).  Each step is one exact search with a tighter cap, whose memory
 * bounds then prune hard.  The single pass (ctx.frontier) instead keeps the
 * front of every plan it costs and prunes a node only when a front entry
 * with no more memory than the node's floor is faster than its time bound;
 * no frontier point is ever so dominated, and the front read from its fast
 * end is the same list.  pareto_single_pass picks between them. */
rotor_status search_pareto_epsilon(ctx *c, int nthreads, rotor_search_result *out, rotor_search_stats *st,
                            rotor_error *err) {
    int n = 0, capn = 16;
    /* from here on, searches keep what they cost to seed the next one */
    c->spare = search_archive_new();
    rotor_candidate *v = malloc((size_t)capn * sizeof *v);
    if (!v || !c->spare) {
        free(v);
        return rotor_nomem(err);
    }
    v[n++] = out->best;
    for (;;) {
        c->cap = v[n - 1].info.memory - 1;
        rotor_candidate next;
        bool found = false;
        if (!search_once(c, nthreads, &next, &found, st, NULL)) {
            free(v);
            return rotor_nomem(err);
        }
        if (!found) break;
        if (n == capn) {
            capn *= 2;
            rotor_candidate *nv = realloc(v, (size_t)capn * sizeof *v);
            if (!nv) {
                free(v);
                return rotor_nomem(err);
            }
            v = nv;
        }
        v[n++] = next;
    }
    out->pareto = v;
    out->npareto = n;
    return ROTOR_OK;
}
