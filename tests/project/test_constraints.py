"""The test install is reproducible: constraints.txt pins, with ``==``, every tool the
``test`` and ``docs`` extras name (and retrograd's own dependencies, which ``-c`` also
constrains), each pin inside the range pyproject.toml allows; and the README's set-up
commands are the ones CI runs (.ci/run runs the README's second command, word for word).
"""

from __future__ import annotations

import os
import re

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs tomllib")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(name: str) -> str:
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


def _pins() -> dict[str, str]:
    pins = {}
    for line in _read("constraints.txt").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9A-Za-z.+!-]*)", line)
        assert m, f"constraints.txt: not an exact pin: {line!r}"
        name = canonicalize_name(m.group(1))
        assert name not in pins, f"constraints.txt: {name} pinned twice"
        pins[name] = m.group(2)
    return pins


def _requirements(extras: tuple[str, ...]) -> list[Requirement]:
    """The requirements of ``extras``, with ``retrograd[...]`` self-references expanded,
    plus retrograd's own dependencies."""
    project = tomllib.loads(_read("pyproject.toml"))["project"]
    optional = project["optional-dependencies"]
    out = [Requirement(r) for r in project["dependencies"]]
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in optional[extra]:
            req = Requirement(text)
            if canonicalize_name(req.name) == "retrograd":
                todo.extend(req.extras)
            else:
                out.append(req)
    return out


def test_every_tool_is_pinned_exactly():
    pins = _pins()
    reqs = _requirements(("test", "docs"))
    names = {canonicalize_name(r.name) for r in reqs}
    # the tools the issue names, so that a change to the extras cannot drop them quietly
    assert {"pytest", "pytest-xdist", "hypothesis", "ruff", "mkdocs", "mkdocstrings",
            "mkdocstrings-python", "pymdown-extensions", "pygments", "torch", "numba",
            "safetensors", "numpy", "scipy", "ml-dtypes"} <= names
    for req in reqs:
        name = canonicalize_name(req.name)
        assert name in pins, f"{name} (from pyproject.toml) is not pinned in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"constraints.txt pins {name}=={pins[name]}, outside pyproject.toml's {req}"
    # what those pull in that the extras leave unnamed (griffe's package, numba's LLVM)
    assert {"griffelib", "llvmlite"} <= set(pins)
    assert "retrograd" not in pins and pins["torch"] == "2.13.0"


def _readme_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", _read("README.md"), re.S)
    assert block and _read("README.md").startswith("# retrograd\n\n```bash\n"), \
        "the README starts with its set-up commands"
    return [ln.strip() for ln in block.group(1).splitlines() if ln.strip()]


def test_readme_starts_with_two_commands_and_ci_runs_the_second():
    first, second = _readme_commands()
    assert first == 'pip install ".[demo]" && retrograd demo'
    assert second == 'pip install -e ".[test]" -c constraints.txt && python -m pytest -n 2'
    ci = [ln.strip() for ln in _read(".ci/run").splitlines()
          if ln.strip() and not ln.lstrip().startswith("#")]
    assert ci[-1] == second, ".ci/run must run the README's second command as written"
