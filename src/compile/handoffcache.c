/* handoffcache.c — see handoffcache.h. */
#include "compile/handoffcache.h"

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
    const int64_t *recv[ROTOR_MAX_TENSORS]; /* the traffics' arrays: stable while the cache lives */
    int n;
    int64_t most, link;
} most_entry;

struct handoff_cache {
    const rotor_chip *chip;
    entry *v;
    size_t cap, n;
    most_entry *most; /* MOST_SLOTS, direct-mapped; NULL until first asked */
};

handoff_cache *handoff_cache_new(const rotor_chip *chip) {
    handoff_cache *hc = calloc(1, sizeof *hc);
    if (hc) hc->chip = chip;
    return hc;
}

void handoff_cache_free(handoff_cache *hc) {
    if (!hc) return;
    for (size_t i = 0; i < hc->cap; i++) {
        if (!hc->v[i].tr) continue;
        free(hc->v[i].tr->recv);
        free(hc->v[i].tr->send);
        free(hc->v[i].tr);
    }
    free(hc->v);
    free(hc->most);
    free(hc);
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
    const rotor_chip *chip;
    const int64_t *pphys, *cphys;
    handoff_traffic *tr;
    int64_t *recv, *send; /* per chip core: what the laid-out plans really move */
    rotor_mesh_load *load;
} router;

static rotor_status route_piece(void *ctx, int64_t dst, int64_t src, int64_t elems) {
    router *r = ctx;
    int64_t s = r->pphys[src], d = r->cphys[dst];
    if (s == d) return ROTOR_OK; /* already on the receiver's core */
    r->recv[d % r->chip->cores_per_chip] += elems;
    r->send[s % r->chip->cores_per_chip] += elems;
    int64_t h = rotor_mesh_load_add(r->load, s, d, elems);
    if (h > r->tr->hops) r->tr->hops = h;
    return ROTOR_OK;
}

/* A mesh's traffic of the hand-off (h from the producer's placement lp
 * to the consumer's lc), both laid out as the replay lays them
 * (compile/setuppieces.c routes the same pieces): the port counts are the
 * chip cores' (a producer's core and the consumer's core of the same
 * number are not one core on a mesh, so what each holds is by layout), and
 * the link counts. */
static rotor_status count_links(const rotor_chip *chip_p, const rotor_chip *chip_c, const rotor_handoff *h,
                                const rotor_place *lp, const rotor_place *lc, int t, const rotor_view *view,
                                handoff_traffic *tr, rotor_error *err) {
    const rotor_plan_info *ip = rotor_place_info(lp), *ic = rotor_place_info(lc);
    int64_t n = chip_c->cores_per_chip;
    int64_t *pphys = malloc((size_t)ip->cores * sizeof *pphys), *cphys = malloc((size_t)ic->cores * sizeof *cphys);
    int64_t *recv = calloc((size_t)n, sizeof *recv), *send = calloc((size_t)n, sizeof *send);
    rotor_mesh_load load = {0};
    rotor_status st = !pphys || !cphys || !recv || !send ? rotor_nomem(err) : rotor_mesh_load_init(&load, chip_c, err);
    if (!st) st = rotor_mesh_map_cores(rotor_place_expr(lp), chip_p, rotor_place_plan(lp), ip, pphys, err);
    if (!st) st = rotor_mesh_map_cores(rotor_place_expr(lc), chip_c, rotor_place_plan(lc), ic, cphys, err);
    router r = {.chip = chip_c, .pphys = pphys, .cphys = cphys, .tr = tr, .recv = recv, .send = send, .load = &load};
    if (!st) st = rotor_handoff_walk(h, lc, t, view, route_piece, &r, err);
    if (!st) tr->max_link = rotor_mesh_load_max(&load);
    rotor_mesh_load_free(&load);
    if (!st) {
        tr->recv = recv;
        tr->send = send;
        tr->nrecv = tr->nsend = n;
        tr->max_recv = tr->max_send = 0;
        for (int64_t c = 0; c < n; c++) {
            if (recv[c] > tr->max_recv) tr->max_recv = recv[c];
            if (send[c] > tr->max_send) tr->max_send = send[c];
        }
    } else {
        free(recv);
        free(send);
    }
    free(pphys);
    free(cphys);
    return st;
}

/* The traffic by plan core, where a plan's core c is the chip's core c. */
static rotor_status count_plain(const rotor_handoff *h, const rotor_place *lc, int t, const rotor_view *view,
                                handoff_traffic *tr, rotor_error *err) {
    tr->nrecv = rotor_place_info(lc)->cores;
    tr->nsend = rotor_handoff_cores(h);
    tr->recv = malloc((size_t)tr->nrecv * sizeof *tr->recv);
    tr->send = malloc((size_t)tr->nsend * sizeof *tr->send);
    rotor_status st = !tr->recv || !tr->send
                          ? rotor_nomem(err)
                          : rotor_handoff_traffic(h, lc, t, view, tr->recv, &tr->max_recv, tr->send, &tr->max_send);
    if (st == ROTOR_ERR_NOMEM) st = rotor_nomem(err);
    if (st) {
        free(tr->recv);
        free(tr->send);
    }
    return st;
}

static rotor_status count(const handoff_cache *hc, const rotor_expr *ep, const rotor_plan *pp,
                          const rotor_expr *ec, const rotor_plan *pc, int t, const rotor_view *view,
                          const rotor_chip *chip_p, const rotor_chip *chip_c, entry *out, rotor_error *err) {
    rotor_plan_info ip, ic;
    rotor_place *lp = NULL, *lc = NULL;
    rotor_handoff *h = NULL;
    rotor_status st = rotor_plan_derive(ep, hc->chip, pp, &ip, err);
    if (!st) st = rotor_plan_derive(ec, hc->chip, pc, &ic, err);
    if (!st) st = rotor_place_make(ep, pp, &ip, &lp, err);
    if (!st) st = rotor_place_make(ec, pc, &ic, &lc, err);
    if (!st) st = rotor_handoff_make(lp, &h, err);
    handoff_traffic *tr = st ? NULL : calloc(1, sizeof *tr);
    if (!st && !tr) st = rotor_nomem(err);
    if (!st && hc->chip->topology == ROTOR_TOPO_MESH) st = count_links(chip_p, chip_c, h, lp, lc, t, view, tr, err);
    else if (!st) st = count_plain(h, lc, t, view, tr, err);
    if (st) free(tr);
    else out->tr = tr;
    rotor_handoff_free(h);
    rotor_place_free(lp);
    rotor_place_free(lc);
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
    rotor_status st = count(hc, ep, pp, ec, pc, t, view, chip_p, chip_c, &e, err);
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
        h = (h ^ (uint64_t)(uintptr_t)tr[i]->recv) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    most_entry *m = &hc->most[h % MOST_SLOTS];
    bool hit = m->n == n;
    for (int i = 0; hit && i < n; i++) hit = m->recv[i] == tr[i]->recv;
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
    for (int64_t q = 0; q < cores; q++) {
        int64_t in = 0, out = 0;
        for (int i = 0; i < n; i++) {
            if (q < tr[i]->nrecv) in += tr[i]->recv[q];
            if (q < tr[i]->nsend) out += tr[i]->send[q];
        }
        if (in > *most) *most = in;
        if (out > *most) *most = out;
    }
    /* a mesh: each input's busiest link, added up (a bound of the busiest
     * link of them all: the per-link counts are not kept, a wafer's are
     * megabytes a pair) */
    for (int i = 0; i < n; i++) lk += tr[i]->max_link;
    if (link) *link = lk;
    m->n = n;
    for (int i = 0; i < n; i++) m->recv[i] = tr[i]->recv;
    m->most = *most;
    m->link = lk;
    return ROTOR_OK;
}
