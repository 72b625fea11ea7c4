/*
 * cowbench stat --where=code: which code takes the write faults. Each
 * sample's user call chain (innermost first) is unwound from its register
 * and stack copy with the modules' CFI (or, when that gets less far, taken
 * from the kernel's frame-pointer walk), named at once while the process
 * still exists, and counted three ways: by the faulting function, by call
 * path, and as a folded stack for flame graphs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/outfile.h"
#include "stat_symbols.h"
#include "stat_where_int.h"

#define PATH_SHOWN 6     /* frames of a call path in the table */
#define FOLD_MAX 4096    /* bytes of one folded stack */

/* Append to a bounded string; false once it is full. */
static bool append(char *buf, size_t len, size_t *at, const char *s)
{
	int n = snprintf(buf + *at, len - *at, "%s", s);

	if (n < 0 || (size_t)n >= len - *at)
		return false;
	*at += (size_t)n;
	return true;
}

/*
 * Whose modules name code p ran at time t, and whether an exec has replaced
 * that program since (then only modules read before the exec can name it,
 * cli_symbols_when). A fork child that had not run exec at t runs its
 * parent's code as of the fork; code before an exec of the command stat
 * started is stat's own (forked, held, not yet exec'd); else p's own. The
 * fallback, looked up as it is now, only where its code is that code.
 */
static void code_owner(const struct stat_where *w, const struct wproc *p, uint64_t t, pid_t *pid, pid_t *fallback,
		       uint64_t *at, bool *pre_exec)
{
	const struct wproc *parent = p->ppid ? where_proc(w, p->ppid) : NULL;
	bool before_exec = p->exec_ns && t < p->exec_ns;                  /* p itself ran exec after t */
	bool before_first = p->first_exec_ns && t < p->first_exec_ns;     /* ... and had run none before t */
	bool forked = !p->at_start && parent && (!p->execd || before_first);

	*at = t;
	*pre_exec = false;
	if (forked) {
		*pid = p->ppid;
		*fallback = p->execd ? 0 : p->pid; /* the child's maps are still the fork's until it runs exec */
		*at = p->fork_ns ? p->fork_ns : t;
		*pre_exec = parent->exec_ns && *at < parent->exec_ns;
	} else if (before_first && p->ppid == getpid()) {
		*pid = getpid();
		*fallback = 0;
	} else {
		*pid = p->pid;
		*fallback = p->execd ? 0 : p->ppid;
		*pre_exec = before_exec;
	}
}

/* A frame's name: the function, or the address when no symbol covers it (JIT, interpreter, stripped). */
static const char *frame_name(struct stat_where *w, const struct wproc *p, uint64_t t, uint64_t ip, bool leaf,
			      char *buf, size_t len)
{
	pid_t pid, fallback;
	const char *name;
	uint64_t at;
	bool pre_exec;

	code_owner(w, p, t, &pid, &fallback, &at, &pre_exec);
	cli_symbols_when(w->syms, pid, at, pre_exec);
	name = cli_symbols_name(w->syms, pid, fallback, ip, leaf);

	if (name)
		return name;
	snprintf(buf, len, "0x%" PRIx64, ip);
	return buf;
}

/*
 * Frames up to the first return address outside any executable mapping:
 * past code built without frame pointers the walk reads stack words, not
 * return addresses. Frames in anonymous executable memory (JIT) stay.
 */
static uint32_t plausible_frames(const struct stat_where *w, const struct wproc *p, const uint64_t *chain,
				 uint32_t n)
{
	const struct cb_vmas *layout = where_layout(w, p);

	for (uint32_t i = 1; i < n; i++) {
		const struct cb_vma *v = cb_vmas_find(layout, chain[i]);

		if (chain[i] < 0x10000 || (layout->n && (!v || v->perms[2] != 'x')))
			return i;
	}
	return n;
}

bool where_is_python_child(const struct stat_where *w, const struct wproc *p)
{
	const struct wproc *parent = where_proc(w, p->ppid);

	return !p->at_start && parent && strncmp(p->comm, "python", 6) == 0 && strncmp(parent->comm, "python", 6) == 0;
}

/*
 * CPython's cyclic collector (Modules/gcmodule.c): its passes write each
 * tracked object's header, and the tp_traverse functions they call (often
 * inlined, with visit_decref, into list_traverse and friends) too.
 */
static bool is_collector(const char *fn)
{
	static const char *const names[] = { "update_refs", "subtract_refs", "visit_decref", "move_unreachable",
					     "visit_reachable", "deduce_unreachable", "untrack_tuples", "untrack_dicts",
					     "move_legacy_finalizers", "move_legacy_finalizer_reachable", "visit_move",
					     "handle_weakrefs", "finalize_garbage", "delete_garbage", "gc_collect_main",
					     "validate_list", "gc_list_merge" };
	size_t len = strcspn(fn, ".");

	if (len > 9 && strncmp(fn + len - 9, "_traverse", 9) == 0)
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && strncmp(fn, names[i], len) == 0)
			return true;
	return false;
}

static void count_python(struct stat_where *w, const struct wproc *p, const char *leaf, const char *fn)
{
	if (!where_is_python_child(w, p))
		return;
	w->py_samples++;
	if (leaf[0] == '0' && leaf[1] == 'x')
		return;
	if (strstr(leaf, "+0x"))
		return; /* module+offset: no name to judge by */
	w->py_named++;
	w->py_gc += is_collector(leaf);
	cb_strmap_add(&w->py_funcs, fn, 1);
}

static void where_code_sample(struct stat_where *w, struct wproc *p, const struct cb_wpfault_sample *s,
			      where_take_records_fn *take_records)
{
	uint64_t leaf_only = s->ip, unwound[CB_WPFAULT_MAX_CHAIN];
	const uint64_t *chain = s->nchain ? s->chain : &leaf_only;
	uint32_t n = s->nchain ? s->nchain : 1;
	char fold[FOLD_MAX], path[FOLD_MAX], fn[256], tmp[32];
	const char *names[CB_WPFAULT_MAX_CHAIN];
	size_t fat = 0, pat = 0;
	pid_t owner, fallback;
	uint64_t at;
	bool pre_exec;
	int k;

	code_owner(w, p, s->time_ns, &owner, &fallback, &at, &pre_exec);
	if (!pre_exec && !cli_symbols_have(w->syms, owner)) {
		/* Read now, then the records since the last drain: an exec between the two drops what was read. */
		cli_symbols_read(w->syms, owner);
		take_records(w);
		p = where_proc(w, s->pid); /* the records may have grown the process table */
		code_owner(w, p, s->time_ns, &owner, &fallback, &at, &pre_exec);
	}
	w->code_samples++;
	if (!cli_symbols_when(w->syms, owner, at, pre_exec) && !(fallback && cli_symbols_readable(w->syms, fallback))) {
		w->code_replaced++; /* its program's modules are gone: any name would be another program's */
		return;
	}
	k = s->have_regs ? cli_symbols_unwind(w->syms, owner, fallback, s->tid, s->uregs, s->stack, s->stack_size, unwound,
					      CB_WPFAULT_MAX_CHAIN) : 0;
	n = plausible_frames(w, p, chain, n);
	if (k > (int)n) { /* the CFI walk went further than the frame pointers */
		chain = unwound;
		n = (uint32_t)k;
		w->code_unwound++;
	}
	for (uint32_t i = 0; i < n; i++) {
		names[i] = strdupa(frame_name(w, p, s->time_ns, chain[i], i == 0, tmp, sizeof(tmp))); /* the cache may move */
		if (i == 0)
			snprintf(fn, sizeof(fn), "%s (%s)", names[0], cli_symbols_last_module(w->syms));
	}
	if (names[0][0] == '0' && names[0][1] == 'x')
		w->code_unresolved++;
	cb_strmap_add(&w->funcs, fn, 1);
	count_python(w, p, names[0], fn);
	/* call path, innermost first, a few frames */
	for (uint32_t i = 0; i < n && i < PATH_SHOWN; i++)
		if (!append(path, sizeof(path), &pat, i ? " <- " : "") || !append(path, sizeof(path), &pat, names[i]))
			break;
	cb_strmap_add(&w->paths, path, 1);
	/* folded: comm;outermost;...;innermost */
	append(fold, sizeof(fold), &fat, p->comm);
	for (uint32_t i = n; i-- > 0;)
		if (!append(fold, sizeof(fold), &fat, ";") || !append(fold, sizeof(fold), &fat, names[i]))
			break;
	cb_strmap_add(&w->folded, fold, 1);
}

/* A sample with its call chain and stack copy in one block. */
struct queued {
	struct cb_wpfault_sample s;
	uint64_t chain[]; /* then the stack bytes */
};

struct queued *where_sample_copy(const struct cb_wpfault_sample *s)
{
	size_t stack = s->have_regs ? (size_t)s->stack_size : 0;
	struct queued *q = malloc(sizeof(*q) + s->nchain * sizeof(uint64_t) + stack);

	if (!q)
		return NULL;
	q->s = *s;
	if (s->nchain) /* none without call chains (--where=maps) */
		memcpy(q->chain, s->chain, s->nchain * sizeof(uint64_t));
	q->s.chain = q->chain;
	if (stack) {
		memcpy(q->chain + s->nchain, s->stack, stack);
		q->s.stack = (const unsigned char *)(q->chain + s->nchain);
	}
	return q;
}

const struct cb_wpfault_sample *where_sample_of(const struct queued *q)
{
	return &q->s;
}

void where_code_queue(struct stat_where *w, const struct cb_wpfault_sample *s)
{
	struct queued *q = where_sample_copy(s);

	if (!q)
		return;
	if (w->qlen == w->qcap) {
		size_t cap = w->qcap ? w->qcap * 2 : 1024;
		struct queued **grown = realloc(w->queue, cap * sizeof(*grown));

		if (!grown) {
			free(q);
			return;
		}
		w->queue = grown;
		w->qcap = cap;
	}
	w->queue[w->qlen++] = q;
}

size_t where_code_process(struct stat_where *w, size_t max, where_take_records_fn *take_records)
{
	size_t n = 0;

	for (; n < max && w->qhead < w->qlen; n++) {
		struct queued *q = w->queue[w->qhead++];
		struct wproc *p = where_proc(w, q->s.pid);

		if (p)
			where_code_sample(w, p, &q->s, take_records);
		free(q);
	}
	if (w->qhead == w->qlen)
		w->qhead = w->qlen = 0;
	return n;
}

void where_code_free(struct stat_where *w)
{
	while (w->qhead < w->qlen)
		free(w->queue[w->qhead++]);
	free(w->queue);
	cb_strmap_free(&w->funcs);
	cb_strmap_free(&w->paths);
	cb_strmap_free(&w->folded);
	cb_strmap_free(&w->py_funcs);
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void print_table(const struct stat_where *w, const struct cb_strmap *m, const char *title, const char *kind,
			enum cb_format fmt, FILE *out)
{
	size_t n;
	struct cb_strmap_entry *e = cb_strmap_sorted(m, &n);

	if (!e)
		return;
	if (fmt == CB_FORMAT_TABLE)
		fprintf(out, "%s\n%10s %6s  %s\n", title, "faults", "share", kind);
	for (size_t i = 0; i < n && (long)i < w->o.top; i++) {
		double share = 100.0 * (double)e[i].value / (double)w->code_samples;
		int64_t est = (int64_t)e[i].value * w->o.sample;

		if (fmt == CB_FORMAT_JSON) {
			fprintf(out, "{\"where\":\"code\",\"kind\":\"%s\",\"name\":", kind);
			json_str(out, e[i].key);
			fprintf(out, ",\"samples\":%" PRId64 ",\"faults_est\":%" PRId64 ",\"share_pct\":%.1f}\n", (int64_t)e[i].value,
				est, share);
		} else if (fmt == CB_FORMAT_CSV) {
			fprintf(out, "where_code,%s,%" PRId64 ",%" PRId64 ",%.1f,", kind, (int64_t)e[i].value, est, share);
			json_str(out, e[i].key); /* quoted: names hold commas (C++) */
			fputc('\n', out);
		} else {
			fprintf(out, "%10" PRId64 " %5.1f%%  %s\n", est, share, e[i].key);
		}
	}
	free(e);
}

/* Through a temporary file renamed into place (cli_output_begin): a full disk leaves no half file. */
static int write_folded(const struct stat_where *w, const char *path)
{
	struct cli_output out;
	size_t n;
	struct cb_strmap_entry *e;

	if (cli_output_begin_as(&out, "--folded", path, w->o.force) < 0)
		return -1;
	e = cb_strmap_sorted(&w->folded, &n);
	for (size_t i = 0; e && i < n; i++)
		fprintf(out.fp, "%s %" PRId64 "\n", e[i].key, (int64_t)e[i].value * w->o.sample);
	free(e);
	if (!e) {
		cli_output_abort(&out);
		cli_error("--folded=%s: out of memory", path);
		return -1;
	}
	return cli_output_commit(&out);
}

bool stat_where_write_failed(const struct stat_where *w)
{
	return w && w->write_failed;
}

void where_code_print(struct stat_where *w, enum cb_format fmt, FILE *out)
{
	if (fmt == CB_FORMAT_TABLE) {
		fprintf(out, "\nwhere (code): %" PRId64 " write faults on present pages sampled", w->code_samples);
		if (w->o.sample > 1)
			fprintf(out, " (1 in %ld; faults below are samples x %ld)", w->o.sample, w->o.sample);
		fprintf(out, " [exceptions:page_fault_user; call chains unwound from a %d KiB user stack copy with "
			     "the modules' CFI, %" PRId64 " of them further than frame pointers reach; names from the ELF "
			     "and debug files via libdwfl]\n", CODE_STACK_BYTES / 1024, w->code_unwound);
		if (w->code_unresolved)
			fprintf(out, "  %" PRId64 " samples fault in code no symbol covers (JIT, interpreter or "
				     "stripped static functions): shown as addresses\n", w->code_unresolved);
	}
	if (w->code_replaced)
		fprintf(stderr, "cowbench: warning: --where=code: %" PRId64 " of %" PRId64 " samples ran code that an exec "
				"replaced before its modules could be read; they are in no function or path below "
				"(their shares are of all %" PRId64 ")\n", w->code_replaced, w->code_samples,
			w->code_samples);
	print_table(w, &w->funcs, "top functions (the faulting instruction's)", "function", fmt, out);
	print_table(w, &w->paths, "top call paths (innermost first, 6 frames; --folded has them whole)", "path", fmt,
		    out);
	if (w->o.folded && write_folded(w, w->o.folded) < 0)
		w->write_failed = true; /* why: said by the writer */
}
