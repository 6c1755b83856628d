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

from . import nsfs, sysstat


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
    end = time.monotonic() + timeout
    mine = shell_sink()
    while True:
        want, got = mine or read_pid(starting), read_pid(ready)
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


def shell_sink():
    """The newest process the calling shell started that runs xdp-sink, or is on its way
    to it through testenv.sh exec; 0 if none. The shell is our parent, or the nearest
    ancestor with one when we run in a subshell of it ($(testenv.sh ready ...))."""
    procs = {pid: (int(f[1]), int(f[19])) for pid, f in sysstat.processes()}
    me, anc = os.getpid(), os.getppid()
    for _ in range(3):
        kids = sorted(((start, pid) for pid, (pp, start) in procs.items()
                       if pp == anc and pid != me), reverse=True)
        for _, pid in kids:
            if runs_sink(pid):
                return pid
        anc = procs.get(anc, (0, 0))[0]
        if anc <= 1:
            break
    return 0


def runs_sink(pid):
    """PID's command line names xdp-sink (the tool, or exec's wrappers on their way)."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return any(os.path.basename(a) == b'xdp-sink' for a in f.read().split(b'\0'))
    except OSError:
        return False


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0
