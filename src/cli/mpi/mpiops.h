/* The MPI collectives `rotor explore` needs, as a table the plugin
 * rotor-mpi.so fills (src/cli/mpi/plugin.c) and src/cli/mpisweep.c loads
 * only under mpirun.  rotor itself does not link OpenMPI: its libraries
 * (libmpi, open-rte, open-pal, hwloc, libevent, udev) took a third of a
 * small run's start-up, and every run paid it (docs/performance.md, "CI").
 * Ranks exchange raw bytes and ints; every function returns 0 on success. */
#ifndef ROTOR_CLI_MPIOPS_H
#define ROTOR_CLI_MPIOPS_H

#include <stddef.h>

#define ROTOR_MPI_OPS_VERSION 1

typedef struct rotor_mpi_ops {
    int version; /* ROTOR_MPI_OPS_VERSION: a plugin of another build is refused */
    int (*init)(int *rank, int *size);
    void (*finalize)(void);
    int (*max_int)(int v, int *out);
    int (*bcast)(void *buf, int n);
    int (*gather_int)(int mine, int *all); /* all: on rank 0 only */
    int (*gatherv)(const char *buf, int n, char *all, const int *counts, const int *displs);
} rotor_mpi_ops;

/* The plugin's one exported symbol. */
#define ROTOR_MPI_OPS_SYMBOL "rotor_mpi_ops_v1"

#endif
