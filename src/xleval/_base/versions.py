"""Installed versions of distributions, without importing :mod:`importlib.metadata` when it can be avoided:
a short command (``xleval score`` on a few thousand rows) spent ~30 ms of its CPU importing it for the two
versions that signatures and the compiled-kernel cache name carry."""
from __future__ import annotations

import contextlib
import functools
import importlib.util
from pathlib import Path

__all__ = ["installed_version"]


@functools.cache
def installed_version(distribution: str, package: str | None = None) -> str | None:
    """The version of ``distribution`` (import name ``package``, default the same), or None when not installed.

    Read from the name of the one ``DIST-VERSION.dist-info`` folder beside the package (what
    ``importlib.metadata.version`` would find there); any other layout asks importlib.metadata."""
    with contextlib.suppress(Exception):
        spec = importlib.util.find_spec(package or distribution)
        if spec is not None and spec.origin:
            prefix = distribution.replace("-", "_") + "-"
            found = [p.name[len(prefix):-len(".dist-info")]
                     for p in Path(spec.origin).parent.parent.glob(f"{prefix}*.dist-info")]
            if len(found) == 1 and found[0] and "-" not in found[0]:
                return found[0]
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        return version(distribution)
    return None
