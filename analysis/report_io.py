"""What the analysis scripts read and write, checked as cowbench's own commands check theirs.

Inputs: a damaged file (not UTF-8, a byte-order mark, a missing column, a cut or overlong row, an
empty or non-numeric cell where a number must be, nan, inf, a negative count or time, a bad gzip
stream) is bad input: BadInput names the file and the record, and the script's main() turns it
into one line on stderr and exit 2 (run_main), never a traceback. A FIFO or device is refused
before it is opened, never waited on.

Outputs: written to a temporary file in the same folder and renamed into place when whole; a
path that is a symbolic link, FIFO, device or folder is refused (never replaced, never written
through). Text from data that goes into Markdown goes through md().
"""
import csv
import gzip
import math
import os
import stat
import sys
import tempfile
import zlib

NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


class BadInput(Exception):
    """Damaged input: its message names the file and what is wrong (exit 2)."""


class BadOutput(Exception):
    """An output path that is no file to replace (exit 2)."""


def run_main(prog, main):
    """main() with bad input or output as one line on stderr and exit 2."""
    try:
        main()
    except (BadInput, BadOutput) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        sys.exit(2)


def _check_regular(path):
    try:
        st = os.stat(path)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"{path}: not a regular file")


def read_text(path):
    """A small text file whole, as UTF-8 without a byte-order mark."""
    _check_regular(path)
    with open(path, "rb") as f:
        data = f.read()
    return _decode(path, data)


def _decode(path, data):
    if data.startswith(b"\xef\xbb\xbf"):
        raise BadInput(f"{path}: starts with a byte-order mark (write it as plain UTF-8)")
    if b"\0" in data:
        raise BadInput(f"{path}: a NUL byte")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: not UTF-8 (byte {e.start})") from None


def read_csv(path, required, gz=False):
    """Rows of a CSV with a header holding every column of required, each row as long as the header."""
    _check_regular(path)
    try:
        if gz:
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except (OSError, EOFError, zlib.error) as e:
        raise BadInput(f"{path}: {'not a whole gzip stream' if gz else 'unreadable'} ({e})") from None
    text = _decode(path, data)
    if text and not text.endswith("\n"):
        raise BadInput(f"{path}: the last record is cut (no line end)")
    try:
        records = list(csv.reader(text.splitlines(), strict=True))
    except csv.Error as e:
        raise BadInput(f"{path}: {e}") from None
    if not records:
        raise BadInput(f"{path}: empty (no header)")
    header = records[0]
    missing = [c for c in required if c not in header]
    if missing:
        raise BadInput(f"{path}: no column {missing[0]!r}")
    if len(set(header)) != len(header):
        raise BadInput(f"{path}: a column named twice in the header")
    rows = []
    for n, rec in enumerate(records[1:], start=2):
        if len(rec) != len(header):
            raise BadInput(f"{path}: record {n}: {len(rec)} fields where the header has {len(header)}")
        rows.append(dict(zip(header, rec)))
    return rows


def number(path, n, row, col, empty_ok=False, integer=False):
    """row[col] as a finite number >= 0 (None for an empty cell when empty_ok)."""
    v = row.get(col, "")
    if v == "":
        if empty_ok:
            return None
        raise BadInput(f"{path}: record {n}: column {col!r} is empty")
    try:
        x = int(v) if integer else float(v)
    except ValueError:
        raise BadInput(f"{path}: record {n}: column {col!r}: {v[:40]!r} is not a{'n integer' if integer else ' number'}") from None
    if not math.isfinite(x) or x < 0 or x > 1e18:
        raise BadInput(f"{path}: record {n}: column {col!r}: {v[:40]!r} is no count or time (finite, 0 to 1e18)")
    return x


def name(path, n, row, col):
    """row[col] as a name of letters, digits and -_. (redis_load's labels)."""
    v = row.get(col, "")
    if not v or len(v) > 63 or not set(v) <= NAME_CHARS:
        raise BadInput(f"{path}: record {n}: column {col!r}: {v[:40]!r} is not a name (letters, digits, -_.)")
    return v


def md(text):
    """Text from data as Markdown that shows that text and nothing else (as cowbench's report.md)."""
    out = []
    for ch in str(text):
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(" ")
            continue
        if ch in "\\`*_[]<>#|&~":
            out.append("\\")
        out.append(ch)
    return "".join(out)


def check_output(path):
    """An output path: nothing there yet, or a regular file (not a link) to replace."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise BadOutput(f"{path}: not a regular file (a link, FIFO, device or folder is never replaced)")


def write_output(path, text=None, writer=None, newline=None):
    """path written whole or not at all: text, or writer(f) on a text file; renamed into place."""
    check_output(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path)[:200] + ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as f:
            if writer:
                writer(f)
            else:
                f.write(text)
        os.chmod(tmp, 0o644)
        check_output(path)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def install(src, path):
    """A file made elsewhere in the same file system (a plot) renamed to path, under check_output's rule."""
    check_output(path)
    os.replace(src, path)
