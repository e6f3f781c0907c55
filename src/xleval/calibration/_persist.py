"""Saved calibrators: versioned JSON with a SHA-256 checksum, written atomically, verified on load.

Both LGN and AnchoredCalibrator persist through these two functions, so a file of one kind,
of another format version, edited, or truncated is refused with the same one-line messages.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..exceptions import ModelFileError

__all__ = ["save_checked", "load_checked", "checksum"]


def checksum(payload: dict) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def save_checked(payload: dict, path: str | os.PathLike) -> None:
    """Write ``payload`` plus its checksum atomically (plain JSON types first, so reload checks equal)."""
    from ..io import atomic_path

    body = json.loads(json.dumps(payload, allow_nan=True))
    body["checksum"] = checksum(body)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(body, indent=1, allow_nan=True) + "\n", encoding="utf-8")


def load_checked(source: str | os.PathLike | dict, fmt: str, version: int, what: str) -> dict:
    """Read and verify a saved payload of format ``fmt`` and ``version``; ``source`` is a path or a dict."""
    name = "calibrator" if isinstance(source, dict) else str(source)
    if isinstance(source, dict):
        payload = source
    else:
        try:
            payload = json.loads(Path(source).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ModelFileError(f"{name}: no such calibrator file; check the path") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ModelFileError(f"{name}: not a calibrator JSON file ({exc}); refit and save it again") from None
        except OSError as exc:  # a directory, no read permission, an I/O error
            raise ModelFileError(f"{name}: cannot read the calibrator file ({exc.strerror or exc}); "
                                 "give the path of a JSON file written by `calibrate fit`") from None
    if not isinstance(payload, dict) or payload.get("format") != fmt:
        raise ModelFileError(f"{name}: not an xleval {what}")
    if payload.get("format_version") != version:
        raise ModelFileError(f"{name}: calibrator format version {payload.get('format_version')!r}, this xleval "
                             f"reads version {version}; refit it with this xleval")
    if "checksum" not in payload:
        raise ModelFileError(f"{name}: no checksum; refit and save it again")
    if checksum({k: v for k, v in payload.items() if k != "checksum"}) != payload["checksum"]:
        raise ModelFileError(f"{name}: checksum mismatch, the file was edited or truncated; refit and save it again")
    return payload
