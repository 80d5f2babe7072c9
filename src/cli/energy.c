/* rotor CLI — energy in the subcommands' tables and JSON (docs/energy.md,
 * "In the CLI"): one line for the table, the "energy" object of --json is the
 * library's (pipeline/docint.h). */
#include <stdio.h>

#include "cli/cli.h"

void cli_energy_print(const char *what, const rotor_energy *e) {
    printf("energy %.6g J %s (compute %.3g, SRAM %.3g, links %.3g, HBM %.3g, inter-chip %.3g, static %.3g J); "
           "EDP %.6g J s\n",
           e->total_j, what, e->compute_j, e->sram_j, e->link_j, e->hbm_j, e->interchip_j, e->static_j, e->edp);
}
