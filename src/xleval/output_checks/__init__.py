"""Per-row output checks: outputs that fool metrics (empty, copied source, off-target language, truncated,
identical to the reference, extreme length), systems that are copies of the reference
(:func:`reference_copies`, :func:`drop_reference_copies`), their rates per (group, system) with intervals,
and their effect on each metric column. Not to be confused with LGN's validity check
(:mod:`xleval.diagnostics`), which asks whether the calibration set's groups have equal quality.
docs/output-checks.md defines every flag.

The off-target flag needs the ``langid`` extra (``pip install 'xleval[langid]'``, py3langid); the other flags
need nothing beyond the core. Names load on first use (``FLAGS`` without pandas, for ``--help``).
"""
from __future__ import annotations

import importlib
from typing import Any

from ._names import FLAGS, INVALID_FLAGS

__all__ = ["check_outputs", "FlagThresholds", "DEFAULT_THRESHOLDS",
           "flag_outputs", "exclude_invalid", "OutputChecks", "Exclusion", "wilson_interval",
           "FLAGS", "INVALID_FLAGS", "IDENTIFIERS", "LanguageIdentifier", "base_language",
           "reference_copies", "drop_reference_copies", "ReferenceCopies"]

_LAZY = {**dict.fromkeys(("check_outputs", "FlagThresholds", "DEFAULT_THRESHOLDS", "flag_outputs", "exclude_invalid",
                          "OutputChecks", "Exclusion", "wilson_interval"), "._checks"),
         **dict.fromkeys(("IDENTIFIERS", "LanguageIdentifier", "base_language"), "._langid"),
         **dict.fromkeys(("reference_copies", "drop_reference_copies", "ReferenceCopies"), "._copies")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
