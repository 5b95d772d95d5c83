"""The shipped Prometheus rules: well-formed, covering what the on-call needs, using only what /metrics exports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from django.urls import reverse
from django.utils import timezone

from console.health import work_sources
from console.metrics import metric_families
from integrations.answers.taxonomy import ErrorClass, ErrorKind
from integrations.models import Attempt, InsurerAccount, SendRateState
from policies.models import PolicyFinding

RULES_FILE = Path(__file__).resolve().parents[2] / "ops" / "prometheus" / "alerts.yml"
DURATION = re.compile(r"^\d+[smhdwy]$")
NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}")
MATCHER = re.compile(r'([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"([^"]*)"')
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
RANGE = re.compile(r"\[([^\]]+)\]")
TEMPLATE_LABEL = re.compile(r"\$labels\.(\w+)")

# Each concern of the issue, and the alert that covers it.
REQUIRED_ALERTS = {
    "throttle ratio above threshold": "InsurerThrottleRatioHigh",
    "oldest pending age (issuance)": "IssuanceQueueStuck",
    "oldest pending age (sync)": "PolicySyncQueueStuck",
    "dead-letter growth": "DeadLettersGrowing",
    "any unknown code": "InsurerUnknownCode",
    "retry rate rising": "InsurerRetryRateRising",
    "work pump silent": "WorkPumpSilent",
    "login lock-outs": "LoginLockoutsHigh",
    "one account guessed": "LoginGuessingAccount",
    "open duplicate policies": "DuplicatePoliciesOpen",
    "a production list not read": "ReconciliationListUnread",
}
# Label values an expression may select on, per label.
KNOWN_VALUES = {
    "kind": {k.value for k in ErrorKind} | {"success"},
    "class": {c.value for c in ErrorClass} | {"success"},
    "work": {source.name for source in work_sources()},
    "scope": {"pair", "address", "username"},
}
# A label whose values depend on the metric: `kind` is an error kind on the attempt counters, a
# finding's kind on the reconciliation's gauge.
KNOWN_VALUES_BY_METRIC = {"insurehub_policy_findings_open": {"kind": {kind.value for kind in PolicyFinding.Kind}}}


@pytest.fixture(scope="module")
def rules() -> dict:
    return yaml.safe_load(RULES_FILE.read_text(encoding="utf-8"))


def all_rules(rules: dict) -> list[dict]:
    return [rule for group in rules["groups"] for rule in group["rules"]]


def alerts(rules: dict) -> dict[str, dict]:
    return {rule["alert"]: rule for rule in all_rules(rules) if "alert" in rule}


def recorded(rules: dict) -> set[str]:
    return {rule["record"] for rule in all_rules(rules) if "record" in rule}


@pytest.fixture
def exported(seeded_accounts) -> dict[str, set[str]]:
    """Every sample name /metrics writes (with suffixes) -> its label names, with one row of each kind of data."""
    now = timezone.now()
    Attempt.objects.create(
        insurer_code="anka",
        operation="trafik_quote",
        product="trafik",
        attempt_no=2,
        ok=True,
        latency_ms=10.0,
        started_at=now,
        finished_at=now,
    )
    account = InsurerAccount.objects.first()
    assert account is not None, "seeded_accounts made the accounts"
    SendRateState.objects.create(account_key=account.rate_key, rate=5.0)
    names: dict[str, set[str]] = {}
    for family in metric_families():
        for sample in family.samples:
            names.setdefault(sample.name, set()).update(sample.labels)
    return names


def test_rules_file_is_valid_yaml_with_named_groups(rules):
    """Top-level `groups`, each with a unique name and a list of rules; every rule records or alerts."""
    names = [group["name"] for group in rules["groups"]]
    assert names and len(names) == len(set(names))
    for rule in all_rules(rules):
        assert ("alert" in rule) != ("record" in rule), rule
        assert isinstance(rule["expr"], str) and rule["expr"].strip()


def test_every_concern_of_the_issue_has_an_alert(rules):
    """Throttle ratio, oldest pending age, dead-letter growth, unknown codes, rising retries."""
    missing = {concern: name for concern, name in REQUIRED_ALERTS.items() if name not in alerts(rules)}
    assert not missing


def test_alerts_are_complete_for_the_on_call(rules):
    """Each alert has a severity, a `for` duration, a summary, a description and a dashboard link."""
    dashboard = reverse("integrations_health")
    names = [rule["alert"] for rule in all_rules(rules) if "alert" in rule]
    assert len(names) == len(set(names))
    for name, rule in alerts(rules).items():
        assert rule["labels"]["severity"] in {"warning", "critical"}, name
        assert DURATION.match(rule.get("for", "0m")), name
        annotations = rule["annotations"]
        assert annotations["summary"] and annotations["description"], name
        assert annotations["dashboard"].startswith(dashboard + "?"), name


def test_expressions_are_balanced_and_ranges_are_durations(rules):
    """A cheap syntax check (promtool is not installed here): brackets pair up, every range is a duration."""
    pairs = {")": "(", "]": "[", "}": "{"}
    for rule in all_rules(rules):
        stack: list[str] = []
        for char in re.sub(r'"[^"]*"', '""', rule["expr"]):
            if char in "([{":
                stack.append(char)
            elif char in pairs:
                assert stack and stack.pop() == pairs[char], rule["expr"]
        assert not stack, rule["expr"]
        for window in RANGE.findall(rule["expr"]):
            assert DURATION.match(window.strip()), (window, rule["expr"])


def test_expressions_use_only_exported_metrics_and_labels(rules, exported):
    """Every metric, selector label and grouping label in the rules is one /metrics really writes."""
    known_names = set(exported) | recorded(rules)
    all_labels = set().union(*exported.values())
    for rule in all_rules(rules):
        expr = rule["expr"]
        for name in NAME.findall(expr):
            if "insurehub" in name:
                assert name in known_names, f"{name} is not exported (rule {rule.get('alert') or rule['record']})"
        for metric, matchers in SELECTOR.findall(expr):
            for label, _op, value in MATCHER.findall(matchers):
                assert label in exported.get(metric, set()), f"{metric} has no label {label}"
                allowed = KNOWN_VALUES_BY_METRIC.get(metric, {}).get(label, KNOWN_VALUES.get(label))
                if allowed is not None:
                    assert value in allowed, f"{metric}: {label}={value!r} never appears"
        for group in GROUPING.findall(expr):
            for label in filter(None, (part.strip() for part in group.split(","))):
                assert label in all_labels, f"no metric has the label {label} ({expr})"


def test_annotations_name_only_labels_the_alert_carries(rules, exported):
    """A `$labels.x` in a summary must be a label the alert's series has, or the message shows a blank."""
    all_labels = set().union(*exported.values())
    for name, rule in alerts(rules).items():
        grouped = {
            label.strip() for group in GROUPING.findall(rule["expr"]) for label in group.split(",") if label.strip()
        }
        carried = grouped or all_labels
        for text in rule["annotations"].values():
            for label in TEMPLATE_LABEL.findall(text):
                assert label in carried, f"{name}: $labels.{label} is not on the alert's series"


def test_throttle_alert_follows_the_admins_threshold(rules):
    """The throttle alert compares with the threshold in force per insurer and operation, not a fixed number."""
    expr = alerts(rules)["InsurerThrottleRatioHigh"]["expr"]
    assert "insurehub_policy_throttle_threshold" in expr


def test_unknown_code_alert_fires_on_the_first_one(rules):
    """Any unknown code alerts at once: no `for` delay, and a zero threshold."""
    rule = alerts(rules)["InsurerUnknownCode"]
    assert rule.get("for", "0m") in {"0m", "0s"}
    assert rule["expr"].rstrip().endswith("> 0")
