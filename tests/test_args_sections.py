"""The `Args:` section of every public class and function of the core, engine and io
layers names every parameter of its signature (the API reference renders these
sections)."""

import importlib
import inspect
import pkgutil
import re

import deepctrl

LAYERS = ("deepctrl.core", "deepctrl.engine", "deepctrl.io")
SKIPPED = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def documented(doc):
    """The names the `Args:` section of `doc` lists, or None without one."""
    lines = doc.splitlines()
    if "Args:" not in (line.strip() for line in lines):
        return None
    start = [line.strip() for line in lines].index("Args:") + 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    names = []
    for line in lines[start:]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        found = re.match(rf"^ {{{indent}}}\**(\w+)( \(.*\))?:", line)
        if found:
            names.append(found.group(1))
    return names


def undocumented(obj):
    """The parameters of `obj`'s signature that its `Args:` section leaves out."""
    names = documented(inspect.getdoc(obj) or "")
    if names is None:
        return []
    params = inspect.signature(obj).parameters.values()
    return [
        p.name
        for p in params
        if p.kind not in SKIPPED and p.name not in names and p.name not in ("self", "cls")
    ]


def public_objects():
    for package in LAYERS:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            module = importlib.import_module(info.name)
            for name, obj in vars(module).items():
                mine = getattr(obj, "__module__", None) == info.name
                if mine and not name.startswith("_") and inspect.isclass(obj):
                    yield f"{info.name}.{name}", obj
                    for attr, member in vars(obj).items():
                        if inspect.isfunction(member) and not attr.startswith("_"):
                            yield f"{info.name}.{name}.{attr}", member
                elif mine and not name.startswith("_") and inspect.isfunction(obj):
                    yield f"{info.name}.{name}", obj


def test_every_parameter_of_a_documented_signature_is_in_its_args_section():
    objects = dict(public_objects())
    assert "deepctrl.core.layers.OneHotLinear" in objects and deepctrl.fit in objects.values()
    assert sum(documented(inspect.getdoc(obj) or "") is not None for obj in objects.values()) > 50
    missing = {name: undocumented(obj) for name, obj in objects.items()}
    assert {name: left for name, left in missing.items() if left} == {}
