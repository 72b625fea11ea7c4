/*
 * Delay accounting for a measuring command that is not the repetition loop
 * (cowbench stat): the loop switches it itself around its evidence reps
 * (cowbench/reploop.h).
 */
#define _GNU_SOURCE
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/sysctl.h>

#include "common/guard.h"
#include "trial/delayacct.h"

int cli_evidence_prepare(void)
{
	int on = cb_delayacct_enabled();

	if (on != 0 || geteuid() != 0)
		return 0; /* already on, absent, or not ours to change: the probe says why */
	cli_restore_sysctls_at_exit();
	return cb_delayacct_enable() == 0 ? 1 : 0;
}
