/* rotor — command-line entry point: dispatches to one file per subcommand. */
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define ROTOR_VERSION "0.1.0"

int cli_fail(const char *cmd, rotor_status st, const rotor_error *err) {
    fprintf(stderr, "rotor %s: %s\n", cmd, err->msg);
    if (st == ROTOR_ERR_NOFIT) return EXIT_NOFIT;
    if (st == ROTOR_ERR_NOMEM) return EXIT_NOMEM;
    return EXIT_BADINPUT;
}

int cli_nomem(const char *cmd) {
    fprintf(stderr, "rotor %s: out of memory\n", cmd);
    return EXIT_NOMEM;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rotor %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_BADINPUT;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_begin(cli_progress *p, const char *cmd, const char *what) {
    p->cmd = cmd;
    p->what = what;
    p->start = now_s();
    p->tty = isatty(2);
    p->drawn = false;
}

void cli_progress_step(void *ctx, int done, int total) {
    cli_progress *p = ctx;
    if (!p->tty || total <= 0) return;
    double t = now_s() - p->start;
    if (t < 1.0) return;
    char bar[31];
    int fill = (int)(30L * done / total);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\rrotor %s: %s [%s] %d/%d, %.1f s ", p->cmd, p->what, bar, done, total, t);
    fflush(stderr);
    p->drawn = true;
}

void cli_progress_end(cli_progress *p) {
    if (p->drawn) fprintf(stderr, "\r%*s\r", 100, "");
    p->drawn = false;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: rotor <command> [options]\n"
            "\n"
            "rotor plans, predicts and checks how DNN operators run on inter-core connected\n"
            "AI chips (Graphcore IPU and kin), after T10's compute-shift execution plans.\n"
            "\n"
            "commands:\n"
            "  plan      find the fastest rTensor plan of one operator (and its Pareto frontier)\n"
            "  verify    run plans on emulated cores with real data and check the result\n"
            "  compile   compile a whole model (T10 idle/active plans), with the VGM baseline\n"
            "  model     list a model's operators (zoo or ONNX file), FLOPs and weights\n"
            "  simulate  replay a compiled program on the event-driven chip simulator\n"
            "  schedule  schedule a model held in HBM (Elk preloads), with its baselines\n"
            "  explore   sweep a chip parameter (HBM, NoC, cores, FLOPS) over the schedules\n"
            "\n"
            "  rotor <command> --help   options of one command\n"
            "  rotor --version          print the version\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_BADINPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("rotor %s\n", ROTOR_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "plan")) return cmd_plan(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify")) return cmd_verify(argc - 1, argv + 1);
    if (!strcmp(cmd, "compile")) return cmd_compile(argc - 1, argv + 1);
    if (!strcmp(cmd, "model")) return cmd_model(argc - 1, argv + 1);
    if (!strcmp(cmd, "simulate")) return cmd_simulate(argc - 1, argv + 1);
    if (!strcmp(cmd, "schedule")) return cmd_schedule(argc - 1, argv + 1);
    if (!strcmp(cmd, "explore")) return cmd_explore(argc - 1, argv + 1);
    fprintf(stderr, "rotor: unknown command '%s' (try 'rotor --help')\n", cmd);
    return EXIT_BADINPUT;
}
