/* train.c — what --train prints (docs/training.md): the training step a
 * compile, simulate or schedule planned, and rotor run --train's gradient
 * check against finite differences. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "rotor/run/gradcheck.h"

static void bytes_text(int64_t b, char *buf, size_t cap) {
    if (b >= (int64_t)1 << 30) snprintf(buf, cap, "%.2f GiB", (double)b / (double)((int64_t)1 << 30));
    else if (b >= (int64_t)1 << 20) snprintf(buf, cap, "%.2f MiB", (double)b / (double)((int64_t)1 << 20));
    else if (b >= 1024) snprintf(buf, cap, "%.2f KiB", (double)b / 1024);
    else snprintf(buf, cap, "%lld B", (long long)b);
}

/* The one-element float initializers an import for training held constant. */
static void print_held(int held) {
    if (held > 0)
        printf("held constant, not trained: %d one-element float initializer%s (docs/training.md, \"Parameters\")\n",
               held, held == 1 ? "" : "s");
}

void cli_print_train(const rotor_pipeline *p) {
    const rotor_train_info *t = &p->train;
    char pb[32], sb[32], kb[32];
    bytes_text(t->param_bytes, pb, sizeof pb);
    bytes_text(t->state_bytes, sb, sizeof sb);
    bytes_text(t->kept_bytes, kb, sizeof kb);
    printf("training step (%s): forward %d ops, loss %d, backward %d, update %d; %d parameters (%s, their "
           "gradients as much), optimizer state %s, kept activations %s (%d values)\n",
           t->no_update ? "none" : rotor_optimizer_name(t->optimizer), t->forward_ops, t->loss_ops, t->backward_ops, t->update_ops,
           t->nparams, pb, sb, kb, t->kept_values);
    print_held(p->onnx.scalars_held);
}

static void print_check(const char *model, const rotor_gradcheck_result *r) {
    printf("%s: loss %.9g; %d parameters checked against central differences (%d loss evaluations)\n", model, r->loss,
           r->nparams, r->evaluations);
    printf("  %-32s %10s %8s %6s %12s %14s %14s\n", "parameter", "elements", "checked", "kinks", "max rel err",
           "analytic", "numeric");
    for (int k = 0; k < r->nparams; k++) {
        const rotor_gradcheck_param *q = &r->params[k];
        if (q->vanishing)
            printf("  %-32s %10lld %8d %6d %12s %14s %14.6g\n", q->name, (long long)q->elements, q->checked, q->kinks,
                   q->zero_ok ? "zero" : "NOT ZERO", "0 (symmetry)", q->max_numeric);
        else
            printf("  %-32s %10lld %8d %6d %12.3g %14.6g %14.6g\n", q->name, (long long)q->elements, q->checked,
                   q->kinks, q->max_rel, q->analytic, q->numeric);
    }
}

int cli_run_train(const char *cmd, const cli_shared_args *sa, const char *model) {
    rotor_pipeline_options po = {0};
    if (cli_shared_model(cmd, model, sa, false, &po)) return EXIT_BADINPUT;
    po.train = false; /* the check builds its own training and loss graphs */
    po.no_group = true;
    po.onnx.keep_data = true;
    rotor_error err = {{0}};
    rotor_pipeline p;
    rotor_status st = rotor_pipeline_run(&po, NULL, &p, &err);
    rotor_gradcheck_result r = {0};
    rotor_gradcheck_options go = {.seed = 1};
    if (!st) st = rotor_gradcheck(&p.graph, NULL, &go, &r, &err);
    int held = p.onnx.scalars_held;
    rotor_pipeline_free(&p);
    if (st) return cli_fail(cmd, st, &err);
    print_check(model, &r);
    print_held(held);
    bool pass = r.max_rel <= ROTOR_GRADCHECK_LIMIT && r.zero_bad == 0;
    for (int k = 0; k < r.nparams; k++) pass = pass && r.params[k].checked > 0;
    /* the limit printed as ROTOR_GRADCHECK_LIMIT's spelling, which tests and documents quote */
    printf("max relative error %.3g (limit 1e-3): %s\n", r.max_rel, pass ? "PASS" : "FAIL");
    rotor_gradcheck_result_free(&r);
    return pass ? 0 : EXIT_NOFIT;
}
