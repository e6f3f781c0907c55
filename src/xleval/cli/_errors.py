"""Library errors in the command line's words: a message names Python arguments (``score=``,
``overwrite=True``, ``on_unseen="raw"``, ``columns={'bleu': 'score'}``); the command that ran knows
which of its flags sets each one, so the line the user reads names the flag (``--score``,
``--overwrite``, ``--on-unseen raw``, ``--col score=bleu``)."""
from __future__ import annotations

import re
from collections.abc import Sequence

import click

from .._base.terminal import shell_word
from ..exceptions import XlevalError

__all__ = ["cli_message", "cli_words"]

#: library argument -> the parameter of a command that sets it under another name (used only where
#: the command has no parameter of the library's name): ``columns={'FILE': 'CANONICAL'}`` is ``--col``,
#: the intrinsic commands' ``--model`` is ``model_name``, ``--interval`` is the calibrators' level.
ALIASES = {
    "columns": "col",
    "model": "model_name",
    "level": "interval",
    "confidence": "interval",
    "conditions": "where",
    "human_higher_is_better": "human_up",
    "char_order": "chrf_char_order",
    "word_order": "chrf_word_order",
    "variant": "metricx_variant",
    "tokenizer_path": "metricx_tokenizer",
    "cache": "score_cache",
    "n_folds": "folds",
    "n_repeats": "repeats",
    "invalid_policy": "invalid",
}

_ROLES = {"score", "scores", "by", "human", "system", "segment", "document", "columns"}
#: arguments that name a column of the data (``item``: the segment column of an agreement average)
_COLUMN_ARGUMENTS = _ROLES | {"item"}
# a value the way a message quotes it: True/False, a quoted word, or a one-pair column mapping
# (a quoted word may hold Python's escapes, as repr() writes a name with a control character: 'met\x1bric')
_QUOTED = r"""(?:[^'\\\n]|\\.)*"""
_DOUBLE_QUOTED = r"""(?:[^"\\\n]|\\.)*"""
_NUMBER = r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
#: a value as Python writes it: True/False, a quoted text, a one-entry mapping (--col), a pair of numbers (LOW,HIGH)
_VALUE = (rf"""(True|False)\b|'({_QUOTED})'|"({_DOUBLE_QUOTED})"|\{{'({_QUOTED})': '({_QUOTED})'\}}"""
          rf"|\(({_NUMBER}), ({_NUMBER})\)")


def cli_message(exc: XlevalError, command: click.Command | None, args: Sequence[str] = ()) -> str:
    """``exc``'s message with each ``name=`` that is a parameter of ``command`` written as its flag
    (``by=`` -> ``--by``); an error about a missing column also names ``--col`` where the command has it,
    and the flag of ``args`` (the command line) that named the column (``--score bleu``)."""
    message = _score_first(exc, cli_words(str(exc), command))
    if command is None:
        return message
    argument, value, options = getattr(exc, "argument", None), getattr(exc, "value", None), _options(command)
    if argument in _ROLES and "col" in options and "no column" in message:
        message += "; or map yours with --col NAME=YOUR_COLUMN"
    if argument in _COLUMN_ARGUMENTS and argument not in options and "col" in options and isinstance(value, str):
        # a column the command has no flag for is reached by mapping the file's column onto its name
        mapping = f"--col {shell_word(value + '=YOUR_COLUMN')}"
        message = re.sub(rf"(?<![\w.=\-'\"]){argument}=(?=[\s;,).]|$)", lambda _: mapping, message)
    if argument == "columns" and isinstance(value, str) and _EXISTING in message:
        named = _named_by(value, command, args)
        if named:
            message = message.replace(_EXISTING, f"{_EXISTING} with {'/'.join(named)}", 1)
    return message


def _score_first(exc: XlevalError, message: str) -> str:
    """A metric's score asked of a table of texts that was never scored: say to score it first, as the
    command to run on that file. The readers raise the missing column (``exc.value``) with the table's
    columns (``exc.columns``) and know no metric; the registry is asked here, at the command line's edge."""
    from ..metrics._registry import METRICS  # names only; no metric is imported

    missing, columns = getattr(exc, "value", None), getattr(exc, "columns", None)
    if (not isinstance(missing, str) or not columns or "hypothesis" not in columns or missing in columns
            or "did you mean" in message):  # a column of another spelling is the likelier cause
        return message
    kind = missing.partition(":")[0].casefold()
    if kind not in METRICS and kind != "score":
        return message
    kind = "chrf" if kind == "score" else kind
    path, found, _ = message.partition(": missing required column")
    command = f"xleval score {shell_word(path) if found else 'INPUT'} --metric {shell_word(kind)} -o scored.tsv"
    hint = f"the table has hypotheses but no {missing!r} scores: score it first: `{command}`"
    if f"; {_EXISTING}" in message:  # a cause is an option before the library's fix
        return message.replace(f"; {_EXISTING}", f"; {hint}; or {_EXISTING}", 1)
    return f"{message}; {hint}"


# how the library's fix for a missing required column begins; the CLI adds the flag that named the column
_EXISTING = "name an existing column"


def _named_by(column: str, command: click.Command, args: Sequence[str]) -> list[str]:
    """The long flags of ``command`` that ``args`` gave ``column`` as (part of) their value:
    ``--score bleu``, ``--by=lp,domain``; never ``--col``, whose values are mappings."""
    by_spelling = {o: p for p in command.params if isinstance(p, click.Option) and p.name != "col" for o in p.opts}
    found: list[str] = []
    for i, arg in enumerate(args):
        spelling, eq, value = arg.partition("=")
        option = by_spelling.get(spelling) if arg.startswith("-") else None
        if option is None or option.is_flag:
            continue
        if not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        flag = _long(option) or spelling
        if column in (v.strip() for v in value.split(",")) and flag not in found:
            found.append(flag)
    return found


def cli_words(text: str, command: click.Command | None) -> str:
    """``text`` with each ``name=VALUE`` whose ``name`` a parameter of ``command`` sets written as that
    option is typed: ``name=`` -> ``--name``, ``flag=True`` -> ``--flag`` (``False``: its off-switch),
    ``name='raw'`` -> ``--name raw``, ``columns={'bleu': 'score'}`` -> ``--col score=bleu``. One pass,
    so a rewritten part is never rewritten again; text inside quotes is left as it is."""
    if command is None or "=" not in text:
        return text
    options = _options(command)
    if not options:
        return text
    names = "|".join(sorted(map(re.escape, options), key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.=\-'\"])({names})=(?:{_VALUE})?")

    def typed(m: re.Match) -> str:
        option = options[m.group(1)]
        flag = _long(option)
        truth, single, double, file_col, canonical, low, high = m.group(2, 3, 4, 5, 6, 7, 8)
        if truth is not None:
            if option.is_flag:
                off = [o for o in option.secondary_opts if o.startswith("--")]
                return flag if truth == "True" else off[0] if off else f"without {flag}"
            return f"{flag} {truth.lower()}"
        if single is not None or double is not None:
            word = _unescaped(single, "'") if single is not None else _unescaped(double, '"')
            return f"{flag} {shell_word(word)}"
        if canonical is not None:
            return f"{flag} {shell_word(_unescaped(canonical) + '=' + _unescaped(file_col))}"
        if low is not None:  # a range option reads LOW,HIGH
            return f"{flag} {low},{high}"
        rest = text[m.end():m.end() + 1]
        return flag if rest == "" or rest in " \t\n;,)." or option.is_flag else flag + " "

    out = pattern.sub(typed, text)
    return re.sub(r"(--[\w-]+) \(\1\)", r"\1", out)  # 'pass force=True (--force)' would say it twice


def _unescaped(quoted: str, quote: str = "'") -> str:
    """The text of a word Python quoted with ``quote`` (repr() takes " for a name holding '), its escapes read
    (``met\\x1bric`` -> the name with its ESC); as it is where it is no Python literal."""
    if "\\" not in quoted:
        return quoted
    import ast

    try:
        value = ast.literal_eval(f"{quote}{quoted}{quote}")
    except (SyntaxError, ValueError):
        return quoted
    return value if isinstance(value, str) else quoted


def _options(command: click.Command) -> dict[str, click.Option]:
    """Parameter name -> its option, for the command's options with a long flag; an :data:`ALIASES`
    name stands for its option where the command has no parameter of that name."""
    out = {p.name: p for p in command.params if isinstance(p, click.Option) and p.name and _long(p)}
    for library, param in ALIASES.items():
        if param in out:
            out.setdefault(library, out[param])
    return out


def _long(option: click.Option) -> str:
    """The option's first ``--`` spelling ('' when it has none)."""
    return next((o for o in option.opts if o.startswith("--")), "")
