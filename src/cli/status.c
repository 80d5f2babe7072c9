/* rotor CLI — status on the terminal besides results: one-line errors
 * with their exit statuses (the only place a rotor_status becomes one),
 * and the progress bar of long work. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "rotor/base/clock.h"

int cli_fail(const char *cmd, rotor_status st, const rotor_error *err) {
    fprintf(stderr, "rotor %s: %s\n", cmd, err->msg);
    if (st == ROTOR_ERR_NOFIT) return EXIT_NOFIT;
    if (st == ROTOR_ERR_NOMEM) return EXIT_NOMEM;
    return EXIT_BADINPUT;
}

int cli_nomem(const char *cmd) {
    fprintf(stderr, "rotor %s: out of memory\n", cmd);
    return EXIT_NOMEM;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rotor %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_BADINPUT;
}

/* How this process shows progress (--progress).  A process-wide setting,
 * like the signal handlers' state: set once from argv before any work and
 * only read after, so the 18 places that show progress need not each carry
 * it (the library never sees it; it reports through callbacks). */
static cli_progress_mode progress_mode = CLI_PROGRESS_AUTO;

void cli_progress_set_mode(cli_progress_mode mode) { progress_mode = mode; }

void cli_progress_begin(cli_progress *p, const char *cmd, const char *what, bool quiet) {
    p->cmd = cmd;
    p->what = what;
    p->start = rotor_clock_s();
    bool on = !quiet && progress_mode != CLI_PROGRESS_NEVER, tty = isatty(2);
    p->tty = on && tty;
    p->log = on && !tty && progress_mode == CLI_PROGRESS_ALWAYS;
    p->logged = -1.0;
    p->drawn = false;
}

/* Whether to show progress t seconds in: the bar after the first second
 * (shorter work never flickers one); a log line at the phase's first step
 * (a log says what each phase is, however short) and then every
 * CLI_PROGRESS_LOG_S (a log of a minutes-long reproduce gets a line per
 * few seconds, not one per step). */
static bool progress_due(cli_progress *p, double t) {
    if (p->tty) return t >= 1.0;
    if (!p->log || (p->logged >= 0 && t - p->logged < CLI_PROGRESS_LOG_S)) return false;
    p->logged = t;
    return true;
}

/* GraphTurbo's GB (issue 42): the cost model prices a transfer at its links'
 * rate, so a GB slower than its cluster's links together is contention only
 * the simulator sees (docs/chip-format.md, "Clusters and the global buffer"). */
void cli_gb_hint(const char *cmd, const rotor_chip *chip, bool quiet) {
    double ports = (double)rotor_chip_cluster_cores(chip) * chip->link_gbps;
    if (quiet || chip->gb_bytes <= 0 || !(chip->gb_gbps < ports)) return;
    fprintf(stderr,
            "rotor %s: note: %s's GB serves %.15g GB/s, less than its %lld cores' links of a cluster (%.15g GB/s): "
            "the compiler's cost model does not price the GB's contention, the simulator does "
            "(docs/simulator.md, \"The global buffer\")\n",
            cmd, chip->name, chip->gb_gbps, (long long)rotor_chip_cluster_cores(chip), ports);
}

/* Why a hint: the exact search grows with the F_op vectors a chip admits,
 * and on wse2 (745,500 cores) the llama2-7b decode layer's ran 20 CPU
 * minutes without finishing (2026-11-29), with no progress to show before
 * its first operator shape is done, where the fast solver plans the layer
 * in 16 s (docs/mesh.md, "The wafer").  The presets below the threshold
 * (at most 23,552 cores) compile in seconds either way. */
void cli_solver_hint(const char *cmd, const rotor_chip *chip, rotor_solver solver, bool quiet) {
    cli_gb_hint(cmd, chip, quiet); /* compile and simulate call this before they compile */
    if (quiet || solver != ROTOR_SOLVER_EXACT || rotor_chip_cores(chip) <= CLI_SOLVER_HINT_CORES) return;
    fprintf(stderr,
            "rotor %s: note: %s has %lld cores; the exact search can run for tens of minutes on a chip this size "
            "(--solver fast plans a Llama-2-7B decode layer on wse2 in 16 s; docs/mesh.md)\n",
            cmd, chip->name, (long long)rotor_chip_cores(chip));
}

void cli_progress_step(void *ctx, int done, int total) {
    cli_progress *p = ctx;
    if ((!p->tty && !p->log) || total <= 0) return;
    double t = rotor_clock_s() - p->start;
    if (!progress_due(p, t)) return;
    if (p->log) {
        fprintf(stderr, "rotor %s: %s %d/%d, %.1f s\n", p->cmd, p->what, done, total, t);
        return;
    }
    char bar[31];
    int fill = (int)(30L * done / total);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\rrotor %s: %s [%s] %d/%d, %.1f s ", p->cmd, p->what, bar, done, total, t);
    fflush(stderr);
    p->drawn = true;
}

void cli_progress_sim(void *ctx, int done, int total, int64_t now_ps, int64_t events) {
    cli_progress *p = ctx;
    double t = rotor_clock_s() - p->start;
    if (!progress_due(p, t)) return;
    fprintf(stderr, "%srotor %s: %s operator %d/%d, %.1f us simulated, %.1f M events/s, %.1f s%s", p->log ? "" : "\r",
            p->cmd, p->what, done + 1, total, (double)now_ps * 1e-6, (double)events / t * 1e-6, t, p->log ? "\n" : " ");
    fflush(stderr);
    p->drawn = p->tty;
}

void cli_progress_end(cli_progress *p) {
    if (p->drawn) fprintf(stderr, "\r%*s\r", 100, "");
    /* a log that had lines says the phase ended (its last step may be long before) */
    if (p->log && p->logged >= 0) fprintf(stderr, "rotor %s: %s: done, %.1f s\n", p->cmd, p->what, rotor_clock_s() - p->start);
    p->drawn = false;
    p->log = false;
}
