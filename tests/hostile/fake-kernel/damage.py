#!/usr/bin/env python3
"""Write the guest's rows (argv[1], header + rows) to the rows file (argv[2]) with damage.
CB_H_PAYLOAD: a payload name (PAYLOADS) inserted as one line after line CB_H_AFTER (0: before the header);
CB_H_SPLIT=K: row K (1-based data row) is cut in two by the payload (that row is lost);
CB_H_KEEP=K: only the header and the first K rows are sent (then the guest ends: CB_H_EXIT / CB_H_END);
CB_H_CHUNKS=N: the bytes go out in N pieces 0.25 s apart (the host reads every 0.2 s);
CB_H_CRLF=1: every line ends CR LF."""
import os, sys, time
src, dst = sys.argv[1], sys.argv[2]
lines = open(src, 'rb').read().split(b'\n')
if lines and lines[-1] == b'':
    lines.pop()
hdr, data = lines[0], lines[1:]
def sub_field(row, col, val):
    cols = hdr.split(b','); i = cols.index(col)
    import csv, io
    f = next(csv.reader(io.StringIO(row.decode())))
    f[i] = val
    o = io.StringIO(); csv.writer(o, lineterminator='').writerow(f); return o.getvalue().encode()
r1 = data[0] if data else b''
PAYLOADS = {
    'kern': b'[   12.345678] audit: type=1400 audit(1700000000.123:42): apparmor="DENIED" operation="open"',
    'kern2': b'<6>[    0.000000] Linux version 6.12.0 (root@x) #1 SMP',
    'nul': b'\0', 'nuls': b'\0' * 64, 'quote': b'"', 'quote2': b'""', 'unterm': b'"unterminated,1,2,3',
    'midquote': b'ab"cd,1,2', 'endquote': r1 + b'"', 'quoterow': b'"' + r1,
    'long70k': b'A' * 70000, 'long2m': b'B' * (2 << 20), 'long2mq': b'"' + b'C' * (2 << 20),
    'commas': b',' * 5000, 'commas110': b',' * 110, 'header': hdr, 'dup': r1,
    'foreign': sub_field(r1, b'cell', 'workload=zzz size=1'), 'rep0': sub_field(r1, b'rep', '0'),
    'rep999': sub_field(r1, b'rep', '999'), 'repneg': sub_field(r1, b'rep', '-1'),
    'repbig': sub_field(r1, b'rep', '99999999999999999999999'), 'schema99': sub_field(r1, b'schema', '99'),
    'esc': b'\x1b[2J\x1b[31mred\x1b[0m', 'cr': b'\r', 'ff': b'\xff\xfe\xfd', 'half': r1[: len(r1) // 2],
    'nulrow': r1[:40] + b'\0' + r1[41:], 'empty': b'', 'blank3': b'\n\n', 'tab': b'\t\t',
    'bom': b'\xef\xbb\xbf' + r1, 'spaces': b'   ', 'ctrlz': b'\x1a', 'cell-inj': sub_field(r1, b'status', '=cmd|calc'),
    'morefields': r1 + b',extra', 'fewer': r1.rsplit(b',', 1)[0],
    'flood': b'\n'.join([b'[  1.0] flood line'] * 200000), 'dupflood': b'\n'.join([r1] * 20000),
    'blob20m': b'D' * (20 << 20),
}
out = []
after = int(os.environ.get('CB_H_AFTER', '-1'))
payload = PAYLOADS[os.environ['CB_H_PAYLOAD']] if os.environ.get('CB_H_PAYLOAD') else None
split = int(os.environ.get('CB_H_SPLIT', '0'))
keep = int(os.environ.get('CB_H_KEEP', str(len(data))))
seq = [hdr] + data[:keep]
for i, l in enumerate(seq):
    if payload is not None and after == i:
        out.append(payload)
    if split and i == split:
        out.append(l[: len(l) // 2]); out.append(payload if payload is not None else b''); out.append(l[len(l) // 2:])
    else:
        out.append(l)
if payload is not None and after >= len(seq):
    out.append(payload)
eol = b'\r\n' if os.environ.get('CB_H_CRLF') else b'\n'
blob = eol.join(out) + eol
if os.environ.get('CB_H_NOEOL'):
    blob = blob[: -len(eol)]
n = max(1, int(os.environ.get('CB_H_CHUNKS', '1')))
with open(dst, 'ab', buffering=0) as f:
    step = -(-len(blob) // n)
    for k in range(0, len(blob), step):
        f.write(blob[k:k + step])
        if n > 1:
            time.sleep(0.25)
