#!/usr/bin/env python3
"""The docs hold together (ctest "docs"): README.md is a front door of at most 15,000 bytes that
carries the two commands exactly as CI and the tests run them; every relative link in README.md
and docs/*.md reaches a file that exists, and every #anchor a heading of that file; no line of
the docs' prose (code blocks aside) is longer than 200 characters.
usage: docs-test.py SOURCE_DIR"""
import os
import re
import sys

src = sys.argv[1]
errors = []


def slug(heading):
    s = re.sub(r'[^\w\- ]', '', heading.strip().lower())
    return s.replace(' ', '-')


def headings(path):
    out, code = set(), False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            code = not code
        elif not code and line.startswith('#'):
            out.add(slug(line.lstrip('#').strip()))
    return out


readme = os.path.join(src, 'README.md')
size = os.path.getsize(readme)
if size > 15000:
    errors.append(f'README.md is {size} bytes, more than 15,000: move detail into docs/')
text = open(readme, encoding='utf-8').read()
for cmd in ('./analysis/main-job.sh', './tests/run-all.sh'):
    if not re.search(r'^' + re.escape(cmd) + r'$', text, re.M):
        errors.append(f'README.md lacks the command line "{cmd}" on a line of its own')
ci = open(os.path.join(src, '.ci', 'run'), encoding='utf-8').read()
if './tests/run-all.sh' not in ci:
    errors.append('.ci/run no longer runs ./tests/run-all.sh, the command README documents')

docs = [readme] + sorted(os.path.join(src, 'docs', f) for f in os.listdir(os.path.join(src, 'docs'))
                         if f.endswith('.md'))
for doc in docs:
    name = os.path.relpath(doc, src)
    code = False
    for no, line in enumerate(open(doc, encoding='utf-8'), 1):
        if line.startswith('```'):
            code = not code
            continue
        if code:
            continue
        if len(line.rstrip('\n')) > 200:
            errors.append(f'{name}:{no}: a line of {len(line.rstrip())} characters (at most 200)')
        for target in re.findall(r'\]\(([^)\s]+)\)', line):
            if re.match(r'^[a-z]+://', target):
                continue
            path, _, anchor = target.partition('#')
            full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            if not os.path.exists(full):
                errors.append(f'{name}:{no}: link to {target}: no such file')
            elif anchor and full.endswith('.md') and anchor not in headings(full):
                errors.append(f'{name}:{no}: link to {target}: no such heading')

for e in errors:
    print(f'docs-test: {e}', file=sys.stderr)
sys.exit(1 if errors else 0)
