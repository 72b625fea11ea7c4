#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/matrix.h>
#include <cowbench/order.h>
#include <cowbench/results.h>
#include <cowbench/run.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/guard.h"
#include "common/paths.h"
#include "guest_rows.h"
#include "kernel_axis.h"

extern char **environ;

/* ---- kernel values ---- */

static const char *cell_kernel(const struct cb_cell *c)
{
	const char *k = cb_cell_value(c, MK_AXIS);

	return k ? k : "host";
}

bool mk_is_axis(const char *name)
{
	return strcmp(name, MK_AXIS) == 0;
}

bool mk_cell_in_guest(const struct cb_cell *c)
{
	return strcmp(cell_kernel(c), "host") != 0;
}

static bool named_kernel(const char *k)
{
	return !strcmp(k, "host") || !strcmp(k, "stock") || !strcmp(k, "patched");
}

/* A bzImage of kernel/build.sh has its .config beside it: the patch is there when COW_PRECOPY is. */
static bool image_has_patch(const char *image)
{
	char path[4096], line[256];
	const char *slash = strrchr(image, '/');
	bool yes = false;
	FILE *fp;

	snprintf(path, sizeof(path), "%.*sconfig", slash ? (int)(slash - image + 1) : 0, image);
	fp = cli_fopen_input(path);
	if (!fp)
		return false;
	while (!yes && fgets(line, sizeof(line), fp))
		yes = strcmp(line, "CONFIG_COW_PRECOPY=y\n") == 0;
	fclose(fp);
	return yes;
}

static bool kernel_has_patch(const char *k)
{
	if (strcmp(k, "host") == 0)
		return cb_path_exists(CB_PRECOPY_SYSCTL);
	if (strcmp(k, "stock") == 0)
		return false;
	if (strcmp(k, "patched") == 0)
		return true;
	return image_has_patch(k);
}

int mk_check_values(const struct cb_cells *cells)
{
	for (size_t i = 0; i < cells->n; i++) {
		const char *k = cell_kernel(&cells->cell[i]);
		struct stat st;

		if (named_kernel(k))
			continue;
		if (stat(k, &st) != 0 || !S_ISREG(st.st_mode)) {
			cli_error("--kernel: '%s' is not host, stock, patched or a kernel image file", k);
			return -1;
		}
	}
	return 0;
}

/* ---- collapse ---- */

static void note_collapse(struct mk_collapsed *out, const char *k, const char *what)
{
	char line[200];

	snprintf(line, sizeof(line), "%s collapse%s on kernel=%s", what, strchr(what, ',') ? "" : "s", k);
	for (size_t i = 0; i < out->n; i++)
		if (strcmp(out->line[i], line) == 0)
			return;
	if (out->n < sizeof(out->line) / sizeof(out->line[0]))
		snprintf(out->line[out->n++], sizeof(out->line[0]), "%s", line);
}

void mk_collapse(struct cb_cells *cells, struct mk_collapsed *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < cells->n; i++) {
		struct cb_cell *c = &cells->cell[i];
		const char *k = cell_kernel(c), *mode;

		if (!kernel_has_patch(k)) {
			bool a = cb_cell_drop_pair(c, "precopy"), b = cb_cell_drop_pair(c, "precopy-depth");

			if (a || b)
				note_collapse(out, k, strcmp(k, "host") == 0 ?
						      "precopy, precopy-depth (" CB_PRECOPY_SYSCTL " is absent here)" :
						      "precopy, precopy-depth (no pre-copy patch)");
			continue;
		}
		mode = cb_cell_value(c, "precopy");
		if ((!mode || strcmp(mode, "1") != 0) && cb_cell_drop_pair(c, "precopy-depth"))
			note_collapse(out, k, "precopy-depth (only pre-copy mode 1 has a depth)");
	}
	cb_cells_dedupe(cells);
}

/* ---- the guest plan: comparison sets interleaved rep by rep ---- */

struct boot_plan {
	const char *kernel;
	size_t ncells, nsets;
	size_t *set_of;          /* per cell of the plan: its comparison set in this boot, or CB_ORDER_NO_SET */
	struct cb_order_step *step; /* the (cell, rep) pairs in the order they run */
	long *round;             /* per step: its round id in this boot (0: sequential) */
	size_t norder;
};

static void boot_plan_free(struct boot_plan *b)
{
	free(b->set_of);
	free(b->step);
	free(b->round);
	memset(b, 0, sizeof(*b));
}

/* Kernel K's cells in comparison sets, their pending reps in --order (cowbench/order.h), rounds numbered. */
static int make_boot_plan(const struct mk_run *r, const char *k, struct boot_plan *b)
{
	size_t n = r->cells->n;
	bool *mine = calloc(n + 1, sizeof(*mine));
	long sets = -ENOMEM, id = 0;

	memset(b, 0, sizeof(*b));
	b->kernel = k;
	b->set_of = calloc(n + 1, sizeof(*b->set_of));
	if (mine && b->set_of) {
		for (size_t i = 0; i < n; i++) {
			mine[i] = strcmp(cell_kernel(&r->cells->cell[i]), k) == 0;
			b->ncells += mine[i];
		}
		sets = cb_order_sets(r->cells, mine, b->set_of);
	}
	free(mine);
	if (sets < 0 || cb_order_plan(b->set_of, n, r->reps, r->done, r->order, r->seed, &b->step, &b->norder) < 0)
		return -ENOMEM;
	b->nsets = (size_t)sets;
	b->round = calloc(b->norder + 1, sizeof(*b->round));
	if (!b->round)
		return -ENOMEM;
	for (size_t i = 0; i < b->norder; i++) {
		const struct cb_order_step *s = &b->step[i];

		if (s->round > 0 && (i == 0 || s->block != s[-1].block || s->round != s[-1].round))
			id++;
		b->round[i] = s->round > 0 ? id : 0;
	}
	return 0;
}

/* The distinct guest kernels, in the order their first cell appears. */
static size_t guest_kernels(const struct cb_cells *cells, const char **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < cells->n; i++) {
		const char *k = cell_kernel(&cells->cell[i]);
		bool seen = false;

		if (!mk_cell_in_guest(&cells->cell[i]))
			continue;
		for (size_t j = 0; j < n; j++)
			seen = seen || strcmp(out[j], k) == 0;
		if (!seen && n < max)
			out[n++] = k;
	}
	return n;
}

#define MAX_KERNELS 16

void mk_print_sets(const struct cb_cells *cells, const size_t *set_of, size_t nsets, int order, uint64_t seed,
		   FILE *fp)
{
	size_t *members = calloc(nsets + 1, sizeof(*members)), *first = calloc(nsets + 1, sizeof(*first));
	char ck[CB_CELL_KEY_LEN];
	bool any = false;

	for (size_t c = cells->n; members && first && c-- > 0;)
		if (set_of[c] != CB_ORDER_NO_SET) {
			members[set_of[c]]++;
			first[set_of[c]] = c;
		}
	if (order == CB_ORDER_INTERLEAVED_ALL) {
		size_t all = 0;

		for (size_t c = 0; c < cells->n; c++)
			all += set_of[c] != CB_ORDER_NO_SET;
		fprintf(fp, "#   every cell in each round (%zu cells, rotating order: interleaved-all)\n", all);
	}
	for (size_t s = 0; members && first && order != CB_ORDER_SEQUENTIAL && s < nsets; s++) {
		if (members[s] < 2)
			continue;
		if (!any)
			fprintf(fp, "#   comparison sets (cells that differ only in %s):\n", CB_ORDER_AXES);
		any = true;
		cb_order_set_key(&cells->cell[first[s]], ck, sizeof(ck));
		if (order == CB_ORDER_SHUFFLE)
			fprintf(fp, "#   shuffled rep by rep (%zu cells, seed %" PRIu64 "): %s\n", members[s], seed, ck);
		else if (order == CB_ORDER_INTERLEAVED_ALL)
			fprintf(fp, "#   paired by round (%zu cells): %s\n", members[s], ck);
		else
			fprintf(fp, "#   interleaved rep by rep (%zu cells, rotating order): %s\n", members[s], ck);
	}
	free(members);
	free(first);
}

void mk_print_boots(const struct mk_run *r, const struct mk_collapsed *col, FILE *fp)
{
	const char *ks[MAX_KERNELS];
	size_t nk = guest_kernels(r->cells, ks, MAX_KERNELS);
	bool axis = false;

	for (size_t i = 0; i < r->cells->n; i++)
		axis = axis || cb_cell_value(&r->cells->cell[i], MK_AXIS) != NULL;
	if (!axis)
		return; /* a host matrix: its dry run reads as it always did */
	for (size_t i = 0; i < col->n; i++)
		fprintf(fp, "# collapsed: %s\n", col->line[i]);
	for (size_t i = 0; i < nk; i++) {
		struct boot_plan b;

		if (make_boot_plan(r, ks[i], &b) < 0) {
			boot_plan_free(&b);
			return;
		}
		fprintf(fp, "# kernel=%s: one QEMU boot, %zu cells, %zu reps to run (+%ld warm-up per cell)%s\n", ks[i],
			b.ncells, b.norder, r->warmup, b.norder ? "" : "; nothing to boot");
		mk_print_sets(r->cells, b.set_of, b.nsets, r->order, r->seed, fp);
		boot_plan_free(&b);
	}
}

/* ---- running one boot ---- */

/* Run ARGV with stdout into a pipe (stderr to /dev/null when quiet); its last line into out[]. Exit status or -1. */
static int run_last_line_q(char *const argv[], char *out, size_t len, bool quiet)
{
	posix_spawn_file_actions_t fa;
	int fds[2], ws, err;
	pid_t pid;
	char buf[4096];
	size_t have = 0;
	ssize_t got;

	out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	if (quiet)
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (err) {
		close(fds[0]);
		errno = err;
		return -1;
	}
	while ((got = read(fds[0], buf + have, sizeof(buf) - 1 - have)) > 0 || (got < 0 && errno == EINTR)) {
		if (got < 0)
			continue;
		have += (size_t)got;
		buf[have] = '\0';
		if (have == sizeof(buf) - 1) { /* keep the tail */
			char *nl = strrchr(buf, '\n');
			size_t keep = nl ? strlen(nl + 1) : 0;

			memmove(buf, buf + have - keep, keep);
			have = keep;
		}
	}
	buf[have] = '\0';
	close(fds[0]);
	cb_wait_status(pid, &ws);
	while (have > 0 && buf[have - 1] == '\n')
		buf[--have] = '\0';
	snprintf(out, len, "%s", strrchr(buf, '\n') ? strrchr(buf, '\n') + 1 : buf);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static int run_last_line(char *const argv[], char *out, size_t len)
{
	return run_last_line_q(argv, out, len, false);
}

/* The packages vm-run.sh installs before a boot (kept equal to its ensure_packages line). */
static const char *const guest_packages[] = { "qemu-system-x86", "busybox-static", "cpio", "gzip", "gcc", "libc6-dev",
					      "python3" };
#define N_GUEST_PACKAGES (sizeof(guest_packages) / sizeof(guest_packages[0]))

/* Does the machine lack packages the guests need? Their names into out[]; false when all are there. */
static bool guest_packages_missing(char *out, size_t len)
{
	char script[4096], *argv[2 + N_GUEST_PACKAGES + 1];
	int n = 0, rc;

	/* tests/install-deps.sh beside kernel/, in the source tree and as installed (share/cowbench/). */
	snprintf(script, sizeof(script), "%s/../tests/install-deps.sh", cli_kernel_dir());
	argv[n++] = script;
	argv[n++] = "--check";
	for (size_t i = 0; i < N_GUEST_PACKAGES; i++)
		argv[n++] = (char *)guest_packages[i];
	argv[n] = NULL;
	rc = run_last_line_q(argv, out, len, true);
	return rc > 0; /* -1 (no script, e.g. no dpkg): vm-run.sh finds out itself */
}

static bool ask_yes(const char *question)
{
	char answer[16];

	fprintf(stderr, "cowbench: %s [y/N] ", question);
	fflush(stderr);
	return fgets(answer, sizeof(answer), stdin) && (answer[0] == 'y' || answer[0] == 'Y');
}

int mk_check_builds(const struct cb_cells *cells, bool allowed)
{
	char todo[512] = "", cmd[8192] = "", pk[512] = "", line[8192];
	bool any_guest = false, stock_done = false, patched_done = false;

	for (size_t i = 0; i < cells->n; i++) {
		const char *k = cell_kernel(&cells->cell[i]);
		bool stock = strcmp(k, "stock") == 0;
		char script[4096];
		char *argv[] = { script, "--cached-only", stock ? "--stock" : NULL, NULL };

		if (strcmp(k, "host") == 0)
			continue;
		any_guest = true;
		if (!named_kernel(k) || (stock ? stock_done : patched_done))
			continue;
		*(stock ? &stock_done : &patched_done) = true;
		snprintf(script, sizeof(script), "%s/build.sh", cli_kernel_dir());
		if (run_last_line_q(argv, line, sizeof(line), true) == 0 && cb_path_exists(line))
			continue; /* cached */
		snprintf(todo + strlen(todo), sizeof(todo) - strlen(todo), "%skernel=%s is not built yet", todo[0] ? ", " : "", k);
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), "%s%s%s", cmd[0] ? " && " : "", script,
			 stock ? " --stock" : "");
	}
	if (any_guest && guest_packages_missing(pk, sizeof(pk))) {
		snprintf(todo + strlen(todo), sizeof(todo) - strlen(todo), "%sQEMU's packages are missing (%s)",
			 todo[0] ? ", " : "", pk);
		char deps[4096 + 600];

		snprintf(deps, sizeof(deps), "%s/../tests/install-deps.sh %s%s", cli_kernel_dir(), pk, cmd[0] ? " && " : "");
		memmove(cmd + strlen(deps), cmd, strnlen(cmd, sizeof(cmd) - sizeof(deps)) + 1);
		memcpy(cmd, deps, strlen(deps));
		cmd[sizeof(cmd) - 1] = '\0';
	}
	if (!todo[0] || allowed)
		return 0;
	/* Measured on a 2-vCPU VM: 3.5-4 min a build, a 1.2 GB work tree, a 4 MB cache entry, 145 MiB of source. */
	snprintf(line, sizeof(line),
		 "%s: apt-get installs what is missing (linux-source-6.12 is 145 MiB) and each kernel build takes "
		 "about 4 min on 2 idle CPUs (longer when busy), 1.5 GB of disk under /var/tmp while it runs and "
		 "4 MB cached after", todo);
	if (isatty(STDIN_FILENO) && isatty(STDERR_FILENO)) {
		cli_note("%s", line);
		if (ask_yes("install and build now?"))
			return 0;
		cli_error("nothing installed or built; --build says yes without asking");
		return -1;
	}
	cli_error("%s; run again with --build, or first: %s", line, cmd);
	return -1;
}

/* stock and patched are kernel/build.sh's (cached after the first build); anything else is a path. */
static int resolve_image(const char *k, char *image, size_t len)
{
	char script[4096];
	char *argv[] = { script, strcmp(k, "stock") == 0 ? "--stock" : NULL, NULL };

	if (!named_kernel(k)) {
		snprintf(image, len, "%s", k);
		return 0;
	}
	snprintf(script, sizeof(script), "%s/build.sh", cli_kernel_dir());
	cli_note("kernel=%s: %s%s (cached after the first build, which takes minutes)", k, script,
		 argv[1] ? " --stock" : "");
	if (run_last_line(argv, image, len) != 0 || !cb_path_exists(image)) {
		cli_error("kernel=%s: %s did not give a kernel image", k, script);
		return -1;
	}
	return 0;
}

/*
 * Input files a cell names (replay's --trace=FILE) travel into the guest: each distinct file is copied into the
 * boot's work directory as fN, vm-run.sh --data puts it in the guest's initramfs as /data/fN, the plan names it
 * there, and the rows coming back name the host's file again, so a guest row is the host cell's. The path only
 * ever travels as data (an argv element, a plan value), never as shell code.
 */
static const char *const carried_options[] = { "trace" };
#define MAX_CARRIED 8

struct carried {
	size_t n;
	char host[MAX_CARRIED][CB_OPT_PATH_MAX];  /* the value in the host's cell key */
	char guest[MAX_CARRIED][16];              /* "/data/fN" */
	char staged[MAX_CARRIED][4096];           /* the copy in the boot's work directory */
};

/* Swap every carried option's value found in from[] for the one in to[]; false when a key would not fit. */
static bool carried_swap(const struct carried *c, bool to_guest, char *key, size_t len)
{
	for (size_t o = 0; o < sizeof(carried_options) / sizeof(carried_options[0]); o++) {
		char v[CB_OPT_PATH_MAX], out[CB_CELL_KEY_LEN];

		if (!cb_key_value(key, carried_options[o], v, sizeof(v)))
			continue;
		for (size_t i = 0; i < c->n; i++) {
			if (strcmp(v, to_guest ? c->host[i] : c->guest[i]) != 0)
				continue;
			if (!cb_key_replace(key, carried_options[o], to_guest ? c->guest[i] : c->host[i], out, sizeof(out)) ||
			    strlen(out) >= len)
				return false;
			memcpy(key, out, strlen(out) + 1);
			break;
		}
	}
	return true;
}

/* Stage the files the boot's cells name; -1 after saying why. */
static int carried_stage(const struct mk_run *r, const struct boot_plan *b, const char *dir, struct carried *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < r->cells->n; i++) {
		const char *key = r->cells->cell[i].key;

		if (strcmp(cell_kernel(&r->cells->cell[i]), b->kernel) != 0)
			continue;
		for (size_t o = 0; o < sizeof(carried_options) / sizeof(carried_options[0]); o++) {
			char v[CB_OPT_PATH_MAX];
			bool have = false;
			int err;

			if (!cb_key_value(key, carried_options[o], v, sizeof(v)))
				continue;
			for (size_t j = 0; j < c->n; j++)
				have = have || strcmp(c->host[j], v) == 0;
			if (have)
				continue;
			if (c->n == MAX_CARRIED) {
				cli_error("kernel=%s: more than %d distinct --%s files in one boot", b->kernel, MAX_CARRIED,
					  carried_options[o]);
				return -1;
			}
			snprintf(c->host[c->n], sizeof(c->host[0]), "%s", v);
			snprintf(c->guest[c->n], sizeof(c->guest[0]), "/data/f%zu", c->n + 1);
			snprintf(c->staged[c->n], sizeof(c->staged[0]), "%s/f%zu", dir, c->n + 1);
			if ((err = cli_copy_file(v, c->staged[c->n])) < 0) {
				cli_error("kernel=%s: --%s=%s: cannot copy it for the guest: %s", b->kernel,
					  carried_options[o], v, err == -EINVAL ? "not a regular file" : strerror(-err));
				return -1;
			}
			cli_remove_on_signal(c->staged[c->n]);
			c->n++;
		}
	}
	return 0;
}

static void carried_remove(const struct carried *c)
{
	for (size_t i = 0; i < c->n; i++)
		unlink(c->staged[i]);
}

struct receiver {
	struct mk_run *r;
	const struct boot_plan *b;
	const struct carried *carried; /* files the guest reads under other names */
	unsigned char *got;       /* per order entry: its row came back */
	struct gr_stream s;       /* the guest's row stream */
	size_t rows;              /* rows of the plan that came back */
	int failed;               /* a row with a status other than ok */
};

static long order_find(const struct receiver *rc, const char *cell, int64_t rep)
{
	for (size_t i = 0; i < rc->b->norder; i++)
		if (rc->b->step[i].rep == rep && strcmp(rc->r->cells->cell[rc->b->step[i].cell].key, cell) == 0)
			return (long)i;
	return -1;
}

static void show_progress(const struct receiver *rc)
{
	if (rc->r->progress)
		cli_progress("[kernel=%s] %zu of %zu reps back from the guest", rc->b->kernel, rc->rows, rc->b->norder);
}

/* The row says how many bad lines its boot's stream had skipped by then: the file keeps the count. */
static void note_bad_lines(struct cb_row *row, size_t bad)
{
	size_t len = strlen(row->evidence_notes);

	if (bad)
		snprintf(row->evidence_notes + len, sizeof(row->evidence_notes) - len, "%sguest-stream:skipped-%zu",
			 len ? "," : "", bad);
}

/* A row from the guest: it must belong to this boot's plan and be new; then it is appended. */
static int record_row(void *ctx, const struct cb_row *in)
{
	struct receiver *rc = ctx;
	struct cb_row row = *in;
	const struct cb_column *oc = cb_column_find("options");
	char options[CB_CELL_KEY_LEN]; /* the row refers to its options (CB_COL_REF): swapped in a copy */
	long at;

	snprintf(options, sizeof(options), "%s", cb_row_text(&row, oc));
	row.options = options;
	/* The guest named the carried files by its own paths: the row is the host cell's. */
	if (!carried_swap(rc->carried, false, row.cell, sizeof(row.cell)) ||
	    !carried_swap(rc->carried, false, options, oc->width))
		return 1;
	at = order_find(rc, row.cell, row.rep);
	if (row.schema != CB_SCHEMA_VERSION || at < 0 || rc->got[at])
		return 1;
	note_bad_lines(&row, rc->s.bad);
	cli_progress_clear();
	if (cb_report_row(rc->r->report, &row) < 0)
		return -(errno ? errno : EIO);
	rc->got[at] = 1;
	rc->r->done[rc->b->step[at].cell * (size_t)rc->r->reps + (size_t)(row.rep - 1)] = 1;
	if (strcmp(row.status, "ok") != 0)
		rc->failed = 1;
	rc->rows++;
	if (rc->r->row_done)
		rc->r->row_done(rc->r->row_arg);
	show_progress(rc);
	return 0;
}

struct rows_file {
	int fd;
	char *buf;
	size_t len, cap;
};

/* Read what the guest has added to the rows file, and take its whole records. */
static int drain(struct receiver *rc, struct rows_file *f, bool final)
{
	for (;;) {
		ssize_t got;
		size_t used;

		if (f->cap - f->len < 65536) {
			char *nb = realloc(f->buf, f->cap * 2 + 65536);

			if (!nb)
				return -ENOMEM;
			f->buf = nb;
			f->cap = f->cap * 2 + 65536;
		}
		got = read(f->fd, f->buf + f->len, f->cap - f->len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got > 0)
			f->len += (size_t)got;
		used = gr_take(&rc->s, f->buf, f->len, final && got <= 0);
		memmove(f->buf, f->buf + used, f->len - used);
		f->len -= used;
		if (got <= 0 || rc->s.err)
			return 0;
	}
}

/* The status of a (cell, rep) whose row never came back, from how the guest ended. */
static void guest_status(int ws, bool staged, bool imaged, bool spawned, char *out, size_t len)
{
	if (!staged)
		snprintf(out, len, "error:guest:input"); /* a --trace file could not be copied for it */
	else if (!imaged)
		snprintf(out, len, "error:guest:no-image");
	else if (!spawned)
		snprintf(out, len, "error:guest:not-started");
	else if (WIFSIGNALED(ws))
		snprintf(out, len, "error:guest:killed:%s", sigabbrev_np(WTERMSIG(ws)) ? sigabbrev_np(WTERMSIG(ws)) : "?");
	else if (WEXITSTATUS(ws) == 124)
		snprintf(out, len, "error:guest:timeout");
	else if (WEXITSTATUS(ws) == 125)
		snprintf(out, len, "error:guest:died");
	else if (WEXITSTATUS(ws) == 1)
		snprintf(out, len, "error:guest:failed");
	else
		snprintf(out, len, "error:guest:exit-%d", WEXITSTATUS(ws));
}

/* Rows for the reps that never came back: a failed guest is recorded, never silent. */
static int record_missing(struct receiver *rc, const char *status)
{
	for (size_t i = 0; i < rc->b->norder; i++) {
		size_t c = rc->b->step[i].cell;
		struct cb_row row;

		if (rc->got[i])
			continue;
		cb_row_init(&row, &rc->r->spec[c], (int)rc->b->step[i].rep);
		snprintf(row.status, sizeof(row.status), "%s", status);
		snprintf(row.cell, sizeof(row.cell), "%s", rc->r->cells->cell[c].key);
		/* Not the host's: the guest never said what it measured with. */
		row.kernel[0] = row.cpu_model[0] = row.boot[0] = '\0';
		row.host = row.thp_mode = NULL;
		row.precopy = row.precopy_depth = CB_NA;
		cli_progress_clear();
		if (cb_report_row(rc->r->report, &row) < 0)
			return -1;
		rc->r->done[c * (size_t)rc->r->reps + (size_t)(rc->b->step[i].rep - 1)] = 1;
		if (rc->r->row_done)
			rc->r->row_done(rc->r->row_arg);
	}
	return 0;
}

/* Seconds a boot may take: a generous budget per rep under TCG, or $COWBENCH_GUEST_TIMEOUT. */
static long boot_timeout(const struct mk_run *r, const struct boot_plan *b)
{
	const char *env = getenv("COWBENCH_GUEST_TIMEOUT");
	long t = 300;

	if (env && cli_parse_long(env, 1, 1000000, &t))
		return t;
	for (size_t i = 0; i < b->norder; i++)
		t += 5 + (long)(r->spec[b->step[i].cell].size >> 20) / 4;
	return t + 10 * r->warmup * (long)b->ncells;
}

static int write_plan(const struct mk_run *r, const struct boot_plan *b, const struct carried *c, const char *path)
{
	FILE *fp = fopen(path, "we");
	bool fits = true;

	if (!fp)
		return -1;
	for (size_t i = 0; i < b->norder; i++) {
		char key[CB_CELL_KEY_LEN];

		snprintf(key, sizeof(key), "%s", r->cells->cell[b->step[i].cell].key);
		fits = fits && carried_swap(c, true, key, sizeof(key)); /* the guest's paths are shorter */
		fprintf(fp, "%ld:%ld %s\n", b->step[i].rep, b->round[i], key);
	}
	return fclose(fp) == 0 && fits ? 0 : -1;
}

/* vm-run.sh boots IMAGE, runs the plan with the guest's static cowbench, rows go to the rows file. */
static int spawn_guest(const struct mk_run *r, const char *dir, const char *image, long timeout,
		       const struct carried *c, pid_t *pid)
{
	char script[4096], plan[4096], rows[4096], tmo[32], cmd[512];
	const char *bin = getenv("COWBENCH_GUEST_COWBENCH");
	char *argv[24 + 2 * MAX_CARRIED];
	int a = 0, err;
	posix_spawn_file_actions_t fa;

	snprintf(script, sizeof(script), "%s/vm-run.sh", cli_kernel_dir());
	snprintf(plan, sizeof(plan), "%s/cowbench-plan", dir);
	snprintf(rows, sizeof(rows), "%s/rows.csv", dir);
	snprintf(tmo, sizeof(tmo), "%ld", timeout);
	/*
	 * The guest's first serial port is its console; the second carries nothing but rows. The
	 * guest is cowbench's own machine: delay accounting is on in it from the start, so timed
	 * reps carry the writer's exact COW copy counts (taskstats), at the same cost in every
	 * cell a boot compares.
	 */
	snprintf(cmd, sizeof(cmd), "echo 1 >/proc/sys/kernel/task_delayacct && stty -F /dev/ttyS1 raw -echo && "
		 "exec cowbench matrix --plan /bin/cowbench-plan "
		 "--warmup %ld >/dev/ttyS1", r->warmup); /* stdout: --output takes regular files only */
	argv[a++] = script;
	argv[a++] = "--kernel";
	argv[a++] = (char *)image;
	argv[a++] = "--quiet-boot";
	argv[a++] = "--smp";
	argv[a++] = "1"; /* one vCPU: the least emulation noise */
	argv[a++] = "--timeout";
	argv[a++] = tmo;
	argv[a++] = "--add";
	argv[a++] = plan;
	argv[a++] = "--rows";
	argv[a++] = rows;
	for (size_t i = 0; i < c->n; i++) {
		argv[a++] = "--data";
		argv[a++] = (char *)c->staged[i];
	}
	if (bin && *bin) {
		argv[a++] = "--cowbench";
		argv[a++] = (char *)bin;
	}
	argv[a++] = "--";
	argv[a++] = "sh";
	argv[a++] = "-c";
	argv[a++] = cmd;
	argv[a] = NULL;
	/* The guest console is a log: it goes to our stderr, never into the rows. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	err = posix_spawn(pid, script, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		cli_error("cannot run %s: %s", script, strerror(err));
		return -1;
	}
	return 0;
}

/* What the guest sent besides its plan's rows: one line each, so a damaged stream is never silent. */
static void report_stream(const struct receiver *rc)
{
	if (rc->s.foreign)
		cli_note("kernel=%s: the guest's cowbench writes column '%s' that this one does not know", rc->b->kernel,
			 rc->s.unknown);
	if (rc->s.bad)
		cli_note("kernel=%s: skipped %zu bad lines in the guest's row stream (not a row: bad CSV, "
			 "wrong field count or value); the rows after them are kept", rc->b->kernel, rc->s.bad);
	if (rc->s.ignored)
		cli_note("kernel=%s: ignored %zu records from the guest that were not rows of its plan", rc->b->kernel,
			 rc->s.ignored);
}

static int boot_once(struct mk_run *r, const struct boot_plan *b)
{
	char dir[] = "/tmp/cowbench-guest.XXXXXX", path[4096], image[4096], status[48], watch[32];
	struct carried carried = { .n = 0 };
	struct receiver rc = { .r = r, .b = b, .carried = &carried };
	struct rows_file f = { .fd = -1 };
	bool imaged = false, spawned = false, staged;
	int ws = 0, ret = 0;
	pid_t pid = -1;

	gr_init(&rc.s, record_row, &rc);
	rc.got = calloc(b->norder + 1, 1);
	if (!rc.got || !mkdtemp(dir)) {
		cli_error("cannot make a work directory for the guest: %s", strerror(errno));
		free(rc.got);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/rows.csv", dir);
	cli_remove_on_signal(path); /* SIGTERM/SIGINT/SIGHUP mid-boot leave no cowbench-guest.* behind */
	f.fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	snprintf(path, sizeof(path), "%s/cowbench-plan", dir);
	cli_remove_on_signal(path);
	staged = carried_stage(r, b, dir, &carried) == 0; /* registers its files before the directory */
	cli_remove_on_signal(dir);
	/* The QEMU supervisor takes the guest down if this process dies (even by SIGKILL). */
	snprintf(watch, sizeof(watch), "%ld", (long)getpid());
	setenv("COWBENCH_WATCH_PID", watch, 1);
	imaged = staged && f.fd >= 0 && write_plan(r, b, &carried, path) == 0 &&
		 resolve_image(b->kernel, image, sizeof(image)) == 0;
	if (imaged && spawn_guest(r, dir, image, boot_timeout(r, b), &carried, &pid) == 0) {
		spawned = true;
		for (;;) {
			pid_t w = waitpid(pid, &ws, WNOHANG); /* a poll while rows stream in */

			if (drain(&rc, &f, false) < 0 || rc.s.err)
				break;
			if (w == pid || (w < 0 && errno != EINTR))
				break;
			poll(NULL, 0, 200);
		}
		if (!rc.s.err)
			drain(&rc, &f, true);
		if (rc.s.err) { /* stop the guest: its rows have nowhere to go */
			kill(pid, SIGTERM);
			cb_wait_status(pid, &ws);
		}
	}
	unsetenv("COWBENCH_WATCH_PID");
	if (r->progress && spawned)
		cli_progress_clear();
	if (rc.s.err) {
		errno = rc.s.err;
		cli_error("cannot write results: %s", strerror(errno));
		ret = -1;
	} else {
		report_stream(&rc);
		if (rc.rows < b->norder) {
			guest_status(ws, staged, imaged, spawned, status, sizeof(status));
			cli_error("kernel=%s: %zu of %zu reps did not come back (%s); their rows say so", b->kernel,
				  b->norder - rc.rows, b->norder, status);
			ret = record_missing(&rc, status) < 0 ? -1 : 1;
		} else if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
			ret = 1; /* a failed rep (its row says so) or a kernel splat (vm-run.sh said so) */
		}
		ret = ret == 0 && rc.failed ? 1 : ret;
	}
	if (f.fd >= 0)
		close(f.fd);
	free(f.buf);
	free(rc.got);
	unlink(path);
	carried_remove(&carried);
	snprintf(path, sizeof(path), "%s/rows.csv", dir);
	unlink(path);
	rmdir(dir);
	cli_remove_on_signal_clear();
	return ret;
}

int mk_run_guests(struct mk_run *r)
{
	const char *ks[MAX_KERNELS];
	size_t nk = guest_kernels(r->cells, ks, MAX_KERNELS);
	int status = 0;

	for (size_t i = 0; i < nk && status >= 0; i++) {
		struct boot_plan b;
		int rc;

		if (make_boot_plan(r, ks[i], &b) < 0) {
			boot_plan_free(&b);
			cli_error("out of memory");
			return -1;
		}
		rc = b.norder ? boot_once(r, &b) : 0;
		boot_plan_free(&b);
		if (rc < 0)
			status = -1;
		else if (rc > 0)
			status = 1;
	}
	return status;
}
