/* chippresets — writes every built-in chip preset as a chip file, DIR/NAME.json,
 * for make install (share/rotor/chips, docs/install.md).
 *
 *   build/chippresets DIR
 *
 * The files come from the library itself (rotor_chip_preset, then
 * rotor_chip_to_json: the chip file format of docs/chip-format.md, keys in a
 * stable order, numbers that read back exactly), so an installed preset is
 * the chip `--chip NAME` gives, and `--chip DIR/NAME.json` plans the same.
 * A build-time tool rather than a subcommand: the program had no command
 * that prints a preset when this was written (issue 46 adds `rotor chip
 * show NAME`; the tool may then give way to it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/chip.h"

/* Writes text to path; 0 on success. */
static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int bad = fputs(text, f) == EOF || fputc('\n', f) == EOF;
    if (fclose(f) != 0) bad = 1;
    return bad ? -1 : 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: chippresets DIR\n");
        return 2;
    }
    for (int i = 0; i < rotor_chip_preset_count(); i++) {
        const char *name = rotor_chip_preset_name(i);
        rotor_chip chip;
        rotor_error err = {{0}};
        if (rotor_chip_preset(name, &chip, &err)) {
            fprintf(stderr, "chippresets: %s\n", err.msg);
            return 2;
        }
        char *text = rotor_chip_to_json(&chip);
        if (!text) {
            fprintf(stderr, "chippresets: out of memory\n");
            return 3;
        }
        char path[4096];
        int n = snprintf(path, sizeof path, "%s/%s.json", argv[1], name);
        int rc = n < 0 || (size_t)n >= sizeof path ? -1 : write_file(path, text);
        free(text);
        if (rc) {
            fprintf(stderr, "chippresets: %s/%s.json: cannot write\n", argv[1], name);
            return 2;
        }
    }
    return 0;
}
