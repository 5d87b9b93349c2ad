/* The end of every CPU test's main: run the suite (forking per test, Check's default, so a
 * crash fails one test, not the run) and turn failures into the exit status.
 *
 * Slow executables give each test a test case of its own (CHECK_CASE), named after the
 * test, so ctest runs them as separate tests in parallel (CK_RUN_CASE=<name>, see
 * ic_add_split_test in tests/CMakeLists.txt); `<exe> --list-cases` prints the names, and
 * a ctest check compares them with the list CMake registers, so no case is left out. */
#ifndef IC_TESTS_CHECK_MAIN_H
#define IC_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdio.h>
#include <string.h>

enum { CHECK_MAX_CASES = 64 };
static const char *check_case_names[CHECK_MAX_CASES];
static int check_case_count;

/* Adds test `t` as a test case of its own named `name`, with a fixture (may be NULL). */
static inline void check_case(Suite *s, const char *name, const TTest *t, double timeout, SFun setup,
                              SFun teardown) {
  TCase *tc = tcase_create(name);
  if (setup || teardown) tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, timeout);
  tcase_add_test(tc, t);
  suite_add_tcase(s, tc);
  if (check_case_count < CHECK_MAX_CASES) check_case_names[check_case_count++] = name;
}
#define CHECK_CASE(s, test, timeout, setup, teardown) check_case((s), #test, (test), (timeout), (setup), (teardown))

/* True (after printing the case names and freeing the suite) when the program was asked
 * for --list-cases. */
static inline int check_list_cases(int argc, char **argv, Suite *s) {
  if (argc < 2 || strcmp(argv[1], "--list-cases") != 0) return 0;
  for (int i = 0; i < check_case_count; i++) printf("%s\n", check_case_names[i]);
  srunner_free(srunner_create(s)); /* the runner owns the suite: LeakSanitizer stays quiet */
  return 1;
}

static inline int check_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

#endif
