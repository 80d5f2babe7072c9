/* test_energystore.c — the energy model's counts kept in the plan cache's
 * directory (src/compile/energystore.c, the .ren files; issue 45;
 * docs/compile.md, "Plan cache"):
 *  - a count into a fresh directory, and the warm count from its file,
 *    are the count without a cache, every field;
 *  - the warm count takes every operator's counts from the file and walks
 *    none of them again: with the file's matrix FLOPs zeroed (checksum
 *    made good) the warm total has none;
 *  - a truncated file is counted damaged, ignored (the same counts) and
 *    rewritten whole;
 *  - the directory's size limit counts the .ren files;
 *  - one thread and two count the same. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "rotor/base/hash.h"
#include "rotor/compile/energy.h"
#include "rotor/compile/plancache.h"
#include "rotor/pipeline/pipeline.h"

/* The one .ren file under dir (malloc'd path); fails when not one. */
static char *ren_file(const char *dir) {
    DIR *d = opendir(dir);
    cr_assert(d);
    char *path = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".ren")) continue;
        n++;
        free(path);
        cr_assert(asprintf(&path, "%s/%s", dir, de->d_name) > 0);
    }
    closedir(d);
    cr_assert_eq(n, 1, "%d .ren files under %s", n, dir);
    return path;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    char *t = malloc(1 << 24);
    *len = fread(t, 1, (1 << 24) - 1, f);
    t[*len] = '\0';
    fclose(f);
    return t;
}

static void spit(const char *path, const char *t, size_t len) {
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(t, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static void same_counts(const rotor_energy_counts *a, const rotor_energy_counts *b, const char *what) {
    cr_assert_eq(a->matrix_flops, b->matrix_flops, "%s", what);
    cr_assert_eq(a->vector_flops, b->vector_flops, "%s", what);
    cr_assert_eq(a->sram_read_bytes, b->sram_read_bytes, "%s", what);
    cr_assert_eq(a->sram_write_bytes, b->sram_write_bytes, "%s", what);
    cr_assert_eq(a->byte_hops, b->byte_hops, "%s", what);
    cr_assert_eq(a->hbm_bytes, b->hbm_bytes, "%s", what);
    cr_assert_eq(a->interchip_bytes, b->interchip_bytes, "%s", what);
}

/* One BERT layer (hand-offs, vendor operators, reductions) on ipu-mk2. */
static void compile_bert_layer(const rotor_chip *chip, rotor_pipeline *pp) {
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "bert-base", .zoo = {.layers = 1, .seq = 8, .batch = 1}, .t10 = true,
                                 .program = true};
    cr_assert_eq(rotor_pipeline_run(&po, chip, pp, &err), ROTOR_OK, "%s", err.msg);
}

static void count(const rotor_program *p, const rotor_chip *chip, const char *dir, int want_damaged,
                  rotor_energy_counts *c) {
    rotor_error err = {{0}};
    int damaged = -1;
    cr_assert_eq(rotor_energy_program_cached(p, chip, dir, 0, &damaged, c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(damaged, want_damaged);
}

Test(energystore, a_warm_count_from_the_file_is_the_count_without_a_cache, .timeout = 120) {
    rotor_chip chip = mk2();
    rotor_pipeline pp;
    compile_bert_layer(&chip, &pp);
    rotor_error err = {{0}};
    rotor_energy_counts none, cold, warm;
    cr_assert_eq(rotor_energy_program(&pp.program, &chip, &none, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(none.matrix_flops, 0);
    cr_assert_gt(none.byte_hops, 0);
    char *d = fixture_tmp_dir("energystore");
    count(&pp.program, &chip, d, 0, &cold);
    same_counts(&cold, &none, "cold");
    char *path = ren_file(d);
    size_t len;
    char *t = slurp(path, &len);
    cr_assert(!strncmp(t, "rotor-energycache 2\nkey ", 24), "%.40s", t);
    count(&pp.program, &chip, d, 0, &warm);
    same_counts(&warm, &none, "warm");
    /* a warm count that learnt nothing leaves the file as it was */
    size_t len2;
    char *t2 = slurp(path, &len2);
    cr_assert(len2 == len && !memcmp(t, t2, len));
    free(t2);
    free(t);
    free(path);
    fixture_rm_dir(d);
    rotor_pipeline_free(&pp);
}

/* Every record's first count (matrix FLOPs) set to 0 and the checksum made
 * good again: a warm count that still found matrix FLOPs would have counted
 * some operator afresh (walked its hand-offs); it finds none. */
Test(energystore, a_warm_count_walks_no_operator_again, .timeout = 120) {
    rotor_chip chip = mk2();
    rotor_pipeline pp;
    compile_bert_layer(&chip, &pp);
    rotor_energy_counts cold, warm;
    char *d = fixture_tmp_dir("energystore");
    count(&pp.program, &chip, d, 0, &cold);
    cr_assert_gt(cold.matrix_flops, 0);
    char *path = ren_file(d);
    size_t len;
    char *t = slurp(path, &len);
    char *out = malloc(len + 64), *o = out;
    int records = 0;
    /* the lines before the checksum, each record's first count zeroed */
    for (char *line = t; line < t + len - 26;) {
        char *nl = strchr(line, '\n');
        size_t n = (size_t)(nl - line) + 1;
        if (!strncmp(line, "r ", 2)) {
            char *p = line + 2;
            for (int f = 0; f < 2; f++) p = strchr(p, ' ') + 1; /* past the length and the hex */
            char *q = strchr(p, ' ');
            memcpy(o, line, (size_t)(p - line));
            o += p - line;
            *o++ = '0';
            memcpy(o, q, (size_t)(nl + 1 - q));
            o += nl + 1 - q;
            records++;
        } else {
            memcpy(o, line, n);
            o += n;
        }
        line = nl + 1;
    }
    o += sprintf(o, "checksum %016llx\n",
                 (unsigned long long)rotor_fnv1a_bytes(ROTOR_FNV1A_SEED, out, (size_t)(o - out)));
    cr_assert_gt(records, 3);
    spit(path, out, (size_t)(o - out));
    count(&pp.program, &chip, d, 0, &warm);
    cr_assert_eq(warm.matrix_flops, 0, "%lld matrix FLOPs counted afresh", (long long)warm.matrix_flops);
    cr_assert_eq(warm.byte_hops, cold.byte_hops); /* the rest from the file, as counted */
    cr_assert_eq(warm.vector_flops, cold.vector_flops);
    free(out);
    free(t);
    free(path);
    fixture_rm_dir(d);
    rotor_pipeline_free(&pp);
}

/* A file cut in half (a writer killed mid-way, before the rename existed;
 * or a disk's damage) is counted damaged, ignored, and rewritten whole. */
Test(energystore, a_truncated_file_is_ignored_and_rewritten, .timeout = 120) {
    rotor_chip chip = mk2();
    rotor_pipeline pp;
    compile_bert_layer(&chip, &pp);
    rotor_energy_counts cold, again, warm;
    char *d = fixture_tmp_dir("energystore");
    count(&pp.program, &chip, d, 0, &cold);
    char *path = ren_file(d);
    size_t len;
    char *t = slurp(path, &len);
    cr_assert_eq(truncate(path, (off_t)(len / 2)), 0);
    count(&pp.program, &chip, d, 1, &again);
    same_counts(&again, &cold, "after damage");
    size_t len2;
    char *t2 = slurp(path, &len2);
    cr_assert(len2 == len && !memcmp(t, t2, len), "rewritten: %zu bytes, %zu before", len2, len);
    count(&pp.program, &chip, d, 0, &warm);
    same_counts(&warm, &cold, "warm after the rewrite");
    free(t2);
    free(t);
    free(path);
    fixture_rm_dir(d);
    rotor_pipeline_free(&pp);
}

/* The size limit counts the .ren files and evicts them like entries. */
Test(energystore, the_size_limit_counts_the_energy_files) {
    char *d = fixture_tmp_dir("energystore"), *p = NULL;
    cr_assert(asprintf(&p, "%s/0123456789abcdef.ren", d) > 0);
    spit(p, "x\n", 2);
    cr_assert_eq(rotor_plancache_evict(d, 1), 1);
    cr_assert_eq(access(p, F_OK), -1);
    free(p);
    fixture_rm_dir(d);
}

/* The operators whose events are counted are counted in parallel, each on
 * its own counter and placer, and summed in operator order (energy.c,
 * "One expression operator's part of the count"): one thread and two give
 * the same counts, every field, on an all-to-all chip and on a mesh (each
 * thread lays its plans out in its own buffer), for two BERT layers (the
 * second layer's operators are the memo's). */
Test(energystore, one_thread_and_two_count_the_same, .timeout = 120) {
    rotor_chip chips[2] = {mk2(), mk2()};
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2-mesh", &chips[1], &err), ROTOR_OK, "%s", err.msg);
    for (int i = 0; i < 2; i++) {
        rotor_pipeline pp;
        rotor_pipeline_options po = {.model = "bert-base", .zoo = {.layers = 2, .seq = 8, .batch = 1},
                                     .t10 = true, .program = true};
        cr_assert_eq(rotor_pipeline_run(&po, &chips[i], &pp, &err), ROTOR_OK, "%s", err.msg);
        rotor_energy_counts one, two;
        omp_set_num_threads(1);
        cr_assert_eq(rotor_energy_program(&pp.program, &chips[i], &one, &err), ROTOR_OK, "%s", err.msg);
        omp_set_num_threads(2);
        cr_assert_eq(rotor_energy_program(&pp.program, &chips[i], &two, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_gt(one.byte_hops, 0);
        same_counts(&two, &one, chips[i].name);
        rotor_pipeline_free(&pp);
    }
}
