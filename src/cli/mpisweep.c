/* rotor explore over MPI ranks (docs/explore.md, "Several machines"): the
 * collectives explore needs, with OpenMPI when the build found it
 * (-DROTOR_MPI, the Makefile's MPI detection) and one process otherwise.
 * MPI starts only under a launcher (mpirun sets OMPI_COMM_WORLD_SIZE, or
 * PMI_SIZE), so a plain run never pays for it.  Ranks exchange raw bytes:
 * the machines of one run share one architecture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore.h"

#ifdef ROTOR_MPI
#include <mpi.h>
#endif

/* The size of the launch rotor runs under (1: none), from its environment. */
static int launch_size(const char **rank_var) {
    static const char *const SIZE[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    static const char *const RANK[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK"};
    for (int i = 0; i < 2; i++) {
        const char *s = getenv(SIZE[i]);
        if (s && atoi(s) > 1) {
            *rank_var = RANK[i];
            return atoi(s);
        }
    }
    return 1;
}

int ex_mpi_begin(const char *cmd, ex_mpi *m) {
    *m = (ex_mpi){.rank = 0, .size = 1, .active = false};
    const char *rank_var = NULL;
    int n = launch_size(&rank_var);
    if (n <= 1) return 0;
#ifdef ROTOR_MPI
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return cli_usage_error(cmd, "MPI_Init failed under mpirun (%d processes)", n);
    m->active = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    return 0;
#else
    const char *r = getenv(rank_var);
    if (!r || atoi(r) == 0)
        cli_usage_error(cmd, "run by mpirun (%d processes), but this rotor was built without MPI: install "
                        "OpenMPI (sudo apt-get install -y libopenmpi-dev openmpi-bin) and run make again", n);
    return EXIT_BADINPUT;
#endif
}

void ex_mpi_end(ex_mpi *m) {
#ifdef ROTOR_MPI
    if (m->active) MPI_Finalize();
#endif
    m->active = false;
}

int ex_mpi_max(const ex_mpi *m, int v) {
#ifdef ROTOR_MPI
    int out = v;
    if (m->active) MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
#else
    (void)m;
    return v;
#endif
}

void ex_mpi_bcast(const ex_mpi *m, void *buf, size_t n) {
#ifdef ROTOR_MPI
    if (m->active) MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
    (void)m, (void)buf, (void)n;
#endif
}

int ex_mpi_gather(const ex_mpi *m, const char *buf, size_t n, char **all, size_t *alln) {
    *all = NULL;
    *alln = 0;
    if (!m->active) {
        if (!(*all = malloc(n ? n : 1))) return cli_nomem("explore");
        memcpy(*all, buf, n);
        *alln = n;
        return 0;
    }
#ifdef ROTOR_MPI
    int mine = (int)n, *counts = NULL, *displs = NULL, bad = 0;
    if (m->rank == 0) {
        counts = calloc((size_t)m->size, sizeof *counts);
        displs = calloc((size_t)m->size, sizeof *displs);
        bad = !counts || !displs;
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (m->rank == 0 && !bad) {
        size_t total = 0;
        for (int r = 0; r < m->size; r++) {
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        bad = !(*all = malloc(total ? total : 1));
        *alln = total;
    }
    if (ex_mpi_max(m, bad)) {
        free(*all);
        *all = NULL;
        free(counts);
        free(displs);
        return cli_nomem("explore");
    }
    MPI_Gatherv(buf, mine, MPI_BYTE, *all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
#endif
    return 0;
}
