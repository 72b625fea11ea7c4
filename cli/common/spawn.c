/*
 * stat and record start COMMAND held before exec, so that their baseline
 * comes first and nothing the command does escapes them; never left
 * running unwatched: if cowbench dies, the command is told to stop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/wpfault.h>

#include "common/spawn.h"

pid_t cli_spawn_held(char **argv, int *go_fd, int *err_fd)
{
	int go[2], ef[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0 || (err_fd && pipe2(ef, O_CLOEXEC) < 0))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		if (err_fd)
			close(ef[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (!err_fd)
			fprintf(stderr, "cowbench: cannot run %s: %s\n", argv[0], strerror(e));
		else if (write(ef[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	*go_fd = go[1];
	if (err_fd) {
		close(ef[1]);
		*err_fd = ef[0];
	}
	return pid;
}

int cli_release_held(pid_t pid, int go_fd, int err_fd)
{
	int e = 0;
	ssize_t n;

	n = write(go_fd, "g", 1);
	close(go_fd);
	if (n != 1)
		e = EIO;
	else if (read(err_fd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = 0; /* EOF: exec closed the pipe, the command runs */
	close(err_fd);
	if (e)
		cb_wait_status(pid, &(int){ 0 });
	return e;
}

int cli_wait_watched(int pidfd, struct cb_wpfault *wp, double seconds, bool *rung)
{
	bool ready;

	return cli_wait_watched_fd(pidfd, wp, -1, seconds, rung, &ready);
}

int cli_wait_watched_fd(int pidfd, struct cb_wpfault *wp, int extra_fd, double seconds, bool *rung, bool *ready)
{
	struct pollfd pfd[2 + CLI_MAX_BELLS];
	int bells[CLI_MAX_BELLS], n = 0, nb = wp ? cb_wpfault_task_fds(wp, bells, CLI_MAX_BELLS) : 0, r, xi = -1;

	*rung = *ready = false;
	if (pidfd >= 0)
		pfd[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	if (extra_fd >= 0) {
		xi = n;
		pfd[n++] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
	}
	for (int i = 0; i < nb; i++)
		pfd[n++] = (struct pollfd){ .fd = bells[i], .events = POLLIN };
	if (n == 0) {
		struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };

		nanosleep(&ts, NULL);
		return 0;
	}
	r = poll(pfd, (nfds_t)n, (int)(seconds * 1000) + 1);
	if (r <= 0)
		return 0;
	if (pidfd >= 0 && pfd[0].revents)
		return 1;
	if (xi >= 0 && pfd[xi].revents) {
		*ready = true;
		if (r == 1)
			return 0;
	}
	*rung = true;
	return 0;
}
