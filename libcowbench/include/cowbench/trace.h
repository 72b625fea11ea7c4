#ifndef COWBENCH_TRACE_H
#define COWBENCH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * COW write traces (cowbench record, --workload=replay): per process, the
 * first write to each page after a fork, in time order. A text file:
 *
 *   # cowbench-trace 1
 *   # source: ...            (free text: how it was recorded)
 *   # kernel: ...
 *   # command: ...
 *   t_ns,fork,side,pid,map,kind,map_pages,page,class
 *   1200,1,child,4242,3,heap,33792,17,copy
 *   ...
 *   # end records=N lost=L complete
 *
 * t_ns: nanoseconds since the fork; fork: 1, 2, ... per fork seen; side:
 * parent or child; map: the mapping's index in the fork's snapshot, kind
 * heap|stack|anon|file|special, map_pages its size in pages, page the
 * index within it; class copy|reuse|zero (forkcow.h). The trailer says the
 * file is whole: a reader refuses a file without it. Comment values are
 * single-line printable text (writers replace anything else with '?').
 */

#define CB_TRACE_VERSION 1
#define CB_TRACE_MAX_RECORDS (64u << 20)
#define CB_TRACE_MAX_MAP_PAGES (1ull << 28) /* 1 TiB of 4 KiB pages */

enum cb_trace_side { CB_TRACE_PARENT, CB_TRACE_CHILD };
enum cb_trace_class { CB_TRACE_COPY, CB_TRACE_REUSE, CB_TRACE_ZERO };

struct cb_trace_rec {
	uint64_t t_ns;
	uint32_t fork, map;
	enum cb_trace_side side;
	int pid;
	char kind[8];
	uint64_t map_pages, page;
	enum cb_trace_class cls;
};

struct cb_trace {
	char source[160], kernel[96], command[256];
	struct cb_trace_rec *rec;
	size_t n;
	uint64_t lost;      /* samples the kernel dropped while recording */
};

/** Write the header (the comment values are sanitised). */
int cb_trace_write_header(FILE *fp, const char *source, const char *kernel, const char *command);
int cb_trace_write_rec(FILE *fp, const struct cb_trace_rec *r);
/** The trailer that marks the file whole. */
int cb_trace_write_end(FILE *fp, size_t records, uint64_t lost);

/**
 * Parse a whole trace from text. 0, or CB_EFORMAT with why (and the line)
 * in err; -ENOMEM. Records must be in fork order and, within a fork, in time
 * order; the trailer's count must match.
 */
int cb_trace_parse(const char *text, size_t len, struct cb_trace *out, char *err, size_t errlen);
/** Read and parse a file (at most 256 MiB). -errno when it cannot be read. */
int cb_trace_read(const char *path, struct cb_trace *out, char *err, size_t errlen);
void cb_trace_free(struct cb_trace *t);

const char *cb_trace_side_name(enum cb_trace_side s);
const char *cb_trace_class_name(enum cb_trace_class c);

#endif
