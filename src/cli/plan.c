/* rotor plan — the exact search for one operator (T10 §4.3.1). */
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpucli.h"
#include "rotor/op/cost.h"
#include "rotor/op/expr.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/planfile.h"
#include "rotor/op/search.h"


static void plan_usage(FILE *f) {
    fprintf(f,
            "usage: rotor plan --expr EXPR --dim AXIS=N,... [options]\n"
            "\n"
            "Finds the fastest compute-shift plan of one operator under the cost model, exactly\n"
            "(branch and bound over every F_op, temporal factor and loop order).\n"
            "\n"
            "  --expr EXPR         tensor expression, e.g. 'C[m,n] += A[m,k] * B[k,n]'\n"
            "  --dim LIST          extents, e.g. m=32,k=5120,n=15360\n"
            "  --chip NAME|FILE    preset (ipu-mk2, ipu-pod4, ipu-pod16, ipu-mk2-mesh, wormhole-n150,\n"
            "                      wse2, stcp920) or chip file; default ipu-mk2; a GPU (a100-80gb,\n"
            "                      a100-40gb, h100-sxm, or a file of kind gpu) times kernels (docs/gpu.md)\n"
            "  --set KEY=VALUE     override one chip field (repeatable), e.g. --set cores_per_chip=64\n"
            "  --json              print the plan as JSON (rotor-plan, docs/plan-format.md)\n"
            "  --format FMT        table (default), or t10 (the T10 benchmark's format)\n"
            "  --pareto            also print the Pareto frontier of (time, memory per core)\n"
            "  --pareto-within R   only the frontier's plans at most R times slower than the\n"
            "                      fastest (R >= 1; implies --pareto)\n"
            "  --constraints LIST  min_cores=N, max_padding=RATIO, memory_cap=BYTES\n"
            "  --cost-model NAME   cost model (default v1)\n"
            "  --solver S          exact (default: the optimum) or fast (KAPLA's greedy solver,\n"
            "                      valid plans, near-optimal, far faster; docs/kapla.md); random\n"
            "                      or ml: KAPLA's baselines R and M (docs/kapla.md)\n"
            "  --threads N         search threads (default: all cores); results do not depend on it\n"
            "  -q, --quiet         no progress or deprecation notes on stderr\n"
            "  --progress WHEN     auto (a bar on a terminal), always (also lines every 5 s in a log), never\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 plan found, 1 no plan fits, 2 bad input\n");
}

static void print_axes(const rotor_expr *e, const int64_t *v) {
    for (int a = 0; a < e->naxes; a++) printf("%s%s=%lld", a ? " " : "", e->axis_name[a], (long long)v[a]);
}

static void print_ft(const rotor_expr *e, const rotor_plan *p, int t) {
    int n = 0;
    for (int a = 0; a < e->naxes; a++)
        if (e->tensors[t].has_axis[a])
            printf("%s%s=%lld", n++ ? "," : "", e->axis_name[a], (long long)p->ft[t][a]);
}

static void print_tensor_sig(const rotor_expr *e, int t, char *buf, size_t cap) {
    const rotor_tensor *x = &e->tensors[t];
    size_t n = (size_t)snprintf(buf, cap, "%s[", x->name);
    for (int d = 0; d < x->ndims && n < cap; d++) {
        const rotor_dim *dim = &x->dims[d];
        for (int k = 0; k < dim->nterms && n < cap; k++) {
            if (k) n += (size_t)snprintf(buf + n, cap - n, "+");
            if (dim->coef[k] != 1) n += (size_t)snprintf(buf + n, cap - n, "%lld*", (long long)dim->coef[k]);
            n += (size_t)snprintf(buf + n, cap - n, "%s", e->axis_name[dim->axis[k]]);
        }
        if (d + 1 < x->ndims && n < cap) n += (size_t)snprintf(buf + n, cap - n, ",");
    }
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* On a mesh, where the plan lies (op/meshmap.h): each partitioned axis's
 * dimension, stride and fold, and the routes its data takes. */
static void print_mesh_layout(const rotor_expr *e, const rotor_chip *chip, const rotor_candidate *b) {
    rotor_mesh_map m;
    if (chip->topology != ROTOR_TOPO_MESH || rotor_mesh_map_plan(e, chip, &b->plan, &b->info, &m, NULL)) return;
    printf("\n  mesh layout %lldx%lld of the %lldx%lld mesh:", (long long)m.width, (long long)m.height,
           (long long)chip->mesh_width, (long long)chip->mesh_height);
    for (int a = 0; a < e->naxes; a++)
        if (m.dim[a] >= 0)
            printf(" %s along %c (stride %lld, folded in %lld)", e->axis_name[a], m.dim[a] ? 'Y' : 'X',
                   (long long)m.stride[a], (long long)m.fold[a]);
    printf("\n  routes      shifts %lld hops, %lld sends on the busiest link; reduction %lld hops, %lld\n",
           (long long)m.hops, (long long)m.load, (long long)m.red_hops, (long long)m.red_load);
    char caveat[320];
    if (rotor_chip_mesh_caveat(chip, caveat, sizeof caveat)) printf("  note        %s\n", caveat);
}

static void print_table(const rotor_expr *e, const rotor_chip *chip, const char *model, rotor_solver solver,
                        const rotor_search_result *r) {
    const rotor_candidate *b = &r->best;
    const rotor_plan_info *in = &b->info;
    char dims[256];
    rotor_expr_dims_string(e, dims, sizeof dims);
    printf("operator      %s   (%s)\n", e->text, dims);
    printf("chip          %s: %lld cores, %lld B SRAM per core, cost model %s\n", chip->name,
           (long long)rotor_chip_cores(chip), (long long)rotor_chip_sram(chip), model);
    printf("\nplan\n  F_op        ");
    print_axes(e, b->plan.fop);
    printf("   (%lld cores)\n  loop order  ", (long long)in->cores);
    for (int l = 0; l < e->naxes; l++) printf("%s%s", l ? " " : "", e->axis_name[b->plan.order[l]]);
    printf("   (outermost first)\n  steps       ");
    print_axes(e, in->steps);
    printf("   (T = %lld)\n  padded      ", (long long)in->total_steps);
    print_axes(e, in->padded);
    printf("   (ratio %.4f)\n  sub-task    ", in->padding_ratio);
    print_axes(e, in->sub_task);
    printf("\n\n  %-22s %-16s %6s %6s %6s  %-18s %10s %8s\n", "tensor", "f_t", "P", "ring", "rings",
           "partition", "bytes", "shifts");
    for (int t = 0; t < e->ntensors; t++) {
        char sig[128], part[64];
        print_tensor_sig(e, t, sig, sizeof sig);
        size_t n = 0;
        part[0] = '\0';
        for (int d = 0; d < e->tensors[t].ndims && n < sizeof part; d++)
            n += (size_t)snprintf(part + n, sizeof part - n, "%s%lld", d ? "x" : "", (long long)in->part[t][d]);
        printf("  %-22s ", sig);
        char ftbuf[64];
        size_t m = 0;
        ftbuf[0] = '\0';
        for (int a = 0; a < e->naxes && m < sizeof ftbuf; a++)
            if (e->tensors[t].has_axis[a])
                m += (size_t)snprintf(ftbuf + m, sizeof ftbuf - m, "%s%s=%lld", m ? "," : "", e->axis_name[a],
                                      (long long)b->plan.ft[t][a]);
        printf("%-16s %6lld %6lld %6lld  %-18s %10lld %8lld\n", ftbuf, (long long)in->sharing[t],
               (long long)in->ring_size[t], (long long)in->rings[t], part, (long long)in->bytes[t],
               (long long)in->shifts[t]);
    }
    print_mesh_layout(e, chip, b);
    printf("\n  memory/core %lld B of %lld (%.1f%%)%s\n", (long long)in->memory, (long long)rotor_chip_sram(chip),
           100.0 * (double)in->memory / (double)rotor_chip_sram(chip),
           in->overlap ? ", second buffers included (overlap)" : in->rotates ? ", shift buffer included" : "");
    printf("\npredicted time\n");
    printf("  compute        %12.6f us\n", b->cost.compute * 1e6);
    printf("  communication  %12.6f us\n", b->cost.comm * 1e6);
    printf("  reduction      %12.6f us\n", b->cost.reduction * 1e6);
    if (b->plan.overlap) printf("  hidden         %12.6f us   (shifts under compute: overlap)\n", -b->cost.hidden * 1e6);
    printf("  total          %12.6f us\n", b->cost.total * 1e6);
    if (r->npareto > 0) {
        printf("\nPareto frontier (time vs memory per core), %d plans\n", r->npareto);
        printf("  %14s %12s  %s\n", "total us", "memory B", "F_op / f_t");
        for (int i = 0; i < r->npareto; i++) {
            const rotor_candidate *c = &r->pareto[i];
            printf("  %14.6f %12lld  ", c->cost.total * 1e6, (long long)c->info.memory);
            print_axes(e, c->plan.fop);
            for (int t = 0; t < e->ntensors; t++) {
                printf(" | %s:", e->tensors[t].name);
                print_ft(e, &c->plan, t);
            }
            printf("\n");
        }
    }
    const rotor_search_stats *s = &r->stats;
    if (solver == ROTOR_SOLVER_FAST) {
        printf("\nsearch\n  solver fast (KAPLA stacking and caching, docs/kapla.md): not proven optimal\n"
               "  F_op vectors costed %lld, plans costed %lld, %d thread, %.3f s\n",
               (long long)s->fops, (long long)s->plans, s->threads, s->wall_seconds);
        return;
    }
    if (solver != ROTOR_SOLVER_EXACT) {
        printf("\nsearch\n  solver %s (KAPLA's baseline %s, docs/kapla.md \"Baselines\"): not proven optimal\n"
               "  plans costed %lld, %d thread, %.3f s\n",
               rotor_solver_name(solver), solver == ROTOR_SOLVER_RANDOM ? "R" : "M", (long long)s->plans, s->threads,
               s->wall_seconds);
        return;
    }
    printf("\nsearch\n  F_op vectors %lld (%lld searched in depth), step vectors %lld (%lld pruned),\n"
           "  plans costed %lld, partial plans pruned %lld, %d threads, %.3f s\n",
           (long long)s->fops, (long long)s->fops_searched, (long long)s->step_vectors,
           (long long)s->steps_pruned, (long long)s->plans, (long long)s->nodes_pruned, s->threads,
           s->wall_seconds);
}

/* The T10 benchmark's format: F_op in axis order, then f_t per input tensor
 * in order, then the output, each along its own dimensions. */
static void print_t10(const rotor_expr *e, const rotor_plan *p) {
    printf("F_op: [");
    for (int a = 0; a < e->naxes; a++) printf("%s%lld", a ? ", " : "", (long long)p->fop[a]);
    printf("]\n");
    for (int i = 1; i <= e->ntensors; i++) {
        int t = i % e->ntensors;
        const rotor_tensor *x = &e->tensors[t];
        for (int d = 0; d < x->ndims; d++)
            for (int k = 0; k < x->dims[d].nterms; k++) {
                int a = x->dims[d].axis[k];
                printf("f_t_%s_%s: %lld\n", x->name, e->axis_name[a], (long long)p->ft[t][a]);
            }
    }
}

/* What `rotor plan` was asked. */
typedef struct plan_args {
    cli_shared_args sa;
    const char *expr, *format, *cons, *model_name, *within, *solver;
    bool pareto, json;
} plan_args;

int cmd_plan(int argc, char **argv) {
    const char *cmd = "plan";
    plan_args a = {0};
    static const cli_opt own[] = {
        {"expr", 0, CLI_VALUE, offsetof(plan_args, expr), 0, 0},
        {"format", 0, CLI_VALUE, offsetof(plan_args, format), 0, 0},
        {"json", 0, CLI_FLAG, offsetof(plan_args, json), 0, 0},
        {"pareto", 0, CLI_FLAG, offsetof(plan_args, pareto), 0, 0},
        {"pareto-within", 0, CLI_VALUE, offsetof(plan_args, within), 0, 0},
        {"constraints", 0, CLI_VALUE, offsetof(plan_args, cons), 0, 0},
        {"cost-model", 0, CLI_VALUE, offsetof(plan_args, model_name), 0, 0},
        {"solver", 0, CLI_VALUE, offsetof(plan_args, solver), 0, 0},
        {0}};
    int rc = cli_parse_options(cmd, argc, argv, CLI_TAKES_CHIP | CLI_TAKES_DIM | CLI_TAKES_THREADS, &a.sa, own, &a,
                               plan_usage, NULL, NULL, NULL);
    if (rc >= 0) return rc;
    /* --json, the spelling every subcommand shares; --format json keeps
     * working for one release */
    if (a.json && a.format && strcmp(a.format, "json") != 0)
        return cli_usage_error(cmd, "--json conflicts with --format %s", a.format);
    if (!a.json && a.format && !strcmp(a.format, "json")) cli_deprecated(cmd, a.sa.quiet, "--format json", "--json");
    if (a.json) a.format = "json";
    const char *expr = a.expr, *dims = a.sa.dims, *format = a.format, *cons = a.cons, *model_name = a.model_name,
               *within = a.within;
    bool pareto = a.pareto;
    cli_shared_args sa = a.sa;
    if (!expr) return cli_usage_error(cmd, "--expr is required (try 'rotor plan --help')");
    if (!dims) return cli_usage_error(cmd, "--dim is required (e.g. --dim m=32,k=5120,n=15360)");
    enum { TABLE, JSON, T10 } fmt = TABLE;
    if (!format || !strcmp(format, "table")) fmt = TABLE;
    else if (!strcmp(format, "json")) fmt = JSON;
    else if (!strcmp(format, "t10")) fmt = T10;
    else return cli_usage_error(cmd, "--format: expected table, json or t10, got '%s'", format);
    double ratio = 0;
    if (within) {
        char *end;
        ratio = strtod(within, &end);
        if (end == within || *end || !(ratio >= 1) || ratio > 1e9)
            return cli_usage_error(cmd, "--pareto-within: expected a ratio from 1 to 1e9, got '%s'", within);
        pareto = true;
    }
    if (fmt == T10 && pareto)
        return cli_usage_error(cmd, "--pareto conflicts with --format t10, which prints exactly one plan");

    if (rotor_gpu_spec_is_gpu(sa.chip)) /* a GPU chip: one kernel (src/cli/plangpu.c, docs/gpu.md) */
        return cli_plan_gpu(&sa, expr, dims, fmt == JSON,
                            pareto ? "--pareto" : fmt == T10 ? "--format t10" : cons ? "--constraints"
                            : a.solver ? "--solver" : model_name ? "--cost-model" : NULL);
    rotor_search_options opt = {0};
    opt.pareto = pareto;
    opt.pareto_time_ratio = ratio;
    if (cli_shared_threads(cmd, &sa, &opt.threads)) return EXIT_BADINPUT;
    if (cli_parse_solver(cmd, a.solver, &opt.solver)) return EXIT_BADINPUT;
    opt.model = rotor_cost_model_default();
    if (model_name) {
        opt.model = rotor_cost_model_find(model_name);
        if (!opt.model) return cli_usage_error(cmd, "--cost-model: unknown model '%s' (known: v1)", model_name);
    }
    rotor_error err = {{0}};
    rotor_status st;
    if (cons && (st = rotor_constraints_parse(cons, &opt.constraints, &err))) return cli_fail(cmd, st, &err);
    rotor_chip chip;
    if ((st = cli_chip(sa.chip, sa.sets, sa.nsets, &chip, &err))) return cli_fail(cmd, st, &err);
    rotor_expr e;
    if ((rc = cli_expr(cmd, expr, dims, false, &e))) return rc;
    rotor_search_result r;
    cli_progress bar;
    cli_progress_begin(&bar, cmd, pareto ? "searching the frontier: F_op" : "searching: F_op", sa.quiet);
    opt.progress = cli_progress_step;
    opt.progress_ctx = &bar;
    st = rotor_search(&e, &chip, &opt, &r, &err);
    cli_progress_end(&bar);
    if (st) return cli_fail(cmd, st, &err);
    if (fmt == T10) {
        print_t10(&e, &r.best.plan);
    } else if (fmt == JSON) {
        char *text = rotor_planfile_write(&e, &chip, opt.model->name, &r);
        if (!text) {
            rotor_search_result_free(&r);
            return cli_nomem("plan");
        }
        printf("%s\n", text);
        free(text);
    } else {
        print_table(&e, &chip, opt.model->name, opt.solver, &r);
    }
    rotor_search_result_free(&r);
    return 0;
}
