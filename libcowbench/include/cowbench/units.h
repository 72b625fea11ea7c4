#ifndef COWBENCH_UNITS_H
#define COWBENCH_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Numbers for people: one formatter for every table, summary and report.
 * Times scale through ns, µs, ms and s with three significant digits;
 * sizes are binary (KiB, MiB, GiB, TiB), like --size reads them. CSV and
 * JSON never go through here: they stay raw numbers.
 */

enum cb_units_style {
	CB_UNITS_ASCII = 0, /* "us": safe in any terminal, pipe or log */
	CB_UNITS_UTF8,      /* "µs" */
};

/** UTF-8 when the locale variables (LC_ALL, LC_CTYPE, LANG) name UTF-8 and fp is a terminal. */
enum cb_units_style cb_units_style_for(FILE *fp);

/** "57 ns", "2.90 µs", "12.4 ms", "3.30 s"; "-" for NaN. Returns buf. */
const char *cb_fmt_ns(char *buf, size_t len, double ns, enum cb_units_style style);

/** "512 B", "4 KiB", "64 MiB", "1.5 GiB": exact sizes print without decimals. Returns buf. */
const char *cb_fmt_bytes(char *buf, size_t len, double bytes);

/**
 * A number for people in its metric's unit, the table writer's cell of
 * summarize and compare: _ns scaled times, _bytes and _kb binary sizes,
 * else plain (counts and ratios); "-" for NaN. Returns buf.
 */
const char *cb_fmt_metric(char *buf, size_t len, double v, const char *metric, enum cb_units_style style);

/** A share of a whole in percent, "41 %"; "-" for NaN. Returns buf. */
const char *cb_fmt_percent(char *buf, size_t len, double fraction);

/** printf field width that pads s to width columns on screen (UTF-8: µ is two bytes, one column). */
int cb_pad_width(const char *s, int width);

#endif
