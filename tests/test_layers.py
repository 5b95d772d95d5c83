"""The layers of the house, kept by reading every product module's imports (docs/architecture.md).

From the bottom up: `insurehub` and `agencies` (project plumbing, who works for which agency);
`integrations` (calling insurers, pacing, the attempt log); `work` (the durable record, its one
try loop, the pump, dead letters and their replay, the schedules); the desk's apps (`quotes`, `sync`,
`customers`, `documents`, `notifications`, `policies`, `vehicles`); `commissions` and `outreach`, which listen
to the desk's signals (issuance, cancellation, renewal reminders, erasure) and add their sections
to its pages through hooks, so no desk app imports them back; the operator `console` on top. A package may import
its own layer and those below, never above. The sandbox (the insurers' side), the bench and the
tests stand beside: they may import product code, product code never imports them.

Every import counts, wherever it is written: at module level, inside a function (a lazy import
is still a dependency), under `TYPE_CHECKING`, relative, or a literal `import_module("…")` /
`apps.get_model("app", …)` (reaching up by name is still reaching up). Model references by string
in a `ForeignKey("agencies.Agency")` do not count: Django resolves those, the code does not
depend on the other app's modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

REPO = Path(__file__).resolve().parents[1]

# Bottom first. Packages in one layer may import each other.
LAYERS: list[tuple[str, ...]] = [
    ("insurehub", "agencies"),
    ("integrations",),
    ("work",),
    ("quotes", "sync", "customers", "documents", "notifications", "policies", "vehicles"),
    ("commissions", "outreach"),
    ("console",),
]
LAYER_OF = {package: level for level, packages in enumerate(LAYERS) for package in packages}
PRODUCT = frozenset(LAYER_OF)
BESIDE = frozenset({"sandbox", "bench", "tests"})

# Imports that break a layer rule today and are waiting for their fix: (importing module,
# imported module) -> why, and what the fix is. Each must still exist (see
# test_every_known_exception_still_exists), so fixing one means deleting its line here.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # what it imports, dotted and absolute
    where: str  # path:line, for the failure message

    @property
    def target_package(self) -> str:
        return self.target.split(".")[0]

    @property
    def package(self) -> str:
        return self.module.split(".")[0]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_in(source: str, *, module: str, is_package: bool = False, where: str = "") -> Iterator[Import]:
    """Every import the code makes, at any depth of the tree, relative ones made absolute."""
    # The package a relative import is relative to: a package's own name for its __init__.
    anchor = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = anchor[: len(anchor) - (node.level - 1)]
                if node.module:
                    targets = [".".join([*base, node.module])]
                else:  # `from . import models`: each name is a module of that package
                    targets = [".".join([*base, alias.name]) for alias in node.names]
            elif node.module:
                targets = [node.module]
        elif isinstance(node, ast.Call):
            targets = _imported_by_name(node)
        for target in targets:
            line = node.lineno if isinstance(node, ast.stmt | ast.expr) else 0  # an import or a call: both have one
            yield Import(module=module, target=target, where=f"{where}:{line}")


def _imported_by_name(call: ast.Call) -> list[str]:
    """`import_module("x.y")`, `apps.get_model("app", "Model")` and `apps.get_model("app.Model")`."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    first = call.args[0] if call.args else None
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return []
    if name == "import_module":
        return [first.value]
    if name == "get_model":
        return [first.value.split(".")[0]]
    return []


def package_imports(package: str) -> list[Import]:
    found: list[Import] = []
    for path in sorted((REPO / package).rglob("*.py")):
        found.extend(
            imports_in(
                path.read_text(encoding="utf-8"),
                module=module_name(path),
                is_package=path.name == "__init__.py",
                where=str(path.relative_to(REPO)),
            )
        )
    return found


@pytest.fixture(scope="module")
def product_imports() -> list[Import]:
    return [found for package in sorted(PRODUCT) for found in package_imports(package)]


def _known(found: Import) -> bool:
    return (found.module, found.target) in KNOWN_EXCEPTIONS


def _report(violations: list[Import]) -> str:
    return "\n".join(f"{v.where}: {v.module} imports {v.target}" for v in violations)


def test_product_code_never_imports_the_sandbox_the_bench_or_the_tests(product_imports):
    """The sandbox plays the insurers and the bench measures us: shipping either would be a bug."""
    violations = [found for found in product_imports if found.target_package in BESIDE]
    assert not violations, _report(violations)


def test_no_package_imports_a_layer_above_its_own(product_imports):
    """integrations knows no desk app and no console; the desk apps know no console."""
    violations = [
        found
        for found in product_imports
        if found.target_package in PRODUCT
        and LAYER_OF[found.target_package] > LAYER_OF[found.package]
        and not _known(found)
    ]
    assert not violations, _report(violations)


def package_cycles(imports: list[Import]) -> list[list[str]]:
    """The packages that reach each other through imports (strongly connected components of
    more than one package), each sorted; Tarjan's algorithm over the package graph."""
    graph: dict[str, set[str]] = {}
    for found in imports:
        if found.target_package in PRODUCT and found.target_package != found.package:
            graph.setdefault(found.package, set()).add(found.target_package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(package: str) -> None:
        index[package] = low[package] = len(index)
        stack.append(package)
        on_stack.add(package)
        for target in sorted(graph.get(package, ())):
            if target not in index:
                visit(target)
                low[package] = min(low[package], low[target])
            elif target in on_stack:
                low[package] = min(low[package], index[target])
        if low[package] == index[package]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == package:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for package in sorted(graph):
        if package not in index:
            visit(package)
    return sorted(cycles)


def test_no_two_packages_import_each_other_even_through_others(product_imports):
    """Layers allow imports within a layer; this forbids the loops among them too (quotes and
    customers, documents and notifications): an app that reaches an app that reaches it back
    can't be understood, tested or moved alone. A side effect crosses by a signal or a page hook
    that the receiving app connects (docs/architecture.md)."""
    cycles = package_cycles(product_imports)
    lines = []
    for cycle in cycles:
        members = set(cycle)
        lines.append(" <-> ".join(cycle))
        lines += [
            f"  {found.where}: {found.module} imports {found.target}"
            for found in product_imports
            if found.package in members and found.target_package in members and found.target_package != found.package
        ]
    assert not cycles, "\n".join(lines)


def test_the_cycle_check_sees_a_loop_through_a_third_package():
    """The check above can only fail if it finds a loop of three, not only a pair."""
    sample = [
        Import(module="quotes.a", target="customers.b", where="a:1"),
        Import(module="customers.b", target="documents.c", where="b:1"),
        Import(module="documents.c", target="quotes.d", where="c:1"),
        Import(module="sync.e", target="quotes.a", where="e:1"),
    ]
    assert package_cycles(sample) == [["customers", "documents", "quotes"]]
    assert package_cycles(sample[:2] + sample[3:]) == []


def test_the_sandbox_imports_no_product_code():
    """The sandbox is the insurers' side of the wire: it speaks their contracts, never our code."""
    violations = [found for found in package_imports("sandbox") if found.target_package in PRODUCT]
    assert not violations, _report(violations)


def _insurer_room(dotted: str, root: str) -> str | None:
    """`integrations.insurers.anka.adapter` -> `anka` (for root `integrations.insurers`)."""
    prefix = root + "."
    return dotted[len(prefix) :].split(".")[0] if dotted.startswith(prefix) else None


@pytest.mark.parametrize(
    ("package", "root"), [("integrations", "integrations.insurers"), ("sandbox", "sandbox.insurers")]
)
def test_an_insurer_is_a_room_nothing_else_enters(package, root):
    """Only an insurer's own package (or module) imports it, and only the discovery in `root`'s
    `__init__` loads them all: no shared code names one insurer, so a new insurer is its
    package and its sandbox package, nothing else edited. Whatever an insurer keeps for itself
    (Çınar's token cache) is reached through the registry (`forget_process_state`)."""
    violations = []
    for found in package_imports(package):
        target_room = _insurer_room(found.target, root)
        if target_room is None or found.module == root:
            continue
        if _insurer_room(found.module, root) != target_room:
            violations.append(found)
    assert not violations, _report(violations)


def test_every_project_app_has_a_layer():
    """A new app must be placed in a layer here before it is installed, or its imports go unchecked."""
    project_apps = {
        app.split(".")[0] for app in settings.INSTALLED_APPS if (REPO / app.split(".")[0] / "__init__.py").exists()
    }
    assert project_apps - PRODUCT == set(), "installed but in no layer"
    # `insurehub` is the project package, not an app; every other layer member is installed.
    assert PRODUCT - {"insurehub"} - project_apps == set(), "in a layer but not installed"


def test_every_known_exception_still_exists(product_imports):
    """An allowance outlives its violation silently; once the import is gone, delete the allowance."""
    present = {(found.module, found.target) for found in product_imports}
    assert set(KNOWN_EXCEPTIONS) <= present, sorted(set(KNOWN_EXCEPTIONS) - present)


def test_the_reader_sees_lazy_relative_and_by_name_imports():
    """The checks above can only fail if the reader finds every kind of import; shown on a sample."""
    source = """
from __future__ import annotations
from typing import TYPE_CHECKING
import importlib
from django.apps import apps
from . import models
from ..quotes.models import Policy

if TYPE_CHECKING:
    from sync.models import SyncItem

def lazy():
    import sandbox.domain
    from console import health
    return importlib.import_module("bench.scrape"), apps.get_model("quotes", "Issuance"), apps.get_model("sync.SyncRun")
"""
    found = {f.target for f in imports_in(source, module="integrations.example", where="sample")}
    assert {
        "integrations.models",
        "quotes.models",
        "sync.models",
        "sandbox.domain",
        "console",
        "bench.scrape",
        "quotes",
        "sync",
    } <= found
    package_relative = {f.target for f in imports_in("from .x import y", module="console", is_package=True)}
    assert package_relative == {"console.x"}
