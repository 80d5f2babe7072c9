/* Fuzzes the ONNX importer from a buffer (decode, bind, sort, shape
 * inference, folding, lowering), then the grouping of what it imports. */
#include "fuzz.h"
#include "rotor/model/group.h"
#include "rotor/model/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rotor_graph g, grouped;
    rotor_error err = {{0}};
    rotor_status st = rotor_onnx_load_buffer(data, size, "fuzz.onnx", NULL, &g, NULL, &err);
    fuzz_check_error(st, &err);
    if (!st) {
        st = rotor_group(&g, &grouped, NULL, &err);
        fuzz_check_error(st, &err);
        rotor_graph_free(&grouped);
    }
    rotor_graph_free(&g);
    return 0;
}
