/* test_program.c — program files (src/compile/program.c, docs/program-format.md):
 * the round trip, stability, and hand-edited programs refused with the
 * field named. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/program.h"
#include "fixtures.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

static rotor_chip chip;
static rotor_graph g;
static rotor_compile_result res;
static char *text;

/* x (128 x 1024) -> up (1024 x 4096) -> gelu (vendor) -> down (4096 x 1024) */
static void setup_program(void) {
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, NULL), ROTOR_OK);
    ffn_gelu(&g);
    rotor_error err;
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &res, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_write(&g, &chip, &res, &text, &err), ROTOR_OK, "%s", err.msg);
}

static void teardown_program(void) {
    free(text);
    rotor_compile_result_free(&res);
    rotor_graph_free(&g);
}

TestSuite(program, .init = setup_program, .fini = teardown_program);

Test(program, round_trip_keeps_every_plan_time_and_memory) {
    rotor_program p;
    rotor_error err;
    cr_assert_eq(rotor_program_parse(text, "p.json", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.nops, 3);
    cr_assert_str_eq(p.model, "ffn");
    cr_assert_eq(p.cores, 1472);
    cr_assert_eq(p.total_s, res.total_s);
    cr_assert_eq(p.idle_bytes, res.idle_bytes);
    for (int o = 0; o < 3; o++) {
        const rotor_op_schedule *s = &res.ops[o];
        cr_assert_str_eq(p.ops[o].name, g.ops[o].name);
        cr_assert_eq(p.ops[o].vendor, s->vendor);
        cr_assert_eq(p.ops[o].exec_s, s->exec_s);
        cr_assert_eq(p.ops[o].setup_s, s->setup_s);
        cr_assert_eq(p.ops[o].idle_bytes, s->idle_bytes);
        if (s->vendor) continue;
        const rotor_frontier *f = &res.frontiers[s->frontier];
        const rotor_expr *e = &g.ops[o].expr;
        cr_assert_eq(rotor_plan_compare(e, &p.ops[o].active, &f->v[s->active].plan), 0, "op %d", o);
        cr_assert_eq(rotor_plan_compare(e, &p.ops[o].idle_base, &f->v[s->idle_base].plan), 0, "op %d", o);
        cr_assert_eq(p.ops[o].idle_split, s->idle_split);
        cr_assert_eq(p.ops[o].active_cost.total, s->exec_s);
    }
    rotor_program_free(&p);
}

Test(program, writing_twice_gives_the_same_text) {
    char *again;
    rotor_error err;
    cr_assert_eq(rotor_program_write(&g, &chip, &res, &again, &err), ROTOR_OK);
    cr_assert_str_eq(again, text);
    free(again);
}

/* rotor_program_roundtrip (one placement memo for the writer and the
 * reader) reads what rotor_program_parse reads of rotor_program_write's
 * text. */
Test(program, the_round_trip_in_one_call_reads_what_parse_reads_of_write) {
    rotor_program a, b;
    rotor_error err;
    cr_assert_eq(rotor_program_parse(text, "p.json", &chip, &a, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_roundtrip(&g, &chip, &res, "p.json", &b, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(a.nops, b.nops);
    cr_assert_eq(a.total_s, b.total_s);
    cr_assert_eq(a.setup_s, b.setup_s);
    for (int o = 0; o < a.nops; o++) {
        const rotor_program_op *x = &a.ops[o], *y = &b.ops[o];
        cr_assert_str_eq(x->name, y->name);
        cr_assert_eq(x->vendor, y->vendor);
        cr_assert_eq(x->exec_s, y->exec_s);
        cr_assert_eq(x->setup_s, y->setup_s);
        if (x->vendor) continue;
        cr_assert_eq(rotor_plan_compare(&x->expr, &x->active, &y->active), 0, "op %d", o);
        cr_assert_eq(memcmp(&x->active_info, &y->active_info, sizeof x->active_info), 0, "op %d", o);
        cr_assert_eq(rotor_plan_compare(&x->expr, &x->idle_base, &y->idle_base), 0, "op %d", o);
    }
    rotor_program_free(&a);
    rotor_program_free(&b);
}

/* The program's text edited with f (the caller frees it). */
static char *edited_with(void (*f)(cJSON *)) {
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    f(root);
    char *edited = cJSON_Print(root);
    cJSON_Delete(root);
    return edited;
}

/* Edits the program with f and parses it into p, which must succeed. */
static void accepted(void (*f)(cJSON *), rotor_program *p) {
    char *edited = edited_with(f);
    rotor_error err;
    cr_assert_eq(rotor_program_parse(edited, "p.json", &chip, p, &err), ROTOR_OK, "%s", err.msg);
    free(edited);
}

/* Edits the program with f, parses it and expects an error containing want. */
static void refused(void (*f)(cJSON *), const char *want) {
    char *edited = edited_with(f);
    rotor_program p;
    rotor_error err;
    cr_assert_eq(rotor_program_parse(edited, "p.json", &chip, &p, &err), ROTOR_ERR_INPUT,
                 "an edit that should be refused (%s) was accepted", want);
    assert_msg_has(err, want);
    cr_assert_null(p.ops);
    free(edited);
}

static cJSON *op_at(cJSON *root, int i) {
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "operators"), i);
}

static void set_version_2(cJSON *r) { cJSON_ReplaceItemInObject(r, "version", cJSON_CreateNumber(2)); }
static void drop_exec(cJSON *r) { cJSON_DeleteItemFromObject(op_at(r, 2), "exec_s"); }
static void drop_operators(cJSON *r) { cJSON_DeleteItemFromObject(r, "operators"); }
static void bad_ft(cJSON *r) {
    cJSON *ft = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op_at(r, 0), "active"), "plan"),
        "f_t");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(ft, "B"), "k", cJSON_CreateString("two"));
}
static void other_fop(cJSON *r) {
    cJSON *fop = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op_at(r, 0), "active"), "plan"),
        "F_op");
    cJSON_ReplaceItemInObject(fop, "m", cJSON_CreateNumber(1));
    cJSON_ReplaceItemInObject(fop, "k", cJSON_CreateNumber(1));
    cJSON_ReplaceItemInObject(fop, "n", cJSON_CreateNumber(1));
}
static void stale_exec(cJSON *r) { cJSON_ReplaceItemInObject(op_at(r, 0), "exec_s", cJSON_CreateNumber(1e-6)); }
static void bad_chain(cJSON *r) {
    cJSON *pl = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op_at(r, 2), "active"),
                                                 "placement");
    cJSON *chains = cJSON_GetObjectItemCaseSensitive(pl, "chains");
    cJSON_ReplaceItemInObject(chains, "m", cJSON_CreateIntArray((const int[]){7, 3}, 2));
}
static void bad_total(cJSON *r) {
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(r, "totals"), "total_s",
                              cJSON_CreateNumber(1.0));
}
static void more_setup_bytes(cJSON *r) {
    cJSON *o = op_at(r, 0);
    double b = cJSON_GetObjectItemCaseSensitive(o, "setup_bytes")->valuedouble;
    cJSON_ReplaceItemInObject(o, "setup_bytes", cJSON_CreateNumber(b + 5500));
}
static void drop_setup_rounds(cJSON *r) { cJSON_DeleteItemFromObject(op_at(r, 2), "setup_rounds"); }
static void other_format(cJSON *r) { cJSON_ReplaceItemInObject(r, "format", cJSON_CreateString("rotor-plan")); }

/* Hand-off claims: op 2 ('down', reading the vendor op's output) edited. */
static void set_handoff(cJSON *r, const char *tensor, const char *from) {
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, tensor, from);
    cJSON_AddItemToObject(op_at(r, 2), "handoff", h);
}
static void handoff_later(cJSON *r) { set_handoff(r, "A", "down"); }
static void handoff_vendor(cJSON *r) { set_handoff(r, "A", "gelu"); }
static void handoff_tensor(cJSON *r) { set_handoff(r, "Q", "up"); }
static void handoff_extents(cJSON *r) { set_handoff(r, "B", "up"); }

Test(program, hand_off_claims_the_reader_cannot_check_are_refused) {
    refused(handoff_later, "p.json: operators[2].handoff.A: names no earlier operator");
    refused(handoff_vendor, "operators[2].handoff.A: names a vendor op, which leaves its output in the even layout");
    refused(handoff_tensor, "operators[2].handoff.Q: names no input tensor of the expression");
    refused(handoff_extents, "operators[2].handoff.B: the tensor's extents differ from that operator's output");
}

/* A valid claim is read back: 'down' reads A = [128, 4096], up's output. */
static void handoff_ok(cJSON *r) { set_handoff(r, "A", "up"); }
Test(program, a_hand_off_names_the_producer_by_index) {
    rotor_program p;
    accepted(handoff_ok, &p);
    cr_assert_eq(p.ops[2].handoff[1], 1); /* 1 + op 0 */
    cr_assert_eq(p.ops[2].handoff[2], 0);
    cr_assert_eq(p.ops[0].handoff[1], 0);
    rotor_program_free(&p);
}

/* The view form: 'down' reads A [128, 4096] as up's output through a view
 * (here the identity spelled out, dims 0 and 1 with steps 1). */
static void set_view(cJSON *r, const int *step, int nstep) {
    cJSON *h = cJSON_CreateObject(), *v = cJSON_AddObjectToObject(h, "A");
    cJSON_AddStringToObject(v, "from", "up");
    cJSON_AddItemToObject(v, "dim", cJSON_CreateIntArray((const int[]){0, 1}, 2));
    cJSON_AddItemToObject(v, "step", cJSON_CreateIntArray(step, nstep));
    cJSON_AddItemToObject(v, "offset", cJSON_CreateIntArray((const int[]){0, 0}, 2));
    cJSON_AddItemToObject(op_at(r, 2), "handoff", h);
}
static void view_ok(cJSON *r) { set_view(r, (const int[]){1, 1}, 2); }
static void view_short(cJSON *r) { set_view(r, (const int[]){1}, 1); }
static void view_overlap(cJSON *r) {
    set_view(r, (const int[]){1, 1}, 2);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op_at(r, 2), "handoff"), "A");
    cJSON_ReplaceItemInObject(v, "dim", cJSON_CreateIntArray((const int[]){0, 0}, 2));
}
static void view_bad_dim(cJSON *r) {
    set_view(r, (const int[]){1, 1}, 2);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op_at(r, 2), "handoff"), "A");
    cJSON_ReplaceItemInObject(v, "dim", cJSON_CreateIntArray((const int[]){0, 2}, 2));
}

Test(program, a_hand_off_through_a_view_is_read_back_and_checked) {
    rotor_program p;
    accepted(view_ok, &p);
    cr_assert_eq(p.ops[2].handoff[1], 1);
    cr_assert(p.ops[2].handoff_view[1].set);
    cr_assert(p.ops[2].handoff_view[1].dim[1] == 1 && p.ops[2].handoff_view[1].step[1] == 1);
    rotor_program_free(&p);
    refused(view_short, "p.json: operators[2].handoff.A.step: expected 2 entries");
    refused(view_bad_dim, "p.json: operators[2].handoff.A.dim: expected integers in range");
    /* both dimensions along the rows with step 1: coordinates meet */
    refused(view_overlap, "operators[2].handoff.A: the view does not fit that operator's output (its steps must nest)");
}

static void topology_torus(cJSON *r) { cJSON_ReplaceItemInObject(r, "topology", cJSON_CreateString("torus 4x4")); }
static void topology_mesh(cJSON *r) { cJSON_ReplaceItemInObject(r, "topology", cJSON_CreateString("mesh 8x9")); }
static void no_topology(cJSON *r) { cJSON_DeleteItemFromObject(r, "topology"); }

/* The network a program was compiled for is written, read back, and
 * checked for its spelling; a file without it (before 2026-12-03) reads as
 * unknown.  rotor simulate says when it replays on another (cli_simulate). */
Test(program, the_network_it_was_compiled_for_is_recorded) {
    cr_assert(strstr(text, "\"topology\":\t\"all-to-all\"") != NULL);
    rotor_program p;
    accepted(topology_mesh, &p);
    cr_assert_str_eq(p.topology, "mesh 8x9");
    rotor_program_free(&p);
    accepted(no_topology, &p);
    cr_assert_str_eq(p.topology, "");
    rotor_program_free(&p);
    refused(topology_torus, "p.json: topology: expected \"all-to-all\" or \"mesh WxH\"");
}

Test(program, a_wrong_version_is_refused) { refused(set_version_2, "p.json: version: 2 is not 1"); }
Test(program, a_missing_field_is_named) { refused(drop_exec, "p.json: operators[2].exec_s: missing"); }
Test(program, missing_operators_are_named) { refused(drop_operators, "p.json: operators: missing"); }
Test(program, a_non_integer_factor_is_named) {
    refused(bad_ft, "p.json: operators[0].active.plan.f_t.B.k: expected a positive integer");
}
Test(program, a_plan_whose_time_was_not_updated_is_refused) {
    /* F_op [1,1,1] does not even fit: the plan's own rule is named */
    refused(other_fop, "operators[0].active.plan");
}
Test(program, a_recorded_time_that_is_not_the_plans_is_refused) {
    refused(stale_exec, "p.json: operators[0].exec_s: 1e-06 s does not match the plan's");
}
Test(program, a_placement_that_is_not_the_plans_is_refused) {
    refused(bad_chain, "operators[2].active.placement: does not match the placement of the plan");
}
Test(program, totals_that_are_not_the_sum_are_refused) {
    refused(bad_total, "totals.total_s: is not the sum");
}

/* Every figure the reader can derive is checked, not only exec_s and
 * total_s: each operator's active_bytes and active.time, and every total
 * (until 2026-12-03 they were taken as written; found by a review helper).
 * live_bytes and a vendor operator's bytes come from the graph, which a
 * program does not hold: they are bounded by the SRAM only. */
static void edit_op_num(cJSON *r, int i, const char *obj, const char *key, double by) {
    cJSON *o = op_at(r, i);
    if (obj) o = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "active"), obj);
    cJSON_ReplaceItemInObject(o, key, cJSON_CreateNumber(cJSON_GetObjectItemCaseSensitive(o, key)->valuedouble + by));
}
static void edit_total(cJSON *r, const char *key, double by) {
    cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "totals");
    cJSON_ReplaceItemInObject(t, key, cJSON_CreateNumber(cJSON_GetObjectItemCaseSensitive(t, key)->valuedouble + by));
}
static void more_active_bytes(cJSON *r) { edit_op_num(r, 0, NULL, "active_bytes", 2); }
static void other_compute(cJSON *r) { edit_op_num(r, 2, "time", "compute_s", 1e-6); }
static void other_comm_total(cJSON *r) { edit_total(r, "communication_s", 1e-6); }
static void other_idle_total(cJSON *r) { edit_total(r, "idle_bytes", 1); }
static void other_peak(cJSON *r) { edit_total(r, "peak_bytes", -1); }
static void more_live(cJSON *r) {
    for (int i = 0; i < cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "operators")); i++)
        edit_op_num(r, i, NULL, "live_bytes", 8);
}
Test(program, every_figure_the_reader_derives_is_checked) {
    refused(more_active_bytes, "p.json: operators[0].active_bytes: does not match the plan's memory");
    refused(other_compute, "p.json: operators[2].active.time.compute_s: ");
    refused(other_compute, "does not match the plan's");
    refused(other_comm_total, "p.json: totals.communication_s: is not the sum of the operators'");
    refused(other_idle_total, "p.json: totals.idle_bytes: is not the sum of the operators'");
    refused(other_peak, "p.json: totals.peak_bytes: is not the largest idle + live + active bytes of an operator");
    /* more live bytes everywhere raise the peak the totals must give */
    refused(more_live, "p.json: totals.peak_bytes: is not the largest idle + live + active bytes of an operator");
}
Test(program, setup_bytes_that_do_not_give_setup_s_are_refused) {
    /* 5500 more bytes at 5.5 GB/s is 1 us more than the recorded setup_s */
    refused(more_setup_bytes, "p.json: operators[0].setup_s: ");
    refused(more_setup_bytes, "does not match setup_bytes and setup_rounds");
}
Test(program, missing_setup_rounds_are_named) {
    refused(drop_setup_rounds, "p.json: operators[2].setup_rounds: missing");
}
Test(program, another_format_is_refused) { refused(other_format, "p.json: format: expected \"rotor-program\""); }

Test(program, a_missing_file_is_an_io_error) {
    rotor_program p;
    rotor_error err;
    cr_assert_eq(rotor_program_read("/nonexistent/p.json", &chip, &p, &err), ROTOR_ERR_IO);
    assert_msg_has(err, "/nonexistent/p.json");
}

/* A mesh program's setup is its exchange's schedule, each packet's time
 * rounded to the picosecond, so it may end a few picoseconds under the
 * busiest link's exact time: the MLP on ipu-mk2's cores as a 16 x 16 mesh,
 * no latency (add3's 192 B came 13 ps under), is read back as written. */
Test(program, a_mesh_setup_a_few_picoseconds_under_its_bound_is_read) {
    rotor_chip mesh = mk2();
    rotor_error err = {{0}};
    const char *kv[] = {"cores_per_chip=256", "topology=mesh", "mesh_width=16", "mesh_height=16"};
    for (int i = 0; i < 4; i++) cr_assert_eq(rotor_chip_set(&mesh, kv[i], &err), ROTOR_OK, "%s", err.msg);
    rotor_graph mlp;
    int x;
    mlp_graph(&mlp, &x);
    rotor_compile_options o = {0};
    rotor_program p;
    compiled_program(&mlp, &mesh, &o, NULL, &p);
    cr_assert_eq(p.nops, mlp.nops);
    rotor_program_free(&p);
    rotor_graph_free(&mlp);
}

/* Repeated layers (program.c's placement memo, issue 45): two FFN layers of
 * the same shapes get the same plans, so the second layer's placements come
 * from the memo.  They are written as the first layer's, and a hand-edited
 * one is still refused: the reader compares each operator's own summary. */
static char *stack_text;
static void stack_chain(cJSON *r) {
    cJSON *pl = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(op_at(r, 2), "active"),
                                                 "placement");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(pl, "rings"), "A", cJSON_CreateNumber(3));
}

Test(program, a_repeated_layers_placements_are_written_alike_and_checked_each) {
    rotor_graph sg;
    rotor_compile_result sr;
    rotor_error err;
    ffn_stack(&sg, 2, 128, 256, 512);
    cr_assert_eq(rotor_compile(&sg, &chip, NULL, &sr, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_write(&sg, &chip, &sr, &stack_text, &err), ROTOR_OK, "%s", err.msg);
    cJSON *root = cJSON_Parse(stack_text);
    cr_assert_not_null(root);
    for (int i = 0; i < 2; i++) { /* up0 and up1, down0 and down1 */
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(op_at(root, i), "active");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(op_at(root, i + 2), "active");
        char *pa = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(a, "plan"));
        char *pb = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(b, "plan"));
        cr_assert_str_eq(pa, pb, "layer 1's plan is layer 0's (the test's premise)");
        free(pa), free(pb);
        pa = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(a, "placement"));
        pb = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(b, "placement"));
        cr_assert_str_eq(pa, pb);
        free(pa), free(pb);
    }
    rotor_program p;
    cr_assert_eq(rotor_program_parse(stack_text, "p.json", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.nops, 4);
    rotor_program_free(&p);
    stack_chain(root);
    char *edited = cJSON_Print(root);
    cr_assert_eq(rotor_program_parse(edited, "p.json", &chip, &p, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "operators[2].active.placement: does not match the placement of the plan");
    free(edited);
    cJSON_Delete(root);
    free(stack_text);
    rotor_compile_result_free(&sr);
    rotor_graph_free(&sg);
}

/* A program carries the whole chip it was compiled on ("chip_file"), to the
 * last bit of every number, and the reader hands it back: a replay takes it
 * rather than a preset of the same name (until 2026-12-04 a compile's
 * static_w was replaced by the preset's; found by an audit helper). */
Test(program, carries_the_chip_it_was_compiled_on_to_the_bit) {
    rotor_chip c = chip;
    c.static_w = 1.0 / 3.0, c.mac_pj = 0.1 + 0.2; /* numbers a 15-digit printer would round */
    rotor_compile_result r;
    rotor_error err;
    char *t;
    cr_assert_eq(rotor_compile(&g, &c, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_write(&g, &c, &r, &t, &err), ROTOR_OK, "%s", err.msg);
    rotor_chip back;
    bool found = false;
    cr_assert_eq(rotor_program_chip(t, "p.json", &back, &found, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(found);
    const char *keys[ROTOR_CHIP_FIELDS_MAX];
    cr_assert_eq(rotor_chip_differences(&back, &c, true, keys, ROTOR_CHIP_FIELDS_MAX), 0);
    cr_assert_str_eq(back.name, "ipu-mk2");
    /* the preset of its name is another chip, and says in what */
    cr_assert_eq(rotor_chip_differences(&back, &chip, true, keys, ROTOR_CHIP_FIELDS_MAX), 2);
    cr_assert_str_eq(keys[0], "mac_pj");
    cr_assert_str_eq(keys[1], "static_w");
    rotor_program p;
    cr_assert_eq(rotor_program_parse(t, "p.json", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(p.has_compiled_chip);
    cr_assert_eq(p.compiled_chip.static_w, 1.0 / 3.0);
    rotor_program_free(&p);
    free(t);
    rotor_compile_result_free(&r);
}

/* A program written before 2026-12-04 has no chip_file: found false, read
 * as before; a chip_file that is not a chip is refused with its key named. */
Test(program, a_program_without_its_chip_reads_and_a_broken_one_is_refused) {
    cJSON *root = cJSON_Parse(text);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "chip_file");
    char *old = cJSON_PrintUnformatted(root);
    rotor_chip back;
    bool found = true;
    rotor_error err;
    cr_assert_eq(rotor_program_chip(old, "p.json", &back, &found, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(!found);
    rotor_program p;
    cr_assert_eq(rotor_program_parse(old, "p.json", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(!p.has_compiled_chip);
    rotor_program_free(&p);
    free(old);
    cJSON_AddItemToObject(root, "chip_file", cJSON_CreateString("ipu-mk2"));
    char *bad = cJSON_PrintUnformatted(root);
    cr_assert_eq(rotor_program_chip(bad, "p.json", &back, &found, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "p.json: chip_file: expected a JSON object at the top level, got \"ipu-mk2\"");
    cr_assert(!found);
    cr_assert_eq(rotor_program_parse(bad, "p.json", &chip, &p, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "p.json: chip_file: expected a JSON object");
    free(bad);
    cJSON_Delete(root);
}
