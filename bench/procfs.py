"""The few /proc readings the benchmarks and the scale-out tests need, written once.

Linux only, like the CI machines: a process's memory, its children, the members of its session.
Every reader skips processes that end while /proc is being walked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator


def _stat_fields() -> Iterator[tuple[int, list[str]]]:
    """(pid, fields after the command name) of every process; see proc(5) for the field order."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                yield int(entry), stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue


def children_of(pid: int) -> list[int]:
    """Direct child processes of `pid` (field 4 of /proc/<pid>/stat: the parent's pid)."""
    return [child for child, fields in _stat_fields() if int(fields[1]) == pid]


def session_members(sid: int) -> list[int]:
    """Every process of session `sid` (field 6: the session id), e.g. a cluster started with
    `start_new_session=True` and all it forked."""
    return [member for member, fields in _stat_fields() if int(fields[3]) == sid]


def rss_kb(pid: int | str = "self") -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in kB, from /proc/<pid>/status."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    name, value = line.split(":", 1)
                    out[name] = int(value.split()[0])
    except OSError:
        pass
    return out


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used so far (fields 14 and 15 of
    /proc/<pid>/stat, in clock ticks); a process gone meanwhile counts nothing."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total / ticks


def session_cpu_seconds(sid: int) -> float:
    """CPU seconds used so far by a session's processes, those that already ended included.

    A server that recycles its workers (gunicorn's `--max-requests`) replaces them mid-run: the
    pids read at the start are gone at the end and new ones took their work, so summing a fixed
    list of pids goes down. Each member's own time plus the time of the children it has reaped
    (fields 16 and 17: cutime, cstime) counts every process of the session once, alive or not,
    as long as the session's leader (its master) is alive."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for _, fields in _stat_fields():
        try:
            if int(fields[3]) == sid:
                total += sum(int(value) for value in fields[11:15])
        except (IndexError, ValueError):
            continue
    return total / ticks
