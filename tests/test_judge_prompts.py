"""GEMBA prompt rendering against the published texts, and answer parsing against GEMBA's rules.

Expected prompts are transcribed here, filled in by hand, from github.com/MicrosoftTranslator/GEMBA:
``gemba/prompt.py`` (commit 0fdcd8d, "GEMBA-DA"), ``gemba/gemba_mqm_utils.py`` (commit ea90068,
``TEMPLATE_GEMBA_MQM``) and ``gemba/gemba_esa.py`` (commit bf1f113, ``TEMPLATE_GEMBA_ESA_ERROR_SPANS`` and
``TEMPLATE_GEMBA_ESA_RANKING``); Kocmi & Federmann, EAMT 2023 and WMT 2023.
"""
from __future__ import annotations

import pytest

from xleval.metrics import _judge_prompts as P

# --- GEMBA-DA (gemba/prompt.py), en-de and zh-en, filled by hand
DA_EN_DE = ('Score the following translation from English to German on a continuous scale from 0 to 100, where a '
            'score of zero means "no meaning preserved" and score of one hundred means "perfect meaning and '
            'grammar".\n\nEnglish source: "The cat sits."\nGerman translation: "Die Katze sitzt."\nScore: ')
DA_ZH_EN = ('Score the following translation from Chinese to English on a continuous scale from 0 to 100, where a '
            'score of zero means "no meaning preserved" and score of one hundred means "perfect meaning and '
            'grammar".\n\nChinese source: "猫坐着。"\nEnglish translation: "The cat sits."\nScore: ')
DA_REF_EN_DE = ('Score the following translation from English to German with respect to human reference on a '
                'continuous scale 0 to 100 where score of zero means "no meaning preserved" and score of one '
                'hundred means "perfect meaning and grammar".\n\nEnglish source: "The cat sits."\nGerman human '
                'reference: "Die Katze sitzt."\nGerman machine translation: "Katze sitzt."\nScore: ')

# --- the last user turn of GEMBA-MQM (gemba_mqm_utils.py) for en-cs
MQM_EN_CS = ('English source:\n```Hello.```\nCzech translation:\n```Ahoj.```\n\nBased on the source segment and '
             'machine translation surrounded with triple backticks, identify error types in the translation and '
             'classify them. The categories of errors are: accuracy (addition, mistranslation, omission, '
             'untranslated text), fluency (character encoding, grammar, inconsistency, punctuation, register, '
             'spelling), style (awkward), terminology (inappropriate for context, inconsistent use), '
             'non-translation, other, or no-error.\nEach error is classified as one of three categories: critical, '
             'major, and minor. Critical errors inhibit comprehension of the text. Major errors disrupt the flow, but '
             'what the text is trying to say is still understandable. Minor errors are technically errors, but do '
             'not disrupt the flow or hinder comprehension.')
# --- GEMBA-ESA stage 1 (gemba_esa.py), last user turn, ja-zh; and stage 2 for the same segment
ESA1_JA_ZH = ('Japanese source:\n```猫です。```\nChinese translation:\n```是猫。```\n\nBased on the source segment and '
              'machine translation surrounded with triple backticks, identify error types in the translation and '
              'classify them. The categories of errors are: accuracy (addition, mistranslation, omission, '
              'untranslated text), fluency (character encoding, grammar, inconsistency, punctuation, register, '
              'spelling), style (awkward), terminology (inappropriate for context, inconsistent use), '
              'non-translation, other, or no-error.\nEach error is classified as one of two categories: major or '
              'minor. Major errors disrupt the flow and make the understandability of text difficult or impossible. '
              'Minor errors are errors that do not disrupt the flow significantly and what the text is trying to '
              'say is still understandable.')
ESA2_JA_ZH = ('Given the translation from Japanese to Chinese and the annotated error spans, assign a score on a '
              'continuous scale from 0 to 100. The scale has following reference points: 0="No meaning preserved", '
              '33="Some meaning preserved", 66="Most meaning preserved and few grammar mistakes", up to '
              '100="Perfect meaning and grammar".\n\nScore the following translation from Japanese source:\n'
              '```猫です。```\nChinese translation:\n```是猫。```\nAnnotated error spans:\n```Minor:\nstyle/awkward - '
              '"是"```\nScore (0-100): ')
# the first worked example of GEMBA-MQM (en-de) as GEMBA's few-shot answer gives it
MQM_SHOT_ANSWER = ('Critical:\nno-error\nMajor:\naccuracy/mistranslation - "involvement"\naccuracy/omission - "the '
                   'account holder"\nMinor:\nfluency/grammar - "wäre"\nfluency/register - "dir"\n')


def test_da_prompts_match_gemba_for_two_language_pairs():
    assert P.render("da", "English", "German", "The cat sits.", "Die Katze sitzt.") == \
        [{"role": "user", "content": DA_EN_DE}]
    assert P.render("da", P.language_name("zh"), P.language_name("en"), "猫坐着。", "The cat sits.") == \
        [{"role": "user", "content": DA_ZH_EN}]
    assert P.render("da", "English", "German", "The cat sits.", "Katze sitzt.", reference="Die Katze sitzt.") == \
        [{"role": "user", "content": DA_REF_EN_DE}]


def test_mqm_prompt_is_system_three_shots_and_the_segment():
    messages = P.render("mqm", "English", "Czech", "Hello.", "Ahoj.")
    assert [m["role"] for m in messages] == ["system"] + ["user", "assistant"] * 3 + ["user"]
    assert messages[0]["content"] == ("You are an annotator for the quality of machine translation. Your task is to "
                                      "identify errors and assess the quality of the translation.")
    assert messages[-1]["content"] == MQM_EN_CS
    assert messages[2]["content"] == MQM_SHOT_ANSWER
    assert messages[5]["content"].startswith("Chinese source:\n```大众点评乌鲁木齐家居卖场频道")


def test_esa_two_stages_match_gemba_for_ja_zh():
    first = P.render("esa", P.language_name("ja"), P.language_name("zh_CN"), "猫です。", "是猫。")
    assert first[0] == {"role": "system", "content": "Your task is to identify machine translation errors and "
                                                     "assess the quality of the translation."}
    assert first[-1]["content"] == ESA1_JA_ZH
    assert first[2]["content"].startswith("Major:\naccuracy/mistranslation")  # ESA's shots have no Critical:
    second = P.render("esa", "Japanese", "Chinese", "猫です。", "是猫。", error_spans='Minor:\nstyle/awkward - "是"')
    assert second == [{"role": "user", "content": ESA2_JA_ZH}]


def test_prompt_hash_changes_with_the_text(monkeypatch):
    hashes = {p: P.prompt_hash(p) for p in P.PROMPT_SETS}
    assert len(set(hashes.values())) == 3 and all(len(h) == 12 for h in hashes.values())
    monkeypatch.setattr(P, "_DA", P._DA.replace("Score: ", "Score:"))
    assert P.prompt_hash("da") != hashes["da"] and P.prompt_hash("esa") == hashes["esa"]


@pytest.mark.parametrize(("answer", "expected"), [
    ("85", (85.0, "")), ("Score: 85", (85.0, "")), ("['90']", (90.0, "")), ("70/100", (70.0, "")),
    ("100", (100.0, "")), (" 0 ", (0.0, "")),
    ("I would say 70 or 80", (None, "2 numbers")), ("excellent", (None, "no number")),
    ("250", (None, "250 outside 0-100")), ("", (None, "no number")),
])
def test_score_answers_as_gemba_reads_them(answer, expected):
    assert P.parse_score(answer) == expected


def test_mqm_scores_of_gemba_worked_examples():
    """GEMBA's weights (critical 25, major 5, minor 1; first five errors; at most 25), by hand on its three
    few-shot answers: en-de 2 major + 2 minor = 12; en-cs 2 major + 1 minor = 11; zh-en 25 + 5 + 1 -> 25."""
    scores = []
    for answer in P._MQM_ANSWERS:
        errors, why = P.parse_errors(answer)
        assert why == ""
        scores.append(P.mqm_score(errors))
    assert scores == [-12.0, -11.0, -25.0]
    errors, _ = P.parse_errors(MQM_SHOT_ANSWER)
    assert errors[0] == P.ParsedError("major", "accuracy/mistranslation", "involvement")
    assert [e.severity for e in errors] == ["major", "major", "minor", "minor"]


def test_error_lists_edge_cases():
    assert P.parse_errors("Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\n") == ([], "")
    assert P.parse_errors("no-error") == ([], "")  # nothing wrong, said plainly
    assert P.parse_errors("The translation is fine.") == (None, "no error list")
    errors, _ = P.parse_errors('Minor:\nnon-translation - "x"', ("major", "minor"))
    assert errors[0].severity == "major"  # non-translation is the worst severity the prompt has
    six = "Minor:\n" + "\n".join(f'fluency/grammar - "w{i}"' for i in range(6))
    assert P.mqm_score(P.parse_errors(six)[0]) == -5.0  # only the first five count
    errors, _ = P.parse_errors('Major:\naccuracy/omission - "Katze"\nfluency - "fehlt"')
    assert P.locate_spans(errors, "Die Katze") == [(4, 9), (-1, -1)]


def test_language_names():
    assert [P.language_name(c) for c in ("en", "is_IS", "sr_Cyrl_RS", "bho", "xx-Yy")] == \
        ["English", "Icelandic", "Serbian", "Bhojpuri", "xx-Yy"]
