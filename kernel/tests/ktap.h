/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small KTAP/TAP 13 harness for the cowbench guest test programs, in the
 * manner of the kernel's tools/testing/selftests/kselftest.h, so that
 * run-kernel-tests.sh reads these programs and the upstream mm selftests
 * with one parser:
 *
 *   TAP version 13
 *   1..N                          (ktap_plan; else printed by ktap_finish)
 *   ok 1 desc
 *   not ok 2 desc # reason
 *   ok 3 desc # SKIP why
 *   # diagnostics
 *   # Totals: pass:P fail:F xfail:0 xpass:0 skip:S error:0
 *
 * ktap_finish() returns the exit status kselftest uses: 1 when a test
 * failed (or the plan was not met), 4 when every test was skipped, else 0.
 * Counters live in this process: children report through their exit status.
 */
#ifndef KTAP_H
#define KTAP_H

#include <stdarg.h>
#include <stdio.h>

#define KTAP_PASS 0
#define KTAP_FAIL 1
#define KTAP_SKIP 4

static struct {
	int planned, n, pass, fail, skip, started;
} ktap_cnt;

static inline void ktap_header(void)
{
	if (ktap_cnt.started)
		return;
	ktap_cnt.started = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
}

static inline void ktap_plan(int n)
{
	ktap_header();
	ktap_cnt.planned = n;
	printf("1..%d\n", n);
}

/* "# ..." diagnostics: ignored by the parser, kept in the logs. */
__attribute__((format(printf, 1, 2)))
static inline void ktap_print_msg(const char *fmt, ...)
{
	va_list ap;

	ktap_header();
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* One result line: "<ok|not ok> N desc[ # <directive>detail]"; counter is what it adds to. */
static inline void ktap_result(int *counter, const char *status, const char *desc, const char *directive,
			       const char *fmt, va_list ap)
{
	ktap_header();
	(*counter)++;
	printf("%s %d %s", status, ++ktap_cnt.n, desc);
	if (fmt) {
		printf(" # %s", directive);
		vprintf(fmt, ap);
	}
	printf("\n");
	fflush(stdout);
}

static inline void ktap_ok(const char *desc)
{
	va_list none = { 0 }; /* unread: no detail */

	ktap_result(&ktap_cnt.pass, "ok", desc, "", NULL, none);
}

/* A pass with a measured detail: "ok N desc # detail" (not a directive). */
__attribute__((format(printf, 2, 3)))
static inline void ktap_okf(const char *desc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_result(&ktap_cnt.pass, "ok", desc, "", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3)))
static inline void ktap_fail(const char *desc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_result(&ktap_cnt.fail, "not ok", desc, "", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3)))
static inline void ktap_skip(const char *desc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_result(&ktap_cnt.skip, "ok", desc, "SKIP ", fmt, ap);
	va_end(ap);
}

static inline int ktap_failures(void)
{
	return ktap_cnt.fail;
}

/* Totals, the plan if none was given up front, and the exit status. */
static inline int ktap_finish(void)
{
	ktap_header();
	if (!ktap_cnt.planned)
		printf("1..%d\n", ktap_cnt.n);
	else if (ktap_cnt.planned != ktap_cnt.n)
		printf("# Planned tests != run tests (%d != %d)\n", ktap_cnt.planned, ktap_cnt.n);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       ktap_cnt.pass, ktap_cnt.fail, ktap_cnt.skip);
	fflush(stdout);
	if (ktap_cnt.fail || (ktap_cnt.planned && ktap_cnt.planned != ktap_cnt.n))
		return KTAP_FAIL;
	if (ktap_cnt.skip && !ktap_cnt.pass)
		return KTAP_SKIP;
	return KTAP_PASS;
}

#endif
