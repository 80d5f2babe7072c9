/* bench_search — wall time of the exact search over a corpus of real
 * operators (make bench; figures recorded in docs/performance.md).
 *
 * For each operator: the fastest-plan search with 1 thread and with all
 * threads (best of REPEAT runs), plans costed per second, and the Pareto
 * search with all threads (one run: it is the long one).  Prints a Markdown table. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "rotor/base/chip.h"
#include "rotor/op/expr.h"
#include "rotor/op/search.h"

#define REPEAT 3

typedef struct bench_op {
    const char *name;
    const char *expr;
    const char *dims;
} bench_op;

#define MM "C[m,n] += A[m,k] * B[k,n]"
#define BMM "C[b,m,n] += A[b,m,k] * B[b,k,n]"
#define CONV "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]"
#define CONV_S2 "O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]"

static const bench_op corpus[] = {
    {"T10 benchmark MatMul", MM, "m=32,k=5120,n=15360"},
    /* BERT-Large (hidden 1024, FFN 4096, seq 128), batch 1 / 8 / 64 */
    {"BERT-L QKV b1", MM, "m=128,k=1024,n=3072"},
    {"BERT-L QKV b8", MM, "m=1024,k=1024,n=3072"},
    {"BERT-L QKV b64", MM, "m=8192,k=1024,n=3072"},
    {"BERT-L FFN1 b8", MM, "m=1024,k=1024,n=4096"},
    {"BERT-L FFN2 b8", MM, "m=1024,k=4096,n=1024"},
    {"BERT-L FFN1 b64", MM, "m=8192,k=1024,n=4096"},
    /* BERT-Large attention, batch 8 x 16 heads, seq 128, head 64 */
    {"BERT-L scores b8", BMM, "b=128,m=128,k=64,n=128"},
    {"BERT-L context b8", BMM, "b=128,m=128,k=128,n=64"},
    /* OPT-13B decode (hidden 5120, FFN 20480), batch 8 */
    {"OPT-13B QKV dec b8", MM, "m=8,k=5120,n=15360"},
    {"OPT-13B FFN1 dec b8", MM, "m=8,k=5120,n=20480"},
    {"OPT-13B FFN2 dec b8", MM, "m=8,k=20480,n=5120"},
    /* Llama2-13B decode (hidden 5120, FFN 13824), batch 8 */
    {"Llama2-13B gate dec b8", MM, "m=8,k=5120,n=13824"},
    {"Llama2-13B down dec b8", MM, "m=8,k=13824,n=5120"},
    {"Llama2-13B attn-out dec b8", MM, "m=8,k=5120,n=5120"},
    /* ResNet-50, batch 8 */
    {"ResNet-50 conv1 7x7/2", CONV_S2, "b=8,f=64,c=3,h=112,w=112,kh=7,kw=7"},
    {"ResNet-50 conv2 3x3", CONV, "b=8,f=64,c=64,h=56,w=56,kh=3,kw=3"},
    {"ResNet-50 conv2 1x1", CONV, "b=8,f=256,c=64,h=56,w=56,kh=1,kw=1"},
    {"ResNet-50 conv4 3x3", CONV, "b=8,f=256,c=256,h=14,w=14,kh=3,kw=3"},
    {"ResNet-50 conv5 3x3", CONV, "b=8,f=512,c=512,h=7,w=7,kh=3,kw=3"},
};

static double run(const rotor_expr *e, const rotor_chip *chip, int threads, bool pareto,
                  int repeat, rotor_search_result *keep) {
    double best = 1e30;
    for (int i = 0; i < repeat; i++) {
        rotor_search_options o = {0};
        o.threads = threads;
        o.pareto = pareto;
        rotor_search_result r;
        rotor_error err;
        if (rotor_search(e, chip, &o, &r, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(1);
        }
        if (r.stats.wall_seconds < best) best = r.stats.wall_seconds;
        if (i == 0 && keep) *keep = r;
        else rotor_search_result_free(&r);
    }
    return best;
}

int main(void) {
    rotor_chip chip;
    if (!bench_chip("ipu-mk2", &chip, "bench")) return 1;
    rotor_error err;
    int all = omp_get_max_threads();
    printf("rotor search benchmark on ipu-mk2 (1472 cores), %d threads available, best of %d runs (Pareto: one run)\n\n",
           all, REPEAT);
    printf("| operator | dims | best plan (us) | plans costed | 1 thread (s) | plans/s (1 thread) | %d threads (s) | Pareto, %d threads (s) | frontier |\n",
           all, all);
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    double sum1 = 0, sumall = 0, sumpareto = 0;
    int n = (int)(sizeof corpus / sizeof corpus[0]);
    for (int i = 0; i < n; i++) {
        rotor_expr e;
        if (rotor_expr_make(corpus[i].expr, corpus[i].dims, &e, &err)) {
            fprintf(stderr, "bench: %s: %s\n", corpus[i].name, err.msg);
            return 1;
        }
        rotor_search_result r1, rp;
        double t1 = run(&e, &chip, 1, false, REPEAT, &r1);
        double ta = run(&e, &chip, all, false, REPEAT, NULL);
        double tp = run(&e, &chip, all, true, 1, &rp);
        printf("| %s | %s | %.3f | %lld | %.4f | %.3g | %.4f | %.4f | %d |\n", corpus[i].name,
               corpus[i].dims, r1.best.cost.total * 1e6, (long long)r1.stats.plans, t1,
               (double)r1.stats.plans / t1, ta, tp, rp.npareto);
        fflush(stdout);
        sum1 += t1;
        sumall += ta;
        sumpareto += tp;
        rotor_search_result_free(&r1);
        rotor_search_result_free(&rp);
    }
    printf("\ncorpus of %d operators: %.3f s on 1 thread, %.3f s on %d threads, Pareto %.3f s\n", n, sum1,
           sumall, all, sumpareto);
    return 0;
}
