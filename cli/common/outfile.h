/* Where commands write: output files checked, locked and committed (outfile.c), never over an input (paths.c). */
#ifndef COWBENCH_CLI_OUTFILE_H
#define COWBENCH_CLI_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Output files (outfile.c), one rule for every command: an existing
 * non-empty FILE is replaced only with --force; a FILE another cowbench
 * holds (flock) is refused with "FILE is being written by PID".
 */
/* Appending writers (run, matrix): FILE opened and locked; -1 after printing why (nothing left). */
int cli_output_open_locked(const char *path, bool resume, bool force, const char *hint, bool *created);
/* Undo cli_output_open_locked after a later error: close, and remove the file if it created it. */
void cli_output_discard(const char *path, int fd, bool created);
/* After a failed write, before closing FD: a file this run created and left empty goes again. */
void cli_output_drop_if_empty(const char *path, int fd, bool created);
/* Whole-file writers (merge, summarize): a temporary file, renamed over PATH by commit. */
struct cli_output {
	FILE *fp;         /* stdout when path is NULL */
	const char *path;
	char target[4096]; /* the file written: PATH, or the file its symbolic link names */
	char tmp[4096];
	int lockfd;
	bool existed, force; /* without either, commit never replaces a file that appeared meanwhile */
};
int cli_output_begin(struct cli_output *out, const char *path, bool force);
/* The same for an option other than --output (its name in messages). */
int cli_output_begin_as(struct cli_output *out, const char *option, const char *path, bool force);
/*
 * What begin checks before anything runs (every output of every command):
 * -1 after one line (a usage error) for a directory, device, FIFO, a name
 * under /dev or /proc, too long a name, a folder that is not there or takes
 * no files, or a non-empty file without FORCE. TARGET: the file to write (a
 * symbolic link followed).
 */
int cli_output_check(const char *option, const char *path, bool force, char *target, size_t tlen);
/*
 * No command writes over one of its inputs (paths.c): whether two names
 * are one file (device and inode; for files not yet there, the resolved
 * directory and name), and -1 after "OPTION OUTPUT is also an input (IN)"
 * when OUTPUT (NULL: none) is one of inputs[n].
 */
bool cli_same_file(const char *a, const char *b);
int cli_output_not_input(const char *option, const char *output, char *const *inputs, int n);
/* plot --out DIR: -1 after one line when an input is DIR/report.md, a PNG/SVG in DIR or a .dat in DIR/data. */
int cli_plot_dir_not_input(const char *dir, char *const *inputs, int n);
/* -1 after one line when an output names /dev/... or /proc/... (stdout, null, fd links): omit it instead. */
int cli_output_path_check(const char *option, const char *path);
int cli_output_commit(struct cli_output *out); /* -1 after printing why; PATH untouched then */
/* Data text escaped for Markdown and HTML (report.md's cells): one of 8 rotating static buffers. */
const char *cli_md(const char *s);
void cli_output_abort(struct cli_output *out);

#endif
