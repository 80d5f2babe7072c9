/* runop.c — errors that name the operator, "op 'n3' (MaxPool): ...",
 * shared by the run (run.c) and the reference kernels (kernels.c); it calls
 * neither, so the two do not call each other back. */
#include <stdarg.h>
#include <stdio.h>

#include "runint.h"

rotor_status run_op_vfail(const rotor_graph *g, int o, rotor_error *err, rotor_status code, const char *fmt,
                          va_list ap) {
    char msg[ROTOR_ERROR_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return rotor_fail(err, code, "op '%s' (%s): %s", g->ops[o].name, g->ops[o].type, msg);
}

void run_op_prefix(const rotor_graph *g, int o, rotor_error *err) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, "op '%s' (%s)", g->ops[o].name, g->ops[o].type);
    rotor_error_prefix(err, prefix);
}
