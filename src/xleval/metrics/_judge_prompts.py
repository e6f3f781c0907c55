"""The GEMBA prompt sets an LLM judge runs, how they are rendered into chat messages, and how answers are read.

The texts are transcribed from the GEMBA repository (github.com/MicrosoftTranslator/GEMBA; Kocmi & Federmann
2023, "Large Language Models Are State-of-the-Art Evaluators of Translation Quality" and "GEMBA-MQM: Detecting
Translation Quality Error Spans with GPT-4"; Kocmi et al. 2024, "Error Span Annotation"):

- ``da``: ``gemba/prompt.py`` (commit 0fdcd8d), prompts ``GEMBA-DA`` and, with references, ``GEMBA-DA_ref``: one
  user message, the answer is a number 0-100.
- ``mqm``: ``gemba/gemba_mqm_utils.py`` (commit ea90068), ``TEMPLATE_GEMBA_MQM``: a system message, three worked
  examples (en-de, en-cs, zh-en) and the segment; the answer lists errors under ``Critical:``, ``Major:`` and
  ``Minor:``; the score is minus the weighted count of the first five (critical 25, major 5, minor 1), at most 25.
- ``esa``: ``gemba/gemba_esa.py`` (commit bf1f113), ``TEMPLATE_GEMBA_ESA_ERROR_SPANS`` (stage 1: error spans,
  ``Major:``/``Minor:``) and ``TEMPLATE_GEMBA_ESA_RANKING`` (stage 2: a 0-100 score given the stage-1 answer,
  inserted verbatim, as GEMBA does).

A prompt set is named in a judge's signature with the SHA-256 of its texts (:func:`prompt_hash`), so an edited
template is another metric. Answers are parsed by rules written after GEMBA's (a score answer must hold exactly
one number, or ``N/100``; an error list needs a severity header or ``no-error``); an answer that
does not parse is a missing score with its reason, never a default.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
from dataclasses import dataclass

__all__ = ["PROMPT_SETS", "language_name", "render", "prompt_hash", "parse_score", "parse_errors", "mqm_score",
           "locate_spans", "ParsedError"]

Message = dict[str, str]

# ----------------------------------------------------------------------------------------------- texts
_DA = ('Score the following translation from {source_lang} to {target_lang} on a continuous scale from 0 to 100, '
       'where a score of zero means "no meaning preserved" and score of one hundred means "perfect meaning and '
       'grammar".\n\n{source_lang} source: "{source_seg}"\n{target_lang} translation: "{target_seg}"\nScore: ')
_DA_REF = ('Score the following translation from {source_lang} to {target_lang} with respect to human reference on '
           'a continuous scale 0 to 100 where score of zero means "no meaning preserved" and score of one hundred '
           'means "perfect meaning and grammar".\n\n{source_lang} source: "{source_seg}"\n{target_lang} human '
           'reference: "{reference_seg}"\n{target_lang} machine translation: "{target_seg}"\nScore: ')

_SEGMENT = "{source_lang} source:\n```{source_seg}```\n{target_lang} translation:\n```{target_seg}```\n\n"
_ASK = ("Based on the source segment and machine translation surrounded with triple backticks, identify error types "
        "in the translation and classify them. The categories of errors are: accuracy (addition, mistranslation, "
        "omission, untranslated text), fluency (character encoding, grammar, inconsistency, punctuation, register, "
        "spelling), style (awkward), terminology (inappropriate for context, inconsistent use), non-translation, "
        "other, or no-error.\n")
_MQM_USER = _SEGMENT + _ASK + (
    "Each error is classified as one of three categories: critical, major, and minor. Critical errors inhibit "
    "comprehension of the text. Major errors disrupt the flow, but what the text is trying to say is still "
    "understandable. Minor errors are technically errors, but do not disrupt the flow or hinder comprehension.")
_ESA_USER = _SEGMENT + _ASK + (
    "Each error is classified as one of two categories: major or minor. Major errors disrupt the flow and make the "
    "understandability of text difficult or impossible. Minor errors are errors that do not disrupt the flow "
    "significantly and what the text is trying to say is still understandable.")
_MQM_SYSTEM = ("You are an annotator for the quality of machine translation. Your task is to identify errors and "
               "assess the quality of the translation.")
_ESA_SYSTEM = "Your task is to identify machine translation errors and assess the quality of the translation."
_ESA_RANKING = ('Given the translation from {source_lang} to {target_lang} and the annotated error spans, assign a '
                'score on a continuous scale from 0 to 100. The scale has following reference points: 0="No meaning '
                'preserved", 33="Some meaning preserved", 66="Most meaning preserved and few grammar mistakes", up to '
                '100="Perfect meaning and grammar".\n\nScore the following translation from {source_lang} source:\n'
                '```{source_seg}```\n{target_lang} translation:\n```{target_seg}```\nAnnotated error spans:\n'
                '```{error_spans}```\nScore (0-100): ')

_SHOT_SEGMENTS = (
    {"source_lang": "English", "target_lang": "German",
     "source_seg": "I do apologise about this, we must gain permission from the account holder to discuss an order "
                   "with another person, I apologise if this was done previously, however, I would not be able to "
                   "discuss this with yourself without the account holders permission.",
     "target_seg": "Ich entschuldige mich dafür, wir müssen die Erlaubnis einholen, um eine Bestellung mit einer "
                   "anderen Person zu besprechen. Ich entschuldige mich, falls dies zuvor geschehen wäre, aber ohne "
                   "die Erlaubnis des Kontoinhabers wäre ich nicht in der Lage, dies mit dir involvement."},
    {"source_lang": "English", "target_lang": "Czech",
     "source_seg": "Talks have resumed in Vienna to try to revive the nuclear pact, with both sides trying to gauge "
                   "the prospects of success after the latest exchanges in the stop-start negotiations.",
     "target_seg": "Ve Vídni se ve Vídni obnovily rozhovory o oživení jaderného paktu, přičemž obě partaje se snaží "
                   "posoudit vyhlídky na úspěch po posledních výměnách v jednáních."},
    {"source_lang": "Chinese", "target_lang": "English",
     "source_seg": "大众点评乌鲁木齐家居卖场频道为您提供高铁居然之家地址，电话，营业时间等最新商户信息，"
                   "找装修公司，就上大众点评",
     "target_seg": "Urumqi Home Furnishing Store Channel provides you with the latest business information such as "
                   "the address, telephone number, business hours, etc., of high-speed rail, and find a decoration "
                   "company, and go to the reviews."},
)
_MQM_ANSWERS = (
    'Critical:\nno-error\nMajor:\naccuracy/mistranslation - "involvement"\naccuracy/omission - "the account holder"'
    '\nMinor:\nfluency/grammar - "wäre"\nfluency/register - "dir"\n',
    'Critical:\nno-error\nMajor:\naccuracy/addition - "ve Vídni"\naccuracy/omission - "the stop-start"\nMinor:\n'
    'terminology/inappropriate for context - "partaje"\n',
    'Critical:\naccuracy/addition - "of high-speed rail"\nMajor:\naccuracy/mistranslation - "go to the reviews"\n'
    'Minor:\nstyle/awkward - "etc.,"\n',
)
_ESA_ANSWERS = (
    'Major:\naccuracy/mistranslation - "involvement"\naccuracy/omission - "the account holder"\nMinor:\n'
    'fluency/grammar - "wäre"\nfluency/register - "dir"\n',
    'Major:\naccuracy/addition - "ve Vídni"\naccuracy/omission - "the stop-start"\nMinor:\n'
    'terminology/inappropriate for context - "partaje"\n',
    'Major:\naccuracy/addition - "of high-speed rail"\naccuracy/mistranslation - "go to the reviews"\nMinor:\n'
    'style/awkward - "etc.,"\n',
)


@dataclass(frozen=True)
class _PromptSet:
    name: str  # the name in the signature
    stages: int  # requests per segment
    severities: tuple[str, ...]  # the error severities the answer may list (empty: a score answer)


PROMPT_SETS: dict[str, _PromptSet] = {
    "esa": _PromptSet("gemba-esa", 2, ("major", "minor")),
    "mqm": _PromptSet("gemba-mqm", 1, ("critical", "major", "minor")),
    "da": _PromptSet("gemba-da", 1, ()),
}


def _texts(prompt: str) -> dict[str, object]:
    """Every text of a prompt set (what :func:`prompt_hash` hashes)."""
    if prompt == "da":
        return {"da": _DA, "da_ref": _DA_REF}
    if prompt == "mqm":
        return {"system": _MQM_SYSTEM, "user": _MQM_USER, "shots": _SHOT_SEGMENTS, "answers": _MQM_ANSWERS}
    return {"system": _ESA_SYSTEM, "user": _ESA_USER, "shots": _SHOT_SEGMENTS, "answers": _ESA_ANSWERS,
            "ranking": _ESA_RANKING}


def prompt_hash(prompt: str) -> str:
    """The first 12 hex digits of the SHA-256 of the prompt set's texts (canonical JSON)."""
    text = json.dumps(_texts(prompt), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# ----------------------------------------------------------------------------------------------- languages
# English names of languages as GEMBA's prompts write them ("English source:"); the primary subtag of a code is
# looked up (``is_IS`` -> Icelandic); an unknown code is written as given.
_NAMES = {
    "af": "Afrikaans", "am": "Amharic", "ar": "Arabic", "as": "Assamese", "az": "Azerbaijani", "be": "Belarusian",
    "bg": "Bulgarian", "bho": "Bhojpuri", "bn": "Bengali", "bs": "Bosnian", "ca": "Catalan", "cs": "Czech",
    "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
    "et": "Estonian", "eu": "Basque", "fa": "Persian", "fi": "Finnish", "fr": "French", "ga": "Irish",
    "gl": "Galician", "gu": "Gujarati", "ha": "Hausa", "he": "Hebrew", "hi": "Hindi", "hr": "Croatian",
    "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian", "ig": "Igbo", "is": "Icelandic", "it": "Italian",
    "iu": "Inuktitut", "ja": "Japanese", "ka": "Georgian", "kk": "Kazakh", "km": "Khmer", "kn": "Kannada",
    "ko": "Korean", "ky": "Kyrgyz", "lt": "Lithuanian", "lv": "Latvian", "mas": "Maasai", "mk": "Macedonian",
    "ml": "Malayalam", "mn": "Mongolian", "mr": "Marathi", "ms": "Malay", "mt": "Maltese", "my": "Burmese",
    "ne": "Nepali", "nl": "Dutch", "no": "Norwegian", "nb": "Norwegian Bokmål", "or": "Odia", "pa": "Punjabi",
    "pl": "Polish", "ps": "Pashto", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "si": "Sinhala",
    "sk": "Slovak", "sl": "Slovenian", "so": "Somali", "sq": "Albanian", "sr": "Serbian", "sv": "Swedish",
    "sw": "Swahili", "ta": "Tamil", "te": "Telugu", "th": "Thai", "tl": "Tagalog", "tr": "Turkish",
    "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek", "vi": "Vietnamese", "xh": "Xhosa", "yo": "Yoruba",
    "zh": "Chinese", "zu": "Zulu",
}


def language_name(code: str) -> str:
    """``de`` -> ``German``, ``is_IS`` -> ``Icelandic``, ``deu_Latn`` -> ``German`` (ISO 639-3 and FLORES codes
    through :func:`xleval.io.normalize_code`); an unknown code is returned as given."""
    primary = re.split(r"[-_]", str(code).strip())[0].lower()
    if primary not in _NAMES and len(primary) == 3:
        # a three-letter code (FLORES' deu_Latn, arb_Arab): the prompt must say "German", never "deu_Latn"
        from xleval.exceptions import InputError
        from xleval.io.langs import normalize_code

        with contextlib.suppress(InputError):  # not a language code at all: written as given
            primary = re.split(r"[-_]", normalize_code(code))[0].lower()
    return _NAMES.get(primary, str(code))


# ----------------------------------------------------------------------------------------------- rendering
def render(prompt: str, source_lang: str, target_lang: str, source: str, hypothesis: str,
           reference: str | None = None, error_spans: str | None = None) -> list[Message]:
    """The chat messages of one request. ``source_lang``/``target_lang`` are language names (``German``).
    ESA: ``error_spans=None`` gives stage 1; the stage-1 answer as ``error_spans`` gives stage 2."""
    row = {"source_lang": source_lang, "target_lang": target_lang, "source_seg": source, "target_seg": hypothesis,
           "reference_seg": reference}
    if prompt == "da":
        return [{"role": "user", "content": (_DA if reference is None else _DA_REF).format(**row)}]
    if prompt == "esa" and error_spans is not None:
        return [{"role": "user", "content": _ESA_RANKING.format(**row, error_spans=error_spans)}]
    system, user, answers = (_MQM_SYSTEM, _MQM_USER, _MQM_ANSWERS) if prompt == "mqm" else \
        (_ESA_SYSTEM, _ESA_USER, _ESA_ANSWERS)
    messages = [{"role": "system", "content": system}]
    for shot, answer in zip(_SHOT_SEGMENTS, answers, strict=True):
        messages += [{"role": "user", "content": user.format(**shot)}, {"role": "assistant", "content": answer}]
    messages.append({"role": "user", "content": user.format(**row)})
    return messages


# ----------------------------------------------------------------------------------------------- parsing
#: a number as an answer writes it: a sign only where it is not a range's dash ("0-100", "70-80" are two positive
#: numbers; "-5" and "Score: -5" are minus five), a decimal part (the scale is continuous: "72.5"), any script's
#: digits; a number is not read out of a longer one ("1.2.3")
_NUMBER = re.compile(r"(?:(?<![\w.\-\u2212])[-\u2212])?(?<![\d.])\d+(?:\.\d+)?(?![\d.]\d)")
_OUT_OF = r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:/|out of)\s*{high}(?![\d.]\d)"  # "85/100", "85 out of 100"
_LEVELS = ("critical", "major", "minor")
#: a severity header as models write it: "Major:", "**Major:**", "### Major errors:", "Major：", and the first
#: error on the header's own line ("Major: accuracy/omission - \"x\"", "Critical: no-error")
_HEADER = re.compile(r"^[\s#*_>\-]*(critical|major|minor)(?:\s+errors?)?[\s*_]*[:\uff1a][\s*_]*(.*)$", re.IGNORECASE)
_QUOTED = re.compile(r'"(.*)"')
_WEIGHTS = {"critical": 25, "major": 5, "minor": 1}
#: how answers are read, in the signature: a change of the rules is a change of the numbers
PARSER = "xleval-2"


@functools.cache
def _out_of(high: int) -> re.Pattern[str]:
    return re.compile(_OUT_OF.format(high=high), re.IGNORECASE)


def _number(text: str) -> float:
    return float(text.replace("\u2212", "-"))


def parse_score(answer: str, low: int = 0, high: int = 100) -> tuple[float | None, str]:
    """A score answer: the number, or None and the reason. GEMBA's rule: exactly one number in the answer (so
    ``['N']`` too), else one ``N/high`` (``N out of high``) and no other number; the number must lie in
    ``[low, high]``. A minus sign is read (``-5`` is outside 0-100, not 5) and so is a decimal part (``72.5``)."""
    text = answer.strip()
    numbers = _NUMBER.findall(text)
    value: float | None = None
    if len(numbers) == 1:
        value = _number(numbers[0])
    elif len(numbers) == 2 and len(ratio := _out_of(high).findall(text)) == 1:
        value = _number(ratio[0])
    if value is None:
        return None, "no number" if not numbers else f"{len(numbers)} numbers"
    if not low <= value <= high:
        return None, f"{value:g} outside {low}-{high}"
    return value + 0.0, ""  # + 0.0: "-0" is 0


@dataclass(frozen=True)
class ParsedError:
    """One error of an error-list answer: ``severity``, ``category`` (``accuracy/omission``), ``text`` (the quoted
    span, "" when none is quoted)."""

    severity: str
    category: str
    text: str


def parse_errors(answer: str, severities: tuple[str, ...] = _LEVELS) -> tuple[list[ParsedError] | None, str]:
    """An error-list answer (``Major:`` then ``category - "span"`` lines): the errors, or None and the reason.

    As GEMBA reads it: lines are lower-cased for the headers and categories; empty and ``no-error`` lines are
    skipped; a line before any header is ignored; ``non-translation`` is the worst severity wherever it is
    listed. An answer with neither a header nor ``no-error`` is unparseable."""
    found: list[ParsedError] = []
    level: str | None = None
    recognised = False
    for raw in answer.split("\n"):
        line = raw.strip()
        header = _HEADER.match(line)
        if header is not None:
            # "Major errors:" is a header, not an error under the previous one; "Major: x" is a header and x
            level, recognised = header.group(1).lower(), True
            line = header.group(2).strip()
        low = line.lower()
        if not low or "no-error" in low or "no error" in low:
            recognised = recognised or bool(low)
            continue
        if level is None:
            continue
        quoted = _QUOTED.search(line)
        category = line[: quoted.start()].strip().rstrip("-").strip() if quoted else line
        # non-translation is the worst severity the prompt has (GEMBA counts it as critical), and so is a header
        # the prompt did not ask for (Critical: in an ESA answer)
        severity = severities[0] if "non-translation" in low or level not in severities else level
        found.append(ParsedError(severity, category.lstrip("-*\u2022 ").lower(), quoted.group(1) if quoted else ""))
    if not recognised:
        return None, "no error list"
    return found, ""


def mqm_score(errors: list[ParsedError]) -> float:
    """GEMBA-MQM's score: minus the weighted count of the first five errors (critical first), at most 25."""
    ordered = [e for level in _LEVELS for e in errors if e.severity == level]
    return 0.0 - min(25, sum(_WEIGHTS[e.severity] for e in ordered[:5]))  # 0.0 -: no "-0.0" for no error


def locate_spans(errors: list[ParsedError], hypothesis: str) -> list[tuple[int, int]]:
    """Character offsets ``[start, end)`` of each error's text in the translation (its first occurrence);
    ``(-1, -1)`` where the text is empty or not in the translation."""
    out = []
    for error in errors:
        start = hypothesis.find(error.text) if error.text else -1
        out.append((start, start + len(error.text)) if start >= 0 else (-1, -1))
    return out
