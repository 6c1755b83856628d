# SPDX-License-Identifier: GPL-2.0
"""The XDP DUT's outage window: 'blackhole --name LAB --for TIME'.

The DUT of a '--dut xdp' lab is 'xdp-sink redirect --pin'. Its program drops every
frame while the kernel's CLOCK_MONOTONIC is inside the window in its pinned map
'blackhole', and counts them per CPU in 'blackhole_stats' (include/xdp_blackhole.h has
the layouts). This module arms the window from now for TIME, waits it out, reads what
it dropped, and disarms it: on Ctrl-C or any error too, so nothing stays armed.

The maps are reached with the bpf() system call through ctypes (BPF_OBJ_GET on the
pins in the DUT's bpffs, then lookups and updates), so the lab needs no bpftool.
"""

import ctypes
import os
import re
import struct
import time

SYS_BPF = {'x86_64': 321, 'aarch64': 280, 'armv7l': 386, 'ppc64le': 361, 's390x': 351,
           'riscv64': 280}
BPF_MAP_LOOKUP_ELEM, BPF_MAP_UPDATE_ELEM, BPF_OBJ_GET = 1, 2, 7

WINDOW = struct.Struct('=QQ')  # struct xdpsg_blackhole
STATS = struct.Struct('=QQQ')  # struct xdpsg_blackhole_stats, one per possible CPU
# A window this long at most: the lab's runs are seconds, and a typo ('50s' for '50ms')
# should not black out a DUT for an hour.
MAX_NS = 60 * 10**9
UNITS = {'ns': 1, 'us': 10**3, 'ms': 10**6, 's': 10**9}


class BlackholeError(Exception):
    """Something stopped the window: one line for the user."""


def parse_time(text):
    """TIME ('50ms', '0.5s', '200us'; a bare number is seconds) in ns; None if bad."""
    m = re.fullmatch(r'([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|ms|s)?', text or '')
    if not m:
        return None
    ns = round(float(m.group(1)) * UNITS[m.group(2) or 's'])
    return ns if 0 < ns <= MAX_NS else None


def possible_cpus():
    """How many CPUs a per-CPU map holds a value for (the kernel's possible CPUs)."""
    with open('/sys/devices/system/cpu/possible') as f:
        n = 0
        for part in f.read().strip().split(','):
            lo, _, hi = part.partition('-')
            n = max(n, int(hi or lo) + 1)
    return n


class _Bpf:
    def __init__(self):
        nr = SYS_BPF.get(os.uname().machine)
        if nr is None:
            raise BlackholeError('no bpf() system call number known for %s'
                                 % os.uname().machine)
        self.nr = nr
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.syscall.restype = ctypes.c_long

    def _call(self, cmd, attr, what):
        buf = ctypes.create_string_buffer(attr, 128)
        rc = self.libc.syscall(ctypes.c_long(self.nr), ctypes.c_long(cmd), buf,
                               ctypes.c_uint(128))
        if rc < 0:
            e = ctypes.get_errno()
            raise BlackholeError('%s: %s' % (what, os.strerror(e)))
        return rc

    def obj_get(self, path):
        p = ctypes.create_string_buffer(os.fsencode(path))
        # union bpf_attr's BPF_OBJ_GET part: pathname (u64), bpf_fd (u32), file_flags (u32)
        return self._call(BPF_OBJ_GET, struct.pack('=QII', ctypes.addressof(p), 0, 0),
                          'cannot open the pinned map %s' % path)

    def _elem(self, cmd, fd, value, flags, what):
        key = ctypes.create_string_buffer(b'\0' * 4)
        # map_fd (u32), pad, key (u64), value (u64), flags (u64)
        attr = struct.pack('=IIQQQ', fd, 0, ctypes.addressof(key), ctypes.addressof(value),
                           flags)
        self._call(cmd, attr, what)

    def lookup(self, fd, size, what):
        v = ctypes.create_string_buffer(size)
        self._elem(BPF_MAP_LOOKUP_ELEM, fd, v, 0, what)
        return v.raw

    def update(self, fd, data, what):
        v = ctypes.create_string_buffer(data, len(data))
        self._elem(BPF_MAP_UPDATE_ELEM, fd, v, 0, what)


def pin_dir(bpffs, dut_if):
    """Where 'xdp-sink redirect --pin' on DUT_IF pins its maps, seen from the host."""
    return os.path.join(bpffs, 'xdp-sink', dut_if)


def now_ns():
    """The kernel's CLOCK_MONOTONIC, which bpf_ktime_get_ns() reads: this process runs in
    the host's time namespace, whatever clocks the lab's sides have."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def tai_offset_ns():
    """CLOCK_TAI minus CLOCK_MONOTONIC now: a window's times on a TAI stamp clock."""
    return time.clock_gettime_ns(time.CLOCK_TAI) - now_ns()


class Window:
    """The armed window of one DUT: arm(), wait(), then close() (always)."""

    def __init__(self, directory, lock_dir=None):
        self.lock_dir = lock_dir  # the lab's state directory: arm() checks and arms under its lock
        self.bpf = _Bpf()
        self.ncpu = possible_cpus()
        self.fds = []
        self.armed = False
        paths = [os.path.join(directory, n) for n in ('blackhole', 'blackhole_stats')]
        for p in paths:
            if not os.path.exists(p):
                raise BlackholeError(
                    "the DUT's program has no pinned map %s: is its xdp-sink still running "
                    "(testenv.sh status)?" % p)
        self.win_fd = self.bpf.obj_get(paths[0])
        self.fds.append(self.win_fd)
        self.stats_fd = self.bpf.obj_get(paths[1])
        self.fds.append(self.stats_fd)

    def current(self):
        return WINDOW.unpack(self.bpf.lookup(self.win_fd, WINDOW.size, 'cannot read the window'))

    def arm(self, length_ns):
        """Zero the counters and open the window from now: (start_ns, end_ns). Checked and
        armed under the lab's lock, so two at once cannot both arm."""
        from . import labstate
        fd = labstate.lock(self.lock_dir) if self.lock_dir else None
        try:
            return self._arm(length_ns)
        finally:
            if fd is not None:
                os.close(fd)

    def _arm(self, length_ns):
        start, end = self.current()
        now = now_ns()
        if end and end > now:
            raise BlackholeError('a blackhole window is already open on this DUT, until %.3f s '
                                 'from now' % ((end - now) / 1e9))
        self.bpf.update(self.stats_fd, b'\0' * (STATS.size * self.ncpu),
                        'cannot zero the counters')
        start = now_ns()
        end = start + length_ns
        self.armed = True
        self.bpf.update(self.win_fd, WINDOW.pack(start, end), 'cannot arm the window')
        return start, end

    def wait(self, end_ns):
        """Until the window has closed on the kernel's clock."""
        while True:
            left = end_ns - now_ns()
            if left <= 0:
                return
            time.sleep(min(left / 1e9, 0.5))

    def stats(self):
        """(dropped, first_ns, last_ns) over the CPUs (first/last 0 when none)."""
        raw = self.bpf.lookup(self.stats_fd, STATS.size * self.ncpu, 'cannot read the counters')
        dropped, first, last = 0, 0, 0
        for i in range(self.ncpu):
            d, f, la = STATS.unpack_from(raw, i * STATS.size)
            if not d:
                continue
            dropped += d
            first = f if not first or f < first else first
            last = la if la > last else last
        return dropped, first, last

    def run(self, length_ns, armed=None):
        """Arm for LENGTH_NS, tell armed(start) if given, wait it out, disarm:
        (start, end, dropped, first_ns, last_ns)."""
        start, end = self.arm(length_ns)
        if armed:
            armed(start)
        self.wait(end)
        self.disarm()
        return (start, end) + self.stats()

    def disarm(self):
        if self.armed:
            self.bpf.update(self.win_fd, WINDOW.pack(0, 0), 'cannot disarm the window')
            self.armed = False

    def close(self):
        try:
            self.disarm()
        finally:
            for fd in self.fds:
                os.close(fd)
            self.fds = []
