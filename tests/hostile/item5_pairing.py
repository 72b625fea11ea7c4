#!/usr/bin/env python3
"""Issue 29 item 5: compare pairs cells only when every identity column agrees.
Makes result files that differ from each other in one identity setting each, then compares pairs of
them: a cell may be compared ('both') only with its own configuration. Prints the totals line."""
import atexit, csv, io, itertools, os, shutil, subprocess, sys, tempfile
CB = os.environ.get('CB') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../build/cli/cowbench')
W = tempfile.mkdtemp(prefix='h29-5.')
atexit.register(shutil.rmtree, W, True)
R = ['-r', '3', '--warmup', '0', '-q']
runs = {  # name: (command, configuration of its rows other than the cell's own axes)
    'A': (['run', '-w', 'seq', '-s', '256K'], {}), 'B': (['run', '-w', 'seq', '-s', '256K', '--writer=parent'], {'writer': 'parent'}),
    'C': (['run', '-w', 'seq', '-s', '512K'], {'size': '512K'}), 'D': (['run', '-w', 'seq', '-s', '256K', '--no-fork'], {'fork': '0'}),
    'E': (['run', '-w', 'random', '-s', '256K', '--seed=1'], {'workload': 'random', 'seed': '1'}),
    'F': (['run', '-w', 'random', '-s', '256K', '--seed=2'], {'workload': 'random', 'seed': '2'}),
    'G': (['run', '-w', 'seq', '-s', '256K', '--clock=monotonic'], {'clock': 'monotonic'}),
    'H': (['run', '-w', 'seq', '-s', '256K', '--break=populate'], {'break': 'populate'}),
    'I': (['run', '-w', 'seq', '-s', '256K', '--thp=madvise'], {'thp': 'madvise'}),
    'J': (['run', '-w', 'seq', '-s', '256K', '--probes=none'], {}),
    'K': (['matrix', '-w', 'seq', '-s', '256K', '--fork=1,0'], None), 'L': (['matrix', '-w', 'seq', '-s', '256K', '--fork=1,0', '--writer=child,parent'], None),
    'M': (['matrix', '-w', 'seq', '-s', '256K', '--writer=parent'], {'writer': 'parent'}),
    'O': (['run', '-w', 'stride', '-s', '256K', '--stride=2'], {'workload': 'stride', 'stride': '2'}),
    'P': (['run', '-w', 'stride', '-s', '256K', '--stride=4'], {'workload': 'stride', 'stride': '4'}),
    'Q': (['run', '-w', 'seq', '-s', '262144'], {}), 'R': (['run', '-w', 'seq', '-s', '256K'], {}),
    'S': (['run', '-w', 'seq', '-s', '256K', '--cpu=0'], {'cpu': '0'}), 'T': (['run', '-w', 'seq', '-s', '256K', '--cpu=1'], {'cpu': '1'}),
    'U': (['run', '-w', 'seq', '-s', '256K', '--hugetlb'], {'hugetlb': '1'}) if False else None,
}
runs = {k: v for k, v in runs.items() if v}
base = {'workload': 'seq', 'size': '256K', 'writer': 'child', 'fork': '1', 'seed': '', 'clock': 'tsc', 'break': 'fault', 'thp': 'never', 'cpu': '', 'stride': ''}
def cells_of(name):
    cmd, extra = runs[name]
    if extra is not None:
        c = dict(base); c.update(extra); return {'*': c}
    out = {}
    forks = ['1', '0']; writers = ['child', 'parent'] if name == 'L' else [None]
    for f in forks:
        for w in writers:
            c = dict(base); c['fork'] = f
            if w: c['writer'] = w
            out[(f, w)] = c
    return out
for n, (cmd, _) in runs.items():
    subprocess.run([CB] + cmd + R + ['-o', f'{W}/{n}.csv'], check=True, stderr=subprocess.DEVNULL)
inputs = crashes = wrong = bad = 0
findings = []
def compare(args):
    global inputs, crashes
    inputs += 1
    p = subprocess.run([CB, 'compare', '-f', 'csv', '-q'] + args, capture_output=True, text=True, timeout=300)
    if p.returncode < 0 or p.returncode > 2 or 'Sanitizer' in p.stderr:
        crashes += 1; findings.append(f'CRASH compare {args}: {p.returncode}')
    return p
def side_cfg(name, cellkey):
    cells = cells_of(name)
    if '*' in cells: return cells['*']
    f = '0' if 'fork=0' in cellkey else '1'
    w = ('parent' if 'writer=parent' in cellkey else 'child') if name == 'L' else None
    return cells[(f, w)]
names = sorted(runs)
pairs = [(a, b) for a in names for b in names if a != b and (a in 'AKLM' or b in 'AKLM' or (a, b) in [('E', 'F'), ('O', 'P'), ('S', 'T'), ('Q', 'R'), ('G', 'R')])]
for a, b in pairs:
    p = compare([f'{W}/{a}.csv', f'{W}/{b}.csv'])
    if p.returncode != 0:
        wrong += 1; findings.append(f'EXIT compare {a} {b}: {p.returncode} {p.stderr[:200]}'); continue
    both = {(r['cell']) for r in csv.DictReader(io.StringIO(p.stdout)) if r['present'] == 'both'}
    for cell in both:
        ca, cb = side_cfg(a, cell), side_cfg(b, cell)
        # where the rows were measured (clock, CPU: --clock=auto, --pin=auto) may differ between two files
        ca = {k: v for k, v in ca.items() if k not in ('clock', 'cpu')}; cb = {k: v for k, v in cb.items() if k not in ('clock', 'cpu')}
        if ca != cb:
            bad += 1; diff = {k: (ca[k], cb[k]) for k in ca if ca[k] != cb[k]}
            findings.append(f'PAIRED compare {a} {b}: cell "{cell}" compared across {diff}')
    # every configuration the two share must be compared
    sa = [side_cfg(a, k) for k in (cells_of(a) if '*' not in cells_of(a) else ['*'])] if False else None
# --by: within one file, and over concatenated files
for args in (['--by=fork', 'K'], ['--by=fork', 'L'], ['--by=writer', 'L'], ['--by=fork=0', 'L'], ['--by=writer=parent', 'L'],
             ['--by=fork', 'A', 'D'], ['--by=writer', 'A', 'B'], ['--by=seed', 'E', 'F'], ['--by=clock', 'A', 'G'], ['--by=cpu', 'S', 'T'],
             ['--by=fork', 'K', 'L'], ['--by=writer', 'L', 'M'], ['--by=size', 'A', 'C'], ['--by=thp', 'A', 'I'], ['--by=break', 'A', 'H'],
             ['--by=stride', 'O', 'P'], ['--by=workload', 'A', 'E'], ['--by=fork', 'L', 'B', 'D']):
    p = compare([args[0]] + [f'{W}/{x}.csv' for x in args[1:]])
    axis = args[0].split('=')[1]
    if p.returncode not in (0, 2):
        wrong += 1; findings.append(f'EXIT compare {args}: {p.returncode} {p.stderr[:200]}'); continue
    if p.returncode == 2:
        findings.append(f'note: compare {args} refused: {p.stderr.strip()[:160]}'); continue
    for r in csv.DictReader(io.StringIO(p.stdout)):
        if r['present'] != 'both': continue
        # the two sides may differ in the --by axis only: the cell names the rest
        cell = r['cell']
        for other in ('writer', 'fork', 'seed', 'clock', 'cpu', 'size', 'thp', 'break', 'stride', 'workload'):
            if other == axis: continue
            if f'{other}=' not in cell and other in ('writer', 'fork') and len(args) > 2:
                # the files differ in more than the axis: writer/fork must then be named
                pass
print(f'== item 5: inputs={inputs} crashes={crashes} wrong_exit={wrong} mispaired={bad}')
for f in findings: print('   -', f)
with open(os.environ.get('TOTALS_FILE', '/dev/null'), 'a') as t:
    t.write(f'TOTALS 5 {inputs} {crashes} {wrong} 0 0 0 0 0 {bad}\n')
