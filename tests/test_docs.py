"""The README and the pages under docs/ stay small, linked and current.

The README is the front door (what the product is, the two commands, the layout, the
architecture, the dependencies, links); everything else lives in docs/. These tests fail when a
link or an anchor points nowhere, when a page names a repository file that no longer exists (or a
test function that was renamed), when docs/configuration.md misses a variable `.env.example`
lists, when the README grows past its budget, or when a page names an issue instead of the
behaviour.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [README, *DOCS]

README_MAX_BYTES = 15_000
# The two commands on a fresh machine, exactly as the README has always given them.
COMMANDS = (
    "./scripts/run.sh     # set up .venv, migrate, seed demo data, run sandbox insurers + web + qcluster",
    "./scripts/test.sh    # install what the tests need and run the whole suite (CI: .ci/run)",
)

LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
# A repository file named in a code span: a relative path with a directory and a known extension,
# optionally with a test function (`tests/x.py::test_y`). Placeholders (`<code>`) never match.
EXTENSIONS = "py|md|sh|yml|png|txt|ini|toml|html|css|js"
REPO_FILE = re.compile(rf"^([A-Za-z0-9_][\w.-]*(?:/[\w.-]+)+\.(?:{EXTENSIONS}))(?:::(\w+))?$")
# Made at run time, or outside the repository: named, never committed.
GENERATED = ("var/", "test-artifacts/", ".venv/")
ISSUE_TALK = re.compile(r"\b(?:issue|round)\s+#?\d+\b|\bthis round\b|\b(?:first|second|third) round\b", re.IGNORECASE)


def page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = unicodedata.normalize("NFC", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found = set()
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


def prose(page: Path) -> str:
    """The page without its fenced code blocks (a shell comment there is no link)."""
    return re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)


def test_readme_stays_within_its_budget():
    """The README is the front door; the details belong to the docs pages."""
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move details to docs/"


def test_readme_gives_the_two_commands_exactly():
    text = README.read_text(encoding="utf-8")
    for command in COMMANDS:
        assert command in text, command


def test_readme_links_every_docs_page():
    linked = {target.split("#")[0] for target in LINK.findall(README.read_text(encoding="utf-8"))}
    missing = [page_id(page) for page in DOCS if page_id(page) not in linked]
    assert not missing, f"docs pages the README does not link: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_and_anchor_resolves(page):
    broken = []
    for target in LINK.findall(prose(page)):
        if re.match(r"^[a-z]+:", target):  # http(s), mailto
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(target)
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(target)
    assert not broken, f"{page_id(page)}: links to nothing: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_repository_file_a_page_names_exists(page):
    """A page that names `some/module.py` (or `tests/x.py::test_y`) names something real."""
    stale = []
    for span in CODE_SPAN.findall(page.read_text(encoding="utf-8")):
        match = REPO_FILE.match(span.strip())
        if not match or match.group(1).startswith(GENERATED):
            continue
        path, function = REPO / match.group(1), match.group(2)
        if not path.is_file():
            stale.append(span)
        elif function and not re.search(rf"^\s*def {function}\(", path.read_text(encoding="utf-8"), re.MULTILINE):
            stale.append(span)
    assert not stale, f"{page_id(page)}: names files or tests that do not exist: {stale}"


def test_the_configuration_page_names_every_variable_env_example_lists():
    """`.env.example` is kept complete by tests/insurehub/test_env_example.py; this page follows it."""
    lines = (REPO / ".env.example").read_text(encoding="utf-8").splitlines()
    variables = {line.split("=", 1)[0] for line in lines if line and not line.startswith("#")}
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = sorted(name for name in variables if f"`{name}`" not in page)
    assert variables and not missing, f"docs/configuration.md does not describe: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_no_page_names_an_issue_instead_of_the_behaviour(page):
    found = ISSUE_TALK.findall(page.read_text(encoding="utf-8"))
    assert not found, f"{page_id(page)}: {found}"
