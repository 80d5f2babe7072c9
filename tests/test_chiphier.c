/* test_chiphier.c — the memory hierarchy of GraphTurbo's DSA abstraction in
 * the chip model (§1, Fig. 1; issue 42 item 1): clusters, cores_per_cluster,
 * compute_units, the GB per cluster, the off-chip kind; the stcp920 preset
 * (§5 Eq. 2); and the GB as a shared resource in the simulator
 * (docs/chip-format.md, "Clusters and the global buffer"; docs/simulator.md,
 * "The global buffer"). */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "rotor/base/chip.h"
#include "rotor/sim/sim.h"

#define HEAD "\"format\": \"rotor-chip\", \"version\": 1, "

/* A minimal chip file of 32 all-to-all cores, without the hierarchy's keys
 * (a file from before them), with `extra` ("\"key\": value, ...") added. */
#define FLAT32(extra)                                                                              \
    "{" HEAD "\"name\": \"t\", \"cores_per_chip\": 32, \"chips\": 1, \"sram_bytes\": 65536, "   \
    "\"link_gbps\": 10, \"matrix_tflops\": 1, \"vector_tflops\": 1, \"systolic_rows\": 16, "      \
    "\"systolic_cols\": 16, \"shift_buffer_bytes\": 8192, \"element_bytes\": 2, "                \
    "\"topology\": \"all-to-all\"" extra "}"

static rotor_status parse(const char *text, rotor_chip *c, rotor_error *err) {
    return rotor_chip_parse(text, strlen(text), "t.json", c, err);
}

static rotor_chip parsed(const char *text) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(parse(text, &c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

/* The file is refused with exactly `msg`. */
static void refused(const char *text, const char *msg) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(parse(text, &c, &err), ROTOR_ERR_INPUT, "%s", text);
    cr_assert_str_eq(err.msg, msg);
}

static rotor_chip preset(const char *name) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset(name, &c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

static void set_ok(rotor_chip *c, const char *kv) {
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_set(c, kv, &err), ROTOR_OK, "%s: %s", kv, err.msg);
}

/* ---- the preset -------------------------------------------------------------- */

Test(chiphier, stcp920_has_every_field_of_eq2_and_its_assumptions) {
    rotor_chip c = preset("stcp920");
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(c.name, "stcp920");
    /* Eq. 2 */
    cr_assert_eq(c.clusters, 4);
    cr_assert_eq(c.cores_per_cluster, 8);
    cr_assert_eq(c.cores_per_chip, 32);
    cr_assert_eq(c.compute_units, 3);
    cr_assert_eq(c.sram_bytes, 65536);    /* 64 KiB L1: the LB */
    cr_assert_eq(c.gb_bytes, 8388608);    /* 8 MiB LLB: the GB */
    cr_assert_eq(c.offchip, ROTOR_OFFCHIP_DDR);
    cr_assert_eq(c.hbm_gbps, 136.0);      /* §5.6 */
    /* NeuralScale (RISC-V International, 2021): 128 TFLOP/s FP16, 256 TOP/s INT8 */
    cr_assert_eq(c.matrix_tflops, 128.0);
    cr_assert_eq(c.int8_tops, 256.0);
    /* assumed (docs/chip-format.md, "stcp920") */
    cr_assert_eq(c.vector_tflops, 16.0);
    cr_assert_eq(c.link_gbps, 64.0);
    cr_assert_eq(c.gb_gbps, 512.0);
    cr_assert_eq(c.link_latency_ns, 20.0);
    cr_assert_eq(c.systolic_rows, 32);
    cr_assert_eq(c.systolic_cols, 64);
    cr_assert_eq(c.shift_buffer_bytes, 8192);
    cr_assert_eq(c.element_bytes, 2);
    cr_assert_eq(c.topology, ROTOR_TOPO_ALL_TO_ALL);
    cr_assert_eq(c.mesh_width, 0);
    cr_assert_eq(c.mesh_height, 0);
    cr_assert_eq(c.chips, 1);
    cr_assert_eq(c.interchip_gbps, 0.0);
    cr_assert_eq(c.hbm_bytes, 64LL << 30); /* an assumption large enough for DLRM's 48 GB of tables */
    cr_assert_eq(c.hbm_controllers, 4);
    cr_assert_eq(c.compute_overlap, 1);
    cr_assert_eq(c.mac_pj, 0.4);
    cr_assert_eq(c.hbm_pj, 40.0);
    cr_assert_eq(c.static_w, 15.0);
    /* the GB serves its 8 cores' ports at once: no contention the compiler misses */
    cr_assert_eq(c.gb_gbps, (double)c.cores_per_cluster * c.link_gbps);
    cr_assert_eq(rotor_chip_cluster_cores(&c), 8);
    cr_assert_eq(rotor_chip_matrix_rate(&c), 4e12); /* 128e12 / 32 */
}

Test(chiphier, every_other_preset_is_one_cluster_without_a_gb) {
    for (int i = 0; i < rotor_chip_preset_count(); i++) {
        rotor_chip c = preset(rotor_chip_preset_name(i));
        if (strcmp(c.name, "stcp920") == 0) continue;
        cr_assert_eq(c.clusters, 1, "%s", c.name);
        cr_assert_eq(c.cores_per_cluster, c.cores_per_chip, "%s", c.name);
        cr_assert_eq(c.compute_units, 1, "%s", c.name);
        cr_assert_eq(c.gb_bytes, 0, "%s", c.name);
        cr_assert_eq(c.gb_gbps, 0.0, "%s", c.name);
        cr_assert_eq(c.offchip, ROTOR_OFFCHIP_HBM, "%s", c.name);
    }
}

/* ---- files --------------------------------------------------------------------- */

Test(chiphier, a_file_carries_every_key) {
    rotor_chip c = parsed(FLAT32(", \"clusters\": 4, \"cores_per_cluster\": 8, \"compute_units\": 3, "
                                 "\"gb_bytes\": 1048576, \"gb_gbps\": 100.5, \"offchip\": \"ddr\", "
                                 "\"hbm_bytes\": 1073741824, \"hbm_gbps\": 50, \"hbm_controllers\": 2"));
    cr_assert_eq(c.clusters, 4);
    cr_assert_eq(c.cores_per_cluster, 8);
    cr_assert_eq(c.compute_units, 3);
    cr_assert_eq(c.gb_bytes, 1048576);
    cr_assert_eq(c.gb_gbps, 100.5);
    cr_assert_eq(c.offchip, ROTOR_OFFCHIP_DDR);
}

Test(chiphier, an_old_file_is_one_cluster_of_its_cores) {
    rotor_chip c = parsed(FLAT32(""));
    cr_assert_eq(c.clusters, 1);
    cr_assert_eq(c.cores_per_cluster, 32);
    cr_assert_eq(c.compute_units, 1);
    cr_assert_eq(c.gb_bytes, 0);
    cr_assert_eq(c.gb_gbps, 0.0);
    cr_assert_eq(c.offchip, ROTOR_OFFCHIP_HBM);
    /* from a preset, cores_per_chip overridden: the cluster follows */
    c = parsed("{" HEAD "\"base\": \"ipu-mk2\", \"cores_per_chip\": 64}");
    cr_assert_eq(c.clusters, 1);
    cr_assert_eq(c.cores_per_cluster, 64);
    /* ... and on stcp920 the clusters stay, 4 of 16 */
    c = parsed("{" HEAD "\"base\": \"stcp920\", \"cores_per_chip\": 64}");
    cr_assert_eq(c.clusters, 4);
    cr_assert_eq(c.cores_per_cluster, 16);
    cr_assert_eq(c.compute_units, 3);
    /* one of the two given: the other follows cores_per_chip */
    c = parsed(FLAT32(", \"clusters\": 2"));
    cr_assert_eq(c.cores_per_cluster, 16);
    c = parsed(FLAT32(", \"cores_per_cluster\": 4"));
    cr_assert_eq(c.clusters, 8);
}

Test(chiphier, validation_names_the_key) {
    refused(FLAT32(", \"clusters\": 4, \"cores_per_cluster\": 7"),
            "t.json: clusters * cores_per_cluster (4 x 7) != cores_per_chip (32)");
    refused(FLAT32(", \"clusters\": 5"), "t.json: clusters * cores_per_cluster (5 x 6) != cores_per_chip (32)");
    /* a file is strict even for one cluster */
    refused(FLAT32(", \"clusters\": 1, \"cores_per_cluster\": 64"),
            "t.json: clusters * cores_per_cluster (1 x 64) != cores_per_chip (32)");
    refused("{" HEAD "\"base\": \"stcp920\", \"cores_per_chip\": 30}",
            "t.json: clusters * cores_per_cluster (4 x 7) != cores_per_chip (30)");
    refused(FLAT32(", \"gb_gbps\": 512"), "t.json: gb_gbps: expected 0 when gb_bytes is 0 (no GB), got 512");
    refused(FLAT32(", \"gb_bytes\": 1024"),
            "t.json: gb_gbps: expected a positive number when gb_bytes > 0 (gb_bytes is 1024), got 0");
    refused(FLAT32(", \"gb_bytes\": 8589934592, \"gb_gbps\": 1"),
            "t.json: gb_bytes: expected a non-negative integer at most 4294967296, got 8589934592");
    refused(FLAT32(", \"gb_bytes\": -1"), "t.json: gb_bytes: expected a non-negative integer, got -1");
    refused(FLAT32(", \"gb_gbps\": 2e6, \"gb_bytes\": 1"),
            "t.json: gb_gbps: expected a non-negative number at most 1000000, got 2000000");
    refused(FLAT32(", \"clusters\": 0"), "t.json: clusters: expected a positive integer, got 0");
    refused(FLAT32(", \"cores_per_cluster\": 2000000"),
            "t.json: cores_per_cluster: expected a positive integer at most 1048576, got 2000000");
    refused(FLAT32(", \"compute_units\": 0"), "t.json: compute_units: expected a positive integer, got 0");
    refused(FLAT32(", \"compute_units\": 1025"),
            "t.json: compute_units: expected a positive integer at most 1024, got 1025");
    refused(FLAT32(", \"offchip\": \"sram\""), "t.json: offchip: expected \"hbm\" or \"ddr\", got \"sram\"");
    refused(FLAT32(", \"offchip\": 1"), "t.json: offchip: expected \"hbm\" or \"ddr\", got 1");
}

/* A one-cluster chip resized by writing cores_per_chip alone (a core group,
 * compile/segment.c; a test's mesh) stays valid: its cluster is the whole
 * chip.  With several clusters it is not. */
Test(chiphier, a_resized_chip_of_one_cluster_is_valid) {
    rotor_chip c = preset("ipu-mk2");
    rotor_error err = {{0}};
    c.cores_per_chip = 64;
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_cluster_cores(&c), 64);
    c.cores_per_chip = 2048;
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_cluster_cores(&c), 2048);
    c = preset("stcp920");
    c.cores_per_chip = 16;
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "clusters * cores_per_cluster (4 x 8) != cores_per_chip (16)");
}

/* ---- --set ----------------------------------------------------------------------- */

Test(chiphier, set_takes_each_key) {
    rotor_chip c = preset("ipu-mk2");
    rotor_error err = {{0}};
    set_ok(&c, "cores_per_chip=32");
    cr_assert_eq(c.cores_per_cluster, 32); /* one cluster follows the chip */
    set_ok(&c, "cores_per_cluster=8"); /* splits the one cluster into 4 */
    cr_assert_eq(c.clusters, 4);
    set_ok(&c, "clusters=4");
    set_ok(&c, "compute_units=3");
    set_ok(&c, "gb_bytes=8388608");
    set_ok(&c, "gb_gbps=512");
    set_ok(&c, "offchip=ddr");
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.clusters, 4);
    cr_assert_eq(c.cores_per_cluster, 8);
    cr_assert_eq(c.compute_units, 3);
    cr_assert_eq(c.gb_bytes, 8388608);
    cr_assert_eq(c.gb_gbps, 512.0);
    cr_assert_eq(c.offchip, ROTOR_OFFCHIP_DDR);
    set_ok(&c, "cores_per_chip=64"); /* 4 clusters of 16 */
    cr_assert_eq(c.cores_per_cluster, 16);
    set_ok(&c, "offchip=hbm");
    cr_assert_eq(c.offchip, ROTOR_OFFCHIP_HBM);
    /* one field's rule at a time; the chip is unchanged on error */
    rotor_chip before = c;
    cr_assert_eq(rotor_chip_set(&c, "offchip=gddr", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--set: offchip: expected \"hbm\" or \"ddr\", got \"gddr\"");
    cr_assert_eq(rotor_chip_set(&c, "clusters=0", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--set: clusters: expected a positive integer, got 0");
    cr_assert_eq(rotor_chip_set(&c, "gb_bytes=1.5", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--set: gb_bytes: expected a non-negative integer, got 1.5");
    cr_assert(memcmp(&before, &c, sizeof c) == 0);
    /* relations wait for validate */
    set_ok(&c, "clusters=3");
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "clusters * cores_per_cluster (3 x 16) != cores_per_chip (64)");
    /* clusters alone, as a file gives it: K clusters of N / K cores */
    set_ok(&c, "clusters=2");
    cr_assert_eq(c.cores_per_cluster, 32);
    c = preset("ipu-mk2");
    set_ok(&c, "clusters=2");
    cr_assert_eq(c.cores_per_cluster, 736);
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    /* a cluster size that does not divide a one-cluster chip: refused, not
     * taken as the whole chip */
    c = preset("ipu-mk2");
    before = c;
    cr_assert_eq(rotor_chip_set(&c, "cores_per_cluster=3", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--set: cores_per_cluster: 3 does not divide cores_per_chip (1472)");
    cr_assert(memcmp(&before, &c, sizeof c) == 0);
}

/* ---- the writer -------------------------------------------------------------------- */

Test(chiphier, to_json_round_trips_and_leaves_defaults_out) {
    rotor_chip c = preset("stcp920");
    char *text = rotor_chip_to_json(&c);
    cr_assert_not_null(text);
    cr_assert(strstr(text, "\"clusters\":\t4,\n\t\"cores_per_cluster\":\t8,\n\t\"compute_units\":\t3,\n"
                           "\t\"gb_bytes\":\t8388608,\n\t\"gb_gbps\":\t512,\n\t\"offchip\":\t\"ddr\"\n}") != NULL,
              "%s", text);
    rotor_chip back = parsed(text);
    cr_assert(memcmp(&back, &c, sizeof c) == 0, "%s", text);
    free(text);
    /* a flat chip: none of the new keys, as before them */
    c = preset("ipu-mk2");
    text = rotor_chip_to_json(&c);
    for (const char *k = "clusters\0cores_per_cluster\0compute_units\0gb_bytes\0gb_gbps\0offchip\0"; *k;
         k += strlen(k) + 1)
        cr_assert(strstr(text, k) == NULL, "%s in %s", k, text);
    back = parsed(text);
    cr_assert(memcmp(&back, &c, sizeof c) == 0);
    free(text);
}

/* ---- the simulator: the GB as a shared resource ---------------------------------------- */

/* 2 clusters x 2 cores, all-to-all, links of 10 GB/s, no latency, a GB of
 * gb_gbps per cluster. */
static rotor_sim *hier_sim(double gb_gbps) {
    rotor_chip c = preset("ipu-mk2");
    rotor_error err = {{0}};
    set_ok(&c, "cores_per_chip=4");
    set_ok(&c, "clusters=2");
    set_ok(&c, "cores_per_cluster=2");
    set_ok(&c, "link_gbps=10");
    set_ok(&c, "gb_bytes=1048576");
    char kv[64];
    snprintf(kv, sizeof kv, "gb_gbps=%g", gb_gbps);
    set_ok(&c, kv);
    rotor_sim *s;
    cr_assert_eq(rotor_sim_create(&c, &s, &err), ROTOR_OK, "%s", err.msg);
    return s;
}

static int64_t xfer(rotor_sim *s, int64_t src, int64_t dst, int64_t bytes) {
    rotor_sim_transfer t = {.src = src, .dst = dst, .bytes = bytes, .category = ROTOR_SIM_COMM};
    int64_t id;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_sim_add_transfer(s, &t, &id, &err), ROTOR_OK, "%s", err.msg);
    return id;
}

static int64_t makespan(rotor_sim *s) {
    rotor_sim_stats st;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_sim_run(s, &st, &err), ROTOR_OK, "%s", err.msg);
    return st.makespan_ps;
}

/* Two simultaneous 1,500-byte transfers in cluster 0, 0 -> 1 and 1 -> 0,
 * on disjoint ports (out 0 + in 1, out 1 + in 0).
 *  - Links alone: 1,500 B / 10 GB/s = 150 ns each, in parallel: 150 ns.
 *  - GB of 15 GB/s: each side a pool (docs/simulator.md, "Pools") of
 *    ceil(15 / 10) = 2 lanes of 7.5 GB/s; each transfer takes a lane of
 *    the write side and one of the read side and runs at min(10, 7.5) =
 *    7.5 GB/s, 1,500 / 7.5 = 200 ns, both at once: 200 ns, the GB's bound
 *    3,000 B / 15 GB/s = 200 ns.
 *  - GB of 40 GB/s: 4 lanes of 10 GB/s a side, the links bound: 150 ns. */
Test(chiphier, the_gb_is_shared_by_its_clusters_cores) {
    rotor_sim *s = hier_sim(15);
    xfer(s, 0, 1, 1500);
    xfer(s, 1, 0, 1500);
    cr_assert_eq(makespan(s), 200000);
    rotor_sim_free(s);
    s = hier_sim(40);
    xfer(s, 0, 1, 1500);
    xfer(s, 1, 0, 1500);
    cr_assert_eq(makespan(s), 150000);
    rotor_sim_free(s);
}

/* The routes: within a cluster, the GB's write side and read side; to the
 * other cluster, the write side of the sender's GB and the read side of the
 * receiver's.  No latency: the GB is not a hop. */
Test(chiphier, a_transfer_writes_its_clusters_gb_and_reads_the_receivers) {
    rotor_sim *s = hier_sim(15);
    int64_t res[8], n, hops;
    rotor_error err = {{0}};
    char text[256] = "", name[64];
    cr_assert_eq(rotor_sim_route(s, 0, 3, res, 8, &n, &hops, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(hops, 1);
    for (int64_t i = 0; i < n; i++) {
        rotor_sim_resource_name(s, res[i], name, sizeof name);
        strcat(text, i ? ", " : "");
        strcat(text, name);
    }
    cr_assert_str_eq(text, "out c0.0, in c0.3, gb c0.0 write, gb c0.1 read");
    cr_assert_eq(rotor_sim_route(s, 1, 0, res, 8, &n, &hops, &err), ROTOR_OK, "%s", err.msg);
    rotor_sim_resource_name(s, res[2], name, sizeof name);
    cr_assert_str_eq(name, "gb c0.0 write");
    rotor_sim_resource_name(s, res[3], name, sizeof name);
    cr_assert_str_eq(name, "gb c0.0 read");
    rotor_sim_free(s);
}

/* With a GB of 15 GB/s (each side 2 lanes of 7.5 GB/s):
 *  - 0 -> 1, 1 -> 0, then 0 -> 1 again: 200 ns each; the third waits for
 *    core 0's out port and a lane of each side, free at 200 ns: 400 ns.
 *  - 0 -> 2, 1 -> 3, 2 -> 0, 3 -> 1 at once: each side of each GB serves
 *    two of them (cluster 0 writes the first two and reads the last two),
 *    its two lanes: all four in 200 ns.
 *  - 0 -> 1, 1 -> 0 and 2 -> 3, 3 -> 2: the two clusters' GBs are separate,
 *    200 ns. */
Test(chiphier, each_side_of_a_gb_is_shared_by_its_clusters_cores) {
    rotor_sim *s = hier_sim(15);
    xfer(s, 0, 1, 1500);
    xfer(s, 1, 0, 1500);
    xfer(s, 0, 1, 1500);
    cr_assert_eq(makespan(s), 400000);
    rotor_sim_free(s);
    s = hier_sim(15);
    xfer(s, 0, 2, 1500);
    xfer(s, 1, 3, 1500);
    xfer(s, 2, 0, 1500);
    xfer(s, 3, 1, 1500);
    cr_assert_eq(makespan(s), 200000);
    rotor_sim_free(s);
    s = hier_sim(15);
    xfer(s, 0, 1, 1500);
    xfer(s, 1, 0, 1500);
    xfer(s, 2, 3, 1500);
    xfer(s, 3, 2, 1500);
    cr_assert_eq(makespan(s), 200000);
    rotor_sim_free(s);
}

/* Without a GB, the same chip runs on its links alone: 150 ns. */
Test(chiphier, without_a_gb_the_links_bound) {
    rotor_chip c = preset("ipu-mk2");
    rotor_error err = {{0}};
    set_ok(&c, "cores_per_chip=4");
    set_ok(&c, "link_gbps=10");
    rotor_sim *s;
    cr_assert_eq(rotor_sim_create(&c, &s, &err), ROTOR_OK, "%s", err.msg);
    xfer(s, 0, 1, 1500);
    xfer(s, 1, 0, 1500);
    cr_assert_eq(makespan(s), 150000);
    rotor_sim_free(s);
}
