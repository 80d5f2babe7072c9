/* bench_schedule — Elk end-to-end schedules of the zoo's LLM decode suite on
 * IPU-POD4 with 16 TB/s of HBM (Elk §6.1-§6.2; make bench, figures recorded
 * in docs/performance.md).
 *
 * For Llama2-13B, Gemma2-27B, OPT-30B and Llama2-70B at batch 8, 16 and 32
 * (sequence 2048, decode), and DiT-XL at batch 8, it builds the schedule
 * (tensor-parallel shards, T10 frontiers) and runs the five designs, then
 * prints per-token latency, % of Ideal and the speedups Elk reports (Full
 * over Basic 1.87x, over Static 1.37x; Full at 94.84 % of Ideal).  The
 * Llama2-70B rows time the whole scheduling: target under 10 s on 2 cores
 * (3,808 operators in Elk's count; 3,848 shards here, 962 per chip before
 * grouping, 803 after). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "rotor/model/group.h"
#include "rotor/hbm/schedule.h"
#include "rotor/model/zoo.h"

typedef struct row {
    double ms[ROTOR_PRELOAD_NDESIGNS];
    double elk_dyn_ms;  /* dyn without the refinement (Elk's induction alone) */
    double bound_ms;    /* lower bound of any schedule on the real chip (blocking_bound) */
    double build_s, sched_s[ROTOR_PRELOAD_NDESIGNS];
    int nops, searches;
} row;

/* A lower bound of every schedule on the chip with blocking SRAM, under
 * preload.c's timing: the HBM time, and the time one core is busy.  Every
 * weight byte a core holds in execute state (d = ceil(W P / cores)) lands
 * through its link, at preload or at distribution, and pauses its compute
 * (footnote 2), so each operator costs a core at least
 * min over plans of max(time, traffic / link) + d / link, serially. */
static double blocking_bound_ms(const rotor_schedule *s) {
    double link = (double)s->pchip.link_bw, core = 0, hbm = 0;
    for (int i = 0; i < s->nops; i++) {
        const rotor_schedule_op *o = &s->ops[i];
        double best = -1;
        for (int k = 0; k < o->nplans; k++) {
            const rotor_preload_plan *p = &o->plans[k];
            if (p->space_bytes > s->pchip.sram_bytes) continue;
            double d = (double)((o->hbm_bytes * p->share + s->pchip.cores - 1) / s->pchip.cores);
            double x = (double)p->traffic_bytes * 1e12 / link, t = (double)p->time_ps;
            double c = (x > t ? x : t) + d * 1e12 / link;
            if (best < 0 || c < best) best = c;
        }
        core += best > 0 ? best : 0;
        hbm += (double)o->hbm_bytes * 1e12 / (double)s->pchip.hbm_bw;
    }
    return (core > hbm ? core : hbm) * 1e-9;
}

static int run(const char *model, int64_t batch, rotor_phase phase, bool group, row *out) {
    rotor_error err;
    rotor_graph raw, g;
    rotor_zoo_options zo = {.batch = batch, .seq = phase == ROTOR_PHASE_DECODE ? 2048 : 0, .phase = phase};
    if (rotor_zoo_build(model, &zo, &raw, &err)) {
        fprintf(stderr, "%s: %s\n", model, err.msg);
        rotor_graph_free(&raw);
        return 1;
    }
    rotor_group_stats gs;
    if (group) {
        if (rotor_group(&raw, &g, &gs, &err)) {
            fprintf(stderr, "%s: %s\n", model, err.msg);
            rotor_graph_free(&raw);
            return 1;
        }
        rotor_graph_free(&raw);
    } else {
        g = raw;
    }
    rotor_chip chip;
    rotor_chip_preset("ipu-pod4", &chip, &err);
    double t0 = now_s();
    rotor_schedule *s;
    if (rotor_schedule_build(&g, &chip, NULL, &s, &err)) {
        fprintf(stderr, "%s: %s\n", model, err.msg);
        rotor_graph_free(&g);
        return 1;
    }
    out->build_s = now_s() - t0;
    out->nops = s->nops;
    out->searches = s->searches;
    for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++) {
        rotor_schedule_report r;
        t0 = now_s();
        if (rotor_schedule_run(s, (rotor_preload_design)d, &r, &err)) {
            fprintf(stderr, "%s %s: %s\n", model, rotor_preload_designs[d].name, err.msg);
            rotor_schedule_free(s);
            rotor_graph_free(&g);
            return 1;
        }
        out->sched_s[d] = now_s() - t0;
        out->ms[d] = r.latency_s * 1e3;
        rotor_schedule_report_free(&r);
    }
    out->bound_ms = blocking_bound_ms(s);
    s->preload.no_refine = true;
    rotor_schedule_report r;
    if (rotor_schedule_run(s, ROTOR_PRELOAD_DYN, &r, &err)) {
        fprintf(stderr, "%s dyn (no refinement): %s\n", model, err.msg);
        rotor_schedule_free(s);
        rotor_graph_free(&g);
        return 1;
    }
    out->elk_dyn_ms = r.latency_s * 1e3;
    rotor_schedule_report_free(&r);
    rotor_schedule_free(s);
    rotor_graph_free(&g);
    return 0;
}

int main(void) {
    static const char *llms[] = {"llama2-13b", "gemma2-27b", "opt-30b", "llama2-70b"};
    static const int64_t batches[] = {8, 16, 32};
    printf("LLM decode, seq 2048, ipu-pod4, 16 TB/s HBM, SRAM blocking (per-token latency, ms)\n\n");
    printf("| model | batch | basic | static | dyn (Elk alone) | dyn | full | ideal | roofline | bound | full %% of ideal | "
           "full %% of bound | full/basic | full/static |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    double sum_pct = 0, sum_fb = 0, sum_fs = 0, max_fb = 0, max_fs = 0;
    int n = 0;
    for (int m = 0; m < 4; m++)
        for (int b = 0; b < 3; b++) {
            row r;
            if (run(llms[m], batches[b], ROTOR_PHASE_DECODE, true, &r)) return 1;
            double pct = 100.0 * r.ms[ROTOR_PRELOAD_IDEAL] / r.ms[ROTOR_PRELOAD_FULL];
            double fb = r.ms[ROTOR_PRELOAD_BASIC] / r.ms[ROTOR_PRELOAD_FULL];
            double fs = r.ms[ROTOR_PRELOAD_STATIC] / r.ms[ROTOR_PRELOAD_FULL];
            double pb = 100.0 * r.bound_ms / r.ms[ROTOR_PRELOAD_FULL];
            printf("| %s | %lld | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.3fx | %.3fx |\n",
                   llms[m], (long long)batches[b], r.ms[0], r.ms[1], r.elk_dyn_ms, r.ms[2], r.ms[3], r.ms[4], r.ms[5],
                   r.bound_ms, pct, pb, fb, fs);
            sum_pct += pct;
            sum_fb += fb;
            sum_fs += fs;
            max_fb = fb > max_fb ? fb : max_fb;
            max_fs = fs > max_fs ? fs : max_fs;
            n++;
        }
    printf("\naverage: full %.2f %% of ideal (Elk: 94.84 %%), full/basic %.3fx (max %.3fx; Elk 1.87x, max 1.93x), "
           "full/static %.3fx (max %.3fx; Elk 1.37x, max 1.49x)\n",
           sum_pct / n, sum_fb / n, max_fb, sum_fs / n, max_fs);
    row d;
    if (run("dit-xl", 8, ROTOR_PHASE_PREFILL, true, &d)) return 1;
    printf("\nDiT-XL batch 8: basic %.3f, static %.3f, dyn %.3f (Elk alone %.3f), full %.3f, ideal %.3f, roofline %.3f, "
           "bound %.3f ms; full %.2f %% of ideal, %.2f %% of the bound\n",
           d.ms[0], d.ms[1], d.ms[2], d.elk_dyn_ms, d.ms[3], d.ms[4], d.ms[5], d.bound_ms, 100.0 * d.ms[4] / d.ms[3],
           100.0 * d.bound_ms / d.ms[3]);

    printf("\nScheduling time, Llama2-70B batch 32 (target: under 10 s on 2 cores)\n\n");
    printf("| graph | operators per chip | shapes searched | build s | basic s | static s | dyn s | full s | ideal s "
           "| roofline s | total s |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int grouped = 1; grouped >= 0; grouped--) {
        row r;
        if (run("llama2-70b", 32, ROTOR_PHASE_DECODE, grouped, &r)) return 1;
        double total = r.build_s;
        for (int k = 0; k < ROTOR_PRELOAD_NDESIGNS; k++) total += r.sched_s[k];
        printf("| %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
               grouped ? "grouped" : "as built", r.nops, r.searches, r.build_s, r.sched_s[0], r.sched_s[1], r.sched_s[2],
               r.sched_s[3], r.sched_s[4], r.sched_s[5], total);
    }
    return 0;
}
