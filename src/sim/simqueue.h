/* simqueue.h — internal: the simulator's event queue (issue 23, "a faster
 * event loop").  Not public API.
 *
 * Events are taken in (time, key) order, key = kind << 32 | task id; a task
 * has at most one event queued, so the order is total and a run never
 * depends on how the queue is built.  Event times never go back: every event
 * is queued at or after the instant being processed.  That makes a radix
 * heap exact (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the
 * shortest path problem", 1990):
 *  - `last` is the instant being processed.  The events at `last` leave in
 *    key order.  Most are readies released by a finish at that instant, often
 *    thousands at once (a barrier), and a release walks its successors in id
 *    order, up or down.  So they go to a sorted deque when their key extends
 *    it at either end (O(1)), and to a 4-ary heap of keys otherwise; pop
 *    takes the smaller front.
 *  - A later event sits in bucket b = the position of the highest bit in
 *    which its time differs from `last` (1..64), unsorted.  Every time in a
 *    lower bucket is below every time in a higher one.
 *  - When `now` runs dry, the lowest non-empty bucket's earliest time becomes
 *    `last`; its events at that time go to `now`, the rest to lower buckets.
 *    An event moves down at most 64 times, in practice once or twice, so a
 *    push is O(1) and a pop O(1) amortised plus the instant's heap,
 *    where a binary heap of the later events paid a sift through every
 *    level (the heap was most of the loop's time in large replays).
 * Buckets are arrays that grow by doubling and keep their memory for the
 * next run; a growth that fails sets `nomem`, and the run stops with an
 * out-of-memory error.  The instant's deque and heap are sized once for
 * every task the run keeps. */
#ifndef ROTOR_SIMQUEUE_H
#define ROTOR_SIMQUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct sim_event {
    int64_t t;
    uint64_t key; /* kind << 32 | task id */
} sim_event;

#define SIM_Q_BUCKETS 65 /* 0 is unused: the events at `last` are in `now` */

typedef struct sim_bucket {
    sim_event *v;
    int64_t n, cap;
    int64_t min; /* the earliest time in it, when n > 0 */
} sim_bucket;

typedef struct sim_queue {
    int64_t last;        /* the instant being processed */
    uint64_t *now;       /* keys of the events at last out of order: 4-ary min-heap */
    uint64_t *dq;        /* keys of the events at last in order: a sorted ring of cap */
    int64_t nnow, dq_head, ndq, cap;
    uint64_t full;       /* bit b - 1 set: bucket b is not empty */
    bool nomem;          /* a bucket could not grow: the run must stop */
    sim_bucket b[SIM_Q_BUCKETS];
} sim_queue;

/* The deque's slot i places from its front. */
static inline int64_t sim_queue_dq_slot(const sim_queue *q, int64_t i) {
    int64_t k = q->dq_head + i;
    return k < q->cap ? k : k - q->cap;
}

/* Room for cap events at one instant; the queued events are kept.  False
 * when out of memory (the queue is then unchanged). */
static inline bool sim_queue_reserve(sim_queue *q, int64_t cap) {
    if (cap <= q->cap) return true;
    int64_t c = q->cap ? q->cap : 64;
    while (c < cap) c *= 2;
    uint64_t *now = realloc(q->now, (size_t)c * sizeof *now), *dq = malloc((size_t)c * sizeof *dq);
    if (now) q->now = now;
    if (!now || !dq) {
        free(dq);
        return false;
    }
    for (int64_t i = 0; i < q->ndq; i++) dq[i] = q->dq[sim_queue_dq_slot(q, i)];
    free(q->dq);
    q->dq = dq;
    q->dq_head = 0;
    q->cap = c;
    return true;
}

static inline void sim_queue_free(sim_queue *q) {
    free(q->now);
    free(q->dq);
    for (int i = 0; i < SIM_Q_BUCKETS; i++) free(q->b[i].v);
    *q = (sim_queue){0};
}

/* Empties the queue for a run starting at time 0; memory is kept. */
static inline void sim_queue_clear(sim_queue *q) {
    q->last = 0;
    q->nnow = q->ndq = q->dq_head = 0;
    q->full = 0;
    q->nomem = false;
    for (int i = 0; i < SIM_Q_BUCKETS; i++) q->b[i].n = 0;
}

static inline bool sim_queue_empty(const sim_queue *q) { return q->nnow == 0 && q->ndq == 0 && q->full == 0; }

/* The bucket of a time t > last: the highest differing bit, 1-based. */
static inline int sim_queue_bucket(const sim_queue *q, int64_t t) {
    return 64 - __builtin_clzll((uint64_t)t ^ (uint64_t)q->last);
}

static inline void sim_queue_now_push(sim_queue *q, uint64_t key) {
    if (q->ndq == 0 || key > q->dq[sim_queue_dq_slot(q, q->ndq - 1)]) { /* extends the back */
        q->dq[sim_queue_dq_slot(q, q->ndq++)] = key;
        return;
    }
    if (key < q->dq[q->dq_head]) { /* extends the front */
        q->dq_head = q->dq_head ? q->dq_head - 1 : q->cap - 1;
        q->dq[q->dq_head] = key;
        q->ndq++;
        return;
    }
    uint64_t *h = q->now;
    int64_t i = q->nnow++;
    while (i > 0) {
        int64_t p = (i - 1) / 4;
        if (h[p] <= key) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = key;
}

static inline void sim_queue_bucket_push(sim_queue *q, int b, sim_event e) {
    sim_bucket *k = &q->b[b];
    if (k->n == k->cap) {
        int64_t c = k->cap ? 2 * k->cap : 256;
        sim_event *v = realloc(k->v, (size_t)c * sizeof *v);
        if (!v) {
            q->nomem = true;
            return;
        }
        k->v = v;
        k->cap = c;
    }
    if (k->n == 0 || e.t < k->min) k->min = e.t;
    k->v[k->n++] = e;
    q->full |= (uint64_t)1 << (b - 1);
}

/* Queues an event at time t >= last. */
static inline void sim_queue_push(sim_queue *q, int64_t t, uint64_t key) {
    if (t == q->last) sim_queue_now_push(q, key);
    else sim_queue_bucket_push(q, sim_queue_bucket(q, t), (sim_event){t, key});
}

/* The time of the next event (the queue is not empty). */
static inline int64_t sim_queue_next_time(const sim_queue *q) {
    return q->nnow || q->ndq ? q->last : q->b[__builtin_ctzll(q->full) + 1].min;
}

/* The instant's events are done: the next instant's events move in. */
static inline void sim_queue_refill(sim_queue *q) {
    int bi = __builtin_ctzll(q->full) + 1;
    sim_bucket *k = &q->b[bi];
    int64_t n = k->n;
    k->n = 0;
    q->full &= ~((uint64_t)1 << (bi - 1));
    q->last = k->min;
    /* events of bucket bi differ from the new last only below bit bi - 1:
     * they go to lower buckets, never back to bi, so k->v is read while
     * others are written */
    for (int64_t i = 0; i < n; i++) {
        sim_event e = k->v[i];
        if (e.t == q->last) sim_queue_now_push(q, e.key);
        else sim_queue_bucket_push(q, sim_queue_bucket(q, e.t), e);
    }
}

/* The next event in (t, key) order (the queue is not empty). */
static inline sim_event sim_queue_pop(sim_queue *q) {
    if (q->nnow == 0 && q->ndq == 0) sim_queue_refill(q);
    if (q->ndq && (q->nnow == 0 || q->dq[q->dq_head] < q->now[0])) {
        uint64_t key = q->dq[q->dq_head];
        q->dq_head = q->dq_head + 1 == q->cap ? 0 : q->dq_head + 1;
        q->ndq--;
        return (sim_event){q->last, key};
    }
    uint64_t *h = q->now, top = h[0], x = h[--q->nnow];
    int64_t i = 0, n = q->nnow;
    for (;;) { /* 4-ary: half the levels of a binary heap */
        int64_t c = 4 * i + 1;
        if (c >= n) break;
        int64_t best = c, end = c + 4 < n ? c + 4 : n;
        for (int64_t j = c + 1; j < end; j++)
            if (h[j] < h[best]) best = j;
        if (x <= h[best]) break;
        h[i] = h[best];
        i = best;
    }
    if (n > 0) h[i] = x;
    return (sim_event){q->last, top};
}

#endif
