/* test_vgmmesh.c — the VGM baseline on a 2D mesh (src/compile/vgmmesh.c,
 * docs/vgm.md "On a 2D mesh", issue 41): Roller's tile timed over a 2 x 2
 * mesh's XY routes by hand, the factorised multicast trees and unicasts
 * against a brute-force union of routes on random small meshes, the
 * oracle's bisection term, and all-to-all unchanged to the last digit. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/vgmint.h"
#include "fixtures.h"
#include "rotor/compile/vgm.h"
#include "rotor/model/group.h"
#include "rotor/model/zoo.h"
#include "rotor/pipeline/pipeline.h"

static void set(rotor_chip *chip, const char *assignment) {
    rotor_error err;
    cr_assert_eq(rotor_chip_set(chip, assignment, &err), ROTOR_OK, "%s", err.msg);
}

/* ipu-mk2's cores cut to a w x h mesh, link latency alpha_ns. */
static rotor_chip mesh_chip(int64_t w, int64_t h, double alpha_ns) {
    rotor_chip chip = mk2();
    char s[64];
    snprintf(s, sizeof s, "cores_per_chip=%lld", (long long)(w * h));
    set(&chip, s);
    set(&chip, "topology=mesh");
    snprintf(s, sizeof s, "mesh_width=%lld", (long long)w);
    set(&chip, s);
    snprintf(s, sizeof s, "mesh_height=%lld", (long long)h);
    set(&chip, s);
    snprintf(s, sizeof s, "link_latency_ns=%g", alpha_ns);
    set(&chip, s);
    return chip;
}

/* One MatMul C[m,n] += A[m,k] * B[k,n], m = n = 64, k = 16 (test_vgm.c's
 * hand-worked case), Roller's baseline of it on chip. */
static void roller_matmul(const rotor_chip *chip, rotor_graph *g, rotor_vgm_result *v) {
    rotor_graph_init(g, "one-matmul");
    int a = add_value2d(g, "a", 64, 16, ROTOR_ROLE_ACTIVATION);
    int b = add_value2d(g, "b", 16, 64, ROTOR_ROLE_WEIGHT);
    int c = add_value2d(g, "c", 64, 64, ROTOR_ROLE_ACTIVATION);
    add_matmul(g, "mm", a, b, c, 64, 16, 64);
    g->values[c].is_output = true;
    rotor_error err;
    cr_assert_eq(rotor_vgm_compile(g, chip, ROTOR_VGM_ROLLER, v, &err), ROTOR_OK, "%s", err.msg);
}

/* Roller's tile of that MatMul on a w x h mesh with link latency alpha:
 * (32, 16, 32), one wave of one round, its load through a busiest link of
 * load_bytes and a longest route of load_hops, its store likewise. */
static void by_hand(int64_t w, int64_t h, double alpha, double load_bytes, int load_hops, double store_bytes,
                    int store_hops) {
    double beta = 5.5e9;
    rotor_chip chip = mesh_chip(w, h, alpha * 1e9);
    rotor_graph g;
    rotor_vgm_result v;
    roller_matmul(&chip, &g, &v);
    const rotor_vgm_op *r = &v.ops[0];
    cr_assert(r->tile[0] == 32 && r->tile[1] == 16 && r->tile[2] == 32 && r->rounds == 1 && r->waves == 1);
    cr_assert_float_eq(r->load_s, load_bytes / beta + load_hops * alpha, 1e-20, "%g", r->load_s);
    cr_assert_float_eq(r->store_s, store_bytes / beta + store_hops * alpha, 1e-20, "%g", r->store_s);
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

/* test_vgm.c's tile (32, 16, 32) on a 2 x 2 mesh, by hand.  Core i runs
 * task (m, n) = (i / 2, i % 2) and sits at (i % 2, i / 2).
 *   A (64 x 16, 512 B a core): the m0 tile is on cores 0 and 1, read by
 *   0 and 1: 512 B each way on row 0's link; m1 likewise on row 1.
 *   B (16 x 64, 4 rows a core): each core holds 256 B of each column half.
 *   The n0 half is read by cores 0 and 2 (column 0): core 1's part goes
 *   west on row 0 (256 B), then south down column 0 to core 2; core 0's
 *   south too: column 0's south link carries 512 B, its north 512 B, and
 *   row 0's west link 256 B.  n1 mirrors it on column 1 and the east links.
 *   Busiest: a row link, 512 (A) + 256 (B) = 768 B; the longest route,
 *   core 1 to core 2, 2 hops.  (All-to-all: 1280 B a core's port.)
 *   C (64 x 64, 16 rows a core): each core keeps half its tile and sends
 *   1024 B to its row neighbour: 1024 B on each row link, 1 hop. */
Test(vgmmesh, roller_tile_on_a_2x2_mesh_by_hand) {
    by_hand(2, 2, 0, 768, 2, 1024, 1);
    by_hand(2, 2, 1e-6, 768, 2, 1024, 1);
}

/* The same on a 4 x 1 mesh: core i at (i, 0).  A's m0 tile (cores 0, 1)
 * goes 512 B each way on link 0-1, m1 on link 2-3.  B's n0 half is read by
 * cores 0 and 2, each owner's 256 B once down the union of its routes:
 * west 1->0 carries owners 1, 2, 3 (768 B), 2->1 owners 2, 3, 3->2 owner 3;
 * east 0->1 owner 0, 1->2 owners 0, 1.  n1 (readers 1 and 3) mirrors it:
 * east 2->3 carries owners 0, 1, 2 (768 B).  Busiest: west 1->0 and east
 * 2->3, 512 (A) + 768 = 1280 B; longest route 3 hops (owner 3 to reader 0).
 * C: each core sends 1024 B to its neighbour, 1 hop. */
Test(vgmmesh, roller_tile_on_a_4x1_mesh_by_hand) {
    by_hand(4, 1, 1e-6, 1280, 3, 1024, 1);
}

/* ---- the factorised trees against a brute-force union of routes ---------- */

/* links[4 * core + d]: d = 0 east, 1 west, 2 south, 3 north, as
 * rotor_mesh_route; marks the XY route src -> dst in mark, returns hops. */
static int64_t route(int64_t w, int64_t src, int64_t dst, unsigned char *mark) {
    int64_t x = src % w, y = src / w, tx = dst % w, ty = dst / w, hops = 0;
    for (; x != tx; hops++) {
        int d = tx > x ? 0 : 1;
        mark[4 * (y * w + x) + d] = 1;
        x += d ? -1 : 1;
    }
    for (; y != ty; hops++) {
        int d = ty > y ? 2 : 3;
        mark[4 * (y * w + x) + d] = 1;
        y += d == 3 ? -1 : 1;
    }
    return hops;
}

/* A random owner range on n cores: o0 <= o1, integer bytes. */
static void random_owners(int64_t n, int64_t *o, double *share) {
    o[0] = rand() % n;
    o[1] = o[0] + rand() % (n - o[0] < 6 ? n - o[0] : 6 + rand() % (n - o[0]));
    if (o[1] >= n) o[1] = n - 1;
    for (int k = 0; k < 3; k++) share[k] = 1 + rand() % 100;
    if (o[0] == o[1]) share[1] = share[2] = 0;
}

static double owner_bytes(const int64_t *o, const double *share, int64_t c) {
    return c == o[0] ? share[0] : c == o[1] ? share[2] : share[1];
}

/* Property: on random meshes up to 7 x 7, a round of random multicast
 * groups (owner ranges to reader sets) and unicasts (a writer to an owner
 * range) loads the busiest link and routes as far as the brute force does:
 * each owner's bytes on every link of the union of its XY routes to the
 * group's readers once, each unicast's on its route.  The seed is printed
 * on failure. */
Test(vgmmesh, factorised_loads_equal_the_union_of_routes) {
    unsigned seed = 41;
    srand(seed);
    for (int trial = 0; trial < 400; trial++) {
        int64_t w = 1 + rand() % 7, h = 1 + rand() % 7, n = w * h;
        rotor_chip chip = mesh_chip(w, h, 1);
        vgm_mesh *m;
        rotor_error err;
        cr_assert_eq(vgm_mesh_new(&chip, &m, &err), ROTOR_OK, "%s", err.msg);
        double *load = calloc((size_t)(4 * n), sizeof *load);
        unsigned char *mark = malloc((size_t)(4 * n));
        int64_t *readers = malloc(sizeof *readers * (size_t)n), hops = 0;
        int groups = 1 + rand() % 3, unicasts = rand() % 3;
        for (int gi = 0; gi < groups; gi++) {
            int64_t nr = 0;
            for (int64_t c = 0; c < n; c++)
                if (rand() % 3 == 0) readers[nr++] = c;
            if (!nr) readers[nr++] = rand() % n;
            vgm_mesh_readers(m, readers, nr);
            for (int s = 0, ns = 1 + rand() % 3; s < ns; s++) {
                int64_t o[2];
                double share[3];
                random_owners(n, o, share);
                vgm_mesh_multicast(m, o[0], o[1], share[0], share[1], share[2]);
                for (int64_t c = o[0]; c <= o[1]; c++) {
                    memset(mark, 0, (size_t)(4 * n));
                    for (int64_t i = 0; i < nr; i++) {
                        int64_t hp = route(w, c, readers[i], mark);
                        if (hp > hops) hops = hp;
                    }
                    for (int64_t l = 0; l < 4 * n; l++) load[l] += mark[l] * owner_bytes(o, share, c);
                }
            }
        }
        for (int u = 0; u < unicasts; u++) {
            int64_t src = rand() % n, o[2];
            double share[3];
            random_owners(n, o, share);
            vgm_mesh_unicast(m, src, o[0], o[1], share[0], share[1], share[2]);
            for (int64_t c = o[0]; c <= o[1]; c++) {
                memset(mark, 0, (size_t)(4 * n));
                int64_t hp = route(w, src, c, mark);
                if (hp > hops) hops = hp;
                for (int64_t l = 0; l < 4 * n; l++) load[l] += mark[l] * owner_bytes(o, share, c);
            }
        }
        double most = 0, got;
        int64_t got_hops;
        for (int64_t l = 0; l < 4 * n; l++)
            if (load[l] > most) most = load[l];
        double t = vgm_mesh_round(m, &got, &got_hops);
        cr_assert_float_eq(got, most, 1e-6, "seed %u trial %d (%lldx%lld): busiest %g, brute force %g", seed, trial,
                           (long long)w, (long long)h, got, most);
        cr_assert_eq(got_hops, hops, "seed %u trial %d: hops %lld, brute force %lld", seed, trial,
                     (long long)got_hops, (long long)hops);
        double want = hops > 0 ? most / 5.5e9 + (double)hops * 1e-9 : 1e-9;
        cr_assert_float_eq(t, want, 1e-18, "seed %u trial %d", seed, trial);
        /* the round's loads start again: an empty round is its barrier */
        cr_assert_float_eq(vgm_mesh_round(m, &got, &got_hops), 1e-9, 1e-21);
        cr_assert_eq(got_hops, 0);
        free(load), free(mark), free(readers);
        vgm_mesh_free(m);
    }
}

/* A mesh of two chips has no route between them: the library refuses. */
Test(vgmmesh, a_mesh_of_two_chips_is_refused) {
    rotor_chip chip = mesh_chip(2, 2, 1);
    set(&chip, "chips=2");
    vgm_mesh *m;
    rotor_error err;
    cr_assert_eq(vgm_mesh_new(&chip, &m, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "the mesh pricing takes one chip's mesh"), "%s", err.msg);
}

/* ---- the oracle and all-to-all ------------------------------------------- */

static void bert_layer(rotor_graph *g) {
    rotor_zoo_options zo = {.batch = 1, .layers = 1};
    rotor_graph raw;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("bert-base", &zo, &raw, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_group(&raw, g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&raw);
}

/* On all-to-all nothing moved: BERT-Base's layer on ipu-mk2 gives the
 * figures `rotor compile bert-base --layers 1 --compare` printed before the
 * mesh was priced (27.241 us Roller, 22.840 us oracle), to the last digit. */
Test(vgmmesh, all_to_all_is_unchanged) {
    rotor_graph g;
    bert_layer(&g);
    rotor_chip chip = mk2();
    rotor_vgm_result r, o;
    rotor_error err;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, ROTOR_VGM_ROLLER, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_vgm_compile(&g, &chip, ROTOR_VGM_ORACLE, &o, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.total_s, 2.7241199290181812e-05, "%.17g", r.total_s);
    cr_assert_eq(o.total_s, 2.284020913316621e-05, "%.17g", o.total_s);
    rotor_vgm_result_free(&r);
    rotor_vgm_result_free(&o);
    rotor_graph_free(&g);
}

/* BERT-Base's layer on the 32 x 46 mesh (ipu-mk2's cores and links): the
 * figures `rotor compile bert-base --layers 1 --chip ipu-mk2-mesh --compare`
 * prints, pinned (the loads behind them are the ones the property above
 * checks; the hand-worked cases, their price).  Roller takes 4.5x its
 * all-to-all time: its hot spots now share links several hops long.  The
 * oracle still bounds Roller operator by operator. */
Test(vgmmesh, bert_layer_on_the_32x46_mesh) {
    rotor_graph g;
    bert_layer(&g);
    rotor_chip mesh = mk2();
    set(&mesh, "topology=mesh");
    set(&mesh, "mesh_width=32");
    set(&mesh, "mesh_height=46");
    rotor_vgm_result r, o;
    rotor_error err;
    cr_assert_eq(rotor_vgm_compile(&g, &mesh, ROTOR_VGM_ROLLER, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_vgm_compile(&g, &mesh, ROTOR_VGM_ORACLE, &o, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(r.total_s, 1.2384033350437652e-04, 1e-15, "%.17g", r.total_s);
    cr_assert_float_eq(o.total_s, 4.8205745623272729e-05, 1e-15, "%.17g", o.total_s);
    cr_assert_gt(r.total_s, 4 * 2.7241199290181812e-05);
    for (int i = 0; i < g.nops; i++)
        cr_assert_leq(o.ops[i].total_s, r.ops[i].total_s, "op %s", g.ops[i].name);
    rotor_vgm_result_free(&r);
    rotor_vgm_result_free(&o);
    rotor_graph_free(&g);
}

/* The pipeline runs the VGM on a mesh (it refused before the mesh was
 * priced): BERT-Base's layer at seq 32 on 16 x 16, as tests/cli_mesh.sh
 * prints it; a mesh of two chips is still refused before any work. */
Test(vgmmesh, the_pipeline_prices_the_vgm_on_one_mesh_and_refuses_two_chips) {
    rotor_chip chip = mk2();
    set(&chip, "cores_per_chip=256");
    set(&chip, "topology=mesh");
    set(&chip, "mesh_width=16");
    set(&chip, "mesh_height=16");
    rotor_pipeline_options po = {.model = "bert-base", .zoo = {.layers = 1, .seq = 32, .batch = 1}, .vgm = true};
    rotor_pipeline pp;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &pp, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(pp.vgm_status, ROTOR_OK, "%s", pp.vgm_err.msg);
    cr_assert_float_eq(pp.vgm.total_s, 177.500e-6, 0.0005e-6, "%.17g", pp.vgm.total_s);
    rotor_pipeline_free(&pp);
    set(&chip, "interchip_gbps=100");
    set(&chip, "chips=2");
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &pp, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "topology mesh: the VGM baseline prices one chip's mesh, not 2 chips"), "%s", err.msg);
    rotor_pipeline_free(&pp);
}
