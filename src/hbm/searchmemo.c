/* searchmemo.c — see searchmemo.h. */
#include "rotor/hbm/searchmemo.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/hash.h"
#include "rotor/compile/plancache.h"

typedef struct memo_entry {
    uint64_t hash;
    char *key;
    rotor_search_result r;
} memo_entry;

struct rotor_search_memo {
    omp_lock_t lock;
    memo_entry *v;
    int n, cap;
    int hits;
};

rotor_search_memo *rotor_search_memo_new(void) {
    rotor_search_memo *m = calloc(1, sizeof *m);
    if (m) omp_init_lock(&m->lock);
    return m;
}

void rotor_search_memo_free(rotor_search_memo *m) {
    if (!m) return;
    for (int i = 0; i < m->n; i++) {
        free(m->v[i].key);
        rotor_search_result_free(&m->v[i].r);
    }
    free(m->v);
    omp_destroy_lock(&m->lock);
    free(m);
}

/* Why the HBM and inter-chip fields leave the key: no file of the plan
 * search (src/op/: search, bound, steps, cost, pareto, fopwalk, meshmap,
 * kapla) reads hbm_bytes, hbm_gbps, hbm_controllers or interchip_gbps; the
 * schedule prices HBM and the all-reduces itself (hbm/).  Every other field
 * stays, as rotor_plancache_key lists them (one owner of that list), so a
 * field the search comes to read is in the key unless it is one of these
 * four. */
char *rotor_search_memo_key(const char *shape, const rotor_chip *chip, rotor_solver solver) {
    rotor_chip c = *chip;
    c.hbm_bytes = 0;
    c.hbm_gbps = 0;
    c.hbm_controllers = 0;
    c.interchip_gbps = 0;
    return rotor_plancache_key(shape, &c, solver, 0);
}

/* The entry of key, or NULL; under the lock. */
static memo_entry *find(rotor_search_memo *m, const char *key, uint64_t h) {
    for (int i = 0; i < m->n; i++)
        if (m->v[i].hash == h && !strcmp(m->v[i].key, key)) return &m->v[i];
    return NULL;
}

/* r's copy into *out (a frontier of its own). */
static bool copy_result(const rotor_search_result *r, rotor_search_result *out) {
    *out = *r;
    out->pareto = NULL;
    if (r->npareto == 0) return true;
    out->pareto = malloc((size_t)r->npareto * sizeof *out->pareto);
    if (!out->pareto) return false;
    memcpy(out->pareto, r->pareto, (size_t)r->npareto * sizeof *out->pareto);
    return true;
}

rotor_status rotor_search_memo_get(rotor_search_memo *m, const char *key, rotor_search_result *out, bool *found,
                                   rotor_error *err) {
    uint64_t h = rotor_fnv1a_str(key);
    bool ok = true;
    omp_set_lock(&m->lock);
    memo_entry *e = find(m, key, h);
    *found = e != NULL;
    if (e) {
        ok = copy_result(&e->r, out);
        m->hits += ok;
    }
    omp_unset_lock(&m->lock);
    if (!ok) *found = false;
    return ok ? ROTOR_OK : rotor_nomem(err);
}

rotor_status rotor_search_memo_put(rotor_search_memo *m, const char *key, const rotor_search_result *r,
                                   rotor_error *err) {
    uint64_t h = rotor_fnv1a_str(key);
    rotor_status st = ROTOR_OK;
    omp_set_lock(&m->lock);
    if (!find(m, key, h)) {
        if (m->n == m->cap) {
            int cap = m->cap ? 2 * m->cap : 16;
            memo_entry *v = realloc(m->v, (size_t)cap * sizeof *v);
            if (v) m->v = v, m->cap = cap;
        }
        memo_entry *e = m->n < m->cap ? &m->v[m->n] : NULL;
        char *k = e ? strdup(key) : NULL;
        if (k && copy_result(r, &e->r)) {
            e->hash = h;
            e->key = k;
            m->n++;
        } else {
            free(k);
            st = rotor_nomem(err);
        }
    }
    omp_unset_lock(&m->lock);
    return st;
}

int rotor_search_memo_hits(rotor_search_memo *m) {
    omp_set_lock(&m->lock);
    int n = m->hits;
    omp_unset_lock(&m->lock);
    return n;
}

int rotor_search_memo_size(rotor_search_memo *m) {
    omp_set_lock(&m->lock);
    int n = m->n;
    omp_unset_lock(&m->lock);
    return n;
}
