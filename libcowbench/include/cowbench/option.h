#ifndef COWBENCH_OPTION_H
#define COWBENCH_OPTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Workload options are data (fio's model): each workload declares a table
 * of cb_option entries describing the fields of its own options struct,
 * and the library parses NAME=VALUE text into that struct, fills the
 * defaults, checks ranges and prints help and canonical values. Neither
 * the CLI nor the runner names a workload's option.
 *
 *	struct stride_opts { unsigned stride; };
 *	static const struct cb_option stride_options[] = {
 *		{ .name = "stride", .type = CB_OPT_UINT, .offset = offsetof(struct stride_opts, stride),
 *		  .min = 1, .max = 1u << 20, .def = 2, .help = "write every K-th page" },
 *		{ 0 },
 *	};
 */

enum cb_opt_type {
	CB_OPT_UINT = 1, /* integer in [min, max]; field: unsigned */
	CB_OPT_SIZE,     /* bytes or K/M/G/T in [min, max]; field: uint64_t */
	CB_OPT_PERCENT,  /* 0..100 within [min, max], "30" or "30%"; field: unsigned */
	CB_OPT_ENUM,     /* one of names[]; field: unsigned, the index */
	CB_OPT_FLAG,     /* no value on the command line, 0/1 in a matrix; field: bool */
	CB_OPT_PATH,     /* a file name of [A-Za-z0-9/._+-], 1..CB_OPT_PATH_MAX-1 bytes; field: char[CB_OPT_PATH_MAX] */
};

#define CB_OPT_PATH_MAX 96

struct cb_option {
	const char *name;         /* [a-z0-9-]+, the --NAME of cowbench run and a matrix axis */
	enum cb_opt_type type;
	size_t offset;            /* offsetof(the workload's options struct, its field) */
	uint64_t min, max;        /* UINT, SIZE, PERCENT: inclusive range */
	const char *const *names; /* ENUM: value names, NULL-terminated; the field holds the index */
	uint64_t def;             /* the default (ENUM: an index; FLAG: 0 or 1) */
	const char *help;         /* one line, no trailing period */
};

/* Room every workload's options struct must fit in (checked by the registry). */
#define CB_WL_OPTS_MAX 128

/** Options of one workload, kept in a cb_run_spec (by value: specs are copied freely). */
struct cb_wl_opts {
	_Alignas(8) unsigned char bytes[CB_WL_OPTS_MAX];
};

struct cb_workload;

/** Number of entries in a workload's option table (0 when it has none). */
size_t cb_option_count(const struct cb_workload *w);
/** The workload's option named name, or NULL. */
const struct cb_option *cb_option_find(const struct cb_workload *w, const char *name);
/** Fill opts with the workload's defaults (zero everywhere else). */
void cb_options_default(const struct cb_workload *w, struct cb_wl_opts *opts);
/**
 * Parse text (NULL for a flag given alone) into opts. 0, or -EINVAL with a
 * one-line reason in why[] ("--stride must be an integer from 1 to 1048576, not 'x'").
 */
int cb_option_parse(const struct cb_option *o, const char *text, struct cb_wl_opts *opts, char *why,
		    size_t len);
/** The option's value in opts as canonical text (sizes in bytes, enum names, flags 0/1). */
void cb_option_format(const struct cb_option *o, const struct cb_wl_opts *opts, char *buf, size_t len);
/** Every option as "name=value" separated by spaces, in table order ("" without options). */
void cb_options_format(const struct cb_workload *w, const struct cb_wl_opts *opts, char *buf, size_t len);
/** The value's shape for help: "N", "SIZE", "PCT", "fork|vfork" (NULL for a flag). */
const char *cb_option_metavar(const struct cb_option *o, char *buf, size_t len);
/** Help with the range and default: "write every K-th page (1-1048576; default 2)". */
void cb_option_help(const struct cb_option *o, char *buf, size_t len);
/** Read an unsigned (UINT, PERCENT, ENUM) or a SIZE field. */
uint64_t cb_option_value(const struct cb_option *o, const struct cb_wl_opts *opts);

/** Check one table (names, types, ranges, defaults, offsets within size); 0 or -EINVAL with why[]. */
int cb_options_table_check(const struct cb_option *table, size_t size, char *why, size_t len);

#endif
