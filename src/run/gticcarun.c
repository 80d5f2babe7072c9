/* gticcarun.c — GraphTurbo's sub-graph instances on an ICCA chip's core
 * groups, on real data (issue 42 items 7 and 8; docs/run.md, "Instances on
 * core groups"; compile/gticca.h has the plan).
 *
 * A sub-graph the compile chose runs as its n instances: instance i is the
 * instance graph (the sub-graph's operators at batch B/n) with T10's
 * program of it on its group chip, compiled as gticca compiled it, and it
 * reads and writes batch slice i of every activation of the sub-graph;
 * weights are whole in every instance (each group holds its own copy),
 * but for a quantization parameter read along the batch rows (a per-row
 * zero point or scale), which the instance graph holds by rows too
 * (rotor_gticca_instance) and instance i reads at rows i B/n ...
 * rotor_run runs each instance as it runs any program (its plans on the
 * emulated cores, its SRAM bound its own program's), so every instance's
 * plans are checked on real data; the slices it writes are the values the
 * rest of the graph reads.
 *
 * Decisions:
 *  - An activation carries the batch as its first dimension (gticca's
 *    batch_splits), so slice i of a row-major value is one contiguous run
 *    of elements: elements / n from i elements / n, and so is a per-row
 *    parameter's.  A value the instance graph holds whole (a weight, a
 *    bias) is read whole.  Anything else (a
 *    value of another size) is refused, naming it: the run does not guess.
 *  - Instance values are matched to the graph's by name (the instance
 *    graph keeps every value's name, rotor_gticca_instance).
 *  - The n instances run one after another here; on the chip they run at
 *    once on disjoint groups, so the sub-graph's emulated time is the
 *    slowest instance's.
 *  - SRAM: while the sub-graph runs, every core of a group also holds the
 *    rest of T10's schedule, every other operator's idle layout and the
 *    largest live activations T10 has around the sub-graph's operators, as
 *    gticca counts it against the SRAM (the sub-graph's peak_bytes is the
 *    instance's peak plus that rest).  So an instance runs on its group
 *    chip with that much less SRAM, and its program's own bound (its idle
 *    layouts and live activations beside each plan) comes off what is
 *    left: the run checks gticca's memory promise as it checks T10's.  The
 *    rest is counted here from T10's program, not read from the plan: the
 *    run checks the plan's count, it does not take it.
 *  - The plan priced: a sub-graph that carries gticca's price (its
 *    compute_s and peak_bytes) must compile again to the instance gticca
 *    priced, the same compute and the same peak beside T10's rest, or the
 *    run refuses it (a plan cache or options other than the compile's
 *    would run another plan without a word).  A sub-graph given by hand,
 *    with neither, runs as compiled. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/gticca.h"
#include "rotor/compile/program.h"
#include "rotor/run/run.h"
#include "runint.h"

/* The graph value of each instance value (by name) into gv; error naming
 * the first that g lacks, or whose size is not g's / n (a value the
 * instance computes) nor g's or g's / n (one it reads). */
static rotor_status match_values(const rotor_graph *g, const rotor_graph *ig, int64_t n, int *gv, rotor_error *err) {
    for (int iv = 0; iv < ig->nvalues; iv++) {
        const rotor_value *x = &ig->values[iv];
        int v = gv[iv] = rotor_graph_find_value(g, x->name);
        if (v < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "instance value '%s' is not the graph's", x->name);
        int64_t whole = g->values[v].elements;
        bool sliced = x->elements * n == whole;
        if (!sliced && (x->producer >= 0 || x->elements != whole))
            return rotor_fail(err, ROTOR_ERR_INPUT, "instance value '%s' holds %lld elements, not %lld / %lld%s",
                              x->name, (long long)x->elements, (long long)whole, (long long)n,
                              x->producer >= 0 ? "" : " nor all of them");
    }
    return ROTOR_OK;
}

/* Per core, what the rest of T10's program p holds while sub-graph s of gt
 * runs (gticca.c, range_candidates: idle_rest + live; fit_sram: the other
 * sub-graphs' copies of their weights). */
static int64_t t10_beside(const rotor_program *p, const rotor_gticca_result *gt, const rotor_gticca_sg *s) {
    int64_t idle = p->idle_bytes + rotor_gticca_extra_idle(gt->sg, gt->nsg) - s->extra_idle_bytes, live = 0;
    for (int o = s->first; o <= s->last; o++) {
        idle -= p->ops[o].idle_bytes;
        if (p->ops[o].live_bytes > live) live = p->ops[o].live_bytes;
    }
    return idle + live;
}

rotor_status run_gticca_subgraph(const rotor_graph *g, const rotor_run_options *opt, const rotor_gticca_sg *s,
                                 rotor_run_result *out, rotor_error *err) {
    rotor_graph ig;
    rotor_chip gc;
    rotor_program ip;
    rotor_status st = rotor_gticca_instance_program(g, opt->chip, s, opt->gticca_compile, &ig, &gc, &ip, NULL, err);
    int *gv = NULL;
    const double **in = NULL;
    if (!st && (!(gv = malloc(sizeof *gv * (size_t)(ig.nvalues ? ig.nvalues : 1))) ||
                !(in = calloc((size_t)(ig.nvalues ? ig.nvalues : 1), sizeof *in))))
        st = rotor_nomem(err);
    if (!st) st = match_values(g, &ig, s->instances, gv, err);
    /* the group chip as the instance finds it: T10's rest beside it */
    int64_t beside = t10_beside(opt->program, opt->gticca, s);
    if (!st && (s->compute_s > 0 || s->peak_bytes > 0)) {
        double compute = 0;
        for (int k = 0; k < ip.nops; k++) compute += ip.ops[k].vendor ? ip.ops[k].exec_s : ip.ops[k].active_cost.compute;
        if (ip.peak_bytes + beside != s->peak_bytes || fabs(compute - s->compute_s) > 1e-9 * s->compute_s)
            st = rotor_fail(err, ROTOR_ERR_INPUT, "compiled again, an instance computes %.6g us and holds %lld bytes "
                            "per core beside T10's other operators, where the plan priced %.6g us and %lld (a plan "
                            "cache or options other than the compile's)", compute * 1e6,
                            (long long)(ip.peak_bytes + beside), s->compute_s * 1e6, (long long)s->peak_bytes);
    }
    rotor_chip room = gc;
    room.sram_bytes -= beside;
    if (!st && room.sram_bytes <= 0)
        st = rotor_fail(err, ROTOR_ERR_NOFIT, "the rest of T10's schedule takes %lld bytes per core, all of the %lld "
                        "of SRAM", (long long)beside, (long long)rotor_chip_sram(&gc));
    double slowest = 0;
    for (int64_t i = 0; i < s->instances && !st; i++) {
        for (int iv = 0; iv < ig.nvalues && !st; iv++) {
            const rotor_value *x = &ig.values[iv];
            if (x->producer >= 0) continue;
            const double *src = out->values[gv[iv]];
            if (!src)
                st = rotor_fail(err, ROTOR_ERR_INPUT, "'%s' has no data (a weight without elements, or an input not "
                                "given)", x->name);
            else
                in[iv] = src + (x->elements == g->values[gv[iv]].elements ? 0 : i * x->elements);
        }
        rotor_run_options io = {.program = &ip, .chip = &room};
        rotor_run_result r;
        if (st || (st = rotor_run(&ig, in, &io, &r, err))) break;
        for (int iv = 0; iv < ig.nvalues; iv++) {
            const rotor_value *x = &ig.values[iv];
            if (x->producer >= 0)
                memcpy(out->values[gv[iv]] + i * x->elements, r.values[iv], sizeof(double) * (size_t)x->elements);
        }
        if (r.emulated_s > slowest) slowest = r.emulated_s;
        if (r.peak_bytes + beside > out->peak_bytes) out->peak_bytes = r.peak_bytes + beside;
        rotor_run_result_free(&r);
    }
    if (!st) {
        out->ops_emulated += s->last - s->first + 1;
        out->subgraphs_run++;
        out->instance_runs += s->instances;
        out->emulated_s += slowest;
    }
    free(in);
    free(gv);
    rotor_program_free(&ip);
    rotor_graph_free(&ig);
    if (st) {
        char prefix[200];
        snprintf(prefix, sizeof prefix, "sub-graph '%s'..'%s' as %lld instances", g->ops[s->first].name,
                 g->ops[s->last].name, (long long)s->instances);
        rotor_error_prefix(err, prefix);
    }
    return st;
}
