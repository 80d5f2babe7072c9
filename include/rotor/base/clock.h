/* A monotonic wall clock in seconds: one owner for the library's phase
 * times (compile/compile.h's profile, pipeline/gtrepro.h's Table 4). */
#ifndef ROTOR_BASE_CLOCK_H
#define ROTOR_BASE_CLOCK_H

/* Seconds since an arbitrary start (CLOCK_MONOTONIC): only differences
 * mean anything. */
double rotor_clock_s(void);

#endif
