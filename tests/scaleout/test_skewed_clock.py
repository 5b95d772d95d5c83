"""The chaos suite's skewed wall clock: off by the skew, and a process under it can still send tasks.

A worker whose clock is skewed pickles every django-q2 task it sends; a skewed clock that broke
pickling of datetimes made that machine's tasks fail for a reason no real machine has.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from datetime import datetime, timedelta

from tests.scaleout.harness import skewed_clock_env

SCRIPT = """
import datetime, pickle, sys, time
real = datetime.datetime.fromtimestamp(0) + datetime.timedelta(days=20000)  # C code makes a plain datetime
print(time.time())
print(datetime.datetime.now().timestamp())
sys.stdout.flush()
sys.stdout.buffer.write(pickle.dumps({"real": real, "now": datetime.datetime.now()}, protocol=pickle.HIGHEST_PROTOCOL))
"""


def test_a_skewed_process_is_behind_and_its_datetimes_still_pickle():
    env = {**os.environ, **skewed_clock_env(-300)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, check=True, timeout=60)
    first, second, payload = done.stdout.split(b"\n", 2)
    assert abs(float(first) - (time.time() - 300)) < 30
    assert abs(float(second) - (time.time() - 300)) < 30
    values = pickle.loads(payload)  # noqa: S301 - our own child's output
    assert type(values["real"]) is datetime and type(values["now"]) is datetime  # plain ones here
    assert values["real"] == datetime.fromtimestamp(0) + timedelta(days=20000)
