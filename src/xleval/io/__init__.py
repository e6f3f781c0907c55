"""Tables in and out (TSV, CSV, JSONL, Parquet, plain files; each optionally .gz) and language codes.

Reading (:mod:`._read`; Parquet as Arrow tables in :mod:`._parquet`; ``.gz`` and standard input in
:mod:`._compressed`), shape and record checks (:mod:`._shape`), the TSV quoting rule (:mod:`._quoting`),
the column-type policy (:mod:`._schema`), the inputs of the running command (:mod:`._inputs`), the one
writer with the output guard (:mod:`._write`), and readers of published layouts (:mod:`._wmt`, WMT's DA
files :mod:`._wmt_da`, :mod:`._mtme`).

Names are imported on first use (PEP 562): ``from xleval.io import check_output_path`` loads the
writer, not pandas; scoring a Parquet file into a Parquet file never imports pandas at all.
"""
from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "FORMATS": "._formats", "SIDECAR_SUFFIX": "._formats", "table_format": "._formats",
    "command_scope": "._inputs", "record_input": "._inputs", "require_file": "._inputs",
    "select_rows": "._select",
    "read_lines": "._read", "read_plain_files": "._read", "read_table": "._read", "read_table_metadata": "._read",
    "to_numeric_column": "._read",
    "read_arrow_table": "._parquet",
    "parse_column_mapping": "._shape", "check_text_file_shape": "._shape", "iter_json_objects": "._shape",
    "atomic_path": "._write", "check_output_path": "._write", "write_table": "._write", "write_text": "._write",
    "read_wmt_folder": "._wmt", "wmt_xml_documents": "._wmt_da", "da_sid_lines": "._wmt_da",
    "read_wmt_da": "._wmt_da", "attach_wmt_da": "._wmt_da", "find_wmt_xml": "._wmt_da",
    "read_mtme": "._mtme", "read_mtme_system_scores": "._mtme",
    "LMEvalSamples": "._lmeval", "read_lm_eval_samples": "._lmeval",
    "add_language_columns": ".langs", "family_of": ".langs", "normalize_code": ".langs", "normalize_codes": ".langs",
    "script_of": ".langs", "split_lp": ".langs", "with_pair_column": ".langs",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # once: later lookups do not come here
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
