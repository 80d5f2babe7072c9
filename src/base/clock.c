/* rotor_clock_s (base/clock.h). */
#include "rotor/base/clock.h"

#include <time.h>

double rotor_clock_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
