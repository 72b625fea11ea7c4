#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/sysctl.h>

#include "common/diag.h"
#include "common/guard.h"

/* A sysctl path as people write it: /proc/sys/kernel/task_delayacct -> kernel.task_delayacct. */
static void sysctl_name(const char *path, char *out, size_t len)
{
	const char *p = strncmp(path, "/proc/sys/", 10) == 0 ? path + 10 : path;
	size_t i;

	for (i = 0; p[i] && i + 1 < len; i++)
		out[i] = p[i] == '/' ? '.' : p[i];
	out[i] = '\0';
}

void cli_guard_start(const char *command)
{
	static const char *const measuring[] = { "run", "matrix", "stat" };
	struct cb_sysctl_stale st[16];
	bool measures = false;
	int n;

	for (size_t i = 0; i < sizeof(measuring) / sizeof(measuring[0]); i++)
		measures = measures || strcmp(command, measuring[i]) == 0;
	if (!measures)
		return;
	/* What a run killed with SIGKILL (or by the OOM killer) left changed goes back first. */
	n = cb_sysctl_recover(st, sizeof(st) / sizeof(st[0]));
	for (int i = 0; i < n && i < (int)(sizeof(st) / sizeof(st[0])); i++) {
		char name[128];

		sysctl_name(st[i].path, name, sizeof(name));
		cli_note("restored %s to %ld (left at %ld by cowbench PID %ld, which died)", name, st[i].original,
			 st[i].value, st[i].pid);
	}
	/* Overrides this process joins or makes are released at exit and on SIGINT/SIGTERM/SIGHUP. */
	cli_restore_sysctls_at_exit();
	cb_sysctl_share();
}

void cli_overrides_info(void)
{
	struct cb_sysctl_held h[16];
	int n = cb_sysctl_overrides(h, sizeof(h) / sizeof(h[0]));

	if (n < 0) {
		printf("%-22s cannot read %s/overrides: %s\n", "overrides:", CB_SYSCTL_JOURNAL_DIR, strerror(-n));
		return;
	}
	if (n == 0)
		printf("%-22s none (no setting changed by a cowbench run)\n", "overrides:");
	for (int i = 0; i < n; i++) {
		char name[128];

		sysctl_name(h[i].path, name, sizeof(name));
		if (h[i].live)
			printf("%-22s %s=%ld (was %ld) held by %d running cowbench (PID %ld)\n", "overrides:", name,
			       h[i].value, h[i].original, h[i].live, h[i].pid);
		else
			printf("%-22s STALE: %s=%ld left by cowbench PID %ld, which died (was %ld; the next "
			       "cowbench run as root restores it)\n",
			       "overrides:", name, h[i].value, h[i].pid, h[i].original);
	}
}
