/* stat and record's watched COMMAND or PID: started held, waited on, released (spawn.c; the target check in args.c). */
#ifndef COWBENCH_CLI_SPAWN_H
#define COWBENCH_CLI_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * stat and record watch -p PID or -- COMMAND: argv[argi..] is the command. -1 (one line printed)
 * when it came without "--" ("put the command after '--': SYNOPSIS -- CMD ...") or with a PID too.
 */
int cli_check_target(int argc, char *const *argv, int argi, bool have_pid, const char *synopsis);
/*
 * stat and record's COMMAND, started held before exec (spawn.c): it runs once
 * go_fd is written. With err_fd, an exec failure comes back through it
 * (cli_release_held: 0 once the command runs, else its errno, the child
 * reaped); without, the child says it on stderr and exits 127. -1: no fork.
 */
pid_t cli_spawn_held(char **argv, int *go_fd, int *err_fd);
/*
 * Sleep up to seconds for stat and record: 1 as soon as pidfd (the root,
 * -1: none) ends; 0 at the timeout, or with *rung set as soon as a process
 * forks or exits (wp's bells, cb_wpfault_task_fds): the caller then
 * drains at once, and a fork's page map is read while its process runs.
 */
#define CLI_MAX_BELLS 256
struct cb_wpfault;
int cli_wait_watched(int pidfd, struct cb_wpfault *wp, double seconds, bool *rung);
/* The same, also woken (*ready set) when extra_fd (-1: none) has data: stat's taskstats exit records. */
int cli_wait_watched_fd(int pidfd, struct cb_wpfault *wp, int extra_fd, double seconds, bool *rung, bool *ready);
int cli_release_held(pid_t pid, int go_fd, int err_fd);
/* Seconds on CLOCK_MONOTONIC: when stat and record sample and stop. */
double cli_now_s(void);

#endif
