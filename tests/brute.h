/* brute.h — an independent brute-force reference for cost-model v1
 * (docs/cost-model-v1.md), written from the spec alone.
 *
 * It uses only the parsed operator (tensors, dimensions, extents, op class)
 * and the raw chip fields; it never calls rotor_plan_derive, rotor_cost_plan,
 * rotor_plan_shifts or rotor_plan_best_order.  Shifts are counted by walking
 * the sub-task indices in reflected (boustrophedon) order and counting block
 * changes, not by the closed form.  The enumerator visits every F_op
 * (1..E_a, product <= N), every f_t of every tensor and axis whose product
 * divides P_X and that is aligned, and every loop order.
 *
 * Loop orders: a level whose axis has S_a = 1 holds one index, so it never
 * moves in the walk and its position is invisible; the enumerator permutes
 * the axes with S_a > 1 (all of them) and puts the others outermost.
 *
 * Static functions only: the Makefile links every tests/test_*.c into one
 * binary, so this header is included where needed. */
#ifndef ROTOR_TESTS_BRUTE_H
#define ROTOR_TESTS_BRUTE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/chip.h"
#include "rotor/op/expr.h"
#include "rotor/op/plan.h"

/* Not every test file uses every function. */
#define BF_FN static __attribute__((unused))

/* The spec's chip constants, read from the raw fields ("Inputs"). */
typedef struct bf_chip {
    int64_t n;      /* N cores */
    int64_t sram;   /* S */
    double beta;    /* bytes/s */
    double alpha;   /* s */
    double rmm;     /* per-core matrix rate */
    double rvec;    /* per-core vector rate */
    int64_t bbuf;   /* shift buffer */
    int64_t elem;   /* e */
} bf_chip;

static inline bf_chip bf_chip_of(const rotor_chip *c) {
    bf_chip b;
    b.n = c->cores_per_chip * c->chips;
    b.sram = c->sram_bytes;
    b.beta = c->link_gbps * 1e9;
    b.alpha = c->link_latency_ns * 1e-9;
    /* ipu-mk2: R_mm = 250e12 / 1472 (spec "Inputs"): the whole-chip rate over the cores of one chip */
    b.rmm = c->matrix_tflops * 1e12 / (double)c->cores_per_chip;
    b.rvec = c->vector_tflops * 1e12 / (double)c->cores_per_chip;
    b.bbuf = c->shift_buffer_bytes;
    b.elem = c->element_bytes;
    return b;
}

/* Everything the spec derives from a plan, plus its time. */
typedef struct bf_eval {
    int64_t cores;
    int64_t share[ROTOR_MAX_TENSORS];  /* P_X */
    int64_t rings[ROTOR_MAX_TENSORS];  /* R_X */
    int64_t steps[ROTOR_MAX_AXES];     /* S_a */
    int64_t total_steps;               /* T */
    int64_t padded[ROTOR_MAX_AXES];    /* P_a */
    int64_t len[ROTOR_MAX_AXES];       /* L_a */
    int64_t sub[ROTOR_MAX_AXES];       /* s_a */
    int64_t bytes[ROTOR_MAX_TENSORS];  /* bytes(X) */
    int64_t memory;                    /* M */
    double padding;                    /* prod P_a / prod E_a */
    int64_t shifts[ROTOR_MAX_TENSORS]; /* counted on the walk */
    double compute, comm, reduction, total;
} bf_eval;

static inline int64_t bf_pad(int64_t x, int64_t q) { return (x + q - 1) / q * q; }

/* Factors only (no loop order): validity, sizes, memory, compute, reduction.
 * Returns false if the plan breaks a rule of "A plan" / "Derived quantities"
 * other than memory (memory is in ev->memory; the caller compares). */
BF_FN bool bf_factors(const rotor_expr *e, const bf_chip *c, const rotor_plan *p, bf_eval *ev) {
    const int na = e->naxes, nt = e->ntensors;
    memset(ev, 0, sizeof *ev);
    ev->cores = 1;
    for (int a = 0; a < na; a++) {
        if (p->fop[a] < 1 || p->fop[a] > e->extent[a]) return false;
        ev->cores *= p->fop[a];
    }
    if (ev->cores > c->n) return false;
    for (int t = 0; t < nt; t++) {
        int64_t share = 1, q = 1;
        for (int a = 0; a < na; a++) {
            if (p->ft[t][a] < 1) return false;
            if (e->tensors[t].has_axis[a]) q *= p->ft[t][a];
            else if (p->ft[t][a] != 1) return false;
            else share *= p->fop[a];
        }
        if (share % q) return false;
        ev->share[t] = share;
        ev->rings[t] = share / q;
    }
    /* alignment: pairwise divisibility along every axis */
    for (int a = 0; a < na; a++)
        for (int t = 0; t < nt; t++)
            for (int u = 0; u < nt; u++) {
                if (!e->tensors[t].has_axis[a] || !e->tensors[u].has_axis[a]) continue;
                if (p->ft[t][a] % p->ft[u][a] && p->ft[u][a] % p->ft[t][a]) return false;
            }
    bool any_split = false;
    ev->total_steps = 1;
    int64_t prod_p = 1, prod_e = 1;
    for (int a = 0; a < na; a++) {
        int64_t s = 1;
        for (int t = 0; t < nt; t++)
            if (e->tensors[t].has_axis[a] && p->ft[t][a] > s) s = p->ft[t][a];
        ev->steps[a] = s;
        ev->total_steps *= s;
        /* smallest multiple of F_op * S that is >= E */
        int64_t unit = p->fop[a] * s, x = unit;
        while (x < e->extent[a]) x += unit;
        ev->padded[a] = x;
        ev->len[a] = x / p->fop[a];
        ev->sub[a] = ev->len[a] / s;
        prod_p *= x;
        prod_e *= e->extent[a];
    }
    ev->padding = (double)prod_p / (double)prod_e;
    for (int t = 0; t < nt; t++)
        for (int a = 0; a < na; a++)
            if (p->ft[t][a] > 1) any_split = true;
    /* partitions and memory */
    ev->memory = 0;
    for (int t = 0; t < nt; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t elems = 1;
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dm = &x->dims[d];
            if (dm->nterms == 1 && dm->coef[0] == 1) {
                elems *= ev->len[dm->axis[0]] / p->ft[t][dm->axis[0]];
            } else {
                /* window a+b: L_a/f_a + L_b/f_b - 1; with strides c_a*a+c_b*b the
                 * window spans c_a*(L_a/f_a - 1) + c_b*(L_b/f_b - 1) + 1 */
                int64_t ext = 1;
                for (int k = 0; k < dm->nterms; k++)
                    ext += dm->coef[k] * (ev->len[dm->axis[k]] / p->ft[t][dm->axis[k]] - 1);
                elems *= ext;
            }
        }
        ev->bytes[t] = c->elem * elems;
        ev->memory += ev->bytes[t];
    }
    if (any_split) ev->memory += c->bbuf;
    /* compute of one sub-task */
    double tsub;
    if (e->op_class == ROTOR_OP_CONTRACTION) {
        const rotor_tensor *y = &e->tensors[0], *x1 = &e->tensors[1], *x2 = &e->tensors[2];
        int64_t b = 1, mg = 1, ng = 1, kg = 1;
        for (int a = 0; a < na; a++) {
            bool iy = y->has_axis[a], i1 = x1->has_axis[a], i2 = x2->has_axis[a];
            if (!iy) kg *= ev->sub[a];
            else if (i1 && i2) b *= ev->sub[a];
            else if (i1) mg *= ev->sub[a];
            else ng *= ev->sub[a];
        }
        double flops = 2.0 * (double)b * (double)bf_pad(mg, 16) * (double)bf_pad(kg, 16) *
                       (double)bf_pad(ng, 16);
        tsub = flops / c->rmm;
    } else {
        double pts = 1;
        for (int a = 0; a < na; a++) pts *= (double)ev->sub[a];
        tsub = (double)e->flops_per_point * pts / c->rvec;
    }
    ev->compute = (double)ev->total_steps * tsub;
    int64_t r = ev->rings[0];
    ev->reduction =
        r > 1 ? (double)(r - 1) / (double)r * (double)ev->bytes[0] / c->beta + (double)(r - 1) * c->alpha
              : 0.0;
    return true;
}

/* Walks the sub-task indices in the loop order (outermost first), innermost
 * fastest, each level reflecting at its ends, and counts for every tensor the
 * transitions where one of its block indices floor(i_a / (S_a / f_t[a]))
 * changes.  Returns false if some transition moved more or fewer than one
 * axis (the walk would not be boustrophedon). */
BF_FN bool bf_walk(const rotor_expr *e, const int64_t *steps,
                    const int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES], const int *order,
                    int64_t *shifts) {
    const int na = e->naxes, nt = e->ntensors;
    int64_t idx[ROTOR_MAX_AXES] = {0}, prev[ROTOR_MAX_AXES] = {0};
    int dir[ROTOR_MAX_AXES];
    int64_t total = 1;
    for (int a = 0; a < na; a++) {
        dir[a] = 1;
        total *= steps[a];
    }
    for (int t = 0; t < nt; t++) shifts[t] = 0;
    for (int64_t k = 1; k < total; k++) {
        memcpy(prev, idx, sizeof idx);
        for (int l = na - 1; l >= 0; l--) {
            int a = order[l];
            int64_t nx = idx[a] + dir[a];
            if (nx >= 0 && nx < steps[a]) {
                idx[a] = nx;
                break;
            }
            dir[a] = -dir[a]; /* this level turns round; the next outer one moves */
        }
        int moved = 0;
        for (int a = 0; a < na; a++) moved += idx[a] != prev[a];
        if (moved != 1) return false;
        for (int t = 0; t < nt; t++) {
            bool change = false;
            for (int a = 0; a < na; a++) {
                if (!e->tensors[t].has_axis[a]) continue;
                int64_t w = steps[a] / ft[t][a];
                if (idx[a] / w != prev[a] / w) change = true;
            }
            shifts[t] += change;
        }
    }
    return true;
}

/* Full evaluation of a plan under its loop order.  Returns false if the plan
 * is invalid or does not fit the chip's SRAM. */
BF_FN bool bf_evaluate(const rotor_expr *e, const bf_chip *c, const rotor_plan *p, bf_eval *ev) {
    if (!bf_factors(e, c, p, ev)) return false;
    if (ev->memory > c->sram) return false;
    bool seen[ROTOR_MAX_AXES] = {false};
    for (int l = 0; l < e->naxes; l++) {
        if (p->order[l] < 0 || p->order[l] >= e->naxes || seen[p->order[l]]) return false;
        seen[p->order[l]] = true;
    }
    if (!bf_walk(e, ev->steps, p->ft, p->order, ev->shifts)) return false;
    int64_t moved = 0;
    for (int t = 0; t < e->ntensors; t++) moved += ev->shifts[t] * ev->bytes[t];
    ev->comm = (double)moved / c->beta + c->alpha * (double)(ev->total_steps - 1);
    ev->total = ev->compute + ev->comm + ev->reduction;
    return true;
}

/* ---- exhaustive enumeration ------------------------------------------------ */

typedef struct bf_limits {
    int64_t min_cores;  /* 0: none */
    double max_padding; /* 0: none */
    int64_t memory_cap; /* 0: the chip's SRAM */
    bool best_only;     /* skip the walks of plans whose compute + reduction already
                           exceeds the best total (the frontier is then incomplete) */
    /* called with every valid fitting (plan, order) and its evaluation
     * (NULL: none), for tests of properties every plan must have */
    void (*visit)(void *ctx, const rotor_plan *p, const bf_eval *ev);
    void *visit_ctx;
} bf_limits;

typedef struct bf_point {
    double total;
    int64_t memory;
} bf_point;

typedef struct bf_result {
    int64_t plans;       /* valid fitting (plan, order) pairs visited */
    int64_t bad_walks;   /* walks that moved != 1 axis (must stay 0) */
    bool found;
    double best_total;
    int64_t best_memory;
    rotor_plan best_plan;
    bf_point front[4096]; /* non-dominated (time, memory) points, no duplicates */
    int nfront;
    bool front_overflow;
} bf_result;

typedef struct bf_state {
    const rotor_expr *e;
    bf_chip c;
    bf_limits lim;
    int64_t cap;
    rotor_plan p;
    bf_result *r;
} bf_state;

BF_FN void bf_front_add(bf_result *r, double t, int64_t m) {
    for (int i = 0; i < r->nfront; i++)
        if (r->front[i].total <= t && r->front[i].memory <= m) return; /* dominated or equal */
    int k = 0;
    for (int i = 0; i < r->nfront; i++)
        if (!(t <= r->front[i].total && m <= r->front[i].memory)) r->front[k++] = r->front[i];
    r->nfront = k;
    if (r->nfront == (int)(sizeof r->front / sizeof r->front[0])) {
        r->front_overflow = true;
        return;
    }
    r->front[r->nfront].total = t;
    r->front[r->nfront].memory = m;
    r->nfront++;
}

/* Permutations of the active axes (S_a > 1), by Heap-free recursion. */
BF_FN void bf_orders(bf_state *s, const bf_eval *base, int *act, int nact, int depth) {
    const rotor_expr *e = s->e;
    if (depth == nact) {
        int n = 0;
        for (int a = 0; a < e->naxes; a++)
            if (base->steps[a] == 1) s->p.order[n++] = a;
        for (int i = 0; i < nact; i++) s->p.order[n++] = act[i];
        bf_eval ev = *base;
        if (!bf_walk(e, ev.steps, s->p.ft, s->p.order, ev.shifts)) {
            s->r->bad_walks++;
            return;
        }
        int64_t moved = 0;
        for (int t = 0; t < e->ntensors; t++) moved += ev.shifts[t] * ev.bytes[t];
        ev.comm = (double)moved / s->c.beta + s->c.alpha * (double)(ev.total_steps - 1);
        ev.total = ev.compute + ev.comm + ev.reduction;
        bf_result *r = s->r;
        r->plans++;
        if (s->lim.visit) s->lim.visit(s->lim.visit_ctx, &s->p, &ev);
        if (!r->found || ev.total < r->best_total ||
            (ev.total == r->best_total && ev.memory < r->best_memory)) {
            r->found = true;
            r->best_total = ev.total;
            r->best_memory = ev.memory;
            r->best_plan = s->p;
        }
        bf_front_add(r, ev.total, ev.memory);
        return;
    }
    for (int i = depth; i < nact; i++) {
        int tmp = act[depth];
        act[depth] = act[i];
        act[i] = tmp;
        bf_orders(s, base, act, nact, depth + 1);
        act[i] = act[depth];
        act[depth] = tmp;
    }
}

BF_FN void bf_complete(bf_state *s) {
    bf_eval ev;
    if (!bf_factors(s->e, &s->c, &s->p, &ev)) return; /* not a divisor / not aligned */
    if (ev.memory > s->cap) return;
    if (s->lim.max_padding > 0 && ev.padding > s->lim.max_padding) return;
    if (s->lim.best_only && s->r->found && ev.compute + ev.reduction > s->r->best_total) return;
    int act[ROTOR_MAX_AXES], nact = 0;
    for (int a = 0; a < s->e->naxes; a++)
        if (ev.steps[a] > 1) act[nact++] = a;
    bf_orders(s, &ev, act, nact, 0);
}

/* A memory floor for the complete tensors 0..t_last: along a plain
 * axis L_a >= ceil(E_a / F_a) and L_a is a multiple of f_t, so the partition is
 * at least ceil(ceil(E_a / F_a) / f_t); a window is at least 1.  True when the
 * floor already exceeds the cap: no completion fits. */
BF_FN bool bf_floor_exceeds(const bf_state *s, int t_last) {
    const rotor_expr *e = s->e;
    int64_t mem = 0;
    for (int t = 0; t <= t_last; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t elems = 1;
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dm = &x->dims[d];
            if (dm->nterms != 1 || dm->coef[0] != 1) continue;
            int a = dm->axis[0];
            int64_t l = (e->extent[a] + s->p.fop[a] - 1) / s->p.fop[a];
            elems *= (l + s->p.ft[t][a] - 1) / s->p.ft[t][a];
        }
        mem += s->c.elem * elems;
    }
    return mem > s->cap;
}

/* f_t of tensor t along axis a, then the next (t, a). */
BF_FN void bf_ft(bf_state *s, int t, int a, int64_t q) {
    const rotor_expr *e = s->e;
    if (a == e->naxes) {
        if (bf_floor_exceeds(s, t)) return; /* tensors 0..t are complete */
        t++;
        a = 0;
        q = 1;
    }
    if (t == e->ntensors) {
        bf_complete(s);
        return;
    }
    if (!e->tensors[t].has_axis[a]) {
        s->p.ft[t][a] = 1;
        bf_ft(s, t, a + 1, q);
        return;
    }
    int64_t share = 1;
    for (int b = 0; b < e->naxes; b++)
        if (!e->tensors[t].has_axis[b]) share *= s->p.fop[b];
    for (int64_t f = 1; f <= share; f++) {
        if (share % (q * f)) continue; /* the product so far must still divide P_X */
        /* alignment with the tensors already chosen (checked again in full at the leaf) */
        bool aligned = true;
        for (int u = 0; u < t && aligned; u++)
            if (e->tensors[u].has_axis[a] && f % s->p.ft[u][a] && s->p.ft[u][a] % f) aligned = false;
        if (!aligned) continue;
        s->p.ft[t][a] = f;
        bf_ft(s, t, a + 1, q * f);
    }
    s->p.ft[t][a] = 1;
}

BF_FN void bf_fop(bf_state *s, int a, int64_t cores) {
    const rotor_expr *e = s->e;
    if (a == e->naxes) {
        if (cores < s->lim.min_cores) return;
        bf_ft(s, 0, 0, 1);
        return;
    }
    for (int64_t f = 1; f <= e->extent[a] && cores * f <= s->c.n; f++) {
        s->p.fop[a] = f;
        bf_fop(s, a + 1, cores * f);
    }
    s->p.fop[a] = 1;
}

/* Every valid plan and loop order; r receives the optimum and the frontier. */
BF_FN void bf_search(const rotor_expr *e, const rotor_chip *chip, const bf_limits *lim,
                      bf_result *r) {
    bf_state s;
    memset(&s, 0, sizeof s);
    s.e = e;
    s.c = bf_chip_of(chip);
    if (lim) s.lim = *lim;
    s.cap = s.c.sram;
    if (s.lim.memory_cap > 0 && s.lim.memory_cap < s.cap) s.cap = s.lim.memory_cap;
    memset(r, 0, sizeof *r);
    s.r = r;
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++)
        for (int a = 0; a < ROTOR_MAX_AXES; a++) s.p.ft[t][a] = 1;
    for (int a = 0; a < ROTOR_MAX_AXES; a++) s.p.fop[a] = 1;
    bf_fop(&s, 0, 1);
}

/* Tiny deterministic PRNG for property tests (splitmix64). */
static inline uint64_t bf_rand(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline int64_t bf_rand_range(uint64_t *state, int64_t lo, int64_t hi) {
    return lo + (int64_t)(bf_rand(state) % (uint64_t)(hi - lo + 1));
}

/* The stride-2 1-D convolution the property tests draw, its extents f and
 * c in 1..fc, h in 2..hmax, kh in 1..3 (in that order) into dims; its
 * text, and its bytes at 2 per element into *bytes. */
#define BF_STRIDED_CONV "O[f,h] += I[c,2*h+kh] * W[f,c,kh]"
static inline const char *bf_rand_strided_conv(uint64_t *rng, int64_t fc, int64_t hmax, char *dims, size_t cap,
                                               int64_t *bytes) {
    int64_t f = bf_rand_range(rng, 1, fc), c = bf_rand_range(rng, 1, fc), h = bf_rand_range(rng, 2, hmax),
            kh = bf_rand_range(rng, 1, 3);
    snprintf(dims, cap, "f=%lld,c=%lld,h=%lld,kh=%lld", (long long)f, (long long)c, (long long)h, (long long)kh);
    *bytes = 2 * (f * h + c * (2 * h + kh) + f * c * kh);
    return BF_STRIDED_CONV;
}

#endif
