#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "common/commands.h"
#include "matrix_cmd.h"

/*
 * cowbench matrix: enumerate every cell first, then run them one rep at a
 * time, appending (and fsyncing) each finished rep so a crash costs at
 * most the rep in flight. An axis is any `cowbench run` option: each cell
 * is a list of NAME=VALUE pairs applied through run's own option table.
 */
int cmd_matrix(int argc, char **argv)
{
	struct matrix_opts o = { .reps = -1, .warmup = -1, .format = CLI_FORMAT_AUTO, .out_fd = -1 };
	struct matrix_plan p;
	int argi, status = EXIT_USAGE;

	memset(&p, 0, sizeof(p));
	cli_run_spec_init(&p.ctx);
	cb_matrix_init(&o.m);
	o.typed_argc = argc;
	o.typed_argv = malloc(((size_t)argc + 1) * sizeof(*argv)); /* as typed: the parser moves the operands */
	if (!o.typed_argv) {
		cli_error("out of memory");
		goto out;
	}
	memcpy(o.typed_argv, argv, ((size_t)argc + 1) * sizeof(*argv));
	argi = matrix_parse_args(argc, argv, &o);
	if (argi < 0)
		goto out;
	if (o.plan && (o.file || o.any_axis || o.resume || o.shuffle || o.shard_n || o.order_given)) {
		cli_error("--plan is the whole matrix: no axes, file, --resume, --shuffle, --order or --shard with it");
		goto out;
	}
	if (o.plan && matrix_load_plan(&o) < 0)
		goto out;
	/* A --plan guest writes to a serial port, a terminal the host reads as CSV. */
	o.format = o.plan && o.format == CLI_FORMAT_AUTO ? CB_FORMAT_CSV :
		   cli_format_resolve(o.format, o.output ? o.output : o.resume);
	if ((o.file && matrix_load_file(&o) < 0) || (!o.file && !o.any_axis && matrix_set_default(&o) < 0) ||
	    matrix_check_combination(&o) < 0 || matrix_resolve_axes(&o) < 0 || matrix_plan_build(&o, &p) < 0)
		goto out;
	if (matrix_adaptive_on_host_only(&o, &p) < 0 || matrix_pair_baselines(&o, &p) < 0 || matrix_lock_results(&o) < 0 ||
	    (o.resume && matrix_plan_resume(&o, &p) < 0))
		goto out;
	if (o.dry_run) {
		matrix_plan_print(&o, &p);
		status = 0;
		goto out;
	}
	if (!o.plan && mk_check_builds(&p.cells, o.build) < 0)
		goto out;
	status = matrix_run_plan(&o, &p);
out:
	if (o.out_fd >= 0) /* nothing was measured: a file this run created goes again */
		cli_output_discard(o.resume ? o.resume : o.output, o.out_fd, o.out_created);
	mk_plan_free(&o.plan_lines);
	matrix_plan_free(&p);
	cb_matrix_free(&o.m);
	free(o.typed_argv);
	return status;
}
