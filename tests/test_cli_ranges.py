"""A number option's range in --help is the range the library accepts: --n-resamples 1 was shown as
allowed (x>=1) and then refused by the statistics ("must be >= 2")."""
from __future__ import annotations

import click
import pytest

from xleval.cli import app
from xleval.stats import bootstrap

COMMANDS = [("diagnose",), ("report",), ("leaderboard",), ("audit",), ("calibrate", "evaluate"), ("fairness", "gaps")]


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = app
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, path
        command = found
    return command


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_n_resamples_range_is_the_statistics_range(path):
    option = next(p for p in _command(path).params if p.name == "n_resamples")
    assert isinstance(option.type, click.IntRange) and option.type.min == 2
    with pytest.raises(ValueError, match=">= 2"):  # the library's own floor, which the option states
        bootstrap([1.0, 2.0, 3.0], n_resamples=1)
    bootstrap([1.0, 2.0, 3.0], n_resamples=2, random_state=0)


def test_the_dask_example_in_the_docs_is_guarded():
    """Run as a script, a Dask example without `if __name__ == "__main__":` fails ("Nanny failed to
    start"): every Python block of docs/scale.md that starts a DaskBackend is guarded."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "scale.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "DaskBackend(" in b]
    assert blocks
    for block in blocks:
        assert 'if __name__ == "__main__":' in block
        assert all(line.startswith((" ", "def ", "if ", "from ", "import ", "#")) or not line.strip()
                   for line in block.splitlines() if "DaskBackend(" in line or "fit_chunked(" in line)
