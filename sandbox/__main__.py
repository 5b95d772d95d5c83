"""``python -m sandbox``: run all four sandbox insurers until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .server import DEFAULT_BASE_PORT, start_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description="Run the four sandbox insurer servers.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--base-port", type=int, default=DEFAULT_BASE_PORT, help="anka on this port, then bogazici, cinar, deniz"
    )
    parser.add_argument(
        "--realistic", action="store_true", help="demo latencies (Deniz quotes 1-4 s, others 50-400 ms)"
    )
    parser.add_argument("--quiet", action="store_true", help="do not log one line per request")
    args = parser.parse_args(argv)

    def log(line: str) -> None:
        print(line, flush=True)

    servers = start_all(
        host=args.host, base_port=args.base_port, realistic=args.realistic, log=None if args.quiet else log
    )
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    for code, server in servers.items():
        print(f"{code:<8} {server.base_url}", flush=True)
    print(f"sandbox ready ({'realistic latency' if args.realistic else 'no latency'}); Ctrl-C to stop", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for server in servers.values():
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
