/* reproduceelkfigs.h — the rest of `rotor reproduce elk` (Elk Table 2,
 * Figures 23, 24, 5-8 and 6), computed by src/pipeline/elkfigs.c and
 * elkfig6.c; this
 * file's functions only run, print and write them (reproduceelk.c calls
 * them). */
#ifndef ROTOR_CLI_REPRODUCEELKFIGS_H
#define ROTOR_CLI_REPRODUCEELKFIGS_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/pipeline/elkfig6.h"
#include "rotor/pipeline/elkfigs.h"

struct cJSON;

/* Table 2's row of one LLM: the factors Full counted at the Figure 18
 * point (batch 32, sequence 2048), when it fits. */
typedef struct cli_elk_t2 {
    const char *model;
    bool fits;
    int64_t batch;
    rotor_preload_factors f;
} cli_elk_t2;

typedef struct cli_elkfigs {
    cli_elk_t2 t2[ROTOR_ELKFIGS_MAX_MODELS + 1]; /* the LLMs, then DiT-XL from Figure 23 */
    int nt2;
    rotor_elkcores_result cores;  /* Figure 23 */
    rotor_elktrain_result train;  /* Figure 24 */
    rotor_elkmotiv_result motiv;  /* Figures 5, 7, 8 */
    rotor_elkfig6_result fig6;    /* Figure 6 */
} cli_elkfigs;

/* Runs Figures 23, 24, 5-8 and 6 for the LLMs at batch (the Figure 18 batch)
 * with Table 2's rows t2 (nt2 of them) copied in; 0 or the exit status. */
int cli_elkfigs_run(const char *const *llms, int nm, int64_t batch, int64_t seq, const rotor_chip *chip, int threads,
                    bool quiet, bool full_grid, rotor_search_memo *memo, const cli_elk_t2 *t2, int nt2,
                    cli_elkfigs *out);
void cli_elkfigs_free(cli_elkfigs *f);
void cli_elkfigs_print(const cli_elkfigs *f);
int cli_elkfigs_write(const char *dir, const cli_elkfigs *f);
void cli_elkfigs_json(struct cJSON *root, const cli_elkfigs *f);

/* The files it writes, for the closing line. */
#define CLI_ELKFIGS_FILES                                                                                        \
    "elk-table2.csv, elk-fig23.csv, elk-fig23.svg, elk-fig24.csv, elk-fig24.svg, elk-fig5.csv, elk-fig5.svg, " \
    "elk-fig7-8.csv, elk-fig7-8.svg, elk-fig6.csv, elk-fig6.svg"

#endif
