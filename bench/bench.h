/* bench.h — what every benchmark in bench/ measures with: a monotonic clock,
 * a seeded generator for synthetic workloads, and the preset chip it runs on.
 *
 * Static functions only: each bench/bench_X.c is its own program (one main each,
 * Makefile), and uses any subset of these. */
#ifndef ROTOR_BENCH_H
#define ROTOR_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"

#define BENCH_FN static __attribute__((unused))

/* Seconds on the monotonic clock; differences time a phase. */
BENCH_FN double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64: the same seed draws the same workload on every machine, so
 * the figures in docs/performance.md are comparable from run to run. */
BENCH_FN uint64_t next_rand(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* The preset chip `preset` into *chip; false, after a line "who: message" on
 * stderr, when the library refuses it. */
BENCH_FN bool bench_chip(const char *preset, rotor_chip *chip, const char *who) {
    rotor_error err;
    if (rotor_chip_preset(preset, chip, &err) == ROTOR_OK) return true;
    fprintf(stderr, "%s: %s\n", who, err.msg);
    return false;
}

#endif
