/* allocation.c — Elk's cost-aware on-chip memory allocation (Elk §4.3),
 * one step at a time inside the induction's window (induction.c).
 *
 * When operator i's execution and the preloads its window holds do not fit
 * the SRAM, space is taken back one step at a time, always the step with
 * the most bytes saved per picosecond added: operator i moves to a leaner
 * plan of its frontier, or an operator preloaded in the window moves to its
 * next preload state (fewer bytes at preload, more distribution later).  A
 * step that adds no time beats any that does.  Each step is logged, so the
 * induction can undo the steps of preload numbers it does not keep. */
#include "preloadint.h"

/* Whether step (s1 bytes saved, t1 ps added, op o1) beats step 2 by the
 * ratio of §4.3; a step that adds no time beats any that does.  Ties: more
 * bytes, then the lower op. */
static bool better_step(int64_t s1, int64_t t1, int o1, int64_t s2, int64_t t2, int o2) {
    bool f1 = t1 <= 0, f2 = t2 <= 0;
    if (f1 != f2) return f1;
    if (f1) {
        if (t1 != t2) return t1 < t2;
    } else {
        __int128 a = (__int128)s1 * t2, b = (__int128)s2 * t1;
        if (a != b) return a > b;
    }
    if (s1 != s2) return s1 > s2;
    return o1 < o2;
}

/* The best step of window a (*who: i for its own plan, else the preloaded
 * operator; -1: none), bytes saved *bs, time added *bt. */
static void best_step(const rotor_preload_model *m, const sched *s, const dyn_ws *w, const alloc_window *a, int *who,
                      int64_t *bs, int64_t *bt) {
    const pl_op *o = &m->ops[a->i];
    *who = -1;
    *bs = *bt = 0;
    if (a->e + 1 < o->npareto) {
        const pl_plan *nx = &o->plans[o->pareto[a->e + 1]];
        *who = a->i;
        *bs = a->pe->in.space_bytes - nx->in.space_bytes;
        *bt = exec_len(m, nx, &nx->states[0], a->pin, NULL) - a->L;
    }
    for (int t = 0; t < w->nsteppers; t++) {
        int j = w->steppers[t], c = s->state[j];
        if (c >= last_state(m, s->plan, j)) continue;
        const rotor_preload_state *x = &m->ops[j].plans[s->plan[j]].states[c], *y = x + 1;
        int64_t ds = x->space_bytes - y->space_bytes, dt = y->dist_ps - x->dist_ps;
        if (a->nx_in && j == a->i + 1) dt += exec_len(m, a->pe, &a->pe->states[0], y->space_bytes, NULL) - a->L;
        if (*who < 0 || better_step(ds, dt, j, *bs, *bt, *who)) {
            *who = j;
            *bs = ds;
            *bt = dt;
        }
    }
}

void preload_alloc_fit(const rotor_preload_model *m, sched *s, dyn_ws *w, alloc_window *a, counters *cnt) {
    const int64_t S = m->chip.sram_bytes;
    const pl_op *o = &m->ops[a->i];
    while (a->pe->in.space_bytes + a->resid > S) {
        int who;
        int64_t bs, bt;
        best_step(m, s, w, a, &who, &bs, &bt);
        if (who < 0) return; /* cannot happen: the smallest footprint fits */
        cnt->steps++;
        if (who == a->i) {
            w->log[a->nlog++] = (logent){a->i, a->e};
            a->e++;
            a->pe = &o->plans[o->pareto[a->e]];
            a->L = exec_len(m, a->pe, &a->pe->states[0], a->pin, NULL);
        } else {
            int c = s->state[who];
            const rotor_preload_state *x = &m->ops[who].plans[s->plan[who]].states[c];
            w->log[a->nlog++] = (logent){who, c};
            s->state[who] = c + 1;
            a->resid -= x->space_bytes - x[1].space_bytes;
            a->ddist += x[1].dist_ps - x->dist_ps;
            if (a->nx_in && who == a->i + 1) {
                a->pin = x[1].space_bytes;
                a->L = exec_len(m, a->pe, &a->pe->states[0], a->pin, NULL);
            }
        }
    }
}
