/* test_meshbase.c — the mesh baselines (src/sim/meshbase.c, docs/mesh.md
 * "Baselines"): SUMMA, Cannon and the row/column GEMV on a 4 x 4 mesh,
 * their simulated times against figures worked by hand on an idle mesh,
 * their shift, broadcast and reduction counts, the grid choice, the
 * prediction against the simulation over every grid of a small mesh, and
 * the refusals (all-to-all, not a GEMM, too big for the SRAM). */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/sim/meshbase.h"

#define GEMM "C[m,n] += A[m,k] * B[k,n]"

/* A w x h mesh chip with round figures: links of 4 GB/s (250 ps a byte),
 * latency_ns per hop, FP16, and a matrix rate of 8.192e10 FLOP/s per core,
 * so that a 16 x 16 x 16 tile (8,192 FLOPs, cost model v1) takes 100 ns.
 * Its cores compute or exchange, as ipu-mk2's (compute_overlap = 0);
 * overlapping() is the same chip with cores that compute while their links
 * move data. */
static rotor_chip mesh_chip(int64_t w, int64_t h, double latency_ns) {
    rotor_chip c = mk2();
    c.cores_per_chip = w * h;
    c.topology = ROTOR_TOPO_MESH;
    c.mesh_width = w;
    c.mesh_height = h;
    c.link_gbps = 4.0;
    c.link_latency_ns = latency_ns;
    c.matrix_tflops = 8.192e10 * (double)(w * h) / 1e12;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

static rotor_chip overlapping(int64_t w, int64_t h, double latency_ns) {
    rotor_chip c = mesh_chip(w, h, latency_ns);
    c.compute_overlap = 1;
    return c;
}

/* Baseline `kind` of `text` with `dims` on chip, on grid g (p = 0: chosen). */
static rotor_meshbase_result run(const rotor_chip *chip, rotor_meshbase_kind kind, const char *text, const char *dims,
                                 rotor_meshbase_grid g) {
    rotor_expr e = make_expr(text, dims);
    rotor_meshbase_options o = {.grid = g};
    rotor_meshbase_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_meshbase_run(&e, chip, kind, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    return r;
}

static int64_t ps(double s) { return llround(s * 1e12); }

/* ---- Cannon ---------------------------------------------------------------------- */

/* m = k = n = 64 on the 4 x 4 grid: 16 x 16 x 16 blocks of 512 B (128 ns
 * on a link).  No latency: the skew's worst line (row or column 2) moves
 * its blocks 2 places in 2 rounds of disjoint routes, 256 ns; then 4
 * computes of 100 ns and 3 shifts of 128 ns: 256 + 400 + 384 = 1,040 ns. */
Test(meshbase, cannon_on_4x4_takes_skew_plus_4_steps_and_3_shifts) {
    rotor_chip chip = mesh_chip(4, 4, 0);
    rotor_meshbase_result r = run(&chip, ROTOR_MESHBASE_CANNON, GEMM, "m=64,k=64,n=64", (rotor_meshbase_grid){4, 4, 1, false});
    cr_assert_eq(ps(r.simulated_s), 1040000);
    cr_assert_eq(ps(r.predicted_s), 1040000);
    cr_assert_eq(ps(r.compute_s), 400000);
    /* skew: rows and columns 1..3 move all 4 blocks, 2 * 3 * 4 = 24; then 3
     * rotations of A and B on 16 cores, 96 */
    cr_assert_eq(r.shifts, 120);
    cr_assert_eq(r.shift_bytes, 120 * 512);
    cr_assert_eq(r.bytes, r.stats.bytes);
    cr_assert_eq(r.max_hops, 3); /* the wrap-around crosses the whole line */
    cr_assert_eq(r.steps, 4);
    /* three 512 B blocks and the 8 KiB shift buffer (T10's rule for rotations) */
    cr_assert_eq(r.sram_bytes, 3 * 512 + 8192);
    cr_assert_eq(r.tasks, 24 + 64 + 96);
}

/* On a 2 x 2 grid every route is one hop, so latency adds exactly: the
 * skew (10 + 128 ns), 2 computes of 100 ns and one shift (138 ns): 476 ns. */
Test(meshbase, cannon_on_2x2_pays_one_latency_per_shift) {
    rotor_chip chip = mesh_chip(4, 4, 10);
    rotor_meshbase_result r = run(&chip, ROTOR_MESHBASE_CANNON, GEMM, "m=32,k=32,n=32", (rotor_meshbase_grid){2, 2, 1, false});
    cr_assert_eq(ps(r.simulated_s), 476000);
    cr_assert_eq(ps(r.predicted_s), 476000);
    cr_assert_eq(r.shifts, 2 * 2 + 2 * 4);
}

/* With latency on the 4 x 4 grid the wrap-around (3 hops, 158 ns) is longer
 * than a shift (138 ns).  The prediction: skew 2 * (20 + 128) = 296 ns,
 * then 400 ns of compute, 3 shifts of 138 ns and two wrap-arounds' extra
 * 20 ns each: 1,150 ns.  The simulation cannot beat the chain from the
 * latest skew arrival, 296 + 400 + 3 * 138 = 1,110 ns, and lets cores that
 * wait for no wrap-around run ahead (measured: 1,120 ns). */
Test(meshbase, cannon_with_latency_lies_between_its_chain_and_the_prediction) {
    rotor_chip chip = mesh_chip(4, 4, 10);
    rotor_meshbase_result r = run(&chip, ROTOR_MESHBASE_CANNON, GEMM, "m=64,k=64,n=64", (rotor_meshbase_grid){4, 4, 1, false});
    cr_assert_eq(ps(r.predicted_s), 1150000);
    cr_assert(ps(r.simulated_s) >= 1110000 && ps(r.simulated_s) <= 1150000, "%lld ps", (long long)ps(r.simulated_s));
}

/* ---- SUMMA ---------------------------------------------------------------------- */

/* m = k = n = 64 on 4 x 4: 4 panels of 16, owned by column (row) t.  Panel
 * t's multicast along a row takes max(t, 3 - t) hops (3, 2, 2, 3) * 10 ns
 * plus 128 ns; a line's multicasts go one after another, panel t after
 * panel t - 2's compute (double buffering, on a chip whose cores compute
 * while their links move data).  By hand: multicasts end at 158, 306, 454,
 * 612 ns; computes at 258, 406, 554, 712 ns. */
Test(meshbase, summa_on_4x4_streams_4_panels_behind_their_multicasts) {
    rotor_chip chip = overlapping(4, 4, 10);
    rotor_meshbase_result r = run(&chip, ROTOR_MESHBASE_SUMMA, GEMM, "m=64,k=64,n=64", (rotor_meshbase_grid){4, 4, 1, false});
    cr_assert_eq(ps(r.simulated_s), 712000);
    cr_assert_eq(ps(r.predicted_s), 712000);
    cr_assert_eq(r.steps, 4);
    /* per panel, 4 row and 4 column multicasts of 16 x 16 FP16 */
    cr_assert_eq(r.broadcasts, 32);
    cr_assert_eq(r.broadcast_bytes, 32 * 512);
    cr_assert_eq(r.bytes, r.broadcast_bytes);
    cr_assert_eq(r.stats.bytes, 32 * 512); /* a multicast's bytes count once */
    cr_assert_eq(r.shifts, 0);
    cr_assert_eq(r.max_hops, 3);
    /* A, B and C blocks and two panels of A and of B, 16 x 16 each */
    cr_assert_eq(r.sram_bytes, 7 * 512);
}

/* The same where cores compute or exchange: one panel buffer, and panel t's
 * multicast after panel t - 1's compute.  By hand: multicasts end at 158,
 * 406 (258 + 148), 654, 912 ns; computes at 258, 506, 754, 1,012 ns. */
Test(meshbase, summa_without_overlap_sends_each_panel_after_the_last_compute) {
    rotor_chip chip = mesh_chip(4, 4, 10);
    rotor_meshbase_result r = run(&chip, ROTOR_MESHBASE_SUMMA, GEMM, "m=64,k=64,n=64", (rotor_meshbase_grid){4, 4, 1, false});
    cr_assert_eq(ps(r.simulated_s), 1012000);
    cr_assert_eq(ps(r.predicted_s), 1012000);
    cr_assert_eq(r.broadcasts, 32);
    cr_assert_eq(r.sram_bytes, 5 * 512);
}

/* A 2 x 4 grid splits K into 4 columns of A's blocks and 2 rows of B's:
 * the panels are where they meet, 4 of 16; rows' multicasts 4 cores wide,
 * columns' 2 tall. */
Test(meshbase, summa_panels_are_where_a_column_block_meets_a_row_block) {
    rotor_chip chip = overlapping(4, 4, 0);
    rotor_meshbase_result r = run(&chip, ROTOR_MESHBASE_SUMMA, GEMM, "m=32,k=64,n=64", (rotor_meshbase_grid){2, 4, 1, false});
    cr_assert_eq(r.steps, 4);
    cr_assert_eq(r.tile[0], 16);
    cr_assert_eq(r.tile[1], 16);
    cr_assert_eq(r.tile[2], 16);
    cr_assert_eq(r.broadcasts, 4 * (2 + 4));
    /* no latency: every multicast 128 ns, every compute 100 ns; the A and
     * B streams are one panel ahead: 128 + 3 * 128 + 100 */
    cr_assert_eq(ps(r.simulated_s), 612000);
    cr_assert_eq(ps(r.predicted_s), 612000);
}

/* ---- GEMV ----------------------------------------------------------------------- */

/* y[m] += A[m,k] * x[k], m = k = 64 on 4 x 4 in 2 groups of 2 rows: each
 * core holds 32 rows by 8 of k.  The vector's 8 pieces of 16 B go from the
 * first group to the second, 2 to a column one after the other (8 ns);
 * the local GEMV (32 x 16 x 16 padded: 200 ns); the ring along each row,
 * 3 rounds of 16 B (12 ns); the ring along each group's column, 1 round of
 * 8 B (2 ns): 222 ns. */
Test(meshbase, gemv_reduces_along_rows_then_columns) {
    rotor_chip chip = mesh_chip(4, 4, 0);
    rotor_meshbase_result r = run(&chip, ROTOR_MESHBASE_GEMV, "y[m] += A[m,k] * x[k]", "m=64,k=64",
                                  (rotor_meshbase_grid){4, 4, 2, false});
    cr_assert_eq(ps(r.simulated_s), 222000);
    cr_assert_eq(ps(r.predicted_s), 222000);
    cr_assert_eq(r.tile[0], 32);
    cr_assert_eq(r.tile[1], 8);
    cr_assert_eq(r.tile[2], 1);
    cr_assert_eq(r.broadcasts, 8);
    cr_assert_eq(r.broadcast_bytes, 8 * 16);
    /* rows: 4 rows x 3 rounds x 4 transfers of 16 B; columns: 2 groups x 4
     * columns x 1 round x 2 transfers of 8 B */
    cr_assert_eq(r.reductions, 48 + 16);
    cr_assert_eq(r.reduction_bytes, 48 * 16 + 16 * 8);
    /* the folded ring 0, 2, 3, 1 of a row: 2 + 1 + 2 + 1 = 6 hops a round,
     * 3 rounds, 4 rows; a column's ring of 2: 1 hop each */
    cr_assert_eq(r.reduction_hops, 4 * 3 * 6 + 16);
    cr_assert_eq(r.max_hops, 2);
    /* 32 x 8 of A, 8 of x, 32 of y and an 8-element reduction chunk */
    cr_assert_eq(r.sram_bytes, 2 * (256 + 8 + 32 + 8));
}

/* A row of 6 on the folded ring 0, 2, 4, 5, 3, 1: no hop over 2 links,
 * the wrap-around included, where the plain ring's would cross 5. */
Test(meshbase, gemv_rings_are_folded_so_no_hop_crosses_more_than_2_links) {
    rotor_chip chip = mesh_chip(6, 1, 10);
    rotor_meshbase_result r = run(&chip, ROTOR_MESHBASE_GEMV, "y[n] += x[k] * W[k,n]", "k=96,n=48",
                                  (rotor_meshbase_grid){1, 6, 1, false});
    cr_assert_eq(r.max_hops, 2);
    cr_assert_eq(r.reductions, 5 * 6);
    cr_assert_eq(r.reduction_hops, 5 * (2 + 2 + 1 + 2 + 2 + 1));
    cr_assert_eq(r.tile[2], 48); /* n is the output's axis: the matrix is W */
    cr_assert_eq(r.broadcasts, 0); /* one group holds the whole vector */
}

/* ---- the grid ------------------------------------------------------------------- */

/* The chosen grid is the one of least predicted time: no other grid of
 * the mesh predicts less, and predict_only gives the same choice without
 * building a simulator. */
Test(meshbase, the_chosen_grid_predicts_the_least_time) {
    rotor_chip chip = mesh_chip(5, 3, 10);
    const char *dims[3] = {"m=96,k=80,n=64", "m=96,k=80,n=64", "m=1,k=160,n=96"};
    for (int kind = 0; kind < ROTOR_MESHBASE_NKINDS; kind++) {
        rotor_meshbase_result best = run(&chip, (rotor_meshbase_kind)kind, GEMM, dims[kind], (rotor_meshbase_grid){0});
        rotor_expr e = make_expr(GEMM, dims[kind]);
        rotor_meshbase_options o = {.predict_only = true};
        rotor_meshbase_result r;
        rotor_error err = {{0}};
        cr_assert_eq(rotor_meshbase_run(&e, &chip, (rotor_meshbase_kind)kind, &o, &r, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(memcmp(&r.grid, &best.grid, sizeof r.grid), 0);
        cr_assert_eq(r.predicted_s, best.predicted_s);
        cr_assert_eq(r.simulated_s, 0);
        for (int t = 0; t < 2; t++)
            for (int64_t p = 1; p <= (t ? 5 : 3); p++)
                for (int64_t q = 1; q <= (t ? 3 : 5); q++)
                    for (int64_t pk = 1; pk <= p; pk++) {
                        o.grid = (rotor_meshbase_grid){p, q, pk, t == 1};
                        if (rotor_meshbase_run(&e, &chip, (rotor_meshbase_kind)kind, &o, &r, &err) == ROTOR_OK)
                            cr_assert_geq(r.predicted_s, best.predicted_s, "%s grid %lldx%lld/%lld%s",
                                          rotor_meshbase_name((rotor_meshbase_kind)kind), (long long)p, (long long)q,
                                          (long long)pk, t ? "t" : "");
                    }
    }
}

/* The prediction against the simulation on every grid of a 5 x 3 mesh,
 * transposed grids included: SUMMA's recurrence is exact; Cannon's and
 * the GEMV's are exact without latency and within 5 % with it. */
Test(meshbase, predictions_match_the_simulation_on_every_grid) {
    const char *dims[3] = {"m=70,k=90,n=50", "m=70,k=90,n=50", "m=1,k=150,n=70"};
    for (int lat = 0; lat < 2; lat++) {
        rotor_chip chip = mesh_chip(5, 3, lat ? 15 : 0);
        for (int kind = 0; kind < ROTOR_MESHBASE_NKINDS; kind++) {
            rotor_expr e = make_expr(GEMM, dims[kind]);
            int runs = 0;
            for (int t = 0; t < 2; t++)
                for (int64_t p = 1; p <= (t ? 5 : 3); p++)
                    for (int64_t q = 1; q <= (t ? 3 : 5); q++)
                        for (int64_t pk = 1; pk <= p; pk++) {
                            rotor_meshbase_options o = {.grid = {p, q, pk, t == 1}};
                            rotor_meshbase_result r;
                            rotor_error err = {{0}};
                            if (rotor_meshbase_run(&e, &chip, (rotor_meshbase_kind)kind, &o, &r, &err)) continue;
                            runs++;
                            double rel = r.simulated_s / r.predicted_s - 1;
                            bool exact = kind == ROTOR_MESHBASE_SUMMA || !lat;
                            cr_assert(exact ? llabs(ps(r.simulated_s) - ps(r.predicted_s)) <= 2 : fabs(rel) <= 0.05,
                                      "%s %lldx%lld/%lld%s latency %d: simulated %.6f us, predicted %.6f us",
                                      rotor_meshbase_name((rotor_meshbase_kind)kind), (long long)p, (long long)q,
                                      (long long)pk, t ? " transposed" : "", lat, r.simulated_s * 1e6,
                                      r.predicted_s * 1e6);
                        }
            cr_assert_geq(runs, 3, "%s: only %d grids ran", rotor_meshbase_name((rotor_meshbase_kind)kind), runs);
        }
    }
}

/* ---- refusals ------------------------------------------------------------------- */

static void refused(const rotor_chip *chip, rotor_meshbase_kind kind, const char *text, const char *dims,
                    rotor_meshbase_grid g, rotor_status want, const char *msg) {
    rotor_expr e = make_expr(text, dims);
    rotor_meshbase_options o = {.grid = g};
    rotor_meshbase_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_meshbase_run(&e, chip, kind, &o, &r, &err), want, "%s", err.msg);
    cr_assert(strstr(err.msg, msg), "'%s' lacks '%s'", err.msg, msg);
    cr_assert_null(strchr(err.msg, '\n'));
    cr_assert_eq(r.predicted_s, 0);
}

Test(meshbase, an_all_to_all_chip_is_refused) {
    rotor_chip chip = mk2();
    refused(&chip, ROTOR_MESHBASE_SUMMA, GEMM, "m=64,k=64,n=64", (rotor_meshbase_grid){0}, ROTOR_ERR_INPUT,
            "summa: chip ipu-mk2 is all-to-all; the mesh baselines need a 2D mesh");
}

Test(meshbase, what_is_not_a_gemm_is_refused) {
    rotor_chip chip = mesh_chip(4, 4, 0);
    refused(&chip, ROTOR_MESHBASE_CANNON, "C[b,m,n] += A[b,m,k] * B[b,k,n]", "b=2,m=8,k=8,n=8",
            (rotor_meshbase_grid){0}, ROTOR_ERR_INPUT, "cannon: not a GEMM: axis b is in C, A and B (a batch axis)");
    refused(&chip, ROTOR_MESHBASE_SUMMA, "Y[m,n] = X[m,n] + Z[m,n]", "m=8,n=8", (rotor_meshbase_grid){0},
            ROTOR_ERR_INPUT, "summa: not a GEMM");
    refused(&chip, ROTOR_MESHBASE_SUMMA, "O[h] += I[h+r] * W[r]", "h=8,r=3", (rotor_meshbase_grid){0},
            ROTOR_ERR_INPUT, "summa: not a GEMM: dimension 0 of I is a window or a stride");
    refused(&chip, ROTOR_MESHBASE_GEMV, GEMM, "m=8,k=8,n=8", (rotor_meshbase_grid){0}, ROTOR_ERR_INPUT,
            "gemv: needs m = 1 or n = 1 (a matrix times a vector), got 8 and 8");
}

/* Grids refused with one line, each row a case:
 *  - SRAM: 2,048^3 FP16 on 16 cores of 624 KiB: Cannon's smallest blocks,
 *    512 x 512, need 3 x 512 KiB and the 8 KiB shift buffer; no SUMMA grid
 *    fits either; one core cannot hold 512^3's three matrices (exit 1);
 *  - off the mesh (4 rows on a 2-row mesh; Cannon's grid not square), or a
 *    core without work (m = 1 over 2 rows);
 *  - over the task limit: Cannon on 256 x 256 is 256^3 computes, 2 * 255 *
 *    256^2 rotations and 2 * 255 * 256 skew moves, 50,331,136 tasks, over
 *    the 2^24 a baseline builds, refused before any simulator is made with
 *    its prediction: a skew of 128 rounds of 128 ns, 256 computes of 100 ns
 *    and 255 shifts of 128 ns, 74.624 us. */
static const struct {
    int64_t w, h;
    rotor_meshbase_kind kind;
    const char *dims;
    rotor_meshbase_grid grid;
    rotor_status st;
    const char *msg;
} REFUSALS[] = {
    {4, 4, ROTOR_MESHBASE_CANNON, "m=2048,k=2048,n=2048", {0}, ROTOR_ERR_NOFIT,
     "cannon: no grid's tiles fit the SRAM: the smallest need 1581056 bytes per core; the chip has 638976"},
    {4, 4, ROTOR_MESHBASE_SUMMA, "m=2048,k=2048,n=2048", {0}, ROTOR_ERR_NOFIT, "summa: no grid's tiles fit the SRAM"},
    {4, 4, ROTOR_MESHBASE_SUMMA, "m=512,k=512,n=512", {1, 1, 1, false}, ROTOR_ERR_NOFIT,
     "summa: the grid's tiles need 1572864 bytes per core; the chip has 638976"},
    {4, 2, ROTOR_MESHBASE_SUMMA, "m=64,k=64,n=64", {4, 4, 1, false}, ROTOR_ERR_INPUT,
     "summa: grid 4x4 (pk 1) is not one of its grids on the 4x2 mesh"},
    {4, 2, ROTOR_MESHBASE_CANNON, "m=64,k=64,n=64", {2, 4, 1, false}, ROTOR_ERR_INPUT,
     "cannon: grid 2x4 (pk 1) is not one of its grids on the 4x2 mesh"},
    {4, 2, ROTOR_MESHBASE_SUMMA, "m=1,k=64,n=64", {2, 4, 1, false}, ROTOR_ERR_INPUT,
     "summa: grid 2x4 leaves a core without work"},
    {256, 256, ROTOR_MESHBASE_CANNON, "m=4096,k=4096,n=4096", {256, 256, 1, false}, ROTOR_ERR_INPUT,
     "cannon: grid 256x256 (predicted 74.624 us) makes 50331136 tasks, more than the 16777216 simulated"},
};

Test(meshbase, grids_too_big_off_the_mesh_idle_or_too_many_tasks_are_refused) {
    for (size_t i = 0; i < sizeof REFUSALS / sizeof REFUSALS[0]; i++) {
        rotor_chip chip = mesh_chip(REFUSALS[i].w, REFUSALS[i].h, 0);
        refused(&chip, REFUSALS[i].kind, GEMM, REFUSALS[i].dims, REFUSALS[i].grid, REFUSALS[i].st, REFUSALS[i].msg);
    }
}

/* ---- rotor's plan beside the baselines (src/sim/meshcompare.c) ------------------ */

/* rotor_meshbase_compare_run of `text` with `dims` on chip, one thread. */
static rotor_meshbase_compare compare(const rotor_chip *chip, const char *text, const char *dims, bool with_setup) {
    rotor_expr e = make_expr(text, dims);
    rotor_meshbase_compare_options o = {.threads = 1, .with_setup = with_setup};
    rotor_meshbase_compare c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_meshbase_compare_run(&e, chip, &o, &c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

/* m = k = n = 64 on 4 x 4 at 10 ns a hop.  rotor's plan: F_op m=4 n=4,
 * each core's 16 rows of A and 16 columns of B (16 x 64 each, replicated 4
 * times) and its 16 x 16 of C, 4,608 bytes: one 16 x 64 x 16 sub-task of
 * 4 tiles, 400 ns, nothing moves.  SUMMA 1,012 ns (one panel buffer: this
 * chip's cores compute or exchange) and Cannon 1,120 ns (predicted 1,150:
 * the simulation between its chain and the prediction, as above); the GEMV
 * does not apply.  Compiled
 * with its inputs in the even layout, the program's plan is F_op m=2 k=2
 * n=4: 400 ns of compute and the reduction over k, 1 KiB of C halved over
 * one hop (128 + 10 ns), after a setup of 522 ns (the exchange's schedule,
 * rotor_mesh_exchange, its links pipelined): 1,060 ns, slower than SUMMA's
 * 1,012. */
Test(meshbase, compare_on_4x4_puts_rotors_plan_beside_summa_and_cannon) {
    rotor_chip chip = mesh_chip(4, 4, 10);
    rotor_meshbase_compare c = compare(&chip, GEMM, "m=64,k=64,n=64", true);
    cr_assert_eq(c.rotor.plan.fop[0], 4);
    cr_assert_eq(c.rotor.plan.fop[1], 1);
    cr_assert_eq(c.rotor.plan.fop[2], 4);
    cr_assert_eq(c.rotor.info.memory, 2 * (16 * 64 + 64 * 16 + 16 * 16));
    cr_assert_eq(ps(c.predicted_s), 400000);
    cr_assert_eq(ps(c.simulated_s), 400000);
    cr_assert_eq(c.base[ROTOR_MESHBASE_SUMMA].status, ROTOR_OK);
    cr_assert_eq(ps(c.base[ROTOR_MESHBASE_SUMMA].res.simulated_s), 1012000);
    cr_assert_eq(c.base[ROTOR_MESHBASE_SUMMA].res.grid.p, 4);
    cr_assert_eq(ps(c.base[ROTOR_MESHBASE_CANNON].res.simulated_s), 1120000);
    cr_assert_eq(ps(c.base[ROTOR_MESHBASE_CANNON].res.predicted_s), 1150000);
    cr_assert_eq(c.base[ROTOR_MESHBASE_GEMV].status, ROTOR_ERR_INPUT);
    cr_assert_str_eq(c.base[ROTOR_MESHBASE_GEMV].why, "gemv: needs m = 1 or n = 1 (a matrix times a vector), got 64 and 64");
    cr_assert_eq(c.base[ROTOR_MESHBASE_GEMV].res.simulated_s, 0);
    cr_assert_eq(c.applied, 2);
    cr_assert_eq(c.faster, 0);
    cr_assert_eq(c.compiled.plan.fop[0], 2);
    cr_assert_eq(c.compiled.plan.fop[1], 2);
    cr_assert_eq(c.compiled.plan.fop[2], 4);
    cr_assert_eq(ps(c.compiled.setup_s), 522000);
    cr_assert_eq(ps(c.compiled.simulated_s), 522000 + 400000 + 138000);
    cr_assert_eq(ps(c.compiled.predicted_s), ps(c.compiled.simulated_s));
    cr_assert_eq(c.faster_than_compiled, 1); /* SUMMA; Cannon's 1,120 ns is slower */
}

/* The GEMV m = 1, k = n = 256 on 4 x 4, no latency.  rotor: F_op k=4 n=4,
 * a 1 x 64 x 64 sub-task padded to 16 rows, 16 tiles, 1,600 ns, then C's
 * 64 elements reduced over the 4 k-cores, 3/4 of 128 B, 24 ns: 1,624 ns.
 * The GEMV baseline on 4 x 4: the vector's 128 B pieces down the columns
 * (32 ns), the same 1,600 ns, 3 ring rounds of 32 B along the rows (24
 * ns): 1,656 ns.  SUMMA cannot split m: 1 x 4, 4 panels of 1,600 ns, each
 * after its 128 B multicast (32 ns; one panel buffer), 6,528 ns; Cannon 1 x
 * 1, one core's 256 tiles,
 * 25,600 ns.  Compiled, the vector's 24 ns gather comes first: 1,648 ns. */
Test(meshbase, compare_of_a_gemv_on_4x4_runs_all_three_and_rotor_is_fastest) {
    rotor_chip chip = mesh_chip(4, 4, 0);
    rotor_meshbase_compare c = compare(&chip, GEMM, "m=1,k=256,n=256", true);
    cr_assert_eq(c.rotor.plan.fop[1], 4);
    cr_assert_eq(c.rotor.plan.fop[2], 4);
    cr_assert_eq(ps(c.rotor.cost.compute), 1600000);
    cr_assert_eq(ps(c.rotor.cost.reduction), 24000);
    cr_assert_eq(ps(c.simulated_s), 1624000);
    cr_assert_eq(c.map.red_hops, 2); /* the folded ring of 4 along a row */
    cr_assert_eq(ps(c.base[ROTOR_MESHBASE_GEMV].res.simulated_s), 1656000);
    cr_assert_eq(ps(c.base[ROTOR_MESHBASE_SUMMA].res.simulated_s), 6528000);
    cr_assert_eq(c.base[ROTOR_MESHBASE_SUMMA].res.grid.p, 1);
    cr_assert_eq(ps(c.base[ROTOR_MESHBASE_CANNON].res.simulated_s), 25600000);
    cr_assert_eq(c.applied, 3);
    cr_assert_eq(c.faster, 0);
    cr_assert_eq(ps(c.compiled.setup_s), 24000);
    cr_assert_eq(ps(c.compiled.simulated_s), 1648000);
    cr_assert_eq(c.faster_than_compiled, 0);
}

/* 2048^3 on 16 x 16 (docs/mesh.md).  No plan fits without rotating.
 * Where cores compute or exchange, rotor's best is F_op m=2 k=8 n=16 at
 * 98.7 % of the SRAM: 819.2 us of compute and 7 shifts of C's 32 KiB around
 * the 8 k-cores (8.192 us each), each after its step's compute (T10's
 * compute-shift), 876.544 us; SUMMA 16 x 16 does the same compute in 16
 * panels of 51.2 us, each after its 8.192 us multicast: 950.272 us.  Where
 * cores compute while links move data, rotor's plan shifts during the step
 * before (overlap: 102.4 us of compute hide each 8.192 us shift), 819.2 us,
 * and SUMMA hides all but its first multicast, 827.392 us. */
Test(meshbase, compare_of_2048_cubed_on_16x16_with_and_without_overlap, .timeout = 60) {
    rotor_chip chip = mesh_chip(16, 16, 0);
    rotor_meshbase_compare c = compare(&chip, GEMM, "m=2048,k=2048,n=2048", false);
    cr_assert_eq(ps(c.rotor.cost.compute), 819200000);
    cr_assert_eq(ps(c.rotor.cost.comm), 7 * 8192000);
    cr_assert_eq(ps(c.simulated_s), 819200000 + 7 * 8192000);
    cr_assert_eq(ps(c.base[ROTOR_MESHBASE_SUMMA].res.simulated_s), 16 * (51200000 + 8192000));
    cr_assert_eq(c.faster, 0);
    cr_assert_eq(c.compiled.simulated_s, 0); /* without with_setup */
    cr_assert_eq(c.faster_than_compiled, 0);
    chip = overlapping(16, 16, 0);
    c = compare(&chip, GEMM, "m=2048,k=2048,n=2048", false);
    cr_assert(c.rotor.plan.overlap);
    cr_assert_eq(ps(c.rotor.cost.total), 819200000);
    cr_assert_eq(ps(c.simulated_s), 819200000);
    cr_assert_eq(ps(c.base[ROTOR_MESHBASE_SUMMA].res.simulated_s), 819200000 + 8192000);
    cr_assert_eq(c.faster, 0);
}

Test(meshbase, compare_refuses_an_all_to_all_chip_and_what_is_not_a_gemm) {
    rotor_chip flat = mk2(), chip = mesh_chip(4, 4, 0);
    rotor_expr e = make_expr(GEMM, "m=64,k=64,n=64"), b = make_expr("C[b,m,n] += A[b,m,k] * B[b,k,n]", "b=2,m=8,k=8,n=8");
    rotor_meshbase_compare c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_meshbase_compare_run(&e, &flat, NULL, &c, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "baselines: chip ipu-mk2 is all-to-all; the mesh baselines need a 2D mesh (topology mesh)");
    cr_assert_eq(rotor_meshbase_compare_run(&b, &chip, NULL, &c, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "baselines: not a GEMM: axis b is in C, A and B (a batch axis)");
    cr_assert_eq(c.simulated_s, 0);
    cr_assert_eq(c.applied, 0);
}
