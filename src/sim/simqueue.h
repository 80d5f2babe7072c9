/* simqueue.h — internal: the simulator's event queue (issue 23, "a faster
 * event loop").  Not public API.
 *
 * Events are taken in (time, key) order, key = kind << 32 | task id; a task
 * has at most one event queued, so the order is total and a run never
 * depends on how the queue is built.  Event times never go back: every event
 * is queued at or after the instant being processed.  That makes a radix
 * heap exact (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the
 * shortest path problem", 1990), here with digits of 8 bits:
 *  - `last` is the instant being processed.  The events at `last` leave in
 *    key order.  Most are readies released by a finish at that instant, often
 *    thousands at once (a barrier), and a release walks its successors in id
 *    order, up or down.  So they go to a sorted deque when their key extends
 *    it at either end (O(1)), and to a 4-ary heap of keys otherwise; pop
 *    takes the smaller front.
 *  - A later event sits in bucket (L, v): L = the highest 8-bit digit in
 *    which its time differs from `last`, v = its time's digit L (above
 *    last's).  Every time in level L is below every time in a higher level,
 *    and within a level the digit orders the buckets.  Bitmaps say which
 *    buckets hold events.
 *  - When `now` runs dry, the lowest bucket's earliest time becomes `last`;
 *    its events at that time go to `now`, the rest to lower levels.  An
 *    event moves down at most once per level, in practice once or twice: a
 *    finish a sub-task's 0.5 us ahead starts at level 2 (bits 16-23).  A
 *    radix heap of single bits moved each event 5 times on average in
 *    bench_sim, and the moves were a third of the loop's instructions.
 * Buckets are chains of fixed chunks from one pool, so memory follows the
 * events queued, not the buckets' peaks; the pool keeps its memory for the
 * next run.  A growth that fails sets `nomem`, and the run stops with an
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

#define SIM_Q_LEVELS 8    /* 8-bit digits of a 64-bit time */
#define SIM_Q_DIGITS 256
#define SIM_Q_CHUNK 31    /* events per chunk */

typedef struct sim_chunk {
    _Alignas(64) int32_t next; /* 1 + the next chunk of its bucket, or of the free list; 0: none */
    int32_t n;
    sim_event ev[SIM_Q_CHUNK];
} sim_chunk; /* 512 bytes, aligned: a chunk's address is a shift of its index */

/* A bucket's chunks run head to tail; it holds events only while its bit
 * is set in sim_queue.occ (the fields are stale otherwise). */
typedef struct sim_bucket {
    int32_t head, tail;
    int64_t min; /* the earliest time in it */
} sim_bucket;

typedef struct sim_queue {
    int64_t last;        /* the instant being processed */
    uint64_t *now;       /* keys of the events at last out of order: 4-ary min-heap */
    uint64_t *dq;        /* keys of the events at last in order: a sorted ring of cap */
    int64_t nnow, dq_head, ndq, cap;
    sim_chunk *chunk;    /* the pool */
    int32_t nchunk, chunk_cap;
    int32_t free_chunk;  /* 1 + the first free chunk, 0: none (a zeroed queue is empty) */
    uint32_t levels;     /* bit L set: level L has a bucket with events */
    int32_t push_bi;     /* the bucket of the last bucket push ... */
    int64_t push_t;      /* ... at this time (0: none; buckets move at a refill).  A round's
                            transfers end at one instant: their pushes skip finding the bucket */
    bool nomem;          /* the pool could not grow: the run must stop */
    uint64_t occ[SIM_Q_LEVELS][SIM_Q_DIGITS / 64]; /* bit v of level L: bucket (L, v) holds events */
    sim_bucket b[SIM_Q_LEVELS * SIM_Q_DIGITS];
} sim_queue;

/* The deque's slot i places from its front (cap is a power of two). */
static inline int64_t sim_queue_dq_slot(const sim_queue *q, int64_t i) { return (q->dq_head + i) & (q->cap - 1); }

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
    free(q->chunk);
    memset(q, 0, sizeof *q);
}

/* Empties the queue for a run starting at time 0; memory is kept. */
static inline void sim_queue_clear(sim_queue *q) {
    q->last = 0;
    q->nnow = q->ndq = q->dq_head = 0;
    q->nchunk = 0;
    q->free_chunk = 0;
    q->levels = 0;
    q->push_t = 0;
    q->nomem = false;
    memset(q->occ, 0, sizeof q->occ);
}

static inline bool sim_queue_empty(const sim_queue *q) { return q->nnow == 0 && q->ndq == 0 && q->levels == 0; }

static inline void sim_queue_now_push(sim_queue *q, uint64_t key) {
    if (q->ndq == 0 || key > q->dq[sim_queue_dq_slot(q, q->ndq - 1)]) { /* extends the back */
        q->dq[sim_queue_dq_slot(q, q->ndq++)] = key;
        return;
    }
    if (key < q->dq[q->dq_head]) { /* extends the front */
        q->dq_head = (q->dq_head - 1) & (q->cap - 1);
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

/* The pool doubles: a new chunk's index, or -1 (nomem set).
 * Cold and out of line: the pushes stay small enough to inline. */
static __attribute__((noinline, cold, unused)) int32_t sim_queue_chunk_grow(sim_queue *q) {
    int32_t cap = q->chunk_cap ? 2 * q->chunk_cap : 64;
    /* aligned as the type asks (realloc aligns to 16) */
    sim_chunk *v = q->chunk_cap < INT32_MAX / 2 ? aligned_alloc(64, (size_t)cap * sizeof *v) : NULL;
    if (!v) {
        q->nomem = true;
        return -1;
    }
    if (q->nchunk) memcpy(v, q->chunk, (size_t)q->nchunk * sizeof *v);
    free(q->chunk);
    q->chunk = v;
    q->chunk_cap = cap;
    return q->nchunk++;
}

/* A free chunk, or -1 (nomem set) when the pool cannot grow. */
static inline int32_t sim_queue_chunk_new(sim_queue *q) {
    int32_t c = q->free_chunk - 1;
    if (c >= 0) q->free_chunk = q->chunk[c].next;
    else if (q->nchunk < q->chunk_cap) c = q->nchunk++;
    else if ((c = sim_queue_chunk_grow(q)) < 0) return -1;
    q->chunk[c].next = 0;
    q->chunk[c].n = 0;
    return c;
}

/* Appends e to bucket k, whose tail chunk is full: a new tail (nomem set
 * if the pool cannot grow).  Out of line: once per SIM_Q_CHUNK events. */
static __attribute__((noinline, unused)) void sim_queue_bucket_extend(sim_queue *q, sim_bucket *k, sim_event e) {
    int32_t n = sim_queue_chunk_new(q);
    if (n < 0) return;
    q->chunk[k->tail].next = n + 1;
    k->tail = n;
    q->chunk[n].ev[q->chunk[n].n++] = e;
}

/* Appends e to bucket k, which holds events (nomem set if the pool cannot
 * grow). */
static inline void sim_queue_bucket_append(sim_queue *q, sim_bucket *k, sim_event e) {
    sim_chunk *ch = &q->chunk[k->tail];
    if (ch->n == SIM_Q_CHUNK) {
        sim_queue_bucket_extend(q, k, e); /* a tail call */
        return;
    }
    ch->ev[ch->n++] = e;
}

/* Bucket (level, v) starts with e in chunk c. */
static inline void sim_queue_bucket_open(sim_queue *q, int level, int v, int32_t c, sim_event e) {
    int bi = level * SIM_Q_DIGITS + v;
    q->occ[level][v >> 6] |= (uint64_t)1 << (v & 63);
    q->levels |= 1u << level;
    sim_bucket *k = &q->b[bi];
    k->head = k->tail = c;
    k->min = e.t;
    q->chunk[c].next = 0;
    q->chunk[c].n = 1;
    q->chunk[c].ev[0] = e;
    q->push_t = e.t;
    q->push_bi = bi;
}

/* Opens bucket bi with e when no chunk is free: the pool grows (nomem set
 * if it cannot).  Out of line, so that the pushes keep no state across a
 * call and stay small. */
static __attribute__((noinline, unused)) void sim_queue_bucket_open_grow(sim_queue *q, int level, int v,
                                                                         sim_event e) {
    int32_t c = sim_queue_chunk_new(q);
    if (c >= 0) sim_queue_bucket_open(q, level, v, c, e);
}

/* Queues e (e.t > last) in its bucket. */
static inline void sim_queue_bucket_push(sim_queue *q, sim_event e) {
    int bi = q->push_bi;
    if (e.t != q->push_t) { /* else the bucket of the push before: it holds events, its min is at most e.t */
        int level = (63 - __builtin_clzll((uint64_t)e.t ^ (uint64_t)q->last)) >> 3;
        int v = (int)((uint64_t)e.t >> (8 * level)) & (SIM_Q_DIGITS - 1);
        bi = level * SIM_Q_DIGITS + v;
        if (!(q->occ[level][v >> 6] & (uint64_t)1 << (v & 63))) { /* a new bucket: a chunk off the free list */
            int32_t c = q->free_chunk - 1;
            if (c < 0) {
                sim_queue_bucket_open_grow(q, level, v, e); /* a tail call */
                return;
            }
            q->free_chunk = q->chunk[c].next;
            sim_queue_bucket_open(q, level, v, c, e);
            return;
        }
        if (e.t < q->b[bi].min) q->b[bi].min = e.t;
        q->push_t = e.t;
        q->push_bi = bi;
    }
    sim_queue_bucket_append(q, &q->b[bi], e);
}

/* Queues an event at time t >= last. */
static inline void sim_queue_push(sim_queue *q, int64_t t, uint64_t key) {
    if (t == q->last) sim_queue_now_push(q, key);
    else sim_queue_bucket_push(q, (sim_event){t, key});
}

/* The lowest bucket holding events (levels != 0): level * 256 + digit. */
static inline int sim_queue_lowest(const sim_queue *q) {
    int level = __builtin_ctz(q->levels), w = 0;
    while (!q->occ[level][w]) w++;
    return level * SIM_Q_DIGITS + w * 64 + __builtin_ctzll(q->occ[level][w]);
}

/* The time of the next event (the queue is not empty). */
static inline int64_t sim_queue_next_time(const sim_queue *q) {
    return q->nnow || q->ndq ? q->last : q->b[sim_queue_lowest(q)].min;
}

/* The instant's events are done: the next instant's events move in. */
static inline void sim_queue_refill(sim_queue *q) {
    int bi = sim_queue_lowest(q), level = bi / SIM_Q_DIGITS, v = bi % SIM_Q_DIGITS;
    const sim_bucket k = q->b[bi];
    q->occ[level][v >> 6] &= ~((uint64_t)1 << (v & 63));
    uint64_t any = 0;
    for (int w = 0; w < SIM_Q_DIGITS / 64; w++) any |= q->occ[level][w];
    if (!any) q->levels &= ~(1u << level);
    q->last = k.min;
    q->push_t = 0; /* the buckets are about to move */
    /* its events differ from the new last only below digit `level`: they go
     * to lower levels, never back to this bucket, and a chunk is freed only
     * once it is read (the pool may move as others grow: indices, not
     * pointers) */
    for (int32_t c = k.head; c >= 0;) {
        int32_t n = q->chunk[c].n;
        for (int32_t i = 0; i < n; i++) {
            sim_event e = q->chunk[c].ev[i];
            if (e.t == q->last) sim_queue_now_push(q, e.key);
            else sim_queue_bucket_push(q, e);
        }
        int32_t next = q->chunk[c].next - 1;
        q->chunk[c].next = q->free_chunk;
        q->free_chunk = c + 1;
        c = next;
    }
}

/* The next event in (t, key) order (the queue is not empty). */
static inline sim_event sim_queue_pop(sim_queue *q) {
    if (q->nnow == 0 && q->ndq == 0) sim_queue_refill(q);
    if (q->ndq && (q->nnow == 0 || q->dq[q->dq_head] < q->now[0])) {
        uint64_t key = q->dq[q->dq_head];
        q->dq_head = (q->dq_head + 1) & (q->cap - 1);
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
