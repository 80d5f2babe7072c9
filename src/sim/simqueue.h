/* simqueue.h — internal: the simulator's event queue (issue 23, "a faster
 * event loop").  Not public API.
 *
 * Events are ordered by (time, key), key = kind << 32 | task id; a task has
 * at most one event queued, so the order is total and a run never depends on
 * how the queue is built.  Two parts hold them:
 *  - `now`: the events at the current instant, a binary heap of keys.  Most
 *    events are readies released by a finish at that instant; they never
 *    touch the big heap.
 *  - `heap`: the later events, a 4-ary min-heap.  A node's four children are
 *    one 64-byte line (the array is offset so that children 4i+1..4i+4 start
 *    a line), so a sift-down level costs one line, and the heap has half the
 *    levels of a binary one.
 * An event at the current instant may also sit in `heap` (it was pushed
 * earlier, for a time that has now come); pop compares the two tops.
 *
 * Both parts are sized once for every task the run keeps, so pushing never
 * allocates (the loop has no failure path). */
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

typedef struct sim_queue {
    void *mem;          /* the allocation behind heap */
    sim_event *heap;    /* later events: 4-ary min-heap by (t, key) */
    uint64_t *now;      /* events at the current instant: binary min-heap of keys */
    int64_t n, nnow, cap;
} sim_queue;

#define SIM_Q_LINE_OFFSET 3 /* events before heap[1] in its line: 3 * 16 = 48 bytes */

/* Room for cap events in each part; the queued events are kept.  False when
 * out of memory (the queue is then unchanged). */
static inline bool sim_queue_reserve(sim_queue *q, int64_t cap) {
    if (cap <= q->cap) return true;
    int64_t c = q->cap ? q->cap : 64;
    while (c < cap) c *= 2;
    size_t bytes = ((size_t)c + SIM_Q_LINE_OFFSET + 1) * sizeof(sim_event);
    bytes = (bytes + 63) / 64 * 64; /* aligned_alloc wants a multiple of the alignment */
    sim_event *mem = aligned_alloc(64, bytes);
    uint64_t *now = malloc((size_t)c * sizeof *now);
    if (!mem || !now) {
        free(mem);
        free(now);
        return false;
    }
    sim_event *heap = mem + SIM_Q_LINE_OFFSET;
    if (q->n) memcpy(heap, q->heap, (size_t)q->n * sizeof *heap);
    if (q->nnow) memcpy(now, q->now, (size_t)q->nnow * sizeof *now);
    free(q->mem);
    free(q->now);
    q->mem = mem;
    q->heap = heap;
    q->now = now;
    q->cap = c;
    return true;
}

static inline void sim_queue_free(sim_queue *q) {
    free(q->mem);
    free(q->now);
    *q = (sim_queue){0};
}

static inline void sim_queue_clear(sim_queue *q) { q->n = q->nnow = 0; }

static inline bool sim_queue_empty(const sim_queue *q) { return q->n == 0 && q->nnow == 0; }

/* (t, key) as one 128-bit number (t >= 0): one branch-free comparison. */
static inline bool sim_ev_before(sim_event a, sim_event b) {
    unsigned __int128 x = (unsigned __int128)(uint64_t)a.t << 64 | a.key;
    unsigned __int128 y = (unsigned __int128)(uint64_t)b.t << 64 | b.key;
    return x < y;
}

/* The time of the next event (the queue is not empty; now is the current instant). */
static inline int64_t sim_queue_next_time(const sim_queue *q, int64_t now) {
    return q->nnow ? now : q->heap[0].t;
}

/* Queues an event at time t >= now. */
static inline void sim_queue_push(sim_queue *q, int64_t now, int64_t t, uint64_t key) {
    if (t == now) {
        uint64_t *h = q->now;
        int64_t i = q->nnow++;
        while (i > 0) {
            int64_t p = (i - 1) / 2;
            if (h[p] <= key) break;
            h[i] = h[p];
            i = p;
        }
        h[i] = key;
        return;
    }
    sim_event e = {t, key}, *h = q->heap;
    int64_t i = q->n++;
    while (i > 0) {
        int64_t p = (i - 1) / 4;
        if (!sim_ev_before(e, h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static inline uint64_t sim_queue_pop_now(sim_queue *q) {
    uint64_t *h = q->now, top = h[0], x = h[--q->nnow];
    int64_t i = 0, n = q->nnow;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (x <= h[c]) break;
        h[i] = h[c];
        i = c;
    }
    if (n > 0) h[i] = x;
    return top;
}

static inline sim_event sim_queue_pop_heap(sim_queue *q) {
    sim_event *h = q->heap, top = h[0], x = h[--q->n];
    int64_t i = 0, n = q->n;
    for (;;) {
        int64_t c = 4 * i + 1;
        if (c >= n) break;
        int64_t best = c, last = c + 4 < n ? c + 4 : n;
        for (int64_t j = c + 1; j < last; j++)
            if (sim_ev_before(h[j], h[best])) best = j;
        if (!sim_ev_before(h[best], x)) break;
        h[i] = h[best];
        i = best;
    }
    if (n > 0) h[i] = x;
    return top;
}

/* The next event in (t, key) order (the queue is not empty). */
static inline sim_event sim_queue_pop(sim_queue *q, int64_t now) {
    if (q->nnow && (q->n == 0 || q->heap[0].t > now || q->now[0] < q->heap[0].key))
        return (sim_event){now, sim_queue_pop_now(q)};
    return sim_queue_pop_heap(q);
}

#endif
