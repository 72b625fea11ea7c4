/* Function names for sampled addresses, through elfutils' libdwfl (see stat_symbols.h). */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat_symbols.h"

#define MAX_PIDS 64

struct sym {
	uint64_t ip;
	char *name, *module;
};

struct pid_syms {
	pid_t pid;           /* 0: free slot */
	Dwfl *dwfl;          /* NULL: the process could not be read */
	struct sym *tab;     /* open addressing on ip */
	size_t cap, used;
	unsigned long last_use;
};

struct cli_symbols {
	struct pid_syms p[MAX_PIDS];
	unsigned long tick;
	const char *last_module;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct cli_symbols *cli_symbols_new(void)
{
	return calloc(1, sizeof(struct cli_symbols));
}

static void drop(struct pid_syms *ps)
{
	for (size_t i = 0; i < ps->cap; i++) {
		free(ps->tab[i].name);
		free(ps->tab[i].module);
	}
	free(ps->tab);
	if (ps->dwfl)
		dwfl_end(ps->dwfl);
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

void cli_symbols_forget(struct cli_symbols *s, pid_t pid)
{
	for (int i = 0; i < MAX_PIDS; i++)
		if (s->p[i].pid == pid)
			drop(&s->p[i]);
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

/* The slot of pid, opened on first use (the least recently used slot is reused). */
static struct pid_syms *slot(struct cli_symbols *s, pid_t pid)
{
	struct pid_syms *lru = &s->p[0];
	Dwfl *d;

	for (int i = 0; i < MAX_PIDS; i++) {
		if (s->p[i].pid == pid) {
			s->p[i].last_use = ++s->tick;
			return s->p[i].dwfl ? &s->p[i] : NULL;
		}
		if (s->p[i].last_use < lru->last_use)
			lru = &s->p[i];
	}
	d = open_process(pid);
	drop(lru);
	lru->pid = pid;
	lru->dwfl = d;
	lru->last_use = ++s->tick;
	return d ? lru : NULL;
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
	GElf_Addr mstart = 0, off = 0;
	GElf_Sym sym;
	char buf[160];

	if (m) {
		mname = dwfl_module_info(m, NULL, &mstart, NULL, NULL, NULL, NULL, NULL);
		fn = dwfl_module_addrinfo(m, at, &off, &sym, NULL, NULL, NULL);
		if (fn && sym.st_size > 0 && off >= sym.st_size)
			fn = NULL; /* past the end of the nearest symbol: not its code */
		if (fn && GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			fn = NULL; /* a data object: the address is no code of a known function */
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
		ps = slot(s, fallback);
	e = ps ? lookup(ps, ip, leaf) : NULL;
	s->last_module = e ? e->module : "?";
	return e ? e->name : NULL;
}

const char *cli_symbols_last_module(const struct cli_symbols *s)
{
	return s->last_module ? s->last_module : "?";
}
