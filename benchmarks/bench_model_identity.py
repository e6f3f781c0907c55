"""The cost of a neural signature's content identity (``xleval.metrics._model_files.model_identity``).

A model folder of ``--size-mb`` MiB of random "weights" (one file, as a ``model.safetensors``) plus a config
is written to a temporary folder. Printed, measured in this run:

* first identity of the folder (every byte read and hashed, streamed in 1 MiB pieces) against the anchor,
  ``hashlib.file_digest`` (sha256) of the same weight file: the ratio says what the identity adds to hashing
  the bytes once (target <= 1.2x);
* the identity asked again in the same process (an unchanged folder is hashed once: only its listing is
  read) against the first;
* the identity asked by a new run (the in-process memo emptied; the digest comes from the on-disk memo in
  ``$XLEVAL_CACHE_DIR``, set to a temporary folder here) against the first.

Usage: python benchmarks/bench_model_identity.py [--size-mb 512]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from xleval.metrics._model_files import _MEMO, model_identity


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=512)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xleval-identity-") as tmp:
        os.environ["XLEVAL_CACHE_DIR"] = str(Path(tmp) / "cache")
        folder = Path(tmp) / "model"
        folder.mkdir()
        with open(folder / "model.safetensors", "wb") as fh:
            for _ in range(args.size_mb):
                fh.write(os.urandom(1 << 20))
        (folder / "config.json").write_text(json.dumps({"model_type": "xlm-roberta", "hidden_size": 1024}))
        with open(folder / "model.safetensors", "rb") as fh:  # warm the page cache for both readers alike
            while fh.read(1 << 24):
                pass

        def anchor():
            with open(folder / "model.safetensors", "rb") as fh:
                return hashlib.file_digest(fh, "sha256").hexdigest()

        t_anchor, _ = _timed(anchor)
        _MEMO.clear()
        t_first, first = _timed(lambda: model_identity(folder))
        t_again, again = _timed(lambda: model_identity(folder))
        _MEMO.clear()
        t_run, run = _timed(lambda: model_identity(folder))
        assert first == again == run
        print(f"folder: {args.size_mb} MiB of weights + config.json")
        print(f"anchor, hashlib.file_digest sha256 of the weights: {t_anchor:8.3f} s")
        print(f"model_identity, first call:                        {t_first:8.3f} s  "
              f"({t_first / t_anchor:.2f}x the anchor; {args.size_mb / t_first:.0f} MiB/s)")
        print(f"model_identity, again (same process):              {t_again * 1000:8.3f} ms "
              f"({t_first / max(t_again, 1e-9):.0f}x faster than the first)")
        print(f"model_identity, a new run (on-disk memo):          {t_run * 1000:8.3f} ms "
              f"({t_first / max(t_run, 1e-9):.0f}x faster than the first)")


if __name__ == "__main__":
    main()
