/*
 * Delay accounting for measuring commands (delayacct_switch.c, delayacct_held.c); the
 * repetition loop's evidence reps switch it themselves (cowbench/reploop.h).
 */
#ifndef COWBENCH_CLI_DELAYACCT_H
#define COWBENCH_CLI_DELAYACCT_H

#include <stdbool.h>
#include <stddef.h>

/* As root, turn kernel.task_delayacct on for the run (restored at exit): 1 when it was off (delayacct_switch.c). */
int cli_evidence_prepare(void);
/*
 * delayacct_held.c: the PID of a running cowbench that holds kernel.task_delayacct off (0: none),
 * and one phrase saying why delay accounting is off here (buf of 256).
 */
long cli_delayacct_holder(void);
const char *cli_delayacct_off_why(char *buf, size_t len);

#endif
