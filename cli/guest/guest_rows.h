/*
 * The guest's row stream: CSV lines that a guest's cowbench writes to its
 * second serial port, read as they arrive. A serial line can carry what is
 * not a row (a kernel message, a NUL, a half-written line): each bad line is
 * skipped and counted, never allowed to swallow the rows after it.
 */
#ifndef COWBENCH_CLI_GUEST_ROWS_H
#define COWBENCH_CLI_GUEST_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include <cowbench/report.h>
#include <cowbench/results.h>

/* A line longer than this without a line end is not a row: it is skipped. */
#define GR_MAX_LINE (CB_CSV_MAX_RECORD)

/* What the caller does with one parsed row: 0 taken, 1 not wanted (ignored), < 0 stop (errno-style). */
typedef int (*gr_row_fn)(void *ctx, const struct cb_row *row);

struct gr_stream {
	gr_row_fn on_row;
	void *ctx;
	const struct cb_column *col[256];
	size_t ncols;
	bool header;         /* the header line has been read */
	bool foreign;        /* the header names a column this cowbench does not know */
	bool skipping;       /* inside an overlong line: drop bytes up to its line end */
	char unknown[64];    /* the first unknown column of a foreign header */
	size_t rows;         /* rows on_row took */
	size_t ignored;      /* rows on_row did not want */
	size_t bad;          /* lines that were not rows (bad CSV, wrong width, bad value) */
	int err;             /* on_row's error, once it stopped the stream */
};

void gr_init(struct gr_stream *s, gr_row_fn on_row, void *ctx);

/*
 * Take the whole lines of buf[0..len) (and, when final, the last one even
 * without a line end); returns how many bytes were consumed. buf is
 * modified (lines are cut in place).
 */
size_t gr_take(struct gr_stream *s, char *buf, size_t len, bool final);

#endif
