/* handoffcache.c — see handoffcache.h. */
#include "compile/handoffcache.h"

#include "rotor/base/clock.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/op/handoff.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/place.h"

typedef struct pair_key {
    int fp, fc, t;
    rotor_plan pp, pc;
    rotor_view view; /* the consumer tensor's view (zeroed: none) */
} pair_key;

typedef struct entry {
    bool used;
    uint64_t hash;
    pair_key key;
    handoff_traffic *tr; /* its own allocation: a caller's pointer outlives the table's growth */
} entry;

/* A combination of hand-offs that run together, and its busiest port. */
#define MOST_SLOTS 1024
typedef struct most_entry {
    const handoff_traffic *tr[ROTOR_MAX_TENSORS]; /* stable while the cache lives */
    int n;
    int64_t most, link;
} most_entry;

/* A placed plan of one shape, and, once it has produced, its hand-off.
 * One plan meets several partners (a consumer's candidates against one
 * producer, a residual's two inputs, a consumer that later produces), so
 * count() places each plan once while it stays among the last used: up to
 * PLACED_SLOTS, but past PLACED_MIN only while the slots hold at most
 * PLACED_CORES cores in all (a wafer's placement is megabytes: on a wafer
 * the bound stays PLACED_MIN, as before issue 45).  DenseNet-121 asks 337
 * pairs of some 400 distinct plans: 32 slots placed 654 times, 128 place
 * each plan once.  A hand-off reads only partitions, so the plans are
 * placed without their rings (rotor_place_make_partitions: half of a
 * placement's work, the same partitions and errors). */
#define PLACED_SLOTS 128
#define PLACED_MIN 32
#define PLACED_CORES ((int64_t)1 << 18)
typedef struct placed {
    int f;               /* the shape; -1: empty */
    rotor_plan plan;     /* key_plan'd */
    uint64_t hash, used; /* hash of plan; the use counter when last used */
    rotor_place *pl;
    rotor_handoff *h;    /* NULL until asked */
    int64_t cores;       /* the plan's */
} placed;

/* A setup asked before (handoff_cache_setup's front memo): its inputs'
 * shapes, tensors, plans and views as the caller held them, and its price.
 * The walk asks each setup again at every step and for every split it
 * tries (a warm Conformer-M: 1.2 million asks, 63 distinct setups), and
 * building and hashing the content key (vec_setup) was half its
 * instructions.  The front memo is found by where the caller keeps the
 * plans, which is cheap to hash, and holds only when the content there is
 * still the same: a frontier that gains points moves them, and a moved plan
 * is a miss here, answered from the content-keyed memo behind it. */
typedef struct front_in {
    int f, t;
    const rotor_plan *p; /* where the caller kept it: the hash's, never read */
    rotor_plan plan;     /* the content, compared up to PLAN_BYTES */
    bool vset;
    int8_t dim[ROTOR_MAX_DIMS];
    int64_t step[ROTOR_MAX_DIMS], offset[ROTOR_MAX_DIMS];
} front_in;

typedef struct front_entry {
    uint64_t h;
    int fc, n;
    const rotor_plan *pc;
    rotor_plan plan; /* the consumer's */
    int64_t r[3];
    front_in in[]; /* n */
} front_entry;

/* A plan's bytes up to its last member: no padding inside, any after. */
#define PLAN_BYTES (offsetof(rotor_plan, overlap) + sizeof(bool))

struct handoff_cache {
    const rotor_chip *chip;
    front_entry **front;  /* open addressing, a power of two, at most half full */
    size_t fcap, fn;
    double count_s;       /* wall seconds in count(): handoff_cache_seconds */
    int64_t counted;      /* pairs counted (handoff_cache_counted) */
    int64_t placed_n;     /* placements made (handoff_cache_placements) */
    placed slot[PLACED_SLOTS];
    int nplaced;          /* slots in use */
    int64_t placed_cores; /* their plans' cores */
    uint64_t clock;       /* uses so far */
    entry *v;
    size_t cap, n;
    most_entry *most;     /* MOST_SLOTS, direct-mapped; NULL until first asked */
    int64_t *in, *out;    /* scratch per core, all zero between uses: nscratch */
    int64_t nscratch;
    rotor_mesh_load load; /* a mesh's link counts, cleared between hand-offs */
    handoff_store *store; /* handoff_cache_persist's; NULL: none */
    rotor_handoff_memo *memo; /* the walks' box memo, reused (rotor_handoff_walk_in) */
};

handoff_cache *handoff_cache_new(const rotor_chip *chip) {
    handoff_cache *hc = calloc(1, sizeof *hc);
    if (!hc) return NULL;
    hc->chip = chip;
    if (!(hc->memo = rotor_handoff_memo_new())) {
        free(hc);
        return NULL;
    }
    for (int i = 0; i < PLACED_SLOTS; i++) hc->slot[i].f = -1;
    return hc;
}

int64_t handoff_cache_counted(const handoff_cache *hc) { return hc ? hc->counted : 0; }
int64_t handoff_cache_placements(const handoff_cache *hc) { return hc ? hc->placed_n : 0; }

static void placed_clear(placed *s) {
    rotor_handoff_free(s->h); /* it reads the placement's expression: first */
    rotor_place_free(s->pl);
    memset(s, 0, sizeof *s);
    s->f = -1;
}

static void counts_free(handoff_counts *c) {
    free(c->core);
    free(c->value);
}

double handoff_cache_seconds(const handoff_cache *hc) { return hc ? hc->count_s : 0; }

void handoff_cache_free(handoff_cache *hc) {
    if (!hc) return;
    for (size_t i = 0; i < hc->cap; i++) {
        if (!hc->v[i].tr) continue;
        counts_free(&hc->v[i].tr->recv);
        counts_free(&hc->v[i].tr->send);
        free(hc->v[i].tr);
    }
    free(hc->v);
    for (int i = 0; i < PLACED_SLOTS; i++) placed_clear(&hc->slot[i]);
    free(hc->most);
    free(hc->in);
    free(hc->out);
    rotor_mesh_load_free(&hc->load);
    handoff_cache_store_free(hc->store);
    rotor_handoff_memo_free(hc->memo);
    for (size_t i = 0; i < hc->fcap; i++) free(hc->front[i]);
    free(hc->front);
    free(hc);
}

/* The zeroed scratch for n cores. */
static bool scratch(handoff_cache *hc, int64_t n) {
    if (n <= hc->nscratch) return true;
    free(hc->in);
    free(hc->out);
    hc->in = calloc((size_t)n, sizeof *hc->in);
    hc->out = calloc((size_t)n, sizeof *hc->out);
    hc->nscratch = hc->in && hc->out ? n : 0;
    return hc->nscratch;
}

/* The fewest bytes that hold every value of v[0..n) (handoff_counts). */
static int counts_width(const int64_t *v, int64_t n) {
    int64_t lo = 0, hi = 0;
    for (int64_t c = 0; c < n; c++) {
        if (v[c] < lo) lo = v[c];
        if (v[c] > hi) hi = v[c];
    }
    return lo >= 0 && hi <= UINT16_MAX ? 2 : lo >= INT32_MIN && hi <= INT32_MAX ? 4 : 8;
}

/* v[c] into slot i of out's values (out->width bytes each). */
static void counts_put(handoff_counts *out, int64_t i, int64_t v) {
    if (out->width == 2) ((uint16_t *)out->value)[i] = (uint16_t)v;
    else if (out->width == 4) ((int32_t *)out->value)[i] = (int32_t)v;
    else ((int64_t *)out->value)[i] = v;
}

/* v[0..n) kept as counts (sparse where at most half the cores move
 * anything; each value in the fewest bytes the entry's fit), *max its
 * largest; v left zeroed. */
static bool counts_keep(int64_t *v, int64_t n, handoff_counts *out, int64_t *max) {
    int64_t nz = 0;
    *max = 0;
    for (int64_t c = 0; c < n; c++) {
        nz += v[c] != 0;
        if (v[c] > *max) *max = v[c];
    }
    *out = (handoff_counts){.width = counts_width(v, n)};
    bool sparse = 2 * nz <= n;
    out->value = malloc((size_t)(sparse ? nz : n) * (size_t)out->width + 1);
    out->core = sparse ? malloc((size_t)nz * sizeof *out->core + 1) : NULL;
    if (!out->value || (sparse && !out->core)) {
        counts_free(out);
        memset(v, 0, (size_t)n * sizeof *v);
        return false;
    }
    for (int64_t c = 0; !sparse && c < n; c++) counts_put(out, c, v[c]);
    for (int64_t c = 0; sparse && c < n; c++)
        if (v[c]) out->core[out->nz] = (int32_t)c, counts_put(out, out->nz++, v[c]);
    if (!sparse) out->nz = n;
    memset(v, 0, (size_t)n * sizeof *v);
    return true;
}

/* Adds the counts (of n cores) into v, each width by its own loop. */
static void counts_add(const handoff_counts *c, int64_t n, int64_t *v) {
    const uint16_t *v2 = c->value;
    const int32_t *v4 = c->value;
    const int64_t *v8 = c->value;
    if (!c->core && c->width == 2)
        for (int64_t q = 0; q < n; q++) v[q] += v2[q];
    else if (!c->core && c->width == 4)
        for (int64_t q = 0; q < n; q++) v[q] += v4[q];
    else if (!c->core)
        for (int64_t q = 0; q < n; q++) v[q] += v8[q];
    else
        for (int64_t i = 0; i < c->nz; i++) v[c->core[i]] += handoff_cache_counts_at(c, i);
}

/* The plan's meaningful entries into a zeroed key plan: entries past the
 * expression's axes and tensors may hold anything. */
static void key_plan(rotor_plan *dst, const rotor_expr *e, const rotor_plan *p) {
    for (int a = 0; a < e->naxes; a++) {
        dst->fop[a] = p->fop[a];
        dst->order[a] = p->order[a];
        for (int t = 0; t < e->ntensors; t++) dst->ft[t][a] = p->ft[t][a];
    }
}

/* A multiply-xorshift hash over the key's 64-bit words (the key is zeroed
 * first, so padding hashes the same every time; it is a whole number of
 * words).  Byte-wise FNV-1a over its 1.3 KB had become a seventh of
 * compiling BERT-Large once attention's Q, K and V came by hand-off. */
_Static_assert(sizeof(pair_key) % sizeof(uint64_t) == 0, "the key hashes as whole words");
static uint64_t hash_key(const pair_key *k) {
    const unsigned char *p = (const unsigned char *)k;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof *k; i += sizeof(uint64_t)) {
        uint64_t w;
        memcpy(&w, p + i, sizeof w);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    return h;
}

static bool grow(handoff_cache *hc) {
    size_t cap = hc->cap ? 2 * hc->cap : 256;
    entry *v = calloc(cap, sizeof *v);
    if (!v) return false;
    for (size_t i = 0; i < hc->cap; i++) {
        if (!hc->v[i].used) continue;
        size_t j = hc->v[i].hash & (cap - 1);
        while (v[j].used) j = (j + 1) & (cap - 1);
        v[j] = hc->v[i];
    }
    free(hc->v);
    hc->v = v;
    hc->cap = cap;
    return true;
}

/* rotor_handoff_walk's callback: a piece routed over the mesh. */
typedef struct router {
    const int64_t *pphys, *cphys;       /* the plans' chip cores */
    const int32_t (*pxy)[2], (*cxy)[2]; /* their positions on their chip's mesh */
    int64_t w;                          /* the mesh's width */
    handoff_traffic *tr;
    int64_t *recv, *send; /* per chip core: what the laid-out plans really move */
    rotor_mesh_load *load;
} router;

static rotor_status route_piece(void *ctx, int64_t dst, int64_t src, int64_t elems) {
    router *r = ctx;
    int64_t s = r->pphys[src], d = r->cphys[dst];
    if (s == d) return ROTOR_OK; /* already on the receiver's core */
    const int32_t *a = r->pxy[src], *b = r->cxy[dst];
    r->recv[b[1] * r->w + b[0]] += elems;
    r->send[a[1] * r->w + a[0]] += elems;
    int64_t h = rotor_mesh_load_add_at(r->load, a[0], a[1], b[0], b[1], elems);
    if (h > r->tr->hops) r->tr->hops = h;
    return ROTOR_OK;
}

/* The chip cores of plan (rotor_mesh_map_cores) into phys, and their
 * positions on their chip's mesh into xy (so that a piece divides
 * nothing). */
static rotor_status lay_out(const rotor_place *pl, const rotor_chip *chip, int64_t *phys, int32_t (*xy)[2],
                            rotor_error *err) {
    const rotor_plan_info *info = rotor_place_info(pl);
    rotor_status st = rotor_mesh_map_cores(rotor_place_expr(pl), chip, rotor_place_plan(pl), info, phys, err);
    for (int64_t c = 0; !st && c < info->cores; c++) {
        int64_t local = phys[c] % chip->cores_per_chip;
        xy[c][0] = (int32_t)(local % chip->mesh_width);
        xy[c][1] = (int32_t)(local / chip->mesh_width);
    }
    return st;
}

/* A mesh's traffic of the hand-off (h from the producer's placement lp
 * to the consumer's lc), both laid out as the replay lays them
 * (compile/setuppieces.c routes the same pieces): the port counts are the
 * chip cores' (a producer's core and the consumer's core of the same
 * number are not one core on a mesh, so what each holds is by layout), and
 * the link counts. */
static rotor_status count_links(handoff_cache *hc, const rotor_chip *chip_p, const rotor_chip *chip_c,
                                const rotor_handoff *h, const rotor_place *lp, const rotor_place *lc, int t,
                                const rotor_view *view, handoff_traffic *tr, rotor_error *err) {
    int64_t np = rotor_place_info(lp)->cores, nc = rotor_place_info(lc)->cores, n = chip_c->cores_per_chip;
    int64_t *pphys = malloc((size_t)np * sizeof *pphys), *cphys = malloc((size_t)nc * sizeof *cphys);
    int32_t(*pxy)[2] = malloc((size_t)np * sizeof *pxy), (*cxy)[2] = malloc((size_t)nc * sizeof *cxy);
    rotor_status st = !pphys || !cphys || !pxy || !cxy || !scratch(hc, n) ? rotor_nomem(err) : ROTOR_OK;
    if (!st && (hc->load.w != chip_c->mesh_width || hc->load.h != chip_c->mesh_height)) {
        rotor_mesh_load_free(&hc->load);
        st = rotor_mesh_load_init(&hc->load, chip_c, err);
    }
    if (!st) st = lay_out(lp, chip_p, pphys, pxy, err);
    if (!st) st = lay_out(lc, chip_c, cphys, cxy, err);
    router r = {.pphys = pphys, .cphys = cphys, .pxy = pxy, .cxy = cxy, .w = chip_c->mesh_width, .tr = tr,
                .recv = hc->in, .send = hc->out, .load = &hc->load};
    if (!st) st = rotor_handoff_walk_in(h, lc, t, view, hc->memo, route_piece, &r, err);
    if (!st) tr->max_link = rotor_mesh_load_max(&hc->load);
    if (hc->load.hit) rotor_mesh_load_clear(&hc->load);
    tr->nrecv = tr->nsend = n;
    bool kept = !st && counts_keep(hc->in, n, &tr->recv, &tr->max_recv);
    kept = !st && counts_keep(hc->out, n, &tr->send, &tr->max_send) && kept;
    if (st && hc->nscratch >= n) { /* the scratch goes back zeroed */
        memset(hc->in, 0, (size_t)n * sizeof *hc->in);
        memset(hc->out, 0, (size_t)n * sizeof *hc->out);
    }
    if (!st && !kept) {
        counts_free(&tr->recv);
        counts_free(&tr->send);
        st = rotor_nomem(err);
    }
    free(pphys), free(cphys), free(pxy), free(cxy);
    return st;
}

/* The traffic by plan core, where a plan's core c is the chip's core c. */
static rotor_status count_plain(handoff_cache *hc, const rotor_handoff *h, const rotor_place *lc, int t,
                                const rotor_view *view, handoff_traffic *tr, rotor_error *err) {
    tr->nrecv = rotor_place_info(lc)->cores;
    tr->nsend = rotor_handoff_cores(h);
    int64_t *recv = malloc((size_t)tr->nrecv * sizeof *recv), *send = malloc((size_t)tr->nsend * sizeof *send);
    rotor_status st = !recv || !send ? rotor_nomem(err)
                                     : rotor_handoff_traffic_in(h, lc, t, view, hc->memo, recv, &tr->max_recv, send,
                                                                &tr->max_send);
    if (st == ROTOR_ERR_NOMEM) st = rotor_nomem(err);
    bool kept = !st && counts_keep(recv, tr->nrecv, &tr->recv, &tr->max_recv);
    kept = !st && counts_keep(send, tr->nsend, &tr->send, &tr->max_send) && kept;
    if (!st && !kept) {
        counts_free(&tr->recv);
        counts_free(&tr->send);
        st = rotor_nomem(err);
    }
    free(recv);
    free(send);
    return st;
}

static uint64_t hash_plan(const rotor_plan *p) {
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i + sizeof(uint64_t) <= sizeof *p; i += sizeof(uint64_t)) {
        uint64_t w;
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    return h;
}

/* Empties slot s (placed_clear) and its share of the totals. */
static void slot_drop(handoff_cache *hc, placed *s) {
    if (s->f >= 0) hc->nplaced--, hc->placed_cores -= s->cores;
    placed_clear(s);
}

/* The slot for a new placement of cores cores: an empty one while the
 * bounds allow (PLACED_MIN, PLACED_CORES), else the one used longest ago
 * (never the one this compile asked for just before: its use is the
 * latest, so count()'s two placements are both live). */
static placed *slot_for(handoff_cache *hc, int64_t cores) {
    placed *empty = NULL, *old = NULL;
    for (int i = 0; i < PLACED_SLOTS; i++) {
        placed *x = &hc->slot[i];
        if (x->f < 0) {
            if (!empty) empty = x;
        } else if (!old || x->used < old->used)
            old = x;
    }
    if (empty && (hc->nplaced < PLACED_MIN || hc->placed_cores + cores <= PLACED_CORES)) return empty;
    slot_drop(hc, old);
    return old;
}

/* The placement of plan p of shape f (expression e), made now if it is not
 * among the slots (slot_for makes room); with want_h, its hand-off too. */
static rotor_status place_of(handoff_cache *hc, int f, const rotor_expr *e, const rotor_plan *p, bool want_h,
                             placed **out, rotor_error *err) {
    rotor_plan k;
    memset(&k, 0, sizeof k);
    key_plan(&k, e, p);
    uint64_t h = hash_plan(&k);
    placed *s = NULL;
    for (int i = 0; i < PLACED_SLOTS && !s; i++) {
        placed *x = &hc->slot[i];
        if (x->f == f && x->hash == h && !memcmp(&x->plan, &k, sizeof k)) s = x;
    }
    if (!s) {
        rotor_plan_info info;
        rotor_status st = rotor_plan_derive(e, hc->chip, p, &info, err);
        if (st) return st;
        s = slot_for(hc, info.cores);
        if ((st = rotor_place_make_partitions(e, p, &info, &s->pl, err))) return st;
        s->f = f;
        s->plan = k;
        s->hash = h;
        s->cores = info.cores;
        hc->nplaced++;
        hc->placed_cores += info.cores;
        hc->placed_n++;
    }
    s->used = ++hc->clock;
    if (want_h && !s->h) {
        rotor_status st = rotor_handoff_make(s->pl, &s->h, err);
        if (st) return st;
    }
    *out = s;
    return ROTOR_OK;
}

static rotor_status count(handoff_cache *hc, int fp, const rotor_expr *ep, const rotor_plan *pp, int fc,
                          const rotor_expr *ec, const rotor_plan *pc, int t, const rotor_view *view,
                          const rotor_chip *chip_p, const rotor_chip *chip_c, entry *out, rotor_error *err) {
    placed *sp = NULL, *sc = NULL;
    rotor_status st = place_of(hc, fp, ep, pp, true, &sp, err);
    if (!st) st = place_of(hc, fc, ec, pc, false, &sc, err);
    handoff_traffic *tr = st ? NULL : calloc(1, sizeof *tr);
    if (!st && !tr) st = rotor_nomem(err);
    if (!st && hc->chip->topology == ROTOR_TOPO_MESH)
        st = count_links(hc, chip_p, chip_c, sp->h, sp->pl, sc->pl, t, view, tr, err);
    else if (!st) st = count_plain(hc, sp->h, sc->pl, t, view, tr, err);
    if (st) free(tr);
    else out->tr = tr, hc->counted++;
    return st;
}

rotor_status handoff_cache_traffic(handoff_cache *hc, int fp, const rotor_expr *ep, const rotor_plan *pp, int fc,
                                   const rotor_expr *ec, const rotor_plan *pc, int t, const rotor_view *view,
                                   const rotor_chip *chip_p, const rotor_chip *chip_c, const handoff_traffic **out,
                                   rotor_error *err) {
    pair_key k;
    memset(&k, 0, sizeof k);
    k.fp = fp;
    k.fc = fc;
    k.t = t;
    key_plan(&k.pp, ep, pp);
    key_plan(&k.pc, ec, pc);
    if (view && view->set) { /* only the meaningful entries, as for the plans */
        int nd = ec->tensors[t].ndims, ny = ep->tensors[0].ndims;
        k.view.set = true;
        for (int d = 0; d < nd; d++) k.view.dim[d] = view->dim[d], k.view.step[d] = view->step[d];
        for (int j = 0; j < ny; j++) k.view.offset[j] = view->offset[j];
    }
    uint64_t h = hash_key(&k);
    if (hc->cap) {
        for (size_t j = h & (hc->cap - 1); hc->v[j].used; j = (j + 1) & (hc->cap - 1))
            if (hc->v[j].hash == h && !memcmp(&hc->v[j].key, &k, sizeof k)) {
                *out = hc->v[j].tr;
                return ROTOR_OK;
            }
    }
    if ((hc->n + 1) * 2 > hc->cap && !grow(hc)) return rotor_nomem(err);
    entry e = {.used = true, .hash = h, .key = k};
    double t0 = rotor_clock_s();
    rotor_status st = count(hc, fp, ep, pp, fc, ec, pc, t, view, chip_p, chip_c, &e, err);
    hc->count_s += rotor_clock_s() - t0;
    if (st) return st;
    size_t j = h & (hc->cap - 1);
    while (hc->v[j].used) j = (j + 1) & (hc->cap - 1);
    hc->v[j] = e;
    hc->n++;
    *out = hc->v[j].tr;
    return ROTOR_OK;
}

rotor_status handoff_cache_most(handoff_cache *hc, const handoff_traffic *const *tr, int n, int64_t *most,
                                int64_t *link, int64_t *hops, rotor_error *err) {
    *most = 0;
    int64_t lk = 0, hp = 0;
    for (int i = 0; i < n; i++)
        if (tr[i]->hops > hp) hp = tr[i]->hops;
    if (hops) *hops = hp;
    if (link) *link = 0;
    if (n == 1) {
        *most = tr[0]->max_recv > tr[0]->max_send ? tr[0]->max_recv : tr[0]->max_send;
        if (link) *link = tr[0]->max_link;
    }
    if (n <= 1) return ROTOR_OK;
    if (!hc->most && !(hc->most = calloc(MOST_SLOTS, sizeof *hc->most))) return rotor_nomem(err);
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uintptr_t)tr[i]) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    most_entry *m = &hc->most[h % MOST_SLOTS];
    bool hit = m->n == n;
    for (int i = 0; hit && i < n; i++) hit = m->tr[i] == tr[i];
    if (hit) {
        *most = m->most;
        if (link) *link = m->link;
        return ROTOR_OK;
    }
    int64_t cores = 0; /* per core, every input's traffic together, in and out */
    for (int i = 0; i < n; i++) {
        if (tr[i]->nrecv > cores) cores = tr[i]->nrecv;
        if (tr[i]->nsend > cores) cores = tr[i]->nsend;
    }
    if (!scratch(hc, cores)) return rotor_nomem(err);
    for (int i = 0; i < n; i++) {
        counts_add(&tr[i]->recv, tr[i]->nrecv, hc->in);
        counts_add(&tr[i]->send, tr[i]->nsend, hc->out);
    }
    for (int64_t q = 0; q < cores; q++) {
        if (hc->in[q] > *most) *most = hc->in[q];
        if (hc->out[q] > *most) *most = hc->out[q];
    }
    memset(hc->in, 0, (size_t)cores * sizeof *hc->in);
    memset(hc->out, 0, (size_t)cores * sizeof *hc->out);
    /* a mesh: each input's busiest link, added up (a bound of the busiest
     * link of them all: the per-link counts are not kept, a wafer's are
     * megabytes a pair) */
    for (int i = 0; i < n; i++) lk += tr[i]->max_link;
    if (link) *link = lk;
    m->n = n;
    for (int i = 0; i < n; i++) m->tr[i] = tr[i];
    m->most = *most;
    m->link = lk;
    return ROTOR_OK;
}

/* ---- the persistent memo --------------------------------------------------- */

rotor_status handoff_cache_persist(handoff_cache *hc, const char *dir, struct rotor_plan_store *shelf, int nshapes,
                                   char *const *shape, const rotor_chip *fchip, int *damaged, rotor_error *err) {
    handoff_cache_store_free(hc->store);
    hc->store = NULL;
    return handoff_cache_store_open(dir, shelf, nshapes, shape, fchip, hc->chip, &hc->store, damaged, err);
}

bool handoff_cache_save(handoff_cache *hc) { return hc && handoff_cache_store_save(hc->store); }

/* The plan's meaningful entries (key_plan's) appended to v at *n. */
static void vec_plan(int64_t *v, int *n, const rotor_expr *e, const rotor_plan *p) {
    for (int a = 0; a < e->naxes; a++) {
        v[(*n)++] = p->fop[a];
        v[(*n)++] = p->order[a];
        for (int t = 0; t < e->ntensors; t++) v[(*n)++] = p->ft[t][a];
    }
}

/* A setup's record key: the inputs (producer index, tensor, plan, view as
 * handoff_cache_traffic keys it), then the consumer's plan.  False when a
 * producer is not in the file (and add is false, or out of memory). */
static bool vec_setup(handoff_cache *hc, const handoff_input *in, int n, int fc, const rotor_expr *ec,
                      const rotor_plan *pc, bool add, int64_t *v, int *len) {
    int k = 0;
    v[k++] = n;
    for (int i = 0; i < n; i++) {
        int pi = handoff_cache_store_producer(hc->store, fc, in[i].f, add);
        if (pi < 0) return false;
        v[k++] = pi;
        v[k++] = in[i].t;
        vec_plan(v, &k, in[i].e, in[i].p);
        bool set = in[i].view && in[i].view->set;
        v[k++] = set;
        int nd = ec->tensors[in[i].t].ndims, ny = in[i].e->tensors[0].ndims;
        for (int d = 0; set && d < nd; d++) v[k++] = in[i].view->dim[d], v[k++] = in[i].view->step[d];
        for (int j = 0; set && j < ny; j++) v[k++] = in[i].view->offset[j];
    }
    vec_plan(v, &k, ec, pc);
    *len = k;
    return true;
}

/* ---- the front memo (front_entry) ------------------------------------------ */

static uint64_t front_hash(const handoff_input *in, int n, int fc, const rotor_plan *pc) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)fc ^ ((uint64_t)n << 32);
    uint64_t w[3 * ROTOR_MAX_TENSORS + 1];
    int k = 0;
    w[k++] = (uint64_t)(uintptr_t)pc;
    for (int i = 0; i < n; i++) {
        w[k++] = (uint64_t)(uintptr_t)in[i].p;
        w[k++] = (uint64_t)in[i].f << 8 | (uint64_t)in[i].t;
    }
    for (int i = 0; i < k; i++) {
        h = (h ^ w[i]) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    return h;
}

/* Whether input i's view is set, as vec_setup reads it. */
static bool view_set(const handoff_input *x) { return x->view && x->view->set; }

static bool front_same(const front_entry *e, uint64_t h, const handoff_input *in, int n, int fc,
                       const rotor_expr *ec, const rotor_plan *pc) {
    if (e->h != h || e->fc != fc || e->n != n || memcmp(&e->plan, pc, PLAN_BYTES)) return false;
    for (int i = 0; i < n; i++) {
        const front_in *x = &e->in[i];
        if (x->f != in[i].f || x->t != in[i].t || x->vset != view_set(&in[i]) || memcmp(&x->plan, in[i].p, PLAN_BYTES))
            return false;
        if (!x->vset) continue;
        const rotor_view *v = in[i].view;
        int nd = ec->tensors[x->t].ndims, ny = in[i].e->tensors[0].ndims;
        if (memcmp(x->dim, v->dim, (size_t)nd * sizeof *v->dim) || memcmp(x->step, v->step, (size_t)nd * sizeof *v->step) ||
            memcmp(x->offset, v->offset, (size_t)ny * sizeof *v->offset))
            return false;
    }
    return true;
}

static const front_entry *front_find(const handoff_cache *hc, uint64_t h, const handoff_input *in, int n, int fc,
                                     const rotor_expr *ec, const rotor_plan *pc) {
    if (!hc->fcap) return NULL;
    for (size_t j = h & (hc->fcap - 1); hc->front[j]; j = (j + 1) & (hc->fcap - 1))
        if (front_same(hc->front[j], h, in, n, fc, ec, pc)) return hc->front[j];
    return NULL;
}

/* Keeps (in, pc) -> r; false when out of memory (the memo is then only
 * slower: nothing is lost). */
static bool front_add(handoff_cache *hc, uint64_t h, const handoff_input *in, int n, int fc, const rotor_expr *ec,
                      const rotor_plan *pc, const int64_t r[3]) {
    if ((hc->fn + 1) * 2 > hc->fcap) {
        size_t cap = hc->fcap ? 2 * hc->fcap : 256;
        front_entry **v = calloc(cap, sizeof *v);
        if (!v) return false;
        for (size_t i = 0; i < hc->fcap; i++) {
            if (!hc->front[i]) continue;
            size_t j = hc->front[i]->h & (cap - 1);
            while (v[j]) j = (j + 1) & (cap - 1);
            v[j] = hc->front[i];
        }
        free(hc->front);
        hc->front = v;
        hc->fcap = cap;
    }
    front_entry *e = calloc(1, sizeof *e + (size_t)n * sizeof *e->in);
    if (!e) return false;
    e->h = h;
    e->fc = fc;
    e->n = n;
    e->pc = pc;
    memcpy(&e->plan, pc, PLAN_BYTES);
    memcpy(e->r, r, sizeof e->r);
    for (int i = 0; i < n; i++) {
        front_in *x = &e->in[i];
        x->f = in[i].f;
        x->t = in[i].t;
        x->p = in[i].p;
        memcpy(&x->plan, in[i].p, PLAN_BYTES);
        x->vset = view_set(&in[i]);
        if (!x->vset) continue;
        int nd = ec->tensors[x->t].ndims, ny = in[i].e->tensors[0].ndims;
        memcpy(x->dim, in[i].view->dim, (size_t)nd * sizeof *x->dim);
        memcpy(x->step, in[i].view->step, (size_t)nd * sizeof *x->step);
        memcpy(x->offset, in[i].view->offset, (size_t)ny * sizeof *x->offset);
    }
    size_t j = h & (hc->fcap - 1);
    while (hc->front[j]) j = (j + 1) & (hc->fcap - 1);
    hc->front[j] = e;
    hc->fn++;
    return true;
}

/* The price of the setup, from the content-keyed memo (the store) or
 * computed (handoff_cache_traffic, handoff_cache_most) and recorded there. */
static rotor_status setup_price(handoff_cache *hc, const handoff_input *in, int n, int fc, const rotor_expr *ec,
                                const rotor_plan *pc, const rotor_chip *chip_c, int64_t r[3], rotor_error *err) {
    int64_t v[HANDOFF_KEY_MAX];
    int len = 0;
    bool keyed = hc->store && n > 0 && vec_setup(hc, in, n, fc, ec, pc, false, v, &len);
    if (keyed && handoff_cache_store_find(hc->store, fc, v, len, r)) return ROTOR_OK;
    const handoff_traffic *tr[ROTOR_MAX_TENSORS] = {0};
    for (int i = 0; i < n; i++) {
        rotor_status st = handoff_cache_traffic(hc, in[i].f, in[i].e, in[i].p, fc, ec, pc, in[i].t, in[i].view,
                                                in[i].chip, chip_c, &tr[i], err);
        if (st) return st;
    }
    rotor_status st = handoff_cache_most(hc, tr, n, &r[0], &r[1], &r[2], err);
    if (!st && hc->store && n > 0 && (keyed || vec_setup(hc, in, n, fc, ec, pc, true, v, &len)))
        st = handoff_cache_store_add(hc->store, fc, v, len, r, err);
    return st;
}

rotor_status handoff_cache_setup(handoff_cache *hc, const handoff_input *in, int n, int fc, const rotor_expr *ec,
                                 const rotor_plan *pc, const rotor_chip *chip_c, int64_t *most, int64_t *link,
                                 int64_t *hops, rotor_error *err) {
    int64_t r[3] = {0, 0, 0}; /* no hand-off input: nothing through any port (handoff_cache_most's) */
    uint64_t h = n > 0 ? front_hash(in, n, fc, pc) : 0;
    const front_entry *fe = n > 0 ? front_find(hc, h, in, n, fc, ec, pc) : NULL;
    if (fe) memcpy(r, fe->r, sizeof r);
    else if (n > 0) {
        rotor_status st = setup_price(hc, in, n, fc, ec, pc, chip_c, r, err);
        if (st) return st;
        front_add(hc, h, in, n, fc, ec, pc, r);
    }
    *most = r[0];
    if (link) *link = r[1];
    if (hops) *hops = r[2];
    return ROTOR_OK;
}
