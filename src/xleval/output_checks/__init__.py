"""Per-row output checks: outputs that fool metrics (empty, copied source, off-target language, truncated,
identical to the reference, extreme length), their rates per (group, system) with intervals, and their effect
on each metric column. Not to be confused with LGN's validity check (:mod:`xleval.diagnostics`), which asks
whether the calibration set's groups have equal quality. docs/output-checks.md defines every flag.

The off-target flag needs the ``langid`` extra (``pip install 'xleval[langid]'``, py3langid); the other flags
need nothing beyond the core.
"""
from ._checks import Exclusion, OutputChecks, check_outputs, exclude_invalid, flag_outputs, wilson_interval
from ._flags import FLAGS, INVALID_FLAGS
from ._langid import IDENTIFIERS, LanguageIdentifier, base_language

__all__ = ["check_outputs", "flag_outputs", "exclude_invalid", "OutputChecks", "Exclusion", "wilson_interval",
           "FLAGS", "INVALID_FLAGS", "IDENTIFIERS", "LanguageIdentifier", "base_language"]
