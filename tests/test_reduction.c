/* test_reduction.c — the reduction's groups (src/op/reduction.c), the one
 * rule the energy model (compile/energy.c) and the replay (sim/replay.c)
 * both follow (cost-model-v1.md "Reduction"; T10 §4.2). */
#include <criterion/criterion.h>

#include "rotor/base/topology.h"
#include "rotor/compile/energy.h"
#include "rotor/op/place.h"
#include "rotor/op/reduction.h"
#include "fixtures.h"

enum { M_ = 0, K_ = 1, N_ = 2 }; /* MatMul axes */

/* C[m,n] += A[m,k] * B[k,n], 4 x 4 x 4, F_op = (m 2, k 2, n 1), every f_t 1:
 * 4 cores, no rotation; C lacks k, so its sharing degree is 2 and R_Y = 2. */
static void split_k_plan(const rotor_chip *chip, rotor_expr *e, rotor_plan *p, rotor_plan_info *info) {
    *e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=4,k=4,n=4");
    rotor_plan_init(e, p);
    p->fop[M_] = 2, p->fop[K_] = 2, p->fop[N_] = 1;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_plan_derive(e, chip, p, info, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(info->cores, 4);
    cr_assert_eq(info->rings[0], 2);
    cr_assert_eq(info->total_steps, 1);
}

/* The groups of that plan after its last (only) step, in pairs[8]; *pl
 * stays placed for the caller to read coordinates from. */
static rotor_place *groups_of(const rotor_chip *chip, rotor_expr *e, rotor_plan *p, rotor_plan_info *info,
                              int64_t *pairs) {
    split_k_plan(chip, e, p, info);
    rotor_place *pl;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_place_make(e, p, info, &pl, &err), ROTOR_OK, "%s", err.msg);
    int64_t i[ROTOR_MAX_AXES] = {0};
    rotor_reduction_groups(pl, i, pairs);
    return pl;
}

/* The 4 cores form 2 groups of R_Y = 2: the members of a group hold the same
 * m coordinate (the same rows of C) and differ in k. */
Test(reduction, a_k_split_matmul_on_4_cores_forms_2_groups_of_2_cores_sharing_their_rows_of_c) {
    rotor_chip chip = mk2();
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    int64_t pairs[8];
    rotor_place *pl = groups_of(&chip, &e, &p, &info, pairs);
    for (int g = 0; g < 2; g++) {
        int64_t a = pairs[2 * (2 * g) + 1], b = pairs[2 * (2 * g + 1) + 1], ca[ROTOR_MAX_AXES], cb[ROTOR_MAX_AXES];
        cr_assert_eq(pairs[2 * (2 * g)], pairs[2 * (2 * g + 1)], "one key per group");
        cr_assert_lt(a, b, "members in core order");
        rotor_place_coords(pl, a, ca);
        rotor_place_coords(pl, b, cb);
        cr_assert_eq(ca[M_], cb[M_]);
        cr_assert_neq(ca[K_], cb[K_]);
    }
    cr_assert_neq(pairs[0], pairs[4], "two groups");
    rotor_place_free(pl);
}

/* The energy model counts the ring over those groups: R_Y - 1 = 1 round in
 * which each of the 4 cores sends ceil(bytes(C) / 2) to the next member of
 * its group.  C's partition is 2 x 4 elements of 2 bytes: 16 bytes, pieces
 * of 8; on a 4 x 4 mesh each send pays the XY hops between the members. */
Test(reduction, the_energy_models_reduce_scatter_runs_over_the_groups) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    const char *set[] = {"cores_per_chip=16", "topology=mesh", "mesh_width=4", "mesh_height=4"};
    for (int k = 0; k < 4; k++) cr_assert_eq(rotor_chip_set(&chip, set[k], &err), ROTOR_OK, "%s", err.msg);
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    int64_t pairs[8], want = 0;
    rotor_place *pl = groups_of(&chip, &e, &p, &info, pairs);
    cr_assert_eq(info.bytes[0], 16);
    for (int g = 0; g < 4; g += 2) /* each member sends to the other */
        want += 2 * 8 * rotor_topo_hops(&chip, pairs[2 * g + 1], pairs[2 * (g + 1) + 1]);
    rotor_place_free(pl);
    rotor_energy_counts c = {0};
    cr_assert_eq(rotor_energy_plan(&e, &p, &info, &chip, &c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.byte_hops, want, "no shifts: every byte-hop is the reduction's");
    cr_assert_gt(want, 0);
}
