/* Tests for the simulator's event queue (src/sim/simqueue.h, internal): a
 * radix heap must give exactly (time, key) order, for any interleaving of
 * pushes and pops that never goes back in time, across runs that reuse it. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "brute.h"
#include "sim/simqueue.h"

/* The reference: a binary min-heap on (time, key), the textbook one.  Keys
 * are unique in every test, so (time, key) is a total order and the heap's
 * pops are the sorted order an unsorted array scanned for its minimum gives
 * (the reference this replaced: its scan of up to 4,000 events a pop took
 * 10 s of the sanitizer run). */
typedef struct ref {
    sim_event v[4096];
    int n;
} ref;

static bool ref_less(sim_event a, sim_event b) { return a.t < b.t || (a.t == b.t && a.key < b.key); }

static void ref_push(ref *r, sim_event e) {
    int i = r->n++;
    while (i > 0 && ref_less(e, r->v[(i - 1) / 2])) {
        r->v[i] = r->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    r->v[i] = e;
}

static sim_event ref_pop(ref *r) {
    sim_event top = r->v[0], last = r->v[--r->n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= r->n) break;
        if (c + 1 < r->n && ref_less(r->v[c + 1], r->v[c])) c++;
        if (!ref_less(r->v[c], last)) break;
        r->v[i] = r->v[c];
        i = c;
    }
    if (r->n > 0) r->v[i] = last;
    return top;
}

/* Pops one event from q and from the reference, which must agree; the
 * event's time. */
static int64_t pop_both(sim_queue *q, ref *r, int round) {
    sim_event want = ref_pop(r), got = sim_queue_pop(q);
    cr_assert(got.t == want.t && got.key == want.key, "round %d: popped (%lld, %llx), want (%lld, %llx)", round,
              (long long)got.t, (unsigned long long)got.key, (long long)want.t, (unsigned long long)want.key);
    return got.t;
}

/* Pops everything left, in agreement; then q is empty and freed. */
static void drain_both(sim_queue *q, ref *r) {
    while (r->n > 0) pop_both(q, r, -1);
    cr_assert(sim_queue_empty(q));
    cr_assert(!q->nomem);
    sim_queue_free(q);
}

Test(simqueue, pops_in_time_then_key_order_like_a_sorted_reference) {
    sim_queue q = {0};
    static ref r;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        uint64_t x = seed;
        sim_queue_clear(&q);
        r.n = 0;
        cr_assert(sim_queue_reserve(&q, 4096));
        int64_t now = 0;
        uint64_t id = 0;
        /* time spans from 0 to far apart, so every bucket is used; ties at
         * one instant are common (span 0 or small) */
        int64_t span = seed % 4 == 0 ? 3 : (int64_t)1 << (seed % 50);
        for (int step = 0; step < 20000; step++) {
            bool push = r.n == 0 || (r.n < 4000 && bf_rand(&x) % 3 != 0);
            if (push) {
                int64_t dt = bf_rand(&x) % 4 == 0 ? 0 : (int64_t)(bf_rand(&x) % (uint64_t)span);
                sim_event e = {now + dt, (bf_rand(&x) % 3) << 32 | id++};
                sim_queue_push(&q, e.t, e.key);
                ref_push(&r, e);
            } else {
                int64_t next = sim_queue_next_time(&q);
                sim_event want = ref_pop(&r), got = sim_queue_pop(&q);
                cr_assert_eq(next, want.t, "seed %llu step %d: next time", (unsigned long long)seed, step);
                cr_assert(got.t == want.t && got.key == want.key,
                          "seed %llu step %d: popped (%lld, %llx), want (%lld, %llx)", (unsigned long long)seed,
                          step, (long long)got.t, (unsigned long long)got.key, (long long)want.t,
                          (unsigned long long)want.key);
                now = got.t;
            }
        }
        while (r.n > 0) {
            int64_t next = sim_queue_next_time(&q);
            sim_event want = ref_pop(&r), got = sim_queue_pop(&q);
            cr_assert_eq(next, want.t);
            cr_assert(got.t == want.t && got.key == want.key);
        }
        cr_assert(sim_queue_empty(&q));
        cr_assert(!q.nomem);
    }
    sim_queue_free(&q);
}

/* Bursts at one instant, as a barrier's release makes them: keys rising,
 * falling, and mixed, with pops between, still leave in key order. */
Test(simqueue, bursts_at_one_instant_rising_falling_or_mixed_leave_in_key_order) {
    sim_queue q = {0};
    static ref r;
    cr_assert(sim_queue_reserve(&q, 4096));
    uint64_t x = 7;
    int64_t now = 0;
    for (int round = 0; round < 300; round++) {
        int64_t t = now + (int64_t)(bf_rand(&x) % 3); /* 0: the instant being processed */
        int mode = round % 3, n = 1 + (int)(bf_rand(&x) % 64);
        uint64_t base = bf_rand(&x) % 100000;
        for (int i = 0; i < n && r.n < 4000; i++) {
            uint64_t id = mode == 0 ? base + (uint64_t)i : mode == 1 ? base + 1000 - (uint64_t)i : bf_rand(&x) % 100000;
            uint64_t key = (bf_rand(&x) % 8 == 0 ? 0 : 2ull) << 32 | id;
            bool dup = false; /* a task has one event at a time */
            for (int k = 0; k < r.n && !dup; k++) dup = r.v[k].key == key;
            if (dup) continue;
            sim_queue_push(&q, t, key);
            ref_push(&r, (sim_event){t, key});
        }
        for (int k = (int)(bf_rand(&x) % 48); k > 0 && r.n > 0; k--) now = pop_both(&q, &r, round);
    }
    drain_both(&q, &r);
}

/* Rounds ending at one instant, as a replay's gather rounds do: runs of
 * pushes at one future time (the pushes after the first find their bucket
 * without looking), more than a chunk long, interleaved with pushes at
 * other times and with pops that refill the buckets between them, still
 * leave in (time, key) order. */
Test(simqueue, runs_of_pushes_at_one_future_instant_leave_in_order) {
    sim_queue q = {0};
    static ref r;
    cr_assert(sim_queue_reserve(&q, 4096));
    uint64_t x = 11, id = 0;
    int64_t now = 0;
    const int64_t ahead[4] = {1, 300, 70000, (int64_t)1 << 33};
    for (int round = 0; round < 400; round++) {
        int64_t t = now + ahead[bf_rand(&x) % 4];
        int n = 1 + (int)(bf_rand(&x) % (3 * SIM_Q_CHUNK)); /* past a chunk's end */
        for (int i = 0; i < n && r.n < 4000; i++) {
            int64_t ti = bf_rand(&x) % 8 == 0 ? now + 1 + (int64_t)(bf_rand(&x) % 1000) : t; /* now and then another */
            uint64_t key = (bf_rand(&x) % 3) << 32 | id++;
            sim_queue_push(&q, ti, key);
            ref_push(&r, (sim_event){ti, key});
        }
        for (int k = (int)(bf_rand(&x) % 96); k > 0 && r.n > 0; k--) now = pop_both(&q, &r, round);
    }
    drain_both(&q, &r);
}
