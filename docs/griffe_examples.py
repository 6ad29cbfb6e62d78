r"""Griffe extension for the API reference: ``Example:`` sections are examples sections.

retrograd's docstrings are Google style with an ``Example:`` section of ``>>>`` lines
(the test suite runs them). Napoleon reads ``Example:`` and ``Examples:`` alike, but
Griffe (the docstring parser of mkdocstrings) reads only ``Examples:`` as an examples
section and renders ``Example:`` as a note whose ``>>>`` lines become nested quotes.
This extension renames the section header before Griffe parses the docstring, so every
example is rendered as a highlighted Python console block (with Griffe's default
``trim_doctest_flags``, which hides ``# doctest: +ELLIPSIS`` and the like). The source
docstrings are left as they are. Loaded by ``mkdocs.yml`` (mkdocstrings' ``extensions``
option).

Example:
    >>> as_examples_section("Adds.\n\nExample:\n    >>> 1 + 1").splitlines()
    ['Adds.', '', 'Examples:', '    >>> 1 + 1']
"""

from __future__ import annotations

import re

import griffe

_HEADER = re.compile(r"^([ \t]*)Example:[ \t]*$", re.M)


def as_examples_section(text: str) -> str:
    """``text`` with each ``Example:`` section header spelled ``Examples:``."""
    return _HEADER.sub(r"\1Examples:", text)


class ExampleSections(griffe.Extension):
    """Renames ``Example:`` headers in every docstring before it is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = as_examples_section(obj.docstring.value)
