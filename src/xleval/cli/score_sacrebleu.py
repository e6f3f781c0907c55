"""``xleval score`` on plain-text files, as the ``sacrebleu`` command: its reading of the files
(right-stripped lines, ``-nr`` tab-separated references, the first system the baseline of a paired
test), its refusals, and its output byte for byte (``-f json|text|latex``, ``-b``, ``-sl``,
``--confidence``, several systems as a tabulated table), with xleval's signature (sacrebleu's fields,
then ``xleval:<version>``)."""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

from ..exceptions import InputError

#: sacrebleu's ``-f`` choices; ``SACREBLEU_FORMAT`` overrides ``-f`` as in sacrebleu
FORMATS = ("json", "text", "latex")


def output_format(fmt: str | None) -> str:
    """sacrebleu's format: ``SACREBLEU_FORMAT`` when it names a format (it wins over ``-f``, as in
    sacrebleu), else ``-f``, else JSON."""
    env = os.environ.get("SACREBLEU_FORMAT", "").lower()
    if env in FORMATS:
        return env
    return fmt or "json"


@dataclass(frozen=True)
class Request:
    """What the command line asked for, in sacrebleu's terms."""

    hyps: Sequence[str]  # empty: the systems come from standard input, one tab-separated column each
    refs: Sequence[str]
    specs: Sequence[str]
    options: dict[str, dict[str, Any]]
    lp: str | None = None
    src: str | None = None
    num_refs: int = 1
    sentence_level: bool = False
    confidence: bool = False
    confidence_n: int = 1000
    test: str | None = None
    test_n: int = 1000
    seed: Any = 12345
    score_only: bool = False
    width: int = 1
    fmt: str = "json"
    short: bool = False


def run(req: Request) -> list[tuple[str, list[str]]]:
    """Read, check and score as ``sacrebleu REF... -i HYP...`` does, print its output, and return the
    systems read (name, lines) for ``-o``."""
    if req.sentence_level and len(req.specs) > 1:
        raise InputError("only one metric can be used in sentence-level mode (-sl)")
    if req.num_refs < 1:
        raise InputError(f"--num-refs must be 1 or more, got {req.num_refs}")
    if req.num_refs != 1 and len(req.refs) > 1:
        raise InputError("--num-refs reads several tab-separated references from ONE file; give one reference file")
    streams = _references(req.refs, req.num_refs)
    named = _systems(req.hyps, paired=req.test is not None) if req.hyps else _stdin_systems()
    if req.sentence_level:
        if len(named) > 1:
            raise InputError("only one system can be evaluated in sentence-level mode (-sl)")
        if req.confidence or req.test:
            raise InputError("statistical tests (--confidence, --paired-bs, --paired-ar) are unavailable with -sl")
    if req.test and len(named) == 1:
        raise InputError("paired tests need two or more systems: -i BASELINE.txt SYSTEM.txt [...]")
    if req.confidence and len(named) > 1:
        raise InputError("--confidence is for one system; for several use a paired test (--paired-bs)")
    counts = {path: len(s) for path, s in zip(req.refs, streams, strict=False)}
    counts.update((name, len(lines)) for name, lines in named)
    if len(set(counts.values())) > 1:
        detail = ", ".join(f"{path}: {n}" for path, n in counts.items())
        raise InputError(f"the system and reference files have different line counts ({detail}); they must be "
                         "line-aligned, one segment per line")
    if not any(counts.values()):  # the library's "hypotheses is empty" names a Python argument, not the files
        raise InputError(f"nothing to score: the system and reference files are empty ({', '.join(counts)}); give "
                         "files with one segment per line")
    sources = None
    if req.src is not None:
        from ..io import read_lines

        sources = [line.rstrip() for line in read_lines(req.src)]
        if len(sources) != len(streams[0]):
            raise InputError(f"--src {req.src}: {len(sources)} lines, the references {len(streams[0])}")
    metrics = _metrics(req, streams)
    if req.sentence_level:
        _sentences(req, metrics[0], named[0][1], streams, sources)
    elif len(named) == 1:
        _single(req, metrics, named[0][1], streams, sources)
    else:
        _several(req, metrics, named, streams, sources)
    return named


def references(req: Request) -> list[list[str]]:
    """The reference streams of ``req`` (``-nr`` splits one file's lines on tabs)."""
    return _references(req.refs, req.num_refs)


def _lines(path: str) -> list[str]:
    from ..io import read_lines

    return [line.rstrip() for line in read_lines(path)]  # sacrebleu right-strips every line


def _references(paths: Sequence[str], num_refs: int) -> list[list[str]]:
    if num_refs == 1:
        return [_lines(p) for p in paths]
    streams: list[list[str]] = [[] for _ in range(num_refs)]
    for lineno, line in enumerate(_lines(paths[0]), 1):
        fields = line.split("\t", num_refs - 1)
        if len(fields) != num_refs:
            raise InputError(f"{paths[0]} line {lineno}: expected {num_refs} tab-separated references (--num-refs), "
                             f"found {len(fields)}")
        for stream, field in zip(streams, fields, strict=True):
            stream.append(field)
    return streams


def _systems(paths: Sequence[str], paired: bool) -> list[tuple[str, list[str]]]:
    named: list[tuple[str, list[str]]] = []
    if list(paths).count("-") > 1:
        raise InputError("standard input ('-') can be read once; give the other files by name")
    for path in paths:
        if any(path == name for name, _ in named):
            if paired and path == named[0][0]:
                continue  # sacrebleu: the baseline given again among the systems is skipped
            raise InputError(f"{path!r} is given twice; each system needs its own file")
        named.append((path, _lines(path)))
    return named


def _stdin_systems() -> list[tuple[str, list[str]]]:
    """sacrebleu without -i: standard input holds the systems as tab-separated columns."""
    import sys

    hint = ("give the system output on standard input (REF.txt < HYP.txt) or with -i HYP.txt, as sacrebleu; "
            "a table needs a table suffix (.tsv, .csv, .jsonl, .parquet)")
    if sys.stdin is None or sys.stdin.isatty():  # nothing piped in: say so rather than wait for typing
        raise InputError(f"no system output: {hint}")
    lines = _lines("-")
    if not lines:
        raise InputError(f"no system output: standard input is empty; {hint}")
    n = len(lines[0].split("\t"))
    columns: list[list[str]] = [[] for _ in range(n)]
    for lineno, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) != n:
            raise InputError(f"standard input line {lineno}: {len(fields)} tab-separated systems, line 1 has {n}; "
                             "every line needs one field per system")
        for column, field in zip(columns, fields, strict=True):
            column.append(field.rstrip())
    return [(f"System {i + 1}", column) for i, column in enumerate(columns)]


@dataclass(frozen=True)
class _Built:
    spec: str
    metric: Any  # an xleval Metric

    @property
    def sacrebleu(self) -> bool:
        from ..metrics._sacrebleu_base import SacrebleuMetric

        return isinstance(self.metric, SacrebleuMetric)


def _metrics(req: Request, streams) -> list[_Built]:
    from ..metrics import get_metric
    from ..metrics._base import count_refs

    tgt = None
    if req.lp is not None:
        from ..io import split_lp

        try:
            tgt = split_lp(req.lp)[1]
        except InputError as exc:
            raise InputError(f"-l/--lp: {exc}") from None
    built = []
    for spec in req.specs:
        opts = dict(req.options.get(spec, {}))
        kind = spec.split(":")[0].lower()
        if kind in ("bleu", "chrf", "chrf++", "ter"):
            opts.setdefault("nrefs", count_refs(streams))
        if kind == "bleu" and "tokenize" not in opts:
            opts.update(tokenize=None, tgt_lang=None if tgt is None else str(tgt))
        level = "sentence" if req.sentence_level else "corpus"
        built.append(_Built(spec, get_metric(spec, level=level, **opts)))
    # sacrebleu prints its metrics in the sorted order of their upper-case names
    return sorted(built, key=lambda b: b.spec.split(":")[0].upper())


def _signature(b: _Built, short: bool, extra: dict[str, Any] | None = None) -> str:
    """The metric's signature with sacrebleu's ``bs``/``ar``/``seed`` after ``nrefs``, long or short."""
    from ..metrics._sacrebleu_base import Signature

    sig = b.metric.get_signature() if b.sacrebleu else Signature(b.metric.signature, {})
    if extra:
        head, sep, rest = str(sig).partition("|")
        sig = Signature(f"{head}|{'|'.join(f'{k}:{v}' for k, v in extra.items())}{sep}{rest}", sig._abbr)
    return sig.format(short=short)


def _score(b: _Built, hyps, streams, sources):
    """sacrebleu's Score for BLEU/chrF/TER; a name-and-number stand-in for the other metrics."""
    if b.sacrebleu:
        return b.metric.corpus_score(hyps, streams, sources)
    from ..metrics._sacrebleu_base import Score

    return Score(name=b.spec.split(":")[0], score=float(b.metric.corpus_score(hyps, streams, sources)),
                 signature=b.metric.signature, stats=())


def _sentences(req: Request, b: _Built, hyps, streams, sources) -> None:
    sig = _signature(b, req.short)
    if b.sacrebleu:
        stats = b.metric.sentence_stats(hyps, streams, sources)
        scores = [b.metric.stats_score(row) for row in stats]
    else:
        scores = [_score(b, [h], [[s[i]] for s in streams], None if sources is None else [sources[i]])
                  for i, h in enumerate(hyps)]
    click.echo("\n".join(s.format(req.width, req.score_only, sig) for s in scores))


def _single(req: Request, metrics: list[_Built], hyps, streams, sources) -> None:
    lines = []
    is_json = req.fmt == "json"
    for b in metrics:
        confidence, extra = None, None
        # sacrebleu bootstraps only for -cin 2 or more; -ci -cin 1 (or 0, or negative) prints the plain score
        if req.confidence and req.confidence_n > 1:
            if not b.sacrebleu:
                raise InputError(f"--confidence needs summable statistics; {b.spec} has none (use bleu, chrf, ter)")
            from .._base.seeding import resolve_seed

            stats = b.metric.sentence_stats(hyps, streams, sources)
            score = b.metric.stats_score(stats.sum(axis=0))
            seed = resolve_seed(req.seed)  # 'none': a fresh one, printed in the signature
            confidence = b.metric.bootstrap_estimate(stats, req.confidence_n, seed)  # sacrebleu's, to the last digit
            extra = {"bs": req.confidence_n, "seed": seed}
        else:
            score = _score(b, hyps, streams, sources)
        sig = _signature(b, req.short and not is_json, extra)
        lines.append(score.format(req.width, req.score_only, sig, is_json, confidence=confidence))
    _print_single(lines, is_json)


def _print_single(lines: list[str], is_json: bool) -> None:
    """sacrebleu's ``print_single_results``: a JSON list, or the lines aligned on their ``=``."""
    if is_json:
        click.echo("[\n" + ",\n".join(lines) + "\n]" if len(lines) > 1 else lines[0])
        return
    if len(lines) == 1:
        click.echo(lines[0])
        return
    widths = []
    for line in lines:
        if "=" in line:
            widths.append(line.index("=") - 1)
        else:  # score only: printed as it is
            click.echo(line)
    if widths:
        w = max(widths)
        for n, line in zip(widths, lines, strict=False):
            click.echo(f"{line[:n]:>{w}}{line[n:]}")


def _several(req: Request, metrics: list[_Built], named, streams, sources) -> None:
    columns: dict[str, list[Any]] = {"System": [name for name, _ in named]}
    signatures: dict[str, str] = {}
    if req.test is None:
        for b in metrics:
            scores = [_score(b, hyps, streams, sources) for _, hyps in named]
            columns[scores[0].name] = [s.format(req.width, True) for s in scores]
            signatures[scores[0].name] = _signature(b, req.short)
    else:
        from ..metrics import compare_systems
        from ._common import warnings_said

        if req.hyps:
            columns["System"][0] = f"Baseline: {columns['System'][0]}"
        else:  # sacrebleu's names for systems read from standard input
            columns["System"] = ["Baseline"] + [f"System {i + 1}" for i in range(len(named) - 1)]
        with warnings_said():  # each said once, not once per metric
            for b in metrics:
                if not b.sacrebleu:
                    raise InputError(f"paired tests need summable statistics; {b.spec} has none (use bleu, chrf, ter)")
                res = compare_systems(named, streams, [b.metric], test=req.test, n_resamples=req.test_n,
                                      random_state=req.seed, sources=sources)
                name = b.metric.stats_score(b.metric.sentence_stats(named[0][1][:1], [s[:1] for s in streams],
                                                                    None if sources is None else sources[:1])
                                            .sum(axis=0)).name
                column = res.metrics[0]
                columns[name] = [res.results[column][system] for system, _ in named]
                seed = "none" if res.random_state is None else res.random_state
                signatures[name] = _signature(b, req.short, {req.test: req.test_n, "seed": seed})
    _print_table(columns, signatures, req)


def _print_table(columns: dict[str, list[Any]], signatures: dict[str, str], req: Request) -> None:
    """sacrebleu's ``print_results_table``: JSON, or a ``fancy_grid``/``latex_booktabs`` table, then
    the paired test's explanation and the signatures."""
    if req.fmt == "json":
        rows = []
        for i, system in enumerate(columns["System"]):
            row: dict[str, Any] = {"system": system}
            for name, values in list(columns.items())[1:]:
                value = values[i]
                row[name] = value if isinstance(value, str) else {
                    "score": value.score, "p_value": value.p_value, "mean": value.mean, "ci": value.ci}
            rows.append(row)
        click.echo(json.dumps(rows, indent=4))
        return
    from tabulate import tabulate  # type: ignore[import-untyped]  # sacrebleu's table printer (its dependency)

    from .._base.terminal import visible_controls

    grid = req.fmt == "text"
    # file names are data: control characters (ANSI escapes, newlines, bidi overrides) shown as escapes
    shown = {**columns, "System": [visible_controls(name) for name in columns["System"]]}
    cells = _format_cells(shown, req.width, multiline=grid)
    click.echo(tabulate(cells, headers="keys", tablefmt="fancy_grid" if grid else "latex_booktabs",
                        colalign=("right",), stralign="center", numalign="center", floatfmt=f".{req.width}f"))
    click.echo()
    if req.test is not None:
        # sacrebleu names the baseline here only when its name has the 'Baseline:' prefix (-i files)
        _explain_test(req, shown["System"][0] if shown["System"][0].startswith("Baseline:") else "")
    click.echo("-----------------\nMetric signatures\n-----------------")
    for name, sig in signatures.items():
        click.echo(f" - {name:<10} {sig}")


def _format_cells(columns: dict[str, list[Any]], width: int, multiline: bool) -> dict[str, list[str]]:
    """sacrebleu's ``_format_score_lines``: ``score (mean ± ci)`` and ``(p = 0.0123)*`` cells; the
    headers gain `` (μ ± 95% CI)`` once a bootstrap mean is shown."""
    out: dict[str, list[str]] = {"System": columns["System"]}
    brk = "\n" if multiline else " "
    bootstrap = False
    for name, values in list(columns.items())[1:]:
        cells = []
        for r in values:
            if isinstance(r, str):
                cells.append(r)
                continue
            text = f"{r.score:.{width}f}"
            if r.mean is not None:
                bootstrap = True
                text += f" ({r.mean:.{width}f} ± {r.ci:.{width}f})"
            if r.p_value is not None:
                text += f"{brk}(p = {r.p_value:.4f})" + ("" if r.p_value > 0.05 else "*")
            cells.append(text)
        out[f"{name} (μ ± 95% CI)" if bootstrap else name] = cells
    return out


def _explain_test(req: Request, baseline: str) -> None:
    bs = req.test == "bs"
    kind = "bootstrap resampling" if bs else "approximate randomization"
    msg = f"Paired {kind} test with {req.test_n} {'resampling trials' if bs else 'trials'}"
    click.echo("-" * len(msg) + "\n" + msg + "\n" + "-" * len(msg))
    click.echo(f""" - Each system is pairwise compared to {baseline}.
   {'Actual system score / bootstrap estimated true mean / 95% CI are provided for each metric.' if bs
    else 'Actual system score is provided for each metric.'}

 - Null hypothesis: the system and the baseline translations are essentially
   generated by the same underlying process. For a given system and the baseline,
   the p-value is roughly the probability of the absolute score difference (delta)
   or higher occurring due to chance, under the assumption that the null hypothesis is correct.

 - Assuming a significance threshold of 0.05, the null hypothesis can be rejected
   for p-values < 0.05 (marked with "*"). This means that the delta is unlikely to be attributed
   to chance, hence the system is significantly "different" than the baseline.
   Otherwise, the p-values are highlighted in red.

 - NOTE: Significance does not tell whether a system is "better" than the baseline but rather
   emphasizes the "difference" of the systems in terms of the replicability of the delta.
""")
