/* rotor — command-line entry point: dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "rotor/base/suggest.h"

#define ROTOR_VERSION "0.1.0"

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
            "  run       execute a whole model on the emulated chip with its weights and check it\n"
            "  schedule  schedule a model held in HBM (Elk preloads), with its baselines\n"
            "  explore   sweep a chip parameter (HBM, NoC, cores, FLOPS) over the schedules\n"
            "  reproduce run a paper's evaluation and set it beside the paper's figures (t10)\n"
            "  report    write one self-contained HTML report: frontiers, times, heat map, schedule\n"
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
    if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "schedule")) return cmd_schedule(argc - 1, argv + 1);
    if (!strcmp(cmd, "explore")) return cmd_explore(argc - 1, argv + 1);
    if (!strcmp(cmd, "reproduce")) return cmd_reproduce(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return cmd_report(argc - 1, argv + 1);
    static const char *const cmds[] = {"plan", "verify", "compile", "model", "simulate", "run", "schedule", "explore",
                                       "reproduce", "report"};
    char hint[96];
    fprintf(stderr, "rotor: unknown command '%s'%s (try 'rotor --help')\n", cmd,
            rotor_suggest_phrase(cmd, cmds, (int)(sizeof cmds / sizeof cmds[0]), hint, sizeof hint));
    return EXIT_BADINPUT;
}
