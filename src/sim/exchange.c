/* exchange.c — the schedule of a hand-off exchange (docs/compile.md,
 * "Hand-off"; docs/simulator.md, "The hand-off exchange"): which packets
 * move in what order, the way an exchange compiler would schedule them (the
 * IPU's exchange is compiled statically).
 *
 * Pieces (receiver, sender, bytes) are cut into packets of at most
 * exchange_packet(busiest port) bytes (replayer.h), and a list schedule over the ports' free times
 * picks, for the receiver whose in port frees first (ties: the one with the
 * most left to receive, the critical one; then the lower core), the packet
 * whose sender's out port frees first (ties: the sender with the most left
 * to send; then the lower sender).  The schedule counts each port's bytes
 * only: a port takes the next packet as soon as the last one's bytes have
 * left it.  The replay adds the packets in this order, all ready at once,
 * and the simulator's ports, held each in turn for a packet's bytes (the in
 * port one latency after the out port: docs/simulator.md, "Pipelined
 * links"), run that schedule: no two packets share a port at once, and the
 * busiest port, which is what the model charges, bounds the exchange from
 * below.  (Until 2026-12-04 each packet waited for the one before it
 * through either port to arrive, and paid the latency again.)
 *
 * The schedule is a function of the pieces and the core count alone, and a
 * model's layers repeat their hand-offs (DiT-XL: 28 identical blocks), so
 * schedules are cached by their pieces: a replay computes each distinct one
 * once (issue 23: the list schedule was most of building a pod's replay). */
#include <stdlib.h>
#include <string.h>

#include "replayer.h"

/* At most this many bytes of schedules and their keys are kept; the oldest
 * go first.  Enough for every distinct hand-off of a transformer block on
 * ipu-pod4 (DiT-XL b8: about 2 MB of packets and up to 19 MB of pieces per
 * operator), small beside the streamed replay's budget (1 GB). */
#define EXCHANGE_CACHE_BYTES ((int64_t)128 << 20)

/* Sorts pieces by receiver, then sender, stably (pieces of one pair keep
 * the order they were gathered in, as glibc's merge sort kept them): a
 * counting sort by receiver, then an insertion sort of each receiver's few
 * pieces.  The pieces come as a few runs already in receiver order, so this
 * is linear where qsort was a tenth of building a pod's replay. */
static rotor_status sort_pieces(int64_t (*v)[3], int64_t np, int64_t n, rotor_error *err) {
    int64_t *start = calloc((size_t)n + 1, sizeof *start), (*tmp)[3] = malloc((size_t)np * sizeof *tmp);
    if (!start || !tmp) {
        free(start);
        free(tmp);
        return rotor_nomem(err);
    }
    for (int64_t k = 0; k < np; k++) start[v[k][0] + 1]++;
    for (int64_t c = 0; c < n; c++) start[c + 1] += start[c];
    for (int64_t k = 0; k < np; k++) memcpy(tmp[start[v[k][0]]++], v[k], sizeof *tmp);
    /* start[c] is now the end of c's stretch */
    for (int64_t c = 0, from = 0; c < n; from = start[c], c++)
        for (int64_t i = from + 1; i < start[c]; i++) {
            int64_t x[3], j = i;
            memcpy(x, tmp[i], sizeof x);
            for (; j > from && tmp[j - 1][1] > x[1]; j--) memcpy(tmp[j], tmp[j - 1], sizeof x);
            memcpy(tmp[j], x, sizeof x);
        }
    memcpy(v, tmp, (size_t)np * sizeof *tmp);
    free(start);
    free(tmp);
    return ROTOR_OK;
}

/* A receiver in the schedule's heap, with its in port's key beside it:
 * only the top's key changes (its packet was just placed), so the copies
 * stay true and a comparison reads no other array. */
typedef struct recv_key {
    int64_t free, left, c; /* free_in[c], in_left[c], c */
} recv_key;

typedef struct port_sched {
    int64_t *free_in, *free_out;   /* bytes-times at which the ports free */
    int64_t *out_left, *in_left;   /* bytes each port has left to carry */
    recv_key *heap;                /* receivers with packets left, by free_in */
    int64_t nheap;
} port_sched;

/* Heap order: the in port that frees first; ties: the receiver with the
 * most left to receive (the critical one), then the lower core. */
static bool heap_before(recv_key a, recv_key b) {
    if (a.free != b.free) return a.free < b.free;
    if (a.left != b.left) return a.left > b.left;
    return a.c < b.c;
}

/* 4-ary: the order is total (ties end at the core), so which receiver comes
 * next does not depend on the arity, and a sift has half the levels. */
static void heap_sift(port_sched *ps, int64_t i) {
    recv_key *h = ps->heap, x = h[i];
    int64_t n = ps->nheap;
    for (;;) {
        int64_t c = 4 * i + 1;
        if (c >= n) break;
        int64_t best = c, end = c + 4 < n ? c + 4 : n;
        for (int64_t j = c + 1; j < end; j++)
            if (heap_before(h[j], h[best])) best = j;
        if (!heap_before(h[best], x)) break;
        h[i] = h[best];
        i = best;
    }
    h[i] = x;
}

static bool push_packet(xschedule *x, xpacket p) {
    if (x->n == x->cap) {
        int64_t cap = x->cap ? 2 * x->cap : 1024;
        xpacket *v = realloc(x->v, (size_t)cap * sizeof *v);
        if (!v) return false;
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = p;
    return true;
}

/* The list schedule of pieces v[0..np) (sorted by receiver, then sender) on
 * receivers 0..cores-1 of n cores, into x->v. */
static rotor_status list_schedule(xschedule *x, const int64_t (*v)[3], int64_t np, int64_t cores, int64_t n,
                                  rotor_error *err) {
    size_t nn = (size_t)n;
    port_sched ps = {.free_in = calloc(nn, sizeof(int64_t)), .free_out = calloc(nn, sizeof(int64_t)),
                     .heap = malloc(nn * sizeof(recv_key)), .out_left = calloc(nn, sizeof(int64_t)),
                     .in_left = calloc(nn, sizeof(int64_t))};
    int64_t *start = calloc(nn + 1, sizeof *start), *live = calloc(nn, sizeof *live);
    /* Each receiver's pieces with bytes left, in piece order (a piece that
     * is sent is taken out, the rest keep their order): the scan below
     * reads only these, and only their senders. */
    int64_t *lsrc = malloc((size_t)np * sizeof *lsrc), *lbytes = malloc((size_t)np * sizeof *lbytes);
    rotor_status st = ROTOR_OK;
    if (!ps.free_in || !ps.free_out || !ps.heap || !ps.out_left || !ps.in_left ||
        !start || !live || !lsrc || !lbytes)
        st = rotor_nomem(err);
    for (int64_t k = 0; !st && k < np; k++) {
        start[v[k][0] + 1]++;
        ps.out_left[v[k][1]] += v[k][2];
        ps.in_left[v[k][0]] += v[k][2];
    }
    int64_t most = 0;
    for (int64_t c = 0; !st && c < n; c++) {
        if (ps.out_left[c] > most) most = ps.out_left[c];
        if (ps.in_left[c] > most) most = ps.in_left[c];
    }
    const int64_t packet = exchange_packet(most);
    for (int64_t c = 0; !st && c < cores; c++) {
        start[c + 1] += start[c];
        for (int64_t k = start[c]; k < start[c + 1]; k++)
            if (v[k][2]) {
                lbytes[start[c] + live[c]] = v[k][2];
                lsrc[start[c] + live[c]++] = v[k][1];
            }
        if (live[c]) ps.heap[ps.nheap++] = (recv_key){0, ps.in_left[c], c};
    }
    for (int64_t i = ps.nheap > 1 ? (ps.nheap - 2) / 4 : -1; i >= 0; i--) heap_sift(&ps, i);
    while (!st && ps.nheap > 0) {
        int64_t c = ps.heap[0].c, *bytes = lbytes + start[c], *srcs = lsrc + start[c], j = 0;
        int64_t bfree = ps.free_out[srcs[0]], bleft = ps.out_left[srcs[0]];
        for (int64_t i = 1; i < live[c]; i++) { /* the first of the best */
            int64_t f = ps.free_out[srcs[i]];
            if (f > bfree) continue;
            int64_t l = ps.out_left[srcs[i]];
            if (f < bfree || l > bleft) {
                j = i;
                bfree = f;
                bleft = l;
            }
        }
        int64_t src = srcs[j], b = bytes[j] < packet ? bytes[j] : packet;
        bytes[j] -= b;
        if (!bytes[j]) { /* sent: out of the list, the rest in order */
            live[c]--;
            memmove(bytes + j, bytes + j + 1, (size_t)(live[c] - j) * sizeof *bytes);
            memmove(srcs + j, srcs + j + 1, (size_t)(live[c] - j) * sizeof *srcs);
        }
        ps.out_left[src] -= b;
        ps.in_left[c] -= b;
        int64_t t0 = ps.free_in[c] > ps.free_out[src] ? ps.free_in[c] : ps.free_out[src];
        ps.free_in[c] = ps.free_out[src] = t0 + b;
        /* packet indices fit int32: a schedule over 2^31 packets is 1 TB of hand-off */
        if (x->n >= INT32_MAX ||
            !push_packet(x, (xpacket){(int32_t)src, (int32_t)c, (int32_t)b}))
            st = x->n >= INT32_MAX ? rotor_fail(err, ROTOR_ERR_INPUT, "a hand-off of more than 2^31 packets")
                                   : rotor_nomem(err);
        ps.heap[0].free = ps.free_in[c];
        ps.heap[0].left = ps.in_left[c];
        if (!live[c]) ps.heap[0] = ps.heap[--ps.nheap];
        heap_sift(&ps, 0);
    }
    free(ps.free_in);
    free(ps.free_out);
    free(ps.heap);
    free(ps.out_left);
    free(ps.in_left);
    free(start);
    free(live);
    free(lsrc);
    free(lbytes);
    return st;
}

static int64_t schedule_bytes(const xschedule *x) {
    return x->npieces * (int64_t)sizeof *x->pieces + x->cap * (int64_t)sizeof *x->v +
           x->ntag * (int64_t)sizeof *x->tag;
}

static void schedule_free(xschedule *x) {
    free(x->pieces);
    free(x->v);
    free(x->tag);
}

/* A multiply-xorshift hash of the tag's words: a quick no before the
 * comparison. */
static uint64_t tag_hash(const int64_t *tag, int64_t ntag) {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int64_t i = 0; i < ntag; i++) {
        h = (h ^ (uint64_t)tag[i]) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    return h;
}

const xschedule *exchange_find(const xcache *cache, const int64_t *tag, int64_t ntag, int64_t *most) {
    uint64_t h = tag_hash(tag, ntag);
    for (int i = 0; i < cache->n; i++) {
        const xschedule *x = &cache->e[i];
        if (x->tag && x->tag_hash == h && x->ntag == ntag && !memcmp(x->tag, tag, (size_t)ntag * sizeof *tag)) {
            *most = x->most;
            return x;
        }
    }
    return NULL;
}

rotor_status exchange_tag(xcache *cache, const xschedule *x, const int64_t *tag, int64_t ntag, int64_t most,
                          rotor_error *err) {
    xschedule *e = &cache->e[x - cache->e];
    int64_t *copy = malloc(ntag ? (size_t)ntag * sizeof *copy : 1);
    if (!copy) return rotor_nomem(err);
    memcpy(copy, tag, (size_t)ntag * sizeof *copy);
    cache->bytes -= schedule_bytes(e);
    free(e->tag);
    e->tag = copy;
    e->ntag = ntag;
    e->tag_hash = tag_hash(tag, ntag);
    e->most = most;
    cache->bytes += schedule_bytes(e);
    return ROTOR_OK;
}

rotor_status exchange_schedule(xcache *cache, int64_t (*pieces)[3], int64_t npieces, int64_t cores, int64_t n,
                               const xschedule **out, rotor_error *err) {
    rotor_status st = sort_pieces(pieces, npieces, n, err);
    if (st) return st;
    size_t key = (size_t)npieces * sizeof *pieces;
    for (int i = 0; i < cache->n; i++) {
        const xschedule *x = &cache->e[i];
        if (x->cores == cores && x->npieces == npieces && !memcmp(x->pieces, pieces, key)) {
            *out = x;
            return ROTOR_OK;
        }
    }
    xschedule x = {.cores = cores, .npieces = npieces, .pieces = malloc(key ? key : 1)};
    st = x.pieces ? ROTOR_OK : rotor_nomem(err);
    if (!st) {
        memcpy(x.pieces, pieces, key);
        st = list_schedule(&x, pieces, npieces, cores, n, err);
    }
    if (st) {
        schedule_free(&x);
        return st;
    }
    /* make room: the oldest first, but the new one is always kept */
    while (cache->n > 0 && cache->bytes + schedule_bytes(&x) > EXCHANGE_CACHE_BYTES) {
        cache->bytes -= schedule_bytes(&cache->e[0]);
        schedule_free(&cache->e[0]);
        memmove(cache->e, cache->e + 1, (size_t)(cache->n - 1) * sizeof *cache->e);
        cache->n--;
    }
    if (cache->n == cache->cap) {
        int cap = cache->cap ? 2 * cache->cap : 8;
        xschedule *e = realloc(cache->e, (size_t)cap * sizeof *e);
        if (!e) {
            schedule_free(&x);
            return rotor_nomem(err);
        }
        cache->e = e;
        cache->cap = cap;
    }
    cache->e[cache->n++] = x;
    cache->bytes += schedule_bytes(&x);
    *out = &cache->e[cache->n - 1];
    return ROTOR_OK;
}

void exchange_cache_free(xcache *cache) {
    for (int i = 0; i < cache->n; i++) schedule_free(&cache->e[i]);
    free(cache->e);
    *cache = (xcache){0};
}
