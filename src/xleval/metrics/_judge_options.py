"""How a :class:`~xleval.metrics.Judge` runs: a local model (:class:`JudgeLocal`: batches, device,
precision, progress bar) or a server (:class:`JudgeServer`: requests in flight, timeout, retries, backoff,
the API key's variable). Two values instead of nine keywords; neither changes a score, so neither is in the
signature. Each checks itself when built (one :class:`~xleval.exceptions.InputError` naming the setting);
``with_(...)`` changes some settings. ``get_metric("judge:...", batch_size=2, timeout=30)`` still takes the
settings one by one (the registry builds these values)."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from xleval.exceptions import InputError

from ._neural import PRECISIONS

__all__ = ["JudgeLocal", "JudgeServer", "DEFAULT_LOCAL", "DEFAULT_SERVER", "judge_settings"]


def _check_int(label: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(f"{label} must be an integer >= {low}, got {value!r}", argument=label, value=value)


@dataclass(frozen=True)
class JudgeLocal:
    """A local judge model: ``batch_size`` prompts per forward pass, ``device`` (cpu, cuda, cuda:N, mps),
    ``precision`` (fp32, fp16, bf16) and a ``progress`` bar."""

    batch_size: int = 8
    device: str = "cpu"
    precision: str = "fp32"
    progress: bool = False

    def __post_init__(self) -> None:
        _check_int("batch_size", self.batch_size, 1)
        if self.precision not in PRECISIONS:
            raise InputError(f"precision={self.precision!r}: a local judge runs in {' or '.join(PRECISIONS)}; give one "
                             "of them", argument="precision", value=self.precision)

    def with_(self, **changes: Any) -> JudgeLocal:
        """These settings with some changed."""
        return replace(self, **changes)


@dataclass(frozen=True)
class JudgeServer:
    """An OpenAI-compatible judge server: ``concurrency`` requests in flight, ``timeout`` seconds per request,
    ``retries`` after a timeout/429/5xx, the first ``backoff`` in seconds (doubled each retry), and
    ``api_key_env``, the environment variable holding the API key (read when a request is sent; never stored
    or written)."""

    concurrency: int = 4
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 1.0
    api_key_env: str | None = "OPENAI_API_KEY"

    def __post_init__(self) -> None:
        _check_int("concurrency", self.concurrency, 1)
        _check_int("retries", self.retries, 0)
        for label, number in (("timeout", self.timeout), ("backoff", self.backoff)):
            if isinstance(number, bool) or not isinstance(number, int | float) or not np.isfinite(number) \
                    or number < 0 or (label == "timeout" and number == 0):
                raise InputError(f"{label} must be a positive number of seconds, got {number!r}", argument=label,
                                 value=number)

    def with_(self, **changes: Any) -> JudgeServer:
        """These settings with some changed."""
        return replace(self, **changes)


DEFAULT_LOCAL = JudgeLocal()
DEFAULT_SERVER = JudgeServer()


def judge_settings(options: dict[str, Any]) -> dict[str, Any]:
    """Flat options (the registry's: ``batch_size``, ``timeout``, ...) with the local and server settings
    gathered into ``local=`` and ``server=`` (values given as such are kept)."""
    out = dict(options)
    for name, cls in (("local", JudgeLocal), ("server", JudgeServer)):
        given = {f.name: out.pop(f.name) for f in fields(cls) if f.name in out}
        if given:
            out[name] = replace(out.get(name) or cls(), **given)
    return out
