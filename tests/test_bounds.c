/* test_bounds.c — bounded work on hostile files (issue 47, "Bounded work"):
 * the one file reader (src/base/readfile.c) reads a regular file by its
 * size, a pipe up to the limit and no device; the model loader names
 * --max-model-bytes; every count of a program, plan and chip file has a
 * bound from the chip or the operator, and the error names the field, the
 * value and the bound (docs/program-format.md, "Bounds"). */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rotor/base/readfile.h"
#include "rotor/model/onnx.h"
#include "rotor/op/planfile.h"
#include "fixtures.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* ---- the reader ----------------------------------------------------------- */

/* A temporary file of n bytes 'a', 'b', 'c', ... (its path in path). */
static void temp_file(char *path, size_t size, size_t n) {
    snprintf(path, size, "/tmp/rotor-bounds-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    /* filled in memory and written in one go (a write a byte took 2 s for
     * the 1 MiB chip file) */
    char *buf = malloc(n);
    cr_assert(n == 0 || buf);
    for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + i % 26);
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, buf + done, n - done);
        cr_assert_gt(w, 0);
        done += (size_t)w;
    }
    free(buf);
    close(fd);
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

Test(bounds, a_regular_file_at_the_limit_is_read_whole_and_one_byte_over_is_refused_unread) {
    char path[64], want[160];
    temp_file(path, sizeof path, 100);
    char *buf;
    size_t len;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_read_file(path, 100, &buf, &len, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(len, 100);
    cr_assert_eq(buf[0], 'a');
    cr_assert_eq(buf[99], 'a' + 99 % 26);
    cr_assert_eq(buf[100], '\0', "the buffer is NUL-terminated after the data");
    free(buf);
    cr_assert_eq(rotor_read_file(path, 99, &buf, &len, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "%s: 100 bytes, over the limit of 99 bytes", path);
    cr_assert_str_eq(err.msg, want);
    cr_assert_null(buf);
    cr_assert_eq(len, 0);
    unlink(path);
}

Test(bounds, a_pipe_is_read_up_to_the_limit_and_refused_one_byte_past_it) {
    char data[200];
    memset(data, 'x', sizeof data);
    for (int n = 100; n <= 101; n++) {
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        cr_assert_eq(write(fds[1], data, (size_t)n), n);
        close(fds[1]);
        char *buf;
        size_t len;
        rotor_error err = {{0}};
        rotor_status st = rotor_read_fd(fds[0], "p", 100, &buf, &len, &err);
        close(fds[0]);
        if (n == 100) {
            cr_assert_eq(st, ROTOR_OK, "%s", err.msg);
            cr_assert_eq(len, 100);
            free(buf);
        } else {
            cr_assert_eq(st, ROTOR_ERR_INPUT);
            cr_assert_str_eq(err.msg, "p: a stream longer than the limit of 100 bytes");
            cr_assert_null(buf);
        }
    }
}

Test(bounds, a_pipe_longer_than_the_first_buffer_is_read_whole) {
    /* 300,000 bytes: past the 64 KiB first buffer and a pipe's capacity, so
     * a writer runs beside the reader */
    enum { N = 300000 };
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        static char chunk[N];
        for (int i = 0; i < N; i++) chunk[i] = (char)(i % 251);
        size_t off = 0;
        while (off < N) {
            ssize_t w = write(fds[1], chunk + off, N - off);
            if (w <= 0) _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    char *buf;
    size_t len;
    rotor_error err = {{0}};
    rotor_status st = rotor_read_fd(fds[0], "p", 1 << 20, &buf, &len, &err);
    close(fds[0]);
    int ws;
    waitpid(pid, &ws, 0);
    cr_assert_eq(st, ROTOR_OK, "%s", err.msg);
    cr_assert_eq(len, N);
    for (int i = 0; i < N; i += 9973) cr_assert_eq((unsigned char)buf[i], i % 251, "byte %d", i);
    free(buf);
}

Test(bounds, a_device_is_refused_unread_naming_the_file_and_the_limit) {
    char *buf;
    size_t len;
    rotor_error err = {{0}};
    double t0 = seconds();
    cr_assert_eq(rotor_read_file("/dev/zero", (int64_t)1 << 31, &buf, &len, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "/dev/zero: a character device, not a file: rotor reads a regular file or a pipe "
                              "of at most 2147483648 bytes");
    cr_assert_lt(seconds() - t0, 0.5, "read /dev/zero for %.2f s", seconds() - t0);
    cr_assert_null(buf);
}

Test(bounds, a_directory_and_a_missing_file_are_io_errors) {
    char *buf;
    size_t len;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_read_file("tests", 1000, &buf, &len, &err), ROTOR_ERR_IO);
    cr_assert_str_eq(err.msg, "tests: cannot read: Is a directory");
    cr_assert_eq(rotor_read_file("tests/no-such-file", 1000, &buf, &len, &err), ROTOR_ERR_IO);
    cr_assert_str_eq(err.msg, "tests/no-such-file: cannot open: No such file or directory");
}

/* ---- model and tensor files ------------------------------------------------- */

/* examples/tiny-cnn.onnx, the repository's sample (tools/onnxgen.c), is
 * 3278 bytes (make test checks that onnxgen writes it again byte for byte). */
#define TINY "examples/tiny-cnn.onnx"
#define TINY_BYTES 3278

Test(bounds, max_model_bytes_at_the_models_size_reads_it_and_one_less_refuses_it_naming_the_option) {
    rotor_graph g;
    rotor_error err = {{0}};
    rotor_onnx_options o = {.max_bytes = TINY_BYTES};
    cr_assert_eq(rotor_onnx_load(TINY, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&g);
    o.max_bytes = TINY_BYTES - 1;
    cr_assert_eq(rotor_onnx_load(TINY, &o, &g, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, TINY ": 3278 bytes, over the limit of 3277 bytes (--max-model-bytes)");
    rotor_graph_free(&g);
}

Test(bounds, a_model_from_dev_zero_is_refused_at_once_with_the_default_limit) {
    rotor_graph g;
    rotor_error err = {{0}};
    double t0 = seconds();
    cr_assert_eq(rotor_onnx_load("/dev/zero", NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert_lt(seconds() - t0, 0.5);
    cr_assert_str_eq(err.msg, "/dev/zero: a character device, not a file: rotor reads a regular file or a pipe "
                              "of at most 2147483648 bytes (--max-model-bytes)");
    cr_assert_eq(ROTOR_ONNX_MAX_BYTES_DEFAULT, 2147483648LL, "2 GiB, protobuf's message limit (docs/onnx.md)");
    rotor_graph_free(&g);
}

Test(bounds, a_tensor_file_from_a_device_is_refused) {
    rotor_onnx_tensor t;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_onnx_tensor_read("/dev/zero", &t, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "/dev/zero: a character device, not a file");
    cr_assert_null(t.data);
}

/* ---- chip files ------------------------------------------------------------- */

Test(bounds, a_chip_file_with_negative_sram_is_refused_naming_the_field) {
    const char *text = "{\"format\": \"rotor-chip\", \"version\": 1, \"base\": \"ipu-mk2\", \"sram_bytes\": -1}";
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_parse(text, strlen(text), "c.json", &c, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "c.json: sram_bytes: expected a positive integer, got -1");
}

Test(bounds, a_chip_file_over_one_mib_is_refused_by_its_size) {
    char path[64], want[160];
    temp_file(path, sizeof path, (1 << 20) + 1);
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_load(path, &c, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "%s: 1048577 bytes, over the limit of 1048576 bytes", path);
    cr_assert_str_eq(err.msg, want);
    unlink(path);
}

/* ---- plan files -------------------------------------------------------------- */

/* A plan file for C[m,n] += A[m,k] * B[k,n] with F_op (fm, 1, fn) and
 * f_t.B.k = bk, every other factor 1, read back for m=64,k=96,n=80. */
static rotor_status plan_with(int64_t fm, int64_t fn, int64_t bk, rotor_error *err) {
    char text[512];
    snprintf(text, sizeof text,
             "{\"format\": \"rotor-plan\", \"version\": 1, \"expr\": \"C[m,n] += A[m,k] * B[k,n]\", \"plan\": "
             "{\"F_op\": {\"m\": %lld, \"k\": 1, \"n\": %lld}, \"f_t\": {\"C\": {\"m\": 1, \"n\": 1}, "
             "\"A\": {\"m\": 1, \"k\": 1}, \"B\": {\"k\": %lld, \"n\": 1}}, \"loop_order\": [\"m\", \"k\", \"n\"]}}",
             (long long)fm, (long long)fn, (long long)bk);
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=96,n=80");
    rotor_plan p;
    return rotor_planfile_parse(text, "plan.json", &e, &p, err);
}

Test(bounds, a_plans_f_op_is_at_most_its_axis_extent) {
    rotor_error err = {{0}};
    cr_assert_eq(plan_with(64, 1, 1, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(plan_with(65, 1, 1, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg,
                     "plan.json: plan.F_op.m: expected a positive integer at most 64 (E_m, the extent of axis m), "
                     "got 65");
}

Test(bounds, a_plans_f_t_is_at_most_its_tensors_sharing_degree) {
    /* B[k,n] lacks m: the cores sharing one partition of B are F_op.m = 4 */
    rotor_error err = {{0}};
    cr_assert_eq(plan_with(4, 2, 4, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(plan_with(4, 2, 5, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "plan.json: plan.f_t.B.k: expected a positive integer at most 4 (P_B, the cores "
                              "sharing one partition of B), got 5");
}

/* ---- program files ----------------------------------------------------------- */

static rotor_chip chip;
static rotor_graph g;
static char *text;

/* ffn_gelu (fixtures.h: up, gelu as a vendor op, down) compiled on ipu-mk2,
 * as program text. */
static void setup_program(void) {
    chip = mk2();
    ffn_gelu(&g);
    rotor_compile_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_write(&g, &chip, &r, &text, &err), ROTOR_OK, "%s", err.msg);
    rotor_compile_result_free(&r);
}

static void teardown_program(void) {
    free(text);
    rotor_graph_free(&g);
}

/* The program text with `key` of operator `op` (-1: the top level) set to
 * the JSON number `value`, parsed on chip: the status, the message in err. */
static rotor_status edited(const char *src, const rotor_chip *c, int op, const char *key, const char *value,
                           rotor_error *err) {
    cJSON *root = cJSON_Parse(src);
    cr_assert_not_null(root);
    cJSON *obj = op < 0 ? root : cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "operators"), op);
    const char *dot = strchr(key, '.');
    if (dot) { /* one level down: "idle.split" */
        char head[32];
        snprintf(head, sizeof head, "%.*s", (int)(dot - key), key);
        obj = cJSON_GetObjectItemCaseSensitive(obj, head);
        key = dot + 1;
    }
    cr_assert(cJSON_ReplaceItemInObject(obj, key, cJSON_Parse(value)), "no key %s", key);
    char *t = cJSON_Print(root);
    cJSON_Delete(root);
    rotor_program p;
    rotor_status st = rotor_program_parse(t, "p.json", c, &p, err);
    if (!st) rotor_program_free(&p);
    free(t);
    return st;
}

Test(bounds, setup_rounds_of_1e9_is_refused_by_the_chips_cores_at_once, .init = setup_program,
     .fini = teardown_program) {
    /* on ipu-mk2 alpha is 0: setup_s cannot tell the rounds (issue 47) */
    rotor_error err = {{0}};
    double t0 = seconds();
    cr_assert_eq(edited(text, &chip, 0, "setup_rounds", "1e9", &err), ROTOR_ERR_INPUT);
    cr_assert_lt(seconds() - t0, 1.0);
    cr_assert_str_eq(err.msg, "p.json: operators[0].setup_rounds: expected an integer from 0 to 1471 (one round per "
                              "other core), got 1000000000");
}

Test(bounds, setup_rounds_are_at_most_the_active_plans_most_rings_less_one, .init = setup_program,
     .fini = teardown_program) {
    rotor_program p;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_program_parse(text, "p.json", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    /* the bound, from the plan as the reader derives it: R_X of up's tensors */
    int64_t r = 1;
    for (int t = 0; t < p.ops[0].expr.ntensors; t++)
        if (p.ops[0].active_info.rings[t] > r) r = p.ops[0].active_info.rings[t];
    int64_t most = r > 2 ? r - 1 : 1;
    cr_assert_leq(p.ops[0].setup_rounds, most, "the compiler's own count is within the bound");
    rotor_program_free(&p);
    char v[32], want[200];
    snprintf(v, sizeof v, "%lld", (long long)most);
    cr_assert_eq(edited(text, &chip, 0, "setup_rounds", v, &err), ROTOR_OK, "%s", err.msg);
    snprintf(v, sizeof v, "%lld", (long long)most + 1);
    cr_assert_eq(edited(text, &chip, 0, "setup_rounds", v, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want,
             "p.json: operators[0].setup_rounds: expected an integer from 0 to %lld (the active plan's most rings "
             "less one, or 1), got %lld",
             (long long)most, (long long)most + 1);
    cr_assert_str_eq(err.msg, want);
}

Test(bounds, sram_bytes_of_a_program_must_be_the_chips, .init = setup_program, .fini = teardown_program) {
    rotor_error err = {{0}};
    cr_assert_eq(edited(text, &chip, -1, "sram_bytes", "-1", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "p.json: sram_bytes: expected 638976 (the chip's sram_bytes), got -1");
    /* the file's own chip (chip_file) says 638,976: the two words of the
     * file disagree, and the message names both */
    cr_assert_eq(edited(text, &chip, -1, "sram_bytes", "638977", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "p.json: chip_file.sram_bytes: 638976 is not the program's sram_bytes, 638977");
}

Test(bounds, byte_counts_of_one_core_are_at_most_its_sram, .init = setup_program, .fini = teardown_program) {
    rotor_error err = {{0}};
    cr_assert_eq(edited(text, &chip, 1, "live_bytes", "638977", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "p.json: operators[1].live_bytes: expected an integer from 0 to 638976 (the chip's "
                              "sram_bytes: one core holds them), got 638977");
    /* setup bytes pass through one port: at most N * S = 1472 * 638976 */
    cr_assert_eq(edited(text, &chip, 0, "setup_bytes", "1e12", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "p.json: operators[0].setup_bytes: expected an integer from 0 to 940572672 (the "
                              "chip's cores times sram_bytes), got 1000000000000");
}

Test(bounds, an_idle_split_is_at_most_the_idle_plans_most_rings, .init = setup_program, .fini = teardown_program) {
    /* the bound from up's idle plan, derived here as the reader derives it */
    rotor_program p;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_program_parse(text, "p.json", &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    rotor_plan_info info;
    cr_assert_eq(rotor_plan_derive(&p.ops[0].expr, &chip, &p.ops[0].idle_base, &info, &err), ROTOR_OK);
    int64_t r = 1;
    for (int t = 0; t < p.ops[0].expr.ntensors; t++)
        if (info.rings[t] > r) r = info.rings[t];
    cr_assert_leq(p.ops[0].idle_split, r, "the compiler's own split is within the bound");
    rotor_program_free(&p);
    char v[32], want[200];
    snprintf(v, sizeof v, "%lld", (long long)r);
    cr_assert_eq(edited(text, &chip, 0, "idle.split", v, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(edited(text, &chip, 0, "idle.split", "1e6", &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want,
             "p.json: operators[0].idle.split: expected an integer from 1 to %lld (the idle plan's most rings), "
             "got 1000000",
             (long long)r);
    cr_assert_str_eq(err.msg, want);
}

Test(bounds, an_extent_is_at_most_what_dim_takes, .init = setup_program, .fini = teardown_program) {
    rotor_error err = {{0}};
    cr_assert_eq(edited(text, &chip, 0, "dims.m", "4294967297", &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "p.json: operators[0].dims.m: expected an integer from 1 to 4294967296 "
                              "(ROTOR_EXTENT_MAX, the largest extent --dim takes), got 4294967297");
}

Test(bounds, a_pipelined_stages_setup_is_one_gather) {
    rotor_chip c;
    rotor_graph mlp;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&c, "cores_per_chip=256", &err), ROTOR_OK, "%s", err.msg);
    int x;
    mlp_graph(&mlp, &x);
    rotor_compile_options o = MLP_PIPELINE;
    rotor_compile_result r;
    cr_assert_eq(rotor_compile(&mlp, &c, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(r.nsegments, 0);
    char *t;
    cr_assert_eq(rotor_program_write(&mlp, &c, &r, &t, &err), ROTOR_OK, "%s", err.msg);
    cJSON *root = cJSON_Parse(t);
    cJSON *seg = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "segments"), 0);
    cJSON *stage = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(seg, "stages"), 0);
    cr_assert(cJSON_ReplaceItemInObject(stage, "setup_rounds", cJSON_CreateNumber(2)));
    char *bad = cJSON_Print(root);
    rotor_program p;
    cr_assert_eq(rotor_program_parse(bad, "p.json", &c, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "p.json: segments[0].stages[0].setup_rounds: expected an integer from 0 to 1 (a "
                              "stage's setup is one gather), got 2");
    free(bad);
    cJSON_Delete(root);
    free(t);
    rotor_compile_result_free(&r);
    rotor_graph_free(&mlp);
}

Test(bounds, an_operator_count_the_text_cannot_hold_is_refused_before_allocating) {
    /* 1,000 empty objects in under 3,100 bytes: the shortest operator takes 88 */
    char doc[4096];
    int n = snprintf(doc, sizeof doc, "{\"format\": \"rotor-program\", \"version\": 1, \"model\": \"m\", "
                                        "\"chip\": \"ipu-mk2\", \"cores\": 1472, \"sram_bytes\": 638976, \"totals\": "
                                        "{\"total_s\": 0, \"setup_s\": 0, \"compute_s\": 0, \"communication_s\": 0, "
                                        "\"reduction_s\": 0, \"vendor_s\": 0, \"idle_bytes\": 0, \"peak_bytes\": 0}, "
                                        "\"operators\": [{}");
    for (int i = 1; i < 1000; i++) n += snprintf(doc + n, sizeof doc - (size_t)n, ",{}");
    snprintf(doc + n, sizeof doc - (size_t)n, "]}");
    rotor_chip c = mk2();
    rotor_program p;
    rotor_error err = {{0}};
    char want[160];
    cr_assert_eq(rotor_program_parse(doc, "p.json", &c, &p, &err), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want,
             "p.json: operators: 1000 entries, more than the text holds (one per 88 bytes, at most %zu)",
             strlen(doc) / 88);
    cr_assert_str_eq(err.msg, want);
    cr_assert_null(p.ops);
}
