/*
 * One spelling per value: -s 4M,4096K,4194304 is one size and --burst=8,0008
 * one count, so cells, --resume and the readers of result files agree on
 * which rows are one configuration. A value is rewritten only when its
 * option's type parses it; anything else is left for the option to reject.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/matrix.h>
#include <cowbench/size.h>

#include "common/args.h"
#include "trial/axis_values.h"
#include "run_options.h"

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static void canonical_flag(const char *v, char *out, size_t len)
{
	static const char *const on[] = { "1", "on", "yes", "true" }, *const off[] = { "0", "off", "no", "false" };

	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		if (strcmp(v, on[i]) == 0) {
			snprintf(out, len, "1");
			return;
		}
		if (strcmp(v, off[i]) == 0) {
			snprintf(out, len, "0");
			return;
		}
	}
}

/* Options whose all-digit values are decimal numbers (seed=01 is seed=1, touch=010 is touch=10, pin=00 is pin=0). */
static bool numeric_metavar(const char *metavar)
{
	static const char *const numeric[] = { "N", "S", "PCT", "0|1|2", "auto|none|N", "NODES" };

	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++)
		if (strcmp(metavar, numeric[i]) == 0)
			return true;
	return false;
}

void cli_canonical_value(const char *axis, const char *value, char *out, size_t len)
{
	const struct cli_option *o = strcmp(axis, "fork") == 0 ? NULL : cli_run_option_find(axis);
	uint64_t v;

	snprintf(out, len, "%s", value);
	if (strcmp(axis, "fork") == 0 || (o && (!o->metavar || strcmp(o->metavar, "[0|1]") == 0))) {
		canonical_flag(value, out, len);
	} else if (o && strcmp(o->metavar, "SIZE") == 0) {
		if (cb_size_parse(value, &v) == 0)
			cb_size_format(v, out, len);
	} else if (o && numeric_metavar(o->metavar) && all_digits(value)) {
		errno = 0;
		v = strtoull(value, NULL, 10);
		if (errno == 0)
			snprintf(out, len, "%llu", (unsigned long long)v);
	}
}

/* The axis's values in their canonical spelling, each once (the first place it appeared). */
static int canonical_axis(struct cb_axis *a)
{
	size_t kept = 0;

	for (size_t i = 0; i < a->nvalues; i++) {
		char canon[128];
		bool seen = false;

		cli_canonical_value(a->name, a->values[i], canon, sizeof(canon));
		for (size_t k = 0; k < kept && !seen; k++)
			seen = strcmp(a->values[k], canon) == 0;
		if (seen) {
			free(a->values[i]);
			continue;
		}
		if (strcmp(canon, a->values[i]) != 0) {
			char *c = strdup(canon);

			if (!c)
				return -ENOMEM;
			free(a->values[i]);
			a->values[i] = c;
		}
		a->values[kept++] = a->values[i];
	}
	a->nvalues = kept;
	return 0;
}

int cli_canonical_axes(struct cb_matrix *m)
{
	for (size_t g = 0; g < m->ngroups; g++)
		for (size_t i = 0; i < m->groups[g].naxes; i++)
			if (canonical_axis(&m->groups[g].axes[i]) < 0)
				return -ENOMEM;
	return 0;
}

void cli_canonical_cell(char *cell, size_t len)
{
	char out[CB_CELL_KEY_LEN] = "", *save = NULL, *copy = strdup(cell);
	size_t used = 0;

	if (!copy)
		return; /* out of memory: the cell as written (a miss, never a wrong match) */
	for (char *pair = strtok_r(copy, " ", &save); pair; pair = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(pair, '='), canon[128];

		if (eq) {
			*eq = '\0';
			cli_canonical_value(pair, eq + 1, canon, sizeof(canon));
			used += (size_t)snprintf(out + used, used < sizeof(out) ? sizeof(out) - used : 0, "%s%s=%s",
						 used ? " " : "", pair, canon);
		} else {
			used += (size_t)snprintf(out + used, used < sizeof(out) ? sizeof(out) - used : 0, "%s%s",
						 used ? " " : "", pair);
		}
	}
	free(copy);
	if (used < sizeof(out) && used < len)
		memcpy(cell, out, used + 1);
}
