"""Tables in and out (TSV, CSV, JSONL, Parquet, plain files) and language codes."""
from ._tables import (
    FORMATS,
    atomic_path,
    check_output_path,
    check_text_file_shape,
    iter_json_objects,
    parse_column_mapping,
    read_plain_files,
    read_table,
    read_table_metadata,
    table_format,
    to_numeric_column,
    write_table,
)
from ._select import select_rows
from .langs import add_language_columns, family_of, normalize_code, normalize_codes, script_of, split_lp

__all__ = [
    "FORMATS",
    "atomic_path",
    "check_output_path",
    "check_text_file_shape",
    "iter_json_objects",
    "parse_column_mapping",
    "read_plain_files",
    "read_table",
    "read_table_metadata",
    "select_rows",
    "table_format",
    "to_numeric_column",
    "write_table",
    "add_language_columns",
    "family_of",
    "normalize_code",
    "normalize_codes",
    "script_of",
    "split_lp",
]
