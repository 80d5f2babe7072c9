/* test_sim.c — the event-driven chip simulator (src/sim/sim.c, src/sim/simnet.c,
 * src/sim/simtrace.c; Elk §2.1 and §5; docs/simulator.md).
 *
 * The hand-computed cases use link_gbps = 5.5 (ipu-mk2), where 1,100 bytes
 * take exactly 200 ns = 200,000 ps, and a link latency of 50 ns = 50,000 ps,
 * so a one-hop transfer of 1,100 bytes takes 250,000 ps. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/sim/sim.h"
#include "fixtures.h"
#include "sim/simint.h" /* the pair shortcut against the route it stands for */

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

#define B1100 1100          /* bytes: 200,000 ps at 5.5 GB/s */
#define STREAM 200000       /* ps */
#define LAT 50000           /* ps: link_latency_ns = 50 */

/* ---- helpers ------------------------------------------------------------- */

/* ipu-mk2 cut down to `cores` all-to-all cores, latency in ns. */
static rotor_chip a2a(int64_t cores, double latency_ns) {
    rotor_chip c = mk2();
    c.cores_per_chip = cores;
    c.link_latency_ns = latency_ns;
    return c;
}

static rotor_chip mesh(int64_t w, int64_t h, double latency_ns) {
    rotor_chip c = a2a(w * h, latency_ns);
    c.topology = ROTOR_TOPO_MESH;
    c.mesh_width = w;
    c.mesh_height = h;
    return c;
}

static rotor_sim *make(const rotor_chip *chip) {
    rotor_sim *s;
    rotor_error err;
    cr_assert_eq(rotor_sim_create(chip, &s, &err), ROTOR_OK, "%s", err.msg);
    return s;
}

/* A simulator of a2a(cores, latency_ns) or of mesh(w, h, latency_ns). */
static rotor_sim *a2a_sim(int64_t cores, double latency_ns) {
    rotor_chip c = a2a(cores, latency_ns);
    return make(&c);
}

static rotor_sim *mesh_sim(int64_t w, int64_t h, double latency_ns) {
    rotor_chip c = mesh(w, h, latency_ns);
    return make(&c);
}

static int64_t xfer(rotor_sim *s, int64_t src, int64_t dst, int64_t bytes, const int64_t *deps, int ndeps) {
    rotor_sim_transfer t = {.src = src, .dst = dst, .bytes = bytes, .category = ROTOR_SIM_COMM,
                            .op = 0, .deps = deps, .ndeps = ndeps};
    int64_t id;
    rotor_error err;
    cr_assert_eq(rotor_sim_add_transfer(s, &t, &id, &err), ROTOR_OK, "%s", err.msg);
    return id;
}

static int64_t compute(rotor_sim *s, int64_t core, int64_t ps, const int64_t *deps, int ndeps) {
    rotor_sim_compute c = {.core = core, .duration_ps = ps, .category = ROTOR_SIM_COMPUTE, .op = 0,
                           .deps = deps, .ndeps = ndeps};
    int64_t id;
    rotor_error err;
    cr_assert_eq(rotor_sim_add_compute(s, &c, &id, &err), ROTOR_OK, "%s", err.msg);
    return id;
}

static rotor_sim_stats run(rotor_sim *s) {
    rotor_sim_stats st;
    rotor_error err;
    cr_assert_eq(rotor_sim_run(s, &st, &err), ROTOR_OK, "%s", err.msg);
    return st;
}

static rotor_sim_timing timing(const rotor_sim *s, int64_t id) {
    rotor_sim_timing t;
    rotor_error err;
    cr_assert_eq(rotor_sim_task_timing(s, id, &t, &err), ROTOR_OK, "%s", err.msg);
    return t;
}

static void assert_span(const rotor_sim *s, int64_t id, int64_t start, int64_t end) {
    rotor_sim_timing t = timing(s, id);
    cr_assert_eq(t.start_ps, start, "task %lld starts at %lld, expected %lld", (long long)id,
                 (long long)t.start_ps, (long long)start);
    cr_assert_eq(t.end_ps, end, "task %lld ends at %lld, expected %lld", (long long)id,
                 (long long)t.end_ps, (long long)end);
}

/* The route of src -> dst as names joined by ", ", and its hop count. */
static int64_t route_text(const rotor_sim *s, int64_t src, int64_t dst, char *out, size_t size) {
    int64_t res[64], n, hops;
    rotor_error err;
    cr_assert_eq(rotor_sim_route(s, src, dst, res, 64, &n, &hops, &err), ROTOR_OK, "%s", err.msg);
    out[0] = '\0';
    for (int64_t i = 0; i < n && i < 64; i++) {
        char name[64];
        rotor_sim_resource_name(s, res[i], name, sizeof name);
        if (i) strncat(out, ", ", size - strlen(out) - 1);
        strncat(out, name, size - strlen(out) - 1);
    }
    return hops;
}

/* The route from src to dst takes `hops` links or ports (-1: not checked)
 * through the resources named in `want`, in order. */
static void assert_route(const rotor_sim *s, int64_t src, int64_t dst, int64_t hops, const char *want) {
    char text[512];
    int64_t h = route_text(s, src, dst, text, sizeof text);
    if (hops >= 0) cr_assert_eq(h, hops, "%lld -> %lld: %lld hops", (long long)src, (long long)dst, (long long)h);
    cr_assert_str_eq(text, want, "%lld -> %lld", (long long)src, (long long)dst);
}

/* ---- all-to-all (Elk §2.1: IPU exchange) ------------------------------------ */

/* A ring shift of 2 cores: each sends to the other.  Out and in ports are
 * separate, so both take alpha + bytes / beta = 50 ns + 1100 B / 5.5 GB/s.
 * A port is held while the bytes cross it (pipelined links): the out port
 * from 0 to 200 ns, the in port from 50 to 250. */
Test(sim, one_shift_between_2_cores_takes_latency_plus_bytes_over_link_bandwidth) {
    rotor_sim *s = a2a_sim(2, 50);
    int64_t a = xfer(s, 0, 1, B1100, NULL, 0), b = xfer(s, 1, 0, B1100, NULL, 0);
    rotor_sim_stats st = run(s);
    assert_span(s, a, 0, LAT + STREAM);
    assert_span(s, b, 0, LAT + STREAM);
    cr_assert_eq(st.makespan_ps, 250000);
    cr_assert_eq(st.stall_ps, 0);
    cr_assert_eq(st.busy_ps[ROTOR_SIM_COMM], 2 * 250000);
    cr_assert_eq(st.exposed_ps[ROTOR_SIM_COMM], 250000);
    cr_assert_eq(st.bytes, 2 * B1100);
    cr_assert_eq(st.events, 6, "three events per task");
    cr_assert_float_eq(st.link_util_mean, 0.8, 1e-15, "all 4 ports busy 200 of the 250 ns");
    cr_assert_float_eq(st.link_util_peak, 0.8, 1e-15);
    rotor_sim_free(s);
}

Test(sim, transfer_time_is_one_latency_plus_bytes_over_beta_rounded_to_the_ps) {
    rotor_chip chip = mk2(); /* alpha = 0 */
    rotor_sim *s = make(&chip);
    int64_t ps;
    rotor_error err;
    /* 8192 B / 5.5e9 B/s = 1489.4545... ns */
    cr_assert_eq(rotor_sim_transfer_ps(s, 0, 1471, 8192, &ps, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(ps, 1489455);
    cr_assert_eq(rotor_sim_transfer_ps(s, 3, 4, 0, &ps, &err), ROTOR_OK);
    cr_assert_eq(ps, 0);
    assert_route(s, 0, 1471, 1, "out c0.0, in c0.1471");
    rotor_sim_free(s);
}

/* Elk §2.1: "If multiple cores receive/send different data from/to the same
 * core, the interconnect sequentially serves each data transfer at full
 * bandwidth."  The in port takes the second flow's bytes as soon as the
 * first's have passed (at 250 ns): the second leaves at 200 ns, its head
 * arriving as the first's tail does, and ends at 450, the latency paid
 * once (pipelined links; until 2026-12-04 the port was held for the
 * latency too, and the second ended at 500). */
Test(sim, two_flows_into_one_receiver_take_twice_the_bytes_time) {
    rotor_sim *s = a2a_sim(3, 50);
    int64_t a = xfer(s, 0, 2, B1100, NULL, 0), b = xfer(s, 1, 2, B1100, NULL, 0);
    rotor_sim_stats st = run(s);
    assert_span(s, a, 0, 250000);
    assert_span(s, b, 200000, 450000);
    cr_assert_eq(st.makespan_ps, 450000);
    cr_assert_eq(st.stall_ps, 200000, "the second flow waits for the first one's bytes");
    cr_assert_eq(st.contended_ps, 200000);
    cr_assert_eq(timing(s, b).ready_ps, 0);
    rotor_sim_free(s);
}

Test(sim, one_sender_to_two_receivers_is_served_one_after_the_other) {
    rotor_sim *s = a2a_sim(3, 50);
    int64_t a = xfer(s, 0, 1, B1100, NULL, 0), b = xfer(s, 0, 2, B1100, NULL, 0);
    run(s);
    assert_span(s, a, 0, 250000);
    assert_span(s, b, 200000, 450000); /* the out port is free once a's bytes have left */
    rotor_sim_free(s);
}

/* FIFO by ready time, then by task id: task 1 (ready at 0) goes before task
 * 0 (ready at 100,000 behind a compute), and of two transfers ready at the
 * same instant the lower id goes first.  Core 3's in port holds each one's
 * bytes, 200 ns, from 50, 250 and 450 ns. */
Test(sim, a_receiver_serves_senders_by_ready_time_then_task_id) {
    rotor_sim *s = a2a_sim(4, 50);
    int64_t c = compute(s, 0, 100000, NULL, 0);
    int64_t late = xfer(s, 0, 3, B1100, &c, 1);
    int64_t early = xfer(s, 1, 3, B1100, NULL, 0);
    int64_t tie = xfer(s, 2, 3, B1100, NULL, 0);
    run(s);
    assert_span(s, early, 0, 250000);
    assert_span(s, tie, 200000, 450000);
    assert_span(s, late, 400000, 650000);
    cr_assert_eq(timing(s, late).ready_ps, 100000);
    rotor_sim_free(s);
}

/* ---- 2D mesh ------------------------------------------------------------------- */

/* 4 x 1 mesh: 0 -> 2 and 1 -> 3 both cross link (1,0)->(2,0).  Each is 2 hops:
 * 2 * 50 ns + 200 ns = 300 ns.  The first's head reaches that link at 50 ns
 * and its bytes hold it until 250 ns (pipelined links); the second's first
 * link is that one, so it starts at 250 ns and ends at 550 ns. */
Test(sim, two_flows_sharing_one_mesh_link_wait_for_its_bytes) {
    rotor_sim *s = mesh_sim(4, 1, 50);
    int64_t a = xfer(s, 0, 2, B1100, NULL, 0), b = xfer(s, 1, 3, B1100, NULL, 0);
    rotor_sim_stats st = run(s);
    assert_span(s, a, 0, 300000);
    assert_span(s, b, 250000, 550000);
    cr_assert_eq(st.stall_ps, 250000);
    assert_route(s, 0, 2, -1, "link c0 (0,0)->(1,0), link c0 (1,0)->(2,0)");
    assert_route(s, 1, 3, -1, "link c0 (1,0)->(2,0), link c0 (2,0)->(3,0)");
    rotor_sim_free(s);
}

Test(sim, mesh_flows_on_disjoint_links_overlap) {
    rotor_sim *s = mesh_sim(4, 1, 50);
    int64_t a = xfer(s, 0, 1, B1100, NULL, 0), b = xfer(s, 2, 3, B1100, NULL, 0);
    int64_t c = xfer(s, 3, 2, B1100, NULL, 0); /* the opposite direction is another link */
    run(s);
    assert_span(s, a, 0, 250000);
    assert_span(s, b, 0, 250000);
    assert_span(s, c, 0, 250000);
    rotor_sim_free(s);
}

/* Elk §6 "Simulator setup": each core can communicate with all its
 * neighbours (up to 4 in a 2D mesh) at once. */
Test(sim, a_mesh_core_talks_to_its_4_neighbours_at_once) {
    rotor_sim *s = mesh_sim(3, 3, 50);
    int64_t to[4] = {1, 3, 5, 7};
    for (int i = 0; i < 4; i++) xfer(s, 4, to[i], B1100, NULL, 0);
    rotor_sim_stats st = run(s);
    cr_assert_eq(st.makespan_ps, 250000);
    cr_assert_eq(st.stall_ps, 0);
    /* 3 x 3 mesh: 12 edges, 24 directed links; 4 carry bytes 200 of the 250 ns */
    cr_assert_float_eq(st.link_util_mean, 4.0 * 0.8 / 24.0, 1e-15);
    cr_assert_float_eq(st.link_util_peak, 0.8, 1e-15);
    rotor_sim_free(s);
}

/* Dimension-order routing: all of X first, then Y, one latency per link. */
Test(sim, mesh_route_is_x_then_y_with_one_hop_per_link) {
    rotor_sim *s = mesh_sim(3, 3, 50);
    assert_route(s, 0, 8, 4,
                 "link c0 (0,0)->(1,0), link c0 (1,0)->(2,0), "
                 "link c0 (2,0)->(2,1), link c0 (2,1)->(2,2)");
    assert_route(s, 8, 0, 4,
                 "link c0 (2,2)->(1,2), link c0 (1,2)->(0,2), "
                 "link c0 (0,2)->(0,1), link c0 (0,1)->(0,0)");
    /* (0,2) -> (2,1) */
    assert_route(s, 6, 5, 3, "link c0 (0,2)->(1,2), link c0 (1,2)->(2,2), link c0 (2,2)->(2,1)");
    int64_t ps;
    cr_assert_eq(rotor_sim_transfer_ps(s, 0, 8, B1100, &ps, NULL), ROTOR_OK);
    cr_assert_eq(ps, 4 * LAT + STREAM);
    rotor_sim_free(s);
}

Test(sim, mesh_hop_count_is_the_manhattan_distance_for_every_pair) {
    rotor_sim *s = mesh_sim(5, 4, 10);
    for (int64_t a = 0; a < 20; a++)
        for (int64_t b = 0; b < 20; b++) {
            if (a == b) continue;
            int64_t res[16], n, hops;
            cr_assert_eq(rotor_sim_route(s, a, b, res, 16, &n, &hops, NULL), ROTOR_OK);
            int64_t d = llabs(a % 5 - b % 5) + llabs(a / 5 - b / 5);
            cr_assert_eq(hops, d, "%lld -> %lld: %lld hops, expected %lld", (long long)a, (long long)b,
                         (long long)hops, (long long)d);
            cr_assert_eq(n, d);
        }
    rotor_sim_free(s);
}

/* ---- HBM (Elk §2.1: controllers are nodes on the interconnect) ----------- */

/* 8 cores, HBM 44 GB/s over 2 controllers: 22 GB/s each, 4 lanes of 5.5 GB/s.
 * A load of 8,800 B split evenly over both controllers and 8 cores takes
 * 8800 B / 44 GB/s = 200 ns, the HBM bound; from one controller, twice. */
static rotor_chip hbm_chip(void) {
    rotor_chip c = a2a(8, 0);
    c.hbm_bytes = (int64_t)1 << 30;
    c.hbm_gbps = 44;
    c.hbm_controllers = 2;
    return c;
}

/* The loop takes a transfer between two cores of one chip on all-to-all
 * without building its route (sim_net_pair), and adding it asks no route
 * for its rate and hops (sim_net_rate).  For every pair of nodes of a
 * 2-chip chip with HBM controllers, all-to-all and mesh, the shortcut names
 * exactly the route the topology builds, or stands aside, and the rate and
 * hops are the route's. */
Test(sim, the_pair_shortcut_names_the_route_the_topology_builds_or_stands_aside) {
    for (int m = 0; m < 2; m++) {
        rotor_chip chip = hbm_chip();
        chip.chips = 2;
        chip.interchip_gbps = 11;
        if (m) {
            chip.topology = ROTOR_TOPO_MESH;
            chip.mesh_width = 4;
            chip.mesh_height = 2;
        }
        rotor_sim *s = make(&chip);
        int64_t nodes = rotor_sim_nodes(s), shortcuts = 0;
        cr_assert_eq(nodes, 2 * 8 + 2 * 2);
        for (int64_t src = 0; src < nodes; src++)
            for (int64_t dst = 0; dst < nodes; dst++) {
                if (src == dst || (src >= 16 && dst >= 16)) continue;
                int64_t id = xfer(s, src, dst, 64, NULL, 0);
                const sim_task *t = &s->tasks[id - s->base];
                int32_t pair[2];
                sim_route r;
                sim_net_route(s, src, dst, &r);
                double gbps;
                int64_t hops;
                sim_net_rate(s, src, dst, &gbps, &hops);
                cr_assert_eq(hops, r.hops, "%lld -> %lld: the rate's hops are the route's", (long long)src,
                             (long long)dst);
                double slowest = chip.link_gbps;
                for (int64_t i = 0; i < r.n; i++)
                    if (s->res[r.res[i]].gbps < slowest) slowest = s->res[r.res[i]].gbps;
                cr_assert_eq(gbps, slowest, "%lld -> %lld: the rate is the route's slowest resource", (long long)src,
                             (long long)dst);
                bool cores_of_one_chip = src < 16 && dst < 16 && src / 8 == dst / 8;
                if (sim_net_pair(s, t, pair)) {
                    cr_assert(!m && cores_of_one_chip, "%lld -> %lld: only all-to-all, cores of one chip",
                              (long long)src, (long long)dst);
                    cr_assert(r.n == 2 && r.res[0] == pair[0] && r.res[1] == pair[1],
                              "%lld -> %lld: the shortcut's ports are the route", (long long)src, (long long)dst);
                    shortcuts++;
                } else {
                    cr_assert(m || !cores_of_one_chip, "%lld -> %lld: all-to-all between cores of one chip",
                              (long long)src, (long long)dst);
                }
            }
        cr_assert_eq(shortcuts, m ? 0 : 2 * 8 * 7);
        rotor_sim_free(s);
    }
}

/* A pool's lane is one word, (free time, lane) ordered as one unsigned
 * number, up to the latest free time a run can store (an end past
 * SIM_TIME_MAX, which stops the run) and the highest lane. */
Test(sim, a_lane_key_keeps_its_time_and_index_and_orders_by_time_then_lane) {
    int64_t late = 2 * SIM_TIME_MAX;
    sim_lane a = sim_lane_make(late, SIM_MAX_LANES - 1), b = sim_lane_make(late, 0),
             c = sim_lane_make(late - 1, SIM_MAX_LANES - 1), z = sim_lane_make(0, 7);
    cr_assert(sim_lane_free(a) == late && sim_lane_index(a) == SIM_MAX_LANES - 1);
    cr_assert(sim_lane_free(z) == 0 && sim_lane_index(z) == 7);
    cr_assert(b < a, "same time: the lower lane first");
    cr_assert(c < b, "an earlier time first, whatever the lane");
    cr_assert(z < c);
}

Test(sim, hbm_load_split_across_controllers_takes_bytes_over_hbm_bandwidth) {
    rotor_chip chip = hbm_chip();
    rotor_sim *s = make(&chip);
    cr_assert_eq(rotor_sim_nodes(s), 10);
    cr_assert_eq(rotor_sim_hbm_node(s, 0, 1), 9);
    cr_assert_eq(rotor_sim_hbm_node(s, 0, 2), -1);
    for (int64_t core = 0; core < 8; core++) {
        rotor_sim_transfer t = {.src = rotor_sim_hbm_node(s, 0, core % 2), .dst = core, .bytes = B1100,
                                .category = ROTOR_SIM_HBM, .op = 0};
        cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, NULL), ROTOR_OK);
    }
    rotor_sim_stats st = run(s);
    cr_assert_eq(st.makespan_ps, 8800 * 1000 / 44);
    cr_assert_eq(st.hbm_bytes, 8800);
    cr_assert_float_eq(st.hbm_util, 1.0, 1e-12);
    cr_assert_eq(st.exposed_ps[ROTOR_SIM_HBM], 200000);
    assert_route(s, 8, 3, 1, "hbm c0.0, in c0.3");
    rotor_sim_free(s);
}

Test(sim, hbm_load_from_one_controller_takes_twice_as_long) {
    rotor_chip chip = hbm_chip();
    rotor_sim *s = make(&chip);
    for (int64_t core = 0; core < 8; core++) {
        rotor_sim_transfer t = {.src = 8, .dst = core, .bytes = B1100, .category = ROTOR_SIM_HBM, .op = -1};
        cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, NULL), ROTOR_OK);
    }
    rotor_sim_stats st = run(s);
    cr_assert_eq(st.makespan_ps, 2 * 200000, "4 lanes: two rounds of 4");
    cr_assert_float_eq(st.hbm_util, 0.5, 1e-12);
    rotor_sim_free(s);
}

/* A controller of 19.8 GB/s behind 5.5 GB/s links is 4 lanes of 4.95 GB/s,
 * not 3 of 6.6: transfers run at most at the link rate, so 3 lanes would
 * deliver only 16.5 GB/s.  8 loads of 990 B take 7,920 B / 19.8 GB/s =
 * 400 ns, the HBM bound (two rounds of 200 ns on 4 lanes; 3 lanes: 540 ns). */
Test(sim, a_pool_is_cut_into_lanes_no_faster_than_the_link_so_it_delivers_its_whole_bandwidth) {
    rotor_chip chip = hbm_chip();
    chip.hbm_gbps = 19.8;
    chip.hbm_controllers = 1;
    rotor_sim *s = make(&chip);
    cr_assert_eq(rotor_sim_hbm_lanes(s), 4);
    for (int64_t core = 0; core < 8; core++) {
        rotor_sim_transfer t = {.src = 8, .dst = core, .bytes = 990, .category = ROTOR_SIM_HBM, .op = -1};
        cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, NULL), ROTOR_OK);
    }
    rotor_sim_stats st = run(s);
    cr_assert_eq(st.makespan_ps, 400000);
    cr_assert_float_eq(st.hbm_util, 1.0, 1e-12);
    rotor_sim_free(s);
}

/* Elk §5: on a mesh the controllers sit on the edges.  Every edge router's
 * off-grid link is an HBM port: 2 (W + H) = 16 on 4 x 4, in ring order north
 * (0..3 at (0,0)..(3,0)), east (4..7 at (3,0)..(3,3)), south (8..11 at
 * (3,3)..(0,3)), west (12..15 at (0,3)..(0,0)).  With 2 controllers,
 * controller 0 owns ports 0..7 (north and east), controller 1 ports 8..15
 * (south and west).  A load enters through its controller's port nearest the
 * receiver (ties: the first in ring order), one hop, then runs XY. */
static rotor_chip mesh_hbm(int64_t w, int64_t h, int64_t controllers, double hbm_gbps) {
    rotor_chip chip = mesh(w, h, 50);
    chip.hbm_bytes = (int64_t)1 << 30;
    chip.hbm_gbps = hbm_gbps;
    chip.hbm_controllers = controllers;
    return chip;
}

Test(sim, mesh_hbm_ports_are_the_edge_links_split_between_the_controllers) {
    rotor_chip chip = mesh_hbm(4, 4, 2, 88);
    rotor_sim *s = make(&chip);
    cr_assert_eq(rotor_sim_hbm_ports(s), 16);
    int64_t c0 = rotor_sim_hbm_node(s, 0, 0), c1 = rotor_sim_hbm_node(s, 0, 1);
    /* (1,2) from controller 0: north (1,0) and east (3,2) are both 2 hops
     * away; north comes first in ring order */
    assert_route(s, c0, 9, 3, "hbm c0.0, port c0.0 (1,-1)->(1,0), link c0 (1,0)->(1,1), link c0 (1,1)->(1,2)");
    /* from controller 1: south (1,3) and west (0,2) are 1 hop away: south */
    assert_route(s, c1, 9, 2, "hbm c0.1, port c0.1 (1,4)->(1,3), link c0 (1,3)->(1,2)");
    /* corner (0,0) has two ports: north (port 0, controller 0) and west (port 15, controller 1) */
    assert_route(s, c0, 0, 1, "hbm c0.0, port c0.0 (0,-1)->(0,0)");
    assert_route(s, c1, 0, 1, "hbm c0.1, port c0.1 (-1,0)->(0,0)");
    /* a store leaves through the port nearest the sender */
    assert_route(s, 9, c0, 3, "link c0 (1,2)->(1,1), link c0 (1,1)->(1,0), port c0.0 (1,0)->(1,-1), hbm c0.0");
    /* the port nearest each core over both controllers: the edge cores their
     * own (a corner: the first of its two), the inner four one hop in */
    const int64_t want_port[16] = {0, 1, 2, 3, 14, 1, 2, 5, 13, 10, 6, 6, 11, 10, 9, 7};
    const int64_t want_ctrl[16] = {0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0};
    for (int64_t c = 0; c < 16; c++) {
        int64_t k;
        cr_assert_eq(rotor_sim_hbm_port_nearest(s, c, &k), want_port[c], "core %lld", (long long)c);
        cr_assert_eq(k, want_ctrl[c], "core %lld", (long long)c);
    }
    cr_assert_eq(rotor_sim_hbm_port_nearest(s, 16, NULL), -1, "a controller is not a core");
    rotor_sim_free(s);
    /* all-to-all has no ports: a controller is a node on the exchange */
    rotor_chip a = a2a(16, 50);
    a.hbm_bytes = chip.hbm_bytes;
    a.hbm_gbps = 88;
    a.hbm_controllers = 2;
    s = make(&a);
    cr_assert_eq(rotor_sim_hbm_ports(s), 0);
    int64_t k = 7;
    cr_assert_eq(rotor_sim_hbm_port_nearest(s, 3, &k), -1);
    cr_assert_eq(k, -1);
    rotor_sim_free(s);
}

/* One preload piece set on the 4 x 4 mesh: 1,100 B from HBM to each of the 16
 * cores, each from the controller of its nearest port (as the schedule replay
 * deals them), all ready at 0, latency 50 ns.  Each controller has 88 GB/s:
 * 16 lanes of 5.5 GB/s, more than its 10 loads, so the pools never queue (a
 * load waiting for its port books its lane from the same later start).  The routes
 * from the ports are straight lines and share no link; only a port serving
 * two cores serializes them.  Edge cores: 1 hop, 250 ns.  Ports 1, 2, 6, 10
 * also serve an inner core, 2 hops, 300 ns, FIFO by task id; a port carries
 * a load's bytes for 200 ns from its start (pipelined links): (1,0) [0,250]
 * then (1,1) [200,500]; (2,0) then (2,1) likewise; (2,2) [0,300] then (3,2)
 * [200,450]; (1,2) then (1,3) likewise.  The set ends at 500 ns = 2 x 200 +
 * 2 x 50: 17,600 B in 500 ns, 35.2 GB/s of the 176 the controllers could
 * give and of the 16 x 5.5 = 88 GB/s the ports could take in. */
Test(sim, a_preload_piece_set_on_a_4x4_mesh_enters_through_the_nearest_edge_ports) {
    rotor_chip chip = mesh_hbm(4, 4, 2, 176);
    rotor_sim *s = make(&chip);
    cr_assert_eq(rotor_sim_hbm_lanes(s), 16);
    int64_t id[16];
    for (int64_t c = 0; c < 16; c++) {
        int64_t k;
        rotor_sim_hbm_port_nearest(s, c, &k);
        rotor_sim_transfer t = {.src = rotor_sim_hbm_node(s, 0, k), .dst = c, .bytes = B1100,
                                .category = ROTOR_SIM_HBM, .op = 0};
        cr_assert_eq(rotor_sim_add_transfer(s, &t, &id[c], NULL), ROTOR_OK);
    }
    rotor_sim_stats st = run(s);
    const int64_t start[16] = {0, 0, 0, 0, 0, 200000, 200000, 0, 0, 0, 0, 200000, 0, 200000, 0, 0};
    const int64_t end[16] = {250000, 250000, 250000, 250000, 250000, 500000, 500000, 250000,
                             250000, 300000, 300000, 450000, 250000, 450000, 250000, 250000};
    for (int64_t c = 0; c < 16; c++) assert_span(s, id[c], start[c], end[c]);
    cr_assert_eq(st.makespan_ps, 2 * STREAM + 2 * LAT);
    cr_assert_eq(st.hbm_bytes, 16 * B1100);
    cr_assert_eq(st.stall_ps, 200000 * 4, "only the second core of a shared port waits");
    rotor_sim_free(s);
}

/* For every mesh shape and controller count (more controllers than ports
 * too), a load from controller k to core c enters through a port of k's
 * segment of the ring at the least distance from c: its hops are 1 + that
 * distance, and the port is named after k.  The ring and the segments are
 * computed here from their definition (docs/simulator.md). */
Test(sim, mesh_loads_enter_through_the_nearest_port_of_their_controller) {
    const int64_t shapes[][2] = {{1, 1}, {1, 5}, {5, 1}, {2, 3}, {4, 4}, {7, 3}, {6, 9}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        int64_t w = shapes[sh][0], h = shapes[sh][1], np = 2 * (w + h);
        int64_t px[64], py[64];
        for (int64_t i = 0; i < np; i++) {
            if (i < w) px[i] = i, py[i] = 0;
            else if (i < w + h) px[i] = w - 1, py[i] = i - w;
            else if (i < 2 * w + h) px[i] = w - 1 - (i - w - h), py[i] = h - 1;
            else px[i] = 0, py[i] = h - 1 - (i - 2 * w - h);
        }
        for (int64_t n = 1; n <= np + 3; n++) {
            rotor_chip chip = mesh_hbm(w, h, n, 5.5 * (double)n);
            rotor_sim *s = make(&chip);
            cr_assert_eq(rotor_sim_hbm_ports(s), np);
            for (int64_t k = 0; k < n; k++) {
                int64_t lo = k * np / n, hi = (k + 1) * np / n;
                if (hi <= lo) hi = lo + 1;
                for (int64_t c = 0; c < w * h; c++) {
                    int64_t best = INT64_MAX;
                    for (int64_t p = lo; p < hi; p++) {
                        int64_t d = llabs(px[p] - c % w) + llabs(py[p] - c / w);
                        if (d < best) best = d;
                    }
                    int64_t res[64], nres, hops;
                    cr_assert_eq(rotor_sim_route(s, rotor_sim_hbm_node(s, 0, k), c, res, 64, &nres, &hops, NULL),
                                 ROTOR_OK);
                    cr_assert_eq(hops, 1 + best, "%lldx%lld, %lld controllers: controller %lld to core %lld",
                                 (long long)w, (long long)h, (long long)n, (long long)k, (long long)c);
                    char name[64], want[32];
                    rotor_sim_resource_name(s, res[1], name, sizeof name);
                    /* with more controllers than ports, neighbours share a port (named after the last) */
                    snprintf(want, sizeof want, n <= np ? "port c0.%lld " : "port c0.", (long long)k);
                    cr_assert(strncmp(name, want, strlen(want)) == 0, "%s: expected %s", name, want);
                }
            }
            rotor_sim_free(s);
        }
    }
}

/* ---- several chips (Elk §5: inter-chip bandwidth capped) ----------------- */

/* 2 chips of 4 cores, 11 GB/s between them: 2 lanes of 5.5 GB/s.  A crossing
 * is 2 hops (exchange, chip link): 100 ns + 200 ns.  Three flows from three
 * senders to three receivers: two at once, then the third, whose head
 * reaches the pool (at 50 ns from its start) as a lane frees at 250 ns. */
Test(sim, interchip_flows_share_a_pool_capped_at_its_total_bandwidth) {
    rotor_chip chip = a2a(4, 50);
    chip.chips = 2;
    chip.interchip_gbps = 11;
    rotor_sim *s = make(&chip);
    int64_t a = xfer(s, 0, 4, B1100, NULL, 0), b = xfer(s, 1, 5, B1100, NULL, 0),
            c = xfer(s, 2, 6, B1100, NULL, 0), d = xfer(s, 3, 0, B1100, NULL, 0);
    rotor_sim_stats st = run(s);
    assert_span(s, a, 0, 300000);
    assert_span(s, b, 0, 300000);
    assert_span(s, c, 200000, 500000);
    assert_span(s, d, 0, 250000); /* on-chip: no pool */
    cr_assert_eq(st.interchip_bytes, 3 * B1100);
    cr_assert_float_eq(st.interchip_util, 3 * 200000.0 / (2 * 500000.0), 1e-15); /* each lane holds the bytes' 200 ns */
    assert_route(s, 0, 4, 2, "out c0.0, inter-chip, in c1.0");
    rotor_sim_free(s);
}

Test(sim, mesh_interchip_route_runs_on_the_source_chip_then_crosses) {
    rotor_chip chip = mesh(2, 2, 50);
    chip.chips = 2;
    chip.interchip_gbps = 640;
    rotor_sim *s = make(&chip);
    /* chip 0 (0,0) -> chip 1 core 3 = (1,1) */
    assert_route(s, 0, 7, 3, "link c0 (0,0)->(1,0), link c0 (1,0)->(1,1), inter-chip");
    rotor_sim_free(s);
}

/* ---- dependencies and compute ------------------------------------------------ */

/* Core 0 computes 100 ns, sends 1,100 B to core 1 (250 ns), which computes
 * 300 ns: 0 - 100 - 350 - 650 ns. */
Test(sim, compute_then_transfer_then_compute_chains_exactly) {
    rotor_sim *s = a2a_sim(2, 50);
    int64_t c0 = compute(s, 0, 100000, NULL, 0);
    int64_t x = xfer(s, 0, 1, B1100, &c0, 1);
    int64_t c1 = compute(s, 1, 300000, &x, 1);
    rotor_sim_stats st = run(s);
    cr_assert_eq(st.makespan_ps, 650000);
    assert_span(s, c0, 0, 100000);
    assert_span(s, x, 100000, 350000);
    assert_span(s, c1, 350000, 650000);
    cr_assert_eq(st.busy_ps[ROTOR_SIM_COMPUTE], 400000);
    cr_assert_eq(st.busy_ps[ROTOR_SIM_COMM], 250000);
    cr_assert_eq(st.exposed_ps[ROTOR_SIM_COMPUTE], 400000);
    cr_assert_eq(st.exposed_ps[ROTOR_SIM_COMM], 250000);
    cr_assert_eq(st.idle_ps, 0);
    cr_assert_eq(st.stall_ps, 0);
    cr_assert_float_eq(st.compute_util, 400000.0 / (2 * 650000.0), 1e-15);
    rotor_sim_free(s);
}

Test(sim, compute_tasks_on_one_core_run_one_after_the_other) {
    rotor_sim *s = a2a_sim(2, 0);
    int64_t a = compute(s, 0, 70000, NULL, 0), b = compute(s, 0, 30000, NULL, 0);
    int64_t c = compute(s, 1, 30000, NULL, 0);
    rotor_sim_stats st = run(s);
    assert_span(s, a, 0, 70000);
    assert_span(s, b, 70000, 100000);
    assert_span(s, c, 0, 30000);
    cr_assert_eq(st.compute_wait_ps, 70000);
    cr_assert_eq(st.active_ps[ROTOR_SIM_COMPUTE], 100000);
    rotor_sim_free(s);
}

/* A zero-time compute task is a synchronisation point: it does not queue
 * behind the work already booked on its core. */
Test(sim, a_zero_time_compute_task_does_not_wait_for_its_core) {
    rotor_sim *s = a2a_sim(2, 0);
    int64_t a = compute(s, 0, 70000, NULL, 0), x = xfer(s, 1, 0, B1100, NULL, 0);
    int64_t join = compute(s, 0, 0, &x, 1), c = compute(s, 1, 1000, &join, 1);
    run(s);
    assert_span(s, a, 0, 70000);
    assert_span(s, join, STREAM, STREAM);
    assert_span(s, c, STREAM, STREAM + 1000);
    int64_t b = compute(s, 0, 0, NULL, 0); /* ready at 0 while core 0 runs a */
    run(s);
    assert_span(s, b, 0, 0);
    rotor_sim_free(s);
}

/* ---- multicast ------------------------------------------------------------------ */

static int64_t mcast(rotor_sim *s, int64_t src, const int64_t *dsts, int n, int64_t bytes, const int64_t *deps,
                     int ndeps) {
    rotor_sim_multicast m = {.src = src, .dsts = dsts, .ndsts = n, .bytes = bytes, .category = ROTOR_SIM_HBM,
                             .op = 0, .deps = deps, .ndeps = ndeps};
    int64_t id;
    rotor_error err;
    cr_assert_eq(rotor_sim_add_multicast(s, &m, &id, &err), ROTOR_OK, "%s", err.msg);
    return id;
}

/* One HBM read broadcast to 4 cores: one lane of the controller for
 * 1,100 B / 5.5 GB/s, the 4 in ports for the same interval; the bytes count
 * once.  A shift into a receiver queues behind it; a core outside does not. */
Test(sim, a_multicast_reads_hbm_once_and_holds_every_receivers_in_port) {
    rotor_chip chip = hbm_chip();
    rotor_sim *s = make(&chip);
    const int64_t to[4] = {0, 1, 2, 3};
    int64_t m = mcast(s, 8, to, 4, B1100, NULL, 0);
    int64_t into2 = xfer(s, 5, 2, B1100, NULL, 0), into6 = xfer(s, 5, 6, B1100, NULL, 0);
    rotor_sim_stats st = run(s);
    assert_span(s, m, 0, STREAM);
    assert_span(s, into2, STREAM, 2 * STREAM);
    assert_span(s, into6, 2 * STREAM, 3 * STREAM); /* core 5's out port serves it after into2 */
    cr_assert_eq(st.hbm_bytes, B1100);
    cr_assert_eq(st.bytes, 3 * B1100);
    cr_assert_eq(st.transfers, 3);
    cr_assert_eq(st.busy_ps[ROTOR_SIM_HBM], STREAM);
    /* link busy: 4 in ports (multicast) + 2 in + 2 out (the shifts) of 16 ports */
    cr_assert_float_eq(st.link_util_mean, (4.0 + 4.0) * STREAM / (16.0 * 3 * STREAM), 1e-12);
    cr_assert_float_eq(st.hbm_util, 1100.0 * 1000 / (44.0 * 3 * STREAM), 1e-12);
    rotor_sim_free(s);
}

/* A multicast holds each resource only while its bytes cross it, as a
 * transfer does: the controller from its start, every receiver's in port
 * one latency (50 ns) later.  Two preloads of 1,100 B into the same four
 * cores: the second leaves as the first's bytes free the in ports, at 200
 * ns, and ends at 450 ns.  Until 2026-12-04 a multicast held them all for
 * its whole time, latency included: the second ended at 500 ns, and a 20 ns
 * chip's preloads of 1 KiB pieces ran at under half their rate. */
Test(sim, a_multicast_pays_the_latency_once_as_a_transfer_does) {
    rotor_chip chip = hbm_chip();
    chip.link_latency_ns = 50;
    rotor_sim *s = make(&chip);
    const int64_t to[4] = {0, 1, 2, 3};
    int64_t a = mcast(s, 8, to, 4, B1100, NULL, 0), b = mcast(s, 8, to, 4, B1100, NULL, 0);
    run(s);
    assert_span(s, a, 0, 50000 + STREAM);
    assert_span(s, b, STREAM, 50000 + 2 * STREAM);
    rotor_sim_free(s);
}

/* 8 receivers of 1,100 B each over 4 lanes of 22 GB/s per controller: as 8
 * unicasts from one controller they take two rounds; as two multicasts of
 * four they take one (HBM reads 2,200 B, not 8,800). */
Test(sim, multicasts_on_disjoint_receivers_share_the_pool_like_transfers) {
    rotor_chip chip = hbm_chip();
    rotor_sim *s = make(&chip);
    const int64_t lo[4] = {0, 1, 2, 3}, hi[4] = {4, 5, 6, 7};
    int64_t a = mcast(s, 8, lo, 4, B1100, NULL, 0), b = mcast(s, 8, hi, 4, B1100, NULL, 0);
    rotor_sim_stats st = run(s);
    assert_span(s, a, 0, STREAM);
    assert_span(s, b, 0, STREAM);
    cr_assert_eq(st.hbm_bytes, 2 * B1100);
    rotor_sim_free(s);
}

/* With one receiver a multicast is exactly a transfer. */
Test(sim, a_multicast_to_one_core_is_a_transfer) {
    rotor_chip chip = a2a(4, 50);
    rotor_sim *s = make(&chip), *t = make(&chip);
    const int64_t to[1] = {3};
    mcast(s, 1, to, 1, B1100, NULL, 0);
    xfer(t, 1, 3, B1100, NULL, 0);
    rotor_sim_stats a = run(s), b = run(t);
    cr_assert_eq(a.makespan_ps, LAT + STREAM);
    cr_assert_eq(a.makespan_ps, b.makespan_ps);
    cr_assert_eq(a.bytes, b.bytes);
    cr_assert_float_eq(a.link_util_mean, b.link_util_mean, 1e-15);
    rotor_sim_free(s);
    rotor_sim_free(t);
}

/* On a 3 x 1 mesh, (0,0) -> {(1,0), (2,0)}: the union of the two XY routes is
 * the links (0,0)->(1,0) and (1,0)->(2,0), each held once, for the bytes'
 * 200 ns from the head's arrival (0 and 50 ns); the longest route has 2
 * hops.  A transfer (0,0) -> (1,0) waits for the shared link: 200 ns. */
Test(sim, a_mesh_multicast_holds_the_union_of_its_routes_once) {
    rotor_sim *s = mesh_sim(3, 1, 50);
    const int64_t to[2] = {1, 2};
    int64_t m = mcast(s, 0, to, 2, B1100, NULL, 0);
    int64_t x = xfer(s, 0, 1, B1100, NULL, 0), y = xfer(s, 2, 1, B1100, NULL, 0);
    rotor_sim_stats st = run(s);
    assert_span(s, m, 0, 2 * LAT + STREAM);
    assert_span(s, x, STREAM, LAT + 2 * STREAM);
    assert_span(s, y, 0, LAT + STREAM); /* (2,0)->(1,0) is not on the multicast's route */
    /* (0,0)->(1,0) carries the multicast's bytes and then x's, back to back,
     * 400 of the 450 ns */
    cr_assert_eq(st.makespan_ps, LAT + 2 * STREAM);
    cr_assert_float_eq(st.link_util_peak, 400.0 / 450.0, 1e-12);
    /* 4 directed links: 2 x 200 ns (multicast, each link once) + 200 (x) + 200 (y) */
    cr_assert_float_eq(st.link_util_mean, 4.0 * STREAM / (4.0 * 450000), 1e-12);
    char *json = rotor_sim_trace_json(s, NULL);
    cr_assert(json && strstr(json, "\"receivers\":2"));
    free(json);
    rotor_sim_free(s);
}

/* path: each receiver is reached through the one before.  On a 3 x 2 mesh,
 * (0,0) -> [(2,0), (2,1), (0,1)] holds (0,0)->(1,0)->(2,0), then (2,0)->(2,1),
 * then (2,1)->(1,1)->(0,1): 5 hops to the last receiver, 450 ns.  As a tree
 * the same receivers take (0,0)->(0,1) directly (3 hops at most, 350 ns).
 * So a shift (0,0)->(0,1) runs beside the path and waits for the tree's
 * bytes on its first link (200 ns), and a shift (1,1)->(0,1) does the
 * opposite: the path's head reaches (1,1)->(0,1) after 4 hops, 200 ns, and
 * its bytes hold it until 400 ns. */
Test(sim, a_path_multicast_reaches_each_receiver_through_the_one_before) {
    rotor_chip chip = mesh(3, 2, 50);
    const int64_t to[3] = {2, 5, 3};
    for (int path = 0; path < 2; path++) {
        rotor_sim *s = make(&chip);
        rotor_sim_multicast mc = {.src = 0, .dsts = to, .ndsts = 3, .bytes = B1100, .path = path,
                                  .category = ROTOR_SIM_HBM, .op = 0};
        int64_t m;
        rotor_error err;
        cr_assert_eq(rotor_sim_add_multicast(s, &mc, &m, &err), ROTOR_OK, "%s", err.msg);
        int64_t down = xfer(s, 0, 3, B1100, NULL, 0), west = xfer(s, 4, 3, B1100, NULL, 0);
        run(s);
        int64_t end = (path ? 5 : 3) * LAT + STREAM, down0 = path ? 0 : STREAM, west0 = path ? 4 * LAT + STREAM : 0;
        assert_span(s, m, 0, end);
        assert_span(s, down, down0, down0 + LAT + STREAM);
        assert_span(s, west, west0, west0 + LAT + STREAM);
        rotor_sim_free(s);
    }
}

/* A multicast from a controller is one tree entering through ONE port, the
 * one nearest its first receiver: controller 1 to row 1 {(0,1) .. (3,1)}
 * enters at west (0,1) and runs east along the row: 1 + 3 hops, 400 ns.  A
 * load through that port waits for its bytes there (200 ns); one through
 * another port of the same controller, west (0,2), does not. */
Test(sim, a_mesh_multicast_from_hbm_enters_through_the_port_nearest_its_first_receiver) {
    rotor_chip chip = mesh_hbm(4, 4, 2, 88);
    rotor_sim *s = make(&chip);
    int64_t c1 = rotor_sim_hbm_node(s, 0, 1);
    const int64_t row1[4] = {4, 5, 6, 7};
    int64_t m = mcast(s, c1, row1, 4, B1100, NULL, 0);
    int64_t same = xfer(s, c1, 4, B1100, NULL, 0), other = xfer(s, c1, 8, B1100, NULL, 0);
    run(s);
    assert_span(s, m, 0, 4 * LAT + STREAM);
    assert_span(s, same, STREAM, LAT + 2 * STREAM);
    assert_span(s, other, 0, LAT + STREAM);
    rotor_sim_free(s);
}

/* pause_receivers (SRAM blocking): a 1,100 B multicast to cores 0 and 1
 * starting at 0 books both cores for 200 ns.  Core 0 was idle: a compute
 * task ready at 0 runs after the pause.  Core 1 had already booked 70 ns of
 * compute from 0: its pause follows that task, and the next task follows the
 * pause.  A single receiver pauses the same way. */
Test(sim, a_pausing_multicast_books_each_receivers_core_fifo) {
    rotor_chip chip = hbm_chip();
    rotor_sim *s = make(&chip);
    int64_t busy = compute(s, 1, 70000, NULL, 0);
    const int64_t to[2] = {0, 1}, one[1] = {2};
    rotor_sim_multicast m = {.src = 8, .dsts = to, .ndsts = 2, .bytes = B1100, .category = ROTOR_SIM_HBM, .op = 0,
                             .pause_receivers = true};
    int64_t mc, solo;
    rotor_error err;
    cr_assert_eq(rotor_sim_add_multicast(s, &m, &mc, &err), ROTOR_OK, "%s", err.msg);
    m.dsts = one;
    m.ndsts = 1;
    cr_assert_eq(rotor_sim_add_multicast(s, &m, &solo, &err), ROTOR_OK, "%s", err.msg);
    int64_t c0 = compute(s, 0, 1000, &mc, 0), c1 = compute(s, 1, 1000, &busy, 1), c2 = compute(s, 2, 1000, &mc, 1);
    rotor_sim_stats st = run(s);
    assert_span(s, mc, 0, STREAM);
    assert_span(s, solo, 0, STREAM);
    assert_span(s, c0, STREAM, STREAM + 1000);          /* ready at 0, behind the pause */
    assert_span(s, c1, 70000 + STREAM, 71000 + STREAM); /* the pause follows the 70 ns task */
    assert_span(s, c2, STREAM, STREAM + 1000);          /* ready when the multicast ends, the pause too */
    cr_assert_eq(st.pause_ps, 3 * STREAM);
    cr_assert_eq(st.hbm_bytes, 2 * B1100);
    rotor_sim_free(s);
}

Test(sim, a_bad_multicast_is_refused_naming_the_receiver) {
    rotor_chip chip = hbm_chip();
    rotor_sim *s = make(&chip);
    rotor_error err;
    static const int64_t twice[3] = {1, 2, 1}, self[2] = {2, 3}, hbm[2] = {0, 9}, far[1] = {12};
    static const struct {
        rotor_sim_multicast m;
        const char *msg;
    } bad[] = {
        {{.src = 8, .dsts = twice, .ndsts = 3, .bytes = 10, .op = -1}, "sim: multicast 0: dsts[2]: node 1 is named twice"},
        {{.src = 3, .dsts = self, .ndsts = 2, .bytes = 10, .op = -1}, "dsts[1]: src and dst are both node 3"},
        {{.src = 8, .dsts = hbm, .ndsts = 2, .bytes = 10, .op = -1}, "dsts[1]: src 8 and dst 9 are both HBM controllers"},
        {{.src = 8, .dsts = far, .ndsts = 1, .bytes = 10, .op = -1}, "dsts[0]: dst: node 12 does not exist"},
        {{.src = 8, .dsts = far, .ndsts = 0, .bytes = 10, .op = -1}, "ndsts: expected at least 1 receiver, got 0"},
        {{.src = 8, .dsts = self, .ndsts = 2, .bytes = -1, .op = -1}, "bytes: expected 0..2^53, got -1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(rotor_sim_add_multicast(s, &bad[i].m, NULL, &err), ROTOR_ERR_INPUT, "%s", bad[i].msg);
        assert_msg_has(err, bad[i].msg);
    }
    cr_assert_eq(rotor_sim_task_count(s), 0);
    rotor_sim_free(s);
}

/* Compute hides the communication that overlaps it: exposed time splits the
 * makespan by priority, active time counts each category on its own. */
Test(sim, the_breakdown_splits_the_makespan_by_priority) {
    rotor_sim *s = a2a_sim(3, 50);
    compute(s, 2, 100000, NULL, 0);      /* 0 - 100 ns */
    xfer(s, 0, 1, B1100, NULL, 0);       /* 0 - 250 ns */
    rotor_sim_transfer setup = {.src = 1, .dst = 0, .bytes = 2 * B1100, .category = ROTOR_SIM_SETUP, .op = 1};
    cr_assert_eq(rotor_sim_add_transfer(s, &setup, NULL, NULL), ROTOR_OK); /* 0 - 450 ns */
    rotor_sim_stats st = run(s);
    cr_assert_eq(st.makespan_ps, 450000);
    cr_assert_eq(st.exposed_ps[ROTOR_SIM_COMPUTE], 100000);
    cr_assert_eq(st.exposed_ps[ROTOR_SIM_COMM], 150000);
    cr_assert_eq(st.exposed_ps[ROTOR_SIM_SETUP], 200000);
    cr_assert_eq(st.active_ps[ROTOR_SIM_SETUP], 450000);
    cr_assert_eq(st.busy_ps[ROTOR_SIM_SETUP], 450000);
    int64_t a, b;
    rotor_sim_op_span(s, 1, &a, &b);
    cr_assert_eq(a, 0);
    cr_assert_eq(b, 450000);
    rotor_sim_op_span(s, 0, &a, &b);
    cr_assert_eq(b, 250000);
    rotor_sim_op_span(s, 7, &a, &b);
    cr_assert_eq(a, -1);
    rotor_sim_free(s);
}

Test(sim, forward_dependencies_added_later_are_respected) {
    rotor_sim *s = a2a_sim(2, 0);
    int64_t a = compute(s, 0, 10000, NULL, 0), b = compute(s, 1, 20000, NULL, 0);
    rotor_error err;
    cr_assert_eq(rotor_sim_add_dep(s, a, b, &err), ROTOR_OK, "%s", err.msg);
    run(s);
    assert_span(s, b, 0, 20000);
    assert_span(s, a, 20000, 30000);
    rotor_sim_free(s);
}

Test(sim, an_empty_graph_runs_in_zero_time) {
    rotor_chip chip = mk2();
    rotor_sim *s = make(&chip);
    rotor_sim_stats st = run(s);
    cr_assert_eq(st.makespan_ps, 0);
    cr_assert_eq(st.events, 0);
    cr_assert_eq(st.link_util_mean, 0);
    rotor_sim_free(s);
}

/* ---- determinism ------------------------------------------------------------------ */

/* A random graph on a 2-chip 4 x 4 mesh with HBM: compute, transfers between
 * cores and HBM loads, each depending on up to 3 earlier tasks. */
static rotor_sim *random_graph(uint64_t seed, int ntasks) {
    rotor_chip chip = mesh(4, 4, 20);
    chip.chips = 2;
    chip.interchip_gbps = 11;
    chip.hbm_bytes = (int64_t)1 << 30;
    chip.hbm_gbps = 30;
    chip.hbm_controllers = 2;
    rotor_sim *s = make(&chip);
    cr_assert_eq(rotor_sim_set_op_name(s, 0, "MatMul \"qkv\"", NULL), ROTOR_OK);
    uint64_t x = seed;
    for (int i = 0; i < ntasks; i++) {
        int64_t deps[3];
        int nd = i ? (int)(next_rand(&x) % 4) : 0;
        for (int d = 0; d < nd; d++) deps[d] = (int64_t)(next_rand(&x) % (uint64_t)i);
        int kind = (int)(next_rand(&x) % 3);
        int64_t a = (int64_t)(next_rand(&x) % 32), b = (int64_t)(next_rand(&x) % 31);
        if (b >= a) b++;
        int op = (int)(next_rand(&x) % 3);
        if (kind == 0) {
            rotor_sim_compute c = {.core = a, .duration_ps = (int64_t)(next_rand(&x) % 100000), .flops = 1000,
                                   .category = ROTOR_SIM_COMPUTE, .op = op, .deps = deps, .ndeps = nd};
            cr_assert_eq(rotor_sim_add_compute(s, &c, NULL, NULL), ROTOR_OK);
        } else {
            rotor_sim_transfer t = {.src = kind == 2 ? 32 + a % 4 : a, .dst = b,
                                    .bytes = (int64_t)(next_rand(&x) % 5000),
                                    .category = kind == 2 ? ROTOR_SIM_HBM : ROTOR_SIM_COMM, .op = op,
                                    .deps = deps, .ndeps = nd};
            cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, NULL), ROTOR_OK);
        }
    }
    return s;
}

Test(sim, repeated_runs_and_rebuilt_graphs_give_identical_results) {
    const uint64_t seed = 20261123;
    rotor_sim *s = random_graph(seed, 3000), *t = random_graph(seed, 3000);
    rotor_sim_stats a = run(s), b = run(s), c = run(t);
    cr_assert(memcmp(&a, &b, sizeof a) == 0, "seed %llu: a second run differs", (unsigned long long)seed);
    cr_assert(memcmp(&a, &c, sizeof a) == 0, "seed %llu: a rebuilt graph differs", (unsigned long long)seed);
    char *ja = rotor_sim_trace_json(s, NULL), *jc = rotor_sim_trace_json(t, NULL);
    cr_assert(ja && jc);
    cr_assert_str_eq(ja, jc);
    free(ja);
    free(jc);
    cr_assert_gt(a.stall_ps, 0, "the random graph is contended");
    cr_assert_gt(a.interchip_bytes, 0);
    rotor_sim_free(s);
    rotor_sim_free(t);
}

/* Invariants on many random graphs: the breakdown sums to the makespan, each
 * task starts no earlier than it is ready and after each of its deps ends,
 * three events per task. */
Test(sim, breakdown_sums_to_the_makespan_and_tasks_respect_dependencies) {
    for (uint64_t seed = 1; seed <= 20; seed++) {
        rotor_sim *s = random_graph(seed, 400);
        rotor_sim_stats st = run(s);
        int64_t sum = st.idle_ps;
        for (int c = 0; c < ROTOR_SIM_NCATS; c++) sum += st.exposed_ps[c];
        cr_assert_eq(sum, st.makespan_ps, "seed %llu", (unsigned long long)seed);
        cr_assert_eq(st.events, 3 * st.tasks, "seed %llu", (unsigned long long)seed);
        cr_assert_leq(st.link_util_peak, 1.0, "seed %llu", (unsigned long long)seed);
        cr_assert_leq(st.hbm_util, 1.0 + 1e-12, "seed %llu", (unsigned long long)seed);
        cr_assert_leq(st.interchip_util, 1.0 + 1e-12, "seed %llu", (unsigned long long)seed);
        for (int64_t i = 0; i < st.tasks; i++) {
            rotor_sim_timing t = timing(s, i);
            cr_assert_geq(t.start_ps, t.ready_ps, "seed %llu task %lld", (unsigned long long)seed, (long long)i);
            cr_assert_leq(t.end_ps, st.makespan_ps);
        }
        rotor_sim_free(s);
    }
}

/* ---- bad input -------------------------------------------------------------------- */

Test(sim, an_unknown_node_is_refused_with_the_field_and_the_range) {
    rotor_sim *s = a2a_sim(8, 0);
    rotor_sim_transfer t = {.src = 0, .dst = 99, .bytes = 10, .op = -1};
    rotor_error err;
    cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: transfer 0: dst: node 99 does not exist (cores 0..7, no HBM controllers)");
    t.dst = 3;
    t.src = -1;
    cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "src: node -1 does not exist");
    rotor_sim_compute c = {.core = 8, .duration_ps = 1, .op = -1};
    cr_assert_eq(rotor_sim_add_compute(s, &c, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: compute task 0: core: node 8 is not a core (cores 0..7)");
    t.src = t.dst = 3;
    cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "src and dst are both node 3");
    rotor_sim_free(s);
}

Test(sim, negative_bytes_and_durations_are_refused) {
    rotor_sim *s = a2a_sim(8, 0);
    rotor_sim_transfer t = {.src = 0, .dst = 1, .bytes = -5, .op = -1};
    rotor_error err;
    cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: transfer 0: bytes: expected 0..2^53, got -5");
    rotor_sim_compute c = {.core = 0, .duration_ps = -1, .op = -1};
    cr_assert_eq(rotor_sim_add_compute(s, &c, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "duration_ps: expected 0..2^50, got -1");
    c.duration_ps = 1;
    c.category = (rotor_sim_category)9;
    cr_assert_eq(rotor_sim_add_compute(s, &c, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "category: expected 0..3, got 9");
    rotor_sim_free(s);
}

Test(sim, transfers_between_two_hbm_controllers_are_refused) {
    rotor_chip chip = hbm_chip();
    rotor_sim *s = make(&chip);
    rotor_sim_transfer t = {.src = 8, .dst = 9, .bytes = 1, .op = -1};
    rotor_error err;
    cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "src 8 and dst 9 are both HBM controllers");
    t.dst = 10;
    cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "dst: node 10 does not exist (cores 0..7, HBM controllers 8..9)");
    rotor_sim_free(s);
}

Test(sim, a_dependency_on_a_task_that_does_not_exist_is_refused) {
    rotor_sim *s = a2a_sim(2, 0);
    int64_t dep = 7;
    rotor_sim_compute c = {.core = 1, .duration_ps = 1, .op = -1, .deps = &dep, .ndeps = 1};
    rotor_error err;
    cr_assert_eq(rotor_sim_add_compute(s, &c, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: compute task 0: deps[0]: task 7 does not exist (no tasks yet)");
    compute(s, 0, 1, NULL, 0);
    cr_assert_eq(rotor_sim_add_compute(s, &c, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: compute task 1: deps[0]: task 7 does not exist (tasks so far: 0..0)");
    cr_assert_eq(rotor_sim_add_dep(s, 0, 5, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "task 5 does not exist");
    rotor_sim_free(s);
}

Test(sim, a_dependency_cycle_is_reported_with_its_tasks) {
    rotor_sim *s = a2a_sim(2, 0);
    int64_t a = compute(s, 0, 1, NULL, 0), b = compute(s, 1, 1, &a, 1), c = compute(s, 0, 1, &b, 1);
    compute(s, 1, 1, &c, 1); /* waits behind the cycle, is not part of it */
    rotor_error err;
    cr_assert_eq(rotor_sim_add_dep(s, a, c, &err), ROTOR_OK);
    rotor_sim_stats st;
    cr_assert_eq(rotor_sim_run(s, &st, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: dependency cycle: task 0 waits for task 2 waits for task 1 waits for task 0 "
                        "(4 tasks never became ready)");
    rotor_sim_timing t;
    cr_assert_eq(rotor_sim_task_timing(s, 0, &t, &err), ROTOR_ERR_INPUT, "no timing after a failed run");
    cr_assert_null(rotor_sim_trace_json(s, &err));
    rotor_sim_free(s);
}

Test(sim, a_task_depending_on_itself_is_a_cycle) {
    rotor_sim *s = a2a_sim(2, 0);
    compute(s, 0, 1, NULL, 0);
    cr_assert_eq(rotor_sim_add_dep(s, 0, 0, NULL), ROTOR_OK);
    rotor_sim_stats st;
    rotor_error err;
    cr_assert_eq(rotor_sim_run(s, &st, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "dependency cycle: task 0 waits for task 0");
    rotor_sim_free(s);
}

Test(sim, simulated_time_past_2_to_the_50_ps_is_an_error_not_an_overflow) {
    rotor_sim *s = a2a_sim(2, 0);
    compute(s, 0, (int64_t)1 << 50, NULL, 0);
    compute(s, 0, 1, NULL, 0);
    rotor_sim_stats st;
    rotor_error err;
    cr_assert_eq(rotor_sim_run(s, &st, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "2^50 ps");
    rotor_sim_transfer t = {.src = 0, .dst = 1, .bytes = (int64_t)1 << 53, .op = -1};
    cr_assert_eq(rotor_sim_add_transfer(s, &t, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "take longer than 2^50 ps");
    rotor_sim_free(s);
}

Test(sim, an_invalid_chip_is_refused) {
    rotor_chip chip = mesh(3, 3, 0);
    chip.mesh_width = 4; /* 4 x 3 != 9 cores */
    rotor_sim *s;
    rotor_error err;
    cr_assert_eq(rotor_sim_create(&chip, &s, &err), ROTOR_ERR_INPUT);
    cr_assert_null(s);
    assert_msg_has(err, "sim: ");
    assert_msg_has(err, "mesh_width");
}

/* ---- trace -------------------------------------------------------------------- */

static const cJSON *find_task(const cJSON *events, int64_t id) {
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events) {
        const cJSON *args = cJSON_GetObjectItem(ev, "args"), *task = cJSON_GetObjectItem(args, "task");
        if (cJSON_IsNumber(task) && task->valuedouble == (double)id) return ev;
    }
    return NULL;
}

static bool has_meta(const cJSON *events, const char *what, int pid, const char *name) {
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events) {
        if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "M") != 0) continue;
        if (strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, what) != 0) continue;
        if (cJSON_GetObjectItem(ev, "pid")->valueint != pid) continue;
        if (strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "name")->valuestring, name) == 0)
            return true;
    }
    return false;
}

Test(sim, trace_json_parses_and_holds_one_complete_event_per_task) {
    rotor_chip chip = hbm_chip();
    chip.link_latency_ns = 50;
    rotor_sim *s = make(&chip);
    rotor_error err;
    cr_assert_eq(rotor_sim_set_op_name(s, 0, "MatMul qkv", &err), ROTOR_OK);
    cr_assert_eq(rotor_sim_set_op_name(s, 2, "Softmax", &err), ROTOR_OK);
    int64_t c0 = compute(s, 0, 100000, NULL, 0);                   /* task 0, op 0 */
    int64_t x = xfer(s, 0, 1, B1100, &c0, 1);                       /* task 1 */
    rotor_sim_transfer load = {.src = 9, .dst = 70 % 8, .bytes = B1100, .category = ROTOR_SIM_HBM, .op = 2};
    cr_assert_eq(rotor_sim_add_transfer(s, &load, NULL, &err), ROTOR_OK); /* task 2 */
    rotor_sim_compute v = {.core = 5, .duration_ps = 5000, .category = ROTOR_SIM_COMPUTE, .op = -1};
    cr_assert_eq(rotor_sim_add_compute(s, &v, NULL, &err), ROTOR_OK); /* task 3 */
    cr_assert_null(rotor_sim_trace_json(s, &err), "no trace before a run");
    assert_msg_has(err, "before a successful run");
    run(s);
    char *text = rotor_sim_trace_json(s, &err);
    cr_assert_not_null(text, "%s", err.msg);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "the trace is not valid JSON");
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    cr_assert(cJSON_IsArray(events));
    int complete = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events) complete += strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "X") == 0;
    cr_assert_eq(complete, 4);

    /* the transfer: 100 ns to 350 ns, on the exchange process, sender's track */
    const cJSON *e = find_task(events, x);
    cr_assert_not_null(e);
    cr_assert_str_eq(cJSON_GetObjectItem(e, "name")->valuestring, "MatMul qkv");
    cr_assert_str_eq(cJSON_GetObjectItem(e, "cat")->valuestring, "communication");
    cr_assert_float_eq(cJSON_GetObjectItem(e, "ts")->valuedouble, 0.1, 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItem(e, "dur")->valuedouble, 0.25, 1e-12);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "bytes")->valueint, B1100);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "operator")->valuestring, "MatMul qkv");
    /* 8 cores: one core group (pid 1); link classes follow at pid 2 + class */
    cr_assert_eq(cJSON_GetObjectItem(e, "pid")->valueint, 2);
    cr_assert_eq(cJSON_GetObjectItem(e, "tid")->valueint, 0);
    cr_assert(has_meta(events, "process_name", 2, "exchange (out ports)"));
    cr_assert(has_meta(events, "thread_name", 2, "out c0.0"));
    cr_assert(has_meta(events, "process_name", 1, "cores 0-7"));
    cr_assert(has_meta(events, "thread_name", 1, "core c0.5"));

    /* the HBM load on controller c0.1's first lane */
    e = find_task(events, 2);
    cr_assert_str_eq(cJSON_GetObjectItem(e, "name")->valuestring, "Softmax");
    cr_assert_str_eq(cJSON_GetObjectItem(e, "cat")->valuestring, "hbm");
    cr_assert_eq(cJSON_GetObjectItem(e, "pid")->valueint, 2 + 3);
    cr_assert(has_meta(events, "process_name", 5, "HBM controllers"));
    cr_assert(has_meta(events, "thread_name", 5, "hbm c0.1 lane 0"));

    /* an unnamed task is named by its category */
    e = find_task(events, 3);
    cr_assert_str_eq(cJSON_GetObjectItem(e, "name")->valuestring, "compute");
    cr_assert_eq(cJSON_GetObjectItem(e, "tid")->valueint, 5);

    const cJSON *other = cJSON_GetObjectItem(root, "otherData");
    cr_assert_str_eq(cJSON_GetObjectItem(other, "format")->valuestring, "rotor-sim-trace");
    cr_assert_eq(cJSON_GetObjectItem(other, "version")->valueint, 1);
    cJSON_Delete(root);
    free(text);
    rotor_sim_free(s);
}

/* Mesh transfers sit on the track of their first link, inter-chip ones on
 * the inter-chip lanes; a random graph's trace parses and has every task. */
Test(sim, trace_of_a_mesh_multichip_graph_has_every_task_and_its_tracks) {
    rotor_sim *s = random_graph(7, 500);
    run(s);
    char *text = rotor_sim_trace_json(s, NULL);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents"), *ev;
    int complete = 0;
    bool mesh_track = false, ic_track = false;
    cJSON_ArrayForEach(ev, events) {
        complete += strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "X") == 0;
        const char *name = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "name")
                               ? cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "name")->valuestring
                               : "";
        mesh_track |= strncmp(name, "link c", 6) == 0;
        ic_track |= strncmp(name, "inter-chip lane", 15) == 0;
    }
    cr_assert_eq(complete, 500);
    cr_assert(mesh_track && ic_track);
    cr_assert(strstr(text, "MatMul \\\"qkv\\\"") != NULL, "operator names are escaped");
    cJSON_Delete(root);
    free(text);
    rotor_sim_free(s);
}

/* The trace of g through filter f, parsed; *sum says what was written. */
static cJSON *filtered_trace(const rotor_sim *s, const rotor_sim_trace_filter *f, rotor_sim_trace_summary *sum) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rotor_error err;
    cr_assert_eq(rotor_sim_trace_write(s, f, out, sum, &err), ROTOR_OK, "%s", err.msg);
    fclose(out);
    cr_assert_eq((size_t)sum->bytes, len, "the summary counts the bytes written");
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "the trace is not valid JSON");
    free(text);
    return root;
}

static int count_ph(const cJSON *root, const char *ph) {
    int n = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "traceEvents")) n += !strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, ph);
    return n;
}

/* The counter sample of track `name` at ts (us), -1 if none. */
static double counter_at(const cJSON *root, const char *name, double ts) {
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "traceEvents")) {
        if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "C") || strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, name) ||
            fabs(cJSON_GetObjectItem(ev, "ts")->valuedouble - ts) > 1e-9)
            continue;
        return cJSON_GetArrayItem(cJSON_GetObjectItem(ev, "args"), 0)->valuedouble;
    }
    return -1;
}

/* Filters keep what they name (operators, a window, cores), otherData says
 * what was left out, and the counters integrate the transfers exactly:
 * core 0 computes 0-100 ns, sends 1,100 B to core 1 (100-300 ns, its out
 * and in ports), core 1 computes 300-700 ns; an HBM load of 1,100 B to core
 * 2 runs from 0 ns. */
Test(sim, a_filtered_trace_keeps_what_it_names_and_counters_integrate_the_transfers) {
    rotor_chip chip = hbm_chip();
    rotor_sim *s = make(&chip);
    rotor_error err;
    cr_assert_eq(rotor_sim_set_op_name(s, 0, "l0.qkv", &err), ROTOR_OK);
    cr_assert_eq(rotor_sim_set_op_name(s, 1, "l0.softmax", &err), ROTOR_OK);
    cr_assert_eq(rotor_sim_set_op_name(s, 2, "l1.qkv", &err), ROTOR_OK);
    int64_t c0 = compute(s, 0, 100000, NULL, 0);
    int64_t x = xfer(s, 0, 1, B1100, &c0, 1);
    rotor_sim_compute c1 = {.core = 1, .duration_ps = 400000, .category = ROTOR_SIM_COMPUTE, .op = 1, .deps = &x,
                            .ndeps = 1};
    cr_assert_eq(rotor_sim_add_compute(s, &c1, NULL, &err), ROTOR_OK);
    rotor_sim_transfer load = {.src = 8, .dst = 2, .bytes = B1100, .category = ROTOR_SIM_HBM, .op = 2};
    int64_t h;
    cr_assert_eq(rotor_sim_add_transfer(s, &load, &h, &err), ROTOR_OK);
    rotor_sim_stats st = run(s);
    cr_assert_eq(st.makespan_ps, 700000);
    rotor_sim_timing ht = timing(s, h);

    rotor_sim_trace_summary sum;
    /* unfiltered: every task, counters in 7 buckets of 100 ns */
    rotor_sim_trace_filter all = {.counter_buckets = 7};
    cJSON *root = filtered_trace(s, &all, &sum);
    cr_assert_eq(sum.tasks, 4);
    cr_assert_eq(sum.kept, 4);
    cr_assert_eq(count_ph(root, "X"), 4);
    cr_assert_eq(count_ph(root, "C"), 3 * 7);
    cr_assert_float_eq(counter_at(root, "transfers in flight", 0.2), 1.0 + (ht.end_ps > 200000), 1e-9);
    cr_assert_float_eq(counter_at(root, "links busy", 0.2), 2.0 + (ht.end_ps > 200000), 1e-9,
                       "the out and in ports, and the HBM port if the load still runs");
    cr_assert_float_eq(counter_at(root, "transfers in flight", 0.4), 0.0, 1e-9);
    /* the HBM counter moves the load's bytes: sum of GB/s * 100 ns = 1,100 B */
    double bytes = 0;
    for (int b = 0; b < 7; b++) bytes += counter_at(root, "HBM GB/s", 0.1 * b) * 100;
    cr_assert_float_eq(bytes, (double)B1100, 1e-6);
    const cJSON *other = cJSON_GetObjectItem(root, "otherData");
    cr_assert_eq(cJSON_GetObjectItem(other, "tasks")->valueint, 4);
    cr_assert_str_eq(cJSON_GetObjectItem(other, "topology")->valuestring, "all-to-all");
    cr_assert_float_eq(cJSON_GetObjectItem(other, "makespan_us")->valuedouble, 0.7, 1e-12);
    cr_assert_null(cJSON_GetObjectItem(other, "filter"));
    cr_assert_str_eq(cJSON_GetObjectItem(root, "displayTimeUnit")->valuestring, "ns");
    cJSON_Delete(root);

    /* operators by name and by prefix */
    const char *l0[] = {"l0.*"};
    rotor_sim_trace_filter by_op = {.ops = l0, .nops = 1};
    root = filtered_trace(s, &by_op, &sum);
    cr_assert_eq(sum.kept, 3, "l0.qkv's compute and transfer, l0.softmax's compute");
    cr_assert_null(find_task(cJSON_GetObjectItem(root, "traceEvents"), h));
    other = cJSON_GetObjectItem(root, "otherData");
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(other, "filter"), "left_out")->valuestring,
                     "1 of 4 tasks are not in this trace");
    cJSON_Delete(root);

    /* a window: tasks overlapping 350-400 ns (core 1's compute, and the load if it runs then) */
    rotor_sim_trace_filter win = {.from_ps = 350000, .to_ps = 400000, .counter_buckets = 1};
    root = filtered_trace(s, &win, &sum);
    cr_assert_eq(sum.kept, 1 + (ht.end_ps > 350000));
    cr_assert_eq(count_ph(root, "C"), 3, "one bucket: the window");
    cr_assert_float_eq(counter_at(root, "transfers in flight", 0.35), 0.0 + (ht.end_ps > 350000), 1e-9);
    cJSON_Delete(root);

    /* cores: core 2 has only the load into it */
    int64_t two[] = {2};
    rotor_sim_trace_filter core = {.cores = two, .ncores = 1};
    root = filtered_trace(s, &core, &sum);
    cr_assert_eq(sum.kept, 1);
    cr_assert_not_null(find_task(cJSON_GetObjectItem(root, "traceEvents"), h));
    cJSON_Delete(root);

    /* what a filter cannot name */
    FILE *out = fopen("/dev/null", "w");
    const char *none[] = {"l2.qkv"};
    rotor_sim_trace_filter bad = {.ops = none, .nops = 1};
    cr_assert_eq(rotor_sim_trace_write(s, &bad, out, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: trace operators: no operator is named 'l2.qkv'");
    int64_t nine[] = {9};
    bad = (rotor_sim_trace_filter){.cores = nine, .ncores = 1};
    cr_assert_eq(rotor_sim_trace_write(s, &bad, out, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: trace cores: core 9 does not exist (cores 0..7)");
    bad = (rotor_sim_trace_filter){.from_ps = 5, .to_ps = 5};
    cr_assert_eq(rotor_sim_trace_write(s, &bad, out, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "trace window: 5:5 ps is empty");
    fclose(out);
    rotor_sim_free(s);
}

/* ---- streaming (docs/simulator.md, "Streaming") ----------------------------- */

static void assert_same_timing(const rotor_sim *s, const rotor_sim *whole, int64_t id) {
    rotor_sim_timing t = timing(s, id), w = timing(whole, id);
    cr_assert(t.ready_ps == w.ready_ps && t.start_ps == w.start_ps && t.end_ps == w.end_ps,
              "task %lld: streamed %lld/%lld/%lld, whole %lld/%lld/%lld", (long long)id, (long long)t.ready_ps,
              (long long)t.start_ps, (long long)t.end_ps, (long long)w.ready_ps, (long long)w.start_ps,
              (long long)w.end_ps);
}

/* A random graph in overlapping windows.  Every task of window w + 1 waits
 * for the gate, task `per_window / 2` of window w, and for random tasks of
 * windows w and w + 1, so windows run into each other.  Adds it to s; with
 * stream, advances to each gate before adding the next window (the earliest
 * instant a task of it can become ready), checks the finished tasks against
 * `whole` and retires them while they form a prefix. */
static void random_windows(rotor_sim *s, const rotor_sim *whole, bool stream, uint64_t seed, int64_t cores,
                           int windows, int per_window) {
    uint64_t x = seed;
    rotor_error err;
    int64_t gate = -1, n = (int64_t)windows * per_window, checked = 0;
    int64_t *ids = malloc(sizeof *ids * (size_t)n);
    for (int w = 0; w < windows; w++) {
        for (int i = 0; i < per_window; i++) {
            int64_t deps[3], self = (int64_t)w * per_window + i, lo = w > 0 ? (int64_t)(w - 1) * per_window : 0;
            int nd = 0;
            if (gate >= 0) deps[nd++] = gate;
            for (int k = 0; k < 2 && self > lo; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                if (x % 3 == 0) continue;
                deps[nd++] = ids[lo + (int64_t)((x >> 8) % (uint64_t)(self - lo))];
            }
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int64_t a = (int64_t)(x % (uint64_t)cores), b = (int64_t)((x >> 20) % (uint64_t)cores);
            if (x % 5 < 2 || a == b) {
                rotor_sim_compute c = {.core = a, .duration_ps = (int64_t)((x >> 32) % 50000), .op = w,
                                       .category = ROTOR_SIM_COMPUTE, .deps = deps, .ndeps = nd};
                cr_assert_eq(rotor_sim_add_compute(s, &c, &ids[self], &err), ROTOR_OK, "%s", err.msg);
            } else {
                rotor_sim_transfer t = {.src = a, .dst = b, .bytes = (int64_t)((x >> 32) % 5000), .op = w,
                                        .category = ROTOR_SIM_COMM, .deps = deps, .ndeps = nd};
                cr_assert_eq(rotor_sim_add_transfer(s, &t, &ids[self], &err), ROTOR_OK, "%s", err.msg);
            }
        }
        gate = ids[(int64_t)w * per_window + per_window / 2];
        if (!stream || w + 1 == windows) continue;
        cr_assert_eq(rotor_sim_advance(s, gate, &err), ROTOR_OK, "%s", err.msg);
        rotor_sim_timing t;
        while (checked < gate && rotor_sim_task_timing(s, checked, &t, NULL) == ROTOR_OK)
            assert_same_timing(s, whole, checked++);
        int64_t below = checked < (int64_t)(w - 1) * per_window ? checked : (int64_t)(w - 1) * per_window;
        if (below > 0) cr_assert_eq(rotor_sim_retire(s, below, &err), ROTOR_OK, "%s", err.msg);
    }
    free(ids);
}

Test(sim, a_graph_streamed_window_by_window_equals_the_whole_run_to_the_picosecond) {
    int64_t overlapped = 0;
    for (int topo = 0; topo < 2; topo++)
        for (uint64_t seed = 1; seed <= 20; seed++) {
            rotor_chip chip = topo ? mesh(4, 4, 30) : a2a(16, 30);
            rotor_sim *whole = make(&chip), *s = make(&chip);
            random_windows(whole, NULL, false, seed * 7919, 16, 12, 40);
            rotor_sim_stats a = run(whole), b;
            rotor_error err;
            cr_assert_eq(rotor_sim_stream_begin(s, &err), ROTOR_OK, "%s", err.msg);
            random_windows(s, whole, true, seed * 7919, 16, 12, 40);
            cr_assert_eq(rotor_sim_stream_end(s, &b, &err), ROTOR_OK, "%s", err.msg);
            cr_assert(memcmp(&a, &b, sizeof a) == 0, "seed %llu: makespan %lld vs %lld", (unsigned long long)seed,
                      (long long)a.makespan_ps, (long long)b.makespan_ps);
            rotor_sim_timing t;
            int64_t kept = 0;
            for (int64_t id = 0; id < 12 * 40; id++)
                if (rotor_sim_task_timing(s, id, &t, NULL) == ROTOR_OK) {
                    assert_same_timing(s, whole, id);
                    kept++;
                }
            cr_assert_lt(kept, 6 * 40, "finished tasks were retired as the stream went (kept %lld)", (long long)kept);
            for (int op = 0; op < 12; op++) {
                int64_t a0, a1, b0, b1;
                rotor_sim_op_span(whole, op, &a0, &a1);
                rotor_sim_op_span(s, op, &b0, &b1);
                cr_assert(a0 == b0 && a1 == b1, "op %d", op);
                if (op > 0) {
                    int64_t p0, p1;
                    rotor_sim_op_span(whole, op - 1, &p0, &p1);
                    overlapped += a0 < p1; /* window op starts before op - 1 ends */
                }
            }
            rotor_sim_free(whole);
            rotor_sim_free(s);
        }
    cr_assert_gt(overlapped, 100, "the windows overlap (%lld of 440 times)", (long long)overlapped);
}

/* What a stream refuses, each with the reason. */
Test(sim, a_stream_refuses_a_late_task_a_retired_dependency_and_a_whole_run) {
    rotor_chip chip = a2a(2, 0);
    rotor_sim *s = make(&chip);
    rotor_error err;
    rotor_sim_stats st;
    int64_t a = compute(s, 0, 100, NULL, 0);
    cr_assert_eq(rotor_sim_stream_begin(s, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "a stream starts on a simulator with no tasks (it has 1)");
    rotor_sim_free(s);
    s = make(&chip);
    cr_assert_eq(rotor_sim_stream_begin(s, &err), ROTOR_OK, "%s", err.msg);
    a = compute(s, 0, 100, NULL, 0);                /* 0 - 100 */
    int64_t b = compute(s, 1, 300, NULL, 0);        /* 0 - 300 */
    int64_t c = compute(s, 0, 50, &a, 1);           /* 100 - 150 */
    cr_assert_eq(rotor_sim_advance(s, c, &err), ROTOR_OK, "%s", err.msg);
    assert_span(s, c, 100, 150);
    /* a finished at 100, the run is at 150: a task on a alone is late */
    rotor_sim_compute late = {.core = 1, .duration_ps = 1, .op = -1, .deps = &a, .ndeps = 1};
    cr_assert_eq(rotor_sim_add_compute(s, &late, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: compute task 3: the stream added it late: it was ready at 100 ps and the run is at 150 ps");
    late.deps = NULL;
    late.ndeps = 0;
    cr_assert_eq(rotor_sim_add_compute(s, &late, NULL, &err), ROTOR_ERR_INPUT, "no dependencies: ready at 0");
    /* on a and b (b still running): fine, ready at 300 */
    int64_t ab[2] = {a, b}, d = compute(s, 0, 10, ab, 2);
    cr_assert_eq(rotor_sim_add_dep(s, d, a, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "a streamed run takes dependencies only as tasks are added");
    cr_assert_eq(rotor_sim_retire(s, 2, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: retire: task 1 has not finished");
    cr_assert_eq(rotor_sim_retire(s, 1, &err), ROTOR_OK, "%s", err.msg);
    rotor_sim_timing t;
    cr_assert_eq(rotor_sim_task_timing(s, a, &t, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sim: task 0 was retired (tasks kept: 1..3)");
    cr_assert_eq(rotor_sim_task_timing(s, d, &t, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "task 3 has not finished yet");
    late.deps = &a;
    late.ndeps = 1;
    cr_assert_eq(rotor_sim_add_compute(s, &late, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "the stream added it late: it waits only for tasks that finished before 150 ps, where "
                        "the run is (task 0 was retired)");
    /* a retired dependency beside one that decides: fine */
    int64_t ac[2] = {a, c};
    rotor_sim_compute on_c = {.core = 1, .duration_ps = 5, .op = -1, .deps = ac, .ndeps = 2};
    int64_t e;
    cr_assert_eq(rotor_sim_add_compute(s, &on_c, &e, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_sim_run(s, &st, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "a streamed run ends with rotor_sim_stream_end");
    cr_assert_eq(rotor_sim_stream_end(s, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.makespan_ps, 310);
    cr_assert_eq(st.tasks, 5);
    assert_span(s, d, 300, 310);
    assert_span(s, e, 300, 305); /* ready at 150, core 1 busy with b until 300 */
    cr_assert_null(rotor_sim_trace_json(s, &err));
    assert_msg_has(err, "no trace of a stream that retired tasks");
    cr_assert_eq(rotor_sim_add_compute(s, &late, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "the stream has ended");
    rotor_sim_free(s);
}

/* The range query answers as the per-task one: mid-stream it passes over
 * retired and unfinished tasks, after a whole run it sees every task. */
Test(sim, range_timing_takes_the_latest_end_and_longest_wait_of_finished_kept_tasks) {
    rotor_chip chip = a2a(2, 0);
    rotor_error err;
    for (int stream = 0; stream < 2; stream++) {
        rotor_sim *s = make(&chip);
        if (stream) cr_assert_eq(rotor_sim_stream_begin(s, &err), ROTOR_OK, "%s", err.msg);
        int64_t a = compute(s, 0, 100, NULL, 0); /* 0 - 100 */
        int64_t d = compute(s, 0, 50, NULL, 0);  /* ready at 0, waits for core 0: 100 - 150 */
        int64_t b = compute(s, 1, 500, NULL, 0); /* 0 - 500 */
        int64_t end = -1, wait = 0;
        rotor_sim_range_timing(s, 0, 3, &end, &wait);
        cr_assert(end == -1 && wait == 0, "no run yet: nothing answers");
        if (stream) {
            cr_assert_eq(rotor_sim_advance(s, d, &err), ROTOR_OK, "%s", err.msg);
            rotor_sim_range_timing(s, a, b + 1, &end, &wait);
            cr_assert(end == 150 && wait == 100, "b is still running: end %lld wait %lld", (long long)end,
                      (long long)wait);
            cr_assert_eq(rotor_sim_retire(s, d, &err), ROTOR_OK, "%s", err.msg);
            end = -1, wait = 0;
            rotor_sim_range_timing(s, 0, 3, &end, &wait);
            cr_assert(end == 150 && wait == 100, "a was retired, d answers");
            rotor_sim_stats st;
            cr_assert_eq(rotor_sim_stream_end(s, &st, &err), ROTOR_OK, "%s", err.msg);
        } else {
            run(s);
        }
        end = 200, wait = 0;
        rotor_sim_range_timing(s, 0, 3, &end, NULL);
        cr_assert_eq(end, 500, "b ends last");
        end = 1000;
        rotor_sim_range_timing(s, -5, 99, &end, &wait);
        cr_assert(end == 1000 && wait == 100, "a range past either side is clamped; a later end stays");
        rotor_sim_free(s);
    }
}

/* A watch gathers, as the tasks finish, what the range query reads after:
 * two ranges of a stream's second window, mid-run and at its end. */
Test(sim, a_watch_times_its_ranges_as_they_finish_as_range_timing_reads_them) {
    rotor_chip chip = a2a(2, 0);
    rotor_error err;
    rotor_sim *s = make(&chip);
    cr_assert_eq(rotor_sim_stream_begin(s, &err), ROTOR_OK, "%s", err.msg);
    int64_t a = compute(s, 0, 100, NULL, 0); /* 0 - 100 */
    cr_assert_eq(rotor_sim_advance(s, a, &err), ROTOR_OK, "%s", err.msg);
    int64_t b = compute(s, 0, 40, &a, 1);  /* 100 - 140 */
    int64_t c = compute(s, 0, 60, &a, 1);  /* ready at 100, waits for core 0: 140 - 200 */
    compute(s, 1, 500, &a, 1);            /* d: 100 - 600 */
    int64_t e = compute(s, 1, 0, &c, 1);   /* a synchronisation point at 200 */
    int64_t bounds[3] = {b, c, e + 1};     /* ranges [b, c) and [c, e] */
    cr_assert_eq(rotor_sim_watch(s, bounds, 2, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_sim_advance(s, c, &err), ROTOR_OK, "%s", err.msg);
    int64_t end = -1, wait = 0;
    rotor_sim_watch_timing(s, 0, &end, &wait);
    cr_assert(end == 140 && wait == 0, "range 0 is b: end %lld wait %lld", (long long)end, (long long)wait);
    end = -1, wait = 0;
    rotor_sim_watch_timing(s, 1, &end, &wait);
    cr_assert(end == 200 && wait == 40, "c and e have finished, d runs: end %lld wait %lld", (long long)end,
              (long long)wait);
    int64_t rend = -1, rwait = 0;
    rotor_sim_range_timing(s, c, e + 1, &rend, &rwait);
    cr_assert(rend == end && rwait == wait, "the range query reads the same");
    rotor_sim_stats st;
    cr_assert_eq(rotor_sim_stream_end(s, &st, &err), ROTOR_OK, "%s", err.msg);
    end = -1, wait = 0;
    rotor_sim_watch_timing(s, 1, &end, &wait);
    cr_assert(end == 600 && wait == 40, "d has finished: end %lld wait %lld", (long long)end, (long long)wait);
    end = 1000;
    rotor_sim_watch_timing(s, 1, &end, NULL);
    rotor_sim_watch_timing(s, 2, &end, NULL); /* past the ranges: nothing */
    cr_assert_eq(end, 1000, "a later end stays");
    end = -1;
    rotor_sim_watch_timing(s, 2, &end, NULL);
    cr_assert_eq(end, -1, "range 2 was not watched");
    rotor_sim_free(s);
}

/* A watch is refused outside a stream, over a task that may have run, with
 * no or too many ranges, and with bounds that go down. */
Test(sim, a_watch_is_refused_outside_a_stream_over_tasks_that_may_have_run_and_with_bad_bounds) {
    rotor_chip chip = a2a(2, 0);
    rotor_error err;
    rotor_sim *s = make(&chip);
    int64_t a = compute(s, 0, 100, NULL, 0), none[2] = {a, a + 1};
    cr_assert_eq(rotor_sim_watch(s, none, 1, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "not streaming");
    rotor_sim_free(s);
    s = make(&chip);
    cr_assert_eq(rotor_sim_stream_begin(s, &err), ROTOR_OK, "%s", err.msg);
    a = compute(s, 0, 100, NULL, 0);
    cr_assert_eq(rotor_sim_advance(s, a, &err), ROTOR_OK, "%s", err.msg);
    int64_t b = compute(s, 0, 40, &a, 1);
    int64_t ran[2] = {a, b + 1};
    cr_assert_eq(rotor_sim_watch(s, ran, 1, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "task 0 may have run (the tasks added since the last advance start at 1)");
    int64_t ok[6] = {b, b, b, b, b + 1, b + 1};
    cr_assert_eq(rotor_sim_watch(s, ok, 0, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "expected 1..4 ranges, got 0");
    cr_assert_eq(rotor_sim_watch(s, ok, 5, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "expected 1..4 ranges, got 5");
    int64_t down[3] = {b, b + 1, b};
    cr_assert_eq(rotor_sim_watch(s, down, 2, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "bounds[2] = 1 is below bounds[1] = 2");
    cr_assert_eq(rotor_sim_watch(s, ok, 4, &err), ROTOR_OK, "%s", err.msg);
    rotor_sim_stats st;
    cr_assert_eq(rotor_sim_stream_end(s, &st, &err), ROTOR_OK, "%s", err.msg);
    int64_t end = -1;
    rotor_sim_watch_timing(s, 3, &end, NULL);
    cr_assert_eq(end, 140, "the last range holds b: end %lld", (long long)end);
    cr_assert_eq(rotor_sim_watch(s, ok, 1, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "the stream has ended");
    rotor_sim_free(s);
}
