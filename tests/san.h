/* san.h — ROTOR_TEST_SAN is 1 in a build under AddressSanitizer (make SAN=1,
 * gcc or clang), 0 otherwise.
 *
 * A few of the heaviest unit tests take a smaller input under the sanitizers
 * (docs/build.md, "What CI runs", lists them): the sanitizer run looks for
 * memory errors, and the smaller input runs the same code; the full input
 * runs in the plain build, which checks every number.  gcc defines
 * __SANITIZE_ADDRESS__; clang 14 answers __has_feature(address_sanitizer)
 * only. */
#ifndef ROTOR_TESTS_SAN_H
#define ROTOR_TESTS_SAN_H

#if defined(__SANITIZE_ADDRESS__)
#define ROTOR_TEST_SAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ROTOR_TEST_SAN 1
#endif
#endif
#ifndef ROTOR_TEST_SAN
#define ROTOR_TEST_SAN 0
#endif

#endif
