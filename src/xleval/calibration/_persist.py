"""Saved calibrators: versioned JSON with a SHA-256 checksum, written atomically, verified on load.

Both LGN and AnchoredCalibrator persist through these two functions, so a file of one kind,
of another format version, edited, or truncated is refused with the same one-line messages.
"""
from __future__ import annotations

import hashlib
import json
import os

from ..exceptions import ModelFileError, OutputError

__all__ = ["save_checked", "load_checked", "checksum", "check_loaded_columns", "check_variance",
           "check_calibrator_path", "save_with_probe"]


def checksum(payload: dict) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def check_calibrator_path(path: str | os.PathLike) -> None:
    """A calibrator is saved as plain JSON: a compressed name (``model.json.gz``) is refused before any
    work, since no command reads a compressed calibrator (one rule for ``save`` and ``calibrate fit``)."""
    name = os.fspath(path)
    if isinstance(name, str) and name.lower().endswith(".gz"):
        raise OutputError(f"{name}: a calibrator is saved as plain JSON, never compressed (no command would read "
                          f"it); name the file {name[:-3] if name[:-3].lower().endswith('.json') else 'model.json'}")


def save_checked(payload: dict, path: str | os.PathLike) -> None:
    """Write ``payload`` plus its checksum atomically (plain JSON types first, so reload checks equal)."""
    from ..io import write_text

    check_calibrator_path(path)

    body = json.loads(json.dumps(payload, allow_nan=True))
    body["checksum"] = checksum(body)
    write_text(path, json.dumps(body, indent=1, allow_nan=True) + "\n")


#: the largest calibrator file read (a quantile LGN of hundreds of groups is tens of MB); the file is
#: read whole, so an unbounded one (``/dev/zero``, a huge file) must be refused before reading it
MAX_CALIBRATOR_BYTES = 1 << 30


def _read_json(path: str | os.PathLike, name: str) -> object:
    from ..io._inputs import read_regular_file

    try:
        raw = read_regular_file(path, MAX_CALIBRATOR_BYTES, "a calibrator file")
    except (FileNotFoundError, NotADirectoryError):
        raise ModelFileError(f"{name}: no such calibrator file; check the path") from None
    except (OSError, ValueError) as exc:  # a directory, a device or FIFO, too large, no read permission
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ModelFileError(f"{name}: cannot read the calibrator file ({reason}); "
                             "give the path of a JSON file written by `calibrate fit`") from None
    if raw[:2] == b"\x1f\x8b":  # gzip's magic bytes: a calibrator compressed after it was saved
        raise ModelFileError(f"{name}: a gzip-compressed file; calibrators are plain JSON: decompress it "
                             "(gunzip) and give the .json file")
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ModelFileError(f"{name}: not a calibrator JSON file (nested too deeply); "
                             "refit and save it again") from None
    except (UnicodeDecodeError, ValueError) as exc:  # not JSON, an integer of thousands of digits
        reason = str(exc).split("; ")[0]
        raise ModelFileError(f"{name}: not a calibrator JSON file ({reason}); refit and save it again") from None


def load_checked(source: str | os.PathLike | dict, fmt: str, version: int, what: str) -> dict:
    """Read and verify a saved payload of format ``fmt`` and ``version``; ``source`` is a path or a dict."""
    name = "calibrator" if isinstance(source, dict) else str(source)
    payload: object
    if isinstance(source, dict):
        payload = source
    else:
        payload = _read_json(source, name)
    if not isinstance(payload, dict) or payload.get("format") != fmt:
        raise ModelFileError(f"{name}: not an xleval {what}")
    found = payload.get("format_version")
    if found != version or isinstance(found, bool):
        shown = found if isinstance(found, int) and not isinstance(found, bool) and abs(found) < 10**6 else "unknown"
        raise ModelFileError(f"{name}: calibrator format version {shown}, this xleval "
                             f"reads version {version}; refit it with this xleval")
    if "checksum" not in payload:
        raise ModelFileError(f"{name}: no checksum; refit and save it again")
    try:
        expected = checksum({k: v for k, v in payload.items() if k != "checksum"})
    except (RecursionError, ValueError):  # nested too deeply to be a calibrator
        raise ModelFileError(f"{name}: not a calibrator (its content is nested too deeply); "
                             "refit and save it again") from None
    if expected != payload["checksum"]:
        raise ModelFileError(f"{name}: checksum mismatch, the file was edited or truncated; refit and save it again")
    return payload


def save_with_probe(model, path: str | os.PathLike, probe: dict) -> None:
    """Save a calibrator as its own ``save`` does, with a drift probe (:mod:`xleval.calibration._drift`) under
    ``probe`` (covered by the checksum). Loaders read only their own keys, so it loads as before."""
    save_checked({**model.to_dict(), "probe": probe}, path)


def check_loaded_columns(by, **columns) -> None:
    """The column options of a loaded calibrator are what ``fit`` could have saved (ValueError otherwise, which
    ``from_dict`` turns into one :class:`ModelFileError` line): ``by`` a column name or a non-empty list of
    distinct names, each of ``columns`` (``score=``, ``human=``, ...) a name or, for an optional one, None."""
    names = [by] if isinstance(by, str) else by
    if not isinstance(names, list) or not names or not all(isinstance(c, str) and c for c in names):
        raise ValueError(f"by={by!r} is not a column name or a non-empty list of column names")
    if len(set(names)) < len(names):
        raise ValueError(f"by={by!r} names a column twice")
    for option, value in columns.items():
        optional = option.endswith("?")
        if not (isinstance(value, str) and value) and not (optional and value is None):
            raise ValueError(f"{option.rstrip('?')}={value!r} is not a column name")


def check_variance(value, what: str, *, unknown: bool = False) -> None:
    """A loaded variance is a finite number >= 0 (or, where the fit writes NaN for "not estimated",
    ``unknown=True``, NaN): a negative, infinite or (otherwise) NaN one would give NaN intervals."""
    v = float(value)
    if v != v and unknown:
        return
    if not (v >= 0 and v != float("inf")):
        raise ValueError(f"{what} is {v!r}, not a variance (a finite number >= 0)")
