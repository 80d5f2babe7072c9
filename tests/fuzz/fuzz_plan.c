/* Fuzzes plan JSON (docs/plan-format.md) for the T10 benchmark's MatMul
 * shape family: a plan that reads is derived on ipu-mk2, which accepts it or
 * names the broken rule. */
#include "fuzz.h"
#include "rotor/base/chip.h"
#include "rotor/op/planfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static rotor_expr e;
    static rotor_chip chip;
    static int ready;
    rotor_error err = {{0}};
    if (!ready) {
        if (rotor_expr_make("C[m,n] += A[m,k] * B[k,n]", "m=64,k=96,n=80", &e, &err) ||
            rotor_chip_preset("ipu-mk2", &chip, &err))
            abort();
        ready = 1;
    }
    char *text = fuzz_text(data, size);
    rotor_plan p;
    rotor_status st = rotor_planfile_parse(text, "fuzz.json", &e, &p, &err);
    fuzz_check_error(st, &err);
    if (!st) {
        rotor_plan_info info;
        fuzz_check_error(rotor_plan_derive(&e, &chip, &p, &info, &err), &err);
    }
    free(text);
    return 0;
}
