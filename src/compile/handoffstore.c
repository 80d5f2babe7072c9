/* handoffstore.c — the hand-off memo kept in the plan cache's directory
 * (compile/handoffcache.h, handoff_cache_persist; issue 45; docs/compile.md,
 * "Plan cache").
 *
 * A warm compile answers every search from the plan cache, and then spent
 * most of its time pricing hand-offs again: placing plans and walking which
 * core holds what, for the same (producer plans, consumer plan) pairs as
 * the run before.  The price a setup reads is three integers (the busiest
 * port's elements, on a mesh the busiest link's and the longest route), a
 * function of the plans, the views, the shapes and the chips alone, so it
 * is kept as it was computed: a hit gives the same integers, and the
 * compile the same bytes.
 *
 * Decisions:
 *  - One file per consumer shape (expression, extents, element size, the
 *    chip it is costed on, the compile's chip and the versions of this
 *    format, the cost model and the solvers), named as plan cache entries
 *    are (FNV-1a 64 of the key) with the extension .rho.  The file holds
 *    its whole key: a collision reads as a miss.
 *  - The producers a record names are listed once in the file, each by its
 *    whole identity (shape and chip), and a record names them by index: a
 *    record is the hand-off's integers (inputs, tensors, plans' meaningful
 *    entries, views) and its three answers, one line of decimal integers.
 *  - The same safety as plan cache entries: text with a checksum, written
 *    to a temporary name and renamed (rotor_plancache_write); a file that
 *    does not read back is counted damaged (the CLI warns once), ignored,
 *    and rewritten with what this compile learns; the directory's size
 *    limit counts these files too (rotor_plancache_evict). */
#include "compile/handoffcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/planshelf.h"
#include "compile/sealed.h"
#include "rotor/base/hashtab.h"
#include "rotor/compile/plancache.h"
#include "rotor/op/cost.h"

#define STORE_FORMAT "rotor-handoffcache"
#define STORE_VERSION 1

typedef struct shape_store {
    char *key;      /* the file's key */
    char **pid;     /* the producers' identities, in file order */
    int np;
    int *pmap;      /* per frontier: its index in pid; -1 not looked up */
    rotor_hashtab *tab; /* record key (int64_t words) -> int64_t[3]: most, link, hops */
    bool dirty;
} shape_store;

struct handoff_store {
    char *dir;
    struct rotor_plan_store *shelf; /* the memos are lent from and given back to it (NULL: none) */
    int nshapes;
    char **id; /* per frontier: "shape ...\nchip ...\n" */
    shape_store *s;
};

/* Four independent multiply-xorshift lanes, folded at the end: a record's
 * key is hundreds of words, and one chain's multiply latency per word was
 * most of a warm DenseNet-121's lookups. */
static uint64_t hash_vec(const int64_t *v, int n) {
    const uint64_t m = 0xbf58476d1ce4e5b9ull;
    uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xc2b2ae3d27d4eb4full, c = 0x165667b19e3779f9ull,
             d = 0x27d4eb2f165667c5ull;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        a = (a ^ (uint64_t)v[i]) * m;
        b = (b ^ (uint64_t)v[i + 1]) * m;
        c = (c ^ (uint64_t)v[i + 2]) * m;
        d = (d ^ (uint64_t)v[i + 3]) * m;
    }
    for (; i < n; i++) a = (a ^ (uint64_t)v[i]) * m;
    uint64_t x = (uint64_t)n, lane[4] = {a, b, c, d};
    for (int l = 0; l < 4; l++) {
        x = (x ^ lane[l] ^ (lane[l] >> 31)) * 0x94d049bb133111ebull;
        x ^= x >> 29;
    }
    return x;
}

/* The table's hash of a key of len bytes: hash_vec of its words. */
static uint64_t hash_key(const void *key, int64_t len) {
    return hash_vec(key, (int)(len / (int64_t)sizeof(int64_t)));
}

static void shape_clear(shape_store *s) {
    for (int i = 0; i < s->np; i++) free(s->pid[i]);
    free(s->pid);
    if (s->tab) rotor_hashtab_clear(s->tab);
    s->pid = NULL;
    s->np = 0;
}

/* A shape's memo on the plan store's shelf (planshelf.h): its producers
 * and records, moved whole between a store and the shelf. */
typedef struct shelved {
    char **pid;
    int np;
    rotor_hashtab *tab;
    bool dirty; /* records its file lacks (a compile without the directory, a write that failed) */
} shelved;

static void shelved_free(void *v) {
    shelved *x = v;
    for (int i = 0; i < x->np; i++) free(x->pid[i]);
    free(x->pid);
    rotor_hashtab_free(x->tab);
    free(x);
}

/* s's producers and records given to the shelf (s keeps neither; best
 * effort: out of memory, they are freed with s). */
static void shelve(handoff_store *hs, shape_store *s) {
    if (!hs->shelf || !s->key || !s->tab || !rotor_hashtab_count(s->tab)) return;
    shelved *x = malloc(sizeof *x);
    if (!x) return;
    *x = (shelved){.pid = s->pid, .np = s->np, .tab = s->tab, .dirty = s->dirty};
    s->pid = NULL, s->np = 0, s->tab = NULL;
    compile_plan_store_give(hs->shelf, s->key, x, rotor_hashtab_count(x->tab), shelved_free);
}

/* s's memo from the shelf, when another compile left it there: true. */
static bool unshelve(handoff_store *hs, shape_store *s) {
    shelved *x = hs->shelf ? compile_plan_store_lend(hs->shelf, s->key) : NULL;
    if (!x) return false;
    rotor_hashtab_free(s->tab);
    s->pid = x->pid, s->np = x->np, s->tab = x->tab, s->dirty = x->dirty;
    free(x);
    return true;
}

void handoff_cache_store_free(handoff_store *hs) {
    if (!hs) return;
    for (int i = 0; hs->s && i < hs->nshapes; i++) shelve(hs, &hs->s[i]);
    for (int i = 0; i < hs->nshapes; i++) {
        if (hs->id) free(hs->id[i]);
        if (!hs->s) continue;
        shape_clear(&hs->s[i]);
        rotor_hashtab_free(hs->s[i].tab);
        free(hs->s[i].key);
        free(hs->s[i].pmap);
    }
    free(hs->id);
    free(hs->s);
    free(hs->dir);
    free(hs);
}

/* ---- the file ------------------------------------------------------------ */

/* A length-prefixed text: "LEN\n" and LEN bytes (malloc'd copy). */
static char *r_text(compile_reader *r, const char *end) {
    int64_t n = compile_reader_i64(r);
    if (r->bad || *r->p != '\n' || n < 0 || n > end - r->p - 1) {
        r->bad = true;
        return NULL;
    }
    char *t = malloc((size_t)n + 1);
    if (!t) {
        r->bad = true;
        return NULL;
    }
    memcpy(t, r->p + 1, (size_t)n);
    t[n] = '\0';
    r->p += 1 + n;
    return t;
}

/* Parses body[0..len) (NUL-terminated there) into s: false when damaged. */
static bool parse_body(shape_store *s, const char *body, size_t len) {
    compile_reader r = {.p = body};
    const char *end = body + len;
    int64_t lim = (int64_t)len / 2 + 1; /* no count above what the text could hold */
    compile_reader_word(&r, "producers");
    int64_t np = compile_reader_i64(&r);
    if (r.bad || np < 0 || np > lim) return false;
    if (np && !(s->pid = calloc((size_t)np, sizeof *s->pid))) return false;
    for (int64_t i = 0; i < np && !r.bad; i++)
        if ((s->pid[i] = r_text(&r, end))) s->np++;
    compile_reader_word(&r, "records");
    int64_t nrec = compile_reader_i64(&r);
    if (r.bad || nrec < 0 || nrec > lim) return false;
    int64_t v[HANDOFF_KEY_MAX];
    for (int64_t i = 0; i < nrec && !r.bad; i++) {
        compile_reader_word(&r, "r");
        int64_t n = compile_reader_i64(&r);
        if (n < 1 || n > HANDOFF_KEY_MAX) r.bad = true;
        for (int64_t j = 0; j < n && !r.bad; j++) v[j] = compile_reader_i64(&r);
        int64_t out[3];
        for (int j = 0; j < 3; j++) out[j] = compile_reader_i64(&r);
        /* a record starts with its input count (a record naming a producer
         * the file does not list is never asked for: lookups name listed
         * ones) */
        if (!r.bad && (v[0] < 1 || v[0] >= ROTOR_MAX_TENSORS)) r.bad = true;
        if (!r.bad && rotor_hashtab_add(s->tab, v, n * (int64_t)sizeof *v, out, NULL, NULL, NULL)) r.bad = true;
    }
    while (!r.bad && (*r.p == '\n' || *r.p == ' ')) r.p++;
    return !r.bad && !*r.p;
}

/* Reads s's file under dir: 1 read (or none there), 0 damaged (s emptied,
 * to be rewritten). */
static int load(shape_store *s, const char *dir) {
    char *body = NULL;
    size_t len = 0;
    int got = compile_sealed_read(dir, "rho", STORE_FORMAT, STORE_VERSION, s->key, &body, &len);
    bool ok = got >= 0 && (got == 0 || parse_body(s, body, len));
    free(body);
    if (ok) return 1;
    shape_clear(s);
    s->dirty = true;
    return 0;
}

static bool save(const shape_store *s, const char *dir) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return false;
    fprintf(f, "producers %d\n", s->np);
    for (int i = 0; i < s->np; i++) fprintf(f, "%zu\n%s\n", strlen(s->pid[i]), s->pid[i]);
    fprintf(f, "records %lld\n", (long long)rotor_hashtab_count(s->tab));
    const void *key;
    int64_t bytes, pos = 0;
    void *val;
    while (rotor_hashtab_next(s->tab, &pos, &key, &bytes, &val)) { /* slot order: the file as the table holds it */
        const int64_t *k = key, *r = val;
        int64_t n = bytes / (int64_t)sizeof *k;
        fprintf(f, "r %lld", (long long)n);
        for (int64_t j = 0; j < n; j++) fprintf(f, " %lld", (long long)k[j]);
        fprintf(f, " %lld %lld %lld\n", (long long)r[0], (long long)r[1], (long long)r[2]);
    }
    bool ok = !ferror(f);
    if (fclose(f) != 0) ok = false;
    ok = ok && compile_sealed_write(dir, "rho", STORE_FORMAT, STORE_VERSION, s->key, text, len);
    free(text);
    return ok;
}

/* ---- the memo ------------------------------------------------------------ */

/* "shape S\n" and the chip line: who a shape is, for keys and producers. */
static char *identity(const char *shape, const rotor_chip *chip) {
    char *c = rotor_plancache_chip_text(chip), *id = NULL;
    if (c && asprintf(&id, "shape %s\n%s", shape, c) < 0) id = NULL;
    free(c);
    return id;
}

rotor_status handoff_cache_store_open(const char *dir, struct rotor_plan_store *shelf, int nshapes,
                                      char *const *shape, const rotor_chip *fchip, const rotor_chip *chip,
                                      handoff_store **out, int *damaged, rotor_error *err) {
    *out = NULL;
    *damaged = 0;
    handoff_store *hs = calloc(1, sizeof *hs);
    char *base = rotor_plancache_chip_text(chip);
    bool ok = hs && base && (!dir || (hs->dir = strdup(dir)));
    if (ok) {
        hs->shelf = shelf;
        hs->nshapes = nshapes;
        hs->id = calloc((size_t)(nshapes ? nshapes : 1), sizeof *hs->id);
        hs->s = calloc((size_t)(nshapes ? nshapes : 1), sizeof *hs->s);
        ok = hs->id && hs->s;
    }
    for (int i = 0; ok && i < nshapes; i++) ok = (hs->id[i] = identity(shape[i], &fchip[i]));
    for (int i = 0; ok && i < nshapes; i++) {
        shape_store *s = &hs->s[i];
        ok = asprintf(&s->key, "%s %d\ncost-model %d\nsearch %d\nbase %s%s", STORE_FORMAT, STORE_VERSION,
                      ROTOR_COST_MODEL_VERSION, ROTOR_SEARCH_VERSION, base, hs->id[i]) >= 0;
        if (!ok) s->key = NULL;
        if (ok) ok = (s->pmap = malloc((size_t)(nshapes ? nshapes : 1) * sizeof *s->pmap));
        /* 64 slots at the first record */
        if (ok) ok = !rotor_hashtab_new(3 * sizeof(int64_t), 64, hash_key, &s->tab, NULL);
        for (int j = 0; ok && j < nshapes; j++) s->pmap[j] = -1;
        /* the shelf holds all a file held when an earlier compile of the
         * run read it, and what that compile added (written back too) */
        if (ok && !unshelve(hs, s) && dir) *damaged += !load(s, dir);
    }
    free(base);
    if (!ok) {
        handoff_cache_store_free(hs);
        return rotor_nomem(err);
    }
    *out = hs;
    return ROTOR_OK;
}

int handoff_cache_store_producer(handoff_store *hs, int fc, int fp, bool add) {
    shape_store *s = &hs->s[fc];
    if (s->pmap[fp] >= 0) return s->pmap[fp];
    for (int i = 0; i < s->np; i++)
        if (!strcmp(s->pid[i], hs->id[fp])) return s->pmap[fp] = i;
    if (!add) return -1;
    char **np = realloc(s->pid, (size_t)(s->np + 1) * sizeof *np);
    if (!np) return -1;
    s->pid = np;
    if (!(s->pid[s->np] = strdup(hs->id[fp]))) return -1;
    s->dirty = true;
    return s->pmap[fp] = s->np++;
}

bool handoff_cache_store_find(const handoff_store *hs, int fc, const int64_t *v, int n, int64_t out[3]) {
    const int64_t *x = rotor_hashtab_find(hs->s[fc].tab, v, (int64_t)n * (int64_t)sizeof *v);
    if (x) memcpy(out, x, 3 * sizeof *x);
    return x;
}

rotor_status handoff_cache_store_add(handoff_store *hs, int fc, const int64_t *v, int n, const int64_t r[3],
                               rotor_error *err) {
    shape_store *s = &hs->s[fc];
    bool added;
    rotor_status st = rotor_hashtab_add(s->tab, v, (int64_t)n * (int64_t)sizeof *v, r, NULL, &added, err);
    s->dirty |= added;
    return st;
}

bool handoff_cache_store_save(handoff_store *hs) {
    bool wrote = false;
    for (int i = 0; hs && hs->dir && i < hs->nshapes; i++)
        if (hs->s[i].dirty && rotor_hashtab_count(hs->s[i].tab) && save(&hs->s[i], hs->dir)) {
            hs->s[i].dirty = false; /* on disk now: a shelved memo carries only what is not */
            wrote = true;
        }
    return wrote;
}
