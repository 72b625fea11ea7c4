/* Private to the library and its tests: the settings journal's list of keys it may write. */
#ifndef COWBENCH_SYSCTL_KEYS_H
#define COWBENCH_SYSCTL_KEYS_H

/*
 * Tests only: let PATH (a plain file) stand in for a sysctl, besides the
 * known keys; NULL or "" withdraws it. Not reachable from the command line
 * or the environment.
 */
void cb_sysctl_test_key(const char *path);

#endif
