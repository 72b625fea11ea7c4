/*
 * snapshot: W writer threads stride over an array (element i written by
 * thread i mod W) while a checkpoint of the array as it was at snapshot
 * time is taken (seeds 001/003). --snapshot picks how:
 *   fork     a child with C threads copies batches (memcpy, then munmap of
 *            the source batch) and exits; the writers pay COW faults;
 *   uffd-wp  the array is write-protected with userfaultfd (what QEMU's
 *            background snapshot does); C copier threads save each page,
 *            a written one first, before un-protecting it;
 *   memcpy   the writers wait while C threads copy the array;
 *   none     the writers alone;
 *   fork-wait  fork, but the writers start after the child has exited:
 *            the control that shows unshared pages are reused, not copied.
 * Every rep also times the writers without a snapshot (baseline_ns).
 */
#include "wlutil.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cowbench/noise.h>
#include <cowbench/sysinfo.h>
#include <linux/userfaultfd.h>

/** How the checkpoint is taken. */
enum snapshot_method {
	CB_SNAP_FORK = 0, /* fork; a child with C threads copies and unmaps batches */
	CB_SNAP_UFFD_WP,  /* userfaultfd write-protect; copier threads save each page before its writer */
	CB_SNAP_MEMCPY,   /* stop the writers, copy, then let them go */
	CB_SNAP_NONE,     /* no snapshot: the writers alone */
	CB_SNAP_FORK_WAIT, /* fork, but the writers start once the child has copied and exited */
};

static const char *const methods[] = { "fork", "uffd-wp", "memcpy", "none", "fork-wait", NULL };

/* The seed's snapshot: 28 writers, 4 checkpointers, 2 MiB batches. */
struct snapshot_opts {
	unsigned threads;       /* writer threads (W) */
	unsigned checkpointers; /* copier threads (C) */
	uint64_t batch;         /* bytes per copy batch, whole pages */
	unsigned snapshot;      /* enum snapshot_method */
};

static const struct cb_option snapshot_options[] = {
	{ .name = "threads", .type = CB_OPT_UINT, .offset = offsetof(struct snapshot_opts, threads),
	  .min = 1, .max = 1024, .def = 28, .help = "writer threads" },
	{ .name = "checkpointers", .type = CB_OPT_UINT, .offset = offsetof(struct snapshot_opts, checkpointers),
	  .min = 1, .max = 1024, .def = 4, .help = "copier threads" },
	{ .name = "batch", .type = CB_OPT_SIZE, .offset = offsetof(struct snapshot_opts, batch),
	  .min = 1, .max = 1ull << 40, .def = 2u << 20, .help = "bytes per copy batch, a multiple of the page size" },
	{ .name = "snapshot", .type = CB_OPT_ENUM, .offset = offsetof(struct snapshot_opts, snapshot),
	  .names = methods, .help = "how the checkpoint is taken" },
	{ 0 },
};

#define OPTS(spec) CB_WL_OPTS(&(spec)->opts, struct snapshot_opts)

/* Everything one snapshot run shares between its threads. */
struct snap {
	const struct cb_run_spec *spec;
	uint64_t *array;
	char *cp;              /* the checkpoint (MAP_SHARED: the fork child writes it for us) */
	size_t npages, nelems, page_size;
	pthread_mutex_t lock;  /* writers start together with the timer: */
	pthread_cond_t cond;   /* they wait for go (1) or abort (-1) */
	int go;
	int64_t writer_wait_ns; /* the writers' run_delay, both phases (atomic; -1: unknown) */
	/* uffd-wp */
	int uffd;
	uint8_t *state;        /* per page: 0 unsaved, 1 being saved, 2 saved */
	uint8_t *saves;        /* per page: how many times it was saved (must end at 1) */
	size_t saved;          /* pages saved so far (atomic) */
	uint64_t wp_faults;    /* atomic */
	uint64_t copied_at;    /* when the last page was saved */
	int copier_err;
};

/* What the fork child hands back (in MAP_SHARED memory). */
struct child_report {
	uint64_t copy_begin, copy_end;
	uint64_t pages;        /* atomic */
};

struct copier_arg {
	struct snap *s;
	unsigned id;
	struct child_report *rep;
};

static uint64_t written_value(size_t i)
{
	return ~(uint64_t)i;
}

static void fill_array(struct snap *s)
{
	for (size_t i = 0; i < s->nelems; i++)
		s->array[i] = wl_pattern(i);
}

/* ---- writers ---- */

struct writer_arg {
	struct snap *s;
	unsigned id;
};

static void *writer(void *p)
{
	struct writer_arg *a = p;
	struct snap *s = a->s;
	size_t w = OPTS(s->spec)->threads;
	int64_t wait0, wait1;

	pthread_mutex_lock(&s->lock);
	while (!s->go)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	if (s->go < 0)
		return NULL;
	wait0 = cb_thread_run_delay_ns();
	for (size_t i = a->id; i < s->nelems; i += w)
		s->array[i] = written_value(i);
	wait1 = cb_thread_run_delay_ns();
	if (wait0 >= 0 && wait1 >= wait0)
		__atomic_add_fetch(&s->writer_wait_ns, wait1 - wait0, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&s->writer_wait_ns, INT64_MIN / 2, __ATOMIC_RELAXED); /* stays negative */
	return NULL;
}

/* Start the writers, return when all are done: start and end stamps (ns). */
static int run_writers(struct snap *s, uint64_t *start, uint64_t *end, void (*during)(struct snap *, void *),
		       void *arg)
{
	unsigned w = OPTS(s->spec)->threads, made = 0;
	pthread_t *tid = calloc(w, sizeof(*tid));
	struct writer_arg *wa = calloc(w, sizeof(*wa));
	int err = 0;

	if (!tid || !wa) {
		free(tid);
		free(wa);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->go = 0;
	for (; made < w; made++) {
		wa[made] = (struct writer_arg){ s, made };
		err = -pthread_create(&tid[made], NULL, writer, &wa[made]);
		if (err)
			break;
	}
	pthread_mutex_lock(&s->lock);
	s->go = err ? -1 : 1;
	*start = wl_now();
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (!err && during)
		during(s, arg);
	for (unsigned i = 0; i < made; i++)
		pthread_join(tid[i], NULL);
	*end = wl_now();
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(tid);
	free(wa);
	return err;
}

/* ---- checks ---- */

static bool checkpoint_ok(const struct snap *s)
{
	const uint64_t *cp = (const uint64_t *)s->cp;

	for (size_t i = 0; i < s->nelems; i++)
		if (cp[i] != wl_pattern(i))
			return false;
	return true;
}

static bool writes_ok(const struct snap *s)
{
	for (size_t i = 0; i < s->nelems; i++)
		if (s->array[i] != written_value(i))
			return false;
	return true;
}

/* ---- fork: the child copies batches and unmaps them ---- */

static void *child_copier(void *p)
{
	struct copier_arg *a = p;
	struct snap *s = a->s;
	size_t size = s->spec->size, batch = OPTS(s->spec)->batch, nb = (size + batch - 1) / batch;
	unsigned c = OPTS(s->spec)->checkpointers;

	for (size_t b = a->id; b < nb; b += c) {
		size_t off = b * batch, len = size - off < batch ? size - off : batch;

		memcpy(s->cp + off, (char *)s->array + off, len);
		munmap((char *)s->array + off, len);
		__atomic_add_fetch(&a->rep->pages, len / s->page_size, __ATOMIC_RELAXED);
	}
	return NULL;
}

static __attribute__((noreturn)) void child_main(struct snap *s, struct child_report *rep)
{
	unsigned c = OPTS(s->spec)->checkpointers;
	pthread_t tid[c];
	struct copier_arg ca[c];
	unsigned made = 0;

	if (wl_child_numa(s->spec, s->array, s->spec->size) < 0)
		_exit(4);
	rep->copy_begin = wl_now();
	for (; made < c; made++) {
		ca[made] = (struct copier_arg){ s, made, rep };
		if (pthread_create(&tid[made], NULL, child_copier, &ca[made]) != 0)
			_exit(3);
	}
	for (unsigned i = 0; i < made; i++)
		pthread_join(tid[i], NULL);
	rep->copy_end = wl_now();
	_exit(0);
}

struct reaper {
	pid_t pid;
	int wstatus;
	uint64_t reaped;
	pthread_t tid;
	bool started;
};

/* Reap the child while the writers work (the seed's childWaitThread). */
static void *reap(void *p)
{
	struct reaper *r = p;

	(void)cb_wait_status(r->pid, &r->wstatus);
	r->reaped = wl_now();
	return NULL;
}

static void start_reaper(struct snap *s, void *arg)
{
	struct reaper *r = arg;

	(void)s;
	r->started = pthread_create(&r->tid, NULL, reap, r) == 0; /* else reaped after the writers */
}

static int snap_fork(struct snap *s, struct cb_row *row, uint64_t *start, uint64_t *end)
{
	struct child_report *rep = wl_shared_map(sizeof(*rep));
	struct reaper r = { 0 };
	char how[CB_STATUS_LEN];
	int err;

	if (!rep)
		return -errno;
	r.pid = fork();
	if (r.pid < 0) {
		err = -errno;
		munmap(rep, sizeof(*rep));
		return err;
	}
	if (r.pid == 0)
		child_main(s, rep);
	if (OPTS(s->spec)->snapshot == CB_SNAP_FORK_WAIT) {
		/* Every page is the parent's alone before its first write: the control for COW reuse. */
		uint64_t forked = wl_now();

		reap(&r);
		err = run_writers(s, start, end, NULL, NULL);
		row->reunite_ns = (int64_t)(r.reaped - forked);
	} else {
		err = run_writers(s, start, end, start_reaper, &r);
		if (r.started)
			pthread_join(r.tid, NULL);
		else
			reap(&r);
		row->reunite_ns = (int64_t)(r.reaped - *start);
	}
	if (rep->copy_end)
		row->copy_ns = (int64_t)(rep->copy_end - rep->copy_begin);
	row->saved_pages = (int64_t)rep->pages;
	if (cb_status_from_wait(r.wstatus, how, sizeof(how)) < 0)
		wl_status(row, "%s", how); /* "not-run" stays until the checks below pass */
	munmap(rep, sizeof(*rep));
	return err;
}

/* ---- memcpy: stop the writers, copy, go ---- */

static void *plain_copier(void *p)
{
	struct copier_arg *a = p;
	struct snap *s = a->s;
	size_t size = s->spec->size, batch = OPTS(s->spec)->batch, nb = (size + batch - 1) / batch;

	for (size_t b = a->id; b < nb; b += OPTS(s->spec)->checkpointers) {
		size_t off = b * batch, len = size - off < batch ? size - off : batch;

		memcpy(s->cp + off, (char *)s->array + off, len);
	}
	return NULL;
}

/* Run C copier threads over the array with fn; returns when all are done. */
static int run_copiers(struct snap *s, void *(*fn)(void *))
{
	unsigned c = OPTS(s->spec)->checkpointers, made = 0;
	pthread_t *tid = calloc(c, sizeof(*tid));
	struct copier_arg *ca = calloc(c, sizeof(*ca));
	int err = 0;

	if (!tid || !ca) {
		free(tid);
		free(ca);
		return -ENOMEM;
	}
	for (; made < c; made++) {
		ca[made] = (struct copier_arg){ s, made, NULL };
		err = -pthread_create(&tid[made], NULL, fn, &ca[made]);
		if (err)
			break;
	}
	for (unsigned i = 0; i < made; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	free(ca);
	return err;
}

static int snap_memcpy(struct snap *s, struct cb_row *row, uint64_t *start, uint64_t *end)
{
	uint64_t t0 = wl_now(), t1;
	int err = run_copiers(s, plain_copier);

	t1 = wl_now();
	if (err)
		return err;
	row->copy_ns = (int64_t)(t1 - t0);
	row->saved_pages = (int64_t)s->npages;
	err = run_writers(s, start, end, NULL, NULL);
	*start = t0; /* the writers' time includes the stop */
	return err;
}

/* ---- uffd-wp: write-protect, save each page before its writer goes on ---- */

static int wp_range(struct snap *s, size_t page, size_t n, bool protect)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (uintptr_t)s->array + page * s->page_size, .len = n * s->page_size },
		.mode = protect ? UFFDIO_WRITEPROTECT_MODE_WP : 0, /* un-protecting wakes the writers */
	};

	return ioctl(s->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 ? -errno : 0;
}

/* Save pages [first, first + n) that this thread claimed (state 1), then let their writers go. */
static void save_claimed(struct snap *s, size_t first, size_t n)
{
	size_t ps = s->page_size, done;
	int err;

	memcpy(s->cp + first * ps, (char *)s->array + first * ps, n * ps);
	for (size_t p = first; p < first + n; p++)
		__atomic_add_fetch(&s->saves[p], 1, __ATOMIC_RELAXED);
	err = wp_range(s, first, n, false);
	if (err)
		s->copier_err = err;
	for (size_t p = first; p < first + n; p++)
		__atomic_store_n(&s->state[p], 2, __ATOMIC_RELEASE);
	done = __atomic_add_fetch(&s->saved, n, __ATOMIC_ACQ_REL);
	if (done == s->npages)
		s->copied_at = wl_now();
}

static bool claim(struct snap *s, size_t p)
{
	uint8_t zero = 0;

	return __atomic_compare_exchange_n(&s->state[p], &zero, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* A writer hit page p: save it now unless someone has (their un-protect wakes the writer). */
static void on_fault(struct snap *s, uintptr_t addr)
{
	size_t p = (addr - (uintptr_t)s->array) / s->page_size;

	__atomic_add_fetch(&s->wp_faults, 1, __ATOMIC_RELAXED);
	if (p < s->npages && claim(s, p))
		save_claimed(s, p, 1);
}

static void drain_faults(struct snap *s)
{
	struct uffd_msg msg[16];
	ssize_t n;

	while ((n = read(s->uffd, msg, sizeof(msg))) > 0)
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(msg[0]); i++)
			if (msg[i].event == UFFD_EVENT_PAGEFAULT)
				on_fault(s, (uintptr_t)msg[i].arg.pagefault.address);
}

/* Background save of this copier's batches, serving writers' faults between batches. */
static void *wp_copier(void *p)
{
	struct copier_arg *a = p;
	struct snap *s = a->s;
	size_t bp = OPTS(s->spec)->batch / s->page_size, nb = (s->npages + bp - 1) / bp;
	unsigned c = OPTS(s->spec)->checkpointers;

	for (size_t b = a->id; b < nb; b += c) {
		size_t end = (b + 1) * bp < s->npages ? (b + 1) * bp : s->npages;

		for (size_t q = b * bp; q < end;) {
			size_t first = q;

			while (q < end && claim(s, q))
				q++;
			if (q > first)
				save_claimed(s, first, q - first);
			else
				q++; /* someone else has it */
			drain_faults(s);
		}
	}
	while (__atomic_load_n(&s->saved, __ATOMIC_ACQUIRE) < s->npages && !s->copier_err) {
		struct pollfd pfd = { .fd = s->uffd, .events = POLLIN };

		if (poll(&pfd, 1, 1) > 0)
			drain_faults(s);
	}
	return NULL;
}

static void start_wp_copiers(struct snap *s, void *arg)
{
	int *err = arg;

	*err = run_copiers(s, wp_copier);
}

/* A userfaultfd with write-protect; status says why not. */
static int open_uffd(struct cb_row *row)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0 && errno == EINVAL) /* before 5.11: no user-mode-only flag */
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int err = -errno;

		if (err == -EPERM)
			wl_status(row, "unsupported:uffd-wp:not permitted (vm.unprivileged_userfaultfd)");
		else
			wl_status(row, "unsupported:uffd-wp:userfaultfd:%s", cb_strerror(err));
		return err;
	}
	if (ioctl(fd, UFFDIO_API, &api) < 0 || !(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP)) {
		wl_status(row, "unsupported:uffd-wp:no anonymous write-protect (Linux >= 5.7)");
		close(fd);
		return -ENOTSUP;
	}
	return fd;
}

static int wp_register(struct snap *s, struct cb_row *row)
{
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)s->array, .len = s->spec->size },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	int err;

	if (ioctl(s->uffd, UFFDIO_REGISTER, &reg) < 0) {
		err = -errno;
		wl_status(row, "unsupported:uffd-wp:register:%s", cb_strerror(err));
		return err;
	}
	err = wp_range(s, 0, s->npages, true);
	if (err)
		wl_status(row, "unsupported:uffd-wp:writeprotect:%s", cb_strerror(err));
	return err;
}

static int snap_uffd(struct snap *s, struct cb_row *row, uint64_t *start, uint64_t *end)
{
	int err, copy_err = 0;

	s->uffd = open_uffd(row);
	if (s->uffd < 0)
		return s->uffd;
	s->state = calloc(s->npages, 1);
	s->saves = calloc(s->npages, 1);
	err = !s->state || !s->saves ? -ENOMEM : wp_register(s, row);
	if (!err)
		err = run_writers(s, start, end, start_wp_copiers, &copy_err);
	if (!err && (copy_err || s->copier_err))
		err = copy_err ? copy_err : s->copier_err;
	if (!err) {
		size_t once = 0;

		for (size_t p = 0; p < s->npages; p++)
			once += s->saves[p] == 1;
		row->saved_pages = (int64_t)once;
		row->wp_faults = (int64_t)s->wp_faults;
		row->copy_ns = (int64_t)(s->copied_at - *start);
		if (once != s->npages)
			wl_status(row, "error:uffd-wp:pages not saved exactly once");
	} else if (!strncmp(row->status, "not-run", 7)) {
		wl_status(row, "error:uffd-wp:%s", cb_strerror(err));
	}
	close(s->uffd); /* unregisters the range */
	free(s->state);
	free(s->saves);
	return err;
}

/* ---- one rep ---- */

static int map_array(struct snap *s, struct cb_row *row, struct cb_region *r)
{
	int err = wl_region_prepare(s->spec, row, r, 1);

	if (err)
		return err;
	s->array = r->addr;
	fill_array(s);
	return 0;
}

static int baseline(struct snap *s, struct cb_row *row)
{
	struct cb_region r;
	uint64_t t0, t1;
	int err = map_array(s, row, &r);

	if (!err)
		err = run_writers(s, &t0, &t1, NULL, NULL);
	if (!err)
		row->baseline_ns = (int64_t)(t1 - t0);
	if (!err && !writes_ok(s))
		wl_status(row, "error:verify:writes lost");
	cb_region_unmap(&r);
	return err;
}

/* Copied vs. reused: which of the parent's pages changed frame across the run (root). */
static void count_copies(const uint64_t *before, const struct snap *s, struct cb_row *row)
{
	uint64_t *after = malloc(s->npages * sizeof(*after));
	int64_t copies = 0;

	if (after && wl_pfns(s->array, s->npages, s->page_size, after) == 0) {
		for (size_t p = 0; p < s->npages; p++)
			copies += before[p] != after[p];
		row->cow_copies = copies;
		row->cow_reuses = (int64_t)s->npages - copies;
	}
	free(after);
}

static int measured(struct snap *s, struct cb_row *row, uint64_t *start, uint64_t *end)
{
	switch (OPTS(s->spec)->snapshot) {
	case CB_SNAP_FORK:
	case CB_SNAP_FORK_WAIT:
		return snap_fork(s, row, start, end);
	case CB_SNAP_UFFD_WP:
		return snap_uffd(s, row, start, end);
	case CB_SNAP_MEMCPY:
		return snap_memcpy(s, row, start, end);
	case CB_SNAP_NONE:
		return run_writers(s, start, end, NULL, NULL);
	}
	return -EINVAL;
}

static void fill_usage(struct cb_row *row, const struct rusage *a, const struct rusage *b)
{
	row->user_ns = wl_tv_ns(&b->ru_utime) - wl_tv_ns(&a->ru_utime);
	row->sys_ns = wl_tv_ns(&b->ru_stime) - wl_tv_ns(&a->ru_stime);
	row->faults = b->ru_minflt - a->ru_minflt;
}

static int snapshot_with(struct snap *s, struct cb_row *row)
{
	enum snapshot_method m = OPTS(s->spec)->snapshot;
	struct cb_region r;
	struct rusage ru0, ru1;
	uint64_t start = 0, end = 0, *pfn = NULL;
	bool have_pfn;
	char *where;
	size_t len;
	int err = map_array(s, row, &r);

	if (err)
		return err;
	s->cp = m == CB_SNAP_NONE ? NULL : wl_shared_map(s->spec->size);
	if (m != CB_SNAP_NONE && !s->cp) {
		err = -errno;
		goto out;
	}
	if (s->cp)
		memset(s->cp, 0, s->spec->size); /* populated: the copy does not pay for shmem faults */
	pfn = malloc(s->npages * sizeof(*pfn));
	have_pfn = pfn && wl_pfns(s->array, s->npages, s->page_size, pfn) == 0;
	getrusage(RUSAGE_SELF, &ru0);
	err = measured(s, row, &start, &end);
	getrusage(RUSAGE_SELF, &ru1);
	if (err)
		goto out;
	fill_usage(row, &ru0, &ru1);
	row->writer_ns = row->elapsed_ns = (int64_t)(end - start);
	if (have_pfn)
		count_copies(pfn, s, row);
	where = cb_row_room(row, &row->copy_nodes, &len); /* the rep's own buffer (CB_COL_REF) */
	if (!where || cb_numa_where(s->array, s->spec->size, s->page_size, where, len) < 0)
		row->copy_nodes = NULL;
	row->verified = writes_ok(s) && (!s->cp || checkpoint_ok(s));
out:
	free(pfn);
	if (s->cp)
		munmap(s->cp, s->spec->size);
	cb_region_unmap(&r);
	return err;
}

static int snapshot_run(const struct cb_run_spec *spec, struct cb_row *row)
{
	const struct snapshot_opts *p = OPTS(spec);
	struct snap s = {
		.spec = spec, .page_size = spec->page_size, .npages = spec->size / spec->page_size,
		.nelems = spec->size / sizeof(uint64_t), .uffd = -1,
	};
	int err;

	snprintf(row->method, sizeof(row->method), "%s", methods[p->snapshot]);
	row->threads = p->threads;
	row->checkpointers = p->snapshot == CB_SNAP_NONE ? CB_NA : p->checkpointers;
	row->batch_bytes = p->snapshot == CB_SNAP_NONE ? CB_NA : (int64_t)p->batch;
	err = cb_numa_run_on(spec->params.cpunodebind);
	if (err) {
		wl_status(row, "error:cpunodebind:%s", cb_strerror(err));
		return err;
	}
	err = p->snapshot == CB_SNAP_NONE ? 0 : baseline(&s, row);
	if (!err && strcmp(row->status, "not-run") == 0)
		err = snapshot_with(&s, row);
	if (err) {
		if (strcmp(row->status, "not-run") == 0)
			wl_status(row, "error:%s", cb_strerror(err));
		return err;
	}
	if (p->snapshot == CB_SNAP_NONE)
		row->baseline_ns = row->writer_ns;
	/* The writers' own wait for a CPU, not the coordinating thread's (cowbench/noise.h). */
	row->run_delay_ns = s.writer_wait_ns >= 0 ? s.writer_wait_ns : CB_NA;
	row->slowdown = (double)row->writer_ns / (double)row->baseline_ns;
	if (strcmp(row->status, "not-run") != 0)
		return CB_ECHILD; /* a child or a check failed: the status says which */
	if (row->verified != 1) {
		wl_status(row, "error:verify:checkpoint or writes differ");
		return CB_ECHILD;
	}
	wl_status(row, "ok");
	return 0;
}

static int snapshot_check(const struct cb_run_spec *spec, char *why, size_t len)
{
	const struct snapshot_opts *o = OPTS(spec);
	uint64_t pages = spec->size / spec->page_size, avail, need;

	if (o->checkpointers > pages) {
		snprintf(why, len, "--checkpointers=%u is more than the %llu pages of --size", o->checkpointers,
			 (unsigned long long)pages);
		return -EINVAL;
	}
	if (o->batch < spec->page_size || o->batch % spec->page_size) {
		snprintf(why, len, "--batch=%llu is not a multiple of the page size (%zu)", (unsigned long long)o->batch,
			 spec->page_size);
		return -EINVAL;
	}
	if (spec->params.hugetlb && o->snapshot == CB_SNAP_UFFD_WP) {
		snprintf(why, len, "--snapshot=uffd-wp works on 4K and THP pages, not with --hugetlb");
		return -EINVAL;
	}
	if (spec->params.hugetlb && o->batch % CB_HUGETLB_SIZE) {
		snprintf(why, len, "--batch must be a multiple of 2M with --hugetlb (it unmaps whole pages)");
		return -EINVAL;
	}
	/* The array, the checkpoint and (fork) a COW copy of every page. */
	need = spec->size * (o->snapshot == CB_SNAP_FORK ? 3 : 2);
	if (cb_mem_available(&avail) == 0 && need > avail) {
		snprintf(why, len, "snapshot of --size=%llu MiB needs %llu MiB but MemAvailable is %llu MiB",
			 (unsigned long long)(spec->size >> 20), (unsigned long long)(need >> 20),
			 (unsigned long long)(avail >> 20));
		return -ENOMEM;
	}
	return 0;
}

const struct cb_workload cb_workload_snapshot = {
	.abi = CB_WORKLOAD_ABI,
	.name = "snapshot",
	.help = "writer threads vs. a checkpoint taken by fork, uffd-wp or memcpy (--snapshot), with a no-snapshot baseline",
	.run = snapshot_run,
	.check = snapshot_check,
	.options = snapshot_options,
	.options_size = sizeof(struct snapshot_opts),
	.default_size = "1G",
	.matrix = "size=64M snapshot=fork,uffd-wp,memcpy threads=2 checkpointers=1",
	.headline = "slowdown",
};
