/* rotor — command-line entry point: one table of the subcommands (one file
 * each), from which the dispatch, the command list of `rotor --help` and the
 * "did you mean" of an unknown command all come. */
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "cli.h"
#include "rotor/base/suggest.h"
#include "rotor/base/version.h"


/* A subcommand: its name, its entry point (argv[0] is the name) and the
 * line `rotor --help` gives it. */
typedef struct cli_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} cli_command;

/* One row a subcommand: its name is also its function's, cmd_NAME. */
#define COMMAND(name, summary) {#name, cmd_##name, summary}
static const cli_command commands[] = {
    COMMAND(plan, "find the fastest rTensor plan of one operator (and its Pareto frontier)"),
    COMMAND(verify, "run plans on emulated cores with real data and check the result"),
    COMMAND(compile, "compile a whole model (T10 idle/active plans), with the VGM baseline"),
    COMMAND(model, "list a model's operators (zoo or ONNX file), FLOPs and weights"),
    COMMAND(simulate, "replay a compiled program on the event-driven chip simulator"),
    COMMAND(run, "execute a whole model on the emulated chip with its weights and check it"),
    COMMAND(schedule, "schedule a model held in HBM (Elk preloads), with its baselines"),
    COMMAND(explore, "sweep a chip parameter (HBM, NoC, cores, FLOPS) over the schedules"),
    COMMAND(reproduce, "run a paper's evaluation and set it beside the paper's figures (t10)"),
    COMMAND(report, "write one self-contained HTML report: frontiers, times, heat map, schedule"),
    COMMAND(chip, "print a chip preset (or file, with --set) as a chip file: rotor chip show NAME"),
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *f) {
    fputs("usage: rotor <command> [options]\n"
          "\n"
          "rotor plans, predicts and checks how DNN operators run on inter-core connected\n"
          "AI chips (Graphcore IPU and kin), after T10's compute-shift execution plans.\n"
          "\n"
          "commands:\n",
          f);
    for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "  rotor <command> --help   options of one command\n"
          "  rotor --version          print the version\n",
          f);
}

/* The command's exit status (cmd: its name, NULL before one is known). */
static int dispatch(int argc, char **argv, const char **cmd) {
    *cmd = NULL;
    if (argc < 2) {
        usage(stderr);
        return EXIT_BADINPUT;
    }
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        printf("rotor %s\n", ROTOR_VERSION);
        return 0;
    }
    const char *names[NCOMMANDS];
    for (int i = 0; i < NCOMMANDS; i++) {
        if (!strcmp(name, commands[i].name)) {
            *cmd = name;
            return commands[i].fn(argc - 1, argv + 1);
        }
        names[i] = commands[i].name;
    }
    char hint[96];
    fprintf(stderr, "rotor: unknown command '%s'%s (try 'rotor --help')\n", name,
            rotor_suggest_phrase(name, names, NCOMMANDS, hint, sizeof hint));
    return EXIT_BADINPUT;
}

/* Every run ends in cli_finish: what was printed is checked to have been
 * written (rotor model x > /dev/full exits 2, README "Exit status"). */
/* glibc's allocator maps every block above its mmap threshold (128 KB at
 * first, raised as such blocks are freed) and returns it at free, so the
 * next one faults its pages in again, and it trims the heap's top above
 * 128 KB free: a warm compile's graphs (a 5 KB operator each), program and
 * JSON trees are megabytes made and freed in turn, and a quarter of a warm
 * Conformer-M's 3,050 page faults were pages it had touched before (issue
 * 45; docs/performance.md, "2026-11-30 (h-warm, issue 45)").  Blocks up to
 * 32 MB come from the heap.
 *
 * The heap's first HEAP_HUGE bytes are also asked for on transparent huge
 * pages (2 MB; madvise, where the kernel's THP setting is "madvise" or
 * "always"; Debian's default is "madvise").  A cold compile's searches read
 * their memos and per-F_op records at random over some 200 MB (DenseNet-121
 * at batch 128), and on 4 KB pages a sixth of its CPU time was page walks
 * and 48,000 page faults (docs/performance.md, "2026-11-30 (thirty-sixth
 * session): huge pages").  The kernel marks huge pages per mapping, and
 * the heap's later growth by brk is a new mapping without the mark, so the
 * heap is grown once, at start, by HEAP_HUGE (address space only: a page
 * is memory once touched), marked, and kept: the top pad stays HEAP_HUGE,
 * so a trim keeps that much (a process keeps at most HEAP_HUGE it no longer
 * uses) and a growth past it comes in HEAP_HUGE steps.  Only the command
 * line sets this (the library sets no process state); nothing an output
 * holds depends on it, and where the kernel has no huge pages, or brk
 * fails, the allocator goes on as before.  Every thread allocates from this
 * heap (one arena): a second thread's arena is mapped apart, on small
 * pages, and the searches' threads allocate seldom (malloc is 0.05 % of a
 * compile's instructions: ResNet-50 at batch 8, callgrind), so they rarely
 * wait on its lock. */
#define HEAP_HUGE ((size_t)512 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)
static void cli_malloc_tune(void) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
#if defined(MADV_HUGEPAGE) && UINTPTR_MAX > 0xFFFFFFFFu
    mallopt(M_TOP_PAD, (int)HEAP_HUGE);
    mallopt(M_ARENA_MAX, 1);
    uintptr_t lo = (uintptr_t)sbrk(0);
    void *volatile grow = malloc(1 << 20); /* volatile: not elided with its free */
    free(grow);
    uintptr_t hi = (uintptr_t)sbrk(0);
    lo = (lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (lo != (uintptr_t)-1 && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
#endif
}

int main(int argc, char **argv) {
    cli_malloc_tune();
    cli_signals_install();
    cli_args_note(argc, argv);
    const char *cmd;
    int rc = dispatch(argc, argv, &cmd);
    return cli_finish(cmd, rc);
}
