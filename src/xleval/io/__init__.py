"""Tables in and out (TSV, CSV, JSONL, Parquet, plain files) and language codes.

Reading (:mod:`._read`), shape and record checks (:mod:`._shape`), the column-type policy
(:mod:`._schema`), the inputs of the running command (:mod:`._inputs`) and the one writer with the
output guard (:mod:`._write`).
"""
from ._formats import FORMATS, SIDECAR_SUFFIX, table_format
from ._inputs import command_scope, record_input, require_file
from ._select import select_rows
from ._read import (parse_column_mapping, read_lines, read_plain_files, read_table, read_table_metadata,
                    to_numeric_column)
from ._shape import check_text_file_shape, iter_json_objects
from ._write import atomic_path, check_output_path, write_table, write_text
from ._mtme import read_mtme, read_mtme_system_scores
from ._wmt import read_wmt_folder
from .langs import add_language_columns, family_of, normalize_code, normalize_codes, script_of, split_lp

__all__ = [
    "FORMATS",
    "SIDECAR_SUFFIX",
    "atomic_path",
    "check_output_path",
    "check_text_file_shape",
    "command_scope",
    "iter_json_objects",
    "parse_column_mapping",
    "read_lines",
    "read_plain_files",
    "read_table",
    "read_table_metadata",
    "record_input",
    "select_rows",
    "require_file",
    "table_format",
    "to_numeric_column",
    "write_table",
    "write_text",
    "read_wmt_folder",
    "read_mtme",
    "read_mtme_system_scores",
    "add_language_columns",
    "family_of",
    "normalize_code",
    "normalize_codes",
    "script_of",
    "split_lp",
]
