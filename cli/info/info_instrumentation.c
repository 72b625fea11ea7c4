/* cowbench info: instrumentation on system-wide that every measurement (cowbench's or not) pays for. */
#include <stdio.h>
#include <unistd.h>

#include <cowbench/evidence.h>
#include <cowbench/instrumentation.h>

#include "info.h"

#define KEY "instrumentation:"

static void perf_line(const struct cb_instrumentation *in)
{
	printf("%-22s %ld perf event%s open in %ld other process%s (", KEY, in->perf_fds, in->perf_fds == 1 ? "" : "s",
	       in->perf_procs, in->perf_procs == 1 ? "" : "es");
	for (long i = 0; i < in->perf_procs && i < CB_INSTR_MAX_HOLDERS; i++)
		printf("%s%s %ld", i ? ", " : "", in->perf_comm[i][0] ? in->perf_comm[i] : "?", (long)in->perf_pid[i]);
	printf("%s): a counter on faults or page-fault tracepoints adds work to each one\n",
	       in->perf_procs > CB_INSTR_MAX_HOLDERS ? ", ..." : "");
}

static void tracing_line(const struct cb_instrumentation *in)
{
	printf("%-22s tracing in %s: tracer %s, %ld event%s enabled%s%s%s, %ld kprobe%s, %ld uprobe%s, tracing_on=%d: "
	       "an enabled tracepoint on the fault path runs in every fault\n",
	       KEY, in->tracefs, in->tracer, in->trace_events, in->trace_events == 1 ? "" : "s",
	       in->first_event[0] ? " (" : "", in->first_event, in->first_event[0] ? ", ...)" : "", in->kprobes,
	       in->kprobes == 1 ? "" : "s", in->uprobes, in->uprobes == 1 ? "" : "s", in->tracing_on);
}

void cli_instrumentation_info(void)
{
	struct cb_instrumentation in;

	cb_instrumentation_scan(&in, "/proc", NULL);
	if (in.delayacct == 1)
		printf("%-22s kernel.task_delayacct=1: every COW copy reads the clock twice, so every measurement "
		       "here includes it (cowbench's timed reps leave it as it is; 0 is the default)\n", KEY);
	if (in.perf_fds > 0)
		perf_line(&in);
	if (cb_instrumentation_tracing(&in))
		tracing_line(&in);
	if (!cb_instrumentation_any(&in))
		printf("%-22s none found that adds work to a fault (delay accounting off, no perf events open%s%s)\n", KEY,
		       in.tracefs[0] ? ", no tracing" : "", in.tracefs[0] ? "" : "; tracefs not readable");
	if (in.procs_unreadable > 0)
		printf("%-22s %ld processes not visible without root: perf events there are not counted\n", KEY,
		       in.procs_unreadable);
}

void cli_evidence_info(void)
{
	static const char *const labels[CB_NPROBES] = {
		[CB_PROBE_TASKSTATS] = "taskstats:", [CB_PROBE_PAGEMAP] = "pagemap:",
		[CB_PROBE_SMAPS] = "smaps_rollup:", [CB_PROBE_PERF] = "perf counters:",
	};

	for (int p = 0; p < CB_NPROBES; p++) {
		char detail[160];

		cb_probe_check((enum cb_probe)p, detail, sizeof(detail));
		printf("%-22s %s\n", labels[p], detail);
	}
}
