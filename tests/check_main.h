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

/* The time limit of every test (a Check test function) in seconds of wall clock: each
 * finishes well within it under ASan on a loaded 2-core machine. Check stops a test that
 * runs past it and fails it with "Test timeout expired" and the test's name, long before
 * ctest's own limit (tests/CMakeLists.txt). CK_TIMEOUT_MULTIPLIER scales it; without
 * forking (CK_FORK=no: the GPU tests, valgrind) Check sets no limit. */
enum { CHECK_TEST_LIMIT_S = 120 };

/* A test case with the limit. */
static inline TCase *check_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, CHECK_TEST_LIMIT_S);
  return tc;
}

enum { CHECK_MAX_CASES = 64 };
static const char *check_case_names[CHECK_MAX_CASES];
static int check_case_count;

/* Adds test `t` as a test case of its own named `name`, with a fixture (may be NULL). */
static inline void check_case(Suite *s, const char *name, const TTest *t, SFun setup, SFun teardown) {
  TCase *tc = check_tcase(name);
  if (setup || teardown) tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, t);
  suite_add_tcase(s, tc);
  if (check_case_count < CHECK_MAX_CASES) check_case_names[check_case_count++] = name;
}
#define CHECK_CASE(s, test, setup, teardown) check_case((s), #test, (test), (setup), (teardown))

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
