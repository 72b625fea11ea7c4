/* Numbers for people (cowbench/units.h): scaled times and binary sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/units.h>

static bool names_utf8(const char *v)
{
	return v && (strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") || strstr(v, "utf8"));
}

enum cb_units_style cb_units_style_for(FILE *fp)
{
	const char *vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };

	if (!fp || !isatty(fileno(fp)))
		return CB_UNITS_ASCII;
	/* The first variable that is set decides, as in setlocale(). */
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return names_utf8(v) ? CB_UNITS_UTF8 : CB_UNITS_ASCII;
	}
	return CB_UNITS_ASCII;
}

/* Three significant digits: 1.23, 12.3, 123. */
static int decimals_for(double v)
{
	v = fabs(v);
	return v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
}

const char *cb_fmt_ns(char *buf, size_t len, double ns, enum cb_units_style style)
{
	static const struct {
		double scale;
		const char *ascii, *utf8;
	} units[] = { { 1e9, "s", "s" }, { 1e6, "ms", "ms" }, { 1e3, "us", "\xc2\xb5s" } };

	if (isnan(ns)) {
		snprintf(buf, len, "-");
		return buf;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double v = ns / units[i].scale;

		/* 999.96 us rounds to "1000 us": step up to "1.00 ms" instead. */
		if (fabs(ns) >= units[i].scale * 0.99995) {
			snprintf(buf, len, "%.*f %s", decimals_for(v), v,
				 style == CB_UNITS_UTF8 ? units[i].utf8 : units[i].ascii);
			return buf;
		}
	}
	snprintf(buf, len, "%.*f ns", fabs(ns) >= 9.995 || ns == 0 ? 0 : 1, ns);
	return buf;
}

const char *cb_fmt_bytes(char *buf, size_t len, double bytes)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = bytes;
	size_t u = 0;

	if (isnan(bytes)) {
		snprintf(buf, len, "-");
		return buf;
	}
	while (fabs(v) >= 1024 && u + 1 < sizeof(names) / sizeof(names[0])) {
		v /= 1024;
		u++;
	}
	if (v == floor(v))
		snprintf(buf, len, "%.0f %s", v, names[u]);
	else
		snprintf(buf, len, "%.*f %s", decimals_for(v), v, names[u]);
	return buf;
}

const char *cb_fmt_metric(char *buf, size_t len, double v, const char *metric, enum cb_units_style style)
{
	size_t n = strlen(metric);

	if (isnan(v))
		snprintf(buf, len, "-");
	else if (n > 3 && strcmp(metric + n - 3, "_ns") == 0)
		cb_fmt_ns(buf, len, v, style);
	else if (n > 6 && strcmp(metric + n - 6, "_bytes") == 0)
		cb_fmt_bytes(buf, len, v);
	else if (n > 3 && strcmp(metric + n - 3, "_kb") == 0)
		cb_fmt_bytes(buf, len, v * 1024);
	else if (fabs(v) >= 1e4)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
	return buf;
}

const char *cb_fmt_percent(char *buf, size_t len, double fraction)
{
	if (isnan(fraction))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f %%", fabs(fraction) < 0.1 ? 1 : 0, fraction * 100);
	return buf;
}

int cb_pad_width(const char *s, int width)
{
	int extra = 0;

	for (; *s; s++)
		extra += ((unsigned char)*s & 0xc0) == 0x80; /* continuation bytes take no column */
	return width < 0 ? width - extra : width + extra;
}
