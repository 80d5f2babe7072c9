/* search.c — exact branch-and-bound search over compute-shift plans
 * (T10 §4.3.1; docs/cost-model-v1.md is the objective): the driver, and
 * where each level lives (searchint.h lists the files).
 *
 * Three levels, each pruned by a lower bound that holds for everything below:
 *   1. F_op.  Lower bound: the model's op_bound (v1: the compute of the same
 *      F_op with every S_a = 1, which no choice of steps can beat) and a
 *      memory bound.  A first pass walks all F_op, costs the all-ones plan
 *      (a valid plan whenever it fits) of those that might beat the
 *      incumbent so far, and keeps the F_op whose bounds survive, sorted by
 *      bound.  A session first searches the F_op of its archived plans
 *      nearest above the cap (search_probe_archive), so the walk prunes at once.
 *   2. Steps S_a.  S_a is some tensor's f_t along a, and f_t^X divides P_X, so
 *      S_a ranges over the divisors of the P_X of the tensors carrying a.  The
 *      steps fix padding, L_a, s_a and so the whole compute time.
 *   3. f_t per tensor, depth first.  Each f_t^X[a] divides S_a (alignment with
 *      S_a the largest makes every factor divide it), factors along an axis
 *      form a chain, and some tensor reaches S_a.  Each tensor adds its
 *      tensor_bound; memory adds exactly.
 * Leaves are costed under their optimal loop order.  Level 1 is fopwalk.c
 * with bound.c, levels 2 and 3 steps.c, the frontier pareto.c.
 *
 * Pruning is strict with a relative slack of 1e-9, so plans whose time ties
 * the optimum are always reached and the winner is the least by
 * (time, memory, plan order) — whatever the thread count.  Threads share only
 * the incumbent time (an atomic); every thread keeps its own candidates and
 * frontier, merged in a fixed order at the end. */
#include "searchint.h"

/* ---- constraints ------------------------------------------------------- */

rotor_status rotor_constraints_parse(const char *text, rotor_constraints *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    const char *s = text ? text : "";
    /* each key once: "min_cores=1470,min_cores=1" took the last without a
     * word (found by a review helper, 2026-12-03), as --constraints given
     * twice is refused */
    bool seen[3] = {false, false, false}; /* max_padding, min_cores, memory_cap */
    while (*s) {
        const char *comma = strchr(s, ',');
        int len = comma ? (int)(comma - s) : (int)strlen(s);
        char item[128];
        if (len <= 0 || len >= (int)sizeof item)
            return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: expected key=value, got '%.*s'",
                              len > 0 ? len : 0, s);
        memcpy(item, s, (size_t)len);
        item[len] = '\0';
        char *eq = strchr(item, '=');
        if (!eq)
            return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: expected key=value, got '%s'", item);
        *eq = '\0';
        const char *key = item, *val = eq + 1;
        char *end;
        int k = !strcmp(key, "max_padding") ? 0 : !strcmp(key, "min_cores") ? 1 : !strcmp(key, "memory_cap") ? 2 : -1;
        if (k >= 0 && seen[k])
            return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: %s is given twice", key);
        if (k >= 0) seen[k] = true;
        if (strcmp(key, "max_padding") == 0) {
            double v = strtod(val, &end);
            if (end == val || *end || !(v >= 1.0) || v > 1e6)
                return rotor_fail(err, ROTOR_ERR_INPUT,
                                  "constraints: max_padding: expected a ratio >= 1 (padded/original), got '%s'",
                                  val);
            out->max_padding = v;
        } else if (strcmp(key, "min_cores") == 0 || strcmp(key, "memory_cap") == 0) {
            long long v = strtoll(val, &end, 10);
            if (end == val || *end || v < 1 || v > ((int64_t)1 << 40))
                return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: %s: expected a positive integer, got '%s'",
                                  key, val);
            if (key[1] == 'i') out->min_cores = v;
            else out->memory_cap = v;
        } else {
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "constraints: unknown key '%s' (known: min_cores, max_padding, memory_cap)",
                              key);
        }
        s = comma ? comma + 1 : s + len;
    }
    return ROTOR_OK;
}

/* ---- candidates ---------------------------------------------------------- */

int rotor_candidate_compare(const rotor_expr *e, const rotor_candidate *a, const rotor_candidate *b) {
    if (a->cost.total != b->cost.total) return a->cost.total < b->cost.total ? -1 : 1;
    if (a->info.memory != b->info.memory) return a->info.memory < b->info.memory ? -1 : 1;
    return rotor_plan_compare(e, &a->plan, &b->plan);
}

static inline bool fop_key_less(const fop_key *a, const fop_key *b) {
    return a->bound != b->bound ? a->bound < b->bound : a->pos < b->pos;
}

/* Sorts v[0..n) by (bound, pos) with tmp (room for n) as scratch: runs of
 * 16 by insertion, then merged bottom up.  qsort's merge sort (glibc)
 * allocates its own scratch on every call, which for the large keep lists
 * is mapped afresh and faulted in page by page each time (about 4 % of a
 * DenseNet compile's page faults); the keys are distinct (pos is), so any
 * sort orders them alike. */
static void keys_sort(fop_key *v, fop_key *tmp, int64_t n) {
    enum { RUN = 16 };
    for (int64_t lo = 0; lo < n; lo += RUN) {
        int64_t hi = lo + RUN < n ? lo + RUN : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            fop_key x = v[i];
            int64_t j = i;
            for (; j > lo && fop_key_less(&x, &v[j - 1]); j--) v[j] = v[j - 1];
            v[j] = x;
        }
    }
    fop_key *src = v, *dst = tmp;
    for (int64_t w = RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) dst[k++] = fop_key_less(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        fop_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != v) memcpy(v, src, (size_t)n * sizeof *v);
}

static void merge_stats(rotor_search_stats *to, const rotor_search_stats *from) {
    to->fops += from->fops;
    to->fops_searched += from->fops_searched;
    to->step_vectors += from->step_vectors;
    to->steps_pruned += from->steps_pruned;
    to->plans += from->plans;
    to->nodes_pruned += from->nodes_pruned;
}

/* c->pool with room for the seed and nthreads workers (false: out of
 * memory).  Each search resets what it reads before writing; the rest is
 * scratch that search_fop and the step search fill before use.  So the
 * pool is not cleared: a worker is most of a megabyte, and a compile opens
 * a session per shape (clearing them was a tenth of a DenseNet compile,
 * page faults included); only the ctx and the archive pointer are set. */
static bool worker_pool(ctx *c, int nthreads) {
    search_bufs *b = c->bufs;
    if (b->npool < nthreads + 1) {
        for (int i = 0; i < b->npool; i++) search_archive_free(b->pool[i].own);
        free(b->pool);
        b->npool = 0;
        b->pool = malloc(((size_t)nthreads + 1) * sizeof *b->pool);
        if (!b->pool) return false;
        b->npool = nthreads + 1;
        for (int i = 0; i < b->npool; i++) b->pool[i].own = NULL;
    }
    /* a pool's set may come from another ctx */
    for (int i = 0; i < b->npool; i++) b->pool[i].c = c;
    return true;
}

/* The per-F_op caches of a search, allocated on first use and kept across
 * the ctx's searches (ctx_free frees them all; see ctx in searchint.h): the
 * session's subtree-size table (counts), then, while the walk is short
 * enough to keep (2^22 F_op vectors), the compute floors (cf, sessions
 * only) and the other values (fc; full in a session, with cf).  A cache
 * that cannot be had is left off and its values recomputed. */
static void ctx_classes(ctx *c);

static void ctx_caches(ctx *c) {
    if (c->nfops < 0) {
        ctx_classes(c);
        /* a session's table of subtree sizes, for search_pass1_scan's decoding */
        if (c->session && c->cores <= COUNTS_MAX_CORES &&
            (c->counts = malloc((size_t)(c->e->naxes + 1) * (size_t)(c->cores + 1) * sizeof *c->counts)))
            for (int64_t i = 0; i < (int64_t)(c->e->naxes + 1) * (c->cores + 1); i++) c->counts[i] = -1;
        c->nfops = search_fop_count(c, 0, c->cores);
    }
    /* 4 bytes per F_op vector, and fc's records where the walks write;
     * past 2^22 vectors recompute instead.  A session keeps each F_op's
     * compute floor from its first search on, so that its first capped
     * search scans them instead of walking again (the floor costs the
     * model's op_bound per F_op), and the rest only from its first search
     * below its full cap (the compiler's first search, for the fastest
     * plan, is the only one of most sessions). */
    bool small = c->nfops <= ((int64_t)1 << 22);
    size_t nalloc = (size_t)(c->nfops ? c->nfops : 1);
    if (c->session && small && !c->cf && (c->cf = malloc(nalloc * sizeof *c->cf)))
        for (int64_t i = 0; i < c->nfops; i++) c->cf[i] = CF_NOT_YET;
    if (c->fc.dir || !small || (c->session && c->cap >= c->full_cap)) return;
    search_fop_cache_init(&c->fc, c->nfops, c->cf != NULL);
}

bool search_fop_cache_init(fop_cache *fc, int64_t n, bool full) {
    /* a directory entry per block, cleared (no block yet), and room for
     * every chunk's pointer */
    *fc = (fop_cache){0};
    size_t nblocks = ((size_t)(n > 0 ? n : 1) + FOPC_B - 1) / FOPC_B;
    fc->dir = calloc(nblocks, sizeof *fc->dir);
    fc->chunks = calloc((nblocks + FOPC_CHUNK - 1) / FOPC_CHUNK, sizeof *fc->chunks);
    if (!fc->dir || !fc->chunks) {
        free(fc->dir);
        free(fc->chunks);
        *fc = (fop_cache){0};
        return false;
    }
    fc->n = n;
    fc->full = full;
    return true;
}

fop_rec *search_fop_rec_make(fop_cache *fc, int64_t index) {
    if (index < 0 || index >= fc->n) return NULL;
    uint32_t *d = &fc->dir[index >> FOPC_SHIFT];
    if (!*d) {
        int64_t b = fc->nblocks, k = b >> FOPC_CHUNK_SHIFT;
        if (!fc->chunks[k] && !(fc->chunks[k] = malloc(sizeof(fop_rec) * FOPC_B * FOPC_CHUNK))) return NULL;
        /* the block's values are "not yet" (0); its chunk's other blocks
         * are not touched until made */
        memset(&fc->chunks[k][(b & (FOPC_CHUNK - 1)) << FOPC_SHIFT], 0, sizeof(fop_rec) * FOPC_B);
        fc->nblocks = b + 1;
        *d = (uint32_t)(b + 1);
    }
    return fop_rec_at(fc, index);
}

/* A float's bits mixed (every bit reaches the low ones, which index the
 * table: floors that are round numbers share their low bits). */
static uint32_t cf_mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

/* The table of distinct floors grows by doubling, its hash kept at most
 * half full. */
static bool cf_grow(ctx *c) {
    if (c->ncf_val == c->cf_val_cap) {
        int32_t ncap = c->cf_val_cap ? 2 * c->cf_val_cap : 256;
        if (ncap > CF_VALUES) ncap = CF_VALUES;
        float *nv = realloc(c->cf_val, (size_t)ncap * sizeof *nv);
        if (!nv) return false;
        c->cf_val = nv;
        c->cf_val_cap = ncap;
    }
    if (2 * (c->ncf_val + 1) <= c->cf_hash_size) return true;
    int32_t nsize = c->cf_hash_size ? 2 * c->cf_hash_size : 1024;
    uint16_t *nh = calloc((size_t)nsize, sizeof *nh);
    if (!nh) return false;
    for (int32_t k = 0; k < c->ncf_val; k++) {
        uint32_t bits;
        memcpy(&bits, &c->cf_val[k], sizeof bits);
        uint32_t h = cf_mix(bits) & (uint32_t)(nsize - 1);
        while (nh[h]) h = (h + 1) & (uint32_t)(nsize - 1);
        nh[h] = (uint16_t)(k + 1);
    }
    free(c->cf_hash);
    c->cf_hash = nh;
    c->cf_hash_size = nsize;
    return true;
}

bool search_cf_put(ctx *c, int64_t index, float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (c->cf_last && bits == c->cf_last_bits) {
        c->cf[index] = (uint16_t)(c->cf_last - 1);
        c->cf_sum_ok = false;
        return true;
    }
    if (c->cf_hash_size) {
        uint32_t h = cf_mix(bits) & (uint32_t)(c->cf_hash_size - 1);
        for (; c->cf_hash[h]; h = (h + 1) & (uint32_t)(c->cf_hash_size - 1)) {
            uint32_t b;
            memcpy(&b, &c->cf_val[c->cf_hash[h] - 1], sizeof b);
            if (b == bits) {
                c->cf_last = c->cf_hash[h], c->cf_last_bits = bits;
                c->cf[index] = (uint16_t)(c->cf_hash[h] - 1);
                c->cf_sum_ok = false;
                return true;
            }
        }
    }
    if (c->ncf_val == CF_VALUES || !cf_grow(c)) {
        c->cf_lost = true;
        return false;
    }
    uint32_t h = cf_mix(bits) & (uint32_t)(c->cf_hash_size - 1);
    while (c->cf_hash[h]) h = (h + 1) & (uint32_t)(c->cf_hash_size - 1);
    c->cf_val[c->ncf_val] = f;
    c->cf_hash[h] = (uint16_t)(c->ncf_val + 1);
    c->cf_last = c->ncf_val + 1, c->cf_last_bits = bits;
    c->cf[index] = (uint16_t)c->ncf_val++;
    c->cf_sum_ok = false;
    return true;
}

typedef struct cf_rank {
    float v;
    uint16_t code;
} cf_rank;

static int cf_rank_cmp(const void *a, const void *b) {
    float x = ((const cf_rank *)a)->v, y = ((const cf_rank *)b)->v;
    return (x > y) - (x < y);
}

bool search_cf_order(ctx *c) {
    int32_t n = c->ncf_val;
    cf_rank *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    uint16_t *to = malloc((size_t)(n ? n : 1) * sizeof *to);
    if (!r || !to) {
        free(r), free(to);
        return false;
    }
    for (int32_t k = 0; k < n; k++) r[k] = (cf_rank){c->cf_val[k], (uint16_t)k};
    /* distinct values (the hash keeps one code per float): a total order */
    qsort(r, (size_t)n, sizeof *r, cf_rank_cmp);
    for (int32_t k = 0; k < n; k++) {
        to[r[k].code] = (uint16_t)k;
        c->cf_val[k] = r[k].v;
    }
    for (int64_t i = 0; i < c->nfops; i++)
        if (c->cf[i] < CF_VALUES) c->cf[i] = to[c->cf[i]];
    for (int32_t h = 0; h < c->cf_hash_size; h++)
        if (c->cf_hash[h]) c->cf_hash[h] = (uint16_t)(to[c->cf_hash[h] - 1] + 1);
    c->cf_last = 0;
    free(r);
    free(to);
    return true;
}

void search_fop_cache_free(fop_cache *fc) {
    int64_t nchunks = ((fc->n + FOPC_B - 1) / FOPC_B + FOPC_CHUNK - 1) / FOPC_CHUNK;
    if (fc->chunks)
        for (int64_t k = 0; k < nchunks; k++) free(fc->chunks[k]);
    free(fc->chunks);
    free(fc->dir);
    *fc = (fop_cache){0};
}

/* A knapsack scratch as made: no lattice cached, every memo slot empty
 * (the rest is scratch each use fills first). */
static void knap_reset(knap_scratch *ks) {
    for (int k = 0; k < LAT_SLOTS; k++) ks->lat[k].share = 0;
    memset(ks->memo_on, 0, sizeof ks->memo_on);
    /* tensor_options compares every tensor's options pointer with the slot
     * it rewrites: none may be read before it is set (valgrind found a
     * fresh scratch's garbage compared; an equal garbage value would have
     * copied a garbage count of options) */
    memset(ks->po, 0, sizeof ks->po);
    ks->no_memo = false;
}

/* Each search worker's archive (Pareto loop only) and knapsack scratch
 * (kept in the ctx across its searches: the lattices they cache stay true).
 * False when out of memory. */
static bool workers_ready(ctx *c, worker *ws, int nthreads) {
    for (int i = 0; i < nthreads; i++) {
        if (c->spare && !ws[i].own && !(ws[i].own = search_archive_new())) return false;
        if (c->spare) {
            ws[i].own->n = 0;
            ws[i].own->dropped = false;
            ws[i].seen = ws[i].own;
        }
        search_bufs *b = c->bufs;
        if (i >= b->nknaps) {
            struct knap_scratch **nk = realloc(b->knaps, (size_t)(i + 1) * sizeof *nk);
            if (nk) b->knaps = nk;
            if (nk && (nk[i] = aligned_alloc(_Alignof(knap_scratch), sizeof *nk[i]))) {
                knap_reset(nk[i]);
                b->nknaps = i + 1;
            }
        }
        if (i >= b->nknaps) return false;
        ws[i].knap = b->knaps[i];
    }
    return true;
}

/* The kept F_op that the incumbent does not prune now (it has tightened
 * since most were kept), by (bound, F_op) into *order (malloc'd).  The list
 * is in walk order, which is F_op order, so (bound, position) keys order it
 * the same way and sort faster than the entries themselves.  False when out
 * of memory. */
static bool keep_order(search_bufs *b, worker *seed, fop_list *keep, fop_key **order) {
    int64_t kept = 0;
    for (int64_t i = 0; i < keep->n; i++)
        if (!search_prune(seed, keep->v[i].bound, keep->v[i].mem_bound)) keep->v[kept++] = keep->v[i];
    keep->n = kept;
    if (keep->n > b->order_cap) {
        /* the keys, then the sort's scratch */
        free(b->order);
        b->order_cap = 0;
        if (!(b->order = malloc(2 * (size_t)keep->n * sizeof *b->order))) return false;
        b->order_cap = keep->n;
    }
    *order = b->order;
    for (int64_t i = 0; i < keep->n; i++) {
        (*order)[i].bound = keep->v[i].bound;
        (*order)[i].pos = i;
    }
    /* none kept: the buffers may not exist yet (NULL), and NULL + 0 is
     * undefined (clang's UBSan stops there) */
    if (keep->n > 0) keys_sort(*order, b->order + b->order_cap, keep->n);
    return true;
}

/* Pass 2's workers start from the first pass's front (single-pass frontier
 * search).  False when out of memory. */
static bool fronts_seed(ctx *c, const worker *seed, worker *ws, int nthreads) {
    for (int i = 0; i < nthreads; i++) {
        if (!c->frontier || !seed->front.n) continue;
        front *f = &ws[i].front;
        f->v = malloc((size_t)seed->front.n * sizeof *f->v);
        if (!f->v) return false;
        memcpy(f->v, seed->front.v, (size_t)seed->front.n * sizeof *f->v);
        f->n = f->cap = seed->front.n;
    }
    return true;
}

/* The workers' results merged in thread order under a total order, so that
 * the result does not depend on the schedule: the best plan, the archives,
 * the fronts (into the seed's), the statistics.  False when out of memory. */
static bool merge_workers(ctx *c, worker *seed, worker *ws, int nthreads, rotor_candidate *best, bool *have,
                          rotor_search_stats *st) {
    bool oom = false;
    merge_stats(st, &seed->st);
    *have = seed->have_best;
    *best = seed->best;
    for (int i = 0; i < nthreads; i++) {
        worker *w = &ws[i];
        merge_stats(st, &w->st);
        if (w->have_best && (!*have || rotor_candidate_compare(c->e, &w->best, best) < 0)) {
            *best = w->best;
            *have = true;
        }
        if (w->seen)
            for (int k = 0; k < w->seen->n; k++) search_archive_add(c->spare, &w->seen->v[k]);
        /* the fronts merge in thread order; the union's front does not
         * depend on which thread found what */
        for (int k = 0; k < w->front.n; k++) search_front_add(c->e, &seed->front, &w->front.v[k]);
        oom |= w->front.oom;
        free(w->front.v);
        w->front.v = NULL;
    }
    return !(oom || seed->front.oom);
}

/* ---- the buffers' pool ---------------------------------------------------- */

/* The sets of buffers no search holds now, and the ids handed to the ctx
 * that use it (from 1: a set's owner 0 is nobody).  A lock, since a
 * compile's shapes search in parallel (compile.c, frontiers_search). */
struct rotor_search_pool {
    omp_lock_t lock;
    search_bufs *idle;
    int nidle, cap;
    uint64_t next_id;
    /* the tensor classes of the pool's ctx (search_tensor_class) */
    tensor_desc *classes;
    int nclasses, classes_cap;
};

/* A tensor's class in the pool (1, 2, ...; 0: none, out of memory or
 * past INT16_MAX): the ctx whose tensors have equal descriptions share a
 * class, and with it the memo's fronts (opt_memo: tensor_options_run reads
 * nothing of a ctx but what the description holds). */
static int16_t pool_class(rotor_search_pool *p, const tensor_desc *d) {
    omp_set_lock(&p->lock);
    int k = 0;
    while (k < p->nclasses && memcmp(&p->classes[k], d, sizeof *d) != 0) k++;
    if (k == p->nclasses && k < INT16_MAX - 1) {
        if (p->nclasses == p->classes_cap) {
            int ncap = p->classes_cap ? 2 * p->classes_cap : 64;
            tensor_desc *n = realloc(p->classes, (size_t)ncap * sizeof *n);
            if (n) p->classes = n, p->classes_cap = ncap;
        }
        if (p->nclasses < p->classes_cap) p->classes[p->nclasses++] = *d;
    }
    int16_t cls = k < p->nclasses ? (int16_t)(k + 1) : 0;
    omp_unset_lock(&p->lock);
    return cls;
}

/* Every tensor's memo class (ctx.tclass): without a pool the tensor's own
 * (t + 1: the ctx's buffers are its own), with one the pool's class of
 * its description (tensor_desc). */
static void ctx_classes(ctx *c) {
    for (int t = 0; t < c->e->ntensors; t++) {
        if (!c->shared) {
            c->tclass[t] = (int16_t)(t + 1);
            continue;
        }
        tensor_desc d;
        search_tensor_desc(c, t, &d);
        c->tclass[t] = pool_class(c->shared, &d);
    }
}

static void bufs_free(search_bufs *b) {
    free(b->keep);
    free(b->order);
    for (int i = 0; i < b->npool; i++) search_archive_free(b->pool[i].own);
    free(b->pool);
    for (int i = 0; i < b->nknaps; i++) free(b->knaps[i]);
    free(b->knaps);
    *b = (search_bufs){0};
}

rotor_search_pool *rotor_search_pool_new(void) {
    rotor_search_pool *p = calloc(1, sizeof *p);
    if (p) omp_init_lock(&p->lock);
    return p;
}

void rotor_search_pool_free(rotor_search_pool *p) {
    if (!p) return;
    for (int i = 0; i < p->nidle; i++) bufs_free(&p->idle[i]);
    free(p->idle);
    free(p->classes);
    omp_destroy_lock(&p->lock);
    free(p);
}

static uint64_t pool_id(rotor_search_pool *p) {
    omp_set_lock(&p->lock);
    uint64_t id = ++p->next_id;
    omp_unset_lock(&p->lock);
    return id;
}

/* c->bufs for one search: an idle set of the pool (the one c used last if
 * still idle), else an empty one that the search fills.  A set last used
 * by another ctx keeps its lattices (a ring size's alone) and its memo,
 * whose slots are keyed by the pool's tensor classes (ctx_classes): each
 * front is the one any ctx of its class computes (issue 45: DenseNet's 1x1
 * convolutions share their output tensor, and the walk's capped searches
 * go from session to session); its options pointers are cleared as a
 * fresh set's. */
static void bufs_borrow(ctx *c) {
    rotor_search_pool *p = c->shared;
    c->own = (search_bufs){0};
    omp_set_lock(&p->lock);
    int k = p->nidle - 1;
    for (int i = 0; i < p->nidle; i++)
        if (p->idle[i].owner == c->id) k = i;
    if (k >= 0) {
        c->own = p->idle[k];
        p->idle[k] = p->idle[--p->nidle];
    }
    omp_unset_lock(&p->lock);
    if (c->own.owner != c->id)
        for (int i = 0; i < c->own.nknaps; i++) {
            memset(c->own.knaps[i]->po, 0, sizeof c->own.knaps[i]->po);
            c->own.knaps[i]->no_memo = false;
        }
    c->own.owner = c->id;
}

/* ... and back to the pool after it (freed if the pool cannot grow). */
static void bufs_return(ctx *c) {
    rotor_search_pool *p = c->shared;
    omp_set_lock(&p->lock);
    bool kept = false;
    if (p->nidle == p->cap) {
        int ncap = p->cap ? 2 * p->cap : 4;
        search_bufs *n = realloc(p->idle, (size_t)ncap * sizeof *n);
        if (n) {
            p->idle = n;
            p->cap = ncap;
        }
    }
    if (p->nidle < p->cap) {
        p->idle[p->nidle++] = c->own;
        kept = true;
    }
    omp_unset_lock(&p->lock);
    if (!kept) bufs_free(&c->own);
    c->own = (search_bufs){0};
}

/* One exact branch and bound for the fastest plan under c->cap, with the
 * buffers in c->bufs.  Returns false when out of memory; *have says
 * whether any plan fits. */
static bool search_once_run(ctx *c, int nthreads, rotor_candidate *best, bool *have, rotor_search_stats *st,
                            front *out_front) {
    double inf = INFINITY;
    uint64_t infbits;
    memcpy(&infbits, &inf, sizeof infbits);
    atomic_store(&c->incumbent, infbits);

    /* Pass 1: the walk over F_op keeps those whose bounds survive the
     * incumbent, best bound first, and seeds the incumbent with all-ones
     * plans as it goes (search_seed_all_ones).  Before it, an archived plan that
     * fits and the F_op of archived plans just above the cap (search_probe_archive)
     * give it an incumbent to start from. */
    if (!worker_pool(c, nthreads)) return false;
    worker *seed = &c->bufs->pool[0], *ws = &c->bufs->pool[1];
    for (int i = 0; i <= nthreads; i++) {
        worker *w = &c->bufs->pool[i];
        w->have_best = false;
        memset(&w->st, 0, sizeof w->st);
        memset(&w->front, 0, sizeof w->front);
        w->seen = NULL;
        w->pdiv_set = false; /* a pooled worker may hold another ctx's F_op */
    }
    if (c->spare) {
        /* the fastest plan an earlier search costed that fits this cap */
        for (int i = c->spare->n - 1; i >= 0; i--)
            if (c->spare->v[i].info.memory <= c->cap) {
                search_offer(seed, &c->spare->v[i]);
                break;
            }
        seed->seen = c->spare;
    }
    ctx_caches(c);
    fop_list keep = {.v = c->bufs->keep, .cap = c->bufs->keep_cap};
    bool oom = !workers_ready(c, ws, nthreads);
    pass1 p = {.c = c, .w = seed, .keep = &keep};
    if (!oom) search_probe_archive(c, ws, nthreads, &p);
    double thr = search_limit(c);
    if (!oom && c->cf_filled && !c->cf_lost && c->fc.full && c->counts && thr <= c->cf_above) search_pass1_scan(&p);
    else if (!oom) {
        search_pass1_seed(&p);
        /* the leaves above the limit passed over (fopwalk.c, "The walk's
         * cut"); a session's far above it, for its later scans */
        p.cut_k = c->cf ? WALK_CUT : 1 + SLACK;
        search_pass1_walk(&p, 0, c->cores);
        c->cf_above = search_walk_cut_above(&p);
    }
    /* a walk that filled the compute floors: later searches scan them
     * (the first below the full cap too, its other caches empty: it
     * decodes only the F_op its compute floors keep, issue 45) */
    if (!oom && c->cf) c->cf_filled = true;
    oom |= keep.oom;
    fop_key *order = NULL;
    /* the list as pass1_consider left it (grown, or failed to grow), the
     * buffers' again */
    c->bufs->keep = keep.v;
    c->bufs->keep_cap = keep.cap;
    if (!oom) oom = !keep_order(c->bufs, seed, &keep, &order) || !fronts_seed(c, seed, ws, nthreads);
    if (oom) keep.n = 0;
    /* the records pass 2 writes its floors to (pass1_consider made a
     * session's already): made here, serially, for the F_op it searches */
    for (int64_t k = 0; k < keep.n; k++) search_fop_rec_make(&c->fc, keep.v[k].index);

    /* Pass 2: the surviving F_op in parallel.  Threads share only the
     * incumbent time; each keeps its own best, merged below in thread order
     * under a total order, so the result does not depend on the schedule. */
    int done = 0, total = keep.n < INT32_MAX ? (int)keep.n : INT32_MAX;
    /* a frontier search's workers prune by each other's plans too
     * (pareto.c, "The shared log") */
    front_log flog;
    if (c->frontier && nthreads > 1 && keep.n > 1 && search_front_log_init(&flog)) {
        c->flog = &flog;
        for (int i = 0; i < nthreads; i++) {
            ws[i].tid = i;
            ws[i].log_seen = 0;
        }
    }
    /* one F_op or none: no team to wake (9 of Conformer-M b64's 63
     * searches; on a loaded machine a woken thread waits for a time slice) */
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads) if (keep.n > 1)
    for (int64_t k = 0; k < keep.n; k++) {
        if (search_stopped(c)) continue;
        int64_t i = order[k].pos;
        worker *w = &ws[omp_get_thread_num()];
        if (c->flog) search_front_log_pull(w);
        if (!search_prune(w, keep.v[i].bound, keep.v[i].mem_bound) && search_fop_full_bounds(w, &keep.v[i])) {
            search_fop(w, keep.v[i].fop);
            search_fop_searched(w, &keep.v[i]);
        }
        if (c->progress) {
#pragma omp critical(search_progress)
            c->progress(c->progress_ctx, done < total ? ++done : done, total);
        }
    }

    if (c->flog) {
        search_front_log_free(c->flog);
        c->flog = NULL;
    }
    st->fops_searched += keep.n;
    oom |= !merge_workers(c, seed, ws, nthreads, best, have, st);
    if (c->frontier && !oom) {
        *out_front = seed->front;
        seed->front.v = NULL;
        *have = out_front->n > 0;
        if (*have) *best = out_front->v[out_front->n - 1];
    }
    if (oom) {
        free(seed->front.v);
        seed->front.v = NULL;
    }
    return !oom;
}

/* One exact search (search_once_run), with c's own buffers or a set
 * borrowed from its pool for the search's length. */
bool search_once(ctx *c, int nthreads, rotor_candidate *best, bool *have, rotor_search_stats *st,
                 front *out_front) {
    if (!c->shared) return search_once_run(c, nthreads, best, have, st, out_front);
    bufs_borrow(c);
    bool ok = search_once_run(c, nthreads, best, have, st, out_front);
    bufs_return(c);
    return ok;
}

/* Measured (docs/performance.md): on plain contractions the single pass is
 * 1.3-7x faster than the epsilon loop, since each of the loop's searches
 * walks every F_op again.  With compound dimensions (convolutions) the
 * memory floors are loose, the front's memory-lean end fills late and the
 * single pass can be 40x slower (ResNet-50 conv1), while each capped search
 * of the loop prunes hard on memory: there the loop is the default. */
static bool pareto_single_pass(const rotor_expr *e, rotor_pareto_method m) {
    if (m != ROTOR_PARETO_AUTO) return m == ROTOR_PARETO_SINGLE_PASS;
    for (int t = 0; t < e->ntensors; t++)
        for (int d = 0; d < e->tensors[t].ndims; d++)
            if (e->tensors[t].dims[d].nterms > 1) return false;
    return true;
}

/* The search proper, after rotor_search has set up c (which it frees). */
static rotor_status search_run(ctx *c, const rotor_search_options *opt, double t0,
                               rotor_search_result *out, rotor_error *err) {
    int nthreads = opt && opt->threads > 0 ? opt->threads : omp_get_max_threads();
    int64_t cap0 = c->cap;

    rotor_search_stats st = {0};
    bool have = false;
    front fr = {0};
    c->frontier = opt && opt->pareto && pareto_single_pass(c->e, opt->pareto_method);
    bool capped = opt && opt->pareto && opt->pareto_time_ratio > 0;
    bool ok;
    if (c->frontier && capped) {
        /* the fastest plan first, then the front below its time cap */
        c->frontier = false;
        ok = search_once(c, nthreads, &out->best, &have, &st, NULL);
        c->frontier = true;
        if (ok && have) {
            c->time_cap = out->best.cost.total * opt->pareto_time_ratio;
            ok = search_once(c, nthreads, &out->best, &have, &st, &fr);
        }
    } else {
        ok = search_once(c, nthreads, &out->best, &have, &st, &fr);
        /* the epsilon loop below then prunes every capped search by time */
        if (ok && have && capped) c->time_cap = out->best.cost.total * opt->pareto_time_ratio;
    }
    if (!ok) return rotor_nomem(err);
    if (c->frontier && have) {
        out->pareto = malloc((size_t)fr.n * sizeof *out->pareto);
        if (!out->pareto) {
            free(fr.v);
            return rotor_nomem(err);
        }
        for (int i = 0; i < fr.n; i++) out->pareto[i] = fr.v[fr.n - 1 - i];
        out->npareto = fr.n;
    }
    free(fr.v);
    if (!have) {
        st.threads = nthreads;
        st.wall_seconds = omp_get_wtime() - t0;
        out->stats = st;
        return rotor_fail(err, ROTOR_ERR_NOFIT,
                          "no valid plan fits: every plan of this operator needs more than %lld bytes "
                          "per core or breaks a constraint",
                          (long long)cap0);
    }
    if (opt && opt->pareto && !c->frontier) {
        rotor_status rc = search_pareto_epsilon(c, nthreads, out, &st, err);
        if (rc) return rc;
    }
    st.threads = nthreads;
    st.wall_seconds = omp_get_wtime() - t0;
    out->stats = st;
    return ROTOR_OK;
}

/* Sets up c for e on chip under opt (c's arrays are left NULL). */
static rotor_status ctx_init(ctx *c, const rotor_expr *e, const rotor_chip *chip,
                             const rotor_search_options *opt, rotor_error *err) {
    memset(c, 0, sizeof *c);
    if (!e->bound) return rotor_fail(err, ROTOR_ERR_INPUT, "search: the expression has no extents");
    c->e = e;
    c->chip = chip;
    c->m = opt && opt->model ? opt->model : rotor_cost_model_default();
    if (opt) {
        c->cons = opt->constraints;
        c->progress = opt->progress;
        c->progress_ctx = opt->progress_ctx;
    }
    c->cores = rotor_chip_cores(chip);
    c->cap = rotor_chip_sram(chip);
    c->time_cap = INFINITY;
    c->nfops = -1;
    c->bufs = &c->own;
    if (opt && opt->pool) {
        c->shared = opt->pool;
        c->id = pool_id(opt->pool);
    }
    if (opt && opt->pareto_time_ratio != 0 && !(opt->pareto_time_ratio >= 1))
        return rotor_fail(err, ROTOR_ERR_INPUT, "search: pareto_time_ratio must be 0 or at least 1, got %g",
                          opt->pareto_time_ratio);
    if (c->cons.memory_cap > 0 && c->cons.memory_cap < c->cap) c->cap = c->cons.memory_cap;
    if (c->cons.min_cores > c->cores)
        return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: min_cores=%lld exceeds the chip's %lld cores",
                          (long long)c->cons.min_cores, (long long)c->cores);
    for (int a = 0; a < e->naxes; a++) {
        c->last_tensor[a] = -1;
        for (int t = 0; t < e->ntensors; t++)
            if (e->tensors[t].has_axis[a]) c->last_tensor[a] = t;
    }
    for (int t = 0; t < e->ntensors; t++) {
        c->ntax[t] = 0;
        for (int a = 0; a < e->naxes; a++)
            if (e->tensors[t].has_axis[a]) c->tax[t][c->ntax[t]++] = (int8_t)a;
    }
    c->out_floor_k = search_output_floor_k(c->m, e, chip);
    c->rot_lat = search_rotation_latency(c->m, chip);
    return ROTOR_OK;
}

static void ctx_free(ctx *c) {
    bufs_free(&c->own);
    free(c->counts);
    search_fop_cache_free(&c->fc);
    free(c->cf);
    free(c->cf_val);
    free(c->cf_hash);
    free(c->cf_bmin);
    free(c->cf_bmin16);
    free(c->cf_bknown);
    search_archive_free(c->spare);
}

const char *rotor_solver_name(rotor_solver s) {
    return s == ROTOR_SOLVER_FAST ? "fast" : s == ROTOR_SOLVER_RANDOM ? "random" : s == ROTOR_SOLVER_ML ? "ml" : "exact";
}

bool rotor_solver_find(const char *name, rotor_solver *out) {
    if (strcmp(name, "exact") == 0) *out = ROTOR_SOLVER_EXACT;
    else if (strcmp(name, "fast") == 0) *out = ROTOR_SOLVER_FAST;
    else if (strcmp(name, "random") == 0) *out = ROTOR_SOLVER_RANDOM;
    else if (strcmp(name, "ml") == 0) *out = ROTOR_SOLVER_ML;
    else return false;
    return true;
}

rotor_status rotor_search(const rotor_expr *e, const rotor_chip *chip,
                          const rotor_search_options *opt, rotor_search_result *out,
                          rotor_error *err) {
    /* one chip's plan (the compile refuses pods alike; found by a review
     * helper: a 16,384-cube MatMul on ipu-pod4 planned over 5,888 cores
     * took 1,255.47 us of communication whatever interchip_gbps was) */
    rotor_status one = rotor_chip_require_one(chip, "plan", err);
    if (one) {
        memset(out, 0, sizeof *out);
        return one;
    }
    if (opt && opt->solver == ROTOR_SOLVER_FAST) return kapla_search(e, chip, opt, out, err);
    if (opt && (opt->solver == ROTOR_SOLVER_RANDOM || opt->solver == ROTOR_SOLVER_ML))
        return kapla_base_search(e, chip, opt, out, err);
    memset(out, 0, sizeof *out);
    double t0 = omp_get_wtime();
    ctx c;
    rotor_status rc = ctx_init(&c, e, chip, opt, err);
    if (!rc) rc = search_run(&c, opt, t0, out, err);
    ctx_free(&c);
    return rc;
}

/* ---- sessions ------------------------------------------------------------ */

/* A session answers many capped searches of one operator (the compiler's
 * walk down a frontier, T10 §4.3.2).  Each answer is exactly rotor_search's
 * under that cap; what carries over only prunes sooner: the F_op floors
 * (cap-independent), each F_op's time floor under the last cap it was
 * computed for (a floor under any smaller cap too), and an archive of plans
 * costed so far, whose fastest plan under the new cap seeds the incumbent. */
struct rotor_search_session {
    ctx c;
    int threads;
    int64_t cap0; /* the chip's SRAM or the options' memory_cap */
};

ctx *search_session_ctx(rotor_search_session *s) { return &s->c; }

rotor_status rotor_search_session_open(const rotor_expr *e, const rotor_chip *chip,
                                       const rotor_search_options *opt, rotor_search_session **out,
                                       rotor_error *err) {
    *out = NULL;
    rotor_search_session *s = calloc(1, sizeof *s);
    if (!s) return rotor_nomem(err);
    rotor_status rc = ctx_init(&s->c, e, chip, opt, err);
    if (!rc && opt && opt->pareto)
        rc = rotor_fail(err, ROTOR_ERR_INPUT, "search: a session finds single plans, not frontiers");
    if (!rc && opt && opt->solver != ROTOR_SOLVER_EXACT)
        rc = rotor_fail(err, ROTOR_ERR_INPUT, "search: a session runs the exact solver only");
    if (!rc && !(s->c.spare = search_archive_new())) rc = rotor_nomem(err);
    if (rc) {
        ctx_free(&s->c);
        free(s);
        return rc;
    }
    s->c.session = true;
    s->c.full_cap = s->c.cap;
    s->threads = opt && opt->threads > 0 ? opt->threads : omp_get_max_threads();
    s->cap0 = s->c.cap;
    *out = s;
    return ROTOR_OK;
}

rotor_status rotor_search_session_best(rotor_search_session *s, int64_t cap, int threads,
                                       rotor_candidate *best, rotor_search_stats *stats,
                                       rotor_error *err) {
    return rotor_search_session_within(s, cap, INFINITY, threads, best, stats, err);
}

/* The time cap is the single pass's (ctx.time_cap): search_prune cuts
 * every node whose time floor exceeds it and search_offer turns away every
 * plan slower than it, so the fastest plan under the memory cap, when it
 * runs in at most time_cap, is found with its ties exactly as without.
 * What the session keeps does not depend on it: the floors and the lb
 * cache are the cap's, the archive holds every plan costed. */
rotor_status rotor_search_session_within(rotor_search_session *s, int64_t cap, double time_cap, int threads,
                                         rotor_candidate *best, rotor_search_stats *stats, rotor_error *err) {
    return rotor_search_session_until(s, cap, time_cap, threads, NULL, NULL, best, stats, err);
}

rotor_status rotor_search_session_until(rotor_search_session *s, int64_t cap, double time_cap, int threads,
                                        const _Atomic bool *stop, bool *stopped, rotor_candidate *best,
                                        rotor_search_stats *stats, rotor_error *err) {
    ctx *c = &s->c;
    c->stop = stop;
    c->cap = cap > 0 && cap < s->cap0 ? cap : s->cap0;
    c->time_cap = rotor_search_time_cap(time_cap);
    int nthreads = threads > 0 ? threads : s->threads;
    rotor_search_stats st = {0};
    double t0 = omp_get_wtime();
    bool have = false;
    bool ok = search_once(c, nthreads, best, &have, &st, NULL);
    c->time_cap = INFINITY;
    c->stop = NULL;
    st.threads = nthreads;
    st.wall_seconds = omp_get_wtime() - t0;
    if (stats) *stats = st;
    if (stopped) *stopped = stop && atomic_load(stop);
    if (stopped && *stopped) return ROTOR_OK;
    if (!ok) return rotor_nomem(err);
    if (!have && time_cap < INFINITY)
        return rotor_fail(err, ROTOR_ERR_NOFIT, "no plan within %lld bytes per core runs in %g s or less",
                          (long long)c->cap, time_cap);
    if (!have)
        return rotor_fail(err, ROTOR_ERR_NOFIT,
                          "no valid plan fits: every plan of this operator needs more than %lld bytes "
                          "per core or breaks a constraint",
                          (long long)c->cap);
    return ROTOR_OK;
}

void rotor_search_session_close(rotor_search_session *s) {
    if (!s) return;
    ctx_free(&s->c);
    free(s);
}

void rotor_search_result_free(rotor_search_result *r) {
    if (!r) return;
    free(r->pareto);
    r->pareto = NULL;
    r->npareto = 0;
}
