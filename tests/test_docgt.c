/* GraphTurbo's documents through rotor_doc (pipeline/doc.h, docgt.c): the
 * options "group" and "no_loops" of compile and simulate, as the Python
 * package passes them (docs/python.md), against the pipeline run directly
 * as the CLI runs it, and the CLI's refusals.  tests/python/test_rotor.py
 * compares the same documents with the CLI's bytes; this runs under the
 * sanitizers too. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "rotor/pipeline/doc.h"
#include "rotor/pipeline/pipeline.h"

/* rotor_doc's document parsed (the caller deletes it). */
static cJSON *doc(const char *command, const char *options) {
    char *text = NULL;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_doc(command, options, &text, &err), ROTOR_OK, "%s %s: %s", command, options, err.msg);
    cJSON *root = cJSON_Parse(text);
    rotor_free(text);
    cr_assert(root);
    return root;
}

/* rotor_doc's error line for options that must fail. */
static void refused(const char *command, const char *options, const char *msg) {
    char *text = NULL;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_doc(command, options, &text, &err), ROTOR_ERR_INPUT, "%s %s", command, options);
    cr_assert_null(text);
    cr_assert_str_eq(err.msg, msg);
}

/* ResNet-18 at 4 a cluster on stcp920, as `rotor compile --group graphturbo` runs it. */
static void pipeline(bool loops, rotor_pipeline *p) {
    rotor_chip chip;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("stcp920", &chip, &err), ROTOR_OK);
    rotor_pipeline_options o = {.model = "resnet-18", .simplify = true, .graphturbo = true, .dsa_loops = loops};
    o.zoo.batch = 4;
    o.zoo.phase = ROTOR_PHASE_PREFILL;
    cr_assert_eq(rotor_pipeline_run(&o, &chip, p, &err), ROTOR_OK, "%s", err.msg);
}

/* cJSON prints 15 digits when they read back within its epsilon: a
 * number and its text may differ in the last bit. */
static bool same(double a, double b) { return fabs(a - b) <= 4e-16 * fabs(b); }

static double step_number(const cJSON *steps, int k, const char *key) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(steps, k), key);
    cr_assert(cJSON_IsNumber(x), "step %d: %s", k, key);
    return x->valuedouble;
}

Test(docgt, compile_with_group_graphturbo_is_the_pipelines_steps_and_loops) {
    rotor_pipeline p;
    pipeline(true, &p);
    cJSON *d = doc("compile", "{\"model\": \"resnet-18\", \"chip\": \"stcp920\", \"batch\": 4, \"group\": \"graphturbo\"}");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(d, "format")->valuestring, "rotor-graphturbo");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(d, "steps");
    cr_assert_eq(cJSON_GetArraySize(steps), ROTOR_DSA_STEPS);
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) cr_assert(same(step_number(steps, k, "seconds"), p.dsa[k].seconds), "%d", k);
    const cJSON *loops = cJSON_GetObjectItemCaseSensitive(d, "loops");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(loops, "tried")->valueint, p.loops.tried);
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(loops, "steps");
    for (int k = 0; k < ROTOR_DSA_STEPS; k++)
        cr_assert_eq(step_number(ls, k, "passes"), (double)p.loops.step[k].passes, "%d", k);
    cJSON_Delete(d);
    rotor_pipeline_free(&p);
    /* one pass only: no loops in the document */
    d = doc("compile", "{\"model\": \"resnet-18\", \"chip\": \"stcp920\", \"batch\": 4, \"group\": \"graphturbo\", "
                       "\"no_loops\": true}");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(d, "loops"));
    cJSON_Delete(d);
}

/* simulate with no_loops times the steps itself (the pipeline runs without
 * them, as the CLI's): each step's model time is the compile's. */
Test(docgt, simulate_with_group_graphturbo_replays_each_step) {
    rotor_pipeline p;
    pipeline(false, &p);
    cJSON *d = doc("simulate", "{\"model\": \"resnet-18\", \"chip\": \"stcp920\", \"batch\": 4, \"group\": "
                               "\"graphturbo\", \"no_loops\": true}");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(d, "format")->valuestring, "rotor-graphturbo-sim");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(d, "steps");
    cr_assert_eq(cJSON_GetArraySize(steps), ROTOR_DSA_STEPS);
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
        cr_assert(same(step_number(steps, k, "model_s"), p.dsa[k].seconds), "%d", k);
        cr_assert_gt(step_number(steps, k, "simulated_s"), 0);
    }
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(d, "loops"));
    cJSON_Delete(d);
    rotor_pipeline_free(&p);
}

/* "group": "none" compiles the graph as imported, as rotor compile --group
 * none does: MLP-L's 11 operators, where the default groups them into 4 */
Test(docgt, compile_with_group_none_keeps_every_operator) {
    cJSON *d = doc("compile", "{\"model\": \"mlp-l\", \"group\": \"none\"}");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "operators")), 11);
    cJSON_Delete(d);
    d = doc("compile", "{\"model\": \"mlp-l\"}");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "operators")), 4);
    cJSON_Delete(d);
}

Test(docgt, the_group_options_are_refused_as_the_cli_refuses_them) {
    refused("compile", "{\"model\": \"resnet-18\", \"group\": \"turbo\"}",
            "--group: expected fused, none or graphturbo, got 'turbo'");
    refused("simulate", "{\"model\": \"resnet-18\", \"no_loops\": true}",
            "--no-loops applies to --group graphturbo (GraphTurbo's passes a cluster)");
    refused("compile", "{\"model\": \"resnet-18\", \"group\": \"graphturbo\", \"compare\": true}",
            "--group graphturbo times GraphTurbo's schedules: it conflicts with --compare");
    refused("simulate", "{\"model\": \"resnet-18\", \"group\": \"graphturbo\", \"solver\": \"fast\"}",
            "--group graphturbo replays GraphTurbo's schedules: it conflicts with --solver");
    refused("schedule", "{\"model\": \"llama2-13b\", \"group\": \"graphturbo\"}",
            "options: unknown option 'group' for schedule (docs/python.md)");
}
