#!/usr/bin/env python3
"""What a person sees on an 80- and a 120-column terminal: no line on stdout wider than it.

run, summarize, compare, stat and stat --where run on a pseudo-terminal of
that size (TIOCSWINSZ, COLUMNS unset: the size the program reads itself);
every line of their output, progress redraws taken at their last state,
must fit. A narrow table also names what it left out, and --columns
chooses columns (an unknown name: exit 2 with the list).

usage: width-test.py COWBENCH SOURCE_DIR        (ctest runs it)
"""
import fcntl
import os
import pty
import re
import select
import struct
import sys
import tempfile
import termios

BIN = os.path.realpath(sys.argv[1])
SRC = os.path.realpath(sys.argv[2])
FIX = os.path.join(SRC, "tests", "fixtures")
failures = []


def on_pty(argv, cols, timeout=120):
    """Run argv with stdout on a pty cols wide; its text and exit status.

    stderr (notes and warnings, one line each by convention; the progress line) goes to a file: what
    is measured is what the commands print for people on stdout, tables and summaries."""
    err = tempfile.TemporaryFile()
    pid, fd = pty.fork()
    if pid == 0:
        env = dict(os.environ, LANG="C.UTF-8")
        env.pop("COLUMNS", None)
        env.pop("LC_ALL", None)
        os.dup2(err.fileno(), 2)
        os.execve(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    out = b""
    while True:
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            os.kill(pid, 9)
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    err.seek(0)
    text = out.decode("utf-8", "replace")
    on_err = err.read().decode("utf-8", "replace")
    err.close()
    return text, os.waitstatus_to_exitcode(status), on_err


def screen_lines(text):
    """Lines as the terminal shows them: a carriage return or ESC[K redraw keeps the last state."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    for raw in text.split("\n"):
        yield raw.rstrip("\r").split("\r")[-1]


def check(name, argv, cols, expect=0, want=None):
    before = len(failures)
    text, rc, err = on_pty(argv, cols)
    if rc != expect:
        failures.append(f"{name} at {cols}: exit {rc}, not {expect}\n{text}{err}")
        return text + err
    # A refusal is one line on stderr, whatever the width (the list of columns is long).
    wide = [l for l in screen_lines(text) if len(l) > cols] if expect == 0 else []
    if wide:
        failures.append(f"{name} at {cols} columns: {len(wide)} lines wider, e.g. {len(wide[0])}: {wide[0]!r}")
    if want and not re.search(want, text + err):
        failures.append(f"{name} at {cols}: no match for {want!r}\n{text}{err}")
    if len(failures) == before:
        print(f"ok   {name} at {cols} columns ({max((len(l) for l in screen_lines(text)), default=0)} widest)")
    return text + err


with tempfile.TemporaryDirectory() as tmp:
    rows = os.path.join(tmp, "r.csv")
    # A small matrix with long cell names: the file summarize and compare read.
    _, rc, _ = on_pty([BIN, "matrix", "--workloads=seq,random", "--sizes=1M", "--fork=1,0", "--reps=3",
                    "--warmup=0", "--output", rows, "--quiet"], 200)
    if rc != 0:
        failures.append(f"matrix for the fixture: exit {rc}")
    for cols in (80, 120):
        check("run", [BIN, "run", "--size=2M", "--reps=3", "--format=table"], cols,
              # wrapped anywhere; 3 reps: the engine's exact interval is [min, max] at 1 - 2/8 = 75 %
              want=r"CV\s+[0-9.]+\s+%,\s+75\.0\s+%\s+CI\s+\[")
        check("run --target-ci", [BIN, "run", "--size=1M", "--reps=3", "--target-ci=50", "--max-reps=4",
                                  "--format=table"], cols, want=r"--target-ci:\s+(met|not\s+met)")
        check("summarize", [BIN, "summarize", rows, "--baseline", "fork=0"], cols, want=r"ratio")
        check("summarize fixture", [BIN, "summarize", os.path.join(FIX, "results_depth_baseline.csv"),
                                    "--baseline", "precopy=0"], cols)
        check("compare --by", [BIN, "compare", "--by=fork", rows], cols, want=r"verdict")
        check("compare files", [BIN, "compare", os.path.join(FIX, "compare_old.csv"),
                                os.path.join(FIX, "compare_new.csv")], cols)
        check("stat", [BIN, "stat", "--", BIN, "run", "--size=2M", "--reps=1", "--format=csv",
                       "--output", os.path.join(tmp, "s.csv"), "--force"], cols)
        check("stat --where", [BIN, "stat", "--where=maps", "--", BIN, "run", "--size=2M", "--reps=1",
                               "--format=csv", "--output", os.path.join(tmp, "w.csv"), "--force"], cols)
    # 80 columns cannot hold compare's every column: what was left out is said, once.
    text = check("compare names what it left out", [BIN, "compare", os.path.join(FIX, "compare_old.csv"),
                                                    os.path.join(FIX, "compare_new.csv")], 80,
                 want=r"left out to fit 80 columns:[^)]*--columns")
    # --columns chooses; an unknown name is refused with the list, before any output.
    check("compare --columns", [BIN, "compare", "--columns=cell,metric,change,verdict",
                                os.path.join(FIX, "compare_old.csv"), os.path.join(FIX, "compare_new.csv")], 80)
    text = check("summarize --columns=bogus", [BIN, "summarize", "--columns=bogus", rows], 80, expect=2,
                 want=r"unknown column 'bogus'; the table's columns: cell, metric")
    if "median" in text.split("cowbench: --columns")[0]:
        failures.append("summarize --columns=bogus printed output before refusing")
    # A pipe is not a terminal: nothing is left out there (scripts and files get every column).
    out = os.popen(f"'{BIN}' compare '{FIX}/compare_old.csv' '{FIX}/compare_new.csv'").read()
    if "left out" in out or "old centre [CI]" not in out:
        failures.append("compare through a pipe left columns out:\n" + out)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
