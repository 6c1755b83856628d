# SPDX-License-Identifier: GPL-2.0
"""Namespaces, mounts and kernel threads, read and changed from this process.

What iproute2 would otherwise be run for, one process per call: whether a named network
namespace exists and which processes are in it (as 'ip netns pids' finds them: same nsfs
inode), running a piece of this process inside one (setns: the sysctls under /proc/sys/net
are the namespace of the task that opens them, and children inherit it), entering a side's
time namespace before exec (what nsenter --time does), bpffs mounts, the mount table, and
the NAPI kernel threads of a device.

Only for single-threaded callers (the lab's command line): setns() moves the calling
thread alone. Nothing here imports subprocess, so 'testenv.sh exec' stays quick.
"""

import os

NETNS_DIR = '/run/netns'
CLONE_NEWNET = 0x40000000
CLONE_NEWTIME = 0x80
MNT_DETACH = 2

# Runs as 'sh -c' inside a namespace: $1 the side's bpffs, then the command. 'ip netns
# exec' gives every command a fresh /sys, hiding /sys/fs/bpf: this instance is
# bind-mounted there, so pins outlive the command.
EXEC_SH = '''
mount --bind "$1" /sys/fs/bpf || { echo "testenv: cannot mount bpffs on /sys/fs/bpf" >&2; exit 1; }
shift
exec "$@"
'''

_libc = None


def _c():
    global _libc
    if _libc is None:
        import ctypes
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(rc, what):
    if rc != 0:
        import ctypes
        e = ctypes.get_errno()
        raise OSError(e, '%s: %s' % (what, os.strerror(e)))


def ns_path(ns):
    return os.path.join(NETNS_DIR, ns)


def ns_exists(ns):
    return os.path.exists(ns_path(ns))


def ns_pids(ns):
    """The PIDs of the processes in network namespace NS (none if it does not exist)."""
    try:
        st = os.stat(ns_path(ns))
    except OSError:
        return []
    out = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            s = os.stat('/proc/%s/ns/net' % d)
        except OSError:
            continue
        if (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino):
            out.append(int(d))
    return out


def alive(pid):
    """PID runs (a zombie does not: it runs nothing, and only its parent can reap it)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, IndexError):
        return False


def setns(fd, nstype=CLONE_NEWNET):
    if hasattr(os, 'setns'):  # Python 3.12
        os.setns(fd, nstype)
    else:
        _check(_c().setns(fd, nstype), 'setns')


def enter_timens(path):
    """Move this process into the time namespace bind-mounted at PATH; what it execs, and
    every process that starts, stays there. The kernel allows it only to a single-threaded
    process (setns: EUSERS otherwise)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        setns(fd, CLONE_NEWTIME)
    finally:
        os.close(fd)


class InNetns:
    """'with InNetns(ns):' runs the block in network namespace NS, then returns."""

    def __init__(self, ns):
        self.ns = ns
        self.own = None

    def __enter__(self):
        fd = os.open(ns_path(self.ns), os.O_RDONLY | os.O_CLOEXEC)
        self.own = os.open('/proc/thread-self/ns/net', os.O_RDONLY | os.O_CLOEXEC)
        try:
            setns(fd)
        except BaseException:
            os.close(self.own)
            raise
        finally:
            os.close(fd)
        return self

    def __exit__(self, *exc):
        try:
            setns(self.own)
        finally:
            os.close(self.own)


def mount_bpffs(source, target):
    """A new bpffs instance named SOURCE on TARGET, mode 0700."""
    _check(_c().mount(source.encode(), target.encode(), b'bpf', 0, b'mode=0700'),
           'mount bpffs on ' + target)


def umount(target):
    """Unmount TARGET, lazily if it is busy."""
    if _c().umount2(target.encode(), 0) != 0:
        _check(_c().umount2(target.encode(), MNT_DETACH), 'umount ' + target)


def mountpoints():
    """Every mount point this process sees (from /proc/self/mountinfo)."""
    out = set()
    with open('/proc/self/mountinfo') as f:
        for line in f:
            mp = line.split(' ', 5)[4]
            if '\\' in mp:  # octal escapes: \040 for a space
                mp = mp.encode().decode('unicode_escape').encode('latin-1').decode()
            out.add(mp)
    return out


def napi_threads(dev):
    """[(pid, name)] of DEV's NAPI kthreads. Threaded NAPI makes one per receive queue,
    named napi/DEV-NAPI_ID, once the NAPI instances exist (an XDP program is attached, or
    GRO is on); they go away with them. Kernel threads live in the initial PID namespace,
    so this /proc sees them."""
    prefix = 'napi/%s-' % dev
    out = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/comm' % d) as f:
                name = f.read().rstrip('\n')
            with open('/proc/%s/stat' % d) as f:
                ppid = f.read().rsplit(')', 1)[1].split()[1]
        except (OSError, IndexError):
            continue
        # comm is cut to 15 bytes: a cut name is a prefix of the full one.
        full = name.startswith(prefix) and name[len(prefix):].isdigit()
        cut = len(name) == 15 and prefix.startswith(name)
        # Kernel threads have no parent but kthreadd (PID 2).
        if (full or cut) and ppid == '2':
            out.append((int(d), name))
    return sorted(out)


def cpu_list(cpus):
    """'0-2,5' for {0, 1, 2, 5}, as taskset prints an affinity."""
    out, run = [], []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else '%d-%d' % (run[0], run[-1]))
        run = [c]
    if run:
        out.append(str(run[0]) if len(run) == 1 else '%d-%d' % (run[0], run[-1]))
    return ','.join(out)
