/* orders.c — the valid preload orders of one layer, enumerated by the
 * suffix tree (Elk §4.4): an order is valid when every operator fits with
 * the ones it forces on chip with it, at their smallest footprints. */
#include "preloadint.h"

typedef struct enum_ctx {
    const rotor_preload_model *m;
    int n;
    bool all;                       /* every order of every op (layer 0) */
    const int *base;
    /* pruned: slots of the layer's heavy ops */
    int H;
    int *slot_inst, *slot_rank;     /* per position: instance (-1: not a slot), rank of the slot */
    int *rank_op;                   /* [inst * H + r]: the r-th heavy op of an instance in base order */
    int *sigma;                     /* slot rank -> heavy rank (-1: unassigned) */
    bool *used;                     /* heavy rank assigned */
    bool *inR;                      /* all: op not yet placed */
    int *order;
    int64_t count, limit;
    int64_t branch_max;             /* most choices that fitted at one position (Table 2's C) */
    bool stop;
    rotor_preload_order_fn fn;
    void *ctx;
} enum_ctx;

/* Placing x at position k, with suffix sum `suf` of lb and suffix minimum
 * `smin` (n if empty), fixes the windows i in [x, smin - 1]: every op <= i
 * is at a position <= k, so i executes with the ops > i of positions <= k. */
static bool place_ok(const enum_ctx *c, int x, int64_t suf, int smin) {
    const rotor_preload_model *m = c->m;
    int64_t held = m->total_lb - suf; /* lb of every op at positions <= k */
    for (int i = x; i < smin; i++)
        if (m->ops[i].espace_min + held - m->pref_lb[i + 1] > m->chip.sram_bytes) return false;
    return true;
}

static void dfs(enum_ctx *c, int k, int64_t suf, int smin) {
    const rotor_preload_model *m = c->m;
    /* positions whose operator is determined */
    for (;;) {
        if (k < 0) {
            c->count++;
            if ((c->fn && !c->fn(c->order, c->n, c->ctx)) || (c->limit > 0 && c->count >= c->limit)) c->stop = true;
            return;
        }
        int x;
        if (c->all) break;
        if (c->slot_inst[k] < 0) x = c->base[k];
        else if (c->sigma[c->slot_rank[k]] >= 0) x = c->rank_op[c->slot_inst[k] * c->H + c->sigma[c->slot_rank[k]]];
        else break;
        if (!place_ok(c, x, suf, smin)) return;
        c->order[k] = x;
        suf += m->ops[x].lb;
        if (x < smin) smin = x;
        k--;
    }
    int64_t branches = 0;
    if (c->all) {
        for (int x = 0; x < c->n && !c->stop; x++) {
            if (!c->inR[x] || !place_ok(c, x, suf, smin)) continue;
            if (++branches > c->branch_max) c->branch_max = branches;
            c->inR[x] = false;
            c->order[k] = x;
            dfs(c, k - 1, suf + m->ops[x].lb, x < smin ? x : smin);
            c->inR[x] = true;
        }
        return;
    }
    int sr = c->slot_rank[k];
    for (int r = 0; r < c->H && !c->stop; r++) {
        if (c->used[r]) continue;
        int x = c->rank_op[c->slot_inst[k] * c->H + r];
        if (!place_ok(c, x, suf, smin)) continue;
        if (++branches > c->branch_max) c->branch_max = branches;
        c->used[r] = true;
        c->sigma[sr] = r;
        c->order[k] = x;
        dfs(c, k - 1, suf + m->ops[x].lb, x < smin ? x : smin);
        c->used[r] = false;
        c->sigma[sr] = -1;
    }
}

static int cmp_int_by_key(const void *a, const void *b, const int *key) {
    int x = key[*(const int *)a], y = key[*(const int *)b];
    return (x > y) - (x < y);
}

rotor_status rotor_preload_orders(const rotor_preload_model *m, int layer, const int *base, int64_t limit,
                                  rotor_preload_order_fn fn, void *ctx, int64_t *count, rotor_error *err) {
    return preload_orders_count(m, layer, base, limit, fn, ctx, count, NULL, err);
}

rotor_status preload_orders_count(const rotor_preload_model *m, int layer, const int *base, int64_t limit,
                                  rotor_preload_order_fn fn, void *ctx, int64_t *count, int64_t *branch_max,
                                  rotor_error *err) {
    int n = m->n;
    if (count) *count = 0;
    if (branch_max) *branch_max = 0;
    const pl_kind *kd = NULL;
    if (layer < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "layer: expected 0 (every operator) or an id, got %d", layer);
    if (layer > 0) {
        for (int k = 0; k < m->nkinds; k++)
            if (m->kinds[k].id == layer) kd = &m->kinds[k];
        if (!kd) return rotor_fail(err, ROTOR_ERR_INPUT, "layer: no operator has layer id %d", layer);
    }
    enum_ctx c = {.m = m, .n = n, .all = layer == 0, .limit = limit, .fn = fn, .ctx = ctx};
    int *pos = malloc(sizeof(int) * (size_t)n), *own = NULL;
    c.order = malloc(sizeof(int) * (size_t)n);
    rotor_status st = ROTOR_OK;
    if (!pos || !c.order) st = rotor_nomem(err);
    if (!st && !base) {
        own = malloc(sizeof(int) * (size_t)n);
        if (!own) st = rotor_nomem(err);
        for (int i = 0; own && i < n; i++) own[i] = i;
        base = own;
    }
    for (int i = 0; !st && i < n; i++) pos[i] = -1;
    for (int k = 0; !st && k < n; k++) {
        if (base[k] < 0 || base[k] >= n || pos[base[k]] >= 0)
            st = rotor_fail(err, ROTOR_ERR_INPUT, "base: position %d: %d is not a new operator", k, base[k]);
        else
            pos[base[k]] = k;
    }
    c.base = base;
    if (!st && c.all) {
        c.inR = malloc(sizeof(bool) * (size_t)n);
        if (!c.inR) st = rotor_nomem(err);
        for (int i = 0; c.inR && i < n; i++) c.inR[i] = true;
    } else if (!st) {
        int H = c.H = kd->nheavy;
        c.slot_inst = malloc(sizeof(int) * (size_t)n);
        c.slot_rank = malloc(sizeof(int) * (size_t)n);
        c.rank_op = malloc(sizeof(int) * (size_t)(kd->ninst * H + 1));
        c.sigma = malloc(sizeof(int) * (size_t)(H + 1));
        c.used = calloc((size_t)H + 1, sizeof(bool));
        if (!c.slot_inst || !c.slot_rank || !c.rank_op || !c.sigma || !c.used)
            st = rotor_nomem(err);
        for (int k = 0; !st && k < n; k++) c.slot_inst[k] = -1;
        for (int r = 0; !st && r < H; r++) c.sigma[r] = -1;
        for (int t = 0; !st && t < kd->ninst; t++) {
            int *ro = &c.rank_op[t * H];
            for (int h = 0; h < H; h++) ro[h] = kd->start[t] + kd->heavy[h];
            /* rank by position in base (insertion sort, H is small) */
            for (int a = 1; a < H; a++) {
                int v = ro[a], b = a;
                while (b > 0 && cmp_int_by_key(&ro[b - 1], &v, pos) > 0) {
                    ro[b] = ro[b - 1];
                    b--;
                }
                ro[b] = v;
            }
            for (int r = 0; r < H; r++) {
                c.slot_inst[pos[ro[r]]] = t;
                c.slot_rank[pos[ro[r]]] = r;
            }
        }
    }
    if (!st) {
        dfs(&c, n - 1, 0, n);
        if (count) *count = c.count;
        if (branch_max) *branch_max = c.branch_max;
    }
    free(pos), free(own), free(c.order), free(c.inR), free(c.slot_inst), free(c.slot_rank), free(c.rank_op);
    free(c.sigma), free(c.used);
    return st;
}
