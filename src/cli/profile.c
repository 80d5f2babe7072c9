/* profile.c — `--profile` on compile, simulate and schedule (issue 45): the
 * wall seconds of each phase, from the pipeline's stage times and the
 * compile's own split (pipeline/pipeline.h, compile/compile.h), on stderr so
 * that a --json document on stdout stays whole. */
#include <stdio.h>

#include "cli.h"

static void row(const char *name, double s, bool ran) {
    if (ran) fprintf(stderr, "  %-16s %10.3f\n", name, s);
    else fprintf(stderr, "  %-16s %10s\n", name, "-");
}

void cli_profile_print(const char *cmd, const rotor_pipeline *p, const cli_profile_extra *x, double total_s) {
    const rotor_pipeline_times *t = &p->times;
    const rotor_compile_profile *c = &p->t10.profile;
    bool t10 = t->t10_s > 0;
    fprintf(stderr, "rotor %s: profile (wall seconds)\n", cmd);
    row("load", t->load_s, true);
    if (t->simplify_s > 0) row("simplify", t->simplify_s, true);
    row("group", t->group_s, true);
    row("search", c->search_s, t10);
    /* how many of them the walk's searches ahead answered (docs/compile.md,
     * "Searches ahead"): a count that depends on timing */
    if (t10) fprintf(stderr, "  %-16s %10d of %d searches\n", "  made ahead", p->t10.searches_ahead, p->t10.searches);
    row("hand-off", c->handoff_s, t10);
    row("reconciliation", c->reconcile_s, t10);
    if (c->pipeline_s > 0) row("pipelining", c->pipeline_s, true);
    /* the compile's rest: liveness, the schedule's fill, the cache's writes */
    row("compile, other", t->t10_s - c->search_s - c->handoff_s - c->reconcile_s - c->pipeline_s, t10);
    row("VGM", t->vgm_s, t->vgm_s > 0);
    row("program", t->program_s, t->program_s > 0);
    if (t->schedule_s > 0 || (x && x->designs_s > 0)) {
        row("schedule", t->schedule_s, true);
        row("designs", x ? x->designs_s : 0, x && x->designs_s > 0);
    }
    row("replay", x ? x->replay_s : 0, x && x->replay_s > 0);
    row("total", total_s, true);
}
