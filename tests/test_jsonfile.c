/* test_jsonfile.c — every JSON text rotor reads is one value and nothing
 * after it (src/base/jsonparse.c): the plan file, the program, the chip and
 * GPU files, the options of rotor_doc.  cJSON_Parse alone stopped at the end
 * of the first value, so a second object after a plan, or bytes after a NUL,
 * were dropped without a word, and a key given twice was read as its first
 * (2026-12-01). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/jsontext.h"
#include "rotor/base/chip.h"
#include "rotor/base/gpu.h"
#include "rotor/compile/program.h"
#include "rotor/op/planfile.h"
#include "rotor/pipeline/doc.h"
#include "fixtures.h"

#define PLAN_TEXT                                                                                                   \
    "{\"format\": \"rotor-plan\", \"version\": 1, \"expr\": \"C[m,n] += A[m,k] * B[k,n]\", \"plan\": "              \
    "{\"F_op\": {\"m\": 4, \"k\": 1, \"n\": 2}, \"f_t\": {\"C\": {\"m\": 1, \"n\": 1}, "                            \
    "\"A\": {\"m\": 1, \"k\": 1}, \"B\": {\"k\": 1, \"n\": 1}}, \"loop_order\": [\"m\", \"k\", \"n\"]}}"

#define GPU_TEXT "{\"format\":\"rotor-chip\",\"version\":1,\"kind\":\"gpu\",\"base\":\"a100-80gb\",\"sms\":54}"

/* len bytes of text into a new temporary file, its path into path. */
static void write_temp(const char *text, size_t len, char *path, size_t size) {
    snprintf(path, size, "/tmp/rotor-jsonfile-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
}

static rotor_status plan_file(const char *text, size_t len, char *path, size_t size, rotor_error *err) {
    write_temp(text, len, path, size);
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=96,n=80");
    rotor_plan p;
    rotor_status st = rotor_planfile_read(path, &e, &p, err);
    unlink(path);
    return st;
}

Test(jsonfile, a_plan_file_is_read_and_a_second_value_after_it_is_refused_where_it_starts) {
    char path[64], want[160];
    rotor_error err = {{0}};
    cr_assert_eq(plan_file(PLAN_TEXT "\n  \n", strlen(PLAN_TEXT) + 4, path, sizeof path, &err), ROTOR_OK, "%s",
                 err.msg);
    const char *two = PLAN_TEXT "\n" PLAN_TEXT "\n";
    cr_assert_eq(plan_file(two, strlen(two), path, sizeof path, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "%s: not valid JSON near line 2, column 1", path);
    cr_assert_str_eq(err.msg, want);
    /* the bare parse of a text too, with its own label */
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=96,n=80");
    rotor_plan p;
    cr_assert_eq(rotor_planfile_parse(PLAN_TEXT " ]", "plan.json", &e, &p, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "plan.json: not valid JSON near line 1, column %zu", strlen(PLAN_TEXT) + 2);
    cr_assert_str_eq(err.msg, want);
}

Test(jsonfile, a_nul_byte_in_a_plan_file_is_refused_at_its_offset) {
    char text[1024], path[64], want[160];
    size_t n = strlen(PLAN_TEXT);
    memcpy(text, PLAN_TEXT, n);
    memcpy(text + n, "\0{}", 3); /* cJSON_Parse read the plan and stopped at the NUL */
    rotor_error err = {{0}};
    cr_assert_eq(plan_file(text, n + 3, path, sizeof path, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "%s: not valid JSON: NUL byte at offset %zu", path, n);
    cr_assert_str_eq(err.msg, want);
    /* rotor_planfile_operator reads the same way */
    char expr[256], dims[256], chip[64];
    write_temp(text, n + 3, path, sizeof path);
    cr_assert_eq(rotor_planfile_operator(path, expr, sizeof expr, dims, sizeof dims, chip, sizeof chip, &err),
                 ROTOR_ERR_INPUT);
    unlink(path);
    snprintf(want, sizeof want, "%s: not valid JSON: NUL byte at offset %zu", path, n);
    cr_assert_str_eq(err.msg, want);
}

Test(jsonfile, a_program_with_a_value_after_it_is_refused_naming_the_line) {
    rotor_chip chip;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, NULL), ROTOR_OK);
    rotor_graph g;
    ffn_gelu(&g);
    rotor_compile_result res;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &res, &err), ROTOR_OK, "%s", err.msg);
    char *text;
    cr_assert_eq(rotor_program_write(&g, &chip, &res, &text, &err), ROTOR_OK, "%s", err.msg);
    size_t lines = 1;
    for (const char *c = text; *c; c++) lines += *c == '\n';
    if (text[strlen(text) - 1] == '\n') lines--;
    rotor_program p;
    cr_assert_eq(rotor_program_parse(text, "p.json", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    rotor_program_free(&p);
    size_t n = strlen(text);
    char *two = malloc(n + 8);
    cr_assert(two);
    snprintf(two, n + 8, "%s\n[]\n", text);
    cr_assert_eq(rotor_program_parse(two, "p.json", &chip, &p, &err), ROTOR_ERR_INPUT);
    char want[96];
    snprintf(want, sizeof want, "p.json: not valid JSON near line %zu, column 1", lines + 1);
    cr_assert_str_eq(err.msg, want);
    free(two);
    free(text);
    rotor_compile_result_free(&res);
    rotor_graph_free(&g);
}

Test(jsonfile, chip_and_gpu_files_refuse_a_second_value_and_a_nul) {
    rotor_gpu gpu;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_gpu_parse(GPU_TEXT, strlen(GPU_TEXT), "g.json", &gpu, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(gpu.sms, 54);
    const char *two = GPU_TEXT "\n{\"sms\": 1}";
    cr_assert_eq(rotor_gpu_parse(two, strlen(two), "g.json", &gpu, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "g.json: not valid JSON near line 2, column 1");
    cr_assert_eq(rotor_gpu_parse(GPU_TEXT "\0x", strlen(GPU_TEXT) + 2, "g.json", &gpu, &err), ROTOR_ERR_INPUT);
    char want[96];
    snprintf(want, sizeof want, "g.json: not valid JSON: NUL byte at offset %zu", strlen(GPU_TEXT));
    cr_assert_str_eq(err.msg, want);
    /* a JSON value that is not an object is still named so */
    cr_assert_eq(rotor_gpu_parse("[1]", 3, "g.json", &gpu, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "g.json: not a JSON object");
    rotor_chip chip;
    const char *chip_one = "{\"format\": \"rotor-chip\", \"version\": 1, \"base\": \"ipu-mk2\"}";
    char chip_two[128];
    snprintf(chip_two, sizeof chip_two, "%s {}", chip_one);
    cr_assert_eq(rotor_chip_parse(chip_one, strlen(chip_one), "c.json", &chip, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_parse(chip_two, strlen(chip_two), "c.json", &chip, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "c.json: not valid JSON near line 1, column %zu", strlen(chip_one) + 2);
    cr_assert_str_eq(err.msg, want);
}

Test(jsonfile, rotor_docs_options_are_one_json_object) {
    const char *one = "{\"expr\": \"C[m,n] += A[m,k] * B[k,n]\", \"dim\": \"m=64,k=64,n=64\"}";
    char two[256], want[96];
    snprintf(two, sizeof two, "%s {\"dim\": \"m=1,k=1,n=1\"}", one);
    char *out = NULL;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_doc("plan", two, &out, &err), ROTOR_ERR_INPUT);
    cr_assert_null(out);
    snprintf(want, sizeof want, "options: not valid JSON near line 1, column %zu", strlen(one) + 2);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(rotor_doc("plan", "[]", &out, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "options: expected a JSON object of plan's options");
    cr_assert_eq(rotor_doc("plan", one, &out, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(strstr(out, "\"rotor-plan\""), "%s", out);
    rotor_free(out);
}

/* A key given twice in one object: cJSON's lookups took the first, so
 * "F_op": {"m": 4, "m": 1} read as m = 4 and the 1 was dropped. */
Test(jsonfile, a_key_given_twice_in_one_object_is_refused_by_its_path) {
    char path[64], want[160];
    rotor_error err = {{0}};
    char text[1024];
    /* the plan's F_op with m twice */
    const char *at = strstr(PLAN_TEXT, "\"k\": 1, \"n\": 2}");
    cr_assert(at);
    snprintf(text, sizeof text, "%.*s\"m\": 1, %s", (int)(at - PLAN_TEXT), PLAN_TEXT, at);
    cr_assert(strstr(text, "{\"m\": 4, \"m\": 1, \"k\": 1"), "%s", text);
    cr_assert_eq(plan_file(text, strlen(text), path, sizeof path, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "%s: plan.F_op.m: duplicate key", path);
    cr_assert_str_eq(err.msg, want);
    /* inside an array, and not next to each other */
    rotor_gpu gpu;
    cr_assert_eq(rotor_gpu_parse("{\"a\": [1, {\"x\": 1, \"y\": 2, \"x\": 3}]}", 36, "g.json", &gpu, &err),
                 ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "g.json: a[1].x: duplicate key");
    /* the same key in two objects is no duplicate */
    const char *twice_apart = "{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}";
    cJSON *root;
    cr_assert_eq(rotor_json_parse(twice_apart, strlen(twice_apart), "t.json", &root, &err), ROTOR_OK, "%s", err.msg);
    cJSON_Delete(root);
}

/* 40,000 keys (past the stack's 32): all distinct is read, and one more
 * that repeats the first is found, by sorting (n log n, not n^2). */
Test(jsonfile, a_duplicate_among_many_keys_is_found) {
    size_t cap = 40002 * 24 + 64, n = 0; /* an entry ", \"k39999\": 39999" is 18 bytes */
    char *text = malloc(cap);
    cr_assert(text);
    n += (size_t)snprintf(text + n, cap - n, "{");
    for (int i = 0; i < 40000; i++) n += (size_t)snprintf(text + n, cap - n, "%s\"k%d\": %d", i ? ", " : "", i, i);
    size_t closed = n;
    snprintf(text + n, cap - n, "}");
    cJSON *root;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_json_parse(text, closed + 1, "big.json", &root, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(cJSON_GetArraySize(root), 40000);
    cJSON_Delete(root);
    n = closed + (size_t)snprintf(text + closed, cap - closed, ", \"k0\": 1}");
    cr_assert_eq(rotor_json_parse(text, n, "big.json", &root, &err), ROTOR_ERR_INPUT);
    cr_assert_null(root);
    cr_assert_str_eq(err.msg, "big.json: k0: duplicate key");
    free(text);
}

/* An escape \u0000 in a string is refused where it stands: cJSON ends the
 * string there, so "mesh\u0000xyz" read as "mesh" and a name "a\u0000b" as
 * "a" (found by a review helper); an escaped backslash before u0000 is
 * text, read as it is. */
Test(jsonfile, a_nul_escape_in_a_string_is_refused_where_it_stands) {
    rotor_chip chip;
    rotor_error err = {{0}};
    const char *cut = "{\"format\": \"rotor-chip\", \"version\": 1, \"base\": \"ipu-mk2\",\n \"name\": \"a\\u0000b\"}";
    cr_assert_eq(rotor_chip_parse(cut, strlen(cut), "c.json", &chip, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "c.json: line 2, column 12: \\u0000 in a string: rotor's strings hold no NUL character");
    const char *k2 = "{\"format\": \"rotor-chip\", \"version\": 1, \"ba\\u0000se\": \"ipu-mk2\"}";
    cr_assert_eq(rotor_chip_parse(k2, strlen(k2), "c.json", &chip, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "\\u0000 in a string") != NULL, "%s", err.msg);
    const char *text = "{\"format\": \"rotor-chip\", \"version\": 1, \"base\": \"ipu-mk2\", \"name\": \"a\\\\u0000b\"}";
    cr_assert_eq(rotor_chip_parse(text, strlen(text), "c.json", &chip, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(chip.name, "a\\u0000b");
}
