#ifndef COWBENCH_OUTPUT_H
#define COWBENCH_OUTPUT_H

/*
 * The output layer every command writes through. A record kind (a result
 * row, a summary line, a comparison, a stat sample, a projection) is a
 * field table: each field's name (the CSV column and JSON key), its label
 * and unit for people, whether lower is better, and its priority in a
 * table that must fit a terminal. A record is one struct cb_val per field,
 * in table order; one writer per format (out_csv.c, out_json.c,
 * out_table.c, out_markdown.c) turns records into text. A new format is
 * one writer; a new column is one field table entry.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cowbench/units.h>

/* The formats of every command's --format; a new one is one writer (cb_writer_for). */
enum cb_format { CB_FORMAT_CSV = 0, CB_FORMAT_JSON, CB_FORMAT_TABLE, CB_FORMAT_MARKDOWN };
/** "csv", "json", "table" or "markdown"; -EINVAL for anything else. */
int cb_format_parse(const char *s, enum cb_format *out);

/* What a field's number is: the table's unit, and how it is compared. */
enum cb_kind {
	CB_KIND_AUTO = 0,  /* in a struct cb_val: the field's own kind */
	CB_KIND_TEXT,
	CB_KIND_COUNT,     /* an integer count: faults, reps, pages */
	CB_KIND_NUMBER,    /* a plain number without unit */
	CB_KIND_TIME_NS,   /* nanoseconds: the table scales to ns, µs, ms, s */
	CB_KIND_BYTES,     /* bytes: the table prints KiB, MiB, GiB */
	CB_KIND_KIB,       /* kibibytes (kB columns of /proc) */
	CB_KIND_RATIO,     /* a factor: "2.43x", "141x" (cb_fmt_ratio) */
	CB_KIND_PERCENT,   /* a number in percent: "+12.3 %" */
	CB_KIND_FRACTION,  /* a fraction of one, printed by the table in percent ("2.8 %") */
	CB_KIND_BOOL,      /* CSV 0/1, JSON true/false, table yes/no */
};

/* In CSV (a column), in JSON (a key), in the table and Markdown (a column for people). */
#define CB_FIELD_CSV 0x1u
#define CB_FIELD_JSON 0x2u
#define CB_FIELD_VIEW 0x4u
#define CB_FIELD_DATA (CB_FIELD_CSV | CB_FIELD_JSON)
#define CB_FIELD_ALL (CB_FIELD_DATA | CB_FIELD_VIEW)
/* Less is better (times, faults, copies): compare calls a rise worse. */
#define CB_FIELD_LOWER_BETTER 0x8u
/* JSON: a key left out (not null) where the record has no value, as such records always wrote it. */
#define CB_FIELD_OMIT_NULL 0x10u
/* Table: shown in every block even when empty there (who a row is: status). */
#define CB_FIELD_ALWAYS 0x20u
/* Table: text aligned left (names, cells); numbers are aligned right. */
#define CB_FIELD_LEFT 0x40u

struct cb_field {
	const char *name;  /* CSV column, JSON key and --columns name */
	const char *label; /* table and Markdown header: the quantity with its unit's name left to the cells */
	enum cb_kind kind;
	unsigned flags;    /* CB_FIELD_* */
	int priority;      /* table on a narrow terminal: 0 never left out, then the highest numbers first */
	int decimals;      /* CSV numbers: fixed decimals; < 0: %.10g */
	int width;         /* table: the least width of the column (0: from kind and label) */
	int pos;           /* table: its place where that differs from CSV's order (0: the field table's) */
};

enum cb_val_type {
	CB_VAL_NONE = 0, /* not measured, not defined: an empty CSV cell, null, "-" */
	CB_VAL_NUM,      /* num */
	CB_VAL_TEXT,     /* text: quoted in CSV where needed, a JSON string */
	CB_VAL_RAW,      /* text that is a number already formatted: written as it is, a JSON number */
	CB_VAL_BOOL,     /* num != 0 */
};

struct cb_val {
	enum cb_val_type type;
	enum cb_kind kind; /* the table's unit for this record (a metric's); CB_KIND_AUTO: the field's */
	double num;
	const char *text;
};

static inline struct cb_val cb_num(double v)
{
	return (struct cb_val){ .type = CB_VAL_NUM, .num = v };
}
static inline struct cb_val cb_text(const char *s)
{
	return (struct cb_val){ .type = s ? CB_VAL_TEXT : CB_VAL_NONE, .text = s };
}
static inline struct cb_val cb_bool(bool b)
{
	return (struct cb_val){ .type = CB_VAL_BOOL, .num = b };
}
static inline struct cb_val cb_none(void)
{
	return (struct cb_val){ .type = CB_VAL_NONE };
}

/** The unit of a numeric column by its name: _ns a time, _bytes bytes, _kb KiB, else a count. */
enum cb_kind cb_kind_of_metric(const char *metric);

struct cb_out;

/** One format's writer: one file each (out_*.c). Every hook returns 0 or -errno. */
struct cb_out_writer {
	const char *name;                      /* as --format spells it */
	int (*begin)(struct cb_out *o);        /* before the first record (CSV: the header) */
	int (*record)(struct cb_out *o, const struct cb_val *v);
	int (*header)(struct cb_out *o, const struct cb_val *v); /* optional: a streamed header now, laid out for v */
	int (*block_end)(struct cb_out *o);    /* a table block ends: the next record starts a new header */
	int (*finish)(struct cb_out *o);       /* after the last record */
};

extern const struct cb_out_writer cb_writer_csv, cb_writer_json, cb_writer_table, cb_writer_markdown;

/** The writer of a format. */
const struct cb_out_writer *cb_writer_for(enum cb_format f);

#define CB_OUT_MAX_FIELDS 160

struct cb_out {
	FILE *fp;
	enum cb_format format;
	const struct cb_out_writer *w;
	const struct cb_field *f;
	size_t nf;
	enum cb_units_style units;
	int width;        /* columns the table must fit; 0: any (a file or a pipe) */
	bool stream;      /* table: each record printed as it comes, the block's layout from its first */
	bool began;
	size_t records;
	/* --columns: the table's columns in this order, by field index; nchosen 0: all, by priority */
	unsigned char chosen[CB_OUT_MAX_FIELDS];
	size_t nchosen;
	void *state;      /* the writer's own (out_table.c: the block of rows) */
	bool printed;     /* a block was printed: the next one starts after an empty line */
	char dropped[512]; /* labels of the columns left out to fit, for the footer */
};

/**
 * Start output of one record kind on fp. columns: --columns (NULL: all,
 * by priority); it must have passed cb_out_columns_check. The table's width
 * is cb_terminal_width(fp). Returns 0, or -EINVAL for a field table too big.
 */
int cb_out_open(struct cb_out *o, FILE *fp, enum cb_format format, const struct cb_field *f, size_t nf,
		const char *columns);
/**
 * Write the header now, before any record (a streamed table laid out as
 * for the record v): whoever reads the output sees that watching began.
 */
int cb_out_header(struct cb_out *o, const struct cb_val *v);
/** Write one record: v[i] is field f[i]'s value. */
int cb_out_record(struct cb_out *o, const struct cb_val *v);
/** End a table block (its rows print, then the footer saying which columns did not fit). */
int cb_out_block_end(struct cb_out *o);
/** End the output; frees what the writer held. */
int cb_out_close(struct cb_out *o);

/**
 * Check a --columns list against the table's fields (those with
 * CB_FIELD_VIEW). Returns 0, or -EINVAL with why in err ("unknown column
 * 'x'; the table's columns: a, b, ...").
 */
int cb_out_columns_check(const struct cb_field *f, size_t nf, const char *list, char *err, size_t errlen);

/** Write s as a JSON string: quotes, backslashes and control characters escaped. */
void cb_json_string(FILE *fp, const char *s);
/** Write one CSV field with RFC 4180 quoting (quotes only when needed). */
int cb_csv_write_field(FILE *fp, const char *field);

/*
 * The one writer of every CSV and JSON Lines cowbench prints (rows,
 * summarize, compare): a record ends in LF, and a number that is not finite
 * (NaN: not measured; inf: no measurement either) is an empty CSV field and
 * a JSON null, so readers of one command's output read them all.
 */
#define CB_RECORD_END "\n"
/** End one CSV record or JSON Lines object. */
int cb_record_end(FILE *fp);
/** One CSV number: decimals < 0: %.10g, else that many fixed decimals; nothing when not finite. */
int cb_csv_number(FILE *fp, double v, int decimals);
/** A JSON member after another, ,"name":NUMBER (%.10g), null when not finite. */
int cb_json_number(FILE *fp, const char *name, double v);

/**
 * Columns of the terminal fp writes to: $COLUMNS when it is a number from
 * 20 up, else the terminal's size (TIOCGWINSZ); 0 when fp is no terminal
 * (a file or a pipe: no width to fit).
 */
int cb_terminal_width(FILE *fp);
/** Columns text takes on screen (UTF-8: one per character). */
int cb_text_width(const char *s);

/**
 * Print text (one paragraph, no newline inside but where it ends) wrapped at
 * spaces to width columns (0: not wrapped); continuation lines start with
 * indent spaces. Ends with a newline.
 */
void cb_print_wrapped(FILE *fp, int width, int indent, const char *text);
/** The same, the first line starting at column col of a line already begun. */
void cb_print_wrapped_at(FILE *fp, int width, int col, int indent, const char *text);

/**
 * Text as Markdown that renders as that text and nothing else (report.md, the
 * markdown writer): each of \ ` * _ [ ] < > # | & ~ gets a backslash, so no
 * tag, entity, link, code span, emphasis or table cell comes from data, and a
 * control character (a newline ends a table row) becomes a space. Into buf,
 * cut at a whole character escape where it is too short; returns buf.
 */
char *cb_md_escape(char *buf, size_t len, const char *s);
/** The same written to fp. */
void cb_md_fputs(FILE *fp, const char *s);

/** One cell for people: v in kind's unit ("12.4 ms", "64 MiB", "2.43x", "2.8 %"); "-" when none. */
const char *cb_fmt_value(char *buf, size_t len, const struct cb_val *v, enum cb_kind kind, enum cb_units_style st);
/**
 * A ratio with three significant digits, no exponent below a million, no
 * trailing zeros of an integer ratio: "0.344x", "2.43x", "141x", "4097x".
 * "-" for NaN.
 */
const char *cb_fmt_ratio(char *buf, size_t len, double r);
/* A ratio with its interval has one spelling, cb_ratio_text (cowbench/estimate.h), built on this. */

#endif
