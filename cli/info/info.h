/* cowbench info's parts: the lines each file of cli/info adds. */
#ifndef COWBENCH_CLI_INFO_H
#define COWBENCH_CLI_INFO_H

#include <stdbool.h>

/* cowbench info's lines on instrumentation on system-wide that taxes every fault (instrumentation.c). */
void cli_instrumentation_info(void);
/* cowbench info's lines on the stock-kernel probes: which can measure here, and if not, why (instrumentation.c). */
void cli_evidence_info(void);
/* cowbench info's lines on the matrix's --kernel guests (guest_info.c): can QEMU run them here, and if not, why. */
void cli_guest_info(void);
/* cowbench info: what on this machine adds noise and could be tuned (info_tune.c). */
void cli_info_tuning(void);

/* cowbench info: the first write to a populated page against a second one, and other hypervisor effects (info_vm.c). */
void cli_info_vm(void);
/* The medians (ns) of a first and a second write to pages the kernel just populated; 0, or -1 when not measured. */
int cli_first_touch(double *first_ns, double *second_ns);
/* What cli_info_vm measured (false: nothing). */
bool cli_info_first_touch(double *first_ns, double *second_ns);
/* Are those the host's first-touch trap (lazily backed guest memory)? */
bool cli_first_touch_lazy(double first_ns, double second_ns);

#endif
