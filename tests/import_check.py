"""The one import-lightness check: what a piece of code loads, run in a fresh interpreter.

Importing xleval (and its command line, and ``xleval --help``) loads none of the heavy optional
libraries; each package's own lightness tests use :func:`loaded_by` / :func:`modules_after` from here.
Run by ``make release-check`` against the installed wheel and by test_release_imports.py.

Usage: python import_check.py  -> prints the check and exits 1 when a heavy module was loaded.
"""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable

HEAVY = ("torch", "transformers", "dask", "distributed", "matplotlib", "comet", "bert_score",
         "sentence_transformers", "pytorch_lightning", "statsmodels")
CHECKS = {
    "import xleval": "import xleval",
    "import xleval.cli": "import xleval.cli",
    "xleval --help": "import xleval.cli\ntry:\n    xleval.cli.main(['--help'])\nexcept SystemExit:\n    pass",
}
_MARK = "MODULES:"


def modules_after(code: str, timeout: float = 120) -> set[str]:
    """Names in ``sys.modules`` after running ``code`` in a fresh interpreter (raises if it fails)."""
    script = f"{code}\nimport sys\nprint({_MARK!r} + ' '.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{code!r} failed: {proc.stderr.strip()}")
    line = [x for x in proc.stdout.splitlines() if x.startswith(_MARK)][-1]
    return set(line[len(_MARK):].split())


def loaded_by(code: str, heavy: Iterable[str] = HEAVY) -> list[str]:
    """The ``heavy`` top-level packages (default :data:`HEAVY`) loaded by ``code``, sorted."""
    return sorted({m.split(".")[0] for m in modules_after(code)} & set(heavy))


def main() -> int:
    failed = False
    for name, code in CHECKS.items():
        heavy = loaded_by(code)
        failed |= bool(heavy)
        print(f"{name}: {'loads ' + ', '.join(heavy) if heavy else 'no heavy import'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
