#ifndef COWBENCH_ERROR_H
#define COWBENCH_ERROR_H

/*
 * Errors: every function returns 0 (or a count) on success and a negative
 * errno-style code on failure. The codes below extend errno for failures
 * that have no errno of their own.
 */
#define CB_EBASE      10000
#define CB_ECHILD     (-(CB_EBASE + 1)) /* a child process failed (see the run status) */
#define CB_EFORMAT    (-(CB_EBASE + 2)) /* malformed input text */
#define CB_EREGISTRY  (-(CB_EBASE + 3)) /* malformed workload table entry */
#define CB_ENOMEMAVAIL (-(CB_EBASE + 4)) /* not enough MemAvailable for the run */

/** Human text for a negative code from this library (or a plain -errno). */
const char *cb_strerror(int err);

#endif
