#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>
#include <cowbench/project.h>
#include <cowbench/results.h>
#include <cowbench/stats.h>
#include <cowbench/repstats.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "trial/inputs.h"
#include "common/commands.h"

/*
 * cowbench project STUDY.csv [--native=HOST.csv]: the native projection of
 * each cell of an emulated study (cowbench/project.h). Per cell: its exact
 * counts, the model's runtime from the unit costs of its own boot against
 * the measured one (the model's error), and, with --native, the native
 * runtime and the change against the pre-copy-off twin of the same boot,
 * with bounds. --units prints the unit costs per boot and size instead.
 */

struct project_opts {
	const char *native;
	const char *output;
	bool force, units;
	enum cb_format format;
};

#define OPTS(o) ((struct project_opts *)(o))

static bool opt_native(void *o, const char *v)
{
	if (!*v) {
		cli_error("--native needs a file name");
		return false;
	}
	OPTS(o)->native = v;
	return true;
}

static bool opt_format(void *o, const char *v)
{
	if (!cli_parse_format(v, &OPTS(o)->format))
		return false;
	if (OPTS(o)->format == CB_FORMAT_JSON || OPTS(o)->format == CB_FORMAT_MARKDOWN) {
		cli_error("--format for project is csv or table, not %s", v);
		return false;
	}
	return true;
}

static const struct cli_option project_options[] = {
	{ "native", "FILE", "unit costs of the native machine: seq rows of fork=1,0 x break=fault,populate "
	  "(cowbench matrix -w seq --fork=1,0 --break=fault,populate)", .parse = opt_native },
	{ "units", NULL, "print the unit costs per boot and size (of FILE.csv, and of --native) instead of cells",
	  CLI_SET(CLI_STORE_TRUE, struct project_opts, units) },
	{ "format", "csv|table", "output format; default csv", .parse = opt_format },
	{ "output", "FILE", "write to FILE instead of standard output (an existing FILE needs --force)",
	  CLI_SET(CLI_STORE_FILE, struct project_opts, output) },
	{ "force", NULL, "replace an existing --output FILE", CLI_SET(CLI_STORE_TRUE, struct project_opts, force) },
};

#define N_PROJECT_OPTIONS ((int)(sizeof(project_options) / sizeof(project_options[0])))

static void project_usage(void)
{
	printf("usage: cowbench project [OPTIONS] STUDY.csv\n\n"
	       "Project each cell of an emulated study to native time from its exact counts (writes,\n"
	       "COW faults, pre-copied pages) and per-page unit costs: the model is validated against\n"
	       "the study's own boot (model_error_pct), and with --native it gives the native change\n"
	       "against pre-copy off, bounded by a pure copy and the populate path per pre-copied page.\n\n");
	cli_print_options(project_options, N_PROJECT_OPTIONS);
}

/* One cell of one boot: its rows, its counts, and where its pre-copy-off twin is. */
struct cell {
	const char *key, *boot;
	char set[CB_ROW_KEY_LEN]; /* the key without its precopy pairs: one per mode set */
	const struct cb_row **rows;
	size_t n;
	struct cb_counts counts;
	bool have_counts;
	const struct cb_row *first;
};

/* The key without precopy= and precopy-depth= pairs. */
static void set_key(const char *key, char *out, size_t len)
{
	const char *p = key;
	size_t used = 0;

	out[0] = '\0';
	while (*p) {
		size_t w = strcspn(p, " ");

		if (strncmp(p, "precopy=", 8) != 0 && strncmp(p, "precopy-depth=", 14) != 0 && w && used + w + 2 < len)
			used += (size_t)snprintf(out + used, len - used, "%s%.*s", used ? " " : "", (int)w, p);
		p += w;
		p += *p == ' ';
	}
}

/* A cell that names a break axis measures unit costs (a study's [units] matrix), not a writer to project. */
static bool unit_cell(const struct cb_row *r)
{
	return strncmp(r->cell, "break=", 6) == 0 || strstr(r->cell, " break=") != NULL;
}

/* A cell worth projecting: a page-order COW writer (fork=1, break by fault); its evidence reps give counts. */
static bool projected(const struct cb_row *r)
{
	return r->fork == 1 && (!r->break_mode[0] || strcmp(r->break_mode, "fault") == 0) &&
	       strcmp(r->status, "ok") == 0 && !unit_cell(r);
}

static struct cell *find_cell(struct cell *cells, size_t n, const char *key, const char *boot)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(cells[i].key, key) == 0 && strcmp(cells[i].boot, boot) == 0)
			return &cells[i];
	return NULL;
}

/* Group the projected rows into cells (first-seen order); -1 when out of memory. */
static int group_cells(const struct cb_row *rows, size_t n, char (*keys)[CB_ROW_KEY_LEN], struct cell **out,
		       size_t *ncells)
{
	struct cell *cells = calloc(n ? n : 1, sizeof(*cells));
	size_t k = 0;

	if (!cells)
		return -1;
	*out = cells; /* the caller frees it, also after a failure */
	for (size_t i = 0; i < n; i++) {
		struct cell *c;

		if (!projected(&rows[i]))
			continue;
		cb_row_key(&rows[i], keys[i], CB_ROW_KEY_LEN);
		c = find_cell(cells, k, keys[i], rows[i].boot);
		if (!c) {
			c = &cells[k++];
			c->key = keys[i];
			c->boot = rows[i].boot;
			c->first = &rows[i];
			set_key(keys[i], c->set, sizeof(c->set));
			c->rows = calloc(n, sizeof(*c->rows));
			*ncells = k;
			if (!c->rows)
				return -1;
		}
		c->rows[c->n++] = &rows[i];
	}
	for (size_t i = 0; i < k; i++)
		cells[i].have_counts = cb_counts_from_rows(cells[i].rows, cells[i].n, &cells[i].counts) == 0;
	*ncells = k;
	return 0;
}

/* The pre-copy-off cell of c's set in c's boot (precopy 0), or NULL (stock cells have none). */
static const struct cell *off_twin(const struct cell *cells, size_t n, const struct cell *c)
{
	if (c->first->precopy == CB_NA)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (cells[i].first->precopy == 0 && cells[i].have_counts && strcmp(cells[i].boot, c->boot) == 0 &&
		    strcmp(cells[i].set, c->set) == 0)
			return &cells[i];
	return NULL;
}

/* Native units for a size: that size's rows, else every size's (the unit is per page). */
static int native_units(const struct cb_row *rows, size_t n, int64_t size, struct cb_units *u)
{
	int err = cb_units_from_rows(rows, n, NULL, size, u);

	for (size_t i = 0; err == -ENOENT && i < n; i++)
		err = cb_units_from_rows(rows, n, NULL, rows[i].size_bytes, u);
	return err;
}

static void put_num(FILE *fp, double v, int dec)
{
	if (isnan(v) || isinf(v))
		fputs(",", fp);
	else
		fprintf(fp, ",%.*f", dec, v);
}

static void put_str(FILE *fp, const char *s, bool first)
{
	if (!first)
		fputc(',', fp);
	cb_csv_write_field(fp, s);
}


struct projection {
	double predicted, error, change, nat_ns, ch_lo, ch_mid, ch_hi;
	double first; /* the boot's fixed term, its first write (NAN: per-page model only) */
	double error_median; /* against the engine's centre of the timed reps (cb_estimate) */
	double med_lo, med_hi, err_lo, err_hi; /* that centre's interval, and the error against its ends */
	struct cb_range batch;
	double pages_max, path_p999, path_max, stall, stall_hi; /* the worst single fault */
};

/*
 * The worst fault of a cell from its rows' per-fault histograms: pages (the
 * top of the largest bucket used, N..2N-1) and path time (p99.9 and max, as
 * bucket tops). Without pre-copy a fault copies its own page alone.
 */
static void worst_fault(const struct cell *c, struct projection *p)
{
	const char **pages = calloc(c->n ? c->n : 1, sizeof(*pages)), **path = calloc(c->n ? c->n : 1, sizeof(*path));
	double top;

	p->pages_max = p->path_p999 = p->path_max = NAN;
	if (pages && path) {
		for (size_t i = 0; i < c->n; i++) {
			pages[i] = c->rows[i]->fault_pages_hist;
			path[i] = c->rows[i]->fault_path_hist;
		}
		top = cb_hist_text_quantile(pages, c->n, 1);
		p->pages_max = top >= 1 ? 2 * top - 1 : top;
		p->path_p999 = cb_hist_text_quantile(path, c->n, 0.999);
		p->path_max = cb_hist_text_quantile(path, c->n, 1);
	}
	if (isnan(p->pages_max) && (c->first->precopy == CB_NA || c->first->precopy == 0))
		p->pages_max = 1;
	free(pages);
	free(path);
}

static void project_cell(const struct cb_row *rows, size_t n, const struct cb_row *nat, size_t nnat,
			 const struct cell *c, const struct cell *off, struct projection *p)
{
	struct cb_units g, u;
	struct cb_range ns, ch;
	double like;
	unsigned nlike;

	*p = (struct projection){ NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
				  { NAN, NAN, NAN }, NAN, NAN, NAN, NAN, NAN };
	worst_fault(c, p);
	if (!c->have_counts || cb_units_from_rows(rows, n, c->boot, c->first->size_bytes, &g) != 0)
		return;
	/* The fixed term from rows set up as this cell's reps are (the same probes), where the boot has them. */
	if (cb_units_first_like(rows, n, c->boot, c->first->size_bytes, c->first->cell, &like, &nlike) == 0) {
		g.first_ns = like;
		g.n_first = nlike;
	}
	p->first = g.first_ns > 0 ? g.first_ns : NAN;
	p->predicted = cb_project_ns(&g, &c->counts, c->counts.precopied > 0 ? g.batch_ns : 0);
	p->error = cb_project_error(&g, &c->counts);
	p->error_median = cb_project_error_vs(&g, &c->counts, c->counts.elapsed_centre_ns);
	p->med_lo = c->counts.elapsed_lo_ns;
	p->med_hi = c->counts.elapsed_hi_ns;
	/* A slower measurement makes the model look faster: the error's low end is against the interval's top. */
	p->err_lo = cb_project_error_vs(&g, &c->counts, p->med_hi);
	p->err_hi = cb_project_error_vs(&g, &c->counts, p->med_lo);
	if (off)
		p->change = c->counts.elapsed_ns / off->counts.elapsed_ns - 1;
	if (!nat || native_units(nat, nnat, c->first->size_bytes, &u) != 0 || cb_project_batch(&u, &g, &p->batch))
		return;
	if (cb_project_native(&u, &g, &c->counts, &ns) == 0)
		p->nat_ns = ns.mid;
	if (off && cb_project_change(&u, &g, &c->counts, &off->counts, &ch) == 0) {
		p->ch_lo = ch.lo, p->ch_mid = ch.mid, p->ch_hi = ch.hi;
	}
	p->stall = cb_project_stall_ns(&u, p->batch.mid, p->pages_max);
	p->stall_hi = cb_project_stall_ns(&u, p->batch.hi, p->pages_max);
}

/*
 * A projected cell's fields (cowbench/output.h): the CSV columns scripts
 * read, then the table's columns for people. The numbers in CSV keep the
 * decimals they always had.
 */
#define PF(name, dec) { name, name, CB_KIND_NUMBER, CB_FIELD_CSV, 0, dec, 0, 0 }
#define PT(name) { name, name, CB_KIND_TEXT, CB_FIELD_CSV, 0, -1, 0, 0 }

enum { PJ_CELL, PJ_BOOT, PJ_KERNEL, PJ_WORKLOAD, PJ_SIZE, PJ_FIRST_NUM, PJ_NDATA = PJ_FIRST_NUM + 29, PJ_REPS_VIEW = PJ_NDATA,
       PJ_ERR_MED_VIEW, PJ_ERR_VIEW, PJ_CHANGE_VIEW, PJ_NATIVE_VIEW, PJ_NFIELDS };

static const struct cb_field project_fields[PJ_NFIELDS] = {
	[PJ_CELL] = { "cell", "cell", CB_KIND_TEXT, CB_FIELD_CSV | CB_FIELD_VIEW | CB_FIELD_LEFT, 0, -1, 0, 0 },
	[PJ_BOOT] = PT("boot"), [PJ_KERNEL] = PT("kernel"), [PJ_WORKLOAD] = PT("workload"), [PJ_SIZE] = PF("size_bytes", 0),
	PF("precopy", 0), PF("precopy_depth", 0), PF("reps", 0), PF("writes", 1), PF("faults", 1), PF("precopied", 1),
	PF("measured_ns", 0), PF("predicted_ns", 0), PF("model_error_pct", 2), PF("measured_change_pct", 2),
	PF("native_ns", 0), PF("native_change_pct", 2), PF("native_change_lo_pct", 2), PF("native_change_hi_pct", 2),
	PF("native_batch_lo_ns", 1), PF("native_batch_ns", 1), PF("native_batch_hi_ns", 1), PF("fault_pages_max", 0),
	PF("fault_path_p999_ns", 0), PF("fault_path_max_ns", 0), PF("native_stall_ns", 0), PF("native_stall_hi_ns", 0),
	PF("first_ns", 0), PF("measured_centre_ns", 0), PF("model_error_centre_pct", 2), PF("measured_centre_lo_ns", 0),
	PF("measured_centre_hi_ns", 0), PF("model_error_centre_lo_pct", 2), PF("model_error_centre_hi_pct", 2),
	[PJ_REPS_VIEW] = { "reps", "reps", CB_KIND_COUNT, CB_FIELD_VIEW, 3, -1, 5, 0 },
	[PJ_ERR_MED_VIEW] = { "model_error_centre_pct", "err(centre)", CB_KIND_PERCENT, CB_FIELD_VIEW, 2, -1, 11, 0 },
	[PJ_ERR_VIEW] = { "model_error_pct", "err(mean)", CB_KIND_PERCENT, CB_FIELD_VIEW, 4, -1, 10, 0 },
	[PJ_CHANGE_VIEW] = { "measured_change_pct", "measured", CB_KIND_PERCENT, CB_FIELD_VIEW, 1, -1, 9, 0 },
	[PJ_NATIVE_VIEW] = { "native_change_pct", "native change [bounds]", CB_KIND_TEXT, CB_FIELD_VIEW | CB_FIELD_LEFT, 0,
			     -1, 0, 0 },
};

static void cell_values(const struct cell *c, const struct projection *p, struct cb_val *v, char *kname, size_t klen,
			char *native, size_t nlen)
{
	const struct cb_row *r = c->first;
	double num[PJ_NDATA - PJ_FIRST_NUM];
	size_t k = 0;

	for (size_t i = 0; i < PJ_NFIELDS; i++)
		v[i] = cb_none();
	kname[0] = '\0';
	if (strncmp(c->key, "kernel=", 7) == 0) /* the matrix's kernel axis: a --kernel cell's first pair */
		snprintf(kname, klen, "%.*s", (int)strcspn(c->key + 7, " "), c->key + 7);
	v[PJ_CELL] = cb_text(c->key);
	v[PJ_BOOT] = cb_text(c->boot);
	v[PJ_KERNEL] = cb_text(kname);
	v[PJ_WORKLOAD] = cb_text(r->workload);
	v[PJ_SIZE] = cb_num((double)r->size_bytes);
	if (!c->have_counts) { /* no timed rep with its counts: nothing to say but who it is */
		v[PJ_NATIVE_VIEW] = cb_text("no timed rep with its counts");
		return;
	}
	num[k++] = r->precopy == CB_NA ? NAN : (double)r->precopy;
	num[k++] = r->precopy_depth == CB_NA ? NAN : (double)r->precopy_depth;
	num[k++] = c->counts.reps;
	num[k++] = c->counts.writes;
	num[k++] = c->counts.faults;
	num[k++] = c->counts.precopied;
	num[k++] = c->counts.elapsed_ns;
	num[k++] = p->predicted;
	num[k++] = 100 * p->error;
	num[k++] = 100 * p->change;
	num[k++] = p->nat_ns;
	num[k++] = 100 * p->ch_mid;
	num[k++] = 100 * p->ch_lo;
	num[k++] = 100 * p->ch_hi;
	num[k++] = p->batch.lo;
	num[k++] = p->batch.mid;
	num[k++] = p->batch.hi;
	num[k++] = p->pages_max;
	num[k++] = p->path_p999;
	num[k++] = p->path_max;
	num[k++] = p->stall;
	num[k++] = p->stall_hi;
	num[k++] = p->first;
	num[k++] = c->counts.elapsed_centre_ns;
	num[k++] = 100 * p->error_median;
	num[k++] = p->med_lo;
	num[k++] = p->med_hi;
	num[k++] = 100 * p->err_lo;
	num[k++] = 100 * p->err_hi;
	for (size_t i = 0; i < k; i++)
		v[PJ_FIRST_NUM + i] = cb_num(num[i]);
	v[PJ_REPS_VIEW] = cb_num(c->counts.reps);
	v[PJ_ERR_MED_VIEW] = cb_num(100 * p->error_median);
	v[PJ_ERR_VIEW] = cb_num(100 * p->error);
	v[PJ_CHANGE_VIEW] = cb_num(100 * p->change);
	if (!isnan(p->ch_mid)) {
		snprintf(native, nlen, "%+.1f %% [%+.1f %%, %+.1f %%]", 100 * p->ch_mid, 100 * p->ch_lo, 100 * p->ch_hi);
		v[PJ_NATIVE_VIEW] = cb_text(native);
	}
}

static int write_cells(FILE *fp, const struct project_opts *o, const struct cb_row *rows, size_t n,
		       const struct cb_row *nat, size_t nnat)
{
	char (*keys)[CB_ROW_KEY_LEN] = calloc(n ? n : 1, sizeof(*keys));
	struct cell *cells = NULL;
	size_t ncells = 0;
	int rc = keys && group_cells(rows, n, keys, &cells, &ncells) == 0 ? 0 : -1;
	struct cb_out out;

	if (rc)
		cli_error("out of memory");
	else
		cb_out_open(&out, fp, o->format, project_fields, PJ_NFIELDS, NULL);
	for (size_t i = 0; !rc && i < ncells; i++) {
		struct projection p;
		struct cb_val v[PJ_NFIELDS];
		char kname[32], native[96];

		project_cell(rows, n, nat, nnat, &cells[i], off_twin(cells, ncells, &cells[i]), &p);
		cell_values(&cells[i], &p, v, kname, sizeof(kname), native, sizeof(native));
		cb_out_record(&out, v);
	}
	if (!rc)
		cb_out_close(&out);
	for (size_t i = 0; cells && i < ncells; i++)
		free(cells[i].rows);
	free(cells);
	free(keys);
	return rc;
}

/* --units: one line per (source, boot, size) with a seq fault unit. */
static void write_units(FILE *fp, const struct project_opts *o, const char *source, const struct cb_row *rows,
			size_t n, bool header)
{
	if (header && o->format == CB_FORMAT_CSV)
		fputs("source,boot,kernel,size_bytes,write_ns,fault_ns,populate_ns,copy_ns,batch_ns,"
		      "populate_over_fault,batch_over_populate,reps_fault,reps_write,reps_populate,first_ns,reps_first\n", fp);
	for (size_t i = 0; i < n; i++) {
		struct cb_units u;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++) /* each (boot, size) once */
			seen = rows[j].size_bytes == rows[i].size_bytes && strcmp(rows[j].boot, rows[i].boot) == 0;
		if (seen || cb_units_from_rows(rows, n, rows[i].boot, rows[i].size_bytes, &u) != 0)
			continue;
		double pf = u.populate_ns / (u.fault_ns - u.write_ns), bp = u.batch_ns / u.populate_ns;

		if (o->format == CB_FORMAT_CSV) {
			put_str(fp, source, true);
			put_str(fp, rows[i].boot, false);
			put_str(fp, rows[i].kernel, false);
			fprintf(fp, ",%lld", (long long)rows[i].size_bytes);
			put_num(fp, u.write_ns, 1);
			put_num(fp, u.fault_ns, 1);
			put_num(fp, u.populate_ns, 1);
			put_num(fp, u.copy_ns, 1);
			put_num(fp, u.batch_ns, 1);
			put_num(fp, pf, 3);
			put_num(fp, bp, 3);
			fprintf(fp, ",%u,%u,%u", u.n_fault, u.n_write, u.n_populate);
			put_num(fp, u.first_ns, 1);
			fprintf(fp, ",%u\n", u.n_first);
		} else {
			fprintf(fp, "%-6s %-24.24s %5lld MiB  write %8.1f  fault %10.1f  populate %10.1f  copy %8.1f  "
				"batch %10.1f ns/page  populate/fault %.2f  first write %10.1f ns\n", source, rows[i].kernel,
				(long long)(rows[i].size_bytes >> 20), u.write_ns, u.fault_ns, u.populate_ns, u.copy_ns,
				u.batch_ns, pf, u.first_ns);
		}
	}
}

int cmd_project(int argc, char **argv)
{
	struct project_opts o = { .format = CB_FORMAT_CSV };
	struct cb_row *rows = NULL, *nat = NULL;
	size_t n = 0, nnat = 0;
	struct cli_output out;
	int argi, rc = EXIT_USAGE;
	char *native[1];

	argi = cli_parse_options(argc, argv, project_options, N_PROJECT_OPTIONS, &o, project_usage);
	if (argi < 0)
		return EXIT_USAGE;
	if (argc - argi != 1) {
		cli_error("project needs exactly one study CSV file (see cowbench project --help)");
		return EXIT_USAGE;
	}
	native[0] = (char *)o.native;
	if (cli_output_not_input("--output", o.output, argv + argi, 1) < 0 ||
	    (o.native && cli_output_not_input("--output", o.output, native, 1) < 0))
		return EXIT_USAGE;
	if (cli_read_rows(1, argv + argi, &rows, &n) < 0 || (o.native && cli_read_rows(1, native, &nat, &nnat) < 0))
		goto done;
	if (cli_output_begin(&out, o.output, o.force) < 0)
		goto done;
	if (o.units) {
		write_units(out.fp, &o, "study", rows, n, true);
		write_units(out.fp, &o, "native", nat, nnat, false);
		rc = 0;
	} else {
		rc = write_cells(out.fp, &o, rows, n, nat, nnat) ? EXIT_INTERNAL : 0;
	}
	if (rc == 0 && cli_output_commit(&out) < 0)
		rc = EXIT_RUN_FAILED; /* a full disk is not bad input: 1, as summarize, compare and merge */
	else if (rc)
		cli_output_abort(&out);
done:
	free(rows);
	free(nat);
	return rc;
}
