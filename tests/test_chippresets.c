/* test_chippresets.c — the mesh chip presets of src/base/chip.c: ipu-mk2-mesh,
 * wormhole-n150 and wse2 (docs/chip-format.md, "Presets", which cites every
 * number asserted here). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/chip.h"
#include "rotor/base/topology.h"

#define KIB 1024LL
#define GIB (1024LL * 1024 * 1024)

static rotor_chip preset(const char *name) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset(name, &c, &err), ROTOR_OK, "%s: %s", name, err.msg);
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s: %s", name, err.msg);
    return c;
}

/* a and b within a relative 1e-12 (rates are a per-chip figure over cores). */
static bool close_rel(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

/* Every field of two chips, the name aside, bit for bit (doubles by their
 * bytes, so that a -0.0 or a last-bit difference fails). */
static void assert_same_fields(const rotor_chip *a, const rotor_chip *b) {
#define SAME_INT(f) cr_assert_eq(a->f, b->f, #f ": %lld != %lld", (long long)a->f, (long long)b->f)
#define SAME_NUM(f) cr_assert_eq(memcmp(&a->f, &b->f, sizeof(double)), 0, #f ": %.17g != %.17g", a->f, b->f)
    SAME_INT(cores_per_chip);
    SAME_INT(chips);
    SAME_INT(sram_bytes);
    SAME_NUM(link_gbps);
    SAME_NUM(link_latency_ns);
    SAME_NUM(matrix_tflops);
    SAME_NUM(int8_tops);
    SAME_NUM(vector_tflops);
    SAME_INT(systolic_rows);
    SAME_INT(systolic_cols);
    SAME_INT(shift_buffer_bytes);
    SAME_INT(element_bytes);
    SAME_INT(topology);
    SAME_INT(mesh_width);
    SAME_INT(mesh_height);
    SAME_NUM(interchip_gbps);
    SAME_INT(hbm_bytes);
    SAME_NUM(hbm_gbps);
    SAME_INT(hbm_controllers);
    SAME_NUM(mac_pj);
    SAME_NUM(vector_flop_pj);
    SAME_NUM(sram_read_pj);
    SAME_NUM(sram_write_pj);
    SAME_NUM(link_pj);
    SAME_NUM(hbm_pj);
    SAME_NUM(interchip_pj);
    SAME_NUM(static_w);
#undef SAME_INT
#undef SAME_NUM
}

/* ---- ipu-mk2-mesh ---------------------------------------------------------- */

/* The preset is what the issue's --set triple makes of ipu-mk2, field by
 * field, under its own name. */
Test(chippresets, ipu_mk2_mesh_is_ipu_mk2_with_the_32x46_mesh_set) {
    rotor_chip want = preset("ipu-mk2"), got = preset("ipu-mk2-mesh");
    rotor_error err = {{0}};
    const char *sets[] = {"topology=mesh", "mesh_width=32", "mesh_height=46"};
    for (int i = 0; i < 3; i++) cr_assert_eq(rotor_chip_set(&want, sets[i], &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_validate(&want, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(got.name, "ipu-mk2-mesh");
    assert_same_fields(&got, &want);
    /* ... and the writer, which walks every field of the table, agrees too */
    memcpy(want.name, got.name, sizeof want.name);
    char *a = rotor_chip_to_json(&got), *b = rotor_chip_to_json(&want);
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
}

/* ---- wormhole-n150 --------------------------------------------------------- */

/* Tenstorrent's n150 spec sheet: 72 Tensix cores, 1 GHz, 12 GB GDDR6 at 288
 * GB/s, 74 TFLOPS FP16; tt-isa-documentation: an 8 x 10 Tensix grid less one
 * fused-off row, 1464 KiB of L1, MVMUL 1.024 TFLOP/s at 4 fidelity phases,
 * SFPMAD 0.064 TFLOP/s, 32 B a cycle and 9 cycles per NoC hop, 6 GDDR6
 * banks of 2 GiB. */
Test(chippresets, wormhole_n150_is_72_tensix_cores_on_an_8x9_grid) {
    rotor_chip c = preset("wormhole-n150");
    cr_assert_eq(c.cores_per_chip, 72);
    cr_assert_eq(c.topology, ROTOR_TOPO_MESH);
    cr_assert_eq(c.mesh_width, 8);
    cr_assert_eq(c.mesh_height, 9);
    cr_assert_eq(c.chips, 1);
    cr_assert_eq(c.sram_bytes, 1464 * KIB);
    cr_assert_eq(c.sram_bytes, 1499136);
    cr_assert(close_rel(rotor_chip_matrix_rate(&c), 1.024e12), "R_mm %.17g", rotor_chip_matrix_rate(&c));
    cr_assert(close_rel(rotor_chip_vector_rate(&c), 0.064e12), "R_vec %.17g", rotor_chip_vector_rate(&c));
    cr_assert_eq(round(c.matrix_tflops), 74); /* the spec sheet's figure */
    cr_assert_eq(c.int8_tops, 0.0);           /* int8 needs 4 phases too: the FP16 rate */
    cr_assert_eq(rotor_chip_link_bw(&c), 32e9);
    cr_assert(close_rel(rotor_chip_link_latency(&c), 9e-9));
    cr_assert_eq(c.systolic_rows, 32); /* TT-Metalium's 32 x 32 tiles */
    cr_assert_eq(c.systolic_cols, 32);
    cr_assert_eq(c.shift_buffer_bytes, 8192); /* one NoC packet: 256 flits of 32 B */
    cr_assert_eq(c.hbm_bytes, 12 * GIB);
    cr_assert_eq(c.hbm_gbps, 288.0);
    cr_assert_eq(c.hbm_controllers, 6);
    cr_assert_eq(c.hbm_pj, 60.0);
    cr_assert_eq(c.static_w, 32.0);
}

/* The chip's edge has 2 (8 + 9) = 34 links for the 6 controllers' 288 GB/s
 * (34 x 32 GB/s), and its far corners are 7 + 8 hops apart. */
Test(chippresets, wormhole_n150_edge_carries_its_dram_bandwidth) {
    rotor_chip c = preset("wormhole-n150");
    const rotor_topo *t = rotor_topo_find(c.topology);
    cr_assert_not_null(t);
    cr_assert_eq(t->edge_ports(&c), 34);
    cr_assert_geq(t->edge_ports(&c) * c.link_gbps, c.hbm_gbps);
    cr_assert_eq(rotor_topo_hops(&c, 0, 71), 15);
}

/* ---- wse2 ------------------------------------------------------------------ */

/* The 750 x 994 grid a program may use on a CS-2 (fabric 757 x 996 less
 * memcpy's 7 columns and 2 rows), 48 KiB a core, 1.1 GHz; 4 FP16 FMAC lanes
 * (8.8 GFLOP/s) and 4 lanes of vector work (4.4 GFLOP/s) a core; one 32-bit
 * wavelet a cycle per link (4.4 GB/s), about 1 ns a hop; no HBM. */
Test(chippresets, wse2_is_the_usable_750x994_grid_of_48_kib_cores) {
    rotor_chip c = preset("wse2");
    cr_assert_eq(c.cores_per_chip, 745500);
    cr_assert_eq(c.mesh_width * c.mesh_height, c.cores_per_chip);
    cr_assert_eq(c.mesh_width, 750);
    cr_assert_eq(c.mesh_height, 994);
    cr_assert_eq(c.chips, 1);
    cr_assert_eq(c.sram_bytes, 48 * KIB);
    cr_assert(close_rel(rotor_chip_matrix_rate(&c), 8.8e9), "R_mm %.17g", rotor_chip_matrix_rate(&c));
    cr_assert(close_rel(rotor_chip_vector_rate(&c), 4.4e9), "R_vec %.17g", rotor_chip_vector_rate(&c));
    cr_assert(close_rel(rotor_chip_link_bw(&c), 4.4e9));
    cr_assert(close_rel(rotor_chip_link_latency(&c), 1e-9));
    cr_assert_eq(c.systolic_rows, 1);
    cr_assert_eq(c.systolic_cols, 4);
    cr_assert_eq(c.shift_buffer_bytes, 1024);
    cr_assert_eq(c.hbm_bytes + c.hbm_controllers, 0);
    cr_assert_eq(c.hbm_gbps, 0.0);
    cr_assert_eq(c.static_w, 3000.0);
    /* 36.6 GB (34.1 GiB) of SRAM in all: N * S, far below the 2^60 bound of a program's setup */
    cr_assert_eq(rotor_chip_cores(&c) * rotor_chip_sram(&c), 36642816000LL);
}

/* The wafer's scale in the geometry: corner to corner 749 + 993 hops, and
 * 2 (750 + 994) edge links. */
Test(chippresets, wse2_corner_to_corner_is_1742_hops) {
    rotor_chip c = preset("wse2");
    cr_assert_eq(rotor_topo_hops(&c, 0, c.cores_per_chip - 1), 1742);
    cr_assert_eq(rotor_topo_find(c.topology)->edge_ports(&c), 3488);
}

/* ---- all three -------------------------------------------------------------- */

static const char *const MESH_PRESETS[] = {"ipu-mk2-mesh", "wormhole-n150", "wse2"};

/* Listed after the IPU presets, in this order, and each is a 2D mesh of one chip. */
Test(chippresets, mesh_presets_are_listed_after_the_ipu_presets) {
    cr_assert_eq(rotor_chip_preset_count(), 8); /* 6: stcp920, test_chiphier.c; 7: kapla-edge, test_kaplabase.c */
    for (int i = 0; i < 3; i++) {
        cr_assert_str_eq(rotor_chip_preset_name(3 + i), MESH_PRESETS[i]);
        rotor_chip c = preset(MESH_PRESETS[i]);
        cr_assert_str_eq(c.name, MESH_PRESETS[i]);
        cr_assert_eq(c.topology, ROTOR_TOPO_MESH);
        cr_assert_eq(c.chips, 1);
        cr_assert_eq(c.interchip_gbps, 0.0);
        cr_assert_eq(c.element_bytes, 2);
    }
}

/* Each writes and reads back to the last bit. */
Test(chippresets, mesh_presets_round_trip_through_the_file_format) {
    for (int i = 0; i < 3; i++) {
        rotor_chip c = preset(MESH_PRESETS[i]), back;
        rotor_error err = {{0}};
        char *json = rotor_chip_to_json(&c);
        cr_assert_not_null(json);
        cr_assert_eq(rotor_chip_parse(json, strlen(json), "mem.json", &back, &err), ROTOR_OK, "%s: %s",
                     MESH_PRESETS[i], err.msg);
        cr_assert_str_eq(back.name, c.name);
        assert_same_fields(&back, &c);
        free(json);
    }
}

/* Every energy coefficient is set (docs/chip-format.md, "Energy
 * coefficients"): the per-event estimates shared with the IPU presets, and
 * each chip's own memory and static power. */
Test(chippresets, mesh_presets_set_every_energy_coefficient) {
    rotor_chip mk2 = preset("ipu-mk2");
    for (int i = 0; i < 3; i++) {
        rotor_chip c = preset(MESH_PRESETS[i]);
        cr_assert_eq(c.mac_pj, mk2.mac_pj, "%s", c.name);
        cr_assert_eq(c.vector_flop_pj, mk2.vector_flop_pj, "%s", c.name);
        cr_assert_eq(c.sram_read_pj, mk2.sram_read_pj, "%s", c.name);
        cr_assert_eq(c.sram_write_pj, mk2.sram_write_pj, "%s", c.name);
        cr_assert_eq(c.link_pj, mk2.link_pj, "%s", c.name);
        cr_assert_eq(c.interchip_pj, mk2.interchip_pj, "%s", c.name);
        cr_assert_gt(c.hbm_pj, 0, "%s", c.name);
        cr_assert_gt(c.static_w, 0, "%s", c.name);
    }
}

/* A near miss names the preset. */
Test(chippresets, a_misspelt_mesh_preset_is_suggested) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("wse-2", &c, &err), ROTOR_ERR_INPUT);
    cr_assert_not_null(strstr(err.msg, "(did you mean 'wse2'?)"), "%s", err.msg);
    cr_assert_eq(rotor_chip_preset("wormhole-n300", &c, &err), ROTOR_ERR_INPUT);
    cr_assert_not_null(strstr(err.msg, "(did you mean 'wormhole-n150'?)"), "%s", err.msg);
}
