/* induction.c — Elk's two-level inductive operator scheduling (Elk §4.2,
 * Lemma 4.1, Theorem 4.2): for one preload order, backwards from the last
 * operator, each operator's execution window tries every preload number,
 * fits the window with the cost-aware allocation (allocation.c, §4.3) and
 * keeps the number with the least current-to-end time.  The times are
 * as-late-as-possible estimates relative to the end; the reported timing is
 * recomputed forwards from the final choices (timing.c). */
#include "preloadint.h"

void preload_dyn_ws_free(dyn_ws *w) {
    free(w->tse), free(w->tsp), free(w->lo), free(w->inM), free(w->mlist), free(w->mpos), free(w->steppers);
    free(w->log);
    memset(w, 0, sizeof *w);
}

bool preload_dyn_ws_alloc(dyn_ws *w, const rotor_preload_model *m) {
    size_t n = (size_t)m->n;
    memset(w, 0, sizeof *w);
    w->tse = malloc(sizeof(int64_t) * (n + 1));
    w->tsp = malloc(sizeof(int64_t) * (n + 1));
    w->lo = malloc(sizeof(int) * n);
    w->inM = malloc(n);
    w->mlist = malloc(sizeof(int) * n);
    w->mpos = malloc(sizeof(int) * n);
    w->steppers = malloc(sizeof(int) * n);
    w->log = malloc(sizeof(logent) * (size_t)m->log_cap);
    if (w->tse && w->tsp && w->lo && w->inM && w->mlist && w->mpos && w->steppers && w->log) return true;
    preload_dyn_ws_free(w);
    return false;
}

/* The window of operator i before any preload number is tried: M_i = { y >
 * i : pos(y) < lo_i } from M_{i+1}, and the as-late-as-possible preload
 * starts of positions [lo, hi). */
static void window_enter(const rotor_preload_model *m, const sched *s, dyn_ws *w, int i, int hi) {
    const int n = m->n, lo = w->lo[i];
    const int *order = s->order, *pos = s->pos;
    int lo_next = i == n - 1 ? n : w->lo[i + 1];
    for (int k = lo; k < lo_next; k++) {
        int y = order[k];
        if (!w->inM[y]) continue;
        int at = w->mpos[y], last = w->mlist[--w->mn];
        w->mlist[at] = last;
        w->mpos[last] = at;
        w->inM[y] = 0;
    }
    if (i + 1 < n && pos[i + 1] < lo) {
        w->inM[i + 1] = 1;
        w->mpos[i + 1] = w->mn;
        w->mlist[w->mn++] = i + 1;
    }
    for (int k = hi - 1; k >= lo; k--) {
        int y = order[k];
        int64_t tep = min64(w->tse[y], w->tsp[k + 1]);
        w->tsp[k] = tep - m->ops[y].plans[s->plan[y]].states[s->state[y]].preload_ps;
    }
}

/* The allocation window of operator i with its fastest plan and M_i
 * preloaded; the steppers are the window's operators that can still shrink. */
static alloc_window window_start(const rotor_preload_model *m, const sched *s, dyn_ws *w, int i) {
    const pl_op *o = &m->ops[i];
    alloc_window a = {.i = i, .pe = &o->plans[o->pareto[0]]};
    w->nsteppers = 0;
    for (int t = 0; t < w->mn; t++) {
        int j = w->mlist[t];
        a.resid += psp(m, s->plan, j, s->state[j]);
        a.resid_min += psp(m, s->plan, j, last_state(m, s->plan, j));
        if (s->state[j] < last_state(m, s->plan, j)) w->steppers[w->nsteppers++] = j;
    }
    a.nx_in = i + 1 < m->n && s->pos[i + 1] < w->lo[i];
    a.pin = a.nx_in ? psp(m, s->plan, i + 1, s->state[i + 1]) : 0;
    a.L = exec_len(m, a.pe, &a.pe->states[0], a.pin, NULL);
    return a;
}

/* One more preload in the window: the one at position qq - 1. */
static void window_add(const rotor_preload_model *m, const sched *s, dyn_ws *w, alloc_window *a, int qq) {
    int y = s->order[qq - 1];
    a->resid += psp(m, s->plan, y, s->state[y]);
    a->resid_min += psp(m, s->plan, y, last_state(m, s->plan, y));
    if (s->state[y] < last_state(m, s->plan, y)) w->steppers[w->nsteppers++] = y;
    if (y == a->i + 1) {
        a->nx_in = true;
        a->pin = psp(m, s->plan, y, s->state[y]);
        a->L = exec_len(m, a->pe, &a->pe->states[0], a->pin, NULL);
    }
}

rotor_status preload_dyn_run(const rotor_preload_model *m, sched *s, dyn_ws *w, counters *cnt, rotor_error *err) {
    const int n = m->n;
    const int64_t S = m->chip.sram_bytes;
    int mx = -1;
    for (int i = 0; i < n; i++) {
        mx = s->pos[i] > mx ? s->pos[i] : mx;
        w->lo[i] = mx + 1;
        s->state[i] = 0;
        s->plan[i] = m->ops[i].pareto[0];
        w->inM[i] = 0;
        w->mpos[i] = -1;
    }
    w->mn = 0;
    w->tse[n] = 0;      /* T_end */
    w->tsp[n] = INF_PS; /* no preload after the last */
    int qnext = n;
    for (int i = n - 1; i >= 0; i--) {
        const int lo = w->lo[i], hi = qnext;
        window_enter(m, s, w, i, hi);
        const pl_op *o = &m->ops[i];
        alloc_window a = window_start(m, s, w, i);
        bool have = false;
        int best_q = lo, best_nlog = 0;
        int64_t best_obj = 0, best_L = 0, best_tee = 0, tried = 0;
        for (int qq = lo; qq <= hi; qq++) {
            if (qq > lo) window_add(m, s, w, &a, qq);
            if (o->espace_min + a.resid_min > S) break; /* and for every larger p */
            cnt->calls++;
            preload_alloc_fit(m, s, w, &a, cnt);
            if (a.pe->in.space_bytes + a.resid > S) break;
            if (++tried > cnt->pnum_max) cnt->pnum_max = tried; /* Table 2's K */
            /* Theorem 4.2: T_e-exe(i) = min(T_s-exe(i+1), T_s-pre(i+p+1)) */
            int64_t tee = min64(w->tse[i + 1], w->tsp[qq]);
            int64_t obj = a.L + a.ddist - tee; /* current-to-end, with the cost of shrunk states */
            if (!have || obj <= best_obj) {
                have = true;
                best_obj = obj;
                best_q = qq;
                best_nlog = a.nlog;
                best_L = a.L;
                best_tee = tee;
            }
        }
        if (!have)
            return rotor_fail(err, ROTOR_ERR_NOFIT,
                              "op %d (%s): does not fit with the %d operators the preload order forces on chip "
                              "with it",
                              i, o->name, lo - (i + 1));
        /* undo the steps of the preload numbers after the one kept */
        while (a.nlog > best_nlog) {
            logent le = w->log[--a.nlog];
            if (le.op == i) a.e = le.old;
            else s->state[le.op] = le.old;
        }
        s->plan[i] = o->pareto[a.e];
        s->q[i] = best_q;
        w->tse[i] = best_tee - best_L;
        qnext = best_q;
    }
    return ROTOR_OK;
}
