#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The architecture's limits, checked on every 'make check', in every language:

- no source file outside tests/ longer than 700 lines: C, Python and shell alike
  (a mode, a scenario or a concern grows into its own file);
- no function longer than 120 lines: C functions, Python functions and methods,
  shell functions;
- code under user/ branches on the mode in at most 6 places: the modes are rows
  of ops tables, not if/else chains (a comparison with a mode enum or mode name,
  or a switch on one, counts as a branch);
- the C code's layers: include/ (and bpf/) include nothing from common/ or
  user/; nothing in common/ includes user/ or a BPF skeleton (*.skel.h); each
  file of common/ sits in a layer folder and includes only its own layer and
  those below it (LAYERS, bottom first); a tool under user/ includes nothing
  of another tool;
- with --objects DIR (the build's common/, LAYER/NAME.o): no two files of
  common/ use each other's definitions in a loop, directly or through others
  (nm says who defines and who uses each symbol). Files of one module that
  share a header may still call each other one way.

A file's language is its extension (.c, .h, .py, .sh), else its first line
(#!... python3, sh or bash); bash completion scripts count as shell. Functions
are found the way each language is laid out here: C in the kernel style
(clang-format keeps it so), a line starting with '{' opens a body and one
starting with '}' closes it; Python, a 'def' and every line indented deeper than
it (or blank) after it; shell, 'name() {' and the next line that is exactly '}'.
An include is resolved as the compiler does: beside the including file, then in
include/, then in common/ (the -I order); one that resolves nowhere in the tree
(a system header) is not the check's business.
Usage: check-layout.py [--objects DIR] [ROOT]. Prints one line per violation; exit 1
if there is any.
"""
import os
import re
import subprocess
import sys

FILE_MAX = 700
FUNC_MAX = 120
BRANCH_MAX = 6
SKIP_DIRS = {'.git', 'build', 'tests', '__pycache__', 'results'}
# common/'s layers, bottom first: a layer may include itself and those before it.
LAYERS = ('base', 'cli', 'pkt', 'xsk', 'kern', 'measure', 'report')
INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]')

# A comparison with, or a switch on, a mode: enum constants such as GEN_XSK or
# MODE_DROP, a '->mode ==' test, or a strcmp against the mode's name.
BRANCH = re.compile(r'(\b(GEN|MODE|SINK)_(XSK|KERNEL|QDISC|DROP|PASS|TX|REDIRECT)\b)|'
                    r'(mode(_name)?\s*[!=]=)|(switch\s*\(\s*[a-z_>.-]*mode\b)|'
                    r'(strcmp\([^)]*mode_name)')


def language(path):
    ext = os.path.splitext(path)[1]
    if ext in ('.c', '.h'):
        return 'c'
    if ext == '.py':
        return 'py'
    if ext == '.sh' or os.path.basename(os.path.dirname(path)) == 'completion':
        return 'sh'
    if ext:
        return None
    try:
        with open(path, encoding='utf-8') as f:
            first = f.readline()
    except (OSError, UnicodeDecodeError):
        return None
    if first.startswith('#!'):
        if 'python' in first:
            return 'py'
        if re.search(r'\b(ba)?sh\b', first):
            return 'sh'
    return None


def sources(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith('.'))
        for f in sorted(files):
            path = os.path.join(d, f)
            lang = language(path)
            if lang:
                yield path, lang


def c_functions(lines):
    """(name, first line, length) of every function body in a C file."""
    out, start, name = [], None, None
    for i, line in enumerate(lines):
        if line.startswith('{') and start is None:
            start = i
            j = i - 1
            while j >= 0 and '(' not in lines[j]:
                j -= 1
            m = re.search(r'(\w+)\s*\(', lines[j]) if j >= 0 else None
            name = m.group(1) if m else '?'
        elif line.startswith('}') and start is not None:
            out.append((name, start + 1, i - start + 1))
            start = None
    return out


def py_functions(lines):
    """(name, first line, length) of every def, nested ones included."""
    out = []
    for i, line in enumerate(lines):
        m = re.match(r'(\s*)(async\s+)?def\s+(\w+)', line)
        if not m:
            continue
        indent, last = len(m.group(1)), i
        for j in range(i + 1, len(lines)):
            s = lines[j]
            if not s.strip():
                continue
            if len(s) - len(s.lstrip()) <= indent:
                break
            last = j
        out.append((m.group(3), i + 1, last - i + 1))
    return out


def sh_functions(lines):
    out, start, name = [], None, None
    for i, line in enumerate(lines):
        m = re.match(r'(?:function\s+)?([\w-]+)\s*\(\)\s*\{', line)
        if m and start is None:
            start, name = i, m.group(1)
        elif line.rstrip() == '}' and start is not None:
            out.append((name, start + 1, i - start + 1))
            start = None
    return out


FUNCTIONS = {'c': c_functions, 'py': py_functions, 'sh': sh_functions}


def mode_branches(root):
    found = []
    for path, lang in sources(os.path.join(root, 'user')):
        if lang != 'c':
            continue
        for i, line in enumerate(open(path, encoding='utf-8'), 1):
            code = line.split('//')[0]
            if BRANCH.search(code) and not code.lstrip().startswith(('*', '/*', '#define')):
                found.append('%s:%d' % (os.path.relpath(path, root), i))
    return found


def resolve(root, path, name):
    """The tree path (relative to root) an include names, or None."""
    for d in (os.path.dirname(path), os.path.join(root, 'include'),
              os.path.join(root, 'common')):
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(cand):
            return os.path.relpath(cand, root)
    return None


def include_problem(rel, target, name):
    """What is wrong with file rel (tree path) including target (tree path or None)."""
    top = rel.split(os.sep)
    if top[0] in ('include', 'bpf'):
        if target and target.split(os.sep)[0] in ('common', 'user'):
            return '%s/ includes nothing from common/ or user/' % top[0]
        return None
    if top[0] == 'user':
        there = target.split(os.sep) if target else []
        if there[:1] == ['user'] and there[1] != top[1]:
            return 'user/%s/ includes nothing of another tool' % top[1]
        return None
    if name.endswith('.skel.h'):
        return 'common/ includes no BPF skeleton: loading a program is its tool\'s job'
    if not target:
        return None
    there = target.split(os.sep)
    if there[0] == 'user':
        return 'common/ includes nothing from user/'
    if there[0] == 'common' and len(there) > 2 and there[1] in LAYERS and \
            LAYERS.index(there[1]) > LAYERS.index(top[1]):
        return '%s is above %s (%s)' % (there[1], top[1], ' < '.join(LAYERS))
    return None


def loops(edges):
    """The strongly connected parts (two or more nodes) of a graph {node: {node}}."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def layer_problems(root):
    """One line per include against the layers, and per common/ file outside them."""
    bad = []
    for d in ('include', 'bpf', 'common', 'user'):
        for path, lang in sources(os.path.join(root, d)):
            if lang != 'c':
                continue
            rel = os.path.relpath(path, root)
            parts = rel.split(os.sep)
            if parts[0] == 'common' and (len(parts) < 3 or parts[1] not in LAYERS):
                bad.append('%s: not in a layer of common/ (%s)' % (rel, ', '.join(LAYERS)))
                continue
            for i, line in enumerate(open(path, encoding='utf-8'), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                why = include_problem(rel, resolve(root, path, m.group(1)), m.group(1))
                if why:
                    bad.append('%s:%d: includes "%s": %s' % (rel, i, m.group(1), why))
    return bad


def symbol_problems(root, objdir):
    """Loops among common/'s objects (objdir holds LAYER/NAME.o): a uses b's
    definitions and b, through any path, a's. Read with nm; an object whose
    source is gone (a stale build) is left out."""
    defined, used, mods = {}, {}, {}
    for layer in LAYERS:
        d = os.path.join(objdir, layer)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            if not name.endswith('.o') or \
                    not os.path.isfile(os.path.join(root, 'common', layer, name[:-2] + '.c')):
                continue
            mods[os.path.join(d, name)] = 'common/%s/%s' % (layer, name[:-2])
    # One nm for every object (-A: each line begins "FILE:"): 37 starts took 5 s here.
    out = subprocess.run(['nm', '-A'] + list(mods), capture_output=True, text=True,
                         check=True).stdout if mods else ''
    for row in out.split('\n'):
        path, _, rest = row.partition(':')
        mod, f = mods.get(path), rest.split()
        if mod is None:
            continue
        if len(f) == 3 and f[1] in 'TDBR':
            defined[f[2]] = mod
        elif len(f) == 2 and f[0] == 'U':
            used.setdefault(mod, set()).add(f[1])
    edges = {}
    for mod, syms in used.items():
        for sym in syms:
            there = defined.get(sym)
            if there and there != mod:
                edges.setdefault(mod, set()).add(there)
    return ['%s: use each other\'s definitions in a loop (nm %s): give the shared part '
            'its own module' % (', '.join(part), objdir) for part in loops(edges)]


def main(root, objdir=None):
    bad = []
    for path, lang in sources(root):
        rel = os.path.relpath(path, root)
        lines = open(path, encoding='utf-8').read().split('\n')
        n = len(lines) - (lines[-1] == '')
        if n > FILE_MAX:
            bad.append('%s: %d lines (at most %d: split it by mode or concern)' %
                       (rel, n, FILE_MAX))
        for name, line, length in FUNCTIONS[lang](lines):
            if length > FUNC_MAX:
                bad.append('%s:%d: %s() is %d lines (at most %d)' %
                           (rel, line, name, length, FUNC_MAX))
    branches = mode_branches(root)
    if len(branches) > BRANCH_MAX:
        bad.append('user/ branches on the mode in %d places (at most %d): %s' %
                   (len(branches), BRANCH_MAX, ' '.join(branches)))
    bad += layer_problems(root)
    if objdir:
        bad += symbol_problems(root, objdir)
    for b in bad:
        print('layout: ' + b)
    return 1 if bad else 0


if __name__ == '__main__':
    args = sys.argv[1:]
    objs = None
    if args[:1] == ['--objects']:
        objs, args = args[1], args[2:]
    sys.exit(main(args[0] if args else
                  os.path.dirname(os.path.dirname(os.path.abspath(__file__))), objs))
