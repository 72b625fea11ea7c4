/* What a run changes on the system is put back: sysctls, temporary files, the override journal (args.c, guard.c). */
#ifndef COWBENCH_CLI_GUARD_H
#define COWBENCH_CLI_GUARD_H



/*
 * Set a kernel knob for this run (value < 0: leave it). The old value
 * is put back at exit and on SIGINT/SIGTERM/SIGHUP. -1 after printing why.
 */
int cli_apply_sysctl(const char *option, const char *path, long value);
/* Put back, at exit and on those signals, what the library changed with cb_sysctl_override. */
void cli_restore_sysctls_at_exit(void);
/* Text written to stderr when one of those signals stops the program (NULL: none); kept by the caller. */
void cli_set_interrupt_note(const char *text);
/*
 * A temporary file or directory (given after its files) that one of those
 * signals removes before the program dies (up to 8); cleared once the
 * caller has removed them itself.
 */
void cli_remove_on_signal(const char *path);
void cli_remove_on_signal_clear(void);
/* Before a measuring command: restore what dead runs left, hook restoring this one's changes. */
void cli_guard_start(const char *command);
/* cowbench info's line on the override journal: held, stale, or none. */
void cli_overrides_info(void);

#endif
