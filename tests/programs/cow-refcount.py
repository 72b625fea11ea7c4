"""cow-refcount.py plain|freeze OBJECTS: CPython's copy-on-write after fork, for cowbench stat --where.

The parent makes OBJECTS small lists (objects the collector tracks), optionally gc.freeze()s
them, pauses so a watcher sees them shared, and forks. The child reads a quarter of them (each
read writes the object's reference count) and runs a full collection (which writes the header of
every tracked object it traverses: all of them unless frozen), lingers a moment and exits; the
parent waits.
"""
import gc
import os
import sys
import time


def main():
    mode, count = sys.argv[1], int(sys.argv[2])
    if mode not in ("plain", "freeze"):
        sys.exit("usage: cow-refcount.py plain|freeze OBJECTS")
    print(f"cow-refcount: pid={os.getpid()}", file=sys.stderr, flush=True)
    gc.disable()  # no collection in the parent: the child's is the one measured
    objs = [[i] for i in range(count)]
    if mode == "freeze":
        gc.freeze()
    time.sleep(0.5)
    pid = os.fork()
    if pid == 0:
        total = sum(len(o) for o in objs[: count // 4])
        gc.collect()
        time.sleep(0.3)  # alive at the watcher's next look, which tells copies from reuses
        os._exit(0 if total == count // 4 else 1)
    _, status = os.waitpid(pid, 0)
    time.sleep(0.3)
    os._exit(os.waitstatus_to_exitcode(status))  # no teardown: its frees would add write faults of their own


main()
