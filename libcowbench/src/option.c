#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/option.h>
#include <cowbench/size.h>
#include <cowbench/workload.h>

size_t cb_option_count(const struct cb_workload *w)
{
	size_t n = 0;

	while (w && w->options && w->options[n].name)
		n++;
	return n;
}

const struct cb_option *cb_option_find(const struct cb_workload *w, const char *name)
{
	for (size_t i = 0; i < cb_option_count(w); i++)
		if (strcmp(w->options[i].name, name) == 0)
			return &w->options[i];
	return NULL;
}

static void *field(const struct cb_option *o, struct cb_wl_opts *opts)
{
	return opts->bytes + o->offset;
}

static void store(const struct cb_option *o, struct cb_wl_opts *opts, uint64_t v)
{
	if (o->type == CB_OPT_PATH)
		memset(field(o, opts), 0, CB_OPT_PATH_MAX); /* a path's default is none */
	else if (o->type == CB_OPT_SIZE)
		memcpy(field(o, opts), &v, sizeof(v));
	else if (o->type == CB_OPT_FLAG)
		*(bool *)field(o, opts) = v != 0;
	else
		*(unsigned *)field(o, opts) = (unsigned)v;
}

uint64_t cb_option_value(const struct cb_option *o, const struct cb_wl_opts *opts)
{
	const unsigned char *p = opts->bytes + o->offset;
	uint64_t v;

	if (o->type == CB_OPT_SIZE) {
		memcpy(&v, p, sizeof(v));
		return v;
	}
	if (o->type == CB_OPT_PATH)
		return p[0] != '\0';
	if (o->type == CB_OPT_FLAG)
		return *(const bool *)(const void *)p;
	return *(const unsigned *)(const void *)p;
}

void cb_options_default(const struct cb_workload *w, struct cb_wl_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	for (size_t i = 0; i < cb_option_count(w); i++)
		store(&w->options[i], opts, w->options[i].def);
}

static int bad(const struct cb_option *o, const char *text, char *why, size_t len)
{
	char shape[160];

	switch (o->type) {
	case CB_OPT_UINT:
		snprintf(shape, sizeof(shape), "an integer from %" PRIu64 " to %" PRIu64, o->min, o->max);
		break;
	case CB_OPT_PERCENT:
		snprintf(shape, sizeof(shape), "a percentage from %" PRIu64 " to %" PRIu64, o->min, o->max);
		break;
	case CB_OPT_SIZE:
		snprintf(shape, sizeof(shape), "a size from %" PRIu64 " to %" PRIu64 " bytes (K, M, G, T allowed)",
			 o->min, o->max);
		break;
	case CB_OPT_ENUM:
		cb_option_metavar(o, shape, sizeof(shape));
		break;
	case CB_OPT_PATH:
		snprintf(shape, sizeof(shape), "a file name of 1-%d characters of A-Z a-z 0-9 / . _ + -",
			 CB_OPT_PATH_MAX - 1);
		break;
	default:
		snprintf(shape, sizeof(shape), "0 or 1");
	}
	snprintf(why, len, "--%s must be %s, not '%s'", o->name, shape, text ? text : "");
	return -EINVAL;
}

static int parse_uint(const char *text, bool percent, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!text || !isdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (percent && *end == '%')
		end++;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_enum(const struct cb_option *o, const char *text, uint64_t *out)
{
	for (uint64_t i = 0; text && o->names[i]; i++)
		if (strcmp(text, o->names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

/* A file name that is safe in a CSV cell, a matrix axis and the guest's command line. */
static bool valid_path(const char *s)
{
	if (!s || !*s || strlen(s) >= CB_OPT_PATH_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("/._+-", *s))
			return false;
	return true;
}

int cb_option_parse(const struct cb_option *o, const char *text, struct cb_wl_opts *opts, char *why, size_t len)
{
	uint64_t v = 1;
	int err = 0;

	if (o->type == CB_OPT_PATH) {
		if (!valid_path(text))
			return bad(o, text, why, len);
		memset(field(o, opts), 0, CB_OPT_PATH_MAX);
		memcpy(field(o, opts), text, strlen(text));
		return 0;
	}

	switch (o->type) {
	case CB_OPT_FLAG:
		if (text && strcmp(text, "1") != 0)
			err = strcmp(text, "0") == 0 ? (v = 0, 0) : -EINVAL;
		break;
	case CB_OPT_ENUM:
		err = parse_enum(o, text, &v);
		break;
	case CB_OPT_SIZE: /* cb_size_parse refuses 0; an option whose range starts at 0 takes it */
		if (text && strcmp(text, "0") == 0)
			v = 0;
		else
			err = text ? cb_size_parse(text, &v) : -EINVAL;
		break;
	default:
		err = parse_uint(text, o->type == CB_OPT_PERCENT, &v);
	}
	if (!err && o->type != CB_OPT_FLAG && o->type != CB_OPT_ENUM && (v < o->min || v > o->max))
		err = -ERANGE;
	if (err)
		return bad(o, text, why, len);
	store(o, opts, v);
	return 0;
}

void cb_option_format(const struct cb_option *o, const struct cb_wl_opts *opts, char *buf, size_t len)
{
	uint64_t v = cb_option_value(o, opts);

	if (o->type == CB_OPT_PATH)
		snprintf(buf, len, "%.*s", CB_OPT_PATH_MAX - 1, (const char *)opts->bytes + o->offset);
	else if (o->type == CB_OPT_ENUM)
		snprintf(buf, len, "%s", o->names[v]);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

void cb_options_format(const struct cb_workload *w, const struct cb_wl_opts *opts, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < cb_option_count(w) && used < len; i++) {
		char value[64];

		cb_option_format(&w->options[i], opts, value, sizeof(value));
		used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", i ? " " : "", w->options[i].name, value);
	}
}

const char *cb_option_metavar(const struct cb_option *o, char *buf, size_t len)
{
	size_t used = 0;

	switch (o->type) {
	case CB_OPT_FLAG:
		return NULL;
	case CB_OPT_SIZE:
		return "SIZE";
	case CB_OPT_PERCENT:
		return "PCT";
	case CB_OPT_PATH:
		return "FILE";
	case CB_OPT_UINT:
		return "N";
	default:
		buf[0] = '\0';
		for (size_t i = 0; o->names[i] && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "", o->names[i]);
		return buf;
	}
}

void cb_option_help(const struct cb_option *o, char *buf, size_t len)
{
	char def[32];

	if (o->type == CB_OPT_FLAG) {
		snprintf(buf, len, "%s%s", o->help, o->def ? " (default on)" : "");
		return;
	}
	if (o->type == CB_OPT_ENUM) {
		snprintf(buf, len, "%s; default %s", o->help, o->names[o->def]);
		return;
	}
	if (o->type == CB_OPT_PATH) {
		snprintf(buf, len, "%s", o->help);
		return;
	}
	if (o->type == CB_OPT_SIZE)
		cb_size_format(o->def, def, sizeof(def));
	else
		snprintf(def, sizeof(def), "%" PRIu64 "%s", o->def, o->type == CB_OPT_PERCENT ? "%" : "");
	snprintf(buf, len, "%s; %" PRIu64 "-%" PRIu64 ", default %s", o->help, o->min, o->max, def);
}

static bool valid_option_name(const char *s)
{
	if (!s || !*s || strlen(s) > 31)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-')
			return false;
	return true;
}

static size_t field_size(enum cb_opt_type t)
{
	if (t == CB_OPT_PATH)
		return CB_OPT_PATH_MAX;
	return t == CB_OPT_SIZE ? sizeof(uint64_t) : t == CB_OPT_FLAG ? sizeof(bool) : sizeof(unsigned);
}

static size_t count_names(const char *const *names)
{
	size_t n = 0;

	while (names && names[n])
		n++;
	return n;
}

static int check_option(const struct cb_option *o, size_t size, char *why, size_t len)
{
	if (!valid_option_name(o->name))
		snprintf(why, len, "option name must be 1-31 characters of [a-z0-9-]");
	else if (o->type < CB_OPT_UINT || o->type > CB_OPT_PATH)
		snprintf(why, len, "option --%s: unknown type", o->name);
	else if (o->offset + field_size(o->type) > size || (o->type != CB_OPT_PATH && o->offset % field_size(o->type)))
		snprintf(why, len, "option --%s: offset outside the options struct or misaligned", o->name);
	else if (!o->help || !*o->help || strchr(o->help, '\n'))
		snprintf(why, len, "option --%s: help must be one non-empty line", o->name);
	else if (o->type == CB_OPT_ENUM && (!o->names || !o->names[0]))
		snprintf(why, len, "option --%s: an enum needs names", o->name);
	else if (o->type == CB_OPT_ENUM && o->def >= count_names(o->names))
		snprintf(why, len, "option --%s: default is not one of its names", o->name);
	else if ((o->type == CB_OPT_UINT || o->type == CB_OPT_SIZE || o->type == CB_OPT_PERCENT) &&
		 (o->min > o->max || o->def < o->min || o->def > o->max ||
		  (o->type != CB_OPT_SIZE && o->max > UINT32_MAX) || (o->type == CB_OPT_PERCENT && o->max > 100)))
		snprintf(why, len, "option --%s: range or default out of order", o->name);
	else if (o->type == CB_OPT_FLAG && o->def > 1)
		snprintf(why, len, "option --%s: a flag's default is 0 or 1", o->name);
	else
		return 0;
	return -EINVAL;
}

int cb_options_table_check(const struct cb_option *table, size_t size, char *why, size_t len)
{
	if (size > CB_WL_OPTS_MAX) {
		snprintf(why, len, "options struct larger than CB_WL_OPTS_MAX (%d bytes)", CB_WL_OPTS_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; table && table[i].name; i++) {
		int err = check_option(&table[i], size, why, len);

		if (err)
			return err;
		for (size_t j = 0; j < i; j++)
			if (strcmp(table[i].name, table[j].name) == 0) {
				snprintf(why, len, "option --%s listed twice", table[i].name);
				return -EINVAL;
			}
	}
	return 0;
}
