/* bench_preload — time of Elk's HBM scheduling designs (src/hbm/preload.c) on a
 * synthetic Llama2-70B-sized decode model (make bench; figures recorded in
 * docs/performance.md).  Target: full, 3,808 operators, well under 10 s on 2
 * cores.
 *
 * The model: 80 identical layers of 47 operators plus 48 outside them =
 * 3,808 (Elk Table 2).  A layer (batch 32, sequence 2048, fp16, GQA with 8
 * KV heads) loads q and o projections (128 MiB each), a fused gate/up
 * projection (896 MiB), down (448 MiB), k and v projections (16 MiB each),
 * the K and V caches read by the two attention products (128 MiB each), and
 * small norm weights; the other operators load nothing.  HBM-heavy (above
 * the average of 41 MiB): q, o, gate/up, down, QK, AV: H = 6 as in Table 2.
 * Each operator has plans of falling space and rising time (24 for the
 * heavy ones, 6 for the rest), seeded, so the numbers are stable; a layer's
 * fastest plans take about as long as its 124 us of HBM loading.
 * Chip: IPU-POD4 (5,888 cores, 624 KiB each, 5.5 GB/s links, SRAM accesses
 * blocked by inter-core writes) with 16 TB/s of HBM (Elk §6.1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "rotor/hbm/preload.h"

#define LAYERS 80
#define PER_LAYER 47
#define NOPS 3808
#define MIB (1024LL * 1024)

typedef struct tmpl {
    const char *name;
    int64_t hbm;      /* bytes */
    int64_t base_ps;  /* time of the fastest plan */
} tmpl;

/* The heavy and weighted operators of one layer; the rest are light. */
static const tmpl HEAVY[] = {
    {"attn_norm", 16 * 1024, 500000},  {"q_proj", 128 * MIB, 8000000},  {"k_proj", 16 * MIB, 1500000},
    {"v_proj", 16 * MIB, 1500000},     {"qk", 128 * MIB, 6000000},      {"av", 128 * MIB, 6000000},
    {"o_proj", 128 * MIB, 8000000},    {"ffn_norm", 16 * 1024, 500000}, {"gate_up", 896 * MIB, 35000000},
    {"down", 448 * MIB, 18000000},
};

static void die(const char *what, const rotor_error *err) {
    fprintf(stderr, "bench_preload: %s: %s\n", what, err->msg);
    exit(1);
}

/* Plans of falling space and rising time for an op with weights hbm: the
 * time grows with the square of the space given up (Elk Figure 5: flat for
 * large spaces, steep for small ones), up to 4x. */
static int make_plans(uint64_t *x, const rotor_preload_chip *c, int64_t hbm, int64_t base_ps, int nplans,
                      rotor_preload_plan *p) {
    int64_t w1 = (hbm + c->cores - 1) / c->cores; /* per core at P = 1 */
    int k = 0;
    for (int i = 0; i < nplans; i++) {
        /* larger P (more replication) with more space, when the weights allow */
        int64_t share = 1 + (int64_t)(next_rand(x) % 4);
        while (share > 1 && w1 * share > c->sram_bytes * 7 / 10) share--;
        int64_t d = w1 * share;
        int64_t room = c->sram_bytes - d;
        int64_t act = room * (nplans - i) / nplans;
        int64_t space = d + (act > 1024 ? act : 1024);
        if (space > c->sram_bytes) space = c->sram_bytes;
        p[k] = (rotor_preload_plan){
            .time_ps = base_ps + 3 * base_ps * i * i / (nplans * nplans) + (int64_t)(next_rand(x) % (uint64_t)(base_ps / 20 + 1)),
            .space_bytes = space,
            .share = share,
            .traffic_bytes = d / share * (int64_t)(next_rand(x) % 3)};
        k++;
    }
    return k;
}

int main(void) {
    rotor_preload_chip chip = {.cores = 5888, .sram_bytes = 638976, .hbm_bw = 16000000000000LL,
                               .link_bw = 5500000000LL, .sram_blocking = true};
    static rotor_preload_op_desc ops[NOPS];
    static rotor_preload_plan plans[NOPS][24];
    uint64_t seed = 2025;
    /* the layer template, built once and repeated */
    rotor_preload_op_desc layer[PER_LAYER];
    static rotor_preload_plan lplans[PER_LAYER][24];
    static char names[PER_LAYER][24];
    int nh = (int)(sizeof HEAVY / sizeof HEAVY[0]);
    for (int o = 0; o < PER_LAYER; o++) {
        /* spread the weighted ops over the layer, light ops in between */
        int h = -1;
        for (int k = 0; k < nh; k++)
            if (o == 1 + k * (PER_LAYER - 2) / nh) h = k;
        int64_t hbm = h >= 0 ? HEAVY[h].hbm : 0;
        int64_t base = h >= 0 ? HEAVY[h].base_ps : 300000 + (int64_t)(next_rand(&seed) % 1000000);
        int np = hbm > 40 * MIB ? 24 : 6;
        snprintf(names[o], sizeof names[o], "%s", h >= 0 ? HEAVY[h].name : "light");
        layer[o] = (rotor_preload_op_desc){.name = names[o], .hbm_bytes = hbm, .layer = 1, .layer_begin = o == 0,
                                           .nplans = make_plans(&seed, &chip, hbm, base, np, lplans[o]),
                                           .plans = lplans[o]};
    }
    int n = 0;
    int outside = NOPS - LAYERS * PER_LAYER; /* embedding and friends before, head after */
    for (int i = 0; i < outside / 2; i++, n++) {
        ops[n] = (rotor_preload_op_desc){.name = "pre", .hbm_bytes = i == 0 ? 256 * MIB : 0, .nplans = 6,
                                         .plans = plans[n]};
        make_plans(&seed, &chip, ops[n].hbm_bytes, 1000000, 6, plans[n]);
    }
    for (int l = 0; l < LAYERS; l++)
        for (int o = 0; o < PER_LAYER; o++, n++) ops[n] = layer[o];
    for (; n < NOPS; n++) {
        ops[n] = (rotor_preload_op_desc){.name = "post", .hbm_bytes = n == NOPS - 1 ? 256 * MIB : 0, .nplans = 6,
                                         .plans = plans[n]};
        make_plans(&seed, &chip, ops[n].hbm_bytes, 1000000, 6, plans[n]);
    }
    rotor_preload_model *m;
    rotor_error err;
    double t0 = now_s();
    if (rotor_preload_model_create(&chip, ops, NOPS, &m, &err)) die("model", &err);
    double t_model = now_s() - t0;
    int heavy = 0;
    for (int i = 0; i < NOPS; i++) heavy += rotor_preload_model_heavy(m, i);
    printf("model: %d operators, %d layers of %d, %d HBM-heavy (%d per layer), built in %.3f s\n\n", NOPS, LAYERS,
           PER_LAYER, heavy, heavy / LAYERS, t_model);
    printf("| design | latency (us) | HBM util | preload / execute / overlap / stall (us) | schedules | allocations "
           "| time (s) |\n|---|---:|---:|---|---:|---:|---:|\n");
    for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++) {
        rotor_preload_result r;
        t0 = now_s();
        if (rotor_preload_schedule(m, (rotor_preload_design)d, NULL, &r, &err)) die(rotor_preload_designs[d].name, &err);
        double t = now_s() - t0;
        const rotor_preload_breakdown *b = &r.breakdown;
        printf("| %s | %.1f | %.3f | %.1f / %.1f / %.1f / %.1f | %lld | %lld | %.3f |\n", rotor_preload_designs[d].name,
               (double)r.latency_ps * 1e-6, r.hbm_util, (double)b->preload_ps * 1e-6, (double)b->execute_ps * 1e-6,
               (double)b->overlap_ps * 1e-6, (double)b->stall_ps * 1e-6, (long long)r.schedules,
               (long long)r.alloc_calls, t);
        fflush(stdout);
        rotor_preload_result_free(&r);
    }
    rotor_preload_model_free(m);
    return 0;
}
