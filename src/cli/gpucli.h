/* gpucli.h — `rotor plan` and `rotor compile` on a chip of kind gpu
 * (docs/gpu.md): plan.c and compile.c hand a GPU chip to these. */
#ifndef ROTOR_CLI_GPUCLI_H
#define ROTOR_CLI_GPUCLI_H

#include <stdbool.h>

#include "cli.h"
#include "rotor/base/gpu.h"

/* The GPU of --chip with every --set applied. */
rotor_status cli_gpu_resolve(const cli_shared_args *sa, rotor_gpu *gpu, rotor_error *err);
/* "chip          a100-80gb: GPU, 108 SMs ..." */
void cli_gpu_chip_line(const rotor_gpu *g);

/* rotor plan --chip GPU --expr E --dim D: one operator's kernel and time.
 * other: the first option given that only an ICCA plan has (NULL: none). */
int cli_plan_gpu(const cli_shared_args *sa, const char *expr, const char *dims, bool json, const char *other);

/* rotor compile MODEL --chip GPU: each grouped operator's kernel, time and
 * bound, and the total.  po: the model options parsed; nbatches: the
 * --batch sizes given (one is taken); other as above. */
int cli_compile_gpu(const cli_shared_args *sa, const char *model, rotor_pipeline_options *po, int nbatches,
                    bool json, const char *other);

#endif
