/* cowbench info's parts: the lines each file of cli/info adds. */
#ifndef COWBENCH_CLI_INFO_H
#define COWBENCH_CLI_INFO_H

/* cowbench info's lines on instrumentation on system-wide that taxes every fault (instrumentation.c). */
void cli_instrumentation_info(void);
/* cowbench info's lines on the stock-kernel probes: which can measure here, and if not, why (instrumentation.c). */
void cli_evidence_info(void);
/* cowbench info's lines on the matrix's --kernel guests (guest_info.c): can QEMU run them here, and if not, why. */
void cli_guest_info(void);
/* cowbench info: what on this machine adds noise and could be tuned (info_tune.c). */
void cli_info_tuning(void);

#endif
