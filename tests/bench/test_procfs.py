"""The /proc readings the benchmarks report CPU from: a session's CPU counts ended processes too."""

import subprocess
import sys

from bench.procfs import session_cpu_seconds

# A leader that starts a child burning ~0.5 s of CPU, waits for it (reaping it, as gunicorn's
# master reaps a replaced worker), then idles until killed.
BURN = "import time\\nend = time.process_time() + 0.5\\nwhile time.process_time() < end: pass"
LEADER = f"""
import subprocess, sys, time
subprocess.run([sys.executable, "-c", "{BURN}"])
print("reaped", flush=True)
time.sleep(60)
"""


def test_the_cpu_of_a_replaced_worker_still_counts_for_its_session():
    leader = subprocess.Popen([sys.executable, "-c", LEADER], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert leader.stdout is not None
        assert leader.stdout.readline().strip() == "reaped"
        # The child is gone; its half second lives on in the leader's reaped-children fields.
        assert session_cpu_seconds(leader.pid) >= 0.45
    finally:
        leader.kill()
        leader.wait()
