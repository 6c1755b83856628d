# SPDX-License-Identifier: GPL-2.0
"""The test run's Python, started once: a test's Python server is a fork of it.

    pyserve.py FIFO

tests/run.sh starts this beside the schema checker. Each integration test has a Python
server of its own (lib.sh's json_server_start: the tools' JSON, the judges, its labs'
setup and teardown), and its start was the most frequent Python start of the suite:
an interpreter, then the imports, some 60 ms of CPU each time. This process has done
both once; a test asks it for a server, and gets a fork.

A request is one line on FIFO, "DIR<US>PID", written at once (shorter than PIPE_BUF, so
the lines of tests that ask together do not mix). DIR holds the test's two FIFOs (req,
resp; see lib.sh's PY_SERVER for what they carry), "code" (PY_FUNCS, the test file's
functions) and "env" (the test's environment, as env -0 prints it); PID is the test's
shell. The fork takes the test's environment and directory, runs the code, says
"0<US>0<US>PID<US><NUL>" on resp (an answer to request 0: its pid), and serves until
the test's shell ends or it is stopped. This process ends when the one that started it
does.
"""

import os
import select
import signal
import sys

# What the tests' servers use, loaded here once: the lab's command line (setup and
# teardown run in the server) and what PY_FUNCS and the judges import.
import contextlib  # noqa: F401
import io  # noqa: F401
import json  # noqa: F401
import traceback

from xdpsg import labcli  # noqa: F401
from xdpsg import labnet  # noqa: F401
from xdpsg import labstatus  # noqa: F401

# The scapy layers the judges that run in a test's server read frames with (stampcheck.py,
# proto_judge.py): a third of a second to import, once here rather than in each test.
try:
    import scapy.contrib.geneve  # noqa: F401
    import scapy.layers.inet  # noqa: F401
    import scapy.layers.inet6  # noqa: F401
    import scapy.layers.l2  # noqa: F401
    import scapy.layers.vxlan  # noqa: F401
    import scapy.utils  # noqa: F401
except ImportError:
    pass  # python3-scapy is not installed: the tests that need it say so


def _read_env(path):
    with open(path, 'rb') as f:
        env = {}
        for item in f.read().split(b'\0'):
            k, sep, v = item.partition(b'=')
            if sep and k:
                env[os.fsdecode(k)] = os.fsdecode(v)
        return env


def _serve(d, test_pid):
    """The test's server, in the fork: never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # subprocess must see its children end
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.setpgid(0, 0)  # not the run's group: a ^C reaches it through the test's cleanup
        env = _read_env(os.path.join(d, 'env'))
        os.environ.clear()
        os.environ.update(env)
        with open(os.path.join(d, 'code')) as f:
            src = f.read()
        g = {'__name__': '__pyserve__', '__builtins__': __builtins__}
        sys.argv = ['-c', d]
        exec(compile(src, '<PY_FUNCS>', 'exec'), g)
        req = os.open(os.path.join(d, 'req'), os.O_RDWR)
        resp = os.open(os.path.join(d, 'resp'), os.O_RDWR)
        os.chdir(env.get('PWD') or '/')
        try:
            pidfd = os.pidfd_open(test_pid)
        except OSError:
            os._exit(0)  # the test has ended already
        os.write(resp, ('0\x1f0\x1f%d\x1f\0' % os.getpid()).encode())
        buf = b''
        while True:
            ready = select.select([req, pidfd], [], [])[0]
            if pidfd in ready:
                break
            data = os.read(req, 65536)
            if not data:
                break
            buf += data
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                rid, name, *args = line.decode().split('\x1f')
                rc, out, err = g['call'](name, args)
                os.write(resp, ('%s\x1f%d\x1f%s\x1f%s\0' % (rid, rc, out, err)).encode())
        code = 0
    except BaseException:  # noqa: B036 - a fork must never return into the zygote's loop
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main(argv):
    if len(argv) != 2:
        print('usage: pyserve.py FIFO', file=sys.stderr)
        return 2
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the forks are nobody's to wait for
    parent = os.getppid()
    fd = os.open(argv[1], os.O_RDWR)
    buf = b''
    while os.getppid() == parent:
        if not select.select([fd], [], [], 1.0)[0]:
            continue
        buf += os.read(fd, 65536)
        while b'\n' in buf:
            line, buf = buf.split(b'\n', 1)
            try:
                d, pid = line.decode().split('\x1f')
                pid = int(pid)
            except ValueError:
                continue
            if os.fork() == 0:
                os.close(fd)
                _serve(d, pid)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
