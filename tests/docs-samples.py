#!/usr/bin/env python3
"""The output the docs show is the output this build prints (ctest "docs-samples", "docs-samples-measured").

A sample is a block the docs mark by name: in Markdown an HTML comment `<!-- sample: NAME -->` on the
line before a fenced block, in the man page a comment `.\\" sample: NAME` on the line before `.nf`
(its text roff-escaped). SAMPLES below says how the build makes each one. A block holds, for each
command, its `$ COMMAND` line (the binary may be spelled `cowbench`, `./build/cli/cowbench` or with
`sudo`; a `# comment` after it is the docs' own) and then what it prints; a block of one command
may leave the `$` line out.

- exact samples (commands on committed fixtures, help and error texts) are regenerated and must be
  equal, byte for byte;
- measured samples (run, stat, explain on this machine, as root) are run again and compared by
  shape: numbers with their units become '#', runs of blanks one blank; every line must then be
  equal in order, except lines the sample says vary (warnings a run may or may not print, rows
  whose '-' cells depend on timing), which must still match their own pattern.

usage: docs-samples.py COWBENCH SOURCE_DIR [--exact | --measured] [--update] [NAME...]
  --exact      only the exact samples (ctest docs-samples; no root, no measurement)
  --measured   only the measured ones (ctest docs-samples-measured; skips, exit 77, unless root)
  --update     rewrite the marked blocks from this build instead of comparing (measured samples
               only as root): maintainers regenerate samples, they do not edit them by hand.
"""
import difflib
import os
import pty
import re
import select
import shlex
import subprocess
import sys
import tempfile
import time

SKIP = 77  # ctest's SKIP_RETURN_CODE for this test


class Step:
    """One `$ COMMAND` of a sample: what the docs show and how it is run.

    argv[0] 'cowbench' is this build's binary; tty=COLS runs it on a pseudo-terminal that wide
    (what a person sees: scaled units, the closing summary), else through a pipe. out: 'stdout',
    'stderr' or 'both' (a terminal shows both). post: a function of the text (head, elide)."""

    def __init__(self, shown, argv, tty=None, out="stdout", rc=0, post=None, pipe=None, env=None):
        self.shown, self.argv, self.tty, self.out, self.rc = shown, argv, tty, out, rc
        self.post, self.pipe, self.env = post, pipe, env or {}


class Sample:
    def __init__(self, steps, measured=False, varies=()):
        self.steps, self.measured = steps, measured
        # '...' stands for lines a sample leaves out (elide); the build's lines are cut the same way
        self.varies = [re.compile(v) for v in list(varies) + [r"^\.\.\.$"]]
        # a line a terminal wrapped: indented 4 or more, not a number (rows of numbers are indented too)
        self.join = re.compile(r"^ {4,}(?![\d ])\S") if measured else None


def head(n):
    return lambda text: "".join(text.splitlines(True)[:n])


def elide(first, last):
    """The first lines, a line '...', the last: a watch whose length depends on timing."""
    def cut(text):
        lines = text.splitlines(True)
        if len(lines) <= first + last + 1:
            return text
        return "".join(lines[:first] + ["...\n"] + lines[-last:])
    return cut


def grep_table(text):
    return "".join(l for l in text.splitlines(True) if l.startswith("|"))


FIX = "tests/fixtures"
RUN_160 = ["run", "--workload=seq", "--size=16M", "--format=table"]
# A closing summary wraps at the terminal's width: its continuation lines are joined before the shapes
# are compared. Tukey and interval warnings come and go with the run; a reference within the timer's
# resolution is a lower bound ("at least") only where it is.
RUN_VARIES = [r"^ *⚠ ", r"^ *note: ",
              r"^ *(?:at least )?# the same write without COW \(#, one unrecorded --no-fork rep[,)]",
              r"^ *a # memcpy in user space takes # \(warm\)(?:, # into a page just populated \(its first touch.*\))?$"]
# A watch's rows: a row's '-' cells (no copy, no us/copy) depend on where its intervals fall.
STAT_VARIES = [r"^# (?:[#-] ?)+$"]

SAMPLES = {
    # ---- exact: fixtures, help and messages ----

    "unknown-command": Sample([Step("cowbench frobnicate", ["cowbench", "frobnicate"], out="stderr", rc=2)]),
    "list": Sample([Step("cowbench list", ["cowbench", "list"])]),
    # report.md's headline ratios as the main job writes them (analysis/main-job.sh), for the rows of
    # a committed matrix of this VM rather than a fresh run.
    "main-job-ratios": Sample([Step(None, ["cowbench", "summarize", "--quiet", "--metric=elapsed_ns",
                                           "--baseline", "fork=0", "--format=json", f"{FIX}/stats_fork.csv"],
                                    pipe=["python3", "analysis/headline-ratios.py"], post=grep_table)]),
    "compare-by-fork": Sample([Step("cowbench compare --by=fork tests/fixtures/stats_fork.csv "
                                    "--metric=elapsed_ns,faults,lat_p50_ns",
                                    ["cowbench", "compare", "--by=fork", f"{FIX}/stats_fork.csv",
                                     "--metric=elapsed_ns,faults,lat_p50_ns"], tty=160)]),
    "summarize-baseline": Sample([Step("cowbench summarize tests/fixtures/stats_fork.csv --baseline fork=0 "
                                       "--metric=elapsed_ns",
                                       ["cowbench", "summarize", f"{FIX}/stats_fork.csv", "--baseline", "fork=0",
                                        "--metric=elapsed_ns"], tty=100)]),
    # ---- measured on this machine, compared by shape ----
    "run-seq-16M": Sample([Step("cowbench run --workload=seq --size=16M --format=table", ["cowbench"] + RUN_160,
                                tty=160)], measured=True, varies=RUN_VARIES),
    "stat-python": Sample([Step("cowbench stat --interval=0.5 -- /usr/bin/python3 tests/programs/cow-refcount.py "
                                "plain 200000",
                                ["cowbench", "stat", "--interval=0.5", "--", "/usr/bin/python3",
                                 "tests/programs/cow-refcount.py", "plain", "200000"], tty=160, post=elide(3, 1))],
                          measured=True, varies=STAT_VARIES),
    "stat-where-code": Sample([Step("cowbench stat --where=code --interval=0.5 -- /usr/bin/python3 "
                                    "tests/programs/cow-refcount.py plain 200000",
                                    ["cowbench", "stat", "--where=code", "--interval=0.5", "--", "/usr/bin/python3",
                                     "tests/programs/cow-refcount.py", "plain", "200000"], tty=160)],
                              measured=True, varies=STAT_VARIES + [
                                  r"^where \(code\): # write faults on present pages sampled \[exceptions:page_fault_user; ",
                                  r"^ *# of them further than frame pointers reach",
                                  r"^ *# # \S+( \([^)]+\))?$",  # a function (and its file, when known)
                                  r"^ *# # \S+( <- \S+)+$",  # a call path
                                  r"^ *- "]),  # advice
    "explain": Sample([Step("cowbench run --size=64M --reps=3 --explain --probes=all --format=table",
                            ["cowbench", "run", "--size=64M", "--reps=3", "--explain", "--probes=all",
                             "--format=table"], tty=160, out="both")],
                      measured=True,
                      # the verdict says what this run's numbers mean; first touch what the host does
                      varies=RUN_VARIES + [r"^ *=> ", r"^ *# a first write to a freshly populated page: "]),
}


# ---- running the build ----

def run_step(step, binary, src):
    argv = [binary if a == "cowbench" else a for a in step.argv]
    env = dict(os.environ, LANG="C.UTF-8", **step.env)
    for v in ("COLUMNS", "LINES", "LC_ALL", "LC_CTYPE"):
        env.pop(v, None)
    if step.tty:
        text, rc = on_pty(argv, step.tty, env, src, step.out)
    else:
        p = subprocess.run(argv, cwd=src, env=env, capture_output=True, timeout=300)
        rc = p.returncode
        data = p.stdout
        if step.pipe:
            q = subprocess.run(step.pipe, cwd=src, env=env, input=p.stdout, capture_output=True, timeout=60)
            data, rc = q.stdout, rc or q.returncode
        text = {"stdout": data, "stderr": p.stderr, "both": p.stderr + data}[step.out].decode("utf-8", "replace")
    if rc != step.rc:
        raise RuntimeError(f"{' '.join(step.argv)}: exit {rc}, not {step.rc}\n{text}")
    return step.post(text) if step.post else text


def on_pty(argv, cols, env, cwd, out):
    """argv's output on a terminal cols wide, as the screen ends up showing it (redraws settled)."""
    err = tempfile.TemporaryFile()
    pid, fd = pty.fork()
    if pid == 0:
        import fcntl
        import struct
        import termios
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
        if out != "both":
            os.dup2(err.fileno(), 2)  # notes and the progress line apart
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    data, deadline = b"", time.time() + 300
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 5)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        data += chunk
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", data.decode("utf-8", "replace"))
    lines = [raw.rstrip("\r").split("\r")[-1] for raw in text.replace("\r\n", "\n").split("\n")]
    lines = [l for l in lines[:-1]] if lines and lines[-1] == "" else lines
    text = "".join(l + "\n" for l in lines if out != "stderr" or l)
    if out == "stderr":
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    err.close()
    return text, os.waitstatus_to_exitcode(status)


def generate(name, binary, src):
    """The block's lines as this build prints them, each command's output under its $ line."""
    sample = SAMPLES[name]
    parts = []
    for step in sample.steps:
        parts.append((step, run_step(step, binary, src)))
    return parts


# ---- the docs' blocks ----

DOCS = ["README.md", "docs/guide.md", "docs/cowbench.1"]
MD_MARK = re.compile(r"^<!-- sample: ([\w.-]+) -->$")
MAN_MARK = re.compile(r'^\.\\" sample: ([\w.-]+)$')


def roff_unescape(line):
    line = line.replace("\\-", "-").replace("\\(mc", "µ").replace("\\(*m", "µ").replace("\\(+-", "±")
    line = line.replace("\\e", "\\").replace("\\&", "")
    return line


def roff_escape(line):
    line = line.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + line if line.startswith((".", "'")) else line


def blocks(path):
    """(name, first line index, end index, [lines]) of every marked block; lines unescaped."""
    lines = open(path, encoding="utf-8").read().split("\n")
    man = path.endswith(".1")
    found = []
    for i, line in enumerate(lines):
        m = (MAN_MARK if man else MD_MARK).match(line)
        if not m:
            continue
        opener = ".nf" if man else "```"
        closer = ".fi" if man else "```"
        if i + 1 >= len(lines) or lines[i + 1] != opener:
            raise SystemExit(f"{path}:{i + 1}: sample {m.group(1)} is not followed by a {opener} line")
        end = i + 2
        while end < len(lines) and lines[end] != closer:
            end += 1
        if end >= len(lines):
            raise SystemExit(f"{path}:{i + 1}: sample {m.group(1)}'s block never ends")
        body = lines[i + 2:end]
        found.append((m.group(1), i + 2, end, [roff_unescape(l) for l in body] if man else body))
    return found, lines


COMMAND = re.compile(r"^\$ (?:sudo )?(?:\./build/cli/)?(cowbench\b.*?)(?:\s+# .*)?$")


def split_block(name, body):
    """The block's commands as shown (None where the $ line is left out) and each one's output."""
    sample = SAMPLES[name]
    if not any(l.startswith("$ ") for l in body):
        return [None], ["".join(l + "\n" for l in body)], [None]
    shown, outs, raw = [], [], []
    for l in body:
        if l.startswith("$ "):
            m = COMMAND.match(l)
            shown.append(m.group(1) if m else l[2:])
            raw.append(l)
            outs.append("")
        elif outs:
            outs[-1] += l + "\n"
        else:
            raise ValueError(f"sample {name}: output before the first $ line")
    if len(shown) != len(sample.steps):
        raise ValueError(f"sample {name}: {len(shown)} commands in the docs, {len(sample.steps)} in SAMPLES")
    return shown, outs, raw


NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:\s?(?:ns|µs|us|ms|s|MiB|KiB|GiB|kB|%)(?!\w)|[x×](?!\w))?")


def shape(sample, text):
    """Lines with their numbers as '#' and blanks collapsed; wrapped lines joined first."""
    lines = []
    for l in text.splitlines():
        if sample.join and sample.join.match(l) and lines:
            lines[-1] += " " + l.strip()
        else:
            lines.append(l)
    out = []
    for l in lines:
        s = re.sub(r"\s+", " ", NUMBER.sub("#", l)).rstrip()
        out.append(s)
    return out


def compare_shape(sample, doc, got):
    """Problems, or []: every line alike in order, but for those the sample lets vary."""
    def fixed(lines):
        return [l for l in lines if not any(v.search(l) for v in sample.varies)]
    problems = []
    d, g = fixed(shape(sample, doc)), fixed(shape(sample, got))
    if d != g:
        diff = "\n".join(difflib.unified_diff(d, g, "docs (shape)", "build (shape)", lineterm=""))
        problems.append(diff)
    return problems


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    if len(args) < 2 or flags - {"--exact", "--measured", "--update"}:
        sys.exit(__doc__)
    binary, src, only = os.path.realpath(args[0]), os.path.realpath(args[1]), set(args[2:])
    unknown = only - set(SAMPLES)
    if unknown:
        sys.exit(f"docs-samples: no sample named {', '.join(sorted(unknown))}")
    want_measured = "--exact" not in flags
    want_exact = "--measured" not in flags
    root = os.geteuid() == 0
    if "--measured" in flags and not root:
        print("docs-samples: SKIP: the measured samples run as root (run, stat, explain as the docs show them)")
        return SKIP
    failures, seen, checked, cache = [], set(), 0, {}
    for doc in DOCS:
        path = os.path.join(src, doc)
        found, lines = blocks(path)
        edits = []
        for name, start, end, body in found:
            if name not in SAMPLES:
                failures.append(f"{doc}:{start}: sample {name}: not in tests/docs-samples.py's SAMPLES")
                continue
            seen.add(name)
            sample = SAMPLES[name]
            if (only and name not in only) or (sample.measured and not want_measured) or \
                    (not sample.measured and not want_exact):
                continue
            if sample.measured and not root:
                print(f"docs-samples: {doc}:{start}: {name}: not run (measured samples run as root)")
                continue
            try:
                shown, outs, raw = split_block(name, body)
                if name not in cache:
                    cache[name] = generate(name, binary, src)
            except (ValueError, RuntimeError, subprocess.TimeoutExpired) as e:
                failures.append(f"{doc}:{start}: {e}")
                continue
            checked += 1
            new_body = []
            for (step, got), seen_cmd, doc_out, raw_line in zip(cache[name], shown, outs, raw):
                if step.shown and seen_cmd is not None and seen_cmd != step.shown:
                    failures.append(f"{doc}:{start}: sample {name} shows `{seen_cmd}`, the sample runs "
                                    f"`{step.shown}`")
                if "--update" in flags:
                    if raw_line is not None:
                        new_body.append(raw_line)
                    new_body += got.rstrip("\n").split("\n") if got.strip() else []
                    continue
                if not sample.measured and doc_out != got:
                    diff = "".join(difflib.unified_diff(doc_out.splitlines(True), got.splitlines(True),
                                                        f"{doc} ({name})", "this build"))
                    failures.append(f"{doc}:{start}: sample {name} differs from the build's output:\n{diff}")
                elif sample.measured:
                    for p in compare_shape(sample, doc_out, got):
                        failures.append(f"{doc}:{start}: sample {name} has another shape than the build's "
                                        f"output:\n{p}")
            if "--update" in flags:
                if doc.endswith(".1"):
                    new_body = [roff_escape(l) for l in new_body]
                edits.append((start, end, new_body))
        if edits:
            for start, end, new_body in reversed(edits):
                lines[start:end] = new_body
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            print(f"docs-samples: rewrote {len(edits)} samples in {doc}")
    for name in sorted(set(SAMPLES) - seen):
        failures.append(f"sample {name} is in SAMPLES but no document marks it")
    for f in failures:
        print(f"docs-samples: {f}", file=sys.stderr)
    if not failures:
        print(f"docs-samples: {checked} samples {'rewritten' if '--update' in flags else 'match this build'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
