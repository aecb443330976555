"""Processes as the tests of signals and child processes see them (Linux ``/proc``): whether one runs, its
children, and waiting for a condition."""

from __future__ import annotations

import os
import time

import pytest

#: For the tests that read /proc: Linux only.
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc (Linux)")


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/pid/stat`` after the command name (state first, then the parent pid); None when
    there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie (ended, not yet reaped) does not."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def children(pid: int) -> list[int]:
    """The running processes whose parent is ``pid``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(int(name))
            if fields is not None and fields[0] != "Z" and int(fields[1]) == pid:
                found.append(int(name))
    return found


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def wait_for(predicate, timeout: float = 60.0, what: str = "the condition"):
    """``predicate()``'s first true value, polled every 0.05 s; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(0.05)
