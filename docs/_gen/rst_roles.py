"""A griffe extension for the Python API pages (mkdocs.yml): the Sphinx roles some docstrings use
(:func:`name`, :class:`name`, ...) are shown as code, `name`, since Markdown has no roles."""

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc):`~?([^`]+)`")


class RstRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
