/* The end of every CPU test's main: run the suite (forking per test, Check's default, so a
 * crash fails one test, not the run) and turn failures into the exit status. */
#ifndef IC_TESTS_CHECK_MAIN_H
#define IC_TESTS_CHECK_MAIN_H

#include <check.h>

static inline int check_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

#endif
