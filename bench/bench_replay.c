/* bench_replay — replaying a compiled BERT-Large program on the simulator
 * (make bench; figures recorded in docs/performance.md).  Target (issue 6):
 * BERT-Large at batch 8 on the 1,472-core ipu-mk2 replays in under 10 s on
 * 2 cores.
 *
 * The program is compiled once (not timed here: bench_compile's business),
 * written and read back as rotor compile -o and rotor simulate do, then
 * replayed on the all-to-all chip and on a 32 x 46 mesh.  A replay is timed
 * whole: building the task graph from the placement and running it.
 *
 * Then an HBM schedule (issue 7): the Elk-Full schedule of a Llama2-13B
 * decode step (batch 8, KV cache 2048) on ipu-pod4, replayed with its
 * preloads on one chip (rotor_schedule_replay), once on all-to-all and once
 * on a 32 x 46 mesh (HBM through the edge ports, docs/simulator.md). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "rotor/compile/compile.h"
#include "rotor/model/group.h"
#include "rotor/compile/program.h"
#include "rotor/hbm/schedreplay.h"
#include "rotor/sim/replay.h"
#include "rotor/hbm/schedule.h"
#include "rotor/model/zoo.h"

#define REPEAT 3

static void die(const char *what, const rotor_error *err) {
    fprintf(stderr, "bench_replay: %s: %s\n", what, err->msg);
    exit(1);
}

int main(void) {
    rotor_error err;
    rotor_chip chip, mesh;
    if (rotor_chip_preset("ipu-mk2", &chip, &err)) die("chip", &err);
    mesh = chip;
    if (rotor_chip_set(&mesh, "topology=mesh", &err) || rotor_chip_set(&mesh, "mesh_width=32", &err) ||
        rotor_chip_set(&mesh, "mesh_height=46", &err) || rotor_chip_validate(&mesh, &err))
        die("mesh", &err);
    rotor_zoo_options zo = {.batch = 8};
    rotor_graph raw, g;
    rotor_group_stats gs;
    if (rotor_zoo_build("bert-large", &zo, &raw, &err)) die("zoo", &err);
    if (rotor_group(&raw, &g, &gs, &err)) die("group", &err);
    rotor_graph_free(&raw);
    rotor_compile_result r;
    char *text;
    rotor_program p;
    if (rotor_compile(&g, &chip, NULL, &r, &err)) die("compile", &err);
    if (rotor_program_write(&g, &chip, &r, &text, &err)) die("program", &err);
    double t0 = now_s();
    if (rotor_program_parse(text, "bert-large.json", &chip, &p, &err)) die("parse", &err);
    double parse_s = now_s() - t0;
    printf("rotor replay benchmark: BERT-Large, batch 8, %d operators; program read in %.3f s; best of %d\n\n",
           p.nops, parse_s, REPEAT);
    printf("| chip | tasks | events | replay (s) | events/s | model (us) | simulated (us) | error |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    const rotor_chip *chips[2] = {&chip, &mesh};
    for (int c = 0; c < 2; c++) {
        double best = 1e30;
        rotor_replay_result rr = {0};
        for (int k = 0; k < REPEAT; k++) {
            rotor_replay_result_free(&rr);
            double t = now_s();
            if (rotor_replay(&p, chips[c], NULL, &rr, NULL, &err)) die("replay", &err);
            t = now_s() - t;
            if (t < best) best = t;
        }
        printf("| %s%s | %lld | %lld | %.3f | %.3g | %.1f | %.1f | %+.2f%% |\n", chips[c]->name,
               c ? ", mesh 32x46" : "", (long long)rr.stats.tasks, (long long)rr.stats.events, best,
               (double)rr.stats.events / best, rr.predicted_s * 1e6, rr.simulated_s * 1e6,
               100 * (rr.simulated_s / rr.predicted_s - 1));
        rotor_replay_result_free(&rr);
    }
    printf("\ntarget (issue 6): under 10 s per replay on 2 cores\n");
    rotor_program_free(&p);
    free(text);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);

    /* the HBM schedule */
    rotor_chip pod;
    if (rotor_chip_preset("ipu-pod4", &pod, &err)) die("chip", &err);
    rotor_zoo_options lo = {.batch = 8, .seq = 2048, .phase = ROTOR_PHASE_DECODE};
    if (rotor_zoo_build("llama2-13b", &lo, &raw, &err)) die("zoo", &err);
    if (rotor_group(&raw, &g, &gs, &err)) die("group", &err);
    rotor_graph_free(&raw);
    rotor_schedule *s;
    rotor_schedule_report rep;
    if (rotor_schedule_build(&g, &pod, NULL, &s, &err)) die("schedule", &err);
    if (rotor_schedule_run(s, ROTOR_PRELOAD_FULL, &rep, &err)) die("schedule run", &err);
    rotor_chip pmesh = s->chip; /* one chip of the pod, as the replay runs */
    if (rotor_chip_set(&pmesh, "topology=mesh", &err) || rotor_chip_set(&pmesh, "mesh_width=32", &err) ||
        rotor_chip_set(&pmesh, "mesh_height=46", &err) || rotor_chip_validate(&pmesh, &err))
        die("mesh", &err);
    printf("\nHBM schedule: Llama2-13B decode, batch 8, KV 2048, Elk-Full, one ipu-pod4 chip\n\n");
    printf("| network | tasks | events | replay (s) | events/s | analytical (us) | simulated (us) | difference | HBM util |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    const rotor_chip *pchips[2] = {NULL, &pmesh};
    for (int c = 0; c < 2; c++) {
        double t = now_s();
        rotor_schedule_replay_result sr;
        if (rotor_schedule_replay(s, &rep, pchips[c], false, NULL, &sr, &err)) die("schedule replay", &err);
        t = now_s() - t;
        printf("| %s | %lld | %lld | %.2f | %.3g | %.1f | %.1f | %+.2f%% | %.1f%% |\n", c ? "mesh 32x46" : "all-to-all",
               (long long)sr.stats.tasks, (long long)sr.stats.events, t, (double)sr.stats.events / t,
               (double)sr.analytical_ps * 1e-6, (double)sr.simulated_ps * 1e-6, 100 * sr.error,
               100 * sr.stats.hbm_util);
        rotor_schedule_replay_result_free(&sr);
    }
    printf("\ntarget (issue 7): within 3%% of the analytical latency on all-to-all; the mesh takes in HBM\n"
           "through its 156 edge ports (docs/simulator.md, \"HBM on the mesh\")\n");
    rotor_schedule_report_free(&rep);
    rotor_schedule_free(s);
    rotor_graph_free(&g);
    return 0;
}
