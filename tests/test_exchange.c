/* Tests for the hand-off exchange's packet schedule (src/sim/exchange.c,
 * internal): what it moves, the order it states, and its cache. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replayer.h"

/* Core c receives from each of the next `fan` cores, (c * 7 + s) % 1300 + 1 bytes. */
static int64_t make_pieces(int64_t (*v)[3], int64_t cores, int64_t fan, int64_t salt) {
    int64_t n = 0;
    for (int64_t c = 0; c < cores; c++)
        for (int64_t k = 1; k <= fan; k++) {
            int64_t s = (c + k) % cores;
            v[n][0] = c;
            v[n][1] = s;
            v[n][2] = (c * 7 + s + salt) % 1300 + 1;
            n++;
        }
    return n;
}

/* Every (receiver, sender) gets its bytes in packets of at most 512, and
 * the packets in the schedule's order, each taking its two ports as soon as
 * both are free (what the simulator's ports do with them), end between the
 * busiest port's bytes and twice them (a list schedule's bound). */
Test(exchange, packets_carry_every_piece_and_their_order_keeps_near_the_busiest_port) {
    enum { CORES = 16, FAN = 5 };
    int64_t v[CORES * FAN][3], moved[CORES][CORES] = {{0}}, want[CORES][CORES] = {{0}};
    int64_t n = make_pieces(v, CORES, FAN, 0);
    int64_t in[CORES] = {0}, out[CORES] = {0}, most = 0;
    for (int64_t k = 0; k < n; k++) {
        want[v[k][0]][v[k][1]] += v[k][2];
        in[v[k][0]] += v[k][2];
        out[v[k][1]] += v[k][2];
    }
    for (int c = 0; c < CORES; c++) most = in[c] > most ? in[c] : out[c] > most ? out[c] : most;
    int64_t packet = exchange_packet(most);
    xcache cache = {0};
    const xschedule *x;
    rotor_error err;
    cr_assert_eq(exchange_schedule(&cache, v, n, CORES, CORES, &x, &err), ROTOR_OK);
    int64_t free_in[CORES] = {0}, free_out[CORES] = {0}, end = 0;
    for (int64_t i = 0; i < x->n; i++) {
        const xpacket *p = &x->v[i];
        cr_assert(p->bytes > 0 && p->bytes <= packet, "packet %lld: %d bytes", (long long)i, p->bytes);
        moved[p->dst][p->src] += p->bytes;
        int64_t t = free_in[p->dst] > free_out[p->src] ? free_in[p->dst] : free_out[p->src];
        free_in[p->dst] = free_out[p->src] = t + p->bytes;
        if (t + p->bytes > end) end = t + p->bytes;
    }
    cr_assert(memcmp(moved, want, sizeof moved) == 0, "every piece's bytes, no more");
    cr_assert(end >= most && end <= 2 * most, "the schedule ends at %lld byte-times, the busiest port has %lld",
              (long long)end, (long long)most);
    exchange_cache_free(&cache);
}

/* The packet is a 1/ROTOR_EXCHANGE_GRAIN share of the busiest port, in whole
 * 64 B lines, and never under EXCHANGE_PACKET_MIN. */
Test(exchange, the_packet_grows_with_the_busiest_port) {
    cr_assert_eq(exchange_packet(0), EXCHANGE_PACKET_MIN);
    cr_assert_eq(exchange_packet(12864), 256); /* BERT-Large b8's attention scores */
    cr_assert_eq(exchange_packet(256 * ROTOR_EXCHANGE_GRAIN), 256);
    cr_assert_eq(exchange_packet(256 * ROTOR_EXCHANGE_GRAIN + 1), 320);
    cr_assert_eq(exchange_packet(1 << 20), (1 << 20) / ROTOR_EXCHANGE_GRAIN);
}

/* The schedule depends on the pieces alone: the same pieces in another
 * order find the cached schedule; other bytes or another core count do not. */
Test(exchange, the_same_pieces_in_any_order_reuse_the_schedule) {
    enum { CORES = 64, FAN = 9 };
    static int64_t a[CORES * FAN][3], b[CORES * FAN][3], c[CORES * FAN][3];
    int64_t n = make_pieces(a, CORES, FAN, 0);
    make_pieces(c, CORES, FAN, 1);
    for (int64_t k = 0; k < n; k++) memcpy(b[k], a[n - 1 - k], sizeof b[k]); /* reversed */
    xcache cache = {0};
    const xschedule *x, *y, *z, *w;
    rotor_error err;
    cr_assert_eq(exchange_schedule(&cache, a, n, CORES, CORES, &x, &err), ROTOR_OK);
    xpacket *first = malloc((size_t)x->n * sizeof *first);
    int64_t nfirst = x->n;
    memcpy(first, x->v, (size_t)x->n * sizeof *first);
    cr_assert_eq(exchange_schedule(&cache, b, n, CORES, CORES, &y, &err), ROTOR_OK);
    cr_assert_eq(x, y, "a hit: the cached schedule itself");
    cr_assert_eq(cache.n, 1);
    cr_assert_eq(exchange_schedule(&cache, c, n, CORES, CORES, &z, &err), ROTOR_OK);
    cr_assert_eq(cache.n, 2, "other bytes: another schedule");
    cr_assert_eq(exchange_schedule(&cache, a, n, CORES, 2 * CORES, &w, &err), ROTOR_OK);
    cr_assert_eq(cache.n, 2, "the chip's core count does not change a schedule over the same receivers");
    /* a schedule computed afresh equals the cached one, packet for packet */
    xcache fresh = {0};
    make_pieces(a, CORES, FAN, 0);
    cr_assert_eq(exchange_schedule(&fresh, a, n, CORES, CORES, &x, &err), ROTOR_OK);
    cr_assert_eq(x->n, nfirst);
    cr_assert(memcmp(x->v, first, (size_t)nfirst * sizeof *first) == 0);
    free(first);
    exchange_cache_free(&fresh);
    exchange_cache_free(&cache);
}

/* A schedule is also found by its tag: the tag it was last given, with
 * that tag's busiest port; another tag finds nothing; a new tag replaces the
 * old one. */
Test(exchange, a_tagged_schedule_is_found_by_its_tag_alone) {
    enum { CORES = 16, FAN = 3 };
    int64_t v[CORES * FAN][3];
    int64_t n = make_pieces(v, CORES, FAN, 0);
    xcache cache = {0};
    const xschedule *x;
    rotor_error err;
    int64_t tag[4] = {7, 1, -2, 900}, other[4] = {7, 1, -2, 901}, most = -1;
    cr_assert_eq(exchange_find(&cache, tag, 4, &most), NULL, "an empty cache");
    cr_assert_eq(exchange_schedule(&cache, v, n, CORES, CORES, &x, &err), ROTOR_OK);
    cr_assert_eq(exchange_find(&cache, tag, 4, &most), NULL, "not tagged yet");
    cr_assert_eq(exchange_tag(&cache, x, tag, 4, 4321, &err), ROTOR_OK);
    cr_assert_eq(exchange_find(&cache, tag, 4, &most), x);
    cr_assert_eq(most, 4321);
    cr_assert_eq(exchange_find(&cache, other, 4, &most), NULL, "one word differs");
    cr_assert_eq(exchange_find(&cache, tag, 3, &most), NULL, "a prefix is another tag");
    cr_assert_eq(exchange_tag(&cache, x, other, 4, 99, &err), ROTOR_OK);
    cr_assert_eq(exchange_find(&cache, tag, 4, &most), NULL, "the old tag is gone");
    cr_assert_eq(exchange_find(&cache, other, 4, &most), x);
    cr_assert_eq(most, 99);
    exchange_cache_free(&cache);
}
