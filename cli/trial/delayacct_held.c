/*
 * Who holds kernel.task_delayacct off: a running cowbench that switched it on
 * for evidence reps keeps the journal entry at 0 (its timed reps run without
 * delay accounting) until it exits, and no other run may switch it on
 * meanwhile (sysctl.h). Users are told that, with the holder's PID and what
 * it costs, instead of advice that cannot help.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/sysctl.h>
#include <cowbench/taskstats.h>

#include "trial/delayacct.h"

long cli_delayacct_holder(void)
{
	struct cb_sysctl_held h[16];
	int n = cb_sysctl_overrides(h, sizeof(h) / sizeof(h[0]));
	long v;

	if (cb_sysctl_read_long(CB_DELAYACCT_SYSCTL, &v) < 0 || v != 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(h[i].path, CB_DELAYACCT_SYSCTL) == 0 && h[i].live > 0 && h[i].value == 0 &&
		    h[i].pid != (long)getpid())
			return h[i].pid;
	return 0;
}

const char *cli_delayacct_off_why(char *buf, size_t len)
{
	long holder = cli_delayacct_holder();

	if (holder)
		snprintf(buf, len, "kernel.task_delayacct is held off by another cowbench (PID %ld) until it ends: "
			 "its timed reps run without delay accounting and it cannot be switched on meanwhile", holder);
	else if (geteuid() != 0)
		snprintf(buf, len, "kernel.task_delayacct=0; run as root to switch it on");
	else
		snprintf(buf, len, "kernel.task_delayacct=0 and it could not be switched on");
	return buf;
}
