/* test_gticcasim.c — GraphTurbo's instances on an ICCA chip's core groups
 * replayed (src/sim/gticcareplay.c; docs/graphturbo.md "On an ICCA chip",
 * "The replay"): a plan with no instances is the plain replay exactly, and
 * ResNet-18 at batch 2, whose stage-2 block runs as two one-image
 * instances, replays within 5 % of the model. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/sim/gticcareplay.h"
#include "rotor/sim/replay.h"
#include "san.h"

static void run(const char *model, int64_t batch, const rotor_chip *chip, rotor_pipeline *p,
                rotor_pipeline_options *po) {
    *po = (rotor_pipeline_options){.model = model, .zoo = {.batch = batch}, .t10 = true, .program = true,
                                   .simplify = true};
    po->compile.graphturbo = true;
    po->compile.threads = 1;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_pipeline_run(po, chip, p, &err), ROTOR_OK, "%s", err.msg);
}

/* Under the sanitizers (tests/san.h) NeRF instead of ResNet-18: the same
 * replay of a plan without instances, a quarter of the operators; the plain
 * build replays ResNet-18. */
Test(gticcasim, a_plan_without_instances_is_the_plain_replay_exactly) {
    rotor_chip chip = mk2();
    rotor_pipeline p;
    rotor_pipeline_options po;
    run(ROTOR_TEST_SAN ? "nerf" : "resnet-18", 1, &chip, &p, &po); /* batch 1 never splits */
    cr_assert_eq(p.t10.gticca.nsg, 0);
    rotor_error err = {{0}};
    rotor_gticca_replay_result r;
    cr_assert_eq(rotor_gticca_replay(&p.graph, &chip, &p.program, &p.t10, &po.compile, &r, &err), ROTOR_OK, "%s",
                 err.msg);
    rotor_replay_result plain;
    cr_assert_eq(rotor_replay(&p.program, &chip, NULL, &plain, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.nsg, 0);
    cr_assert_eq(r.simulated_s, plain.simulated_s);
    cr_assert_eq(r.t10_simulated_s, plain.simulated_s);
    cr_assert_eq(r.model_s, p.t10.total_s);
    cr_assert_eq(r.t10_model_s, plain.predicted_s);
    rotor_replay_result_free(&plain);
    rotor_gticca_replay_result_free(&r);
    rotor_pipeline_free(&p);
}

Test(gticcasim, resnet18_at_batch_2_replays_its_two_instances_within_5_percent, .timeout = 120) {
    rotor_chip chip = mk2();
    rotor_pipeline p;
    rotor_pipeline_options po;
    run("resnet-18", 2, &chip, &p, &po);
    cr_assert_eq(p.t10.gticca.nsg, 1);
    rotor_error err = {{0}};
    rotor_gticca_replay_result r;
    cr_assert_eq(rotor_gticca_replay(&p.graph, &chip, &p.program, &p.t10, &po.compile, &r, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(r.nsg, 1);
    const rotor_gticca_replay_sg *s = &r.sg[0];
    cr_assert_str_eq(p.graph.ops[s->first].name, "s2.b0.conv1");
    cr_assert_eq(s->instances, 2);
    cr_assert_eq(s->group_cores, 736);
    cr_assert_eq(r.model_s, p.t10.gticca.total_s);
    cr_assert_eq(s->model_s, p.t10.gticca.sg[0].grouped_s + p.t10.gticca.sg[0].penalty_s);
    /* the instance's program (T10 on 736 cores, one image), replayed */
    cr_assert_gt(s->simulated_instance_s, 0);
    cr_assert_lt(fabs(s->simulated_instance_s / s->model_instance_s - 1), 0.05, "instance %.3f us, model %.3f us",
                 s->simulated_instance_s * 1e6, s->model_instance_s * 1e6);
    cr_assert_geq(s->simulated_entry_s, 0);
    cr_assert_lt(fabs(s->simulated_s / s->model_s - 1), 0.05, "sub-graph %.3f us, model %.3f us",
                 s->simulated_s * 1e6, s->model_s * 1e6);
    cr_assert_lt(fabs(r.simulated_s / r.model_s - 1), 0.05, "replay %.3f us, model %.3f us", r.simulated_s * 1e6,
                 r.model_s * 1e6);
    /* the numbers of the replay as implemented (docs/graphturbo.md, "The replay") */
    cr_assert_float_eq(s->simulated_instance_s * 1e6, 6.111, 5e-4);
    cr_assert_float_eq(s->simulated_entry_s * 1e6, 0.153, 5e-4);
    cr_assert_float_eq(s->simulated_s * 1e6, 6.264, 5e-4);
    cr_assert_float_eq(r.t10_simulated_s * 1e6, 56.365, 5e-4);
    cr_assert_float_eq(r.simulated_s * 1e6, 56.034, 5e-4);
    /* the grouped plan replays faster than T10 alone replays, as modelled */
    cr_assert_lt(r.simulated_s, r.t10_simulated_s);
    rotor_gticca_replay_result_free(&r);
    rotor_pipeline_free(&p);
}
