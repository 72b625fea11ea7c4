/*
 * hold-delayacct SECONDS [on]: behave as a cowbench run between its evidence
 * reps (root): switch kernel.task_delayacct on and back off through the
 * settings journal, so the journal names this process as the holder, then
 * sleep. Any other cowbench meanwhile cannot switch delay accounting on
 * (-EBUSY). With "on": as a run inside its evidence reps, holding it on.
 * Prints "held" once holding; exits 77 when it cannot hold (not root, or
 * another run holds it already).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/sysctl.h>
#include <cowbench/taskstats.h>

/*
 * The tests stop it with SIGTERM: it lets go as a cowbench run does. Killed
 * without this, it left a stale journal entry, and the next measuring
 * cowbench (another suite's check_badinput case) printed "restored
 * kernel.task_delayacct ..." as a second stderr line.
 */
static void on_term(int sig)
{
	(void)sig;
	cb_sysctl_restore_all(); /* async-signal-safe */
	_exit(0);
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 30;
	bool on = argc > 2 && strcmp(argv[2], "on") == 0;

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);

	if (cb_sysctl_override(CB_DELAYACCT_SYSCTL, 1) < 0 || (!on && cb_sysctl_override(CB_DELAYACCT_SYSCTL, 0) < 0)) {
		fprintf(stderr, "hold-delayacct: cannot hold kernel.task_delayacct\n");
		return 77;
	}
	printf("held\n");
	fflush(stdout);
	sleep((unsigned)(secs > 0 ? secs : 30));
	cb_sysctl_restore_all();
	return 0;
}
