/* Fuzzes program JSON (docs/program-format.md) read for ipu-mk2.  To get
 * past the reader's consistency checks often, the seeds are real compiled
 * programs (tests/fuzz/corpus/program/) and the custom mutator below
 * mostly changes the values of a parsed program, not its structure; one
 * mutation in eight is libFuzzer's own, on the bytes. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>

#include "fuzz.h"
#include "rotor/base/chip.h"
#include "rotor/compile/program.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static rotor_chip chip;
    static int ready;
    rotor_error err = {{0}};
    if (!ready) {
        if (rotor_chip_preset("ipu-mk2", &chip, &err)) abort();
        ready = 1;
    }
    char *text = fuzz_text(data, size);
    rotor_program p = {0};
    rotor_status st = rotor_program_parse(text, "fuzz.json", &chip, &p, &err);
    fuzz_check_error(st, &err);
    rotor_program_free(&p);
    free(text);
    return 0;
}

/* The n-th number of the tree in document order (*n counts down). */
static cJSON *nth_number(cJSON *x, int *n) {
    for (; x; x = x->next) {
        if (cJSON_IsNumber(x) && (*n)-- == 0) return x;
        cJSON *in = nth_number(x->child, n);
        if (in) return in;
    }
    return NULL;
}

static int count_numbers(const cJSON *x) {
    int n = 0;
    for (; x; x = x->next) n += cJSON_IsNumber(x) + count_numbers(x->child);
    return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    uint64_t r = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    char *text = fuzz_text(data, size);
    cJSON *root = r % 8 ? cJSON_Parse(text) : NULL;
    free(text);
    int n = root ? count_numbers(root->child) : 0;
    if (!n) {
        cJSON_Delete(root);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    for (int k = 0; k < 1 + (int)((r >> 8) % 3); k++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        int i = (int)((r >> 16) % (uint64_t)n);
        cJSON *x = nth_number(root->child, &i);
        double v = x->valuedouble;
        static const double odd[] = {0, -1, 1, 2, 3, 1e15, 9.3e18, 1e300, -1e300, 0.5, 1472, 1473, 65536};
        switch ((r >> 40) % 6) {
        case 0: v = odd[(r >> 20) % (sizeof odd / sizeof odd[0])]; break;
        case 1: v = v * 2; break;
        case 2: v = floor(v / 2); break;
        case 3: v = v + 1; break;
        case 4: v = v - 1; break;
        default: v = (double)((r >> 24) % 4096); break;
        }
        cJSON_SetNumberValue(x, v);
    }
    char *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    size_t len = out ? strlen(out) : 0;
    if (!out || len > max_size) {
        free(out);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    memcpy(data, out, len);
    free(out);
    return len;
}
