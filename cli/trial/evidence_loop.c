/*
 * Evidence reps for cowbench run and matrix: after a cell's timed reps,
 * which ran with the system as the user has it, the probes that add work
 * inside the fault path run in reps of their own.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/evidence.h>
#include <cowbench/sysctl.h>

#include "common/guard.h"
#include "trial/evidence_loop.h"

bool cli_delayacct_on(const struct cb_run_spec *spec)
{
	unsigned p = spec->probes ? spec->probes : CB_PROBES_DEFAULT;

	if (!(cb_probes_intrusive(p) & (1u << CB_PROBE_TASKSTATS)) || geteuid() != 0)
		return false; /* not asked for, already on, or not ours to change: the row's notes say why */
	cli_restore_sysctls_at_exit(); /* also on SIGINT/SIGTERM/SIGHUP in the middle of the reps */
	return cb_delayacct_enable() == 0 && cb_delayacct_enabled() == 1;
}

void cli_delayacct_back(bool switched)
{
	if (switched)
		(void)cb_sysctl_override(CB_DELAYACCT_SYSCTL, 0);
}

int cli_run_evidence_reps(const struct cb_run_spec *spec, const bool *done, int n, cli_emit_fn emit, void *arg)
{
	struct cb_run_spec ev = *spec;
	bool switched;
	int worst = CB_EXIT_OK;

	if (!cb_run_wants_evidence(spec))
		return worst;
	ev.inject_child_signal = 0; /* COWBENCH_INJECT names timed reps */
	switched = cli_delayacct_on(spec);
	for (int i = 1; i <= n; i++) {
		struct cb_row row;

		if (done && done[i - 1])
			continue;
		cb_run_evidence_rep(&ev, i, &row);
		worst = cb_exit_code_worst(worst, cb_status_exit_code(row.status));
		if (emit(arg, &row) < 0) {
			worst = -1;
			break;
		}
	}
	cli_delayacct_back(switched);
	return worst;
}

int cli_evidence_prepare(void)
{
	int on = cb_delayacct_enabled();

	if (on != 0 || geteuid() != 0)
		return 0; /* already on, absent, or not ours to change: the probe says why */
	cli_restore_sysctls_at_exit();
	return cb_delayacct_enable() == 0 ? 1 : 0;
}
