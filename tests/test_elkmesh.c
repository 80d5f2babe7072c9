/* tests for elkmesh.c: Elk §6.4's network sweeps, all-to-all against mesh
 * (Figures 19, 21 and 22; docs/reproduction.md). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "rotor/pipeline/elkmesh.h"
#include "fixtures.h"

/* ipu-pod4's 1,472 cores per chip: 32 x 46 is the factor pair nearest a
 * square (sqrt 1,472 = 38.4; the next pair is 23 x 64), the ipu-mk2-mesh
 * preset's grid. */
Test(elkmesh, the_mesh_twin_of_ipu_pod4_is_32_by_46_with_everything_else_kept) {
    rotor_chip c = pod4(), m;
    rotor_error err;
    cr_assert_eq(rotor_elkmesh_chip(&c, &m, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(m.topology, ROTOR_TOPO_MESH);
    cr_assert_eq(m.mesh_width, 32);
    cr_assert_eq(m.mesh_height, 46);
    cr_assert_eq(m.link_gbps, c.link_gbps);
    cr_assert_eq(m.hbm_gbps, c.hbm_gbps);
    cr_assert_eq(m.chips, 4);
}

Test(elkmesh, a_prime_core_count_has_no_mesh_twin) {
    rotor_chip c = pod4(), m;
    rotor_error err;
    cr_assert_eq(rotor_chip_set(&c, "cores_per_chip=1471", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_elkmesh_chip(&c, &m, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "chip 'ipu-pod4': 1471 cores per chip have no factor pair for a 2D mesh");
}

/* all-to-all: one port per core; 32 x 46: 2 (31 x 46 + 32 x 45) = 5,732
 * directed links between neighbours and 2 (32 + 46) = 156 edge ports. */
Test(elkmesh, links_are_a_port_per_core_or_every_directed_mesh_link_and_edge_port) {
    rotor_chip c = pod4(), m;
    rotor_error err;
    cr_assert_eq(rotor_elk_links(&c), 1472);
    cr_assert_eq(rotor_elkmesh_chip(&c, &m, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_elk_links(&m), 5888);
    /* Elk §2.1: 1,472 x 5.5 GB/s = 8 TB/s per IPU, 32.4 over four */
    cr_assert_float_eq(rotor_elkmesh_aggregate_tbps(&c, 5.5), 32.384, 1e-9);
}

/* One model, one layer, one bandwidth on each grid: Figure 22's point is
 * Figures 19 and 21's, copied; the mesh is slower and its bytes cross
 * several links each (Elk §6.4: "mesh takes multiple hops to deliver HBM
 * data to cores"), where on all-to-all byte-hops are the bytes landing. */
Test(elkmesh, one_point_on_both_networks_mesh_slower_and_multi_hop) {
    rotor_chip c = pod4();
    rotor_error err;
    const char *models[] = {"opt-1.3b"};
    const double hbm[] = {16}, link[] = {5.5};
    rotor_elkmesh_options o = {.models = models, .nmodels = 1, .link_model = "opt-1.3b", .batch = 1, .seq = 2048,
                               .layers = 1, .hbm_tbps = hbm, .nhbm = 1, .link_gbps = link, .nlink = 1,
                               .link_hbm_tbps = hbm, .nlink_hbm = 1};
    rotor_elkmesh_result r;
    cr_assert_eq(rotor_elkmesh_run(&o, &c, &r, &err), ROTOR_OK, "%s", err.msg);
    const rotor_elk_point *a = rotor_elkmesh_hbm_at(&r, 0, 0, 0), *m = rotor_elkmesh_hbm_at(&r, 0, 0, 1);
    cr_assert(a->fits && m->fits);
    cr_assert_eq(a->topology, ROTOR_TOPO_ALL_TO_ALL);
    cr_assert_eq(m->topology, ROTOR_TOPO_MESH);
    cr_assert_float_eq(m->tbps, 16, 1e-9);
    const rotor_elk_point *m22 = rotor_elkmesh_link_at(&r, 0, 0, 1);
    cr_assert(m22->fits && m22->topology == ROTOR_TOPO_MESH);
    cr_assert(memcmp(m22->latency_s, m->latency_s, sizeof m->latency_s) == 0);
    cr_assert(memcmp(m22->hop, m->hop, sizeof m->hop) == 0);
    const int F = ROTOR_PRELOAD_FULL;
    cr_assert_gt(m->latency_s[F], a->latency_s[F]);
    cr_assert_float_eq(a->hop[F], a->link[F], 1e-3 * a->link[F]);
    rotor_elkmesh_summary s;
    rotor_elkmesh_summarise(&r, &s);
    cr_assert_eq(s.points, 1);
    cr_assert_eq(s.mesh_slower, 1);
    cr_assert_float_eq(s.hops_per_byte[0], 1, 1e-3);
    cr_assert_gt(s.hops_per_byte[1], 2);
    rotor_elkmesh_free(&r);
}

Test(elkmesh, a_grid_value_that_is_not_positive_is_refused) {
    rotor_chip c = pod4();
    rotor_error err;
    const char *models[] = {"opt-1.3b"};
    const double hbm[] = {16, 0};
    rotor_elkmesh_options o = {.models = models, .nmodels = 1, .batch = 1, .seq = 2048, .hbm_tbps = hbm, .nhbm = 2};
    rotor_elkmesh_result r;
    cr_assert_eq(rotor_elkmesh_run(&o, &c, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "a bandwidth grid: expected 1..16 positive values");
    rotor_elkmesh_free(&r);
}
