/* test_waferspeed.c — the shortcuts that compile a wafer (issue 41,
 * "Wafer scale": llama2-7b's decode step on wse2's 745,500 cores in under a
 * minute) against the core-by-core walks they replace, on small random
 * cases: each must give the very same integers.
 *
 *  - rotor_handoff_walk finds each distinct box's sources once: the same
 *    calls as rotor_handoff_need, rotor_handoff_map and
 *    rotor_handoff_sources core by core (src/op/handoff.c);
 *  - the compiler's hand-off traffic (src/compile/handoffcache.c) keeps
 *    sparse counts and one reused link load: the same ports, links and hops
 *    as routing every piece on its own;
 *  - the mesh exchange (rotor_mesh_exchange) keeps its links' free times per
 *    block and sorts once: the same packets as setting link by link;
 *  - the energy model counts a reduce-scatter's identical rounds at once:
 *    the same events as round by round. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "compile/handoffcache.h"
#include "rotor/compile/energy.h"
#include "rotor/op/handoff.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/place.h"
#include "rotor/op/reduction.h"
#include "rotor/sim/sim.h"
#include "fixtures.h"

/* ipu-mk2 with its cores on a w x h mesh. */
static rotor_chip wafer_like(int64_t w, int64_t h) {
    rotor_chip c = mk2();
    char set[4][48];
    snprintf(set[0], sizeof set[0], "cores_per_chip=%lld", (long long)(w * h));
    snprintf(set[1], sizeof set[1], "topology=mesh");
    snprintf(set[2], sizeof set[2], "mesh_width=%lld", (long long)w);
    snprintf(set[3], sizeof set[3], "mesh_height=%lld", (long long)h);
    for (int i = 0; i < 4; i++) {
        rotor_error err = {{0}};
        cr_assert_eq(rotor_chip_set(&c, set[i], &err), ROTOR_OK, "%s: %s", set[i], err.msg);
    }
    return c;
}

/* The three chips every property runs on: all-to-all, 5 x 3 and 8 x 8. */
static rotor_chip chip_no(int i) { return i == 0 ? mk2() : i == 1 ? wafer_like(5, 3) : wafer_like(8, 8); }

/* A plan drawn for e on chip (at most 64 cores), derived and placed. */
typedef struct drawn {
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    rotor_place *pl;
} drawn;

static void draw(drawn *d, const char *text, const char *dims, const rotor_chip *chip, rotor_rng *rng) {
    d->e = make_expr(text, dims);
    rotor_error err = {{0}};
    cr_assert_eq(rotor_sample_plan(&d->e, chip, 64, rng, &d->p, &d->info, &err), ROTOR_OK, "%s: %s", text, err.msg);
    cr_assert_eq(rotor_place_make(&d->e, &d->p, &d->info, &d->pl, &err), ROTOR_OK, "%s: %s", text, err.msg);
}

/* The consumers of C[12, 10]: as a MatMul's A, element for element, and
 * through a view that reverses its rows. */
typedef struct consumer_case {
    const char *text, *dims;
    rotor_view view;
} consumer_case;

static const consumer_case CONSUMERS[] = {
    {"E[m,p] += C[m,n] * F[n,p]", "m=12,n=10,p=7", {0}},
    {"Y[m,n] = relu(X[m,n])", "m=12,n=10", {0}},
    {"E[m,p] += X[m,n] * F[n,p]", "m=12,n=10,p=5", {.set = true, .dim = {0, 1}, .step = {-1, 1}, .offset = {11, 0}}},
};
#define PRODUCER "C[m,n] += A[m,k] * B[k,n]"
#define PRODUCER_DIMS "m=12,k=6,n=10"

/* A producer plan and a plan of consumer k drawn on chip, and the
 * producer's hand-off. */
static rotor_handoff *draw_pair(const rotor_chip *chip, rotor_rng *rng, int k, drawn *p, drawn *q) {
    draw(p, PRODUCER, PRODUCER_DIMS, chip, rng);
    draw(q, CONSUMERS[k].text, CONSUMERS[k].dims, chip, rng);
    rotor_handoff *h;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_handoff_make(p->pl, &h, &err), ROTOR_OK, "%s", err.msg);
    return h;
}

static void free_pair(rotor_handoff *h, drawn *p, drawn *q) {
    rotor_handoff_free(h);
    rotor_place_free(p->pl);
    rotor_place_free(q->pl);
}

/* (dst, src, elems) calls, in order. */
typedef struct calls {
    int64_t n, dst;
    int64_t v[4096][3];
} calls;

static rotor_status record(void *ctx, int64_t dst, int64_t src, int64_t elems) {
    calls *k = ctx;
    cr_assert_lt(k->n, 4096);
    k->v[k->n][0] = dst, k->v[k->n][1] = src, k->v[k->n][2] = elems;
    k->n++;
    return ROTOR_OK;
}

static rotor_status record_source(void *ctx, int64_t src, int64_t elems) {
    calls *k = ctx;
    return record(ctx, k->dst, src, elems);
}

/* Core by core, as the compiler walked before rotor_handoff_walk. */
static void walk_core_by_core(const rotor_handoff *h, const drawn *q, const rotor_view *view, calls *out) {
    out->n = 0;
    for (int64_t c = 0; c < q->info.cores; c++) {
        int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS];
        if (!rotor_handoff_need(q->pl, 1, c, lo, hi)) continue;
        rotor_handoff_set s;
        rotor_handoff_map(h, view, q->e.tensors[1].ndims, lo, hi, &s);
        out->dst = c;
        cr_assert_eq(rotor_handoff_sources(h, &s, record_source, out), ROTOR_OK);
    }
}

/* Random producer and consumer plans on three chips: the walk makes the
 * per-core calls, in their order, and rotor_handoff_traffic's sends are
 * their tally. */
Test(waferspeed, the_walk_makes_the_calls_of_the_core_by_core_walk) {
    static calls fast, slow;
    int pairs = 0, memo_hits = 0;
    for (int ci = 0; ci < 3; ci++) {
        rotor_chip chip = chip_no(ci);
        rotor_rng rng = {.state = 41 + (uint64_t)ci};
        for (int round = 0; round < 12; round++) {
            drawn p;
            draw(&p, PRODUCER, PRODUCER_DIMS, &chip, &rng);
            rotor_handoff *h;
            rotor_error err = {{0}};
            cr_assert_eq(rotor_handoff_make(p.pl, &h, &err), ROTOR_OK, "%s", err.msg);
            for (size_t k = 0; k < sizeof CONSUMERS / sizeof CONSUMERS[0]; k++) {
                const consumer_case *cc = &CONSUMERS[k];
                drawn q;
                draw(&q, cc->text, cc->dims, &chip, &rng);
                const rotor_view *view = cc->view.set ? &cc->view : NULL;
                cr_assert(rotor_handoff_matches(h, q.pl, 1, view));
                fast.n = 0;
                cr_assert_eq(rotor_handoff_walk(h, q.pl, 1, view, record, &fast, &err), ROTOR_OK, "%s", err.msg);
                walk_core_by_core(h, &q, view, &slow);
                cr_assert_eq(fast.n, slow.n, "chip %d round %d consumer %zu", ci, round, k);
                cr_assert(!memcmp(fast.v, slow.v, (size_t)fast.n * sizeof fast.v[0]), "chip %d round %d consumer %zu",
                          ci, round, k);
                int64_t recv[64], send[64], want[64] = {0}, mr, ms, want_max = 0;
                cr_assert_eq(rotor_handoff_traffic(h, q.pl, 1, view, recv, &mr, send, &ms), ROTOR_OK);
                for (int64_t i = 0; i < slow.n; i++)
                    if (slow.v[i][0] != slow.v[i][1]) want[slow.v[i][1]] += slow.v[i][2];
                for (int64_t c = 0; c < p.info.cores; c++) {
                    cr_assert_eq(send[c], want[c], "chip %d round %d consumer %zu core %lld", ci, round, k,
                                 (long long)c);
                    if (want[c] > want_max) want_max = want[c];
                }
                cr_assert_eq(ms, want_max);
                /* cores that need one box: the memo's case */
                for (int64_t i = 1; i < slow.n; i++) memo_hits += slow.v[i][0] != slow.v[i - 1][0];
                pairs++;
                rotor_place_free(q.pl);
            }
            rotor_handoff_free(h);
            rotor_place_free(p.pl);
        }
    }
    cr_assert_eq(pairs, 108);
    cr_assert_gt(memo_hits, 0);
}

/* counts (sparse or dense) as n values. */
static void expand(const handoff_counts *c, int64_t n, int64_t *v) {
    memset(v, 0, (size_t)n * sizeof *v);
    for (int64_t i = 0; i < c->nz; i++) v[c->core ? c->core[i] : i] = handoff_cache_counts_at(c, i);
}

/* A mesh's traffic of one hand-off, every piece routed on its own over a
 * link array (rotor_mesh_route), as the compiler counted before. */
typedef struct routed {
    int64_t recv[64], send[64], links[4 * 64], hops;
} routed;

static void route_every_piece(const rotor_chip *chip, const drawn *p, const drawn *q, const rotor_handoff *h,
                              routed *out) {
    static calls all;
    int64_t pphys[64], cphys[64];
    rotor_error err = {{0}};
    cr_assert_eq(rotor_mesh_map_cores(&p->e, chip, &p->p, &p->info, pphys, &err), ROTOR_OK);
    cr_assert_eq(rotor_mesh_map_cores(&q->e, chip, &q->p, &q->info, cphys, &err), ROTOR_OK);
    memset(out, 0, sizeof *out);
    walk_core_by_core(h, q, NULL, &all);
    for (int64_t i = 0; i < all.n; i++) {
        int64_t s = pphys[all.v[i][1]], d = cphys[all.v[i][0]];
        if (s == d) continue;
        out->recv[d] += all.v[i][2];
        out->send[s] += all.v[i][2];
        int64_t hops = rotor_mesh_route(chip, s, d, all.v[i][2], out->links);
        if (hops > out->hops) out->hops = hops;
    }
}

static int64_t largest(const int64_t *v, int64_t n) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

/* The memo's traffics on an 8 x 8 and a 5 x 3 mesh: every port's count,
 * the busiest link and the longest route are those of the pieces routed one
 * by one; two hand-offs together load each port with the sum. */
Test(waferspeed, the_cached_mesh_traffic_is_every_piece_routed_alone) {
    int checked = 0, sparse = 0;
    for (int ci = 1; ci < 3; ci++) {
        rotor_chip chip = chip_no(ci);
        int64_t n = chip.cores_per_chip;
        handoff_cache *hc = handoff_cache_new(&chip);
        cr_assert_not_null(hc);
        rotor_rng rng = {.state = 7 + (uint64_t)ci};
        for (int round = 0; round < 16; round++) {
            drawn p, q;
            rotor_handoff *h = draw_pair(&chip, &rng, 0, &p, &q);
            rotor_error err = {{0}};
            const handoff_traffic *tr[2];
            for (int k = 0; k < 2; k++) /* the same pair under two frontier numbers: two traffics */
                cr_assert_eq(handoff_cache_traffic(hc, 2 * round + k, &p.e, &p.p, 0, &q.e, &q.p, 1, NULL, &chip, &chip,
                                                   &tr[k], &err),
                             ROTOR_OK, "%s", err.msg);
            cr_assert_neq(tr[0], tr[1]);
            routed want;
            route_every_piece(&chip, &p, &q, h, &want);
            int64_t got[64];
            cr_assert_eq(tr[0]->nrecv, n);
            cr_assert_eq(tr[0]->nsend, n);
            expand(&tr[0]->recv, n, got);
            cr_assert(!memcmp(got, want.recv, (size_t)n * sizeof *got), "chip %d round %d: receives", ci, round);
            expand(&tr[0]->send, n, got);
            cr_assert(!memcmp(got, want.send, (size_t)n * sizeof *got), "chip %d round %d: sends", ci, round);
            cr_assert_eq(tr[0]->max_recv, largest(want.recv, n));
            cr_assert_eq(tr[0]->max_send, largest(want.send, n));
            cr_assert_eq(tr[0]->max_link, largest(want.links, 4 * n), "chip %d round %d", ci, round);
            cr_assert_eq(tr[0]->hops, want.hops);
            sparse += tr[0]->send.core != NULL;
            int64_t most, link, hops, both = 0;
            cr_assert_eq(handoff_cache_most(hc, tr, 2, &most, &link, &hops, &err), ROTOR_OK);
            for (int64_t c = 0; c < n; c++) {
                if (2 * want.recv[c] > both) both = 2 * want.recv[c];
                if (2 * want.send[c] > both) both = 2 * want.send[c];
            }
            cr_assert_eq(most, both);
            cr_assert_eq(link, 2 * tr[0]->max_link);
            cr_assert_eq(hops, want.hops);
            checked++;
            free_pair(h, &p, &q);
        }
        handoff_cache_free(hc);
    }
    cr_assert_eq(checked, 32);
    cr_assert_gt(sparse, 0, "some producer sends from at most half the cores");
}

/* All-to-all: the cached counts are rotor_handoff_traffic's arrays. */
Test(waferspeed, the_cached_all_to_all_traffic_is_the_handoffs) {
    rotor_chip chip = mk2();
    handoff_cache *hc = handoff_cache_new(&chip);
    rotor_rng rng = {.state = 3};
    for (int round = 0; round < 16; round++) {
        drawn p, q;
        rotor_handoff *h = draw_pair(&chip, &rng, 2, &p, &q);
        rotor_error err = {{0}};
        const handoff_traffic *tr;
        cr_assert_eq(handoff_cache_traffic(hc, round, &p.e, &p.p, 0, &q.e, &q.p, 1, &CONSUMERS[2].view, &chip, &chip,
                                           &tr, &err),
                     ROTOR_OK, "%s", err.msg);
        int64_t recv[64], send[64], mr, ms, got[64];
        cr_assert_eq(rotor_handoff_traffic(h, q.pl, 1, &CONSUMERS[2].view, recv, &mr, send, &ms), ROTOR_OK);
        cr_assert_eq(tr->nrecv, q.info.cores);
        cr_assert_eq(tr->nsend, p.info.cores);
        expand(&tr->recv, tr->nrecv, got);
        cr_assert(!memcmp(got, recv, (size_t)tr->nrecv * sizeof *got), "round %d: receives", round);
        expand(&tr->send, tr->nsend, got);
        cr_assert(!memcmp(got, send, (size_t)tr->nsend * sizeof *got), "round %d: sends", round);
        cr_assert_eq(tr->max_recv, mr);
        cr_assert_eq(tr->max_send, ms);
        free_pair(h, &p, &q);
    }
    handoff_cache_free(hc);
}

/* ---- the exchange's schedule -------------------------------------------- */

/* rotor_mesh_exchange as it was: every order sorted on its own, every link
 * of a route read and set one by one; the i-th link must be free i
 * latencies after the start and carries the bytes from then (pipelined
 * links, docs/simulator.md). */
typedef struct ref_piece {
    int64_t key, dst, src, i;
} ref_piece;

static int ref_cmp(const void *a, const void *b) {
    const ref_piece *x = a, *y = b;
    int64_t kx[4] = {x->key, x->dst, x->src, x->i}, ky[4] = {y->key, y->dst, y->src, y->i};
    for (int k = 0; k < 4; k++)
        if (kx[k] != ky[k]) return kx[k] < ky[k] ? -1 : 1;
    return 0;
}

/* The link leaving local core (x, y) in direction dir, and the next core. */
static int64_t *ref_link(int64_t *free_at, int64_t w, int64_t *x, int64_t *y, int64_t tx, int64_t ty) {
    int dir = *x != tx ? (tx > *x ? 0 : 1) : (ty > *y ? 2 : 3);
    int64_t *f = &free_at[4 * (*y * w + *x) + dir];
    if (dir < 2) *x += dir ? -1 : 1;
    else *y += dir == 3 ? -1 : 1;
    return f;
}

static int64_t ref_order(const rotor_chip *chip, const int64_t (*v)[3], int64_t n, int64_t packet, int order,
                         rotor_mesh_packet *pk) {
    int64_t w = chip->mesh_width, cpc = chip->cores_per_chip, rounds = 0, span = 0, np = 0;
    int64_t lat = llround(chip->link_latency_ns * 1000.0);
    ref_piece *ref = malloc((size_t)n * sizeof *ref);
    int64_t *free_at = calloc((size_t)(4 * cpc), sizeof *free_at);
    for (int64_t i = 0; i < n; i++) {
        int64_t a = v[i][1] % cpc, b = v[i][0] % cpc, hops = llabs(a % w - b % w) + llabs(a / w - b / w);
        ref[i] = (ref_piece){order == 2 ? -hops : order == 3 ? hops : 0, v[i][0], v[i][1], i};
        if ((v[i][2] + packet - 1) / packet > rounds) rounds = (v[i][2] + packet - 1) / packet;
    }
    qsort(ref, (size_t)n, sizeof *ref, ref_cmp);
    for (int64_t outer = 0; outer < (order == 0 ? rounds : n); outer++)
        for (int64_t inner = 0; inner < (order == 0 ? n : rounds); inner++) {
            const ref_piece *q = &ref[order == 0 ? inner : outer];
            int64_t r = order == 0 ? outer : inner, bytes = v[q->i][2], k = (bytes + packet - 1) / packet;
            if (r >= k) continue;
            int64_t b = bytes / k + (r < bytes % k), a = q->src % cpc, d = q->dst % cpc;
            int64_t hops = llabs(a % w - d % w) + llabs(a / w - d / w), start = 0;
            int64_t bt = llround((double)b * 1000.0 / chip->link_gbps), dur = hops * lat + bt, i = 0;
            for (int64_t x = a % w, y = a / w; x != d % w || y != d / w; i++) {
                int64_t *f = ref_link(free_at, w, &x, &y, d % w, d / w);
                if (*f - i * lat > start) start = *f - i * lat;
            }
            i = 0;
            for (int64_t x = a % w, y = a / w; x != d % w || y != d / w; i++)
                *ref_link(free_at, w, &x, &y, d % w, d / w) = start + i * lat + bt;
            pk[np++] = (rotor_mesh_packet){q->src, q->dst, b, start + dur};
            if (start + dur > span) span = start + dur;
        }
    free(ref);
    free(free_at);
    return span;
}

/* Random pieces on a 5 x 3, an 8 x 8 and a 37 x 29 mesh (runs across many
 * blocks of links), cut into several packets or one, at 0, 1 and 7 ns a
 * hop: the same packets, in the same order, ending at the same times. */
Test(waferspeed, the_exchange_schedules_the_packets_of_the_link_by_link_walk) {
    static const int64_t dims[][2] = {{5, 3}, {8, 8}, {37, 29}};
    rotor_rng rng = {.state = 99};
    for (int m = 0; m < 3; m++) {
        rotor_chip chip = wafer_like(dims[m][0], dims[m][1]);
        int64_t cpc = chip.cores_per_chip;
        for (int round = 0; round < 6; round++) {
            chip.link_latency_ns = (double)(round / 2 == 2 ? 7 : round / 2);
            int64_t n = 1 + rotor_rng_below(&rng, 400), packet = round % 2 ? 256 : 1 << 20, total = 0;
            int64_t(*v)[3] = malloc((size_t)n * sizeof *v);
            for (int64_t i = 0; i < n; i++) {
                v[i][0] = rotor_rng_below(&rng, cpc);
                v[i][1] = (v[i][0] + 1 + rotor_rng_below(&rng, cpc - 1)) % cpc;
                v[i][2] = 1 + rotor_rng_below(&rng, 2000);
                total += (v[i][2] + packet - 1) / packet;
            }
            rotor_mesh_packet *want = malloc((size_t)total * sizeof *want), *pk = malloc((size_t)total * sizeof *pk);
            int64_t want_span = 0;
            for (int order = 0; order < 4; order++) {
                int64_t span = ref_order(&chip, (const int64_t(*)[3])v, n, packet, order, pk);
                if (order == 0 || span < want_span) {
                    want_span = span;
                    memcpy(want, pk, (size_t)total * sizeof *pk);
                }
            }
            free(pk);
            rotor_mesh_packet *got;
            int64_t np, span;
            rotor_error err = {{0}};
            cr_assert_eq(rotor_mesh_exchange(&chip, (const int64_t(*)[3])v, n, packet, &got, &np, &span, &err),
                         ROTOR_OK, "%s", err.msg);
            cr_assert_eq(np, total);
            cr_assert_eq(span, want_span, "mesh %d round %d", m, round);
            for (int64_t i = 0; i < np; i++)
                cr_assert(got[i].src == want[i].src && got[i].dst == want[i].dst && got[i].bytes == want[i].bytes &&
                              got[i].end_ps == want[i].end_ps,
                          "mesh %d round %d packet %lld", m, round, (long long)i);
            /* the simulator, given the packets in that order all at once,
             * ends each where the schedule says (the replay sends them so) */
            rotor_sim *sim;
            cr_assert_eq(rotor_sim_create(&chip, &sim, &err), ROTOR_OK, "%s", err.msg);
            for (int64_t i = 0; i < np; i++) {
                rotor_sim_transfer x = {.src = got[i].src, .dst = got[i].dst, .bytes = got[i].bytes,
                                        .category = ROTOR_SIM_SETUP, .op = 0};
                int64_t id;
                cr_assert_eq(rotor_sim_add_transfer(sim, &x, &id, &err), ROTOR_OK, "%s", err.msg);
                cr_assert_eq(id, i);
            }
            rotor_sim_stats st;
            cr_assert_eq(rotor_sim_run(sim, &st, &err), ROTOR_OK, "%s", err.msg);
            cr_assert_eq(st.makespan_ps, span, "mesh %d round %d", m, round);
            for (int64_t i = 0; i < np; i++) {
                rotor_sim_timing t;
                cr_assert_eq(rotor_sim_task_timing(sim, i, &t, &err), ROTOR_OK, "%s", err.msg);
                cr_assert_eq(t.end_ps, got[i].end_ps, "mesh %d round %d packet %lld", m, round, (long long)i);
            }
            rotor_sim_free(sim);
            free(got);
            free(want);
            free(v);
        }
    }
}

/* One link load counts batch after batch, cleared between them: each
 * batch's busiest link is that of its routes walked alone, and a position's
 * add is the core's. */
Test(waferspeed, a_cleared_link_load_counts_each_batch_afresh) {
    rotor_chip chip = wafer_like(9, 6);
    rotor_mesh_load l;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_mesh_load_init(&l, &chip, &err), ROTOR_OK);
    rotor_rng rng = {.state = 5};
    for (int batch = 0; batch < 20; batch++) {
        int64_t links[4 * 54] = {0}, n = 1 + rotor_rng_below(&rng, batch % 4 ? 6 : 60);
        for (int64_t i = 0; i < n; i++) {
            int64_t s = rotor_rng_below(&rng, 54), d = rotor_rng_below(&rng, 54), a = 1 + rotor_rng_below(&rng, 50);
            int64_t hops = i % 2 ? rotor_mesh_load_add(&l, s, d, a)
                                 : rotor_mesh_load_add_at(&l, s % 9, s / 9, d % 9, d / 9, a);
            cr_assert_eq(hops, rotor_mesh_route(&chip, s, d, a, links));
        }
        cr_assert_eq(rotor_mesh_load_max(&l), largest(links, 4 * 54), "batch %d", batch);
        rotor_mesh_load_clear(&l);
        cr_assert_eq(rotor_mesh_load_max(&l), 0);
    }
    rotor_mesh_load_free(&l);
}

/* ---- the energy of a reduce-scatter -------------------------------------- */

/* A plan's events as the replay emits them, round by round: the sub-tasks,
 * every shift of every core, and R_Y - 1 rounds of the reduce-scatter. */
static rotor_energy_counts events_round_by_round(const drawn *d, const rotor_chip *chip) {
    rotor_energy_counts c = {0};
    bool overflow = false;
    int64_t phys[64], i_old[ROTOR_MAX_AXES], i_new[ROTOR_MAX_AXES], rd, wr, fl = d->e.flops_per_point;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_mesh_map_cores(&d->e, chip, &d->p, &d->info, phys, &err), ROTOR_OK);
    for (int a = 0; a < d->e.naxes; a++) fl *= d->info.sub_task[a];
    int64_t *flops = d->e.op_class == ROTOR_OP_CONTRACTION ? &c.matrix_flops : &c.vector_flops;
    *flops = fl * d->info.total_steps * d->info.cores;
    cr_assert(rotor_energy_subtask_bytes(&d->e, d->info.sub_task, chip->element_bytes, d->info.total_steps, &rd, &wr));
    c.sram_read_bytes = rd * d->info.cores;
    c.sram_write_bytes = wr * d->info.cores;
    rotor_place_loop(d->pl, 0, i_old);
    for (int64_t s = 1; s < d->info.total_steps; s++, memcpy(i_old, i_new, sizeof i_old)) {
        rotor_place_loop(d->pl, s, i_new);
        for (int t = 0; t < d->e.ntensors; t++)
            for (int64_t core = 0; core < d->info.cores; core++) {
                int64_t from = rotor_place_sender(d->pl, t, core, i_old, i_new, false);
                if (from != core) rotor_energy_transfer(chip, phys[from], phys[core], d->info.bytes[t], &c, &overflow);
            }
    }
    int64_t R = d->info.rings[0], pairs[2 * 64];
    rotor_reduction_groups(d->pl, i_old, pairs);
    for (int64_t round = 1; R > 1 && round < R; round++)
        for (int64_t g = 0; g + R <= d->info.cores; g += R)
            for (int64_t u = 0; u < R; u++)
                rotor_energy_transfer(chip, phys[pairs[2 * (g + u) + 1]], phys[pairs[2 * (g + (u + 1) % R) + 1]],
                                      (d->info.bytes[0] + R - 1) / R, &c, &overflow);
    cr_assert(!overflow);
    return c;
}

/* Random MatMul plans on three chips, some reducing over rings of 2 to 8:
 * rotor_energy_plan counts the events of the round-by-round walk. */
Test(waferspeed, a_reduce_scatters_rounds_counted_at_once_are_its_rounds_one_by_one) {
    int reduced = 0;
    for (int ci = 0; ci < 3; ci++) {
        rotor_chip chip = chip_no(ci);
        rotor_rng rng = {.state = 17 + (uint64_t)ci};
        for (int round = 0; round < 30; round++) {
            drawn d;
            draw(&d, PRODUCER, "m=16,k=24,n=12", &chip, &rng);
            rotor_energy_counts got = {0}, want = events_round_by_round(&d, &chip);
            rotor_error err = {{0}};
            cr_assert_eq(rotor_energy_plan(&d.e, &d.p, &d.info, &chip, &got, &err), ROTOR_OK, "%s", err.msg);
            cr_assert(!memcmp(&got, &want, sizeof got), "chip %d plan %d: byte-hops %lld against %lld", ci, round,
                      (long long)got.byte_hops, (long long)want.byte_hops);
            reduced += d.info.rings[0] > 2;
            rotor_place_free(d.pl);
        }
    }
    cr_assert_gt(reduced, 5, "enough reductions of more than one round");
}
