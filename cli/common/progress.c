/*
 * One transient progress line on stderr, for people at a terminal: shown
 * before a long step, cleared before anything else is printed, so rows and
 * progress never run into each other. Silent when stderr is not a terminal.
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/diag.h"

static bool shown;

bool cli_progress_enabled(void)
{
	return isatty(STDERR_FILENO) == 1;
}

/* Terminal width, so a long label is cut at the screen's edge and never wraps (a wrapped line cannot be cleared). */
static int columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

void cli_progress(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int width = columns() - 1;

	if (!cli_progress_enabled())
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "\r\033[K%.*s", width, line);
	fflush(stderr);
	shown = true;
}

void cli_progress_clear(void)
{
	if (!shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	shown = false;
}

void cli_fmt_duration(char *buf, size_t len, double s)
{
	long t = (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}
