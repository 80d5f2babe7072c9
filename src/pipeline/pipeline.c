/* pipeline.c — load -> (train) -> simplify -> group -> compile -> program, or -> schedule, in one
 * call (include/rotor/pipeline/pipeline.h).  It adds no decision of its own:
 * each stage is its module's entry point, called in the order every
 * subcommand used to repeat by hand. */
#include "rotor/pipeline/pipeline.h"

#include "rotor/base/clock.h"
#include "rotor/model/elemtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rotor_model_is_onnx(const char *spec) {
    size_t n = strlen(spec);
    return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".onnx"));
}

rotor_status rotor_model_load(const char *spec, const rotor_zoo_options *zo, const rotor_onnx_options *onnx,
                              rotor_graph *g, rotor_onnx_stats *stats, rotor_error *err) {
    if (stats) memset(stats, 0, sizeof *stats);
    if (!rotor_model_is_onnx(spec)) {
        if (onnx && (onnx->dims || onnx->input_shapes || onnx->nvalues)) {
            rotor_graph_init(g, spec);
            return rotor_fail(err, ROTOR_ERR_INPUT, "--dim, --input and --value shape ONNX files; zoo models take "
                              "--batch, --seq and --layers");
        }
        return rotor_zoo_build(spec, zo, g, err);
    }
    return rotor_onnx_load(spec, onnx, g, stats, err);
}

/* The program stage: written as a file would hold it, then read back, so
 * that what runs next is exactly what `rotor simulate FILE` would run. */
static rotor_status program_stage(rotor_pipeline *p, const rotor_pipeline_options *opt, const rotor_chip *chip,
                                  rotor_error *err) {
    rotor_status st = rotor_program_roundtrip(&p->graph, chip, &p->t10, opt->model, &p->program, err);
    if (!st && opt->energy) { /* the energy model's counts, from the plan cache when warm (issue 45) */
        int damaged = 0;
        st = rotor_energy_program_cached(&p->program, chip, opt->compile.cache_dir, opt->compile.cache_limit,
                                         &damaged, &p->energy, err);
        p->t10.cache_damaged += damaged;
        p->has_energy = !st;
    }
    return st;
}

/* Seconds since *t, and *t moved to now: one stage's time. */
static double lap(double *t) {
    double now = rotor_clock_s(), d = now - *t;
    *t = now;
    return d;
}

/* allow_empty on a graph with no operators: nothing to plan, so the T10
 * result and the program hold no operator and every total is zero; they
 * name the model, chip, solver and objective as a compiled one would. */
static void empty_stages(rotor_pipeline *p, const rotor_pipeline_options *opt, const rotor_chip *chip) {
    p->t10.solver = opt->compile.solver;
    p->t10.objective = opt->compile.objective;
    if (!opt->program) return;
    snprintf(p->program.model, sizeof p->program.model, "%s", p->graph.name);
    snprintf(p->program.chip, sizeof p->program.chip, "%s", chip->name);
    p->program.cores = rotor_chip_cores(chip);
    p->program.solver = p->t10.solver;
    p->program.objective = p->t10.objective;
}

/* The KV cache a zoo LLM's prefill writes to HBM for its decode steps:
 * what its decode step at the same batch, context and layers reads (a
 * Gemma 2 local layer's window included), counted from that graph; 0 for
 * a decode step, an ONNX file or a model without one. */
static rotor_status prefill_kv_bytes(const rotor_pipeline_options *opt, int64_t *bytes, rotor_error *err) {
    *bytes = 0;
    const rotor_zoo_entry *z = rotor_model_is_onnx(opt->model) ? NULL : rotor_zoo_find(opt->model);
    if (!z || !z->llm || opt->zoo.phase != ROTOR_PHASE_PREFILL || opt->train) return ROTOR_OK;
    rotor_zoo_options dec = opt->zoo;
    dec.phase = ROTOR_PHASE_DECODE;
    rotor_graph g;
    rotor_status st = rotor_zoo_build(opt->model, &dec, &g, err);
    if (!st) {
        rotor_graph_totals t;
        rotor_graph_totals_of(&g, &t);
        *bytes = t.kv_bytes;
    }
    rotor_graph_free(&g);
    return st;
}

rotor_status rotor_pipeline_run(const rotor_pipeline_options *opt, const rotor_chip *chip, rotor_pipeline *out,
                                rotor_error *err) {
    memset(out, 0, sizeof *out);
    if ((opt->t10 || opt->vgm || opt->vgm_oracle || opt->program || opt->schedule) && !chip)
        return rotor_fail(err, ROTOR_ERR_INPUT, "pipeline: compiling or scheduling needs a chip");
    if (opt->program && !opt->t10)
        return rotor_fail(err, ROTOR_ERR_INPUT, "pipeline: a program comes from the T10 compile");
    if (opt->graphturbo && !chip) return rotor_fail(err, ROTOR_ERR_INPUT, "pipeline: GraphTurbo's schedule needs a chip");
    /* before the work: a chip without a GB is refused in one line */
    if (opt->graphturbo) {
        rotor_status cs = rotor_dsa_cluster_of(chip, &out->cluster, err);
        if (cs) return cs;
    }
    /* No silent guess (issue 41): on a mesh the VGM baseline prices its
     * loads and stores over one chip's routes (compile/vgmmesh.c); a mesh of
     * several chips has no route between them there: refused before the
     * work.  (Pipelined segments refuse a mesh themselves, compile/segment.c.) */
    if (chip && chip->topology == ROTOR_TOPO_MESH && chip->chips != 1 && (opt->vgm || opt->vgm_oracle))
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "topology mesh: the VGM baseline prices one chip's mesh, not %lld chips "
                          "(set chips=1, or leave the VGM baseline out)",
                          (long long)chip->chips);
    rotor_pipeline_times *tm = &out->times;
    double t0 = rotor_clock_s(), t = t0;
    /* ungrouped, the graph is the one `rotor run` executes, so imported as
     * it imports (keep_data: Softmax's row maximum, BatchNormalization
     * folded, docs/run.md): a program of the planning import has other
     * operators, and `rotor run --program` refused every one of a model
     * with a Softmax, though its help named this compile (found by an
     * audit helper) */
    rotor_onnx_options onnx = opt->onnx;
    onnx.keep_data = onnx.keep_data || (opt->no_group && opt->t10);
    rotor_status st = rotor_model_load(opt->model, &opt->zoo, &onnx, &out->graph, &out->onnx, err);
    tm->load_s = lap(&t);
    if (st) return st;
    out->loaded = true;
    if (opt->train) {
        /* the training step: forward, loss, backward, the optimizer's update */
        rotor_graph trained;
        st = rotor_train(&out->graph, &opt->train_opt, &trained, &out->train, err);
        rotor_graph_free(&out->graph);
        out->graph = trained;
        tm->train_s = lap(&t);
        if (st) return st;
    }
    if (opt->simplify) {
        /* the inference graph a deployment compiler plans: BN and constants folded */
        rotor_graph simple;
        st = rotor_simplify(&out->graph, &simple, &out->simplify, err);
        rotor_graph_free(&out->graph);
        out->graph = simple;
        tm->simplify_s = lap(&t);
        if (st) return st;
    }
    if (!opt->no_group) {
        /* plan the operators that cost time: epilogues fused, layout folded */
        rotor_graph grouped;
        st = rotor_group(&out->graph, &grouped, &out->group, err);
        rotor_graph_free(&out->graph);
        out->graph = grouped;
        tm->group_s = lap(&t);
        if (st) return st;
    }
    /* GraphTurbo's DSA schedules size blocks and weights by the values'
     * bytes: at the chip's element size, as the compiler prices them */
    if ((opt->graphturbo || opt->dsa_sizes) &&
        (st = rotor_graph_at_element_bytes(&out->graph, chip->element_bytes, err)))
        return st;
    bool empty = opt->allow_empty && out->graph.nops == 0;
    if (opt->t10 && empty) empty_stages(out, opt, chip);
    else if (opt->t10) st = rotor_compile(&out->graph, chip, &opt->compile, &out->t10, err);
    tm->t10_s = lap(&t);
    if (opt->vgm && (!st || st == ROTOR_ERR_NOFIT))
        out->vgm_status = rotor_vgm_compile(&out->graph, chip, ROTOR_VGM_ROLLER, &out->vgm, &out->vgm_err);
    if (opt->vgm_oracle && (!st || st == ROTOR_ERR_NOFIT))
        out->oracle_status = rotor_vgm_compile(&out->graph, chip, ROTOR_VGM_ORACLE, &out->oracle, &out->oracle_err);
    tm->vgm_s = lap(&t);
    if (!st && opt->program && !empty) st = program_stage(out, opt, chip, err);
    tm->program_s = lap(&t);
    if (!st && opt->schedule) {
        rotor_schedule_options so = *opt->schedule;
        st = prefill_kv_bytes(opt, &so.prefill_kv_bytes, err);
        if (opt->train && !rotor_mul_i64(out->train.write_elements, chip->element_bytes, &so.train_write_bytes))
            st = rotor_fail(err, ROTOR_ERR_INPUT, "schedule: the training step's HBM writes overflow 64 bits");
        if (!st) st = rotor_schedule_build(&out->graph, chip, &so, &out->schedule, err);
    }
    tm->schedule_s = lap(&t);
    for (int k = 0; !st && opt->graphturbo && k < ROTOR_DSA_STEPS; k++)
        st = rotor_dsa_run(&out->graph, &out->cluster, (rotor_dsa_step)k, &out->dsa[k], err);
    if (!st && opt->graphturbo && opt->dsa_loops) st = rotor_pipeline_dsa_loops(opt, chip, out, err);
    if (!st && opt->graphturbo && opt->dsa_values) st = rotor_pipeline_dsa_values(opt, chip, out, err);
    tm->dsa_s = lap(&t);
    tm->total_s = t - t0;
    /* a stage that did not run took no time, however few nanoseconds passed */
    if (!opt->t10) tm->t10_s = 0;
    if (!opt->vgm && !opt->vgm_oracle) tm->vgm_s = 0;
    if (!opt->program) tm->program_s = 0;
    if (!opt->schedule) tm->schedule_s = 0;
    if (!opt->graphturbo) tm->dsa_s = 0;
    return st;
}

rotor_status rotor_pipeline_group_parse(const char *group, bool *graphturbo, bool *no_group, rotor_error *err) {
    *graphturbo = group && !strcmp(group, "graphturbo");
    *no_group = group && !strcmp(group, "none");
    if (group && !*graphturbo && !*no_group && strcmp(group, "fused") != 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--group: expected fused, none or graphturbo, got '%s'", group);
    return ROTOR_OK;
}

void rotor_pipeline_free(rotor_pipeline *p) {
    if (!p) return;
    rotor_graph_free(&p->graph);
    rotor_train_info_free(&p->train);
    rotor_compile_result_free(&p->t10);
    rotor_vgm_result_free(&p->vgm);
    rotor_vgm_result_free(&p->oracle);
    rotor_program_free(&p->program);
    rotor_schedule_free(p->schedule);
    free(p->values);
    memset(p, 0, sizeof *p);
}
