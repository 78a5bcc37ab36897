"""The fallback sandbox's reaper: every process the agent starts dies with the run, even when the
evaluator is killed.

Without bubblewrap there is no PID namespace whose end kills the agent's daemons. This
small program (standard library only, started as ``python -S -I reaper.py ARGV...``) stands
in for it: it becomes a *child subreaper* (``PR_SET_CHILD_SUBREAPER``), so a daemon that
double-forks and calls ``setsid`` is re-parented to it instead of to init and stays in its
process tree; it asks for ``SIGTERM`` when its parent (the evaluator) dies
(``PR_SET_PDEATHSIG``); then it runs the agent host as its child. When the host exits, or
the evaluator dies (a run timeout that kills the evaluator's process, a Ray worker that is
cancelled), it SIGKILLs every process left in its tree and exits with the host's status.

It is best effort, like the rest of the fallback: the agent runs as the same user and can
kill the reaper first (the host then dies with it through its own parent-death signal, but
daemons started before that are re-parented to init).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _descendants(pid: int) -> list[int]:
    """``pid``'s descendants from the kernel's per-thread children lists."""
    out: list[int] = []
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{p}/task/{tid}/children", "rb") as fh:
                    kids = [int(c) for c in fh.read().split()]
            except OSError:
                continue
            out.extend(kids)
            stack.extend(kids)
    return out


def kill_descendants() -> None:
    """SIGKILL every process in this reaper's tree until none is left (a fork during the kill is caught next round)."""
    for _ in range(50):
        kids = _descendants(os.getpid())
        if not kids:
            return
        for p in kids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        try:  # reap what died (they are our children or were re-parented to us)
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            return


def main(argv: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getppid()
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def on_parent_death(signum: int, frame: object) -> None:
        kill_descendants()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_parent_death)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the evaluator died before the signal was armed
        return 1
    host = os.fork()
    if host == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    # the channel and log descriptors stay open only in the host: its end is the run's end
    # (stdout/stderr are the log pipe: a copy here would hold it open after the host ends)
    os.closerange(0, 65536)
    status = 0
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == host:
            break
    kill_descendants()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
