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


def main():
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
    cmd = a.qemu[1:] if a.qemu and a.qemu[0] == "--" else a.qemu

    logf = open(a.log, "w", errors="replace") if a.log else None
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    timed_out = [False]

    def killer():
        timed_out[0] = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(a.timeout, killer)
    timer.start()

    def on_signal(signum, _frame):
        # QEMU runs in its own session: take it down with us.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        sys.exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    # COWBENCH_WATCH_PID: the process waiting for the guest's rows (cowbench matrix --kernel).
    # If it dies, even by SIGKILL, nobody reads them: take QEMU down instead of running on.
    watch = os.environ.get("COWBENCH_WATCH_PID", "")
    if watch.isdigit():
        def watcher(pid=int(watch)):
            while proc.poll() is None:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    return
                except PermissionError:
                    pass
                time.sleep(0.5)
        threading.Thread(target=watcher, daemon=True).start()

    started = False
    status = None
    splats = []
    cur_file = None
    cur_data = []
    files = {}
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
            if logf:
                logf.write(line + "\n")
            if "@@COWBENCH-CMD-START@@" in line:
                started = True
                if a.probe:
                    status = 0
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
                    files[cur_file] = "".join(cur_data)
                    cur_file = None
                elif re.fullmatch(r"[A-Za-z0-9+/=]*", line):
                    cur_data.append(line)
                else:
                    print(line, file=sys.stderr, flush=True)
                continue
            m = re.search(r"@@COWBENCH-EXIT@@ (\d+)", line)
            if m:
                status = int(m.group(1))
                continue
            if SPLAT.search(line):
                splats.append(line)
            if started or not a.quiet_boot or SPLAT.search(line):
                print(line, file=sys.stderr, flush=True)
    finally:
        if a.probe:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        timer.cancel()
        if logf:
            logf.close()

    if a.probe:
        return 0 if started else 1
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
    if timed_out[0]:
        print(f"vm-run: TIMEOUT after {a.timeout:.0f} s, QEMU killed", file=sys.stderr)
        return 124
    if splats:
        print("vm-run: kernel BUG/WARNING/Oops/panic on the guest console:", file=sys.stderr)
        for s in splats[:10]:
            print("vm-run:   " + s, file=sys.stderr)
        return 1
    if status is None:
        print("vm-run: the guest stopped without reporting an exit status", file=sys.stderr)
        return 125
    return status


if __name__ == "__main__":
    sys.exit(main())
