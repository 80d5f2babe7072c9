/* test_overlap.c — plans whose shifts overlap compute (docs/cost-model.md,
 * "Overlap"): the chip key, the plan's rules and memory, the closed form
 * against the schedule walked step by step, the replay against the model,
 * and the search on a chip that overlaps. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/base/chip.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/program.h"
#include "rotor/op/cost.h"
#include "rotor/op/place.h"
#include "op/planjson.h"
#include "rotor/op/search.h"
#include "rotor/sim/replay.h"

#define MATMUL "C[m,n] += A[m,k] * B[k,n]"
enum { C_ = 0, A_ = 1, B_ = 2 };
enum { M_ = 0, K_ = 1, N_ = 2 };

static rotor_chip overlapping(const char *preset) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset(preset, &c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&c, "compute_overlap=1", &err), ROTOR_OK, "%s", err.msg);
    return c;
}

/* ipu-mk2 cut to a w x h mesh */
static rotor_chip mesh_chip(int w, int h, bool overlap) {
    rotor_chip c = overlap ? overlapping("ipu-mk2") : mk2();
    rotor_error err = {{0}};
    char kv[64];
    snprintf(kv, sizeof kv, "cores_per_chip=%d", w * h);
    cr_assert_eq(rotor_chip_set(&c, kv, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&c, "topology=mesh", &err), ROTOR_OK, "%s", err.msg);
    snprintf(kv, sizeof kv, "mesh_width=%d", w);
    cr_assert_eq(rotor_chip_set(&c, kv, &err), ROTOR_OK, "%s", err.msg);
    snprintf(kv, sizeof kv, "mesh_height=%d", h);
    cr_assert_eq(rotor_chip_set(&c, kv, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

Test(overlap, the_chip_key_is_0_or_1_and_written_only_when_set) {
    rotor_chip c = mk2();
    rotor_error err = {{0}};
    cr_assert_eq(c.compute_overlap, 0);
    cr_assert_eq(rotor_chip_set(&c, "compute_overlap=2", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--set: compute_overlap: expected 0 or 1, got 2");
    char *text = rotor_chip_to_json(&c);
    cr_assert_null(strstr(text, "compute_overlap"), "ipu-mk2's file is as before the key");
    free(text);
    cr_assert_eq(rotor_chip_set(&c, "compute_overlap=1", &err), ROTOR_OK, "%s", err.msg);
    text = rotor_chip_to_json(&c);
    cr_assert_not_null(strstr(text, "\"compute_overlap\":\t1"), "%s", text);
    rotor_chip back;
    cr_assert_eq(rotor_chip_parse(text, strlen(text), "x.json", &back, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(back.compute_overlap, 1);
    free(text);
    rotor_chip w;
    cr_assert_eq(rotor_chip_preset("wormhole-n150", &w, &err), ROTOR_OK);
    cr_assert_eq(w.compute_overlap, 1);
    cr_assert_eq(rotor_chip_preset("ipu-mk2-mesh", &w, &err), ROTOR_OK);
    cr_assert_eq(w.compute_overlap, 0);
}

/* A plan rotating A along k (4 steps), on the T10 benchmark MatMul. */
static rotor_plan rotating(const rotor_expr *e) {
    rotor_plan p;
    rotor_plan_init(e, &p);
    p.fop[M_] = 1, p.fop[K_] = 4, p.fop[N_] = 368;
    p.ft[A_][K_] = 4;
    return p;
}

Test(overlap, a_plan_overlaps_only_where_the_chip_does_and_something_rotates) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = rotating(&e);
    p.overlap = true;
    rotor_plan_info info;
    rotor_error err = {{0}};
    rotor_chip ipu = mk2();
    cr_assert_eq(rotor_plan_derive(&e, &ipu, &p, &info, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "plan: overlap needs a chip whose cores compute while their links move data "
                              "(compute_overlap = 1); ipu-mk2 has 0");
    rotor_chip ov = overlapping("ipu-mk2");
    rotor_plan still;
    rotor_plan_init(&e, &still);
    still.fop[N_] = 1472;
    still.overlap = true;
    cr_assert_eq(rotor_plan_derive(&e, &ov, &still, &info, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "plan: overlap needs a rotating tensor (some f_t > 1)");
    /* the output rotating: C[m,n] around the 4 k-cores */
    rotor_plan outp = rotating(&e);
    outp.ft[A_][K_] = 1;
    outp.ft[C_][M_] = 4;
    outp.overlap = true;
    cr_assert_eq(rotor_plan_derive(&e, &ov, &outp, &info, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "plan: overlap needs the output C in place (it rotates: its partial sums move only "
                              "once a run has written them)");
    /* B rotating along k and n: its ring steps by two digits */
    rotor_plan two = rotating(&e);
    two.fop[M_] = 4, two.fop[K_] = 1;
    two.ft[A_][K_] = 1;
    two.ft[B_][K_] = 2, two.ft[B_][N_] = 2;
    two.overlap = true;
    cr_assert_eq(rotor_plan_derive(&e, &ov, &two, &info, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "plan: overlap needs every ring to step one way: B rotates along more than one axis "
                              "or inside another tensor's ring");
    /* memory: the receive buffer of A (its partition) replaces B_buf */
    rotor_plan_info plain;
    p.overlap = false;
    cr_assert_eq(rotor_plan_derive(&e, &ov, &p, &plain, &err), ROTOR_OK, "%s", err.msg);
    p.overlap = true;
    cr_assert_eq(rotor_plan_derive(&e, &ov, &p, &info, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(info.overlap && !plain.overlap);
    cr_assert_gt(info.bytes[A_], ov.shift_buffer_bytes);
    cr_assert_eq(info.memory, plain.memory - ov.shift_buffer_bytes + info.bytes[A_]);
}

/* The schedule the closed form stands for, walked step by step: runs of
 * steps with no change, and the shift into run r + 1 starts with run r, so
 * run r + 1 starts max(c_r, s_{r+1}) after run r did. */
static double walked(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p, const rotor_plan_info *info,
                     double sub, double lat) {
    rotor_place *pl;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_place_make(e, p, info, &pl, &err), ROTOR_OK, "%s", err.msg);
    int64_t i_old[ROTOR_MAX_AXES], i_new[ROTOR_MAX_AXES];
    rotor_place_loop(pl, 0, i_old);
    double start = 0, run = sub;
    for (int64_t s = 1; s < info->total_steps; s++) {
        rotor_place_loop(pl, s, i_new);
        double shift = lat;
        bool any = false;
        for (int t = 0; t < e->ntensors; t++)
            if (rotor_place_changes(pl, t, i_old, i_new)) {
                any = true;
                shift += (double)info->bytes[t] / rotor_chip_link_bw(chip);
            }
        if (any) {
            start += run > shift ? run : shift;
            run = 0;
        }
        run += sub;
        memcpy(i_old, i_new, sizeof i_old);
    }
    rotor_place_free(pl);
    return start + run;
}

/* Every valid plan of a small MatMul on 16 cores whose inputs rotate (A
 * along k and m, B along k and n), every loop order: the closed form
 * equals the walk (compute + exposed shifts). */
Test(overlap, the_closed_form_equals_the_schedule_walked_step_by_step) {
    rotor_expr e = make_expr(MATMUL, "m=64,k=96,n=48");
    rotor_chip chip = overlapping("ipu-mk2");
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=16", &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&chip, "link_latency_ns=3", &err), ROTOR_OK);
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    static const int64_t fops[][3] = {{2, 2, 4}, {4, 1, 4}, {1, 4, 4}, {2, 4, 2}, {4, 4, 1}};
    int checked = 0;
    for (size_t fi = 0; fi < sizeof fops / sizeof fops[0]; fi++)
        for (int fa = 1; fa <= 4; fa *= 2)
            for (int fb = 1; fb <= 4; fb *= 2)
                for (int fn = 1; fn <= 4; fn *= 2)
                    for (int o = 0; o < 12; o++) {
                        rotor_plan p;
                        rotor_plan_init(&e, &p);
                        for (int a = 0; a < 3; a++) p.fop[a] = fops[fi][a], p.order[a] = orders[o % 6][a];
                        p.ft[A_][K_] = fa, p.ft[B_][K_] = fb, p.ft[B_][N_] = fn, p.ft[A_][M_] = o < 6 ? 1 : 2;
                        p.overlap = true;
                        rotor_plan_info info;
                        rotor_cost c;
                        if (rotor_cost_plan(rotor_cost_model_default(), &e, &chip, &p, &info, &c, &err)) continue;
                        double sub = rotor_cost_v1_subtask(&e, &chip, info.sub_task);
                        double want = walked(&e, &chip, &p, &info, sub, rotor_chip_link_latency(&chip));
                        cr_assert_lt(fabs(c.compute + c.comm - c.hidden - want), 1e-9 * want,
                                     "plan %d: %.15g against the walk's %.15g", checked, c.compute + c.comm - c.hidden,
                                     want);
                        cr_assert_geq(c.hidden, 0.0);
                        cr_assert_leq(c.total, c.compute + c.comm + c.reduction);
                        checked++;
                    }
    cr_assert_gt(checked, 200, "%d plans", checked);
}

/* Cannon's layout as a T10 plan of 512^3 on 8 x 8: F_op m=8 n=8, A and B
 * rotating along k in 8 steps. */
static rotor_plan cannon8(const rotor_expr *g, bool overlap) {
    rotor_plan q;
    rotor_plan_init(g, &q);
    q.fop[M_] = 8, q.fop[K_] = 1, q.fop[N_] = 8;
    q.ft[A_][K_] = 8, q.ft[B_][K_] = 8;
    q.overlap = overlap;
    return q;
}

/* Model against replay on an idle chip: all-to-all and a mesh. */
static void replay_agrees(const rotor_chip *chip, const char *dims, rotor_plan *p, double tol) {
    rotor_expr e = make_expr(MATMUL, dims);
    rotor_plan_info info;
    rotor_cost c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), &e, chip, p, &info, &c, &err), ROTOR_OK, "%s",
                 err.msg);
    int64_t ps;
    cr_assert_eq(rotor_replay_plan(&e, p, &info, chip, 0, &ps, NULL, &err), ROTOR_OK, "%s", err.msg);
    double sim = (double)ps * 1e-12;
    cr_assert_lt(fabs(sim / c.total - 1), tol, "simulated %.6f us, model %.6f us (hidden %.6f us)", sim * 1e6,
                 c.total * 1e6, c.hidden * 1e6);
    cr_assert_gt(c.hidden, 0.0);
}

/* On a mesh, A's ring along X and B's along Y shift at once: 512^3 on 8 x
 * 8, F_op m=8 n=8, A and B rotating along k in 8 steps.  Each shift moves
 * 8 KiB (1.489 us at 5.5 GB/s) over its own dimension's links, so a step's
 * shifts take one shift's time, not two: 7 of them, and the replay agrees
 * to the picosecond a transfer with no overlap. */
Test(overlap, a_meshs_x_and_y_rings_shift_at_once) {
    rotor_chip mesh = mesh_chip(8, 8, false);
    rotor_expr g = make_expr(MATMUL, "m=512,k=512,n=512");
    rotor_plan q = cannon8(&g, false);
    rotor_plan_info info;
    rotor_cost c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), &g, &mesh, &q, &info, &c, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(info.bytes[A_], 8192);
    cr_assert_lt(fabs(c.comm - 7 * 8192 / 5.5e9), 1e-15, "%.9g us", c.comm * 1e6);
    int64_t ps;
    cr_assert_eq(rotor_replay_plan(&g, &q, &info, &mesh, 0, &ps, NULL, &err), ROTOR_OK, "%s", err.msg);
    /* the simulator counts whole picoseconds a transfer (1,489,454.5 ps) */
    cr_assert_lt(fabs((double)ps * 1e-12 - c.total), 8e-12, "simulated %lld ps, model %.3f ps", (long long)ps,
                 c.total * 1e12);
}

Test(overlap, the_replay_overlaps_as_the_model_on_all_to_all_and_a_mesh) {
    rotor_chip ipu = overlapping("ipu-mk2");
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = rotating(&e);
    p.overlap = true;
    replay_agrees(&ipu, "m=32,k=5120,n=15360", &p, 1e-3);
    /* 8 x 8: A and B both rotate along k, 8 steps */
    rotor_chip mesh = mesh_chip(8, 8, true);
    rotor_expr g = make_expr(MATMUL, "m=512,k=512,n=512");
    rotor_plan q = cannon8(&g, true);
    replay_agrees(&mesh, "m=512,k=512,n=512", &q, 1e-3);
}

/* Issue 41's 4096^3 on a 32 x 32 mesh: where cores compute while links
 * move data, the search's plan hides every shift (549.756 us, the compute
 * alone) and SUMMA's 555.714 us no longer wins (docs/mesh.md). */
Test(overlap, the_search_hides_every_shift_of_a_4096_cube_on_32_by_32, .timeout = 120) {
    rotor_chip mesh = mesh_chip(32, 32, true);
    rotor_expr e = make_expr(MATMUL, "m=4096,k=4096,n=4096");
    rotor_search_options so = {.threads = 2};
    rotor_search_result sr;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search(&e, &mesh, &so, &sr, &err), ROTOR_OK, "%s", err.msg);
    const rotor_candidate *b = &sr.best;
    cr_assert(b->plan.overlap);
    cr_assert_lt(fabs(b->cost.total - 549.755813888e-6), 1e-12, "%.12f us", b->cost.total * 1e6);
    cr_assert_eq(b->cost.total, b->cost.compute);
    rotor_search_result_free(&sr);
}

Test(overlap, a_plan_file_keeps_its_overlap) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = rotating(&e);
    p.overlap = true;
    cJSON *w = rotor_json_plan(&e, &p);
    char *text = cJSON_PrintUnformatted(w); /* its numbers are raw text until printed */
    cJSON_Delete(w);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "overlap")));
    rotor_plan back;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_json_read_plan(j, &e, "p.json", "plan", &back, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_plan_compare(&e, &p, &back), 0);
    cJSON_ReplaceItemInObject(j, "overlap", cJSON_CreateNumber(1));
    cr_assert_eq(rotor_json_read_plan(j, &e, "p.json", "plan", &back, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "p.json: plan.overlap: expected true or false");
    cJSON_Delete(j);
    p.overlap = false;
    j = rotor_json_plan(&e, &p);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(j, "overlap"), "a plan without overlap reads as before");
    cJSON_Delete(j);
}

/* A compile on a chip that overlaps: its totals name the shifts under
 * compute, so that its parts add up to its total (until 2026-12-03 the
 * text and the program's totals left them out: a 1-layer BERT-Base on
 * wormhole-n150 printed parts 10.356 us above its total; found by a review
 * helper), and the program keeps them; a program written before reads as
 * hiding nothing. */
Test(overlap, a_compiles_parts_add_up_with_the_shifts_under_compute) {
    rotor_chip c = overlapping("ipu-mk2");
    rotor_graph g;
    ffn_stack(&g, 2, 256, 1024, 4096);
    rotor_compile_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_compile(&g, &c, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    double hidden = 0;
    for (int o = 0; o < r.nops; o++) {
        const rotor_op_schedule *s = &r.ops[o];
        cr_assert_float_eq(s->exec_s, s->compute_s + s->comm_s + s->reduction_s - s->hidden_s, 1e-12 * s->exec_s);
        hidden += s->hidden_s;
    }
    cr_assert_gt(r.hidden_s, 0, "no shift under compute: the test proves nothing");
    cr_assert_float_eq(r.hidden_s, hidden, 1e-12 * hidden);
    cr_assert_float_eq(r.total_s, r.setup_s + r.compute_s + r.comm_s + r.reduction_s + r.vendor_s - r.hidden_s,
                       1e-12 * r.total_s);
    char *text;
    cr_assert_eq(rotor_program_write(&g, &c, &r, &text, &err), ROTOR_OK, "%s", err.msg);
    rotor_program p;
    cr_assert_eq(rotor_program_parse(text, "p.json", &c, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(p.hidden_s, r.hidden_s, 1e-15 * r.hidden_s);
    rotor_program_free(&p);
    char *at = strstr(text, "\"hidden_s\"");
    cr_assert_not_null(at);
    memcpy(at, "\"hiddenXs\"", 10); /* an unknown key in totals: ignored, as a file of before */
    cr_assert_eq(rotor_program_parse(text, "p.json", &c, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(p.hidden_s, r.hidden_s, 1e-12 * r.hidden_s, "a file of before takes the operators' sum");
    rotor_program_free(&p);
    memcpy(at, "\"hidden_s\":\t0", 13); /* a total that is not the operators' sum */
    cr_assert_eq(rotor_program_parse(text, "p.json", &c, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "p.json: totals.hidden_s: is not the sum of the operators'");
    free(text);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
}
