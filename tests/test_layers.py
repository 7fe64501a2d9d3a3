"""The package's layers point one way, without cycles, and the core needs PyTorch only.

    __main__ -> cli -> paper, tabular -> engine -> core;   io beside them (imports core only)
    paper -> api -> core;   api -> engine, io, tabular on first use of a name

The api is the public modules at the top of the package (``deepctrl``, ``deepctrl.methods``,
``deepctrl.rules``, ``deepctrl.priors``); paper reaches the core only through it. Every
``import`` in the source is read (function-level and relative imports too;
``if TYPE_CHECKING`` blocks, which never run, are left out), and so is every string naming a
module below the package: the api imports its names' modules by name on first use. The
layers themselves form no cycle, so no import from one layer to another can close one; the
module graph shows that no import inside a layer does either. The checker takes the root of
a ``deepctrl`` tree, so that it can be run on a deliberately wrong tree as well.
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
    "api": {"core", "engine", "io", "tabular", "api"},
    "paper": {"engine", "io", "api", "paper"},
    "cli": {"core", "engine", "io", "tabular", "api", "paper", "cli"},
    "main": {"cli"},
}
TOP = {"deepctrl._version": "version", "deepctrl.__main__": "main"}
"""Modules at the top of the package outside the api: the version (any layer may import it)
and ``python -m deepctrl``."""
TABLE_LIBRARIES = ("pandas", "sklearn", "scipy", "matplotlib")
PLAIN_LAYERS = ("core", "engine", "io")
FIGURES = "deepctrl.io.figures"
"""Writes PNG figures; imports matplotlib when a figure is drawn, and says which extra
brings it when it is missing."""


def modules_of(root: Path) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file under ``root`` (a ``deepctrl`` folder)."""
    return {
        ".".join(("deepctrl", *p.relative_to(root).with_suffix("").parts)).removesuffix(
            ".__init__"
        ): p
        for p in sorted(root.rglob("*.py"))
    }


def layer(module: str) -> str:
    """The layer of a module; the modules at the top of the package are the public API,
    except those of ``TOP``."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and parts[1] in ALLOWED):
        return parts[1]
    return TOP.get(module, "api")


def runs(node: ast.AST) -> bool:
    return not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))


def named_module(value: object, known: dict[str, Path]) -> bool:
    """Whether ``value`` is the name of a module below the package, such as the api's
    ``"deepctrl.core.model"`` (``"deepctrl"`` alone is also the logger's and the command's)."""
    return isinstance(value, str) and value.startswith("deepctrl.") and value in known


def imports(module: str, path: Path, known: dict[str, Path]) -> list[str]:
    """Every module ``path`` imports (absolute names, relative ones resolved), outside
    TYPE_CHECKING blocks. ``from a import b`` counts ``a.b`` too when it is a module, and a
    string that names a module below the package counts as an import of it."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[: len(package) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            if node.module:
                out.append(base)
            out.extend(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known)
        elif isinstance(node, ast.Constant) and named_module(node.value, known):
            out.append(node.value)
        for child in ast.iter_child_nodes(node):
            if runs(child):
                visit(child)

    visit(ast.parse(path.read_text()))
    return out


def graph_of(known: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    return {m: {i for i in imports(m, p, known) if i in known and i != m} for m, p in known.items()}


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """One line per import that points the wrong way."""
    return [
        f"{m} ({layer(m)}) imports {t} ({layer(t)})"
        for m in sorted(graph)
        for t in sorted(graph[m])
        if layer(t) != "version" and layer(t) not in ALLOWED[layer(m)]
    ]


def top_level_imports(path: Path) -> set[str]:
    """The top-level packages imported at the top of ``path`` (not inside functions)."""
    out: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


def table_imports(known: dict[str, Path]) -> dict[str, list[str]]:
    """core, engine and io modules -> the table libraries they import (the figures module may
    import matplotlib inside the functions that draw, not at its top)."""
    out = {}
    for module, path in known.items():
        if layer(module) not in PLAIN_LAYERS:
            continue
        third_party = {i.split(".")[0] for i in imports(module, path, known)}
        if module == FIGURES and "matplotlib" not in top_level_imports(path):
            third_party.discard("matplotlib")
        found = sorted(third_party & set(TABLE_LIBRARIES))
        if found:
            out[module] = found
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """An import cycle as [a, b, ..., a], or [] when there is none."""
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> list[str]:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target, [*path, target])
                if found:
                    return found
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [module])
            if found:
                return found
    return []


MODULES = modules_of(SRC)
GRAPH = graph_of(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_layers_point_one_way(module):
    assert layer_violations({module: GRAPH[module]}) == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer(m) in PLAIN_LAYERS))
def test_core_engine_and_io_need_no_table_libraries(module):
    assert table_imports({module: MODULES[module]}) == {}


def test_no_import_cycle():
    assert find_cycle(GRAPH) == []


def test_the_layers_make_no_cycle():
    """What ALLOWED permits between layers cannot close a cycle."""
    assert find_cycle({name: allowed - {name} for name, allowed in ALLOWED.items()}) == []


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "deepctrl" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "deepctrl"


def test_the_checker_reports_a_wrong_tree(tmp_path):
    """On a tree that breaks every rule, the checker names each offending import."""
    root = write_tree(
        tmp_path,
        {
            "__init__.py": (
                "from deepctrl.core import losses\n_WHERE = {'run': 'deepctrl.paper.runs'}\n"
            ),
            "_version.py": "__version__ = '0'\n",
            "core/__init__.py": "",
            "core/losses.py": (
                "import torch\n"
                "from deepctrl._version import __version__\n"
                "from deepctrl.core import model\n"
                "def table():\n"
                "    import pandas as pd\n"
                "    return pd\n"
            ),
            "core/model.py": "def fit():\n    from deepctrl.engine import trainer\n",
            "core/typed.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    import sklearn\n"
                "    from deepctrl.tabular import estimators\n"
            ),
            "core/rules/__init__.py": "from ..metrics import mae\nfrom . import base\n",
            "core/rules/base.py": "from ...io import checkpoint\n",
            "core/metrics.py": "from scipy import stats\n",
            "engine/__init__.py": "",
            "engine/trainer.py": "from deepctrl.core.model import fit\n",
            "io/__init__.py": "",
            "io/checkpoint.py": "from deepctrl.core import losses\n",
            "io/figures.py": (
                "import matplotlib\n"
                "def draw():\n"
                "    import matplotlib.pyplot as plt\n"
                "    return plt\n"
            ),
            "io/reports.py": "def draw():\n    import matplotlib.pyplot as plt\n    return plt\n",
            "paper/__init__.py": "",
            "paper/runs.py": "import deepctrl as dc\n",
            "tabular/__init__.py": "",
            "tabular/estimators.py": "import pandas\nfrom deepctrl.engine import trainer\n",
        },
    )
    known = modules_of(root)
    graph = graph_of(known)
    assert graph["deepctrl"] == {"deepctrl.core", "deepctrl.core.losses", "deepctrl.paper.runs"}
    assert graph["deepctrl.core.rules"] == {"deepctrl.core.metrics", "deepctrl.core.rules.base"}
    assert graph["deepctrl.core.typed"] == set()
    assert layer_violations(graph) == [
        "deepctrl (api) imports deepctrl.paper.runs (paper)",
        "deepctrl.core.model (core) imports deepctrl.engine (engine)",
        "deepctrl.core.model (core) imports deepctrl.engine.trainer (engine)",
        "deepctrl.core.rules.base (core) imports deepctrl.io (io)",
        "deepctrl.core.rules.base (core) imports deepctrl.io.checkpoint (io)",
    ]
    assert table_imports(known) == {
        "deepctrl.core.losses": ["pandas"],
        "deepctrl.core.metrics": ["scipy"],
        "deepctrl.io.figures": ["matplotlib"],
        "deepctrl.io.reports": ["matplotlib"],
    }
    assert find_cycle(graph) == [
        "deepctrl.core.model",
        "deepctrl.engine.trainer",
        "deepctrl.core.model",
    ]
    graph["deepctrl.core.model"] = set()
    assert find_cycle(graph) == ["deepctrl", "deepctrl.paper.runs", "deepctrl"]
    graph["deepctrl"].remove("deepctrl.paper.runs")
    assert find_cycle(graph) == []


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
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_at_most_eight_modules_at_the_top():
    top = sorted(p.name for p in SRC.glob("*.py"))
    assert len(top) <= 8, top
