"""``python -m sandbox``: run every registered sandbox insurer until SIGINT/SIGTERM.

``--list`` and ``--demo-manifest`` only print where the insurers would listen (and, for the
manifest, the sample accounts as JSON) and exit: ``scripts/run.sh`` uses them so that neither
the script nor the platform's ``seed_demo`` needs its own copy of the ports or the accounts.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from .server import DEFAULT_BASE_PORT, demo_manifest, fixed_port_urls, start_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description="Run the sandbox insurer servers.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--base-port",
        type=int,
        default=DEFAULT_BASE_PORT,
        help="each insurer listens on this port plus its own port_offset (anka +0, bogazici +1, ...)",
    )
    parser.add_argument(
        "--realistic", action="store_true", help="demo latencies (Deniz quotes 1-4 s, others 50-400 ms)"
    )
    parser.add_argument("--quiet", action="store_true", help="do not log one line per request")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--list", action="store_true", help="print each insurer's URL and exit")
    shown.add_argument(
        "--demo-manifest",
        action="store_true",
        help="print the insurers' URLs and sample accounts as JSON (for manage.py seed_demo --manifest) and exit",
    )
    args = parser.parse_args(argv)

    if args.list:
        for code, url in fixed_port_urls(args.host, args.base_port).items():
            print(f"{code:<8} {url}")
        return 0
    if args.demo_manifest:
        print(json.dumps(demo_manifest(args.host, args.base_port), indent=2, ensure_ascii=False))
        return 0

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
