/* cowbench run --explain: the "where" line (see explain_where.h). */
#include <math.h>

#include "trial/delayacct.h"
#include "explain_where.h"

void cli_explain_where(FILE *fp, double region_copies, double writer_copies, double precopied)
{
	double ahead = isnan(precopied) ? 0 : precopied;

	if (isnan(region_copies) || isnan(writer_copies)) {
		long holder = cli_delayacct_holder();

		if (holder)
			fprintf(fp, "  where: not measured here (taskstats: kernel.task_delayacct is held off by another "
				    "cowbench, PID %ld)\n", holder);
		else
			fprintf(fp, "  where: not measured here (needs pagemap frames and taskstats: root, and a fork)\n");
		return;
	}
	if (ahead > 0 && region_copies <= writer_copies + ahead) {
		fprintf(fp, "  where: %.0f pages of the region have their own copy: the writer's %.0f COW faults copied "
			    "some, pre-copy the rest (%.0f pages copied ahead) [pagemap / taskstats / /proc/cow_stats]\n",
			region_copies, writer_copies, ahead);
		return;
	}
	if (writer_copies + ahead < region_copies || writer_copies <= 0) {
		fprintf(fp, "  where: pagemap found %.0f copies in the region but taskstats %.0f for the whole writer: "
			    "inconsistent (was kernel.task_delayacct switched off during the run?)\n",
			region_copies, writer_copies);
		return;
	}
	fprintf(fp, "  where: %.0f of the writer's %.0f COW copies (%.1f %%) in the region mapping, %.0f elsewhere "
		    "(its stack, libc and loader data) [pagemap in the region / taskstats for the writer]\n",
		region_copies, writer_copies, 100.0 * region_copies / writer_copies, writer_copies - region_copies);
}
