/* rotor-mpi.so: OpenMPI's collectives behind the table of mpiops.h.  Built
 * only where the Makefile finds OpenMPI, and loaded by mpisweep.c only when
 * rotor runs under mpirun, so a plain run never maps OpenMPI's libraries. */
#include <mpi.h>

#include "mpiops.h"

static int init(int *rank, int *size) {
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

static void finalize(void) { MPI_Finalize(); }

static int max_int(int v, int *out) {
    return MPI_Allreduce(&v, out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static int bcast(void *buf, int n) {
    return MPI_Bcast(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static int gather_int(int mine, int *all) {
    return MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static int gatherv(const char *buf, int n, char *all, const int *counts, const int *displs) {
    return MPI_Gatherv(buf, n, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0
                                                                                                        : -1;
}

/* The name carries the table's version (mpiops.h). */
const rotor_mpi_ops rotor_mpi_ops_v1 = {
    .version = ROTOR_MPI_OPS_VERSION,
    .init = init,
    .finalize = finalize,
    .max_int = max_int,
    .bcast = bcast,
    .gather_int = gather_int,
    .gatherv = gatherv,
};
