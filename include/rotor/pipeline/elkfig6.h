/* rotor — Elk's Figure 6 (Elk §3.2): the HBM bandwidth an LLM's decode step
 * demands across time, given different per-core preload spaces.
 *
 * For each preload space the schedule is Static's (Elk §6.1) with its split
 * forced (rotor_preload_options.fixed_preload_space): every operator runs
 * its fastest plan within the execution space the preload space leaves, and
 * as many next operators are preloaded as fit the preload space.  The demand
 * trace of that schedule (rotor_elkfig6_trace) is the bandwidth each preload
 * needs to arrive in time, summed over the preloads in flight
 * (docs/reproduction.md, "Figure 6", has the definition and the numbers):
 *
 *  - time is the stall-free timeline: executions back to back, each its
 *    plan's time plus its distribution (no contention: the HBM never makes
 *    one wait);
 *  - a preload issued after execution k ends and due when its own operator
 *    j starts needs its bytes over executions k..j-1 at one rate, its bytes
 *    over their time (the least constant rate that arrives in time);
 *  - a preload issued right before its own execution (its operator did not
 *    fit the preload space beside the one before) has no window: the chip
 *    stalls for it at any bandwidth.  It gets a gap of its own on the
 *    timeline before that execution, its preload state's time alone on the
 *    chip, at its bytes over that time (the chip's HBM rate when HBM-bound),
 *    so that the trace's integral is every byte loaded;
 *  - so do the start-up's preloads, issued before the first execution: the
 *    first executions (the embedding's few nanoseconds in rotor's LLMs) are
 *    all they could hide behind within one step, where a decode loop would
 *    load them during the token before; their gaps come before execution 0.
 * After an error the result is freed by its _free (also safe then). */
#ifndef ROTOR_ELKFIG6_H
#define ROTOR_ELKFIG6_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/hbm/preload.h"
#include "rotor/hbm/searchmemo.h"

#define ROTOR_ELKFIG6_MAX_SIZES 16

/* One preload space's schedule and its demand trace. */
typedef struct rotor_elkfig6_series {
    int64_t space_bytes;        /* preload space per core (the legend) */
    bool fits;                  /* false: an operator has no plan in the execution space left */
    char nofit[ROTOR_ERROR_MAX]; /* then the scheduler's line naming it */
    int nseg;
    double *t_us;               /* nseg + 1 boundaries, from 0 */
    double *gbps;               /* demand on [t_us[k], t_us[k + 1]), GB/s of one chip's HBM */
    bool *serial;               /* segment k is a serial preload's gap (no execution) */
    int64_t hbm_bytes;          /* bytes one chip loads in the step */
    int64_t serial_bytes;       /* of them, in serial preloads */
    int serial_preloads;        /* serial preloads with bytes */
    double exec_us;             /* the executions' time (the trace's length without the gaps) */
    double latency_us;          /* the schedule's latency on the chip, its own HBM (for reference) */
    double peak_gbps;           /* the largest demand anywhere (gaps included) */
    double mean_gbps;           /* every byte over the trace's length */
    double cov;                 /* the demand's coefficient of variation over time, gaps included */
    double peak_over_mean;      /* peak_gbps / mean_gbps */
} rotor_elkfig6_series;

/* The demand trace of result r of model m, whose operators were described
 * by ops (the descriptions m was created from: plan times and HBM bytes).
 * Fills out's trace and statistics (not space_bytes, fits, latency_us),
 * replacing a trace it holds: out's arrays must be NULL or its own. */
rotor_status rotor_elkfig6_trace(const rotor_preload_model *m, const rotor_preload_op_desc *ops,
                                 const rotor_preload_result *r, rotor_elkfig6_series *out, rotor_error *err);
void rotor_elkfig6_series_free(rotor_elkfig6_series *s);

typedef struct rotor_elkfig6_options {
    const char *model;          /* an LLM of the zoo (Elk: Llama2-13B's decode) */
    int64_t batch, seq;         /* decode batch, KV cache */
    const int64_t *space_kb;    /* preload spaces per core, KB; NULL: the default sweep (elkfig6.c) */
    int nspaces;
    int threads;                /* the plan searches */
    rotor_search_memo *memo;    /* a sweep's memo of frontiers, borrowed (NULL: none) */
} rotor_elkfig6_options;

typedef struct rotor_elkfig6_result {
    const char *model;
    int64_t batch, seq;
    int64_t sram_bytes;         /* per core */
    int n;
    rotor_elkfig6_series s[ROTOR_ELKFIG6_MAX_SIZES];
} rotor_elkfig6_result;

/* Schedules model's decode step on chip once and times Static at each
 * preload space. */
rotor_status rotor_elkfig6_run(const rotor_elkfig6_options *opt, const rotor_chip *chip, rotor_elkfig6_result *out,
                               rotor_error *err);
void rotor_elkfig6_free(rotor_elkfig6_result *r);

#endif
