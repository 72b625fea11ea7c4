"""A forking CPython loop for bench_stat: N times, fork a child that walks a list of objects
(touching their reference counts, so COW copies the pages they sit on) and exits; the parent
waits for each child. usage: forkloop.py [FORKS] [OBJECTS] [TIMEFILE]; TIMEFILE gets the seconds
the program itself ran (building the objects and the loop), apart from what starts or ends it, then
the CPU seconds it and its children used meanwhile (user + system: what a watcher adds to the work
itself, apart from the CPUs it takes from a shared machine)."""
import os
import resource
import sys
import time

def cpu_s():
    """User + system seconds of this process and of the children it reaped (microseconds, not clock ticks)."""
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


t0 = time.monotonic()
c0 = cpu_s()
forks = int(sys.argv[1]) if len(sys.argv) > 1 else 100
objects = [str(i) * 3 for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 20000)]
for _ in range(forks):
    pid = os.fork()
    if pid == 0:
        n = 0
        for o in objects:
            n += len(o)
        os._exit(0)
    os.waitpid(pid, 0)
if len(sys.argv) > 3:
    with open(sys.argv[3], "w", encoding="ascii") as f:
        f.write(f"{time.monotonic() - t0:.6f} {cpu_s() - c0:.6f}\n")
