"""The package's layers point one way, without cycles, and the core needs PyTorch only.

    cli -> paper, tabular -> engine -> core;   io beside them (imports core only)

Every ``import`` in the source is read (function-level imports too; ``if TYPE_CHECKING``
blocks, which never run, are left out).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "deepctrl"
ALLOWED = {  # layer -> layers it may import
    "core": {"core"},
    "engine": {"core", "engine"},
    "io": {"core", "io"},
    "tabular": {"core", "engine", "io", "tabular"},
    "paper": {"core", "engine", "io", "paper"},
    "cli": {"core", "engine", "io", "tabular", "paper", "cli"},
    "api": {"core", "engine", "io", "tabular", "paper", "cli", "api"},
}
TABLE_LIBRARIES = ("pandas", "sklearn", "scipy", "matplotlib")
FIGURES = "deepctrl.io.figures"
"""Writes PNG figures; imports matplotlib when a figure is drawn, and says which extra
brings it when it is missing."""
MODULES = {
    ".".join(("deepctrl", *p.relative_to(SRC).with_suffix("").parts)).removesuffix(".__init__"): p
    for p in SRC.rglob("*.py")
}


def layer(module: str) -> str:
    """The layer of a module; the modules at the top of the package are the public API."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and parts[1] in ALLOWED):
        return parts[1]
    return "version" if module == "deepctrl._version" else "api"


def runs(node: ast.AST) -> bool:
    return not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))


def imports(path: Path) -> list[str]:
    """Every module ``path`` imports (absolute names), outside TYPE_CHECKING blocks."""
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
            out.extend(f"{node.module}.{a.name}" for a in node.names
                       if f"{node.module}.{a.name}" in MODULES)
        for child in ast.iter_child_nodes(node):
            if runs(child):
                visit(child)

    visit(ast.parse(path.read_text()))
    return out


GRAPH = {m: {i for i in imports(p) if i in MODULES and i != m} for m, p in MODULES.items()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_layers_point_one_way(module):
    own = layer(module)
    for target in GRAPH[module]:
        other = layer(target)
        assert other == "version" or other in ALLOWED[own], f"{module} ({own}) imports {target}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer(m) in ("core", "engine",
                                                                             "io")))
def test_core_engine_and_io_need_no_table_libraries(module):
    third_party = {i.split(".")[0] for i in imports(MODULES[module])}
    if module == FIGURES:  # matplotlib only inside the function that draws
        tree = ast.parse(MODULES[module].read_text())
        top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import)
               for a in n.names}
        assert "matplotlib" not in top
        third_party -= {"matplotlib"}
    assert not third_party & set(TABLE_LIBRARIES), module


def test_no_import_cycle():
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(GRAPH[module]):
            if state.get(target) == 1:
                cycle = [*path[path.index(target):], target] if target in path else [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, [*path, target])
        state[module] = 2
        order.append(module)

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])
    assert len(order) == len(MODULES)


def test_the_checker_sees_a_wrong_import(tmp_path):
    """The checks would fail on an upward import and on a cycle."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from deepctrl.tabular import estimators\n")
    assert "deepctrl.tabular.estimators" in imports(bad)
    assert "deepctrl.tabular" not in ALLOWED["core"]


def test_the_core_api_loads_without_table_libraries():
    code = (
        "import sys, torch, deepctrl as dc\n"
        "names = (dc.DeepCTRL, dc.fit, dc.Objective, dc.sweep, dc.select_alpha, dc.save,\n"
        "         dc.rules.Monotonic, dc.methods.DeepCTRL, dc.priors.Beta)\n"
        "m = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))\n"
        "r = dc.fit(m, dc.rules.Monotonic(0, 'increasing'), train=(torch.randn(20, 2),\n"
        "           torch.randn(20, 1)), max_epochs=1)\n"
        "dc.sweep(r.model, dc.rules.Monotonic(0, 'increasing'), torch.randn(5, 2),\n"
        "         torch.randn(5, 1))\n"
        f"print([n for n in {TABLE_LIBRARIES!r} if n in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_at_most_eight_modules_at_the_top():
    top = sorted(p.name for p in SRC.glob("*.py"))
    assert len(top) <= 8, top
