/* cowbench run --explain: the "where" line (see explain_where.h). */
#include <math.h>

#include "explain_where.h"

void cli_explain_where(FILE *fp, double region_copies, double writer_copies)
{
	if (isnan(region_copies) || isnan(writer_copies)) {
		fprintf(fp, "  where: not measured here (needs pagemap frames and taskstats: root, and a fork)\n");
		return;
	}
	if (writer_copies < region_copies || writer_copies <= 0) {
		fprintf(fp, "  where: pagemap found %.0f copies in the region but taskstats %.0f for the whole writer: "
			    "inconsistent (was kernel.task_delayacct switched off during the run?)\n",
			region_copies, writer_copies);
		return;
	}
	fprintf(fp, "  where: %.0f of the writer's %.0f COW copies (%.1f %%) in the region mapping, %.0f elsewhere "
		    "(its stack, libc and loader data) [pagemap in the region / taskstats for the writer]\n",
		region_copies, writer_copies, 100.0 * region_copies / writer_copies, writer_copies - region_copies);
}
