/* trace.c — the simulator trace's options, shared by `rotor simulate` and
 * `rotor schedule --simulate`: --trace-ops, --trace-window, --trace-cores,
 * and the default filter that keeps a large run's trace small enough for
 * Perfetto (docs/simulator.md, "Trace"). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rotor/sim/sim.h"

/* Above this many tasks (as the replay estimates them), a trace with no
 * filter keeps the first cores, as many as keep about this many tasks, at
 * most CLI_TRACE_DEFAULT_CORES.  The estimate spreads each operator over all
 * cores, but the first cores also run the operators planned on fewer, so
 * they hold more than their share: BERT-Large at batch 8 (8.8 M tasks) keeps
 * cores 0-42, 411,000 tasks and 85 MB, which Perfetto opens (at 400,000 it
 * was cores 0-57 and 108 MB, over the 100 MB issue 23 asks for). */
#define CLI_TRACE_DEFAULT_TASKS 300000
#define CLI_TRACE_DEFAULT_CORES 64
#define CLI_TRACE_MAX_CORES (1 << 24)

void cli_trace_filter_free(cli_trace_filter *t) {
    free(t->ops_text);
    free(t->ops);
    free(t->cores);
    memset(t, 0, sizeof *t);
}

static int parse_ops(const char *cmd, const char *text, cli_trace_filter *t) {
    t->ops_text = strdup(text);
    size_t n = 1;
    for (const char *p = text; *p; p++) n += *p == ',';
    t->ops = malloc(n * sizeof *t->ops);
    if (!t->ops_text || !t->ops) return cli_nomem(cmd);
    for (char *save = NULL, *tok = strtok_r(t->ops_text, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        t->ops[t->f.nops++] = tok;
    if (t->f.nops == 0) return cli_usage_error(cmd, "--trace-ops: expected operator names, got '%s'", text);
    t->f.ops = (const char *const *)t->ops;
    return 0;
}

/* "START:END" in microseconds, START < END. */
static int parse_window(const char *cmd, const char *text, cli_trace_filter *t) {
    char *end;
    errno = 0;
    double a = strtod(text, &end), b = 0;
    bool ok = end != text && *end == ':' && errno == 0;
    if (ok) {
        const char *q = end + 1;
        b = strtod(q, &end);
        ok = end != q && *end == '\0' && errno == 0;
    }
    if (!ok || !isfinite(a) || !isfinite(b) || a < 0 || b <= a || b > 1e9)
        return cli_usage_error(cmd, "--trace-window: expected START:END in microseconds, 0 <= START < END <= 1e9, "
                               "got '%s'", text);
    t->f.from_ps = llround(a * 1e6);
    t->f.to_ps = llround(b * 1e6);
    return 0;
}

/* "0-63,100,200-210", or "all" (no filter, not even the default). */
static int parse_cores(const char *cmd, const char *text, cli_trace_filter *t) {
    if (!strcmp(text, "all")) {
        t->all_cores = true;
        return 0;
    }
    int64_t cap = 0;
    for (const char *p = text; *p;) {
        char *end;
        errno = 0;
        long long lo = strtoll(p, &end, 10), hi = lo;
        bool ok = end != p && errno == 0 && lo >= 0 && (*p >= '0' && *p <= '9');
        if (ok && *end == '-') {
            const char *q = end + 1;
            hi = strtoll(q, &end, 10);
            ok = end != q && errno == 0 && hi >= lo && (*q >= '0' && *q <= '9');
        }
        ok = ok && (*end == ',' || *end == '\0') && hi - lo < CLI_TRACE_MAX_CORES &&
             t->f.ncores + (hi - lo + 1) <= CLI_TRACE_MAX_CORES;
        if (!ok)
            return cli_usage_error(cmd, "--trace-cores: expected core numbers and ranges (0-63,100) or 'all', "
                                   "got '%s' at '%s'", text, p);
        if (t->f.ncores + (hi - lo + 1) > cap) {
            cap = 2 * (t->f.ncores + (hi - lo + 1));
            int64_t *c = realloc(t->cores, (size_t)cap * sizeof *c);
            if (!c) return cli_nomem(cmd);
            t->cores = c;
        }
        for (long long c = lo; c <= hi; c++) t->cores[t->f.ncores++] = c;
        p = *end ? end + 1 : end;
    }
    if (t->f.ncores == 0) return cli_usage_error(cmd, "--trace-cores: expected core numbers, got '%s'", text);
    t->f.cores = t->cores;
    return 0;
}

int cli_trace_filter_parse(const char *cmd, const cli_trace_args *a, cli_trace_filter *t) {
    const char *ops = a->ops, *window = a->window, *cores = a->cores;
    memset(t, 0, sizeof *t);
    int rc = 0;
    if (ops) rc = parse_ops(cmd, ops, t);
    if (!rc && window) rc = parse_window(cmd, window, t);
    if (!rc && cores) rc = parse_cores(cmd, cores, t);
    t->given = ops || window || (cores && !t->all_cores);
    if (rc) cli_trace_filter_free(t);
    return rc;
}

void cli_trace_prepare(cli_trace_filter *t, int64_t estimated_tasks, int64_t cores) {
    t->by_default = !t->given && !t->all_cores && estimated_tasks > CLI_TRACE_DEFAULT_TASKS &&
                    cores > CLI_TRACE_DEFAULT_CORES;
    if (!t->by_default) return;
    /* as many cores as keep about CLI_TRACE_DEFAULT_TASKS of the tasks, 1 to 64 */
    double share = (double)CLI_TRACE_DEFAULT_TASKS * (double)cores / (double)estimated_tasks;
    int64_t n = share < 1 ? 1 : share > CLI_TRACE_DEFAULT_CORES ? CLI_TRACE_DEFAULT_CORES : (int64_t)share;
    for (int64_t c = 0; c < n; c++) t->first[c] = c;
    t->f.cores = t->first;
    t->f.ncores = n;
}

int cli_trace_done(const char *cmd, cli_output *out, const cli_trace_filter *t, const rotor_sim_trace_summary *sum,
                   bool quiet) {
    if (quiet) {
        /* --quiet: no note */
    } else if (t->by_default)
        fprintf(stderr,
                "rotor %s: --trace: %lld tasks; kept the %lld on cores 0-%lld (the default above %d tasks; "
                "--trace-cores all keeps every one)\n",
                cmd, (long long)sum->tasks, (long long)sum->kept, (long long)t->f.ncores - 1, CLI_TRACE_DEFAULT_TASKS);
    else if (t->given)
        fprintf(stderr, "rotor %s: --trace: kept %lld of %lld tasks\n", cmd, (long long)sum->kept,
                (long long)sum->tasks);
    return cli_output_commit(cmd, "--trace", out);
}

int cli_trace_fail(const char *cmd, cli_output *out, rotor_status st, const rotor_error *err) {
    /* the library knows only that its FILE failed ("the trace could not be
     * written"); the commit's fflush gets the reason again */
    if (st == ROTOR_ERR_IO && out && out->f && ferror(out->f)) return cli_output_commit(cmd, "--trace", out);
    return cli_fail(cmd, st, err);
}
