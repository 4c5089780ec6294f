"""Reading the docs as the docs tests do: which documents, their code (fenced blocks and
inline spans) and prose, and their tables."""
import glob
import os
import re

from conftest import REPO

DOCS = sorted(glob.glob(os.path.join(REPO, 'docs', '*.md'))) + [
    os.path.join(REPO, 'README.md'), os.path.join(REPO, 'reframe_tests', 'references', 'README.md')]
FENCE = re.compile(r'^```[^\n]*\n(.*?)^```$', re.M | re.S)
SPAN = re.compile(r'(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)', re.S)


def read(path):
    with open(path) as f:
        return f.read()


def code_of(text):
    """(commands: the fenced blocks' lines, continuations joined; inline spans; prose)."""
    lines = []
    for block in FENCE.findall(text):
        for line in block.splitlines():
            # A continued line: after a backslash, or indented under an option list.
            if lines and (lines[-1].endswith('\\') or re.match(r'\s+[-\[]', line)):
                lines[-1] = lines[-1].rstrip('\\') + ' ' + line.strip()
            else:
                lines.append(line)
    rest = FENCE.sub('', text)
    spans = [' '.join(m.group(2).split()) for m in SPAN.finditer(rest)]
    return lines, spans, SPAN.sub(' ', rest)


def tables(path):
    """{section heading: [table rows as lists of cells]} of a markdown file."""
    found, section = {}, ''
    for line in FENCE.sub('', read(path)).splitlines():
        if line.startswith('#'):
            section = line.lstrip('#').strip()
        elif line.startswith('|') and not line.startswith('|---'):
            found.setdefault(section, []).append(
                [c.strip() for c in line.strip().strip('|').split('|')])
    return found


def doc_name(path):
    return os.path.relpath(path, os.path.join(REPO, 'docs')) if '/docs/' in path else \
        os.path.relpath(path, REPO)
