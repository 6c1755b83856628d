# SPDX-License-Identifier: GPL-2.0
"""What 'exec' does to run a command on a side, as data: for a shell that runs many
commands in a lab and cannot pay a Python start for each (tests/integration/lib.sh's
lab_exec), 'env' prints it beside the lab's addresses.

Per side (GEN, SINK, and DUT when the lab has one):
    S_BPFFS     the lab's bpffs for the side, bind-mounted on /sys/fs/bpf by LAB_EXEC_SH
    S_TIMENS    the side's own time namespace, or empty: the host's clock. A shell enters
                it before the netns (nsenter --time=S_TIMENS ip netns exec ...), as 'exec'
                does with setns
    S_READY, S_STARTING
                the files of 'ready' (labready.py): before it becomes xdp-sink, the
                process removes S_READY, writes its pid to S_STARTING and names S_READY in
                XDPSG_READY_FILE
and LAB_EXEC_SH (run as: ip netns exec S_NS sh -c "$LAB_EXEC_SH" testenv-SIDE S_BPFFS
CMD...) and LAB_TOOLS_DIR (first on PATH, where one is known). The stamp key is
STAMP_KEY, given as XDPSG_STAMP_KEY unless the caller set that.
"""

from . import labstate, nsfs, topology as topo_


def plan(topo, paths, tools_dir):
    """((NAME, VALUE), ...) of the plan above, in the order 'env' prints them."""
    out = [('LAB_EXEC_SH', nsfs.EXEC_SH), ('LAB_TOOLS_DIR', tools_dir or '')]
    for side in labstate.SIDES:
        if topo_.side_ns(topo, side) is None:
            continue
        p = side.upper()
        ready, starting = paths.ready(side)
        timens = paths.timens(side) if topo_.side_clock(topo, side) else ''
        out += [(p + '_BPFFS', paths.bpffs(side)), (p + '_TIMENS', timens),
                (p + '_READY', ready), (p + '_STARTING', starting)]
    return tuple(out)
