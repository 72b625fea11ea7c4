/*
 * fork: how long fork() takes for a parent whose populated private memory
 * is --size (the CASPER study's question). fork copies the page tables of
 * every populated page, so its cost grows with size; vfork, posix_spawn
 * and clone(CLONE_VM) share the address space and do not.
 */
#include "wlutil.h"

#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

#define SPAWN_PROGRAM "/bin/true"
#define CLONE_STACK (64u << 10)

/* What the child writes for the parent: stamps on a MAP_SHARED page. */
struct fork_stamps {
	volatile uint64_t start; /* first instruction in the child */
	volatile uint64_t exit;  /* just before _exit */
};

struct fork_times {
	uint64_t call, ret, wait_begin, reaped;
	pid_t pid;
	int wstatus;
};

static void child_stamp(struct fork_stamps *st)
{
	st->start = wl_now();
	st->exit = wl_now();
}

static int do_fork(struct fork_stamps *st, struct fork_times *t)
{
	t->call = wl_now();
	t->pid = fork();
	if (t->pid == 0) {
		child_stamp(st);
		_exit(0);
	}
	t->ret = wl_now();
	return t->pid < 0 ? -errno : 0;
}

/* The vfork child borrows the parent's stack: it only stamps and leaves. */
static __attribute__((noinline)) int do_vfork(struct fork_stamps *st, struct fork_times *t)
{
	t->call = wl_now();
	pid_t pid = vfork();

	if (pid == 0) {
		st->start = wl_now();
		st->exit = wl_now();
		_exit(0);
	}
	t->ret = wl_now();
	t->pid = pid;
	return pid < 0 ? -errno : 0;
}

static int clone_child(void *arg)
{
	child_stamp(arg);
	return 0;
}

static int do_clone_vm(struct fork_stamps *st, struct fork_times *t)
{
	char *stack = mmap(NULL, CLONE_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			   -1, 0);

	if (stack == MAP_FAILED)
		return -errno;
	t->call = wl_now();
	t->pid = clone(clone_child, stack + CLONE_STACK, CLONE_VM | SIGCHLD, st);
	t->ret = wl_now();
	if (t->pid < 0) {
		int err = -errno;

		munmap(stack, CLONE_STACK);
		return err;
	}
	/* The child runs on the stack until it exits: reap before unmapping it. */
	t->wait_begin = wl_now();
	while (waitpid(t->pid, &t->wstatus, 0) < 0 && errno == EINTR)
		;
	t->reaped = wl_now();
	munmap(stack, CLONE_STACK);
	return 0;
}

static int do_spawn(struct fork_times *t)
{
	char *argv[] = { (char *)SPAWN_PROGRAM, NULL };
	int err;

	t->call = wl_now();
	err = posix_spawn(&t->pid, SPAWN_PROGRAM, NULL, NULL, argv, environ);
	t->ret = wl_now();
	return -err;
}

static int make_child(enum cb_fork_method m, struct fork_stamps *st, struct fork_times *t)
{
	int err;

	switch (m) {
	case CB_FORKM_FORK:
		err = do_fork(st, t);
		break;
	case CB_FORKM_VFORK:
		err = do_vfork(st, t);
		break;
	case CB_FORKM_POSIX_SPAWN:
		err = do_spawn(t);
		break;
	case CB_FORKM_CLONE_VM:
		return do_clone_vm(st, t); /* reaps the child itself */
	default:
		return -EINVAL;
	}
	if (err)
		return err;
	t->wait_begin = wl_now();
	while (waitpid(t->pid, &t->wstatus, 0) < 0 && errno == EINTR)
		;
	t->reaped = wl_now();
	return 0;
}

static void fill_row(struct cb_row *row, const struct cb_run_spec *spec, const struct fork_stamps *st,
		     const struct fork_times *t)
{
	bool stamped = spec->params.fork_method != CB_FORKM_POSIX_SPAWN && st->start;

	row->fork_ns = (int64_t)(t->ret - t->call);
	row->child_start_ns = stamped ? (int64_t)(st->start - t->call) : CB_NA;
	row->child_exit_ns = stamped ? (int64_t)(t->reaped - st->exit) : CB_NA;
	row->wait_ns = (int64_t)(t->reaped - t->wait_begin);
	row->elapsed_ns = (int64_t)(t->reaped - t->call);
	row->ms_per_gib = (double)row->fork_ns / 1e6 / ((double)spec->size / (double)(1ull << 30));
	if (WIFSIGNALED(t->wstatus))
		wl_status(row, "child-killed:%s", sigabbrev_np(WTERMSIG(t->wstatus)));
	else if (WEXITSTATUS(t->wstatus))
		wl_status(row, "child-exit:%d", WEXITSTATUS(t->wstatus));
	else
		wl_status(row, "ok");
}

static int fork_run(void *state, const struct cb_run_spec *spec, struct cb_row *row)
{
	struct fork_stamps *st;
	struct fork_times t = { 0 };
	struct cb_region r;
	int err;

	(void)state;
	snprintf(row->method, sizeof(row->method), "%s", cb_fork_method_name(spec->params.fork_method));
	row->dontfork_bytes = (int64_t)spec->params.dontfork;
	row->wipeonfork_bytes = (int64_t)spec->params.wipeonfork;
	if (spec->params.fork_method == CB_FORKM_POSIX_SPAWN && access(SPAWN_PROGRAM, X_OK) < 0) {
		wl_status(row, "unsupported:posix_spawn:no %s", SPAWN_PROGRAM);
		return -ENOENT;
	}
	err = cb_numa_run_on(spec->params.cpunodebind);
	if (err) {
		wl_status(row, "error:cpunodebind:%s", cb_strerror(err));
		return err;
	}
	err = wl_region_prepare(spec, row, &r, 0);
	if (err)
		return err;
	st = wl_shared_map(sizeof(*st));
	if (!st) {
		err = -errno;
		wl_status(row, "error:mmap:%s", cb_strerror(err));
		cb_region_unmap(&r);
		return err;
	}
	err = make_child(spec->params.fork_method, st, &t);
	if (err)
		wl_status(row, "error:%s:%s", cb_fork_method_name(spec->params.fork_method), cb_strerror(err));
	else
		fill_row(row, spec, st, &t);
	munmap(st, sizeof(*st));
	cb_region_unmap(&r);
	if (!err && strcmp(row->status, "ok") != 0)
		err = CB_ECHILD;
	return err;
}

const struct cb_workload cb_workload_fork = {
	.abi = CB_WORKLOAD_ABI,
	.name = "fork",
	.help = "fork latency vs. populated size: fork, vfork, posix_spawn or clone-vm (--method)",
	.run = fork_run,
};
