"""The CPython refcount case of issue 25 (analysis/traces/record-traces.sh records it).

usage: python3 cpython-refcount.py N

The parent builds N small objects (a tuple of an int and a str each) and forks; the child reads
every object once. Reading an object in CPython writes its reference count, so the child dirties
the pages holding the objects: the child's first writes after fork are the trace. Both sides
leave with os._exit, so no interpreter teardown (which frees every object) writes after them.
"""
import os
import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    objs = [(i, str(i)) for i in range(n)]
    pid = os.fork()
    if pid == 0:
        total = 0
        for o in objs:
            total += o[0] + len(o[1])
        os._exit(0 if total >= 0 else 1)
    _, status = os.waitpid(pid, 0)
    sys.stdout.flush()
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
