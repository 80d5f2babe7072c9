/* rotor — the in-memory plan store (include/rotor/compile/planstore.h;
 * docs/compile.md, "Plan store").
 *
 * A table of the plan cache's entries by key, behind one lock.  Decisions
 * the papers do not make (none of them keep one):
 *  - Entries are copied in and out whole (candidates are flat structs): a
 *    compile owns its copy, reads it without the lock and adds its answers
 *    to it as with a disk entry; put merges them back.
 *  - Merging goes through the plan cache's own note functions, which add an
 *    answer only when the entry does not already imply it, so two compiles
 *    that learned the same thing in parallel store it once, and an answer is
 *    never dropped (which would cost a search again, never a wrong hit).
 *  - The lock is OpenMP's (the library's threads are OpenMP's already). */
#include "rotor/compile/planstore.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "compile/planshelf.h"
#include "rotor/base/hash.h"
#include "rotor/base/hashtab.h"

struct rotor_plan_store {
    omp_lock_t lock;
    rotor_plancache_entry *e; /* by insertion */
    int n, cap;
    int *slot;                /* open addressing: index into e, -1 empty; nslot a power of two */
    int nslot;
    rotor_hashtab *shelf;     /* planshelf.h: key -> shelf_item (NULL until the first give) */
};

/* A memo on the shelf: v NULL when lent (or never there). */
typedef struct shelf_item {
    void *v;
    int64_t weight;
    void (*free_fn)(void *);
} shelf_item;

rotor_plan_store *rotor_plan_store_new(void) {
    rotor_plan_store *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    omp_init_lock(&s->lock);
    return s;
}

void rotor_plan_store_free(rotor_plan_store *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) rotor_plancache_entry_free(&s->e[i]);
    free(s->e);
    free(s->slot);
    const void *key;
    int64_t pos = 0;
    void *val;
    while (s->shelf && rotor_hashtab_next(s->shelf, &pos, &key, NULL, &val)) {
        shelf_item *it = val;
        if (it->v) it->free_fn(it->v);
    }
    rotor_hashtab_free(s->shelf);
    omp_destroy_lock(&s->lock);
    free(s);
}

void *compile_plan_store_lend(rotor_plan_store *s, const char *key) {
    void *v = NULL;
    omp_set_lock(&s->lock);
    shelf_item *it = s->shelf ? rotor_hashtab_find(s->shelf, key, (int64_t)strlen(key)) : NULL;
    if (it) {
        v = it->v;
        it->v = NULL;
    }
    omp_unset_lock(&s->lock);
    return v;
}

void compile_plan_store_give(rotor_plan_store *s, const char *key, void *v, int64_t weight, void (*free_fn)(void *)) {
    if (!v) return;
    omp_set_lock(&s->lock);
    void *at = NULL;
    if (!s->shelf) (void)rotor_hashtab_new(sizeof(shelf_item), 64, NULL, &s->shelf, NULL);
    if (s->shelf) (void)rotor_hashtab_add(s->shelf, key, (int64_t)strlen(key), NULL, &at, NULL, NULL);
    shelf_item *it = at;
    void *drop = v;
    void (*drop_free)(void *) = free_fn;
    if (it && (!it->v || weight > it->weight)) {
        drop = it->v;
        drop_free = it->free_fn;
        *it = (shelf_item){.v = v, .weight = weight, .free_fn = free_fn};
    }
    omp_unset_lock(&s->lock);
    if (drop) drop_free(drop); /* the lighter one, or v when out of memory */
}

/* The slot of key: its entry's, or the empty one where it would go. */
static int find_slot(const rotor_plan_store *s, const char *key) {
    int mask = s->nslot - 1;
    int i = (int)(rotor_fnv1a_str(key) & (uint64_t)mask);
    while (s->slot[i] >= 0 && strcmp(s->e[s->slot[i]].key, key)) i = (i + 1) & mask;
    return i;
}

/* Room for one more entry, the table at most half full. */
static bool grow(rotor_plan_store *s) {
    if (s->n == s->cap) {
        int nc = s->cap ? 2 * s->cap : 64;
        rotor_plancache_entry *e2 = realloc(s->e, (size_t)nc * sizeof *e2);
        if (!e2) return false;
        s->e = e2;
        s->cap = nc;
    }
    if (2 * (s->n + 1) <= s->nslot) return true;
    int ns = s->nslot ? 2 * s->nslot : 128;
    int *sl = malloc((size_t)ns * sizeof *sl);
    if (!sl) return false;
    free(s->slot);
    s->slot = sl;
    s->nslot = ns;
    for (int i = 0; i < ns; i++) sl[i] = -1;
    for (int k = 0; k < s->n; k++) sl[find_slot(s, s->e[k].key)] = k;
    return true;
}

static rotor_candidate *dup_cands(const rotor_candidate *v, int n) {
    rotor_candidate *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    if (d && n) memcpy(d, v, (size_t)n * sizeof *d);
    return d;
}

/* e's fields (but its key) from src, deep; false when out of memory (e then
 * holds what was copied, for rotor_plancache_entry_free). */
static bool copy_body(rotor_plancache_entry *e, const rotor_plancache_entry *src) {
    e->has_first = src->has_first;
    e->first_truncated = src->first_truncated;
    e->first_tcut = src->first_tcut;
    e->dirty = false;
    if (src->has_first) {
        if (!(e->first = dup_cands(src->first, src->nfirst))) return false;
        e->nfirst = src->nfirst;
    }
    if (!src->nanswers) return true;
    if (!(e->answers = calloc((size_t)src->nanswers, sizeof *e->answers))) return false;
    for (int i = 0; i < src->nanswers; i++) {
        const rotor_plancache_answer *a = &src->answers[i];
        e->answers[i] = *a;
        e->answers[i].v = dup_cands(a->v, a->n);
        e->nanswers = i + 1;
        if (!e->answers[i].v) return false;
    }
    return true;
}

rotor_status rotor_plan_store_get(rotor_plan_store *s, const char *key, rotor_plancache_entry *e, bool *found,
                                  rotor_error *err) {
    *e = (rotor_plancache_entry){0};
    *found = false;
    if (!(e->key = strdup(key))) return rotor_nomem(err);
    omp_set_lock(&s->lock);
    bool ok = true;
    if (s->nslot) {
        int k = s->slot[find_slot(s, key)];
        if (k >= 0) {
            ok = copy_body(e, &s->e[k]);
            *found = ok;
        }
    }
    omp_unset_lock(&s->lock);
    if (ok) return ROTOR_OK;
    char *kept = e->key;
    e->key = NULL;
    rotor_plancache_entry_free(e);
    *e = (rotor_plancache_entry){.key = kept};
    return rotor_nomem(err);
}

/* e's answers that d does not imply, added to d. */
static rotor_status merge(rotor_plancache_entry *d, const rotor_plancache_entry *e, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    if (e->has_first && !d->has_first)
        st = rotor_plancache_set_first(d, e->first, e->nfirst, e->first_truncated, e->first_tcut, err);
    for (int i = 0; !st && i < e->nanswers; i++) {
        const rotor_plancache_answer *a = &e->answers[i];
        switch (a->kind) {
        case ROTOR_PLANCACHE_POINT:
        case ROTOR_PLANCACHE_NONE:
            st = rotor_plancache_note_point(d, a->cap, a->kind == ROTOR_PLANCACHE_POINT ? &a->v[0] : NULL, err);
            break;
        case ROTOR_PLANCACHE_TAIL: st = rotor_plancache_note_tail(d, a->cap, a->v, a->n, err); break;
        case ROTOR_PLANCACHE_SLOW: st = rotor_plancache_note_slow(d, a->cap, a->tmax, err); break;
        }
    }
    d->dirty = false;
    return st;
}

rotor_status rotor_plan_store_put(rotor_plan_store *s, const rotor_plancache_entry *e, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    omp_set_lock(&s->lock);
    int k = s->nslot ? s->slot[find_slot(s, e->key)] : -1;
    if (k < 0) {
        char *key = strdup(e->key);
        if (!key || !grow(s)) {
            free(key);
            st = rotor_nomem(err);
        } else {
            k = s->n++;
            s->e[k] = (rotor_plancache_entry){.key = key};
            s->slot[find_slot(s, key)] = k;
        }
    }
    if (!st) st = merge(&s->e[k], e, err);
    omp_unset_lock(&s->lock);
    return st;
}

int rotor_plan_store_count(rotor_plan_store *s) {
    omp_set_lock(&s->lock);
    int n = s->n;
    omp_unset_lock(&s->lock);
    return n;
}
