/* Fuzzes tensor expressions with their extents: the bytes are
 * "EXPRESSION\nDIMS"; an operator that binds is checked for evaluation. */
#include "fuzz.h"
#include "rotor/op/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    char *nl = strchr(text, '\n');
    const char *dims = "";
    if (nl) {
        *nl = '\0';
        dims = nl + 1;
    }
    rotor_expr e;
    rotor_error err = {{0}};
    rotor_status st = rotor_expr_make(text, dims, &e, &err);
    fuzz_check_error(st, &err);
    if (!st && e.op_class != ROTOR_OP_CONTRACTION) fuzz_check_error(rotor_expr_check_eval(&e, &err), &err);
    free(text);
    return 0;
}
