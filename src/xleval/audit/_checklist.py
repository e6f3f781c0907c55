"""The translation-cue identifiability reporting checklist (the third contribution of "Translation
tax is not a scalar", arXiv:2605.07093): a markdown page generated from an :class:`AuditResult`
that a paper can attach. Checked boxes are items
the analysis reports; unchecked boxes are items it could not report, with the reason."""
from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xleval.audit._audit import AuditResult
    from xleval.audit._results import Contrast

__all__ = ["render_checklist"]


def render_checklist(result: AuditResult) -> str:
    parts = [
        "# Translation-tax audit: reporting checklist",
        "",
        "The translation tax (cue-driven inflation of scores on translated items) is not a scalar and is not "
        "identified by any single contrast. Each estimate below is a proxy with its own identification "
        "assumption; report them together.",
        "",
        *_data(result), *_parsing(result), *_scope(result), *_estimates(result), *_subgroups(result),
        *_agreement(result), *_not_identified(result),
    ]
    if result.notes:
        parts += ["## Notes", "", *[f"- {_note(n)}" for n in result.notes], ""]
    return "\n".join(parts).rstrip() + "\n"


# markdown would act on these in a name: | ends a table cell, <...> is raw HTML, *_[]` are emphasis, links, code
_MARKDOWN = re.compile(r"([\\`*_\[\]|<>&])")


def _md(name: object) -> str:
    """A name from the data as markdown text that shows it as it is: one line (control characters as escapes, as
    on the terminal) with markdown's own characters backslash-escaped."""
    from xleval._base.terminal import visible_controls

    return _MARKDOWN.sub(r"\\\1", visible_controls(str(name), name=True))


def _note(text: str) -> str:
    """A note (which quotes names) as one markdown line: control characters as escapes, no raw HTML."""
    from xleval._base.terminal import visible_controls

    return re.sub(r"([<>&\\])", r"\\\1", visible_controls(text))


def _box(done: bool, text: str) -> str:
    return f"- [{'x' if done else ' '}] {text}"


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _data(r: AuditResult) -> list[str]:
    per = ", ".join(f"{c}: {n}" for c, n in r.items_per_condition.items())
    return ["## Data and sample sizes", "",
            _box(True, f"{r.n_rows} rows, {r.n_items} items, {len(r.models)} model(s) "
                       f"({', '.join(map(_md, r.models))})"),
            _box(True, f"items per condition: {per}"),
            _box(True, f"{r.items_single_condition} non-native item(s) appear in one condition only (excluded from "
                       "paired estimators; per-model counts in the 'unpaired' column)"), ""]


def _parsing(r: AuditResult) -> list[str]:
    lines = ["## Answer parsing", "", _box(True, f"parser rule: {r.parser}"),
             _box(True, f"parser validity per model x condition (threshold {r.validity_threshold:g}):"), "",
             "| model | condition | n | valid | rate | flagged |", "|---|---|---:|---:|---:|---|"]
    lines += [f"| {_md(v.model)} | {v.condition} | {v.n} | {v.n_valid} | {v.rate:.3f} | {'yes' if v.flagged else ''} |"
              for v in r.validity]
    flagged = ", ".join(map(_md, r.flagged_models)) or "none"
    lines += ["", _box(True, f"models below the validity threshold: {flagged}")]
    if r.models_without_valid_parses:
        lines.append(_box(True, "models with no valid parse at all: "
                               + ", ".join(map(_md, r.models_without_valid_parses))))
    other = "excluded" if r.invalid_policy == "wrong" else "counted as wrong"
    lines.append(_box(bool(r.sensitivity), f"sensitivity: main estimates count invalid parses as "
                      f"{'wrong' if r.invalid_policy == 'wrong' else 'excluded'}; pooled estimates with invalid "
                      f"parses {other}:"))
    pooled = [c for c in r.sensitivity if c.model == "pooled"]
    if pooled:
        lines += ["", *_table(pooled)]
    return lines + [""]


def _scope(r: AuditResult) -> list[str]:
    lines = ["## Estimator scope and identification assumptions", ""]
    for key, spec in r.estimators.items():
        kind = "paired (same items)" if spec["paired"] else "unpaired (different items)"
        lines.append(_box(True, f"**{key} {spec['name']}**: acc({spec['condition_a']}) - acc({spec['condition_b']}), "
                                f"{kind}. Assumes {spec['assumption']}."))
        lines += [f"    - failure mode: {f}" for f in spec["failure_modes"]]
        lines.append(f"    - not identified: {spec['not_identified']}")
    return lines + [""]


def _table(contrasts: list[Contrast]) -> list[str]:
    level = contrasts[0].level if contrasts else 0.95
    rows = ["| estimator | model | acc a | acc b | delta | " f"{level:.0%} CI | p | test | n a / n b | unpaired |",
            "|---|---|---:|---:|---:|---|---:|---|---|---:|"]
    for c in contrasts:
        rows.append(f"| {c.estimator} | {_md(c.model)} | {_num(c.acc_a)} | {_num(c.acc_b)} | {c.estimate:+.3f} | "
                    f"[{_num(c.ci_low)}, {_num(c.ci_high)}] | {_num(c.p_value, 4)} | {c.test} | {c.n_a} / {c.n_b} | "
                    f"{c.n_unpaired} |")
    return rows


def _estimates(r: AuditResult) -> list[str]:
    lines = ["## Estimates with sample sizes and confidence intervals", ""]
    if not r.contrasts:
        return lines + [_box(False, "no estimator could be run (see notes)"), ""]
    method = r.contrasts[0].ci_method
    lines.append(_box(True, f"per model and pooled (items weighted equally, models averaged within item); "
                            f"invalid parses counted as {r.invalid_policy}; CIs: {method}, {r.n_resamples} resamples, "
                            f"random_state={r.random_state}"))
    return lines + ["", *_table(list(r.contrasts)), ""]


def _subgroups(r: AuditResult) -> list[str]:
    lines = ["## Subgroup contrasts", ""]
    d = r.dose_response
    if d is None:
        lines.append(_box(False, "dose-response by translation residual: not run (see notes)"))
    else:
        lines.append(_box(True, f"dose-response ({d.estimator}, {d.split} at residual {d.threshold:g}): "
                                f"delta_high = {d.high.estimate:+.3f} (n={d.high.n_items}), "
                                f"delta_low = {d.low.estimate:+.3f} (n={d.low.n_items}), high - low = "
                                f"{d.contrast:+.3f} [{_num(d.ci_low)}, {_num(d.ci_high)}], interaction p = "
                                f"{_num(d.p_value, 4)} ({d.test})"))
    f = r.family_interaction
    if f is None or not f.tested:
        why = "; ".join(map(_note, f.notes)) if f is not None else "no paired estimator"
        lines.append(_box(False, f"model-family interaction: not tested ({why})"))
    else:
        eff = ", ".join(f"{_md(k)}: {v:+.3f}" for k, v in f.effects.items())
        lines.append(_box(True, f"{f.grouping} interaction ({f.estimator}): {eff}; Wald chi2 = {f.statistic:.2f}, "
                                f"df = {f.df}, p = {_num(f.p_value, 4)} ({f.test}; {'; '.join(map(_note, f.notes))})"))
    return lines + [""]


def _agreement(r: AuditResult) -> list[str]:
    lines = ["## E2 annotation calibration", ""]
    if not r.agreement:
        return lines + [_box(False, "no Likert ratings given: inter-rater agreement (weighted kappa, "
                                    "Krippendorff's alpha) not reported"), ""]
    for a in r.agreement:
        kappas = ", ".join(f"{_md(p.rater_a)}/{_md(p.rater_b)}: {p.kappa:.3f}" for p in a.pairs) or "n/a"
        lines.append(_box(True, f"{_md(a.dimension)}: {a.n_items} items, {a.n_raters} rater(s); weighted kappa "
                                f"({a.pairs[0].weights if a.pairs else 'quadratic'}) {kappas}; alpha ordinal "
                                f"{_num(a.alpha_ordinal)} [{_num(a.alpha_ci_low)}, {_num(a.alpha_ci_high)}], interval "
                                f"{_num(a.alpha_interval)}; target kappa > {a.kappa_target:g} "
                                f"{'met' if a.meets_target else 'not met'}"))
    for dim, corr in r.rating_signal.items():
        lines.append(_box(True, f"{_md(dim)} rating vs item-level E1 signal: Spearman {corr.estimate:+.3f} "
                                f"[{_num(corr.ci_low)}, {_num(corr.ci_high)}], p = {_num(corr.p_value, 4)}, "
                                f"n = {corr.n}"))
    return lines + [""]


def _not_identified(r: AuditResult) -> list[str]:
    lines = ["## What is not identified", "",
             _box(True, "the latent translation tax TT = score(translated) - score(natural) is not observable; "
                        "every estimate above is a proxy under its stated assumption"),
             _box(True, "translation-cue effects are not separated from semantic translation errors except under E4's "
                        "assumption that naturalization fixes content")]
    lines += [_box(True, f"{k}: {spec['not_identified']}") for k, spec in r.estimators.items()]
    missing = sorted({"E1", "E3", "E4"} - set(r.estimators))
    if missing:
        lines.append(_box(False, f"estimators not run for lack of conditions: {', '.join(missing)}"))
    return lines + [""]
