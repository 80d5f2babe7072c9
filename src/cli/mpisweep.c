/* rotor explore over MPI ranks (docs/explore.md, "Several machines"): the
 * collectives explore needs, through the plugin rotor-mpi.so (mpi/plugin.c)
 * when the build found OpenMPI, and one process otherwise.  MPI starts only
 * under a launcher (mpirun sets OMPI_COMM_WORLD_SIZE, or PMI_SIZE), and only
 * then is the plugin loaded, so a plain run never maps OpenMPI's libraries
 * (mpi/mpiops.h says what that cost).  Ranks exchange raw bytes: the
 * machines of one run share one architecture. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explore.h"
#include "mpi/mpiops.h"

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

/* Loads rotor-mpi.so from beside the executable (the build folder) or from
 * ../lib/rotor (an installed rotor, docs/install.md): its table, or NULL
 * with why in why[] ("" when no plugin is there at all). */
static const rotor_mpi_ops *load_plugin(void **handle, char *why, size_t cap) {
    static const char *const WHERE[] = {"/rotor-mpi.so", "/../lib/rotor/rotor-mpi.so"};
    char exe[PATH_MAX];
    why[0] = 0;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    for (size_t i = 0; i < sizeof WHERE / sizeof *WHERE; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s%s", exe, WHERE[i]);
        if (access(path, F_OK) != 0) continue;
        /* RTLD_GLOBAL: OpenMPI's own components, which it dlopens, look
         * up libmpi's symbols in the global scope */
        if (!(*handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL))) {
            snprintf(why, cap, "%s", dlerror());
            return NULL;
        }
        const rotor_mpi_ops *ops = dlsym(*handle, ROTOR_MPI_OPS_SYMBOL);
        if (ops && ops->version == ROTOR_MPI_OPS_VERSION) return ops;
        snprintf(why, cap, "%s: not this rotor's MPI plugin (rebuild it with make)", path);
        dlclose(*handle);
        *handle = NULL;
        return NULL;
    }
    return NULL;
}

int ex_mpi_begin(const char *cmd, ex_mpi *m) {
    *m = (ex_mpi){.rank = 0, .size = 1, .active = false};
    const char *rank_var = NULL;
    int n = launch_size(&rank_var);
    if (n <= 1) return 0;
    char why[PATH_MAX + 128];
    const rotor_mpi_ops *ops = load_plugin(&m->handle, why, sizeof why);
    const char *r = getenv(rank_var);
    bool first = !r || atoi(r) == 0;
    if (!ops) {
        if (!first) return EXIT_BADINPUT;
        if (why[0]) return cli_usage_error(cmd, "run by mpirun (%d processes): %s", n, why);
        return cli_usage_error(cmd, "run by mpirun (%d processes), but this rotor was built without MPI: install "
                               "OpenMPI (sudo apt-get install -y libopenmpi-dev openmpi-bin) and run make again", n);
    }
    if (ops->init(&m->rank, &m->size) != 0)
        return cli_usage_error(cmd, "MPI_Init failed under mpirun (%d processes)", n);
    m->ops = ops;
    m->active = true;
    return 0;
}

void ex_mpi_end(ex_mpi *m) {
    if (m->active) m->ops->finalize();
    m->active = false;
    /* the plugin stays mapped: OpenMPI's threads and atexit handlers may
     * still run its code after MPI_Finalize */
}

int ex_mpi_max(const ex_mpi *m, int v) {
    int out = v;
    if (m->active) m->ops->max_int(v, &out);
    return out;
}

void ex_mpi_bcast(const ex_mpi *m, void *buf, size_t n) {
    if (m->active) m->ops->bcast(buf, (int)n);
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
    int mine = (int)n, *counts = NULL, *displs = NULL, bad = 0;
    if (m->rank == 0) {
        counts = calloc((size_t)m->size, sizeof *counts);
        displs = calloc((size_t)m->size, sizeof *displs);
        bad = !counts || !displs;
    }
    m->ops->gather_int(mine, counts);
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
    m->ops->gatherv(buf, mine, *all, counts, displs);
    free(counts);
    free(displs);
    return 0;
}
