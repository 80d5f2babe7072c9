/* rotor chip — a chip as a chip file (docs/chip-format.md): `rotor chip
 * show NAME` prints a preset (or a file, after any --set) in the format
 * --chip FILE reads, so that a preset is the starting point of a custom
 * chip, and `--chip` of the printed file is the same chip to the last bit
 * (rotor_chip_to_json formats every number to round-trip; issue 46). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rotor/base/suggest.h"

static void chip_usage(FILE *f) {
    fputs("usage: rotor chip show NAME|FILE [--set key=value]... [-o FILE]\n"
          "       rotor chip --list\n"
          "\n"
          "Prints a chip as a chip file (format rotor-chip, docs/chip-format.md): a preset\n"
          "(rotor chip --list) or a chip file, with --set overrides applied. `--chip FILE` of\n"
          "what it prints is the same chip.\n"
          "\n"
          "options:\n"
          "  --set key=value     override a chip field (repeatable; docs/chip-format.md)\n"
          "  -o, --output FILE   write the chip file there (default: standard output; a\n"
          "                      directory DIR: DIR/NAME.chip.json)\n"
          "  --list              list the presets\n"
          "  -q, --quiet         accepted; chip prints no progress\n"
          "  -h, --help          this help\n"
          "\n"
          "exit status: 0 printed, 2 bad input or an output that cannot be written\n",
          f);
}

static int list_presets(void) {
    for (int i = 0; i < rotor_chip_preset_count(); i++) printf("%s\n", rotor_chip_preset_name(i));
    return 0;
}

typedef struct chip_args {
    cli_shared_args sa;
    const char *out;
} chip_args;

/* The chip's file text on standard output or into -o's file. */
static int show(const char *cmd, const char *spec, const chip_args *a) {
    rotor_chip chip;
    rotor_error err = {{0}};
    rotor_status st = cli_chip(spec, a->sa.sets, a->sa.nsets, &chip, &err);
    if (st) return cli_fail(cmd, st, &err);
    char *text = rotor_chip_to_json(&chip);
    if (!text) return cli_nomem(cmd);
    int rc = 0;
    if (!a->out || !strcmp(a->out, "-")) {
        fputs(text, stdout);
    } else {
        /* into a directory as NAME.chip.json: a name that is not one file
         * name there (a '/', "..") wrote outside it (found by an audit
         * helper) */
        if (cli_is_dir(a->out) && (strchr(chip.name, '/') || !strcmp(chip.name, ".") || !strcmp(chip.name, ".."))) {
            free(text);
            return cli_usage_error(cmd, "-o %s: the chip's name '%s' is not a file name in that directory; give -o FILE",
                                   a->out, chip.name);
        }
        char name[ROTOR_CHIP_NAME_MAX + 16];
        snprintf(name, sizeof name, "%s.chip.json", chip.name);
        cli_output o = {0};
        /* the chip file itself may be rewritten (chip show my.json --set
         * k=v -o my.json): it was read whole above */
        rc = cli_output_open_over(cmd, "-o", a->out, name, spec, &o);
        if (!rc) {
            fputs(text, o.f);
            rc = cli_output_commit(cmd, "-o", &o);
        }
    }
    free(text);
    return rc;
}

int cmd_chip(int argc, char **argv) {
    const char *cmd = "chip";
    static const char *const verbs[] = {"show"};
    if (argc >= 2 && argv[1][0] != '-' && strcmp(argv[1], "show") != 0) {
        char hint[64];
        return cli_usage_error(cmd, "unknown verb '%s'%s (rotor chip show NAME; try 'rotor chip --help')", argv[1],
                               rotor_suggest_phrase(argv[1], verbs, 1, hint, sizeof hint));
    }
    bool verb = argc >= 2 && !strcmp(argv[1], "show");
    chip_args a = {0};
    static const cli_opt own[] = {{"output", 'o', CLI_VALUE, offsetof(chip_args, out), 0, 0}, {0}};
    const char *spec = NULL;
    /* "show" is the parser's argv[0], so that NAME is its one argument */
    int rc = cli_parse_options(cmd, argc - verb, argv + verb, CLI_TAKES_CHIP, &a.sa, own, &a, chip_usage,
                               list_presets, verb ? &spec : NULL, "a chip is required (try 'rotor chip --list')");
    if (rc >= 0) return rc;
    if (!verb) return cli_usage_error(cmd, "expected 'show NAME' (try 'rotor chip --help')");
    if (a.sa.chip) return cli_usage_error(cmd, "--chip: name the chip as the argument (rotor chip show NAME)");
    return show(cmd, spec, &a);
}
