"""Starting benchmark clients in processes of their own, and starting them together."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT = 120.0


class Child:
    def __init__(self, name: str, spec: dict[str, Any], raw_dir: str, env: dict[str, str] | None = None) -> None:
        self.name = name
        directory = Path(raw_dir) / "agents"
        directory.mkdir(parents=True, exist_ok=True)
        self.spec_path = directory / f"{name}.spec.json"
        self.out_path = directory / f"{name}.out.json"
        self.log_path = directory / f"{name}.log"
        self.spec_path.write_text(json.dumps(spec))
        if self.out_path.exists():
            self.out_path.unlink()
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.agent", str(self.spec_path), str(self.out_path)],
            cwd=REPO_ROOT,
            env={**os.environ, **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )

    def wait_ready(self) -> None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if line.strip() == "READY":
                return
            if not line and self.process.poll() is not None:
                break
        raise RuntimeError(f"bench agent {self.name} did not get ready; see {self.log_path}:\n{self._tail()}")

    def go(self, start_at: float) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"GO {start_at!r}\n")
        self.process.stdin.flush()

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise RuntimeError(f"bench agent {self.name} ran past {timeout} s; see {self.log_path}") from None
        finally:
            self.log.close()
        if code != 0 or not self.out_path.exists():
            raise RuntimeError(f"bench agent {self.name} failed (exit {code}); see {self.log_path}:\n{self._tail()}")
        return json.loads(self.out_path.read_text())

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if not self.log.closed:
            self.log.close()

    def _tail(self) -> str:
        try:
            return "".join(Path(self.log_path).read_text().splitlines(keepends=True)[-30:])
        except OSError:
            return ""


def run_together(
    children: list[Child],
    *,
    timeline: list[tuple[float, Callable[[], None]]] | None = None,
    timeout: float = 900.0,
    lead: float = 0.3,
) -> tuple[float, dict[str, dict[str, Any]]]:
    """Start the prepared agents at one instant, play the timeline (offset s, action), collect results."""
    try:
        for child in children:
            child.wait_ready()
        start_at = time.monotonic() + lead
        for child in children:
            child.go(start_at)
        for offset, action in sorted(timeline or [], key=lambda step: step[0]):
            delay = start_at + offset - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            action()
        results = {
            child.name: child.wait(timeout=max(timeout - (time.monotonic() - start_at), 1.0)) for child in children
        }
        return start_at, results
    finally:
        for child in children:
            child.kill()
