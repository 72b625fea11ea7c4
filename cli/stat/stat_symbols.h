#ifndef COWBENCH_STAT_SYMBOLS_H
#define COWBENCH_STAT_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Code addresses of a live process to function names, from the process's
 * own ELF files (and their separate debug files when installed) through
 * elfutils' libdwfl: it reads /proc/PID/maps, opens each module, and looks
 * in .symtab, .dynsym or the debug file, so stripped Debian binaries still
 * name their exported functions. An address no module symbol covers (a
 * JIT or interpreter frame, a static function of a stripped file) stays an
 * address: "module+0xOFF" or "0xADDR", never a neighbour's name.
 */

struct cli_symbols;

struct cli_symbols *cli_symbols_new(void);
void cli_symbols_free(struct cli_symbols *s);
/**
 * The name of ip in process pid (or, when pid is gone, in fallback: the
 * parent it was forked from, same code). leaf: ip is the faulting
 * instruction itself; otherwise a return address (looked up at ip - 1).
 * The string lives until cli_symbols_free.
 */
const char *cli_symbols_name(struct cli_symbols *s, pid_t pid, pid_t fallback, uint64_t ip, bool leaf);
/**
 * Unwind a sampled user stack through the modules' call frame information
 * (.eh_frame/.debug_frame, as `perf record --call-graph=dwarf`), so code
 * built without frame pointers still has callers. regs: perf's user
 * registers (ax bx cx dx si di bp sp ip r8..r15); stack: the copy from sp
 * up. Fills up to max code addresses, innermost first (pcs[0] is ip);
 * returns how many (0 when it cannot unwind at all).
 */
int cli_symbols_unwind(struct cli_symbols *s, pid_t pid, pid_t fallback, pid_t tid, const uint64_t regs[17],
		       const unsigned char *stack, uint64_t size, uint64_t *pcs, int max);
/** The module (file name without directory) of the last name looked up, or "?". */
const char *cli_symbols_last_module(const struct cli_symbols *s);
/** pid ran exec or exited: its code is not what was read. */
/**
 * pid ran exec at when (CLOCK_MONOTONIC): its modules read whole before
 * then are kept for code that ran before it (cli_symbols_when); read
 * during or after, they are dropped.
 */
void cli_symbols_exec(struct cli_symbols *s, pid_t pid, uint64_t when);
/** Read pid's modules now, if they are not already (a fork child's code is its parent's at the fork). */
void cli_symbols_read(struct cli_symbols *s, pid_t pid);
/** pid's current modules can be read (read now if they were not): false once it is gone. */
bool cli_symbols_readable(struct cli_symbols *s, pid_t pid);
/** pid's current modules are read (or were tried). */
bool cli_symbols_have(const struct cli_symbols *s, pid_t pid);
/**
 * The lookups that follow (name, unwind) are for code pid ran at time at;
 * pre_exec: under a program an exec has replaced since, which only
 * modules read before that exec can name (the process's maps are now the
 * new program's). false when there are none: such an address would be
 * named in the wrong program. The fallback pid is always looked up as it
 * is now.
 */
bool cli_symbols_when(struct cli_symbols *s, pid_t pid, uint64_t at, bool pre_exec);

#endif
