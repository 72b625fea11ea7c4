/*
 * cowbench run --kernel=K: the run happens in a QEMU guest of K. A run is a
 * matrix of one cell: its options given become the cell's pairs (kernel=K
 * first), and the guest driver the matrix's kernel axis uses
 * (guest/kernel_axis.h) boots K once, carries the inputs in (replay's
 * --trace) and brings the rows back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>
#include <cowbench/matrix.h>
#include <cowbench/order.h>

#include "common/diag.h"
#include "guest/kernel_axis.h"
#include "run_cmd.h"
#include "trial/axis_values.h"

int run_guest_plan(const struct run_opts *o, const struct run_given *given, struct run_guest *g)
{
	char why[256];
	int err;

	memset(g, 0, sizeof(*g));
	cb_matrix_init(&g->m);
	if (strchr(o->kernel, ',')) {
		cli_error("cowbench run --kernel takes one kernel, not '%s': cowbench matrix --kernel=%s compares them",
			  o->kernel, o->kernel);
		return -1;
	}
	if (o->explain || o->samples || o->prefault) {
		cli_error("%s is not available with --kernel (it reads the host's own run)",
			  o->explain ? "--explain" : o->samples ? "--samples" : "--prefault");
		return -1;
	}
	if (o->adaptive.target > 0) {
		cli_error("--target-ci runs on the host only: a --kernel guest runs a fixed plan of reps (use --reps)");
		return -1;
	}
	err = cb_matrix_set_axis(&g->m, "", MK_AXIS, o->kernel, why, sizeof(why));
	for (int i = 0; !err && i < given->n; i++)
		err = cb_matrix_set_axis(&g->m, "", given->pair[i].name, given->pair[i].value, why, sizeof(why));
	if (!err)
		err = cli_canonical_axes(&g->m);
	if (!err) {
		cb_matrix_sort_axes(&g->m, cli_run_axis_rank);
		err = cb_matrix_cells(&g->m, &g->cells, why, sizeof(why));
	}
	if (err) {
		cli_error("%s", err == -ENOMEM ? "out of memory" : why);
		return -1;
	}
	if (g->cells.n != 1) { /* a value with a comma (a node list) would make several */
		cli_error("cowbench run --kernel runs one cell: a comma in an option's value makes several "
			  "(cowbench matrix runs them)");
		return -1;
	}
	mk_collapse(&g->cells, &g->collapsed); /* pre-copy's axes where K has no pre-copy */
	for (size_t i = 0; i < g->collapsed.n; i++)
		cli_note("%s", g->collapsed.line[i]);
	if (mk_check_values(&g->cells) < 0 || mk_check_builds(&g->cells, o->build) < 0)
		return -1;
	g->done = calloc((size_t)o->reps, 1);
	if (!g->done) {
		cli_error("out of memory");
		return -1;
	}
	return 0;
}

int run_guest_reps(const struct run_opts *o, struct run_guest *g, const struct cb_run_spec *spec,
		   struct cb_report *rep)
{
	struct mk_run r = { .cells = &g->cells, .spec = spec, .done = g->done, .reps = o->reps, .warmup = o->warmup,
			    .order = CB_ORDER_INTERLEAVED, .report = rep,
			    .progress = cli_progress_enabled() && !o->quiet };
	int rc = mk_run_guests(&r);

	cli_progress_clear();
	return rc < 0 ? EXIT_RUN_FAILED : rc > 0 ? 1 : 0;
}

void run_guest_free(struct run_guest *g)
{
	free(g->done);
	cb_cells_free(&g->cells);
	cb_matrix_free(&g->m);
}
