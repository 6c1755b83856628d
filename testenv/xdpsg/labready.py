# SPDX-License-Identifier: GPL-2.0
"""'testenv.sh ready': wait for the xdp-sink a shell started in the background.

exec sets $XDPSG_READY_FILE (LAB.d/SIDE.ready) for an xdp-sink it runs, and
writes its own pid to SIDE.starting: exec becomes the tool (ip netns exec and
sh exec too), so that pid is the sink's. The sink writes its pid to the ready
file once attached and counting. wait() finds the sink the calling shell
started with & (the shell forked it before it ran us), else the one exec last
registered, and waits for its pid in the ready file, or for it to end.
"""

import os
import time

from . import labstate, nsfs, sysstat


def begin(paths, side):
    """Before exec becomes xdp-sink on SIDE: a fresh ready file to write, this pid noted."""
    ready, starting = paths.ready(side)
    try:
        os.unlink(ready)
    except OSError:
        pass
    try:
        with open(starting + '.tmp', 'w') as f:
            f.write('%d\n' % os.getpid())
        os.replace(starting + '.tmp', starting)
    except OSError:
        return  # nothing to offer a wait: 'ready' says it saw no xdp-sink start
    os.environ['XDPSG_READY_FILE'] = ready


def wait(paths, side, timeout, prog):
    """None once the sink is ready (it may have ended since: its output says so); else
    why not: it ended first, or nothing was ready within TIMEOUT s."""
    ready, starting = paths.ready(side)
    begun = time.monotonic()
    end = begun + timeout
    others = theirs(paths, side)
    mine, pending = shell_sink(others)
    while True:
        if pending:
            # A child of the shell newer than any sink found is still between its fork
            # and its exec: it may be the sink. Look again once it has become what it
            # runs, for at most PENDING_S.
            if time.monotonic() < begun + PENDING_S:
                mine, pending = shell_sink(others)
            else:
                pending = False
        want = 0 if pending else mine or read_pid(starting)
        got = read_pid(ready)
        if want and got == want:
            return None
        if want and not nsfs.alive(want):
            return ("the xdp-sink started on the %s side of lab '%s' (pid %d) ended before it "
                    "was ready: see its output" % (side, paths.name, want))
        if time.monotonic() >= end:
            what = ('the xdp-sink started there (pid %d)' % want if want else
                    'no xdp-sink started there by %s exec' % prog)
            return ("nothing became ready on the %s side of lab '%s' within %g s: %s"
                    % (side, paths.name, timeout, what))
        time.sleep(0.02)


# How long a child of the calling shell that has not yet run its command may keep us
# from choosing: a fork becomes its command in microseconds, or in a second on a
# machine that is very busy; a subshell that never execs holds us this long.
PENDING_S = 2.0


def theirs(paths, side):
    """The pids exec registered on the lab's other sides: their sinks are not this side's."""
    pids = set()
    for other in labstate.SIDES:
        if other != side:
            pids.update(read_pid(f) for f in paths.ready(other))
    pids.discard(0)
    return pids


def shell_sink(others=()):
    """(pid, pending): the newest process the calling shell started that runs xdp-sink,
    or is on its way to it through testenv.sh exec, and is not in OTHERS (0 if none);
    pending is true when a child newer than that one has not yet run its command (it is
    still a copy of the shell, or in the middle of its execve(): its command may be the
    sink). The shell is our parent, or
    the nearest ancestor with one when we run in a subshell of it ($(testenv.sh ready
    ...))."""
    procs, zombies = {}, set()
    for pid, f in sysstat.processes():
        procs[pid] = (int(f[1]), int(f[19]))
        if f[0] == 'Z':
            zombies.add(pid)
    me, anc = os.getpid(), os.getppid()
    top = pid_max()
    for _ in range(3):
        # Not the subshell we came up from: a copy of the shell that waits for us.
        kids = newest_first([(start, pid) for pid, (pp, start) in procs.items()
                             if pp == anc and pid != me], top)
        me = anc
        pending = False
        shell = cmdline(anc)
        for _, pid in kids:
            line = cmdline(pid)
            if line and line == shell:
                pending = True  # forked, its command not yet run
            elif line == b'' and pid not in zombies:
                # No command line while execve() replaces the process's memory (seen:
                # the shell's newest child, taken for no sink, let an older one win).
                pending = True
            elif pid not in others and runs_sink(pid, line):
                return pid, pending
        if pending:
            return 0, True
        anc = procs.get(anc, (0, 0))[0]
        if anc <= 1:
            break
    return 0, False


def newest_first(kids, top):
    """KIDS, (start tick, pid) pairs, newest first. Start times are in clock ticks
    (10 ms), so two children forked one after the other often share one; then the later
    pid is the newer, counted around the wrap at TOP (pid_max): a run of the tests makes
    more processes than the 32768 pids a default kernel has, and a child forked after
    the wrap has the smaller pid."""
    ticks = {}
    for start, pid in kids:
        ticks.setdefault(start, []).append(pid)

    def key(sp):
        start, pid = sp
        same = ticks[start]
        if max(same) - min(same) > top // 2 and pid < top // 2:
            pid += top  # forked after the pids wrapped
        return start, pid
    return sorted(kids, key=key, reverse=True)


def pid_max():
    try:
        with open('/proc/sys/kernel/pid_max') as f:
            return int(f.read())
    except (OSError, ValueError):
        return 32768


def cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read()
    except OSError:
        return None


def runs_sink(pid, line=None):
    """PID's command line names xdp-sink (the tool, or exec's wrappers on their way)."""
    line = cmdline(pid) if line is None else line
    return bool(line) and any(os.path.basename(a) == b'xdp-sink' for a in line.split(b'\0'))


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0
