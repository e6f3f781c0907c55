"""Importing xleval (and its command line, and ``xleval --help``) loads none of the heavy optional
libraries. Run by ``make release-check`` against the installed wheel and by test_release_imports.py.

Usage: python import_check.py  -> prints the check and exits 1 when a heavy module was loaded.
"""
from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "dask", "distributed", "matplotlib", "comet", "bert_score")
CHECKS = {
    "import xleval": "import xleval",
    "import xleval.cli": "import xleval.cli",
    "xleval --help": "import xleval.cli\ntry:\n    xleval.cli.main(['--help'])\nexcept SystemExit:\n    pass",
}


def loaded_by(code: str) -> list[str]:
    """Heavy top-level modules in sys.modules after running ``code`` in a fresh interpreter."""
    script = f"{code}\nimport sys\nprint('HEAVY:' + ' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{code!r} failed: {proc.stderr.strip()}")
    marker = [line for line in proc.stdout.splitlines() if line.startswith("HEAVY:")][-1]
    return marker[len("HEAVY:"):].split()


def main() -> int:
    failed = False
    for name, code in CHECKS.items():
        heavy = loaded_by(code)
        failed |= bool(heavy)
        print(f"{name}: {'loads ' + ', '.join(heavy) if heavy else 'no heavy import'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
