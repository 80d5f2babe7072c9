/* test_place.c — sub-tensor placement and the compute-shift schedule
 * (src/op/place.c; T10 §4.4 and Figure 10; cost-model-v1.md "Shifts";
 * docs/placement-sketch.md). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/op/place.h"
#include "rotor/op/sample.h"
#include "fixtures.h"

enum { C_ = 0, A_ = 1, B_ = 2 }; /* MatMul tensors */
enum { M_ = 0, K_ = 1, N_ = 2 }; /* MatMul axes */

static rotor_place *place_ok(const rotor_expr *e, const rotor_plan *p, rotor_plan_info *info) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    cr_assert_eq(rotor_plan_derive(e, &chip, p, info, &err), ROTOR_OK, "%s", err.msg);
    rotor_place *pl;
    cr_assert_eq(rotor_place_make(e, p, info, &pl, &err), ROTOR_OK, "%s", err.msg);
    return pl;
}

static int64_t core_mn(const rotor_place *pl, int64_t m, int64_t n) {
    int64_t c[3] = {m, 0, n};
    return rotor_place_core_at(pl, c);
}

/* The MatMul with extents dims under F_op = fop, A split fa-way and B
 * fb-way along k, placed: its plan in p and info. */
static rotor_place *rotating_k(rotor_expr *e, rotor_plan *p, rotor_plan_info *info, const char *dims,
                               const int64_t *fop, int64_t fa, int64_t fb) {
    matmul_plan(dims, fop[M_], fop[K_], fop[N_], e, p);
    p->ft[A_][K_] = fa, p->ft[B_][K_] = fb;
    return place_ok(e, p, info);
}

/* T10 Figure 10: a 3x3 MatMul (M = K = N = 3) on 3x3 cores, C_j^i fixed on
 * core (i, j); A's row i is split into 3 partitions along k and shifted
 * along the row, B's column j along the column.  The placement is Cannon's
 * skew: core (i, j) starts with A_i^{(i+j) mod 3} and B^{(i+j) mod 3}_j. */
Test(place, fig10_3x3_matmul_on_9_cores_starts_from_cannons_skew) {
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    rotor_place *pl = rotating_k(&e, &p, &info, "m=3,k=3,n=3", (int64_t[]){3, 1, 3}, 3, 3);
    cr_assert_eq(info.total_steps, 3);
    int64_t i0[3] = {0, 0, 0}, j[3], blk[3];
    for (int64_t m = 0; m < 3; m++)
        for (int64_t n = 0; n < 3; n++) {
            int64_t c = core_mn(pl, m, n);
            rotor_place_subtask(pl, c, i0, j);
            cr_assert_eq(j[K_], (m + n) % 3, "core (%lld,%lld) starts at k block %lld", (long long)m,
                         (long long)n, (long long)j[K_]);
            rotor_place_block(pl, A_, j, blk);
            cr_assert_eq(blk[M_], 0); /* A's sub-tensor is row m: block 0 along m */
            cr_assert_eq(blk[K_], (m + n) % 3);
            rotor_place_block(pl, C_, j, blk);
            cr_assert_eq(rotor_place_block_id(pl, C_, blk), 0); /* C never moves */
            /* A's ring is the row of cores, B's the column */
            int64_t pos;
            int64_t ring = rotor_place_ring_of(pl, A_, c, &pos);
            cr_assert_eq(pos, (m + n) % 3);
            for (int64_t q = 0; q < 3; q++) {
                int64_t member = rotor_place_ring_member(pl, A_, ring, q);
                int64_t coord[3];
                rotor_place_coords(pl, member, coord);
                cr_assert_eq(coord[M_], m);
            }
            ring = rotor_place_ring_of(pl, B_, c, &pos);
            for (int64_t q = 0; q < 3; q++) {
                int64_t coord[3];
                rotor_place_coords(pl, rotor_place_ring_member(pl, B_, ring, q), coord);
                cr_assert_eq(coord[N_], n);
            }
        }
    /* every core shifts A and B twice (K - 1) and C never */
    cr_assert_eq(info.shifts[A_], 2);
    cr_assert_eq(info.shifts[B_], 2);
    cr_assert_eq(info.shifts[C_], 0);
    /* step 1: core (0,0) receives A_0^1 from core (0,1), its right neighbour */
    int64_t i1[3];
    rotor_place_loop(pl, 1, i1);
    cr_assert_eq(i1[K_], 1);
    cr_assert_eq(rotor_place_sender(pl, A_, core_mn(pl, 0, 0), i0, i1, false), core_mn(pl, 0, 1));
    cr_assert_eq(rotor_place_sender(pl, B_, core_mn(pl, 0, 0), i0, i1, false), core_mn(pl, 1, 0));
    rotor_place_free(pl);
}

/* The benchmark text's example (placement-sketch.md "Worked case"):
 * F_op = [2,1,4] over (m,k,n); A split 4-way along k (one ring of 4 over n), B
 * 2-way (one ring of 2 over m).  Axis k has the chain 1 | 2 | 4: A's ring is a
 * 2 x 2 torus whose coarse digit is B's.  Every core shifts A 3 times and B
 * once, at the same transitions: with plain cyclic rings half of B's cores
 * would be out of phase. */
Test(place, chain_A4_B2_along_k_nests_rings_so_every_core_shifts_A_3_and_B_1) {
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    rotor_place *pl = rotating_k(&e, &p, &info, "m=64,k=96,n=80", (int64_t[]){2, 1, 4}, 4, 2);
    int64_t radix[8];
    cr_assert_eq(rotor_place_digits(pl, K_, radix), 2);
    cr_assert_eq(radix[0], 2);
    cr_assert_eq(radix[1], 2);
    cr_assert_eq(rotor_place_tensor_digits(pl, A_, K_), 2);
    cr_assert_eq(rotor_place_tensor_digits(pl, B_, K_), 1);
    cr_assert_eq(info.total_steps, 4);
    cr_assert_eq(info.ring_size[A_], 4);
    cr_assert_eq(info.rings[A_], 1);
    cr_assert_eq(info.ring_size[B_], 2);
    int64_t changes[8][3] = {{0}};
    int64_t prev[3], cur[3];
    rotor_place_loop(pl, 0, prev);
    for (int64_t s = 1; s < 4; s++) {
        rotor_place_loop(pl, s, cur);
        for (int t = 0; t < 3; t++) {
            bool ch = rotor_place_changes(pl, t, prev, cur);
            for (int64_t c = 0; c < 8; c++) {
                int64_t jo[3], jn[3], bo[3], bn[3];
                rotor_place_subtask(pl, c, prev, jo);
                rotor_place_subtask(pl, c, cur, jn);
                rotor_place_block(pl, t, jo, bo);
                rotor_place_block(pl, t, jn, bn);
                bool moved = rotor_place_block_id(pl, t, bo) != rotor_place_block_id(pl, t, bn);
                cr_assert_eq(moved, ch, "core %lld tensor %d step %lld out of lockstep", (long long)c, t,
                             (long long)s);
                changes[c][t] += moved;
            }
        }
        memcpy(prev, cur, sizeof cur);
    }
    for (int64_t c = 0; c < 8; c++) {
        cr_assert_eq(changes[c][A_], 3, "core %lld shifts A %lld times", (long long)c, (long long)changes[c][A_]);
        cr_assert_eq(changes[c][B_], 1, "core %lld shifts B %lld times", (long long)c, (long long)changes[c][B_]);
        cr_assert_eq(changes[c][C_], 0);
    }
    cr_assert_eq(info.shifts[A_], 3);
    cr_assert_eq(info.shifts[B_], 1);
    rotor_place_free(pl);
}

/* cost-model-v1.md "Shifts": one tensor split 3-way along m and another 2-way
 * along n take 5 shifts under both loop orders; the boustrophedon walk
 * changes one index by one at every step. */
Test(place, boustrophedon_walk_moves_one_axis_by_one_and_visits_every_subtask) {
    rotor_expr e;
    rotor_plan p;
    matmul_plan("m=6,k=12,n=6", 1, 6, 1, &e, &p); /* P_C = 6 */
    p.ft[C_][M_] = 3, p.ft[C_][N_] = 2;
    p.order[0] = K_, p.order[1] = N_, p.order[2] = M_; /* m innermost */
    rotor_plan_info info;
    rotor_place *pl = place_ok(&e, &p, &info);
    cr_assert_eq(info.shifts[C_], 5); /* 2 + 1 + 2 */
    int64_t want[6][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {2, 0, 1}, {1, 0, 1}, {0, 0, 1}};
    for (int64_t s = 0; s < 6; s++) {
        int64_t i[3];
        rotor_place_loop(pl, s, i);
        cr_assert(i[0] == want[s][0] && i[2] == want[s][2], "step %lld: (%lld,%lld)", (long long)s,
                  (long long)i[0], (long long)i[2]);
    }
    rotor_place_free(pl);
}

/* ---- properties over random operators and random valid plans ------------- */

static const char *const ops[] = {
    PROPERTY_OPS,
    "Y[s] += exp(X[s,d])",
    "Y[s,d] = max(X[s,d], Z[s,d]) * sigmoid(H[d])",
    "C[m,n] += A[m,k,j] * B[k,n]",
    "C[m] += A[m,k] * B[m]",
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

static void random_operator(rotor_rng *r, rotor_expr *e) {
    const char *text = ops[rotor_rng_below(r, NOPS)];
    cr_assert_eq(rotor_expr_parse(text, e, NULL), ROTOR_OK);
    char dims[256];
    cr_assert_eq(bind_random(r, e, 13, dims, sizeof dims), ROTOR_OK, "%s %s", text, dims);
}

/* A random operator (random_operator) and a random valid plan of it on
 * chip (rotor_sample_plan, 48 tries). */
static void random_plan(rotor_rng *r, const rotor_chip *chip, rotor_expr *e, rotor_plan *p, rotor_plan_info *info) {
    rotor_error err = {{0}};
    random_operator(r, e);
    cr_assert_eq(rotor_sample_plan(e, chip, 48, r, p, info, &err), ROTOR_OK, "%s", err.msg);
}

/* Invariants of the placement, step by step: every core computes each of its
 * T sub-tasks once; at every step each ring holds each of its partitions
 * exactly once; at every transition the sender holds what the receiver needs;
 * every core changes blocks exactly shifts(X) times (cost-model-v1.md).  ctx
 * names the case in a failure. */
static void check_schedule(const rotor_place *pl, const rotor_expr *e, const rotor_plan_info *info, const char *ctx) {
    const int64_t T = info->total_steps, N = info->cores;
    char *seen = calloc((size_t)(N * T), 1);
    int64_t *changes = calloc((size_t)(N * e->ntensors), sizeof *changes);
    int64_t *held = malloc((size_t)(N * e->ntensors) * sizeof *held);
    int64_t i[ROTOR_MAX_AXES], prev[ROTOR_MAX_AXES];
    for (int64_t s = 0; s < T; s++) {
        rotor_place_loop(pl, s, i);
        if (s > 0) {
            int moved_axes = 0;
            for (int a = 0; a < e->naxes; a++) {
                int64_t d = i[a] - prev[a];
                cr_assert(d >= -1 && d <= 1);
                moved_axes += d != 0;
            }
            cr_assert_eq(moved_axes, 1, "%s step %lld", ctx, (long long)s);
        }
        for (int64_t c = 0; c < N; c++) {
            int64_t j[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES], lin = 0;
            rotor_place_subtask(pl, c, i, j);
            for (int a = 0; a < e->naxes; a++) lin = lin * info->steps[a] + j[a];
            cr_assert_eq(seen[c * T + lin], 0, "%s: core %lld repeats a sub-task", ctx, (long long)c);
            seen[c * T + lin] = 1;
            for (int t = 0; t < e->ntensors; t++) {
                rotor_place_block(pl, t, j, blk);
                int64_t id = rotor_place_block_id(pl, t, blk);
                if (s > 0) {
                    int64_t from = rotor_place_sender(pl, t, c, prev, i, false);
                    cr_assert_eq(held[from * e->ntensors + t], id, "%s: tensor %d core %lld gets the wrong block",
                                 ctx, t, (long long)c);
                    changes[c * e->ntensors + t] += from != c;
                }
            }
        }
        /* ring check and the held table for the next transition */
        for (int t = 0; t < e->ntensors; t++) {
            int64_t q = info->ring_size[t];
            for (int64_t ring = 0; ring < rotor_place_ring_count(pl, t); ring++) {
                uint64_t mask = 0; /* q <= 48 here */
                for (int64_t pos = 0; pos < q; pos++) {
                    int64_t c = rotor_place_ring_member(pl, t, ring, pos), j[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES];
                    rotor_place_subtask(pl, c, i, j);
                    rotor_place_block(pl, t, j, blk);
                    mask |= 1ull << rotor_place_block_id(pl, t, blk);
                }
                cr_assert_eq(mask, q == 64 ? ~0ull : (1ull << q) - 1, "%s: a ring of tensor %d misses a partition",
                             ctx, t);
            }
        }
        for (int64_t c = 0; c < N; c++) {
            int64_t j[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES];
            rotor_place_subtask(pl, c, i, j);
            for (int t = 0; t < e->ntensors; t++) {
                rotor_place_block(pl, t, j, blk);
                held[c * e->ntensors + t] = rotor_place_block_id(pl, t, blk);
            }
        }
        memcpy(prev, i, sizeof i);
    }
    for (int64_t c = 0; c < N; c++)
        for (int t = 0; t < e->ntensors; t++)
            cr_assert_eq(changes[c * e->ntensors + t], info->shifts[t], "%s: core %lld shifts tensor %d %lld times, spec %lld",
                         ctx, (long long)c, t, (long long)changes[c * e->ntensors + t], (long long)info->shifts[t]);
    free(seen);
    free(changes);
    free(held);
}

Test(place, random_plans_keep_rings_whole_and_shift_exactly_as_counted) {
    const uint64_t seed = 20240531;
    rotor_rng r = {seed};
    rotor_chip chip = mk2();
    int placed = 0, rotating = 0;
    for (int trial = 0; trial < 400; trial++) {
        rotor_expr e;
        rotor_plan p;
        rotor_plan_info info;
        rotor_error err = {{0}};
        random_plan(&r, &chip, &e, &p, &info);
        rotor_place *pl;
        cr_assert_eq(rotor_place_make(&e, &p, &info, &pl, &err), ROTOR_OK,
                     "seed %llu trial %d %s: %s", (unsigned long long)seed, trial, e.text, err.msg);
        placed++;
        rotating += info.rotates;
        char ctx[sizeof e.text + 64];
        snprintf(ctx, sizeof ctx, "seed %llu trial %d %s", (unsigned long long)seed, trial, e.text);
        check_schedule(pl, &e, &info, ctx);
        rotor_place_free(pl);
    }
    cr_assert_eq(placed, 400);
    cr_assert_gt(rotating, 150, "only %d of 400 plans rotate", rotating);
}

/* C[m,n] += A[m,k,j] * B[k,n]: C and B both split along n and both lack j.
 * Summing every ring position counts c_j twice; the placement must still
 * find offsets (here: prime slots) under which B's single ring of 18 and C's
 * rings hold every partition once. */
Test(place, shared_digit_with_shared_lacked_axis_is_still_balanced) {
    rotor_expr e;
    cr_assert_eq(rotor_expr_make("C[m,n] += A[m,k,j] * B[k,n]", "m=6,k=18,j=6,n=12", &e, NULL), ROTOR_OK);
    int m = rotor_expr_axis(&e, "m"), k = rotor_expr_axis(&e, "k"), j = rotor_expr_axis(&e, "j"),
        n = rotor_expr_axis(&e, "n");
    rotor_plan p;
    rotor_plan_init(&e, &p);
    p.fop[m] = 3, p.fop[k] = 2, p.fop[j] = 6, p.fop[n] = 1;
    p.ft[0][n] = 6;                  /* C: ring of 6 in a group of 12 (k, j) */
    p.ft[2][k] = 9, p.ft[2][n] = 2;  /* B: one ring of 18 over (m, j) */
    rotor_plan_info info;
    rotor_place *pl = place_ok(&e, &p, &info);
    cr_assert_eq(info.ring_size[2], 18);
    cr_assert_eq(info.rings[2], 1);
    int64_t i0[ROTOR_MAX_AXES] = {0};
    for (int t = 0; t < 3; t += 2)
        for (int64_t ring = 0; ring < rotor_place_ring_count(pl, t); ring++) {
            bool seen[18] = {false};
            for (int64_t pos = 0; pos < info.ring_size[t]; pos++) {
                int64_t c = rotor_place_ring_member(pl, t, ring, pos), jj[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES];
                rotor_place_subtask(pl, c, i0, jj);
                rotor_place_block(pl, t, jj, blk);
                int64_t id = rotor_place_block_id(pl, t, blk);
                cr_assert(!seen[id]);
                seen[id] = true;
            }
        }
    rotor_place_free(pl);
}

/* rotor_place_make_partitions (the hand-off cache's placements, without
 * rings) gives rotor_place_make's partitions of every tensor on every core
 * at every step, and its sub-tasks, and rotor_place_partitions_at_0 every
 * core's step-0 partition as rotor_place_partition does, on random
 * operators and random valid plans. */
Test(place, partitions_only_placement_places_every_partition_as_the_full_one) {
    rotor_rng r = {20261130};
    rotor_chip chip = mk2();
    int compared = 0;
    for (int trial = 0; trial < 200; trial++) {
        rotor_expr e;
        rotor_plan p;
        rotor_plan_info info;
        rotor_error err = {{0}};
        random_plan(&r, &chip, &e, &p, &info);
        rotor_place *full, *part;
        cr_assert_eq(rotor_place_make(&e, &p, &info, &full, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_place_make_partitions(&e, &p, &info, &part, &err), ROTOR_OK, "%s", err.msg);
        for (int64_t s = 0; s < info.total_steps; s++) {
            int64_t i[ROTOR_MAX_AXES];
            rotor_place_loop(full, s, i);
            for (int64_t c = 0; c < info.cores; c++) {
                int64_t j0[ROTOR_MAX_AXES], j1[ROTOR_MAX_AXES];
                rotor_place_subtask(full, c, i, j0);
                rotor_place_subtask(part, c, i, j1);
                cr_assert(!memcmp(j0, j1, (size_t)e.naxes * sizeof *j0), "trial %d core %lld step %lld", trial,
                          (long long)c, (long long)s);
                for (int t = 0; t < e.ntensors; t++) {
                    int64_t o0[ROTOR_MAX_DIMS], o1[ROTOR_MAX_DIMS];
                    rotor_place_partition(full, t, c, s, o0);
                    rotor_place_partition(part, t, c, s, o1);
                    cr_assert(!memcmp(o0, o1, (size_t)e.tensors[t].ndims * sizeof *o0),
                              "trial %d %s: tensor %d core %lld step %lld", trial, e.text, t, (long long)c,
                              (long long)s);
                    compared++;
                }
            }
        }
        for (int t = 0; t < e.ntensors; t++) { /* every core's step 0 at once */
            int nd = e.tensors[t].ndims;
            int64_t *all = malloc((size_t)(info.cores * nd + 1) * sizeof *all);
            rotor_place_partitions_at_0(part, t, all);
            for (int64_t c = 0; c < info.cores; c++) {
                int64_t o[ROTOR_MAX_DIMS];
                rotor_place_partition(full, t, c, 0, o);
                cr_assert(!memcmp(o, all + c * nd, (size_t)nd * sizeof *o), "trial %d %s: tensor %d core %lld",
                          trial, e.text, t, (long long)c);
            }
            free(all);
        }
        rotor_place_free(full);
        rotor_place_free(part);
    }
    cr_assert_gt(compared, 10000);
}

/* ---- Conformer's positional attention scores (issue 45) ------------------- */

/* Conformer-M's l*.mhsa.scores_pos, S[b,h,m,n] += (Q[b,h,m,k] + V[h,k]) *
 * P[h,k,n] (or scores_content, whose keys K[b,h,k,n] keep the batch), under
 * F_op (b, h, m, n) and k split fq / fv / fp ways in Q / V / P, loop order b
 * h m n k: the operator in e and the plan in p. */
static const char scores_pos[] = "S[b,h,m,n] += (Q[b,h,m,k] + V[h,k]) * P[h,k,n]",
                  scores_content[] = "S[b,h,m,n] += (Q[b,h,m,k] + V[h,k]) * P[b,h,k,n]";
enum { S_ = 0, Q_ = 1, V_ = 2, P_ = 3 };

static void scores_plan(const char *text, rotor_expr *e, rotor_plan *p, const char *dims, const int64_t *fop,
                        int64_t fq, int64_t fv, int64_t fp) {
    cr_assert_eq(rotor_expr_make(text, dims, e, NULL), ROTOR_OK);
    const char *names[4] = {"b", "h", "m", "n"};
    int k = rotor_expr_axis(e, "k");
    rotor_plan_init(e, p);
    for (int x = 0; x < 4; x++) p->fop[rotor_expr_axis(e, names[x])] = fop[x];
    p->ft[Q_][k] = fq, p->ft[V_][k] = fv, p->ft[P_][k] = fp;
    int l = 0;
    for (int x = 0; x < 4; x++) p->order[l++] = rotor_expr_axis(e, names[x]);
    p->order[l] = k;
}

/* The plan the exact search returned for l0.mhsa.scores_pos at batch 16 and
 * op/place.c could not lay out (F_op b4 h4 m23 n4, k 4/8/4 in Q/V/P): Q's
 * rings of 4 run along n and P's along (b, m), so the coarse k digit must be
 * a bijection of c_n and balanced over c_b, and V's fine digit needs a
 * coordinate its coarse digit does not already spend.  Private slots cannot
 * give that (Q takes both slots of n, P both of b); independent ones can
 * (d1 = c_b xor c_n, d2 = c_b mod 2).  It now places, with the spec's rings
 * and shifts, at the zoo's extents and on 16 cores. */
Test(place, conformer_scores_pos_k_split_4_8_4_places_with_rings_and_shifts_as_counted) {
    struct {
        const char *dims;
        int64_t fop[4], cores, rings_v, rings_p;
    } cases[] = {
        {"b=16,h=4,m=249,k=64,n=249", {4, 4, 23, 4}, 1472, 46, 23},
        {"b=4,h=1,m=1,k=8,n=4", {4, 1, 1, 4}, 16, 2, 1},
    };
    for (int c = 0; c < 2; c++) {
        rotor_expr e;
        rotor_plan p;
        rotor_plan_info info;
        scores_plan(scores_pos, &e, &p, cases[c].dims, cases[c].fop, 4, 8, 4);
        rotor_place *pl = place_ok(&e, &p, &info);
        cr_assert_eq(info.cores, cases[c].cores);
        cr_assert_eq(info.total_steps, 8);
        cr_assert_eq(info.ring_size[Q_], 4);
        cr_assert_eq(info.rings[Q_], 1);
        cr_assert_eq(info.ring_size[V_], 8);
        cr_assert_eq(info.rings[V_], cases[c].rings_v);
        cr_assert_eq(info.ring_size[P_], 4);
        cr_assert_eq(info.rings[P_], cases[c].rings_p);
        /* k innermost, 8 steps: Q and P change blocks every 2 steps, V every step */
        cr_assert_eq(info.shifts[Q_], 3);
        cr_assert_eq(info.shifts[V_], 7);
        cr_assert_eq(info.shifts[P_], 3);
        cr_assert_eq(info.shifts[S_], 0);
        check_schedule(pl, &e, &info, cases[c].dims);
        if (c == 1) { /* docs/placement.md: d1 = c_b xor c_n, d2 = c_b mod 2, j_k = 2 d1 + d2 at step 0 */
            int b = rotor_expr_axis(&e, "b"), n = rotor_expr_axis(&e, "n"), k = rotor_expr_axis(&e, "k");
            for (int64_t core = 0; core < 16; core++) {
                int64_t coord[ROTOR_MAX_AXES], i0[ROTOR_MAX_AXES] = {0}, j[ROTOR_MAX_AXES];
                rotor_place_coords(pl, core, coord);
                rotor_place_subtask(pl, core, i0, j);
                cr_assert_eq(j[k], 2 * (coord[b] ^ coord[n]) + coord[b] % 2, "core (b %lld, n %lld)",
                             (long long)coord[b], (long long)coord[n]);
            }
        }
        rotor_place_free(pl);
    }
}

/* The four frontier plans of l0.mhsa.scores_content at batch 21 (Conformer-M's
 * content scores, keys K[b,h,k,n]) that main refused in placement ("rotor
 * verify --pareto", b=21 h=4 m=249 k=64 n=249): Q's ring along n, K's along
 * m, U's along (b, m, n), k split in all three.  They place, with the
 * schedule's invariants. */
Test(place, conformer_scores_content_b21_frontier_plans_place) {
    struct {
        int64_t fop[5];       /* b h m k n */
        int64_t sb, q[2], u, kk[2]; /* S's f_t b; Q's b, k; U's k; K's b, k */
        const char *order;
    } cases[] = {
        {{21, 4, 4, 1, 4}, 1, {1, 2}, 16, {1, 4}, "bhmnk"},
        {{21, 4, 4, 1, 4}, 1, {1, 4}, 8, {1, 4}, "bhmnk"},
        {{21, 4, 4, 1, 4}, 1, {1, 4}, 16, {1, 4}, "bhmnk"},
        {{11, 4, 4, 2, 4}, 2, {2, 2}, 16, {2, 2}, "hmnbk"},
    };
    for (int c = 0; c < 4; c++) {
        rotor_expr e;
        cr_assert_eq(rotor_expr_make(scores_content, "b=21,h=4,m=249,k=64,n=249", &e, NULL), ROTOR_OK);
        int b = rotor_expr_axis(&e, "b"), k = rotor_expr_axis(&e, "k");
        rotor_plan p;
        rotor_plan_init(&e, &p);
        for (int x = 0; x < 5; x++) {
            char name[2] = {"bhmkn"[x], '\0'};
            p.fop[rotor_expr_axis(&e, name)] = cases[c].fop[x];
            name[0] = cases[c].order[x];
            p.order[x] = rotor_expr_axis(&e, name);
        }
        p.ft[S_][b] = cases[c].sb;
        p.ft[Q_][b] = cases[c].q[0], p.ft[Q_][k] = cases[c].q[1];
        p.ft[V_][k] = cases[c].u;
        p.ft[P_][b] = cases[c].kk[0], p.ft[P_][k] = cases[c].kk[1];
        rotor_plan_info info;
        rotor_place *pl = place_ok(&e, &p, &info);
        char ctx[32];
        snprintf(ctx, sizeof ctx, "content plan %d", c);
        check_schedule(pl, &e, &info, ctx);
        rotor_place_free(pl);
    }
}

/* Property: every valid plan of the attention-score family (scores_pos and
 * scores_content, drawn alike) places and keeps the schedule's invariants
 * (check_schedule).  F_op is drawn over (b, h, m, n), k is split along a
 * chain in Q, V and P, and Q and P may also rotate along m and n (S cannot:
 * k is not split, so S has no sharers); rotor_plan_derive decides validity.
 * The draws include the case above's kind ("chained": all three inputs
 * rotating along k, V's ring longer than Q's, Q's one ring spanning its
 * group).  Without the independent-slot search trial 5322 (scores_pos, F_op
 * b6 h2 m2 n6, k 6/24/12) is refused. */
Test(place, attention_score_plans_all_place, .timeout = 120) {
    static const int64_t fops[] = {1, 2, 3, 4, 6, 8}, chain[] = {1, 2, 4, 8, 3, 6, 12, 24};
    rotor_rng r = {20261130};
    rotor_chip chip = mk2();
    int placed = 0, chained = 0;
    for (int trial = 0; trial < 100000 && placed < 1000; trial++) {
        rotor_expr e;
        rotor_plan p;
        int64_t fop[4] = {fops[rotor_rng_below(&r, 6)], 1 + rotor_rng_below(&r, 2), 1 + rotor_rng_below(&r, 3),
                          fops[rotor_rng_below(&r, 6)]};
        int base = rotor_rng_below(&r, 2) * 4; /* powers of 2, or 3 x powers of 2 */
        int64_t fq = chain[base + rotor_rng_below(&r, 4)], fv = chain[base + rotor_rng_below(&r, 4)],
                fp = chain[base + rotor_rng_below(&r, 4)];
        bool content = rotor_rng_below(&r, 2);
        scores_plan(content ? scores_content : scores_pos, &e, &p, "b=12,h=4,m=6,k=48,n=12", fop, fq, fv, fp);
        p.ft[Q_][rotor_expr_axis(&e, "m")] = 1 + rotor_rng_below(&r, 2);
        p.ft[P_][rotor_expr_axis(&e, "n")] = 1 + rotor_rng_below(&r, 2);
        rotor_plan_info info;
        rotor_error err = {{0}};
        if (rotor_plan_derive(&e, &chip, &p, &info, &err) != ROTOR_OK) continue;
        rotor_place *pl;
        char ctx[160];
        snprintf(ctx, sizeof ctx, "trial %d %s F_op b%lld h%lld m%lld n%lld k %lld/%lld/%lld", trial,
                 content ? "scores_content" : "scores_pos", (long long)fop[0], (long long)fop[1], (long long)fop[2],
                 (long long)fop[3], (long long)fq, (long long)fv, (long long)fp);
        cr_assert_eq(rotor_place_make(&e, &p, &info, &pl, &err), ROTOR_OK, "%s: %s", ctx, err.msg);
        check_schedule(pl, &e, &info, ctx);
        rotor_place_free(pl);
        placed++;
        chained += fq > 1 && fp > 1 && fv > fq && info.sharing[Q_] == info.ring_size[Q_];
    }
    cr_assert_eq(placed, 1000, "placed %d, chained %d", placed, chained);
    cr_assert_gt(chained, 10, "only %d plans of the hard kind", chained);
}
