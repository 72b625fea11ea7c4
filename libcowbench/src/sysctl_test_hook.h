/* Private to the library and its tests: a test file standing in for a known sysctl key (those are in cowbench/sysctl.h). */
#ifndef COWBENCH_SYSCTL_TEST_HOOK_H
#define COWBENCH_SYSCTL_TEST_HOOK_H

/*
 * Tests only: let PATH (a plain file) stand in for a sysctl, besides the
 * known keys; NULL or "" withdraws it. Not reachable from the command line
 * or the environment.
 */
void cb_sysctl_test_key(const char *path);

#endif
