"""A package's public API re-exported lazily (PEP 562): each name is imported from its module when
first used, so importing the package loads none of its modules' libraries. Used by ``analysis`` and
``fairness``."""

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_exports(package: str, public: dict[str, tuple[str, ...]]) -> tuple[list[str], Callable[[str], Any]]:
    """``(__all__, __getattr__)`` for ``package`` from ``{module: (name, ...)}``.

    Examples
    --------
    >>> names, getattr_ = lazy_exports("analysis", {"correlations": ("holm",)})
    >>> names, getattr_("holm").__name__
    (['holm'], 'holm')
    """
    home = {name: module for module, names in public.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{home[name]}"), name)

    return sorted(home), __getattr__
