#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <cowbench/error.h>

const char *cb_strerror(int err)
{
	switch (err) {
#define CB_ERRNO_TEXT(name, off, msg) \
	case CB_##name:               \
		return msg;
		CB_ERRNO_MAP(CB_ERRNO_TEXT)
#undef CB_ERRNO_TEXT
	default:
		return strerror(err < 0 ? -err : err);
	}
}

static const struct {
	const char *prefix;
	enum cb_status_kind kind;
} status_prefixes[] = {
	{ "unsupported:", CB_STATUS_UNSUPPORTED },   { "no-resource:", CB_STATUS_NO_RESOURCE },
	{ "child-killed:", CB_STATUS_CHILD_KILLED }, { "child-exit:", CB_STATUS_CHILD_EXIT },
};

enum cb_status_kind cb_status_kind(const char *status)
{
	if (status && strcmp(status, "ok") == 0)
		return CB_STATUS_OK;
	for (size_t i = 0; status && i < sizeof(status_prefixes) / sizeof(status_prefixes[0]); i++)
		if (strncmp(status, status_prefixes[i].prefix, strlen(status_prefixes[i].prefix)) == 0)
			return status_prefixes[i].kind;
	return CB_STATUS_ERROR;
}

int cb_status_exit_code(const char *status)
{
	switch (cb_status_kind(status)) {
	case CB_STATUS_OK:
		return CB_EXIT_OK;
	case CB_STATUS_UNSUPPORTED:
		return CB_EXIT_UNSUPPORTED;
	case CB_STATUS_NO_RESOURCE:
		return CB_EXIT_NO_RESOURCE;
	default:
		return CB_EXIT_FAILED;
	}
}

/* A failed repetition outweighs a missing resource, which outweighs an unsupported one. */
static int exit_rank(int code)
{
	switch (code) {
	case CB_EXIT_OK:
		return 0;
	case CB_EXIT_UNSUPPORTED:
		return 1;
	case CB_EXIT_NO_RESOURCE:
		return 2;
	default:
		return 3;
	}
}

int cb_exit_code_worst(int a, int b)
{
	return exit_rank(a) >= exit_rank(b) ? a : b;
}

int cb_wait_status(pid_t pid, int *wstatus)
{
	while (waitpid(pid, wstatus, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int cb_status_from_wait(int ws, char *status, size_t len)
{
	if (WIFSIGNALED(ws)) {
		const char *name = sigabbrev_np(WTERMSIG(ws));

		if (name)
			snprintf(status, len, "child-killed:SIG%s", name);
		else
			snprintf(status, len, "child-killed:SIG%d", WTERMSIG(ws));
		return CB_ECHILD;
	}
	if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
		snprintf(status, len, "child-exit:%d", WEXITSTATUS(ws));
		return CB_ECHILD;
	}
	snprintf(status, len, "ok");
	return 0;
}
