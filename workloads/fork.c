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

/** How the child is made. */
enum fork_method {
	FORKM_FORK = 0,
	FORKM_VFORK,
	FORKM_POSIX_SPAWN, /* /bin/true: glibc spawns with CLONE_VM|CLONE_VFORK */
	FORKM_CLONE_VM,    /* clone(CLONE_VM|SIGCHLD): shares the address space */
};

static const char *const fork_methods[] = { "fork", "vfork", "posix_spawn", "clone-vm", NULL };

struct fork_opts {
	unsigned method;     /* enum fork_method */
	uint64_t dontfork;   /* bytes at the region's start marked MADV_DONTFORK */
	uint64_t wipeonfork; /* bytes after those marked MADV_WIPEONFORK */
};

static const struct cb_option fork_options[] = {
	{ .name = "method", .type = CB_OPT_ENUM, .offset = offsetof(struct fork_opts, method),
	  .names = fork_methods, .help = "how the child is made" },
	{ .name = "dontfork", .type = CB_OPT_SIZE, .offset = offsetof(struct fork_opts, dontfork),
	  .max = UINT64_MAX, .help = "mark the region's first SIZE bytes MADV_DONTFORK" },
	{ .name = "wipeonfork", .type = CB_OPT_SIZE, .offset = offsetof(struct fork_opts, wipeonfork),
	  .max = UINT64_MAX, .help = "mark the next SIZE bytes MADV_WIPEONFORK" },
	{ 0 },
};

#define OPTS(spec) CB_WL_OPTS(&(spec)->opts, struct fork_opts)

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
	(void)cb_wait_status(t->pid, &t->wstatus);
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

static int make_child(unsigned m, struct fork_stamps *st, struct fork_times *t)
{
	int err;

	switch (m) {
	case FORKM_FORK:
		err = do_fork(st, t);
		break;
	case FORKM_VFORK:
		err = do_vfork(st, t);
		break;
	case FORKM_POSIX_SPAWN:
		err = do_spawn(t);
		break;
	case FORKM_CLONE_VM:
		return do_clone_vm(st, t); /* reaps the child itself */
	default:
		return -EINVAL;
	}
	if (err)
		return err;
	t->wait_begin = wl_now();
	(void)cb_wait_status(t->pid, &t->wstatus);
	t->reaped = wl_now();
	return 0;
}

static void fill_row(struct cb_row *row, const struct cb_run_spec *spec, const struct fork_stamps *st,
		     const struct fork_times *t)
{
	bool stamped = OPTS(spec)->method != FORKM_POSIX_SPAWN && st->start;

	row->fork_ns = (int64_t)(t->ret - t->call);
	row->child_start_ns = stamped ? (int64_t)(st->start - t->call) : CB_NA;
	row->child_exit_ns = stamped ? (int64_t)(t->reaped - st->exit) : CB_NA;
	row->wait_ns = (int64_t)(t->reaped - t->wait_begin);
	row->elapsed_ns = (int64_t)(t->reaped - t->call);
	row->ms_per_gib = (double)row->fork_ns / 1e6 / ((double)spec->size / (double)(1ull << 30));
	(void)cb_status_from_wait(t->wstatus, row->status, sizeof(row->status));
}

static int fork_run(const struct cb_run_spec *spec, struct cb_row *row)
{
	const struct fork_opts *o = OPTS(spec);
	struct cb_run_spec region = *spec; /* the region with this workload's madvise ranges */
	struct fork_stamps *st;
	struct fork_times t = { 0 };
	struct cb_region r;
	int err;

	snprintf(row->method, sizeof(row->method), "%s", fork_methods[o->method]);
	row->dontfork_bytes = (int64_t)o->dontfork;
	row->wipeonfork_bytes = (int64_t)o->wipeonfork;
	region.params.dontfork = o->dontfork;
	region.params.wipeonfork = o->wipeonfork;
	if (o->method == FORKM_POSIX_SPAWN && access(SPAWN_PROGRAM, X_OK) < 0) {
		wl_status(row, "unsupported:posix_spawn:no %s", SPAWN_PROGRAM);
		return -ENOENT;
	}
	err = cb_numa_run_on(spec->params.cpunodebind);
	if (err) {
		wl_status(row, "error:cpunodebind:%s", cb_strerror(err));
		return err;
	}
	err = wl_region_prepare(&region, row, &r, 0);
	if (err)
		return err;
	st = wl_shared_map(sizeof(*st));
	if (!st) {
		err = -errno;
		wl_status(row, "error:mmap:%s", cb_strerror(err));
		cb_region_unmap(&r);
		return err;
	}
	err = make_child(o->method, st, &t);
	if (err)
		wl_status(row, "error:%s:%s", fork_methods[o->method], cb_strerror(err));
	else
		fill_row(row, spec, st, &t);
	munmap(st, sizeof(*st));
	cb_region_unmap(&r);
	if (!err && strcmp(row->status, "ok") != 0)
		err = CB_ECHILD;
	return err;
}

/* The madvise ranges must be whole pages inside the region, and hugetlb has neither. */
static int fork_check(const struct cb_run_spec *spec, char *why, size_t len)
{
	const struct fork_opts *o = OPTS(spec);

	if (spec->params.hugetlb && (o->dontfork || o->wipeonfork)) {
		snprintf(why, len, "--dontfork/--wipeonfork work on THP or 4K pages, not with --hugetlb");
		return -EINVAL;
	}
	if (o->dontfork % spec->page_size || o->wipeonfork % spec->page_size) {
		snprintf(why, len, "--dontfork and --wipeonfork must be multiples of the page size");
		return -EINVAL;
	}
	if (o->dontfork > spec->size || o->wipeonfork > spec->size - o->dontfork) {
		snprintf(why, len, "--dontfork plus --wipeonfork must not exceed --size");
		return -EINVAL;
	}
	return 0;
}

const struct cb_workload cb_workload_fork = {
	.abi = CB_WORKLOAD_ABI,
	.name = "fork",
	.help = "fork latency vs. populated size: fork, vfork, posix_spawn or clone-vm (--method)",
	.run = fork_run,
	.check = fork_check,
	.options = fork_options,
	.options_size = sizeof(struct fork_opts),
	.matrix = "size=16M,64M,256M",
};
