/* A cell's evidence reps and the delay accounting they need (evidence_loop.c, delayacct_held.c). */
#ifndef COWBENCH_CLI_EVIDENCE_LOOP_H
#define COWBENCH_CLI_EVIDENCE_LOOP_H

#include <stdbool.h>
#include <stddef.h>

struct cb_row;
struct cb_run_spec;

/* As root, turn kernel.task_delayacct on for the run (restored at exit): 1 when it was off (evidence_loop.c). */
int cli_evidence_prepare(void);
/*
 * A cell's evidence reps (evidence_loop.c), after its timed reps, when its probes
 * call for them (cb_run_wants_evidence): delay accounting on for them as
 * root when it was off, and off again after, reps 1..n less those done[] marks (NULL: none);
 * emit() records each row (< 0: stop). The worst row's exit code, or -1.
 */
#define CLI_EVIDENCE_REPS 1
/*
 * As root, kernel.task_delayacct on for reps that run taskstats while it is
 * off (evidence reps, --probes=inline), restored at exit and on signals:
 * true when switched. cli_delayacct_back(true) puts it back to off, so the
 * next timed reps see the system as it was.
 */
bool cli_delayacct_on(const struct cb_run_spec *spec);
void cli_delayacct_back(bool switched);
typedef int (*cli_emit_fn)(void *arg, struct cb_row *row);
int cli_run_evidence_reps(const struct cb_run_spec *spec, const bool *done, int n, cli_emit_fn emit, void *arg);
/*
 * delayacct_held.c: the PID of a running cowbench that holds kernel.task_delayacct off (0: none),
 * and one phrase saying why delay accounting is off here (buf of 256).
 */
long cli_delayacct_holder(void);
const char *cli_delayacct_off_why(char *buf, size_t len);

#endif
