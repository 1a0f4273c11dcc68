// A small checking harness for the host-backend tests: CHECK records a
// failure with file:line (printing the first 20) and keeps going;
// check_summary prints the counts and returns the exit status.
#ifndef COCONET_HOST_TEST_CHECK_H
#define COCONET_HOST_TEST_CHECK_H

#include <stdio.h>

static int check_count, check_failures;

#define CHECK(cond)                                                             \
  do {                                                                          \
    check_count++;                                                              \
    if (!(cond)) {                                                              \
      if (++check_failures <= 20)                                               \
        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                           \
  } while (0)

// CHECK with a printf-style explanation of the failure.
#define CHECK_MSG(cond, ...)                                                         \
  do {                                                                               \
    check_count++;                                                                   \
    if (!(cond)) {                                                                   \
      if (++check_failures <= 20) {                                                  \
        fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
      }                                                                              \
    }                                                                                \
  } while (0)

static inline int check_summary(const char *name) {
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures != 0;
}

#endif
