"""The flag names, without imports (the command line lists them in ``--help``)."""

#: every flag, in the order tables list them
FLAGS = ("empty", "copy_source", "identical_reference", "extreme_length", "truncated", "off_target")
#: the flags that make a row invalid by default (``exclude_invalid``): outputs that are not translations
INVALID_FLAGS = ("empty", "copy_source", "off_target", "truncated")
