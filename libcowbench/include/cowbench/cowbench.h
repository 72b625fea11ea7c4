/* libcowbench: measure what copy-on-write costs after fork(). */
#ifndef COWBENCH_COWBENCH_H
#define COWBENCH_COWBENCH_H

#include <cowbench/version.h>
#include <cowbench/error.h>
#include <cowbench/array.h>
#include <cowbench/clock.h>
#include <cowbench/size.h>
#include <cowbench/stats.h>
#include <cowbench/hist.h>
#include <cowbench/sysctl.h>
#include <cowbench/cowstats.h>
#include <cowbench/sysinfo.h>
#include <cowbench/touch.h>
#include <cowbench/workload.h>
#include <cowbench/report.h>
#include <cowbench/run.h>
#include <cowbench/evidence.h> /* taskstats, pagemap, smaps, perfcount */
#include <cowbench/costs.h>
#include <cowbench/project.h>
#include <cowbench/params.h>
#include <cowbench/numa.h>
#include <cowbench/hugepage.h>
#include <cowbench/units.h>
#include <cowbench/output.h>
#include <cowbench/vmas.h>
#include <cowbench/wpfault.h>
#include <cowbench/noise.h>
#include <cowbench/adaptive.h>
#include <cowbench/reploop.h> /* the repetition loop of run and matrix */

#endif
