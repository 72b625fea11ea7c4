#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/sysctl.h>
#include <cowbench/wpfault.h>

#include "fileutil.h"

#define EVENT_DIR "events/exceptions/page_fault_user"
#define RING_PAGES 1024 /* 4 MiB per CPU: some thousands of chained samples between two drains */
#define RING_PAGES_STACK 4096 /* 16 MiB per CPU when samples carry a stack copy */
#define RING_PAGES_SIDEBAND 64 /* 256 KiB per CPU: fork, exit and exec records alone (faults in the BPF ring) */
#define BPF_RING_BYTES (8u << 20) /* the faults of the whole machine: 32-byte records, 260,000 between two drains */
/* perf_regs x86: AX BX CX DX SI DI BP SP IP, and R8..R15 */
#define UREGS_MASK (0x1ffull | (0xffull << 16))
#define PARANOID_PATH "/proc/sys/kernel/perf_event_paranoid"

struct cpu_ring {
	int fd;
	void *base;
	size_t data_size;
};

struct cb_wpfault {
	struct cpu_ring *rings;
	int nrings;
	struct cpu_ring *bells; /* per CPU: a dummy event whose fork/exit records wake a poller at once */
	int nbells;
	size_t page, ring_pages;
	bool callchain, stack;
	unsigned off_addr, off_ip, off_err;
	uint64_t lost;
	/* Faults through a BPF program into one ring (see bpf_open); -1 where samples come through the CPU rings. */
	int bpf_prog, bpf_ring, bpf_lost, bpf_holder;
	unsigned long *bpf_consumer;      /* the ring's consumer position (ours to write) */
	const unsigned char *bpf_producer; /* the producer position page, then the data mapped twice */
	uint64_t chain[CB_WPFAULT_MAX_CHAIN];
	unsigned char *scratch; /* one record that wraps around the ring's end */
};

int cb_wpfault_parse_format(const char *text, unsigned *off_addr, unsigned *off_ip, unsigned *off_err)
{
	struct {
		const char *name;
		unsigned *off;
	} want[] = { { " address;", off_addr }, { " ip;", off_ip }, { " error_code;", off_err } };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *f = strstr(text, want[i].name), *o;
		unsigned v;

		if (!f || !(o = strstr(f, "offset:")) || sscanf(o, "offset:%u;", &v) != 1 || v > 4096)
			return CB_EFORMAT;
		*want[i].off = v;
	}
	return 0;
}

/* id and format from a tracefs directory; -ENOENT when it has no such event. */
static int read_event(const char *dir, long *id, struct cb_wpfault *w)
{
	char path[256], buf[2048];
	int n;

	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/id", dir);
	if ((n = cb_read_text_file(path, buf, sizeof(buf))) < 0)
		return n;
	*id = strtol(buf, NULL, 10);
	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/format", dir);
	if ((n = cb_read_text_file(path, buf, sizeof(buf))) < 0)
		return n;
	return cb_wpfault_parse_format(buf, &w->off_addr, &w->off_ip, &w->off_err);
}

/*
 * The tracepoint's id: from a mounted tracefs, else from a private mount
 * of our own that is gone again before we return (the system keeps its
 * mount table as it was).
 */
static int find_event(long *id, struct cb_wpfault *w)
{
	char tmp[] = "/tmp/cowbench-tracefs-XXXXXX";
	int err;

	if (read_event("/sys/kernel/tracing", id, w) == 0 || read_event("/sys/kernel/debug/tracing", id, w) == 0)
		return 0;
	if (!mkdtemp(tmp))
		return -errno;
	if (mount("nodev", tmp, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		err = errno == EPERM ? -EACCES : -ENOENT;
		rmdir(tmp);
		return err;
	}
	err = read_event(tmp, id, w);
	umount2(tmp, MNT_DETACH);
	rmdir(tmp);
	return err;
}

/*
 * A CPU's ring: the tracepoint's samples and the fork, exit and exec
 * records; sideband: those records alone, on a software dummy event (the
 * faults then come through the BPF ring).
 */
static int open_cpu(long id, const struct cb_wpfault_opts *o, int cpu, unsigned ring_bytes, bool sideband)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = sideband ? PERF_TYPE_SOFTWARE : PERF_TYPE_TRACEPOINT;
	a.config = sideband ? PERF_COUNT_SW_DUMMY : (unsigned long long)id;
	a.sample_period = o->period ? o->period : 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | (sideband ? 0 : PERF_SAMPLE_RAW) |
			(o->callchain ? PERF_SAMPLE_CALLCHAIN : 0) |
			(o->stack_bytes ? PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER : 0);
	if (o->stack_bytes) {
		a.sample_regs_user = UREGS_MASK;
		a.sample_stack_user = (o->stack_bytes + 7) & ~7u;
	}
	a.exclude_callchain_kernel = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.sample_id_all = 1;
	a.task = 1; /* fork and exit records: the process tree, short-lived children included */
	a.comm = 1; /* exec: a process's code changes */
	a.comm_exec = 1;
	/*
	 * Woken at half a ring, not per sample: a wakeup per record queues an
	 * irq_work (a self-IPI, a VM exit under a hypervisor) inside every
	 * recorded fault of the watched program, which made a forking Python
	 * loop 2.4x slower under stat on a 2-vCPU VM (1.2x without). Callers
	 * drain on a timer and on the bells, never on this fd's POLLIN.
	 */
	a.watermark = 1;
	a.wakeup_watermark = ring_bytes / 2;
	fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/*
 * A doorbell: a software dummy event on cpu with the same fork and exit
 * records as the tracepoint's, but a wakeup for every record (a
 * watermark of one byte), so a caller polling it drains as soon as a
 * process forks rather than at its next timed drain (the tracepoint's own
 * ring wakes only at half full: a wakeup per fault would cost the program
 * that faults). Its records are thrown away: the tracepoint's ring carries
 * the same ones in order.
 */
static int open_bell(int cpu)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.task = 1; /* forks (and exits: they come with the same flag) */
	a.watermark = 1;
	a.wakeup_watermark = 1;
	fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/* Bells for the CPUs of the rings; none (the caller's timed drains only) where the kernel has no dummy event. */
static void open_bells(struct cb_wpfault *w, long ncpu)
{
	w->bells = calloc((size_t)ncpu, sizeof(*w->bells));
	for (int cpu = 0; w->bells && cpu < ncpu; cpu++) {
		struct cpu_ring *b = &w->bells[w->nbells];

		if ((b->fd = open_bell(cpu)) < 0)
			continue; /* an offline CPU, or no dummy event */
		b->data_size = w->page;
		b->base = mmap(NULL, 2 * w->page, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
		if (b->base == MAP_FAILED) {
			close(b->fd);
			continue;
		}
		w->nbells++;
	}
}

int cb_wpfault_task_fds(const struct cb_wpfault *w, int *fds, int max)
{
	int n = 0;

	for (int i = 0; i < w->nbells && n < max; i++)
		fds[n++] = w->bells[i].fd;
	return n;
}

static int map_ring(struct cb_wpfault *w, struct cpu_ring *r)
{
	r->data_size = w->ring_pages * w->page;
	r->base = mmap(NULL, r->data_size + w->page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	return 0;
}

/* ---- write faults through a BPF program ---- */

/*
 * A perf sample costs the faulting program about a microsecond in each
 * write fault on this kind of VM (a forking CPython loop ran 1.16-1.19x
 * slower in CPU time under stat, against 1.04x with a counting-only event
 * on the same tracepoint and filter). A BPF program on the tracepoint
 * does the filtering and writes 32 bytes to one ring buffer instead
 * (1.05-1.06x), without waking us (BPF_RB_NO_WAKEUP: we drain on a timer
 * and on the bells). It returns 1, so other perf users of the tracepoint
 * still get their events.
 */
struct bpf_rec {
	uint64_t pid_tgid; /* tgid << 32 | tid */
	uint64_t time_ns;  /* bpf_ktime_get_ns: CLOCK_MONOTONIC, as the perf records' clock */
	uint64_t addr, ip;
};

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)

static int sys_bpf(int cmd, union bpf_attr *a)
{
	long r = syscall(SYS_bpf, cmd, a, sizeof(*a));

	return r < 0 ? -errno : (int)r;
}

static int bpf_load(const struct cb_wpfault *w)
{
	struct bpf_insn prog[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),                /* r6 = ctx (the record) */
		INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_2, BPF_REG_6, (short)w->off_err, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 25, CB_PF_WRITE_ON_PRESENT),   /* to out */
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -32, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -24, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_2, BPF_REG_6, (short)w->off_addr, 0),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_2, -16, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_2, BPF_REG_6, (short)w->off_ip, 0),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_2, -8, 0),
		LD_MAP(BPF_REG_1, w->bpf_ring),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -32),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, (int)sizeof(struct bpf_rec)),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_RB_NO_WAKEUP),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 9, 0),                         /* written: to out */
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -36, 0),                       /* key 0 */
		LD_MAP(BPF_REG_1, w->bpf_lost),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -36),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),                         /* to out */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),       /* the ring was full: lost++ */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),                       /* out: others' events go on */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	a.license = (uint64_t)(uintptr_t)"Dual MIT/GPL";
	return sys_bpf(BPF_PROG_LOAD, &a);
}

static int bpf_map(uint32_t type, uint32_t key, uint32_t value, uint32_t entries)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = entries;
	return sys_bpf(BPF_MAP_CREATE, &a);
}

/*
 * The program attached to the tracepoint through a perf event on this
 * thread alone (a tracepoint's programs run on every CPU once one perf
 * event holds it; this event is on no CPU's list while the thread sleeps,
 * so perf itself adds nothing to a watched program's faults). false, with
 * nothing left open, where the kernel refuses any step: the CPU rings then
 * carry the samples.
 */
static bool bpf_open(struct cb_wpfault *w, long id)
{
	struct perf_event_attr a;
	void *cons, *prod;

	if (getenv("COWBENCH_WPFAULT_NO_BPF") || w->off_err < 8 || w->off_addr < 8 || w->off_ip < 8 ||
	    (w->off_err | w->off_addr | w->off_ip) % 8 || w->off_err > 4096 || w->off_addr > 4096 || w->off_ip > 4096)
		return false; /* test aid (documented); the first 8 bytes hold the kernel's regs pointer for BPF */
	if ((w->bpf_ring = bpf_map(BPF_MAP_TYPE_RINGBUF, 0, 0, BPF_RING_BYTES)) < 0 ||
	    (w->bpf_lost = bpf_map(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), sizeof(uint64_t), 1)) < 0 ||
	    (w->bpf_prog = bpf_load(w)) < 0)
		return false;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (unsigned long long)id;
	a.disabled = 1;
	w->bpf_holder = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (w->bpf_holder < 0 || ioctl(w->bpf_holder, PERF_EVENT_IOC_SET_BPF, w->bpf_prog) < 0)
		return false;
	cons = mmap(NULL, w->page, PROT_READ | PROT_WRITE, MAP_SHARED, w->bpf_ring, 0);
	if (cons == MAP_FAILED)
		return false;
	w->bpf_consumer = cons;
	prod = mmap(NULL, w->page + 2 * BPF_RING_BYTES, PROT_READ, MAP_SHARED, w->bpf_ring, (off_t)w->page);
	if (prod == MAP_FAILED)
		return false;
	w->bpf_producer = prod;
	return ioctl(w->bpf_holder, PERF_EVENT_IOC_ENABLE, 0) == 0;
}

static void bpf_close(struct cb_wpfault *w)
{
	if (w->bpf_producer)
		munmap((void *)w->bpf_producer, w->page + 2 * BPF_RING_BYTES);
	if (w->bpf_consumer)
		munmap(w->bpf_consumer, w->page);
	w->bpf_producer = NULL;
	w->bpf_consumer = NULL;
	for (int *fd = &w->bpf_prog; fd <= &w->bpf_holder; fd++) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

/* The records the program wrote so far, oldest first (the data is mapped twice: a record never wraps). */
static long bpf_drain(struct cb_wpfault *w, const struct cb_wpfault_handler *h)
{
	const unsigned char *data = w->bpf_producer + w->page;
	unsigned long cons = *w->bpf_consumer, prod = __atomic_load_n((const unsigned long *)w->bpf_producer, __ATOMIC_ACQUIRE);
	long n = 0;

	while (cons < prod) {
		const unsigned char *hdr = data + (cons & (BPF_RING_BYTES - 1));
		uint32_t len = __atomic_load_n((const uint32_t *)hdr, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* still being written */
		if (!(len & BPF_RINGBUF_DISCARD_BIT) && len >= sizeof(struct bpf_rec) && h->sample) {
			struct bpf_rec r;
			struct cb_wpfault_sample s;

			memcpy(&r, hdr + BPF_RINGBUF_HDR_SZ, sizeof(r));
			memset(&s, 0, sizeof(s));
			s.pid = (pid_t)(r.pid_tgid >> 32);
			s.tid = (pid_t)(uint32_t)r.pid_tgid;
			s.time_ns = r.time_ns;
			s.addr = r.addr;
			s.ip = r.ip;
			s.error_code = CB_PF_WRITE_ON_PRESENT;
			h->sample(h->arg, &s);
			n++;
		}
		cons += (BPF_RINGBUF_HDR_SZ + (len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT)) + 7) & ~7ul;
	}
	__atomic_store_n(w->bpf_consumer, cons, __ATOMIC_RELEASE);
	return n;
}

static uint64_t bpf_lost(const struct cb_wpfault *w)
{
	uint32_t key = 0;
	uint64_t v = 0;
	union bpf_attr a;

	if (w->bpf_lost < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)w->bpf_lost;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&v;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0 ? v : 0;
}

int cb_wpfault_open(const struct cb_wpfault_opts *o, struct cb_wpfault **out)
{
	struct cb_wpfault *w = calloc(1, sizeof(*w));
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), id;
	bool sideband;
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	w->callchain = o->callchain;
	w->stack = o->stack_bytes > 0;
	w->bpf_prog = w->bpf_ring = w->bpf_lost = w->bpf_holder = -1;
	w->rings = calloc((size_t)ncpu, sizeof(*w->rings));
	if (!w->rings) {
		cb_wpfault_close(w);
		return -ENOMEM;
	}
	if ((err = find_event(&id, w)) < 0) {
		cb_wpfault_close(w);
		return err;
	}
	/* Call chains, stacks and 1-in-N sampling are perf's: the program records every fault, bare. */
	sideband = !o->callchain && !o->stack_bytes && o->period <= 1 && bpf_open(w, id);
	if (!sideband)
		bpf_close(w);
	w->ring_pages = sideband ? RING_PAGES_SIDEBAND : w->stack ? RING_PAGES_STACK : RING_PAGES;
	if (!(w->scratch = malloc(w->ring_pages * w->page))) {
		cb_wpfault_close(w);
		return -ENOMEM;
	}
	/*
	 * The bells first: a CPU's side-band events get a record newest first,
	 * so the tracepoint's ring holds the fork record before its bell rings.
	 */
	open_bells(w, ncpu);
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct cpu_ring *r = &w->rings[w->nrings];

		r->fd = open_cpu(id, o, cpu, (unsigned)(w->ring_pages * w->page), sideband);
		if (r->fd == -ENODEV || r->fd == -EINVAL)
			continue; /* an offline CPU */
		if (r->fd < 0 || (err = map_ring(w, r)) < 0) {
			err = r->fd < 0 ? r->fd : err;
			if (r->fd >= 0)
				close(r->fd);
			cb_wpfault_close(w);
			return err;
		}
		w->nrings++;
		/* Kernels that refuse the filter still record: user space filters every sample either way. */
		if (!sideband)
			(void)ioctl(r->fd, PERF_EVENT_IOC_SET_FILTER, "error_code == 7");
		ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	if (w->nrings == 0) {
		cb_wpfault_close(w);
		return -ENODEV;
	}
	*out = w;
	return 0;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The user frames of a callchain (skipping context markers), into w->chain. */
static uint32_t user_frames(struct cb_wpfault *w, const unsigned char *p, uint64_t nr)
{
	uint32_t n = 0;

	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = get_u64(p + 8 * i);

		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			continue; /* PERF_CONTEXT_USER and friends */
		if (n < CB_WPFAULT_MAX_CHAIN)
			w->chain[n++] = ip;
	}
	return n;
}

/* REGS_USER (abi, regs) then STACK_USER (size, data, dyn_size) after the raw data. */
static void parse_regs_stack(const unsigned char *p, const unsigned char *end, struct cb_wpfault_sample *s)
{
	uint64_t abi, size, dyn;

	if (end - p < 8)
		return;
	abi = get_u64(p);
	p += 8;
	if (abi) {
		if (end - p < 8 * CB_WPFAULT_NREGS)
			return;
		for (int i = 0; i < CB_WPFAULT_NREGS; i++)
			s->uregs[i] = get_u64(p + 8 * i);
		p += 8 * CB_WPFAULT_NREGS;
	}
	if (end - p < 8)
		return;
	size = get_u64(p);
	p += 8;
	if (!abi || size == 0 || size > (uint64_t)(end - p) || (uint64_t)(end - p) - size < 8)
		return;
	dyn = get_u64(p + size);
	s->stack = p;
	s->stack_size = dyn < size ? dyn : size;
	s->have_regs = true;
}

/* PERF_RECORD_SAMPLE: tid, time, [callchain], raw. false when it is not a write on a present page. */
static bool parse_sample(struct cb_wpfault *w, const unsigned char *p, const unsigned char *end,
			 struct cb_wpfault_sample *s)
{
	uint32_t rawsize;
	const unsigned char *raw;

	memset(s, 0, sizeof(*s));
	if (end - p < 16)
		return false;
	s->pid = (pid_t)get_u32(p);
	s->tid = (pid_t)get_u32(p + 4);
	s->time_ns = get_u64(p + 8);
	p += 16;
	if (w->callchain) {
		uint64_t nr;

		if (end - p < 8)
			return false;
		nr = get_u64(p);
		p += 8;
		if (nr > (uint64_t)(end - p) / 8)
			return false;
		s->nchain = user_frames(w, p, nr);
		s->chain = w->chain;
		p += 8 * nr;
	}
	if (end - p < 4)
		return false;
	rawsize = get_u32(p);
	raw = p + 4;
	if (rawsize > (uint64_t)(end - raw) || w->off_err + 8 > rawsize || w->off_addr + 8 > rawsize ||
	    w->off_ip + 8 > rawsize)
		return false;
	s->addr = get_u64(raw + w->off_addr);
	s->ip = get_u64(raw + w->off_ip);
	s->error_code = get_u64(raw + w->off_err);
	if (w->stack)
		parse_regs_stack(raw + rawsize, end, s);
	return (s->error_code & CB_PF_WRITE_ON_PRESENT) == CB_PF_WRITE_ON_PRESENT;
}

/* FORK/EXIT: pid, ppid, tid, ptid, time. */
static void parse_task(const struct perf_event_header *h, const unsigned char *p, const struct cb_wpfault_handler *hd)
{
	struct cb_wpfault_task t;

	if (!hd->task || h->size < sizeof(*h) + 24)
		return;
	t.kind = h->type == PERF_RECORD_FORK ? CB_WPFAULT_FORK : CB_WPFAULT_EXIT;
	t.pid = (pid_t)get_u32(p);
	t.ppid = (pid_t)get_u32(p + 4);
	t.tid = (pid_t)get_u32(p + 8);
	t.time_ns = get_u64(p + 16);
	hd->task(hd->arg, &t);
}

static long drain_ring(struct cb_wpfault *w, struct cpu_ring *r, const struct cb_wpfault_handler *h)
{
	struct perf_event_mmap_page *mp = r->base;
	const unsigned char *data = (const unsigned char *)r->base + w->page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
	long n = 0;

	while (tail < head) {
		size_t off = (size_t)(tail % r->data_size);
		struct perf_event_header hdr;
		const unsigned char *rec;

		if (off + sizeof(hdr) <= r->data_size) {
			memcpy(&hdr, data + off, sizeof(hdr));
		} else {
			size_t first = r->data_size - off;

			memcpy(&hdr, data + off, first);
			memcpy((char *)&hdr + first, data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;
		if (off + hdr.size <= r->data_size) {
			rec = data + off;
		} else { /* wraps: copy it whole */
			size_t first = r->data_size - off;

			memcpy(w->scratch, data + off, first);
			memcpy(w->scratch + first, data, hdr.size - first);
			rec = w->scratch;
		}
		if (hdr.type == PERF_RECORD_SAMPLE) {
			struct cb_wpfault_sample s;

			if (parse_sample(w, rec + sizeof(hdr), rec + hdr.size, &s) && h->sample) {
				h->sample(h->arg, &s);
				n++;
			}
		} else if (hdr.type == PERF_RECORD_LOST && hdr.size >= sizeof(hdr) + 16) {
			w->lost += get_u64(rec + sizeof(hdr) + 8);
		} else if (hdr.type == PERF_RECORD_FORK || hdr.type == PERF_RECORD_EXIT) {
			parse_task(&hdr, rec + sizeof(hdr), h);
		} else if (hdr.type == PERF_RECORD_COMM && (hdr.misc & PERF_RECORD_MISC_COMM_EXEC) && h->task &&
			   hdr.size >= sizeof(hdr) + 8) {
			/* sample_id_all: the record ends with the sample's pid/tid and time */
			struct cb_wpfault_task t = { CB_WPFAULT_EXEC, (pid_t)get_u32(rec + sizeof(hdr)), 0,
						     (pid_t)get_u32(rec + sizeof(hdr) + 4),
						     hdr.size >= sizeof(hdr) + 24 ? get_u64(rec + hdr.size - 8) : 0 };

			h->task(h->arg, &t);
		}
		tail += hdr.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

long cb_wpfault_drain(struct cb_wpfault *w, const struct cb_wpfault_handler *h)
{
	long n = 0;

	for (int i = 0; i < w->nbells; i++) { /* emptied first: a record after this rings again */
		struct perf_event_mmap_page *mp = w->bells[i].base;

		__atomic_store_n(&mp->data_tail, __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	}
	for (int i = 0; i < w->nrings; i++)
		n += drain_ring(w, &w->rings[i], h);
	/* After the forks: a fault before the drain began had its fork record written before it */
	if (w->bpf_producer)
		n += bpf_drain(w, h);
	return n;
}

uint64_t cb_wpfault_lost(const struct cb_wpfault *w)
{
	return w->lost + bpf_lost(w);
}

void cb_wpfault_close(struct cb_wpfault *w)
{
	if (!w)
		return;
	bpf_close(w);
	for (int i = 0; i < w->nrings; i++) {
		if (w->rings[i].base)
			munmap(w->rings[i].base, w->rings[i].data_size + w->page);
		close(w->rings[i].fd);
	}
	free(w->rings);
	for (int i = 0; i < w->nbells; i++) {
		munmap(w->bells[i].base, 2 * w->page);
		close(w->bells[i].fd);
	}
	free(w->bells);
	free(w->scratch);
	free(w);
}

const char *cb_wpfault_advice(int err)
{
	static char buf[192];
	long paranoid = 0;

	if (err == -ENOENT || err == -ENODEV)
		return "the kernel has no exceptions:page_fault_user tracepoint (x86 only) or tracefs is missing";
	if (err != -EACCES && err != -EPERM) {
		snprintf(buf, sizeof(buf), "perf_event_open failed: %s", strerror(-err));
		return buf;
	}
	cb_sysctl_read_long(PARANOID_PATH, &paranoid);
	if (geteuid() != 0) {
		snprintf(buf, sizeof(buf), "needs root (the tracepoint's id is in tracefs; per-CPU events need "
			 "CAP_PERFMON or kernel.perf_event_paranoid=-1, now %ld)", paranoid);
		return buf;
	}
	snprintf(buf, sizeof(buf), "not permitted with kernel.perf_event_paranoid=%ld: set it to -1 "
		 "(sysctl kernel.perf_event_paranoid=-1) or grant CAP_PERFMON", paranoid);
	return buf;
}
