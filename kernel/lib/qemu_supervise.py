#!/usr/bin/env python3
"""Run QEMU, stream the guest console, and pick the protocol lines out of it.

The guest init (kernel/lib/guest-init.sh) prints:
  @@COWBENCH-CMD-START@@                 before the command
  @@COWBENCH-STDOUT-BEGIN@@              base64 of the command's stdout ...
  @@COWBENCH-STDOUT-END@@                ... up to here
  @@COWBENCH-FILE-BEGIN@@ <path>         base64 of one file of /out ...
  @@COWBENCH-FILE-END@@                  ... up to here
  @@COWBENCH-EXIT@@ <status>             the command's exit status

Our stdout is the command's stdout and nothing else; every console line
(boot, kernel messages, the command's stderr) goes to our stderr.

Exit status: the command's, or 1 when a kernel BUG/WARNING/Oops/panic shows
on the console (KASAN reports start with "BUG: KASAN", lockdep's with
"WARNING: possible ..." or "WARNING: inconsistent ..."), 124 on timeout, 125 when the guest died without a status.

One boot is retried: when a splat's whole report (up to its closing "====" or
"---[ end trace") comes before the command started and names no cowbench
function (cow_*), QEMU is killed there and the guest boots once more.  The
command never ran, so nothing is measured twice.  Why: the KASAN kernel under
TCG now and then reports an interrupt taken in early boot (start_kernel ->
identify_cpu) as a wild access.  A second splat, or any in our code, fails.
"""
import argparse
import base64
import os
import re
import signal
import subprocess
import sys
import threading
import time

STDOUT = "\0stdout"  # key of the command's stdout among the transferred files

SPLAT = re.compile(
    r"(^|\]\s)(BUG: |WARNING: |Oops: |Kernel panic|kernel BUG at|"
    r"general protection fault|------------\[ cut here \]|Bad page state|"
    r"Unable to handle kernel|page_table_check)")
# A kernel message printed into the middle of a base64 line: the line's base64 start, then the message.
INTERLEAVED = re.compile(r"([A-Za-z0-9+/=]*)(\[\s*\d+\.\d+\]\s.*)")
# The line that closes a KASAN report, or a WARNING's trace.
REPORT_END = re.compile(r"(^|\]\s)(={20,}\s*$|---\[ end trace)")
# Functions of the kernel patch series: a report naming one is never boot noise.
OUR_CODE = re.compile(r"\bcow_[a-z_]")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", default="")
    ap.add_argument("--log", default="")
    ap.add_argument("--quiet-boot", action="store_true",
                    help="do not echo console lines before the command starts")
    ap.add_argument("--probe", action="store_true",
                    help="only report whether the guest reached the command")
    ap.add_argument("qemu", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    a.cmd = a.qemu[1:] if a.qemu and a.qemu[0] == "--" else a.qemu
    return a


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Boot:
    """One QEMU run: what its console said."""

    def __init__(self):
        self.started = False
        self.status = None
        self.splats = []
        self.files = {}
        self.timed_out = False
        self.boot_noise = None  # first line of a boot-time report to boot again for


def watch_parent(proc):
    # COWBENCH_WATCH_PID: the process waiting for the guest's rows (cowbench matrix --kernel).
    # If it dies, even by SIGKILL, nobody reads them: take QEMU down instead of running on.
    watch = os.environ.get("COWBENCH_WATCH_PID", "")
    if not watch.isdigit():
        return

    def watcher(pid=int(watch)):
        while proc.poll() is None:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                kill_group(proc)
                return
            except PermissionError:
                pass
            time.sleep(0.5)
    threading.Thread(target=watcher, daemon=True).start()


def run_once(a, logf, current, may_retry):
    """Boot once; CURRENT[0] holds the QEMU process for the signal handlers."""
    b = Boot()
    proc = subprocess.Popen(a.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    current[0] = proc

    def killer():
        b.timed_out = True
        kill_group(proc)

    timer = threading.Timer(a.timeout, killer)
    timer.start()
    watch_parent(proc)

    report = None  # lines of a splat report seen before the command started
    cur_file = None
    cur_data = []
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
            if logf:
                logf.write(line + "\n")
            if "@@COWBENCH-CMD-START@@" in line:
                b.started = True
                if a.probe:
                    b.status = 0
                    break
                continue
            if "@@COWBENCH-STDOUT-BEGIN@@" in line:
                cur_file, cur_data = STDOUT, []
                continue
            m = re.search(r"@@COWBENCH-FILE-BEGIN@@ (\S+)", line)
            if m:
                cur_file, cur_data = m.group(1), []
                continue
            if cur_file is not None:
                if "@@COWBENCH-FILE-END@@" in line or "@@COWBENCH-STDOUT-END@@" in line:
                    b.files[cur_file] = "".join(cur_data)
                    cur_file = None
                elif re.fullmatch(r"[A-Za-z0-9+/=]*", line):
                    cur_data.append(line)
                else:
                    # The console is shared: keep the base64 a kernel message cut into (the rest of
                    # the line follows on the next one), and judge the message like any other.
                    m = INTERLEAVED.fullmatch(line)
                    if m:
                        cur_data.append(m.group(1))
                        line = m.group(2)
                    if SPLAT.search(line):
                        b.splats.append(line)
                    print(line, file=sys.stderr, flush=True)
                continue
            m = re.search(r"@@COWBENCH-EXIT@@ (\d+)", line)
            if m:
                b.status = int(m.group(1))
                continue
            splat = SPLAT.search(line)
            if splat:
                b.splats.append(line)
            if b.started or not a.quiet_boot or splat or report is not None:
                print(line, file=sys.stderr, flush=True)
            if b.started:
                continue
            if splat and report is None:
                report = []
            if report is None:
                continue
            report.append(line)
            if len(report) > 1 and REPORT_END.search(line):
                if may_retry and not any(OUR_CODE.search(r) for r in report):
                    b.boot_noise = b.splats[0]
                    kill_group(proc)
                    break
                may_retry = False  # this run fails on its splat: later reports change nothing
                report = None
    finally:
        if a.probe:
            kill_group(proc)
        proc.wait()
        timer.cancel()
    return b


def main():
    a = parse_args()
    logf = open(a.log, "w", errors="replace") if a.log else None
    current = [None]

    def on_signal(signum, _frame):
        # QEMU runs in its own session: take it down with us.
        if current[0] is not None:
            kill_group(current[0])
        sys.exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    try:
        b = run_once(a, logf, current, may_retry=not a.probe)
        if b.boot_noise is not None and not b.timed_out:
            print("vm-run: a kernel splat during boot, before the command ran, in no cowbench "
                  "code; booting once more (a second splat fails the run): " + b.boot_noise,
                  file=sys.stderr, flush=True)
            if logf:
                logf.write("@@vm-run: boot noise above; booting once more@@\n")
            b = run_once(a, logf, current, may_retry=False)
    finally:
        if logf:
            logf.close()
    return report_boot(a, b)


def report_boot(a, b):
    if a.probe:
        return 0 if b.started else 1
    files = b.files
    if STDOUT in files:
        try:
            sys.stdout.buffer.write(base64.b64decode(files.pop(STDOUT)))
            sys.stdout.flush()
        except Exception as e:  # noqa: BLE001
            print(f"vm-run: cannot decode the command's stdout: {e}", file=sys.stderr)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        for name, data in files.items():
            rel = os.path.normpath(name).lstrip("./")
            if rel.startswith("..") or not rel:
                continue
            dst = os.path.join(a.out, rel)
            os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
            try:
                with open(dst, "wb") as f:
                    f.write(base64.b64decode(data))
            except Exception as e:  # noqa: BLE001
                print(f"vm-run: cannot decode {name}: {e}", file=sys.stderr)
    if b.timed_out:
        print(f"vm-run: TIMEOUT after {a.timeout:.0f} s, QEMU killed", file=sys.stderr)
        return 124
    if b.splats:
        print("vm-run: kernel BUG/WARNING/Oops/panic on the guest console:", file=sys.stderr)
        for s in b.splats[:10]:
            print("vm-run:   " + s, file=sys.stderr)
        return 1
    if b.status is None:
        print("vm-run: the guest stopped without reporting an exit status", file=sys.stderr)
        return 125
    return b.status


if __name__ == "__main__":
    sys.exit(main())
