"""Every docstring example passes under plain `python -m doctest`, not only under pytest
(which turns ELLIPSIS on for all): an expected output that elides with `...` says
`# doctest: +ELLIPSIS`."""

import doctest
import importlib
import pkgutil

import deepctrl


def may_elide(example):
    """Whether the expected output holds `...` without the flag that makes it elide."""
    expected = example.exc_msg if example.exc_msg is not None else example.want
    return "..." in expected and not example.options.get(doctest.ELLIPSIS)


def failing_without_ellipsis(module_name):
    """The docstrings of `module_name` with a `...` in an expected output and no ELLIPSIS
    flag whose examples fail under plain doctest (a literal `...` in an output passes)."""
    module = importlib.import_module(module_name)
    runner = doctest.DocTestRunner(optionflags=0)
    return [
        test.name
        for test in doctest.DocTestFinder().find(module, module_name)
        if any(may_elide(e) for e in test.examples) and runner.run(test, out=str).failed
    ]


def test_every_example_that_elides_its_output_turns_ellipsis_on():
    names = [
        info.name
        for info in pkgutil.walk_packages(deepctrl.__path__, "deepctrl.")
        if not info.name.endswith("__main__")
    ]
    assert len(names) > 50
    assert [failed for name in names for failed in failing_without_ellipsis(name)] == []
