/*
 * Bad input, as a table: every case must exit 2 with exactly one line on
 * stderr, nothing on stdout, and leave no file behind (the case's own
 * directory holds only what the case put there). @ in an argument is the
 * case's directory; files[] are written there first (\0 allowed: length
 * given by the literal), or links made (LINK_).
 */
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "testutil.h"

#define FX(name) CB_FIXTURE_DIR "/" name
#define HDR      "schema,workload,size_bytes,fork,rep,status\n"
#define CELL_HDR "schema,workload,size_bytes,fork,rep,status,cell\n"
#define FILE_(name, text) { name, text, sizeof(text) - 1 }
/*
 * A symbolic link NAME -> TARGET in the case's directory. A system path (/dev/null, /dev/stdout)
 * is only ever reached through one: a build that wrongly replaced its output would replace the
 * private link, never the machine's node.
 */
#define LINK_(name, target) { name, target, LINK_LEN }
#define LINK_LEN ((size_t)-1)
/* Valid inputs for the cases that must not write over them. */
#define ROWS     "schema,workload,size_bytes,fork,rep,status,elapsed_ns\n1,seq,4096,1,1,ok,100\n1,seq,4096,0,1,ok,90\n"
#define ROWS_B   "schema,workload,size_bytes,fork,rep,status,elapsed_ns\n1,seq,4096,1,2,ok,110\n1,seq,4096,0,2,ok,95\n"
#define CSV_A    FILE_("a.csv", ROWS)
#define CSV_B    FILE_("b.csv", ROWS_B)
#define SAME     "same file as"
/* A whole trace (cowbench record's format): a run of it works, so only the input check keeps it. */
#define TRACE    FILE_("t.trace", "# cowbench-trace 1\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" \
			  "100,1,child,2,0,anon,4,1,copy\n# end records=1 lost=0 complete\n")

struct infile {
	const char *name, *text;
	size_t len;
};

static const struct bad_case {
	const char *argv[14];
	struct infile files[3];
	const char *needle;
} cases[] = {
	/* cowbench itself */
	{ { "cowbench", NULL }, { { 0 } }, "no command" },
	{ { "cowbench", "frobnicate", NULL }, { { 0 } }, "unknown command" },
	/* run */
	{ { "cowbench", "run", "--size=0", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "run", "--size=-1", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "run", "--size=1E", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "run", "--size=99999999T", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "run", "--size=1000T", "--output", "@/o.csv", NULL }, { { 0 } }, "MiB" },
	{ { "cowbench", "run", "--reps=0", "--output", "@/o.csv", NULL }, { { 0 } }, "--reps" },
	{ { "cowbench", "run", "--reps=abc", "--output", "@/o.csv", NULL }, { { 0 } }, "--reps" },
	{ { "cowbench", "run", "--workload=nope", "--output", "@/o.csv", NULL }, { { 0 } }, "workload" },
	/* v3 of the pre-copy series has modes 0-2 and a depth of at most 64 (its batch cap). */
	{ { "cowbench", "run", "--precopy=3", "--output", "@/o.csv", NULL }, { { 0 } }, "--precopy" },
	{ { "cowbench", "run", "--precopy-depth=65", "--output", "@/o.csv", NULL }, { { 0 } }, "--precopy-depth" },
	{ { "cowbench", "run", "--writer=both", "--output", "@/o.csv", NULL }, { { 0 } }, "--writer" },
	{ { "cowbench", "run", "--break=trap", "--output", "@/o.csv", NULL }, { { 0 } }, "--break must be" },
	{ { "cowbench", "run", "--workload=fork", "--break=populate", "--output", "@/o.csv", NULL }, { { 0 } },
	  "--break are for page-order" },
	{ { "cowbench", "matrix", "--break=fault,bogus", "--output", "@/o.csv", NULL }, { { 0 } }, "--break" },
	{ { "cowbench", "run", "--format=xml", "--output", "@/o.csv", NULL }, { { 0 } }, "--format" },
	{ { "cowbench", "run", "--clock=sundial", "--output", "@/o.csv", NULL }, { { 0 } }, "--clock" },
	{ { "cowbench", "run", "--output=", NULL }, { { 0 } }, "--output" },
	{ { "cowbench", "run", "--size=256K", "--output", "@/o.csv", "extra", NULL }, { { 0 } }, "unexpected" },
	{ { "cowbench", "run", "--bogus", NULL }, { { 0 } }, "bogus" },
	{ { "cowbench", "run", "--size=256K", "--output", "@/old.csv", NULL }, { FILE_("old.csv", "keep\n") }, "--force" },
	{ { "cowbench", "run", "--size=256K", "--output", "@", NULL }, { { 0 } }, "Is a directory" },
	{ { "cowbench", "run", "--size=256K", "--output", "@/no/such/dir/o.csv", NULL }, { { 0 } }, "cannot write" },
	/* list, info */
	{ { "cowbench", "list", "extra", NULL }, { { 0 } }, "list" },
	{ { "cowbench", "info", "extra", NULL }, { { 0 } }, "info" },
	/* stat */
	{ { "cowbench", "stat", NULL }, { { 0 } }, "nothing to watch" },
	/* record: arguments are checked before anything is traced; the trace is written whole or not at all */
	{ { "cowbench", "record", "--output=@/t.trace", NULL }, { { 0 } }, "nothing to record" },
	{ { "cowbench", "record", "--", "true", NULL }, { { 0 } }, "--output" },
	{ { "cowbench", "record", "--output=@/t.trace", "true", NULL }, { { 0 } }, "'--'" },
	{ { "cowbench", "record", "--output=@/no/dir/t.trace", "--", "true", NULL }, { { 0 } }, "cannot write" },
	{ { "cowbench", "record", "--output=@/t.trace", "--duration=0", "--", "true", NULL }, { { 0 } }, "--duration" },
	{ { "cowbench", "record", "--output=@/t.trace", "-p", "1", "--", "true", NULL }, { { 0 } }, "not both" },
	/* replay: the trace file is input like any other */
	{ { "cowbench", "run", "--workload=replay", "--size=1M", NULL }, { { 0 } }, "--trace" },
	{ { "cowbench", "run", "--workload=replay", "--trace=a,b", "--size=1M", NULL }, { { 0 } }, "--trace" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/none.trace", "--size=1M", NULL }, { { 0 } }, "No such file" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--size=1M", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "1,1,child,5,0,heap,4,0,copy\n") }, "not whole" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--size=1M", NULL },
	  { FILE_("t.trace", "# cowbench-trace 9\n") }, "version 9" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--size=1M", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "1,1,child,5,0,heap,4,9,copy\n# end records=1 lost=0 complete\n") }, "page below" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--size=1M", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "1,1,child,5,0,heap,4,0,copy\n# end records=2 lost=0 complete\n") }, "2 records" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--size=1M", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "9,1,child,5,0,heap,4,0,copy\n5,1,child,5,0,heap,4,1,copy\n"
			     "# end records=2 lost=0 complete\n") }, "out of order" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--size=1M", "--writer=parent", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "1,1,child,5,0,heap,4,0,copy\n# end records=1 lost=0 complete\n") }, "--writer" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--size=4K", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "1,1,child,5,0,heap,400,0,copy\n# end records=1 lost=0 complete\n") }, "--size=1600K" },
	/* --gaps: a flag of replay only; a played span over 600 s, or no fork to time it from, is refused */
	{ { "cowbench", "run", "--workload=seq", "--gaps", "--size=1M", NULL }, { { 0 } }, "--gaps" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--gaps=2", "--size=1M", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "1,1,child,5,0,heap,4,0,copy\n# end records=1 lost=0 complete\n") }, "--gaps" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--gaps", "--size=1M", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "1,1,child,5,0,heap,4,0,copy\n700000000001,1,child,5,0,heap,4,1,copy\n"
			     "# end records=2 lost=0 complete\n") }, "span 700.0 s" },
	{ { "cowbench", "run", "--workload=replay", "--trace=@/t.trace", "--gaps", "--no-fork", "--size=1M", NULL },
	  { FILE_("t.trace", "# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,class\n" "1,1,child,5,0,heap,4,0,copy\n# end records=1 lost=0 complete\n") }, "--no-fork" },
	/* run --kernel: one kernel; the host-only reports refused */
	{ { "cowbench", "run", "--kernel=stock,patched", NULL }, { { 0 } }, "one kernel" },
	{ { "cowbench", "run", "--kernel=stock", "--explain", NULL }, { { 0 } }, "--explain" },
	{ { "cowbench", "run", "--kernel=nonesuch", NULL }, { { 0 } }, "nonesuch" },
	{ { "cowbench", "stat", "--pid=abc", NULL }, { { 0 } }, "--pid" },
	{ { "cowbench", "stat", "--pid=999999999", NULL }, { { 0 } }, "--pid" },
	{ { "cowbench", "stat", "--", "@/missing-program", NULL }, { { 0 } }, "cannot run" },
	/* matrix */
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "[g]\nworkload = nope\n") }, "nope" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "[g]\nworkload = s\0q\n") }, "NUL" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "[g\nsize = 1M\n") }, "m.ini:1" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "; nothing\n") }, "no axes" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "[matrix]\nreps = 0\n") }, "reps" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL },
	  { FILE_("m.ini", "[a]\nseed = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100\nthreads = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100\ncheckpointers = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100\nchildren = 1,2\n") },
	  "cells" },
	{ { "cowbench", "matrix", "--dry-run", "/dev/zero", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "matrix", "--dry-run", "@", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "matrix", "--dry-run", "@/none.ini", NULL }, { { 0 } }, "none.ini" },
	{ { "cowbench", "matrix", "--workload=seq", "--size=1E", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "matrix", "--shard=3/2", "--output", "@/o.csv", NULL }, { { 0 } }, "--shard" },
	{ { "cowbench", "matrix", "--reps=-1", "--output", "@/o.csv", NULL }, { { 0 } }, "--reps" },
	{ { "cowbench", "matrix", "--frobs=1", "--output", "@/o.csv", NULL }, { { 0 } }, "frobs" },
	{ { "cowbench", "matrix", "--workload=seq", "--size=256K", "--output", "@/old.csv", NULL },
	  { FILE_("old.csv", "keep\n") }, "--force" },
	{ { "cowbench", "matrix", "--workload=seq", "--size=256K", "--resume", "@/r.csv", NULL },
	  { FILE_("r.csv", HDR "1,seq,4096,1,1,ok\n1,seq,4096,1,\"2,ok\n1,seq,4096,1,3,ok\n") }, "record 3" },
	{ { "cowbench", "matrix", "--workload=seq", "--size=256K", "--resume", "@/r.csv", "--format=json", NULL },
	  { { 0 } }, "--resume" },
	/* merge */
	{ { "cowbench", "merge", NULL }, { { 0 } }, "merge" },
	{ { "cowbench", "merge", "/tmp", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "merge", "/proc/self/mem", NULL }, { { 0 } }, "read error" },
	{ { "cowbench", "merge", "/dev/zero", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "merge", "@/missing.csv", NULL }, { { 0 } }, "missing.csv" },
	{ { "cowbench", "merge", FX("results_shard1.csv"), FX("results_shard1.csv"), NULL }, { { 0 } }, "duplicate" },
	{ { "cowbench", "merge", FX("results_schema2.csv"), NULL }, { { 0 } }, "schema version" },
	{ { "cowbench", "merge", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,1,\"ok\n1,seq,4096,1,2,ok\n") },
	  "record 2" },
	{ { "cowbench", "merge", "@/a.csv", NULL }, { FILE_("a.csv", "schema,schema,workload\n") }, "twice" },
	{ { "cowbench", "merge", FX("results_shard1.csv"), "--output", "@/old.csv", NULL },
	  { FILE_("old.csv", "keep\n") }, "--force" },
	/* summarize */
	{ { "cowbench", "summarize", NULL }, { { 0 } }, "summarize" },
	{ { "cowbench", "summarize", "@/e.csv", NULL }, { FILE_("e.csv", "") }, "no result rows" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,-4096,1,1,ok\n") }, "size_bytes" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,0,ok\n") }, "rep 0" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,s\0q,4096,1,1,ok\n") }, "NUL" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,1,ok,extra\n") }, "fields" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,x,ok\n") }, "rep" },
	{ { "cowbench", "summarize", "/dev/zero", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "summarize", "--metric=workload", FX("results_known.csv"), NULL }, { { 0 } }, "--metric" },
	{ { "cowbench", "summarize", "--baseline", "precopy", FX("results_known.csv"), NULL }, { { 0 } }, "--baseline" },
	{ { "cowbench", "summarize", "--format=yaml", FX("results_known.csv"), NULL }, { { 0 } }, "--format" },
	{ { "cowbench", "summarize", FX("results_known.csv"), "--output", "@/old.txt", NULL },
	  { FILE_("old.txt", "keep\n") }, "--force" },
	/* the same rows given twice (issue 29): one line naming the cell and rep */
	{ { "cowbench", "summarize", FX("results_known.csv"), FX("results_known.csv"), NULL }, { { 0 } },
	  "duplicate cell" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,1,ok\n1,seq,4096,1,1,ok\n") },
	  "'workload=seq size_bytes=4096 fork=1' rep 1 appears twice in" },
	{ { "cowbench", "compare", "--by=fork", FX("results_known.csv"), FX("results_known.csv"), NULL }, { { 0 } },
	  "duplicate cell" },
	{ { "cowbench", "compare", "@/a.csv", "@/b.csv", NULL },
	  { FILE_("a.csv", HDR "1,seq,4096,1,1,ok\n1,seq,4096,1,2,ok\n1,seq,4096,1,1,ok\n"),
	    FILE_("b.csv", HDR "1,seq,4096,1,1,ok\n1,seq,4096,1,2,ok\n") },
	  "rep 1 appears twice in" },
	{ { "cowbench", "merge", "@/a.csv", "@/b.csv", NULL },
	  { FILE_("a.csv", CELL_HDR "1,seq,4194304,1,1,ok,workload=seq size=4M\n"),
	    FILE_("b.csv", CELL_HDR "1,seq,4194304,1,1,ok,workload=seq size=4096K\n") },
	  "'workload=seq size=4M fork=1' rep 1 is in both" },
	/* plot */
	{ { "cowbench", "plot", FX("results_known.csv"), NULL }, { { 0 } }, "--out" },
	{ { "cowbench", "plot", "@/e.csv", "--out", "@/p", NULL }, { FILE_("e.csv", "") }, "no result rows" },
	{ { "cowbench", "plot", "@/a.csv", "--out", "@/p", NULL },
	  { FILE_("a.csv", HDR "1,seq,4096,1,1,ok\n1,seq,4096,\"1,2,ok\n") }, "record 3" },
	{ { "cowbench", "plot", "/dev/zero", "--out", "@/p", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "plot", FX("results_garbage.csv"), "--out", "@/p", NULL }, { { 0 } }, "not a cowbench" },
	/*
	 * No command writes over one of its inputs, whatever the spelling of
	 * either name and with --force (each input is checked byte for byte
	 * after every case, below).
	 */
	{ { "cowbench", "summarize", "@/a.csv", "-o", "@/a.csv", "--force", NULL }, { CSV_A }, SAME },
	{ { "cowbench", "summarize", "--force", "@/a.csv", "-o", "@/./a.csv", NULL }, { CSV_A }, SAME },
	{ { "cowbench", "summarize", "@/a.csv", "@/b.csv", "--output=@//b.csv", "--force", NULL }, { CSV_A, CSV_B },
	  SAME },
	{ { "cowbench", "compare", "--by=fork", "@/a.csv", "@/b.csv", "-o", "@/a.csv", NULL }, { CSV_A, CSV_B }, SAME },
	{ { "cowbench", "compare", "@/a.csv", "@/b.csv", "-o", "@/b.csv", "--force", NULL }, { CSV_A, CSV_B }, SAME },
	{ { "cowbench", "compare", "@/a.csv", "@/b.csv", "--output=@/c.txt", NULL },
	  { CSV_A, CSV_B, FILE_("c.txt", "keep\n") }, "--force" },
	{ { "cowbench", "merge", "@/a.csv", "@/b.csv", "-o", "@/a.csv", "--force", NULL }, { CSV_A, CSV_B }, SAME },
	{ { "cowbench", "merge", "-o@/./b.csv", "--force", "@/a.csv", "@/b.csv", NULL }, { CSV_A, CSV_B }, SAME },
	{ { "cowbench", "matrix", "@/m.ini", "-o", "@/m.ini", "--force", NULL }, { FILE_("m.ini", "[g]\nsize = 1M\n") },
	  SAME },
	{ { "cowbench", "matrix", "@/m.ini", "--resume", "@/m.ini", NULL }, { FILE_("m.ini", "[g]\nsize = 1M\n") },
	  SAME },
	{ { "cowbench", "run", "-s", "256K", "-o", "@/a.csv", "--samples=@/a.csv", "--force", NULL }, { CSV_A }, SAME },
	/* a workload's input file (replay's --trace) is an input too, in run and in every matrix cell */
	{ { "cowbench", "run", "-w", "replay", "--trace=@/t.trace", "-r", "1", "-o", "@/t.trace", "--force", NULL },
	  { TRACE }, SAME },
	{ { "cowbench", "run", "-w", "replay", "-r", "1", "-o", "@/./t.trace", "--force", "--trace=@/t.trace", NULL },
	  { TRACE }, SAME },
	{ { "cowbench", "run", "-w", "replay", "--trace=@/t.trace", "-r", "1", "--samples=@/t.trace", NULL }, { TRACE },
	  SAME },
	{ { "cowbench", "matrix", "-w", "replay", "--trace=@/t.trace", "-r", "1", "-o", "@//t.trace", "--force", NULL },
	  { TRACE }, SAME },
	{ { "cowbench", "matrix", "--trace=@/t.trace", "-w", "replay", "--resume=@/t.trace", NULL },
	  { TRACE }, SAME },
	{ { "cowbench", "plot", "@/report.md", "-o", "@", NULL }, { FILE_("report.md", ROWS) }, "write over the input" },
	{ { "cowbench", "plot", "@/a.csv", "-o", "@", "--samples=@/s.svg", NULL },
	  { CSV_A, FILE_("s.svg", "rep,index,page,latency_ns\r\n1,0,0,100\r\n") }, "write over the input" },
	{ { "cowbench", "stat", "--where=code", "--folded=@/a.csv", "--", "cat", "@/a.csv", NULL }, { CSV_A }, SAME },
	{ { "cowbench", "stat", "--where=code", "--folded=@", "--", "true", NULL }, { { 0 } }, "not a regular file" },
	/* record and stat --folded: every other output's checks, before the command runs (it would leave @/ran) */
	{ { "cowbench", "record", "--output=@/a.csv", "--", "touch", "@/ran", NULL }, { CSV_A }, "give --force" },
	{ { "cowbench", "record", "--output=@", "--", "touch", "@/ran", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "record", "--output=@/no/t", "--", "touch", "@/ran", NULL }, { { 0 } }, "cannot write in" },
	{ { "cowbench", "record", "--output=@/..", "--", "touch", "@/ran", NULL }, { { 0 } }, "needs a file name" },
	{ { "cowbench", "record", "--output=@/null", "--", "touch", "@/ran", NULL }, { LINK_("null", "/dev/null") },
	  "leave out --output" },
	{ { "cowbench", "record", "--force", "--output=@/t.trace", "--", "@/t.trace", NULL }, { TRACE }, SAME },
	{ { "cowbench", "stat", "--where=code", "--folded=@/a.csv", "--", "touch", "@/ran", NULL }, { CSV_A },
	  "give --force" },
	{ { "cowbench", "stat", "--where=code", "--folded=@/no/f", "--", "touch", "@/ran", NULL }, { { 0 } },
	  "cannot write in" },
	{ { "cowbench", "summarize", "--metric=,", "@/a.csv", NULL }, { CSV_A }, "--metric" },
	{ { "cowbench", "summarize", "--metric=", "@/a.csv", NULL }, { CSV_A }, "--metric" },
	/* an --output is a file to replace: /dev/stdout, /dev/null and fd links are refused alike */
	{ { "cowbench", "run", "-s", "256K", "-o", "@/stdout", NULL }, { LINK_("stdout", "/dev/stdout") },
	  "leave out --output" },
	{ { "cowbench", "run", "-s", "256K", "-o", "@/null", NULL }, { LINK_("null", "/dev/null") }, "leave out --output" },
	{ { "cowbench", "summarize", "@/a.csv", "-o", "@/stdout", NULL }, { CSV_A, LINK_("stdout", "/dev/stdout") },
	  "leave out --output" },
	{ { "cowbench", "compare", "@/a.csv", "@/b.csv", "-o", "@/fd1", NULL },
	  { CSV_A, CSV_B, LINK_("fd1", "/proc/self/fd/1") }, "leave out --output" },
	{ { "cowbench", "matrix", "-s", "1M", "-o", "@/fd1", NULL }, { LINK_("fd1", "/dev/fd/1") }, "leave out --output" },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static size_t dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && (e->d_name[1] != '.' || e->d_name[2]));
	closedir(d);
	return n;
}

START_TEST(bad_input_table)
{
	const struct bad_case *c = &cases[_i];
	char dir[] = "/tmp/cbtest-badXXXXXX", args[14][512], line[2048] = "";
	const char *argv[14] = { 0 };
	size_t nfiles = 0;
	struct cli_result r;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (size_t f = 0; f < 3 && c->files[f].name; f++, nfiles++) {
		char path[600];
		FILE *fp;

		snprintf(path, sizeof(path), "%s/%s", dir, c->files[f].name);
		if (c->files[f].len == LINK_LEN) {
			ck_assert_int_eq(symlink(c->files[f].text, path), 0);
			continue;
		}
		fp = fopen(path, "wb");
		ck_assert_ptr_nonnull(fp);
		ck_assert_uint_eq(fwrite(c->files[f].text, 1, c->files[f].len, fp), c->files[f].len);
		fclose(fp);
	}
	for (size_t i = 0; c->argv[i]; i++) {
		const char *at = strchr(c->argv[i], '@');

		if (at)
			snprintf(args[i], sizeof(args[i]), "%.*s%s%s", (int)(at - c->argv[i]), c->argv[i], dir, at + 1);
		else
			snprintf(args[i], sizeof(args[i]), "%s", c->argv[i]);
		argv[i] = args[i];
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s", args[i]);
	}
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 2, "case %d (%s): exit %d, stderr: %s", _i, line, r.status, r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "case %d (%s): want one stderr line, got: %s", _i, line, r.err);
	ck_assert_msg(r.out_len == 0, "case %d (%s): stdout: %s", _i, line, r.out);
	ck_assert_msg(strstr(r.err, c->needle), "case %d (%s): '%s' not in: %s", _i, line, c->needle, r.err);
	ck_assert_msg(dir_entries(dir) == nfiles, "case %d (%s): a file was left behind", _i, line);
	for (size_t f = 0; f < nfiles; f++) { /* and every input as it was, byte for byte */
		char path[600];
		size_t len = 0;
		char *now;

		snprintf(path, sizeof(path), "%s/%s", dir, c->files[f].name);
		if (c->files[f].len == LINK_LEN) { /* still the link, to the same target */
			char to[600];
			ssize_t n = readlink(path, to, sizeof(to) - 1);

			ck_assert_msg(n >= 0 && (to[n] = '\0', strcmp(to, c->files[f].text) == 0), "case %d (%s): %s changed",
				      _i, line, c->files[f].name);
			continue;
		}
		now = tu_slurp(path, &len);
		ck_assert_msg(now && len == c->files[f].len && memcmp(now, c->files[f].text, len) == 0,
			      "case %d (%s): %s changed", _i, line, c->files[f].name);
		free(now);
	}
	tu_free(&r);
	{
		const char *rm[] = { "rm", "-rf", "--", dir, NULL };
		pid_t pid;

		ck_assert_int_eq(posix_spawnp(&pid, "rm", NULL, NULL, (char *const *)rm, environ), 0);
		waitpid(pid, NULL, 0);
	}
}
END_TEST

/*
 * A FIFO as an input is refused at once by every reader (the matrix's used to block in open),
 * also as replay's --trace (directly or through a link) and as the files tests point cowbench at.
 */
START_TEST(fifo_inputs_refused)
{
	char dir[] = "/tmp/cbtest-fifoXXXXXX", fifo[600], link[600], trace[620], trace_link[620], samples[620],
	     plot_dir[620];
	const char *cmds[][7] = {
		{ "cowbench", "matrix", "--dry-run", fifo, NULL },
		{ "cowbench", "summarize", fifo, NULL },
		{ "cowbench", "merge", fifo, NULL },
		{ "cowbench", "run", "-w", "replay", trace, "-r1", NULL },
		{ "cowbench", "run", "-w", "replay", trace_link, "-r1", NULL },
		{ "cowbench", "matrix", "--dry-run", "-w", "replay", trace_link, NULL },
		{ "cowbench", "plot", FX("results_known.csv"), samples, "--out", plot_dir, NULL },
	};
	static const char *const run[] = { "cowbench", "run", "-s", "64K", "-r", "1", "--probes=none", NULL };
	static const char *const sys[] = { "cowbench", "stat", "--system", "--count=1", "--interval=0.1", NULL };
	static const struct {
		const char *var;
		const char *const *argv;
		int status;
	} envs[] = {
		{ "COWBENCH_MEMINFO", run, 0 },   /* no MemAvailable: the run is not held back */
		{ "COWBENCH_PROC_CGROUP", run, 0 },
		{ "COWBENCH_COWSTATS", sys, 2 },  /* --system without its file: refused */
	};

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/f", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	snprintf(trace, sizeof(trace), "--trace=%s", fifo);
	snprintf(trace_link, sizeof(trace_link), "--trace=%s", link);
	snprintf(samples, sizeof(samples), "--samples=%s", link);
	snprintf(plot_dir, sizeof(plot_dir), "%s/p", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink("f", link), 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		tu_assert_usage_error(cmds[i], "not a regular file");
	/* the environment's stand-ins for /proc and /sys files: a FIFO is no file to wait on */
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		char env[700];
		struct cli_result r;

		snprintf(env, sizeof(env), "%s=%s", envs[i].var, fifo);
		r = tu_run_cli_env(envs[i].argv, env);
		ck_assert_msg(r.status == envs[i].status, "%s: exit %d: %s", env, r.status, r.err);
		tu_free(&r);
	}
	unlink(link);
	unlink(fifo);
	rmdir(dir);
}
END_TEST

/*
 * record --output and stat --folded that no file can take: a 10,000-character name, a FIFO, a
 * device node (root), a symbolic link to nothing: exit 2 before the command runs, the node as it was.
 */
START_TEST(record_folded_outputs_refused)
{
	char dir[] = "/tmp/cbtest-recoutXXXXXX", ran[600], fifo[600], dev[600], dangling[600], opt[12000];
	static const char *const kinds[] = { "long", "fifo", "dev", "dangling" };
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(ran, sizeof(ran), "%s/ran", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(dev, sizeof(dev), "%s/null", dir);
	snprintf(dangling, sizeof(dangling), "%s/dangling", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink("nowhere/x", dangling), 0);
	bool have_dev = mknod(dev, S_IFCHR | 0600, makedev(1, 3)) == 0; /* root only */
	for (int cmd = 0; cmd < 2; cmd++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			const char *name = k == 1 ? fifo : k == 2 ? dev : dangling;
			const char *argv[] = { "cowbench", cmd ? "stat" : "record", opt, "--force", "--", "touch", ran,
					       NULL, NULL };
			struct cli_result r;
			int off;

			if (k == 2 && !have_dev)
				continue;
			if (cmd) { /* stat's options: --where=code --folded=FILE */
				argv[2] = "--where=code";
				argv[3] = opt;
				argv[4] = "--force";
				argv[5] = "--";
				argv[6] = "touch";
				argv[7] = ran;
			}
			off = snprintf(opt, sizeof(opt), "%s=", cmd ? "--folded" : "--output");
			if (k == 0) {
				memset(opt + off, 'a', 10000);
				opt[off + 10000] = '\0';
			} else {
				snprintf(opt + off, sizeof(opt) - (size_t)off, "%s", name);
			}
			r = tu_run_cli(argv);
			ck_assert_msg(r.status == 2, "%s %s: exit %d: %s", argv[1], kinds[k], r.status, r.err);
			ck_assert_msg(tu_count_lines(r.err) == 1, "%s %s: %s", argv[1], kinds[k], r.err);
			ck_assert_msg(access(ran, F_OK) != 0, "%s %s: the command ran", argv[1], kinds[k]);
			tu_free(&r);
		}
	ck_assert(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	ck_assert(lstat(dangling, &st) == 0 && S_ISLNK(st.st_mode));
	ck_assert(!have_dev || (lstat(dev, &st) == 0 && S_ISCHR(st.st_mode)));
	unlink(fifo);
	unlink(dev);
	unlink(dangling);
	ck_assert_int_eq(rmdir(dir), 0); /* nothing else left */
}
END_TEST

/* stat -p of a process that has exited but is not reaped: nothing to watch, said at once (exit 2). */
START_TEST(stat_zombie_refused)
{
	char pid_text[16];
	const char *argv[] = { "cowbench", "stat", "-p", pid_text, "--count=1", NULL };
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	for (int i = 0; i < 6000; i++) { /* until it is a zombie (up to 60 s: a loaded machine may take long) */
		char path[64], buf[256] = "";
		FILE *fp;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fp = fopen(path, "r");
		if (fp && fgets(buf, sizeof(buf), fp) && strstr(buf, ") Z ")) {
			fclose(fp);
			break;
		}
		if (fp)
			fclose(fp);
		usleep(10000);
	}
	snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
	tu_assert_usage_error(argv, "has exited");
	waitpid(pid, NULL, 0);
}
END_TEST

static Suite *badinput_suite(void)
{
	Suite *s = suite_create("badinput");
	TCase *tc = tcase_create("table");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, bad_input_table, 0, (int)NCASES);
	tcase_add_test(tc, fifo_inputs_refused);
	tcase_add_test(tc, record_folded_outputs_refused);
	tcase_add_test(tc, stat_zombie_refused);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(badinput_suite)
