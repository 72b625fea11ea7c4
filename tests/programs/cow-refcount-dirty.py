"""cow-refcount-dirty.py OBJECTS FILE: one fork of a CPython program, and the pages its child dirtied.

The parent builds OBJECTS small objects (a tuple of an int and a str each) and forks once; the
child reads every object (each read writes the object's reference count, so COW copies the pages
they sit on) and writes to FILE the pages it dirtied meanwhile: the growth of its Private_Dirty
(/proc/self/smaps_rollup), what the kernel says the child holds alone now and did not just after
the fork. Both sides leave with os._exit: no teardown writes after the measurement.
"""
import os
import sys


def private_dirty_kb():
    with open("/proc/self/smaps_rollup", encoding="ascii") as f:
        for line in f:
            if line.startswith("Private_Dirty:"):
                return int(line.split()[1])
    raise RuntimeError("no Private_Dirty in smaps_rollup")


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    objs = [(i, str(i)) for i in range(n)]
    pid = os.fork()
    if pid == 0:
        before = private_dirty_kb()
        total = 0
        for o in objs:
            total += o[0] + len(o[1])
        after = private_dirty_kb()
        with open(out, "w", encoding="ascii") as f:
            f.write(f"{(after - before) * 1024 // os.sysconf('SC_PAGE_SIZE')}\n")
        os._exit(0 if total >= 0 else 1)
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status))


main()
