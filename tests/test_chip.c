/* test_chip.c — the chip model (src/base/chip.c, docs/chip-format.md).
 * Run from the repository root: some tests read the files in chips/. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rotor/base/chip.h"

/* ---- helpers ------------------------------------------------------------- */

/* Writes text to a fresh temporary *.json file; path receives its name. */
static void chip_temp_file(const char *text, char path[64]) {
    strcpy(path, "/tmp/rotor-test-chip-XXXXXX.json");
    int fd = mkstemps(path, 5);
    cr_assert_geq(fd, 0, "mkstemps failed");
    size_t len = strlen(text);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
}

/* Loads a chip file with the given body; returns the status, message in err. */
static rotor_status chip_load_text(const char *text, rotor_chip *out, rotor_error *err,
                                   char path[64]) {
    chip_temp_file(text, path);
    rotor_status st = rotor_chip_load(path, out, err);
    unlink(path);
    return st;
}

/* A complete ipu-mk2-like file body with one field replaced by `override`
 * ("\"key\": value"), or left as is if override is NULL. */
#define MK2_BASE "\"format\": \"rotor-chip\", \"version\": 1, \"base\": \"ipu-mk2\""

static rotor_status load_override(const char *override, rotor_chip *out, rotor_error *err,
                                  char path[64]) {
    char text[1024];
    snprintf(text, sizeof text, "{" MK2_BASE "%s%s}\n", override ? ", " : "",
             override ? override : "");
    return chip_load_text(text, out, err, path);
}

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* A chip file of `text` is refused as bad input with a message that has
 * msg (after the file's path). */
static void text_refused(const char *text, const char *msg) {
    rotor_chip c;
    rotor_error err = {{0}};
    char path[64];
    cr_assert_eq(chip_load_text(text, &c, &err, path), ROTOR_ERR_INPUT, "%s", text);
    assert_msg_has(err, msg);
}

/* Loading the chip file `path` fails with status `want` and exactly the
 * message msg. */
static void file_refused(const char *path, rotor_status want, const char *msg) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_load(path, &c, &err), want, "%s", path);
    cr_assert_str_eq(err.msg, msg);
}

/* The same for an ipu-mk2-based file with `override` (load_override). */
static void override_refused(const char *override, const char *msg) {
    char text[1024];
    snprintf(text, sizeof text, "{" MK2_BASE ", %s}\n", override);
    text_refused(text, msg);
}

/* ---- presets ------------------------------------------------------------- */

/* cost-model-v1.md "Chip": N = 1472, S = 624 KiB, beta = 5.5e9, alpha = 0,
 * R_mm = 250e12 / 1472, r = c = 16, B_buf = 8192, e = 2. */
Test(chip, ipu_mk2_preset_has_spec_constants) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, &err), ROTOR_OK);
    cr_assert_str_eq(c.name, "ipu-mk2");
    /* every number, as a double (each holds its value exactly) */
#define FIELD(f, v) {#f, (double)c.f, v}
    const struct {
        const char *name;
        double got, want;
    } spec[] = {
        FIELD(cores_per_chip, 1472), FIELD(chips, 1), FIELD(sram_bytes, 638976), FIELD(link_gbps, 5.5),
        FIELD(link_latency_ns, 0.0), FIELD(matrix_tflops, 250.0), FIELD(vector_tflops, 62.5),
        FIELD(systolic_rows, 16), FIELD(systolic_cols, 16), FIELD(shift_buffer_bytes, 8192), FIELD(element_bytes, 2),
        FIELD(topology, ROTOR_TOPO_ALL_TO_ALL), FIELD(mesh_width, 0), FIELD(mesh_height, 0),
        FIELD(interchip_gbps, 0.0), FIELD(hbm_bytes, 0), FIELD(hbm_gbps, 0.0), FIELD(hbm_controllers, 0),
    };
#undef FIELD
    for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++)
        cr_assert_eq(spec[i].got, spec[i].want, "%s: %g, expected %g", spec[i].name, spec[i].got, spec[i].want);
}

Test(chip, ipu_mk2_derived_rates_match_spec_to_the_bit) {
    rotor_chip c;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    cr_assert_eq(rotor_chip_cores(&c), 1472);
    cr_assert_eq(rotor_chip_link_bw(&c), 5.5e9);
    cr_assert_eq(rotor_chip_link_latency(&c), 0.0);
    cr_assert_eq(rotor_chip_matrix_rate(&c), 250e12 / 1472);
    cr_assert_eq(rotor_chip_vector_rate(&c), 62.5e12 / 1472);
}

/* Elk §5: IPU-POD4 = 4 IPU Mk2, 5,888 cores, 640 GB/s inter-chip; Elk §6.1:
 * 4 HBM3E per chip, 16 TB/s over 4 chips. */
Test(chip, ipu_pod4_is_four_mk2_with_5888_cores_and_hbm) {
    rotor_chip c, mk2;
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &c, NULL), ROTOR_OK);
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &mk2, NULL), ROTOR_OK);
    cr_assert_str_eq(c.name, "ipu-pod4");
    cr_assert_eq(c.chips, 4);
    cr_assert_eq(rotor_chip_cores(&c), 5888);
    cr_assert_eq(c.cores_per_chip, mk2.cores_per_chip);
    cr_assert_eq(c.sram_bytes, mk2.sram_bytes);
    cr_assert_eq(c.link_gbps, mk2.link_gbps);
    cr_assert_eq(rotor_chip_matrix_rate(&c), rotor_chip_matrix_rate(&mk2));
    cr_assert_eq(c.interchip_gbps, 640.0);
    cr_assert_eq(c.hbm_gbps * (double)c.chips, 16000.0);
    cr_assert_eq(c.hbm_controllers, 4);
    cr_assert_eq(c.hbm_bytes, 96LL * 1024 * 1024 * 1024);
}

/* IPU-POD16: four IPU-M2000 of four Mk2 each, 23,552 cores; ipu-pod4's
 * inter-chip bandwidth per chip (160 GB/s) and HBM per chip. */
Test(chip, ipu_pod16_is_sixteen_mk2_with_pod4s_bandwidth_per_chip) {
    rotor_chip c, pod4;
    cr_assert_eq(rotor_chip_preset("ipu-pod16", &c, NULL), ROTOR_OK);
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &pod4, NULL), ROTOR_OK);
    cr_assert_eq(c.chips, 16);
    cr_assert_eq(rotor_chip_cores(&c), 23552);
    cr_assert_eq(c.interchip_gbps / (double)c.chips, pod4.interchip_gbps / (double)pod4.chips);
    cr_assert_eq(c.interchip_gbps, 2560.0);
    cr_assert_eq(c.hbm_gbps, pod4.hbm_gbps);
    cr_assert_eq(c.hbm_controllers, pod4.hbm_controllers);
    cr_assert_eq(c.hbm_bytes, pod4.hbm_bytes);
    cr_assert_eq(rotor_chip_matrix_rate(&c), rotor_chip_matrix_rate(&pod4));
}

Test(chip, presets_are_listed_and_valid) {
    cr_assert_eq(rotor_chip_preset_count(), 8); /* 3..5: the mesh presets, test_chippresets.c; 6: stcp920, test_chiphier.c; 7: kapla-edge, test_kaplabase.c */
    cr_assert_str_eq(rotor_chip_preset_name(0), "ipu-mk2");
    cr_assert_str_eq(rotor_chip_preset_name(1), "ipu-pod4");
    cr_assert_str_eq(rotor_chip_preset_name(2), "ipu-pod16");
    cr_assert_str_eq(rotor_chip_preset_name(7), "kapla-edge");
    cr_assert_null(rotor_chip_preset_name(8));
    cr_assert_null(rotor_chip_preset_name(-1));
    for (int i = 0; i < rotor_chip_preset_count(); i++) {
        rotor_chip c;
        rotor_error err = {{0}};
        cr_assert_eq(rotor_chip_preset(rotor_chip_preset_name(i), &c, &err), ROTOR_OK);
        cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    }
}

Test(chip, unknown_preset_names_the_presets_and_the_file_option) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_resolve("xyz", &c, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "unknown chip 'xyz' (presets: ipu-mk2, ipu-pod4, ipu-pod16, ipu-mk2-mesh, "
                              "wormhole-n150, wse2, stcp920, kapla-edge; or give a path "
                              "to a .json chip file)");
}

Test(chip, resolve_treats_plain_names_as_presets_and_paths_as_files) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_resolve("ipu-pod4", &c, &err), ROTOR_OK);
    cr_assert_eq(c.chips, 4);
    cr_assert_eq(rotor_chip_resolve("chips/example-mesh.json", &c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.topology, ROTOR_TOPO_MESH);
    /* ".json" without a slash is a file, not a preset */
    cr_assert_eq(rotor_chip_resolve("ipu-mk2.json", &c, &err), ROTOR_ERR_IO);
    cr_assert_str_eq(err.msg, "ipu-mk2.json: cannot open: No such file or directory");
}

/* ---- loading files ------------------------------------------------------- */

Test(chip, example_mesh_file_loads_as_a_16x16_mesh) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_load("chips/example-mesh.json", &c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(c.name, "example-mesh");
    cr_assert_eq(c.topology, ROTOR_TOPO_MESH);
    cr_assert_eq(c.mesh_width, 16);
    cr_assert_eq(c.mesh_height, 16);
    cr_assert_eq(rotor_chip_cores(&c), 256);
    cr_assert_eq(c.link_latency_ns, 10.0);
    cr_assert_eq(rotor_chip_link_latency(&c), 10.0 * 1e-9);
    cr_assert_eq(rotor_chip_link_bw(&c), 32e9);
    cr_assert_eq(c.hbm_bytes, 32LL * 1024 * 1024 * 1024);
}

Test(chip, example_mesh_file_is_byte_identical_to_what_the_writer_emits) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_load("chips/example-mesh.json", &c, &err), ROTOR_OK, "%s", err.msg);
    FILE *fp = fopen("chips/example-mesh.json", "rb");
    cr_assert_not_null(fp);
    char file[4096];
    size_t n = fread(file, 1, sizeof file - 1, fp);
    fclose(fp);
    file[n] = '\0';
    char *json = rotor_chip_to_json(&c);
    cr_assert_not_null(json);
    cr_assert_str_eq(json, file);
    free(json);
}

Test(chip, bad_key_file_names_the_path_and_the_key) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_load("chips/bad-key.json", &c, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "chips/bad-key.json: link_gbs: unknown key (known keys: format, version, "
                        "base, name, cores_per_chip,");
    assert_msg_has(err, "link_gbps");
}

Test(chip, bad_type_file_says_expected_positive_number_got_the_string) {
    file_refused("chips/bad-type.json", ROTOR_ERR_INPUT,
                 "chips/bad-type.json: link_gbps: expected a positive number, got \"fast\"");
}

Test(chip, missing_file_is_an_io_error_with_strerror) {
    file_refused("chips/no-such-chip.json", ROTOR_ERR_IO, "chips/no-such-chip.json: cannot open: No such file or directory");
}

Test(chip, directory_is_an_io_error) {
    file_refused("chips/", ROTOR_ERR_IO, "chips/: cannot read: Is a directory");
}

Test(chip, invalid_json_reports_the_line) {
    rotor_chip c;
    rotor_error err = {{0}};
    char path[64], want[160];
    cr_assert_eq(chip_load_text("{\n  \"format\": \"rotor-chip\",\n  \"version\": 1,,\n}\n", &c, &err,
                                path),
                 ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "%s: not valid JSON near line 3", path);
    assert_msg_has(err, want);
}

Test(chip, trailing_garbage_after_the_object_is_invalid_json) {
    text_refused("{" MK2_BASE "}\n\nx\n", "not valid JSON near line 3, column 1");
}

Test(chip, top_level_array_is_refused) {
    rotor_chip c;
    rotor_error err = {{0}};
    char path[64], want[160];
    cr_assert_eq(chip_load_text("[1, 2]", &c, &err, path), ROTOR_ERR_INPUT);
    snprintf(want, sizeof want, "%s: expected a JSON object at the top level, got an array", path);
    cr_assert_str_eq(err.msg, want);
}

Test(chip, wrong_format_and_version_are_refused) {
    text_refused("{\"format\": \"rotor-plan\", \"version\": 1}",
                 ": format: expected \"rotor-chip\", got \"rotor-plan\"");
    text_refused("{\"format\": \"rotor-chip\", \"version\": 2}", ": version: expected 1, got 2");
    text_refused("{\"version\": 1}", ": format: missing key");
}

Test(chip, unknown_base_lists_the_presets) {
    text_refused("{\"format\": \"rotor-chip\", \"version\": 1, \"base\": \"tpu\"}",
                 ": base: expected a preset name (ipu-mk2, ipu-pod4, ipu-pod16, ipu-mk2-mesh, "
                 "wormhole-n150, wse2, stcp920, kapla-edge), got \"tpu\"");
}

Test(chip, base_file_overrides_fields_and_takes_its_name_from_the_file) {
    rotor_chip c;
    rotor_error err = {{0}};
    char path[64];
    cr_assert_eq(load_override("\"link_gbps\": 11, \"link_latency_ns\": 2.5", &c, &err, path),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.link_gbps, 11.0);
    cr_assert_eq(c.link_latency_ns, 2.5);
    cr_assert_eq(c.cores_per_chip, 1472);
    /* the name defaults to the basename without ".json" */
    char want[64];
    const char *base = strrchr(path, '/') + 1;
    snprintf(want, sizeof want, "%.*s", (int)(strlen(base) - 5), base);
    cr_assert_str_eq(c.name, want);
}

Test(chip, file_without_base_must_give_every_required_key) {
    text_refused("{\"format\": \"rotor-chip\", \"version\": 1, \"cores_per_chip\": 4, "
                 "\"chips\": 1, \"sram_bytes\": 1024}",
                 ": link_gbps: missing key (expected a positive number;");
}

Test(chip, duplicate_key_is_refused) {
    override_refused("\"chips\": 1, \"chips\": 2", ": chips: duplicate key");
}

Test(chip, fractional_core_count_is_not_an_integer) {
    override_refused("\"cores_per_chip\": 1.5", ": cores_per_chip: expected a positive integer, got 1.5");
}

Test(chip, zero_and_negative_values_are_refused_where_positive_is_required) {
    override_refused("\"sram_bytes\": 0", ": sram_bytes: expected a positive integer, got 0");
    override_refused("\"matrix_tflops\": -250", ": matrix_tflops: expected a positive number, got -250");
    override_refused("\"link_latency_ns\": -1", ": link_latency_ns: expected a non-negative number, got -1");
}

/* The least rate is a rate: 1e-6 GB/s and TFLOP/s are read. */
Test(chip, the_least_rate_is_accepted) {
    rotor_chip c;
    rotor_error err = {{0}};
    char path[64];
    cr_assert_eq(load_override("\"link_gbps\": 1e-6, \"matrix_tflops\": 1e-6", &c, &err, path), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(c.link_gbps, 1e-6);
    cr_assert_eq(c.matrix_tflops, 1e-6);
}

Test(chip, zero_is_allowed_for_latency) {
    rotor_chip c;
    rotor_error err = {{0}};
    char path[64];
    cr_assert_eq(load_override("\"link_latency_ns\": 0", &c, &err, path), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.link_latency_ns, 0.0);
}

Test(chip, absurd_values_are_refused_with_the_bound) {
    override_refused("\"cores_per_chip\": 2000000",
                     ": cores_per_chip: expected a positive integer at most 1048576, got 2000000");
    override_refused("\"link_gbps\": 1e7", ": link_gbps: expected a positive number at most 1000000, got 10000000");
    /* a rate divides: below 1e-6 every time outgrows what is printed */
    override_refused("\"link_gbps\": 1e-300", ": link_gbps: expected a positive number at least 1e-06, got 1e-300");
    override_refused("\"hbm_gbps\": 9.9e-7, \"hbm_bytes\": 1, \"hbm_controllers\": 1",
                     ": hbm_gbps: expected 0 (none) or a number at least 1e-06, got 9.9e-07");
    override_refused("\"chips\": 1e300", ": chips: expected a positive integer at most 1024, got 1e+300");
    override_refused("\"element_bytes\": 3", ": element_bytes: expected 1, 2, 4 or 8, got 3");
    override_refused("\"shift_buffer_bytes\": 1000000",
                     ": shift_buffer_bytes: expected at most sram_bytes (638976), got 1000000");
}

Test(chip, wrong_json_types_are_named) {
    override_refused("\"topology\": \"ring\"", ": topology: expected \"all-to-all\" or \"mesh\", got \"ring\"");
    override_refused("\"chips\": \"4\"", ": chips: expected a positive integer, got \"4\"");
    override_refused("\"name\": 7", ": name: expected a string of 1 to 63 bytes");
    override_refused("\"hbm_gbps\": [1]", ": hbm_gbps: expected a non-negative number, got an array");
}

Test(chip, mesh_shape_must_multiply_to_cores_per_chip) {
    rotor_chip c;
    rotor_error err = {{0}};
    char path[64];
    override_refused("\"topology\": \"mesh\", \"mesh_width\": 32, \"mesh_height\": 32",
                     ": mesh_width, mesh_height: expected mesh_width * mesh_height == "
                     "cores_per_chip (1472) for topology \"mesh\", got 32 x 32");
    cr_assert_eq(load_override("\"topology\": \"mesh\", \"mesh_width\": 32, \"mesh_height\": 46", &c,
                               &err, path),
                 ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.mesh_width * c.mesh_height, 1472);
}

Test(chip, all_to_all_refuses_a_mesh_shape) {
    override_refused("\"mesh_width\": 32", ": mesh_width: expected 0 for topology \"all-to-all\", got 32");
}

Test(chip, several_chips_need_interchip_bandwidth) {
    override_refused("\"chips\": 2",
                     ": interchip_gbps: expected a positive number when chips > 1 (chips is 2), got 0");
}

Test(chip, hbm_fields_are_all_zero_or_all_positive) {
    override_refused("\"hbm_gbps\": 4000",
                     ": hbm_bytes, hbm_gbps, hbm_controllers: expected all zero (no HBM) or all "
                     "positive, got 0, 4000, 0");
}

Test(chip, load_failure_leaves_the_output_untouched) {
    rotor_chip c, before;
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &c, NULL), ROTOR_OK);
    before = c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_load("chips/bad-type.json", &c, &err), ROTOR_ERR_INPUT);
    cr_assert_eq(memcmp(&c, &before, sizeof c), 0);
}

/* ---- validate ------------------------------------------------------------ */

Test(chip, validate_catches_a_hand_built_bad_chip) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    c.vector_tflops = 0;
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "vector_tflops: expected a positive number, got 0");
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    c.topology = (rotor_topology)7;
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "topology: expected \"all-to-all\" or \"mesh\", got topology code 7");
}

/* ---- --set --------------------------------------------------------------- */

Test(chip, set_changes_one_field_of_each_kind) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&c, "link_gbps=11", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.link_gbps, 11.0);
    cr_assert_eq(rotor_chip_set(&c, "sram_bytes=1048576", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.sram_bytes, 1048576);
    cr_assert_eq(rotor_chip_set(&c, "name=mk2-fast", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(c.name, "mk2-fast");
    cr_assert_eq(rotor_chip_set(&c, "link_latency_ns=0.5", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.link_latency_ns, 0.5);
    cr_assert_eq(c.cores_per_chip, 1472);
}

/* --set checks one field; relations wait for rotor_chip_validate, so a mesh
 * can be built one key at a time. */
Test(chip, set_builds_a_mesh_in_three_steps_then_validates) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&c, "topology=mesh", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "mesh_width, mesh_height: expected");
    cr_assert_eq(rotor_chip_set(&c, "mesh_width=32", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&c, "mesh_height=46", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.topology, ROTOR_TOPO_MESH);
}

/* Each case: assignment, expected message; the chip must be unchanged. */
Test(chip, set_errors_leave_the_chip_unchanged) {
    static const char *const cases[][2] = {
        {"link_gbps=fast", "--set: link_gbps: expected a positive number, got \"fast\""},
        {"foo=1", "--set: foo: unknown key (known keys: name, cores_per_chip,"},
        {"format=rotor-chip", "--set: format: unknown key"},
        {"abc", "--set: expected key=value, got \"abc\""},
        {"=5", "--set: expected key=value, got \"=5\""},
        {"cores_per_chip=1.5", "--set: cores_per_chip: expected a positive integer, got 1.5"},
        {"cores_per_chip=0", "--set: cores_per_chip: expected a positive integer, got 0"},
        {"chips=-2", "--set: chips: expected a positive integer, got -2"},
        {"chips=2048", "--set: chips: expected a positive integer at most 1024, got 2048"},
        {"link_gbps=", "--set: link_gbps: expected a positive number, got \"\""},
        {"link_gbps=inf", "--set: link_gbps: expected a positive number, got \"inf\""},
        {"link_gbps=0x10", "--set: link_gbps: expected a positive number, got \"0x10\""},
        {"matrix_tflops=1e999", "--set: matrix_tflops: expected a positive number at most 1000000, got 1e999"},
        {"vector_tflops=1e-300", "--set: vector_tflops: expected a positive number at least 1e-06, got 1e-300"},
        {"element_bytes=3", "--set: element_bytes: expected 1, 2, 4 or 8, got 3"},
        {"topology=ring", "--set: topology: expected \"all-to-all\" or \"mesh\", got \"ring\""},
        {"name=", "--set: name: expected a string of 1 to 63 bytes without control characters, got \"\""},
        {"name=0123456789012345678901234567890123456789012345678901234567890123",
         "--set: name: expected a string of 1 to 63 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rotor_chip c, before;
        rotor_error err = {{0}};
        cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
        before = c;
        cr_assert_eq(rotor_chip_set(&c, cases[i][0], &err), ROTOR_ERR_INPUT, "%s", cases[i][0]);
        cr_assert(strncmp(err.msg, cases[i][1], strlen(cases[i][1])) == 0,
                  "--set %s: message \"%s\" does not start with \"%s\"", cases[i][0], err.msg,
                  cases[i][1]);
        cr_assert_eq(memcmp(&c, &before, sizeof c), 0, "--set %s changed the chip", cases[i][0]);
    }
}

/* ---- the writer ---------------------------------------------------------- */

static void assert_round_trip(const char *preset) {
    rotor_chip c, back;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset(preset, &c, NULL), ROTOR_OK);
    char *json = rotor_chip_to_json(&c);
    cr_assert_not_null(json);
    char path[64];
    chip_temp_file(json, path);
    memset(&back, 0xA5, sizeof back); /* padding must not matter: compare fields */
    rotor_status st = rotor_chip_load(path, &back, &err);
    unlink(path);
    cr_assert_eq(st, ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(back.name, c.name);
    cr_assert_eq(back.cores_per_chip, c.cores_per_chip);
    cr_assert_eq(back.chips, c.chips);
    cr_assert_eq(back.sram_bytes, c.sram_bytes);
    cr_assert_eq(memcmp(&back.link_gbps, &c.link_gbps, sizeof(double)), 0);
    cr_assert_eq(memcmp(&back.link_latency_ns, &c.link_latency_ns, sizeof(double)), 0);
    cr_assert_eq(memcmp(&back.matrix_tflops, &c.matrix_tflops, sizeof(double)), 0);
    cr_assert_eq(memcmp(&back.vector_tflops, &c.vector_tflops, sizeof(double)), 0);
    cr_assert_eq(back.systolic_rows, c.systolic_rows);
    cr_assert_eq(back.systolic_cols, c.systolic_cols);
    cr_assert_eq(back.shift_buffer_bytes, c.shift_buffer_bytes);
    cr_assert_eq(back.element_bytes, c.element_bytes);
    cr_assert_eq(back.topology, c.topology);
    cr_assert_eq(back.mesh_width, c.mesh_width);
    cr_assert_eq(back.mesh_height, c.mesh_height);
    cr_assert_eq(memcmp(&back.interchip_gbps, &c.interchip_gbps, sizeof(double)), 0);
    cr_assert_eq(back.hbm_bytes, c.hbm_bytes);
    cr_assert_eq(memcmp(&back.hbm_gbps, &c.hbm_gbps, sizeof(double)), 0);
    cr_assert_eq(back.hbm_controllers, c.hbm_controllers);
    /* and writing it again gives the same bytes */
    char *again = rotor_chip_to_json(&back);
    cr_assert_str_eq(again, json);
    free(again);
    free(json);
}

Test(chip, ipu_mk2_round_trips_through_the_file_format) { assert_round_trip("ipu-mk2"); }
Test(chip, ipu_pod4_round_trips_through_the_file_format) { assert_round_trip("ipu-pod4"); }
Test(chip, ipu_pod16_round_trips_through_the_file_format) { assert_round_trip("ipu-pod16"); }

Test(chip, awkward_doubles_round_trip_exactly) {
    rotor_chip c, back;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    c.link_gbps = 0.1 + 0.2; /* 0.30000000000000004 */
    c.matrix_tflops = 1.0 / 3.0;
    char *json = rotor_chip_to_json(&c);
    cr_assert_not_null(json);
    char path[64];
    chip_temp_file(json, path);
    free(json);
    rotor_status st = rotor_chip_load(path, &back, &err);
    unlink(path);
    cr_assert_eq(st, ROTOR_OK, "%s", err.msg);
    cr_assert_eq(back.link_gbps, 0.1 + 0.2);
    cr_assert_eq(back.matrix_tflops, 1.0 / 3.0);
}

Test(chip, writer_starts_with_format_and_version_in_a_stable_order) {
    rotor_chip c;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    char *json = rotor_chip_to_json(&c);
    cr_assert_not_null(json);
    const char *fmt = strstr(json, "\"format\""), *ver = strstr(json, "\"version\""),
               *name = strstr(json, "\"name\""), *hbm = strstr(json, "\"hbm_controllers\"");
    cr_assert(fmt && ver && name && hbm);
    cr_assert(fmt < ver && ver < name && name < hbm);
    cr_assert_not_null(strstr(json, "\"topology\":\t\"all-to-all\""));
    cr_assert_eq(json[strlen(json) - 1], '\n');
    free(json);
}

/* ---- energy coefficients (docs/chip-format.md, "Energy coefficients") ---- */

/* Every preset carries the eight coefficients, the same on every IPU Mk2
 * preset (the pods add chips, not a different chip). */
Test(chip, presets_carry_positive_energy_coefficients) {
    for (int i = 0; i < rotor_chip_preset_count(); i++) {
        rotor_chip c;
        cr_assert_eq(rotor_chip_preset(rotor_chip_preset_name(i), &c, NULL), ROTOR_OK);
        double v[] = {c.mac_pj, c.vector_flop_pj, c.sram_read_pj, c.sram_write_pj,
                      c.link_pj, c.hbm_pj, c.interchip_pj, c.static_w};
        for (int k = 0; k < 8; k++) cr_assert_gt(v[k], 0, "%s: coefficient %d", c.name, k);
        cr_assert_eq(c.mac_pj, 0.4);
        if (strncmp(c.name, "ipu-pod", 7) == 0 || strcmp(c.name, "ipu-mk2") == 0)
            cr_assert_eq(c.static_w, 25.0);
    }
}

/* A negative or non-numeric coefficient is refused, naming the key, from a
 * file and from --set; 0 (leave the event out) is accepted. */
Test(chip, a_negative_energy_coefficient_is_refused_naming_the_key) {
    rotor_chip c;
    rotor_error err = {{0}};
    char path[64];
    cr_assert_eq(load_override("\"hbm_pj\": -1", &c, &err, path), ROTOR_ERR_INPUT);
    assert_msg_has(err, ": hbm_pj: expected a non-negative number, got -1");
    cr_assert_eq(load_override("\"static_w\": \"hot\"", &c, &err, path), ROTOR_ERR_INPUT);
    assert_msg_has(err, ": static_w: expected a non-negative number, got \"hot\"");
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, NULL), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&c, "link_pj=-0.5", &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "link_pj");
    cr_assert_eq(rotor_chip_set(&c, "mac_pj=nan", &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "mac_pj");
    cr_assert_eq(rotor_chip_set(&c, "sram_write_pj=inf", &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "sram_write_pj");
    cr_assert_eq(rotor_chip_set(&c, "mac_pj=0", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.mac_pj, 0);
    cr_assert_eq(load_override("\"interchip_pj\": 12.5", &c, &err, path), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(c.interchip_pj, 12.5);
}

/* A chip of other cores keeps each core's rates; a chip of another matrix
 * rate keeps the balance of its compute: the vector rate and the int8 rate
 * follow in proportion (Elk Figures 23 and 24, rotor explore's cores and
 * flops keys, GraphTurbo's and KAPLA's core groups). */
Test(chip, a_chip_scaled_keeps_its_per_core_rates_or_its_balance) {
    rotor_chip c;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, &err), ROTOR_OK);
    c.int8_tops = 500;
    rotor_chip q = rotor_chip_with_cores(&c, 368);
    cr_assert_eq(q.cores_per_chip, 368);
    cr_assert_eq(rotor_chip_matrix_rate(&q), rotor_chip_matrix_rate(&c));
    cr_assert_eq(rotor_chip_vector_rate(&q), rotor_chip_vector_rate(&c));
    cr_assert_float_eq(q.int8_tops, 125, 1e-12);
    rotor_chip d = rotor_chip_with_cores(&c, 2944);
    cr_assert_float_eq(d.matrix_tflops, 500, 1e-12);
    rotor_chip f = rotor_chip_with_matrix_tflops(&c, 1000);
    cr_assert_eq(f.cores_per_chip, 1472);
    cr_assert_float_eq(f.matrix_tflops, 1000, 1e-12);
    cr_assert_float_eq(f.vector_tflops, 250, 1e-12);
    cr_assert_float_eq(f.int8_tops, 2000, 1e-12);
}

/* T10 Figure 20's part of a chip: on a mesh the squarest rectangle within
 * the chip's own mesh, on a chip of clusters whole clusters; a part that
 * cannot be made is refused, naming it. */
Test(chip, a_part_of_a_mesh_is_a_rectangle_of_it_and_of_clusters_whole_clusters) {
    rotor_chip c, p;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("wormhole-n150", &c, &err), ROTOR_OK);
    cr_assert_eq(c.mesh_width * c.mesh_height, 72);
    cr_assert_eq(rotor_chip_part(&c, 18, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.mesh_width, c.mesh_width == 8 ? 3 : 6);
    cr_assert_eq(p.mesh_width * p.mesh_height, 18);
    cr_assert_eq(rotor_chip_part(&c, 36, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.mesh_width, 6);
    cr_assert_eq(p.mesh_height, 6);
    cr_assert_eq(rotor_chip_matrix_rate(&p), rotor_chip_matrix_rate(&c));
    cr_assert_eq(rotor_chip_part(&c, 72, &p, &err), ROTOR_OK);
    cr_assert_eq(p.mesh_width, c.mesh_width);
    c.mesh_width = c.mesh_height = 2;
    c.cores_per_chip = 4;
    cr_assert_eq(rotor_chip_part(&c, 3, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "3 cores make no rectangle within chip 'wormhole-n150''s 2x2 mesh");
    cr_assert_eq(rotor_chip_preset("stcp920", &c, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_part(&c, 16, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.clusters, 2);
    cr_assert_eq(p.cores_per_cluster, 8);
    cr_assert_eq(rotor_chip_part(&c, 4, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.clusters, 1);
    cr_assert_eq(p.cores_per_cluster, 4);
    cr_assert_eq(rotor_chip_part(&c, 12, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "12 cores are not whole clusters of chip 'stcp920' (8 cores each)");
    cr_assert_eq(rotor_chip_part(&c, 33, &p, &err), ROTOR_ERR_INPUT);
}

/* rotor_chip_differences names the fields that differ, in the chip file's
 * order, never the name, and the network's only when asked. */
Test(chip, differences_name_the_fields_in_file_order) {
    rotor_chip a, b;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &a, NULL), ROTOR_OK);
    b = a;
    const char *keys[ROTOR_CHIP_FIELDS_MAX];
    cr_assert_eq(rotor_chip_differences(&a, &b, true, keys, ROTOR_CHIP_FIELDS_MAX), 0);
    snprintf(b.name, sizeof b.name, "mine");
    cr_assert_eq(rotor_chip_differences(&a, &b, true, keys, ROTOR_CHIP_FIELDS_MAX), 0);
    b.static_w = 0, b.link_gbps = 11, b.topology = ROTOR_TOPO_MESH, b.mesh_width = 32, b.mesh_height = 46;
    cr_assert_eq(rotor_chip_differences(&a, &b, false, keys, ROTOR_CHIP_FIELDS_MAX), 2);
    cr_assert_str_eq(keys[0], "link_gbps");
    cr_assert_str_eq(keys[1], "static_w");
    cr_assert_eq(rotor_chip_differences(&a, &b, true, keys, ROTOR_CHIP_FIELDS_MAX), 5);
    static const char *const want[] = {"link_gbps", "topology", "mesh_width", "mesh_height", "static_w"};
    for (int i = 0; i < 5; i++) cr_assert_str_eq(keys[i], want[i]);
    /* the first cap keys, the count whole */
    keys[1] = NULL;
    cr_assert_eq(rotor_chip_differences(&a, &b, true, keys, 1), 5);
    cr_assert_str_eq(keys[0], "link_gbps");
    cr_assert_null(keys[1]);
}
