/* What every plot of cowbench plot writes (plot_data.c): data files, safe labels, readable keys. */
#ifndef COWBENCH_CLI_PLOT_DATA_H
#define COWBENCH_CLI_PLOT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cowbench/output.h>
#include <cowbench/repstats.h>

/* A plot's data: DIR/data/NAME.dat (numbers, sanitised labels) and DIR/data/NAME.gp (numbers only). */
struct dataset {
	FILE *dat, *meta;
	char dat_path[4096], meta_path[4096];
};

int plot_dataset_open(struct dataset *d, const char *dir, const char *name);
int plot_dataset_close(struct dataset *d);
/** Close and remove a dataset that ended up with nothing to plot. */
void plot_dataset_discard(struct dataset *d);

/*
 * A table of report.md through the Markdown writer (cowbench/output.h), as
 * every command's --format=markdown: cells escaped, in UTF-8 units. A
 * column (PLOT_MD_COL) is in every row; its kind aligns it (text left,
 * numbers right); Markdown alone reads it, so its name is its label.
 */
#define PLOT_MD_COL(label_, kind_) \
	{ .name = label_, .label = label_, .kind = CB_KIND_##kind_, .flags = CB_FIELD_VIEW | CB_FIELD_ALWAYS }
int plot_md_open(struct cb_out *o, FILE *fp, const struct cb_field *f, size_t nf);

/** A label in a data file: characters with a meaning to gnuplot become '_'. */
void gp_data_label(FILE *fp, const char *s);
/** A string value, so sanitised, in a .gp file that gnuplot loads. */
void plot_gp_string(FILE *fp, const char *s);

/** The key without the pairs named in drop[] (NULL-terminated). */
void plot_key_strip(const char *key, const char *const *drop, char *out, size_t len);
/** A cell key as people read it: "workload=seq size=16M fork=0 precopy=0" -> "seq 16M no fork pre-copy off". */
char *plot_readable(const char *key, char *out, size_t len);
/** The workload of a group's rows ("" when it has none). */
const char *plot_group_workload(const struct cb_row_group *g);

/*
 * Labels: the pairs every cell of a plot shares go into its title
 * ("size=64M threads=2"), each bar or line is named by what varies
 * ("16M no fork", "uffd-wp").
 */
struct plot_keyset {
	const char *key[256];
	size_t n;
};

void plot_keyset_add(struct plot_keyset *ks, const char *key);
/** The pairs of key that vary (common = false) or that all keys share (common = true). */
void plot_label_of(const struct plot_keyset *ks, const char *key, bool common, char *out, size_t len);
/** The plot's title context (what all its keys share) into its .gp file. */
void plot_meta_context(FILE *meta, const struct plot_keyset *ks);

#endif
