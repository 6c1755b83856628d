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

argv() turns the printed plan back into the command a Python driver runs (xdpsg.lab), and
stamp_key_env() and tools_path() are what exec itself adds to the environment (labcli.py).
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


def stamp_key_env(environ, key):
    """What exec adds to ENVIRON for the lab's stamp key KEY: XDPSG_STAMP_KEY, unless the
    caller set it (even empty, which the tools take as the public key). A key the user
    chose is one they share with something outside the lab (another host's sink, a
    capture they judge later); the lab's is a default that makes both ends agree."""
    k = labstate.STAMP_KEY_ENV
    return {} if k in environ else {k: key}


def tools_path(path, tools_dir):
    """PATH with the tools' directory first (exec's, and the plan's), where one is known."""
    if tools_dir and tools_dir not in path.split(':'):
        return tools_dir + ':' + path
    return path


def argv(variables, side, name, environ):
    """The command, up to the one to run, that does what exec does for SIDE of lab NAME,
    from VARIABLES as 'env' printed them, for a caller whose environment is ENVIRON: the
    side's clock (nsenter) and netns, the lab's bpffs on /sys/fs/bpf, and exec's
    environment (XDPSG_LAB, the stamp key, the tools first on PATH). None where 'env'
    printed no plan for SIDE (no such side, a lab of an older testenv.sh), or nsenter is
    missing. Not the ready file: that is for a shell's 'testenv.sh ready'."""
    p, v = side.upper(), variables
    ns, bpffs, timens = v.get(p + '_NS'), v.get(p + '_BPFFS'), v.get(p + '_TIMENS')
    if not ns or not bpffs or timens is None or 'LAB_TOOLS_DIR' not in v:
        return None
    if timens:
        import shutil  # here: 'testenv.sh exec', which imports this module, never needs it
        if not shutil.which('nsenter', path=environ.get('PATH')):
            return None
    key = stamp_key_env(environ, v.get('STAMP_KEY'))
    if key and not v.get('STAMP_KEY'):
        return None
    env = ['XDPSG_LAB=' + name] + ['%s=%s' % kv for kv in key.items()]
    env.append('PATH=' + tools_path(environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin'),
                                    v['LAB_TOOLS_DIR']))
    clock = ['nsenter', '--time=' + timens, '--'] if timens else []
    return clock + ['ip', 'netns', 'exec', ns, 'sh', '-c', nsfs.EXEC_SH, 'testenv-' + side,
                    bpffs, 'env', *env]
