# SPDX-License-Identifier: GPL-2.0
"""CPU time from /proc: per CPU (/proc/stat) and per task or process group (/proc/PID/stat)."""

import os
import re


def proc_stat():
    """Jiffies from /proc/stat: {'all': [user, nice, system, idle, iowait, irq, softirq,
    steal, guest, guest_nice], 0: [...], 1: [...], ...}, padded to 10 fields."""
    res = {}
    with open('/proc/stat') as f:
        for line in f:
            m = re.match(r'cpu(\d*)\s+(.*)', line)
            if not m:
                break  # the cpu lines come first
            v = [int(x) for x in m.group(2).split()]
            res[int(m.group(1)) if m.group(1) else 'all'] = v + [0] * (10 - len(v))
    return res


def busy_total(v):
    """(busy, total) jiffies of one /proc/stat cpu line; idle and iowait are not busy."""
    total = sum(v[:8])
    return total - v[3] - v[4], total


def cpu_times():
    """Per-CPU (busy, total) jiffies."""
    return {c: busy_total(v) for c, v in proc_stat().items() if c != 'all'}


def task_jiffies(pid):
    """utime + stime of a task, or None if it is gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def processes():
    """(pid, fields) of every process: fields are /proc/PID/stat's after the command
    name, so fields[0] is the state, [1] the parent, [2] the process group, [11] and
    [12] utime and stime, [19] the start time. Those that end while we look are left out."""
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                yield int(d), f.read().rsplit(')', 1)[1].split()
        except (OSError, IndexError):
            continue  # ended while we looked


def group_jiffies(pgid):
    """utime + stime of every process in process group PGID (a Tool's wrappers and the
    tool they run; /proc/PID/stat of a process already sums its threads), or None if
    the group has no process left."""
    total, seen = 0, False
    for _, fields in processes():
        if int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
            seen = True
    return total if seen else None


