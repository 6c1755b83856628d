# SPDX-License-Identifier: GPL-2.0
"""Whose a lab is, and what still uses it: what 'teardown --all' and 'list' go by.

Labs of every front end share the state directory: a checkout's testenv/testenv.sh, another
checkout's, the installed xdpsg-lab, and the labs a running 'make check' made. setup records
two things in the lab's state file:

    MADE_BY=PATH      the real path of the front end that made it
    OWNER=PID:START   the process $XDPSG_LAB_OWNER names (tests/run.sh sets it to its own
                      pid), with its start time so that a reused pid is not taken for it

'teardown --all' removes the labs this front end made (and those older than these fields,
which cannot say) unless they are in use: their owner still runs, or a process runs in one
of their namespaces. 'teardown --name' removes the lab it names whatever uses it. 'list'
shows every lab on the machine, with who made it when that is another front end and what
uses it.
"""

import os

from . import nsfs
from .sysstat import processes

OWNER_ENV = 'XDPSG_LAB_OWNER'


def _start_time(pid):
    """PID's start time (clock ticks after boot, /proc/PID/stat field 22), or None."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _comm(pid):
    try:
        with open('/proc/%d/comm' % pid) as f:
            return f.read().strip()
    except OSError:
        return '?'


def front_path(front):
    """How a lab records the front end FRONT: its real path."""
    return os.path.realpath(front)


def fields(front):
    """The state file's (KEY, value) rows for a lab setup makes now from front end FRONT."""
    rows = [('MADE_BY', front_path(front))]
    v = os.environ.get(OWNER_ENV, '')
    if v.isdigit():
        start = _start_time(int(v))
        if start is not None:
            rows.append(('OWNER', '%s:%s' % (v, start)))
    return rows


def owner(kv):
    """The pid of the lab's owner if it still runs (the same process, by its start time)."""
    pid, sep, start = kv.get('OWNER', '').partition(':')
    if not sep or not pid.isdigit():
        return None
    if _start_time(int(pid)) != start or not nsfs.alive(int(pid)):
        return None
    return int(pid)


def users(names, kv):
    """What uses the lab of topology.Names NAMES and state fields KV, as phrases: its
    owner, and the processes in its namespaces (at most three named)."""
    out = []
    pid = owner(kv)
    if pid is not None:
        out.append('its owner pid %d (%s) runs' % (pid, _comm(pid)))
    inodes = {}
    for ns in (names.gen_ns, names.sink_ns, names.dut_ns):
        try:
            st = os.stat(nsfs.ns_path(ns))
        except OSError:
            continue
        inodes[(st.st_dev, st.st_ino)] = ns
    found = []
    if inodes:
        for p, _ in processes():
            try:
                st = os.stat('/proc/%d/ns/net' % p)
            except OSError:
                continue
            ns = inodes.get((st.st_dev, st.st_ino))
            if ns is not None:
                found.append((p, ns))
    if found:
        shown = ', '.join('pid %d (%s) in %s' % (p, _comm(p), ns) for p, ns in found[:3])
        more = ' and %d more' % (len(found) - 3) if len(found) > 3 else ''
        out.append('%s%s' % (shown, more))
    return out


def made_elsewhere(kv, front):
    """The front end that made the lab if it is not FRONT (None: this one, or unknown)."""
    by = kv.get('MADE_BY')
    return by if by and by != front_path(front) else None
