#include <stdio.h>
#include <string.h>

#include <cowbench/cowbench.h>

/* One seq repetition of 64 pages through the installed library. */
int main(void)
{
	struct cb_clock clk;
	struct cb_row row;
	struct cb_run_spec spec = {
		.workload = cb_workload_find("seq"), .size = 64 * 4096, .page_size = 4096,
		.writer = CB_WRITER_CHILD, .fork = true, .cpu = -1, .seed = 1, .clock = &clk,
	};

	if (strcmp(cb_version(), CB_VERSION_STRING) != 0 || cb_clock_init(&clk, CB_CLOCK_AUTO) < 0)
		return 1;
	if (cb_run_rep(&spec, 1, &row) < 0 || row.faults < 64)
		return 1;
	printf("consumer: %s %lld pages, %lld faults\n", row.workload, (long long)row.pages, (long long)row.faults);
	return 0;
}
