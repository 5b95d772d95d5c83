"""The desk-load scenario's agents (bench/s10_desk_load.py), as Locust users, in a process of their own.

    python -m bench.locust_desk PLAN.json OUT.json

Locust runs on gevent and monkey-patches the standard library when it is imported: in the bench
process that would change the sockets and locks under the sandbox insurers' threads and Django
mid-run. So the scenario starts this module as a child process; it imports no Django, reads the
plan (host, agents' logins, sizes) and writes what it measured as JSON.

Each agent logs in through the login page once, then, until the time is up: the trafik form (a
GET, for its CSRF token), the form's POST (which lands on the request's page), the request's
live-results stream (`/talepler/<id>/akis/?v=<the page's version>`, quotes/live.py) read to its
`done` event, as static/insurehub/live-results.js does (reconnecting with `Last-Event-ID` if the
stream ends first), then a think. Submit → `done` is recorded per ask, with the plate asked (each
ask its own plate, so the bench can find the insurers' own times for it in the sandbox's probe).

`HttpUser` (requests) rather than `FastHttpUser`: the stream is read line by line with requests'
`stream=True`, the same reading the other scenarios' HTTP agents do.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

import gevent
from locust import HttpUser, between, task
from locust.env import Environment
from locust.exception import StopUser

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
LANDED = re.compile(r"/talepler/([0-9a-f-]{36})/$")
VERSION = re.compile(r'data-version="([^"]*)"')
FIELDS = {"owner_id": "10000000146", "registration_serial": "AB123456", "usage": "private"}
STREAM_LIMIT_S = 90.0  # one ask's stream, reconnects included: past it the ask is a failure


class Plan:
    """The run's shared state: what the parent asked for and what the agents measured."""

    host = ""
    logins: list[list[str]] = []
    think_s = (1.0, 3.0)
    stop_at = 0.0
    asks: list[dict[str, Any]] = []
    in_flight = 0
    next_login = 0


class DeskAgent(HttpUser):
    wait_time = between(1.0, 3.0)  # replaced from the plan before the run

    def on_start(self) -> None:
        self.index = Plan.next_login
        Plan.next_login += 1
        username, password = Plan.logins[self.index % len(Plan.logins)]
        self.seq = 0
        page = self.client.get("/giris/", name="login page")
        token = CSRF.search(page.text)
        with self.client.post(
            "/giris/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token.group(1) if token else ""},
            headers={"Referer": f"{Plan.host}/giris/"},
            name="login",
            catch_response=True,
        ) as answer:
            refused = "/giris/" in answer.url or answer.status_code != 200
            if refused:
                answer.failure(f"login refused ({answer.status_code} {answer.url})")
        if refused:
            raise StopUser()

    @task
    def ask_trafik_quote(self) -> None:
        if time.monotonic() >= Plan.stop_at:
            raise StopUser()  # the time is up: no new ask; the one in flight (if any) finished
        Plan.in_flight += 1
        try:
            self._ask()
        finally:
            Plan.in_flight -= 1

    def _ask(self) -> None:
        form = self.client.get("/teklif/yeni/trafik/", name="trafik form")
        token = CSRF.search(form.text)
        if token is None:
            return  # counted as a failure by its status, or below
        plate = _plate(self.index, self.seq)
        self.seq += 1
        submitted = time.monotonic()
        with self.client.post(
            "/teklif/yeni/trafik/",
            data={**FIELDS, "plate": plate, "csrfmiddlewaretoken": token.group(1)},
            headers={"Referer": f"{Plan.host}/teklif/yeni/trafik/"},
            name="submit",
            catch_response=True,
        ) as landed:
            match = LANDED.search(landed.url)
            if match is None:
                landed.failure(f"the form did not land on a request's page ({landed.status_code} {landed.url})")
                return
        version = VERSION.search(landed.text)
        url = f"/talepler/{match.group(1)}/akis/?v={version.group(1) if version else ''}"
        done_at, reconnects = self._stream_to_done(url)
        if done_at is None:
            return
        elapsed_ms = (done_at - submitted) * 1000.0
        Plan.asks.append(
            {"plate": plate, "ms": round(elapsed_ms, 1), "at": round(submitted, 3), "reconnects": reconnects}
        )
        # In Locust's own table too, beside the HTTP requests.
        self.environment.events.request.fire(
            request_type="ASK",
            name="submit → done",
            response_time=elapsed_ms,
            response_length=0,
            exception=None,
            context={},
        )

    def _stream_to_done(self, url: str) -> tuple[float | None, int]:
        """Reads the stream to its `done` event; the time it came, and how many reconnects it took."""
        deadline = time.monotonic() + STREAM_LIMIT_S
        last_id = ""
        reconnects = -1
        while time.monotonic() < deadline:
            reconnects += 1
            headers = {"Accept": "text/event-stream", **({"Last-Event-ID": last_id} if last_id else {})}
            with self.client.get(url, headers=headers, stream=True, name="stream", catch_response=True) as stream:
                if stream.status_code != 200:
                    stream.failure(f"stream answered {stream.status_code}")
                    return None, reconnects
                event = ""
                for line in stream.iter_lines(decode_unicode=True):
                    if line.startswith("event: "):
                        event = line[len("event: ") :]
                    elif line.startswith("id: "):
                        last_id = line[len("id: ") :]
                    elif line == "" and event == "done":
                        stream.close()
                        return time.monotonic(), reconnects
                    elif line == "":
                        event = ""
            gevent.sleep(1.0)  # the stream's `retry:` (quotes/live.py RECONNECT_MS), as the browser waits
        self.environment.events.request.fire(
            request_type="ASK",
            name="submit → done",
            response_time=STREAM_LIMIT_S * 1000.0,
            response_length=0,
            exception=RuntimeError(f"no done event within {STREAM_LIMIT_S:.0f} s"),
            context={},
        )
        return None, reconnects


def _plate(agent: int, seq: int) -> str:
    """A valid plate of its own per ask: the agent in the city and two letters, the ask in four digits."""
    letters = "ABCDEFGHIJKLMNOPRSTUVYZ"  # the letters issued on Turkish plates (quotes/validation.py)
    city = 10 + agent // len(letters) ** 2
    pair = letters[(agent // len(letters)) % len(letters)] + letters[agent % len(letters)]
    return f"{city:02d}{pair}{seq % 10000:04d}"


def main(plan_path: str, out_path: str) -> None:
    with open(plan_path) as handle:
        plan = json.load(handle)
    Plan.host = plan["host"]
    Plan.logins = plan["logins"]
    DeskAgent.wait_time = between(*plan["think_s"])
    DeskAgent.host = plan["host"]
    users = int(plan["users"])
    env = Environment(user_classes=[DeskAgent], host=plan["host"])
    runner = env.create_local_runner()
    started = time.monotonic()
    Plan.stop_at = started + float(plan["seconds"])
    runner.start(users, spawn_rate=float(plan["spawn_rate"]))
    gevent.sleep(float(plan["seconds"]))
    # No new asks now; the ones in flight are read to their end (an agent cut mid-stream would
    # leave the server's stream to notice the gone client on its next keep-alive).
    drain_deadline = time.monotonic() + STREAM_LIMIT_S + 10
    while Plan.in_flight > 0 and time.monotonic() < drain_deadline:
        gevent.sleep(0.1)
    cut = Plan.in_flight
    runner.quit()
    finished = time.monotonic()
    stats = {
        name: {
            "requests": entry.num_requests,
            "failures": entry.num_failures,
            "p50_ms": entry.get_response_time_percentile(0.5) if entry.num_requests else None,
            "p95_ms": entry.get_response_time_percentile(0.95) if entry.num_requests else None,
        }
        for (name, _method), entry in env.stats.entries.items()
    }
    errors = [
        {"name": error.name, "error": str(error.error)[:300], "occurrences": error.occurrences}
        for error in env.stats.errors.values()
    ]
    with open(out_path, "w") as handle:
        json.dump(
            {
                "asks": Plan.asks,
                "stats": stats,
                "total_requests": env.stats.total.num_requests,
                "total_failures": env.stats.total.num_failures,
                "errors": errors,
                "cut_in_flight": cut,
                "logged_in": Plan.next_login,
                "wall_s": finished - started,
            },
            handle,
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
