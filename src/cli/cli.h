/* rotor CLI — shared pieces of the subcommands.  Only src/cli/ prints and
 * chooses exit statuses: 0 success, 1 no plan fits or verification failed,
 * 2 bad input (house style). */
#ifndef ROTOR_CLI_H
#define ROTOR_CLI_H

#include "rotor/chip.h"
#include "rotor/error.h"

#define EXIT_NOFIT 1
#define EXIT_BADINPUT 2

/* Prints "rotor CMD: message" on stderr and returns the exit status for st. */
int cli_fail(const char *cmd, rotor_status st, const rotor_error *err);

/* Prints "rotor CMD: <formatted>" on stderr and returns EXIT_BADINPUT. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Resolves --chip (default ipu-mk2), applies every --set, validates. */
rotor_status cli_chip(const char *spec, char **sets, int nsets, rotor_chip *out, rotor_error *err);

int cmd_plan(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_model(int argc, char **argv);

#endif
