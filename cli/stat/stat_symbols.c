/* Function names for sampled addresses, through elfutils' libdwfl (see stat_symbols.h). */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stat_symbols.h"

#define MAX_PIDS 64
#define MAX_MODULE_SPAN (1ull << 32) /* no ELF file maps wider: a module reported wider is two programs' maps */

struct sym {
	uint64_t ip;
	char *name, *module;
};

/* One sample's user context, read by the unwinder's callbacks. */
struct unwind_ctx {
	pid_t tid;
	uint64_t dwarf[17];  /* rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip: DWARF's x86-64 numbering */
	const unsigned char *stack;
	uint64_t sp, size;
	uint64_t *pcs;
	int n, max;
};

struct pid_syms {
	pid_t pid;           /* 0: free slot */
	Dwfl *dwfl;          /* NULL: the process could not be read */
	bool attached;       /* dwfl_attach_state done (with ctx as its argument) */
	struct unwind_ctx ctx;
	struct sym *tab;     /* open addressing on ip */
	size_t cap, used;
	unsigned long last_use;
	uint64_t read0, read1; /* CLOCK_MONOTONIC before and after its maps were read */
	uint64_t until;        /* the program it names was replaced by an exec then (0: still current) */
};

struct cli_symbols {
	struct pid_syms p[MAX_PIDS];
	unsigned long tick;
	const char *last_module;
	uint64_t at;           /* cli_symbols_when: the time the code looked up ran */
	bool pre_exec;         /* ... under a program an exec replaced since */
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct cli_symbols *cli_symbols_new(void)
{
	return calloc(1, sizeof(struct cli_symbols));
}

/* A module's functions sorted by address: libdwfl 0.188 scans the whole symbol table per lookup. */
struct fn_range {
	uint64_t start, end;
	const char *name; /* in the module's string table, alive with the Dwfl */
};

struct fn_index {
	struct fn_range *v;
	size_t n;
};

static int by_start(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static struct fn_index *build_index(Dwfl_Module *m)
{
	struct fn_index *ix = calloc(1, sizeof(*ix));
	int n = dwfl_module_getsymtab(m);

	if (!ix)
		return NULL;
	ix->v = calloc(n > 0 ? (size_t)n : 1, sizeof(*ix->v));
	for (int i = 1; ix->v && i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(m, i, &sym, &addr, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (name && name[0] && sym.st_size > 0 && (type == STT_FUNC || type == STT_GNU_IFUNC))
			ix->v[ix->n++] = (struct fn_range){ addr, addr + sym.st_size, name };
	}
	qsort(ix->v, ix->n, sizeof(*ix->v), by_start);
	return ix;
}

/* The function covering at, through the module's index (built on first use). */
static const char *function_at(Dwfl_Module *m, uint64_t at)
{
	void **ud;
	struct fn_index *ix;
	size_t lo = 0, hi;

	dwfl_module_info(m, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!*ud)
		*ud = build_index(m);
	if (!(ix = *ud))
		return NULL;
	for (hi = ix->n; lo < hi;) { /* the last range starting at or below at */
		size_t mid = (lo + hi) / 2;

		if (ix->v[mid].start <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && at < ix->v[lo - 1].end ? ix->v[lo - 1].name : NULL;
}

static int free_index(Dwfl_Module *m, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	struct fn_index *ix = *ud;

	(void)m;
	(void)name;
	(void)start;
	(void)arg;
	if (ix)
		free(ix->v);
	free(ix);
	*ud = NULL;
	return DWARF_CB_OK;
}

static void drop(struct pid_syms *ps)
{
	for (size_t i = 0; i < ps->cap; i++) {
		free(ps->tab[i].name);
		free(ps->tab[i].module);
	}
	free(ps->tab);
	if (ps->dwfl) {
		dwfl_getmodules(ps->dwfl, free_index, NULL, 0);
		dwfl_end(ps->dwfl);
	}
	memset(ps, 0, sizeof(*ps));
}

void cli_symbols_free(struct cli_symbols *s)
{
	if (!s)
		return;
	for (int i = 0; i < MAX_PIDS; i++)
		drop(&s->p[i]);
	free(s);
}

static Dwfl *open_process(pid_t pid)
{
	Dwfl *d = dwfl_begin(&proc_callbacks);

	if (!d)
		return NULL;
	if (dwfl_linux_proc_report(d, pid) != 0 || dwfl_report_end(d, NULL, NULL) != 0) {
		dwfl_end(d);
		return NULL;
	}
	return d;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The slot of pid naming the program it ran at time at: with pre_exec, one
 * read before the exec that replaced that program (never opened now: the
 * maps are the new program's); else the current one, opened on first use
 * (the least recently used slot is reused).
 */
static struct pid_syms *slot_at(struct cli_symbols *s, pid_t pid, uint64_t at, bool pre_exec)
{
	struct pid_syms *lru = &s->p[0], *best = NULL;
	Dwfl *d;

	for (int i = 0; i < MAX_PIDS; i++) {
		struct pid_syms *p = &s->p[i];

		if (p->pid == pid && !pre_exec && !p->until) {
			p->last_use = ++s->tick;
			return p->dwfl ? p : NULL;
		}
		if (p->pid == pid && pre_exec && p->until && at < p->until && (!best || p->until < best->until))
			best = p; /* the earliest program still running at `at` */
		if (p->last_use < lru->last_use)
			lru = &s->p[i];
	}
	if (pre_exec) {
		if (best)
			best->last_use = ++s->tick;
		return best && best->dwfl ? best : NULL;
	}
	drop(lru);
	lru->read0 = mono_ns();
	d = open_process(pid);
	lru->read1 = mono_ns();
	lru->pid = pid;
	lru->dwfl = d;
	lru->last_use = ++s->tick;
	return d ? lru : NULL;
}

static struct pid_syms *slot(struct cli_symbols *s, pid_t pid)
{
	return slot_at(s, pid, s->at, s->pre_exec);
}

bool cli_symbols_when(struct cli_symbols *s, pid_t pid, uint64_t at, bool pre_exec)
{
	s->at = at;
	s->pre_exec = pre_exec;
	if (!pre_exec)
		return true;
	for (int i = 0; i < MAX_PIDS; i++)
		if (s->p[i].pid == pid && s->p[i].until && at < s->p[i].until && s->p[i].dwfl)
			return true;
	return false;
}

bool cli_symbols_have(const struct cli_symbols *s, pid_t pid)
{
	for (int i = 0; i < MAX_PIDS; i++)
		if (s->p[i].pid == pid && !s->p[i].until)
			return true;
	return false;
}

bool cli_symbols_readable(struct cli_symbols *s, pid_t pid)
{
	return slot_at(s, pid, 0, false) != NULL;
}

void cli_symbols_read(struct cli_symbols *s, pid_t pid)
{
	(void)slot_at(s, pid, 0, false);
}

void cli_symbols_exec(struct cli_symbols *s, pid_t pid, uint64_t when)
{
	for (int i = 0; i < MAX_PIDS; i++) {
		struct pid_syms *p = &s->p[i];

		if (p->pid != pid || p->until)
			continue;
		if (p->read1 < when)
			p->until = when; /* read whole before the exec: it names the code that ran until then */
		else
			drop(p); /* read during or after it: the new program's, or a mix */
	}
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "?";
}

/* Look ip up in the process's modules: a covering symbol, else module+offset, else the address. */
static void resolve(Dwfl *d, uint64_t ip, bool leaf, struct sym *out)
{
	uint64_t at = leaf ? ip : ip - 1;
	Dwfl_Module *m = dwfl_addrmodule(d, at);
	const char *mname = NULL, *fn = NULL;
	GElf_Addr mstart = 0;
	char buf[160];

	if (m) {
		GElf_Addr mend = 0;

		mname = dwfl_module_info(m, NULL, &mstart, &mend, NULL, NULL, NULL, NULL);
		if (at < mstart || at >= mend || mend - mstart > MAX_MODULE_SPAN)
			m = NULL; /* beyond the last module (a stray unwound word), or one spread over far-apart maps */
		else
			fn = function_at(m, at); /* only a function whose extent covers at: never a neighbour or data */
	}
	if (fn)
		snprintf(buf, sizeof(buf), "%s", fn);
	else if (m)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base_name(mname), (uint64_t)(at - mstart));
	else
		snprintf(buf, sizeof(buf), "0x%" PRIx64, ip);
	out->ip = ip;
	out->name = strdup(buf);
	out->module = strdup(m ? base_name(mname) : "?");
}

static struct sym *lookup(struct pid_syms *ps, uint64_t ip, bool leaf)
{
	size_t i;

	if (ps->used * 2 >= ps->cap) {
		struct pid_syms grown = { .cap = ps->cap ? ps->cap * 2 : 256 };

		grown.tab = calloc(grown.cap, sizeof(*grown.tab));
		if (!grown.tab)
			return NULL;
		for (size_t k = 0; k < ps->cap; k++) {
			if (!ps->tab[k].name)
				continue;
			for (i = (size_t)(ps->tab[k].ip * 0x9E3779B97F4A7C15ull) & (grown.cap - 1); grown.tab[i].name;
			     i = (i + 1) & (grown.cap - 1))
				;
			grown.tab[i] = ps->tab[k];
		}
		free(ps->tab);
		ps->tab = grown.tab;
		ps->cap = grown.cap;
	}
	/* leaf and return addresses differ by the -1: key them apart through the low bit of a flag */
	uint64_t key = ip ^ (leaf ? 0 : 1ull << 63);

	for (i = (size_t)(key * 0x9E3779B97F4A7C15ull) & (ps->cap - 1); ps->tab[i].name; i = (i + 1) & (ps->cap - 1))
		if (ps->tab[i].ip == key)
			return &ps->tab[i];
	resolve(ps->dwfl, ip, leaf, &ps->tab[i]);
	if (!ps->tab[i].name || !ps->tab[i].module) {
		free(ps->tab[i].name);
		free(ps->tab[i].module);
		ps->tab[i].name = NULL;
		return NULL;
	}
	ps->tab[i].ip = key;
	ps->used++;
	return &ps->tab[i];
}

const char *cli_symbols_name(struct cli_symbols *s, pid_t pid, pid_t fallback, uint64_t ip, bool leaf)
{
	struct pid_syms *ps = slot(s, pid);
	struct sym *e;

	if (!ps && fallback > 0)
		ps = slot_at(s, fallback, 0, false);
	e = ps ? lookup(ps, ip, leaf) : NULL;
	s->last_module = e ? e->module : "?";
	return e ? e->name : NULL;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	struct unwind_ctx *u = arg;

	(void)dwfl;
	*thread_arg = u;
	return tid == u->tid;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl;
	(void)arg;
	(void)thread_arg;
	return 0; /* one thread at a time, through get_thread */
}

/* Only the copied stack is known; anything else ends the walk. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwind_ctx *u = arg;

	(void)dwfl;
	if (addr < u->sp || addr - u->sp + 8 > u->size)
		return false;
	memcpy(result, u->stack + (addr - u->sp), 8);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwind_ctx *u = arg;

	dwfl_thread_state_register_pc(thread, u->dwarf[16]);
	return dwfl_thread_state_registers(thread, 0, 17, u->dwarf);
}

static const Dwfl_Thread_Callbacks sample_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwind_ctx *u = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || pc == 0)
		return DWARF_CB_ABORT;
	u->pcs[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* perf's register order (ax bx cx dx si di bp sp ip r8..r15) to DWARF's. */
static void dwarf_regs(const uint64_t perf[17], uint64_t dwarf[17])
{
	static const int from[17] = { 0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8 };

	for (int i = 0; i < 17; i++)
		dwarf[i] = perf[from[i]];
}

int cli_symbols_unwind(struct cli_symbols *s, pid_t pid, pid_t fallback, pid_t tid, const uint64_t regs[17],
		       const unsigned char *stack, uint64_t size, uint64_t *pcs, int max)
{
	struct pid_syms *ps = slot(s, pid);

	if (!ps && fallback > 0)
		ps = slot_at(s, fallback, 0, false);
	if (!ps || max < 1)
		return 0;
	if (!ps->attached) {
		ps->ctx.tid = -1;
		if (!dwfl_attach_state(ps->dwfl, NULL, ps->pid, &sample_callbacks, &ps->ctx))
			return 0;
		ps->attached = true;
	}
	ps->ctx.tid = tid;
	dwarf_regs(regs, ps->ctx.dwarf);
	ps->ctx.sp = ps->ctx.dwarf[7];
	ps->ctx.stack = stack;
	ps->ctx.size = size;
	ps->ctx.pcs = pcs;
	ps->ctx.n = 0;
	ps->ctx.max = max;
	dwfl_getthread_frames(ps->dwfl, tid, on_frame, &ps->ctx);
	return ps->ctx.n;
}

const char *cli_symbols_last_module(const struct cli_symbols *s)
{
	return s->last_module ? s->last_module : "?";
}
