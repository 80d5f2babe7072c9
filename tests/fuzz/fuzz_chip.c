/* Fuzzes chip JSON (docs/chip-format.md): a chip that loads is valid and
 * round-trips through the writer to the same chip. */
#include "fuzz.h"
#include "rotor/base/chip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rotor_chip c, again;
    rotor_error err = {{0}};
    rotor_status st = rotor_chip_parse((const char *)data, size, "fuzz.json", &c, &err);
    fuzz_check_error(st, &err);
    if (st) return 0;
    if (rotor_chip_validate(&c, &err)) abort(); /* a loaded chip is valid */
    char *text = rotor_chip_to_json(&c);
    if (!text) abort();
    st = rotor_chip_parse(text, strlen(text), "fuzz.json", &again, &err);
    if (st || rotor_chip_cores(&again) != rotor_chip_cores(&c) || again.sram_bytes != c.sram_bytes) abort();
    free(text);
    return 0;
}
