/* test_topology.c — a topology's geometry (src/base/topology.c): hops
 * between cores and to the grid's edge, one table row per topology, and the
 * simulator's routes agreeing with it (Elk §2.1 all-to-all, §5 2D mesh). */
#include <criterion/criterion.h>

#include "rotor/base/topology.h"
#include "rotor/sim/sim.h"
#include "fixtures.h"

/* ipu-mk2 cut to one 4 x 4 mesh of 16 cores (core c at (c mod 4, c / 4)). */
static rotor_chip mesh4x4(int chips) {
    rotor_chip c = chips > 1 ? pod4() : mk2();
    rotor_error err = {{0}};
    const char *set[] = {"cores_per_chip=16", "topology=mesh", "mesh_width=4", "mesh_height=4"};
    for (int i = 0; i < 4; i++) cr_assert_eq(rotor_chip_set(&c, set[i], &err), ROTOR_OK, "%s: %s", set[i], err.msg);
    return c;
}

Test(topology, every_topology_has_one_row_named_as_chip_files_write_it) {
    cr_assert_str_eq(rotor_topo_find(ROTOR_TOPO_ALL_TO_ALL)->name, "all-to-all");
    cr_assert_str_eq(rotor_topo_find(ROTOR_TOPO_MESH)->name, "mesh");
    cr_assert_null(rotor_topo_find((rotor_topology)7));
}

/* Elk §2.1: the IPU exchange puts every pair of cores one hop apart. */
Test(topology, all_to_all_cores_0_and_1471_of_an_ipu_mk2_are_one_hop_apart) {
    rotor_chip c = mk2();
    cr_assert_eq(rotor_topo_hops(&c, 0, 1471), 1);
    cr_assert_eq(rotor_topo_hops(&c, 5, 6), 1);
    cr_assert_eq(rotor_topo_find(ROTOR_TOPO_ALL_TO_ALL)->pair_hops, 1);
    cr_assert_eq(rotor_topo_find(ROTOR_TOPO_ALL_TO_ALL)->edge_hops(&c, 700), 0);
    cr_assert_eq(rotor_topo_find(ROTOR_TOPO_ALL_TO_ALL)->edge_ports(&c), 0);
}

/* XY routing: core 0 at (0,0) to core 15 at (3,3) is 3 + 3 hops; core 5 at
 * (1,1) to core 6 at (2,1) one; core 1 at (1,0) to core 13 at (1,3) three. */
Test(topology, on_a_4x4_mesh_core_0_to_15_is_6_hops_and_5_to_6_is_1) {
    rotor_chip c = mesh4x4(1);
    cr_assert_eq(rotor_topo_hops(&c, 0, 15), 6);
    cr_assert_eq(rotor_topo_hops(&c, 15, 0), 6);
    cr_assert_eq(rotor_topo_hops(&c, 5, 6), 1);
    cr_assert_eq(rotor_topo_hops(&c, 1, 13), 3);
    cr_assert_eq(rotor_topo_hops(&c, 9, 9), 0);
    cr_assert_eq(rotor_topo_find(ROTOR_TOPO_MESH)->pair_hops, 0, "a mesh's distance depends on the pair");
}

/* Elk §5: HBM along the grid's edges; an inner core of a 4 x 4 mesh (5 at
 * (1,1)) is one hop from the edge, a corner none; 2 (4 + 4) = 16 edge ports. */
Test(topology, on_a_4x4_mesh_core_5_is_1_hop_from_the_edge_and_there_are_16_edge_ports) {
    rotor_chip c = mesh4x4(1);
    const rotor_topo *t = rotor_topo_find(ROTOR_TOPO_MESH);
    cr_assert_eq(t->edge_hops(&c, 5), 1);
    cr_assert_eq(t->edge_hops(&c, 10), 1);
    cr_assert_eq(t->edge_hops(&c, 0), 0);
    cr_assert_eq(t->edge_hops(&c, 7), 0);
    cr_assert_eq(t->edge_ports(&c), 16);
    cr_assert_eq(rotor_topo_mesh_edge_hops(4, 4, 5), 1);
}

/* Across chips, the geometry is the positions within each chip: core 0 of
 * chip 0 and core 15 of chip 1 (global 31) sit 6 hops apart. */
Test(topology, on_four_4x4_meshes_hops_are_between_positions_within_each_chip) {
    rotor_chip c = mesh4x4(4);
    cr_assert_eq(rotor_topo_hops(&c, 0, 31), 6);
    cr_assert_eq(rotor_topo_hops(&c, 16, 0), 0);
}

/* The simulator's routes pay the geometry's hops between two cores of one
 * chip, and one more to cross chips (docs/simulator.md). */
Test(topology, the_simulators_routes_pay_the_geometrys_hops) {
    rotor_chip chips[2] = {mesh4x4(4), pod4()};
    for (int k = 0; k < 2; k++) {
        rotor_sim *s;
        rotor_error err = {{0}};
        cr_assert_eq(rotor_sim_create(&chips[k], &s, &err), ROTOR_OK, "%s", err.msg);
        int64_t n = rotor_chip_cores(&chips[k]), cpc = chips[k].cores_per_chip;
        for (int64_t a = 0; a < n; a += k ? 97 : 1)
            for (int64_t b = 0; b < n; b += k ? 89 : 3) {
                if (a == b) continue;
                int64_t nres, hops;
                cr_assert_eq(rotor_sim_route(s, a, b, NULL, 0, &nres, &hops, &err), ROTOR_OK, "%s", err.msg);
                cr_assert_eq(hops, rotor_topo_hops(&chips[k], a, b) + (a / cpc != b / cpc), "%lld -> %lld",
                             (long long)a, (long long)b);
            }
        rotor_sim_free(s);
    }
}
