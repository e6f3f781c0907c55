"""spBLEU (issue 25): BLEU with sacrebleu's SentencePiece tokenizers (flores101, flores200, spBLEU-1K, spm)
on a local model file, never downloaded.

A tiny SentencePiece model is trained here on generated sentences in several scripts; sacrebleu is
pointed at the same file (it looks for ``$SACREBLEU/models/<file>`` and downloads only when the file is
missing) and every sentence and corpus score is compared. Every test runs with the network cut off:
sacrebleu's download function, urllib and socket connections raise.
"""
from __future__ import annotations

import hashlib
import pickle
import random
import shutil
import socket
import sys
import urllib.request
import warnings
from pathlib import Path

import pytest
import sacrebleu.tokenizers.tokenizer_spm as sacrebleu_spm
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.metrics.bleu import _TOKENIZERS as SACREBLEU_TOKENIZERS

import xleval
from xleval.exceptions import InputError, MissingDependencyError
from xleval.metrics import BLEU, _fast, _spm, get_metric, metric_options

spm = pytest.importorskip("sentencepiece")

# the SentencePiece tokenizer names of the installed sacrebleu (spBLEU-1K arrived in 2.5)
NAMES = [n for n in ("flores101", "flores200", "spBLEU-1K", "spm") if n in SACREBLEU_TOKENIZERS]
FILES = {"flores101": "sacrebleu_tokenizer_spm.model", "spm": "sacrebleu_tokenizer_spm.model",
         "flores200": "flores200sacrebleuspm", "spBLEU-1K": "spbleu-1k_tokenizer_spm.model"}

# syllables of several scripts: words built from them share pieces, so the model splits words
SYLLABLES = {
    "latin": ["ka", "ter", "mon", "bre", "lu", "sch", "ön", "ça", "ri", "do"],
    "cyrillic": ["ка", "ров", "ни", "сть", "ло", "жд", "ей", "при"],
    "greek": ["κα", "λη", "μέ", "ρα", "στο", "νη"],
    "arabic": ["ال", "كت", "اب", "مر", "حب", "سل"],
    "devanagari": ["नम", "स्ते", "भा", "रत", "कि", "ताब"],
    "cjk": ["中", "文", "学", "生", "日", "本", "語", "東", "京"],
    "hangul": ["한", "국", "어", "사", "람", "학", "교"],
    "thai": ["สวั", "สดี", "ครับ", "ภา", "ษา"],
}


def _sentence(rng: random.Random, script: str) -> str:
    syl = SYLLABLES[script]
    words = ["".join(rng.choices(syl, k=rng.randint(1, 4))) for _ in range(rng.randint(2, 9))]
    if rng.random() < 0.3:
        words.append(rng.choice([".", ",", "!", "?", "42", "3.14", "«quote»", "x-y"]))
    if rng.random() < 0.2:
        words[0] = words[0].capitalize()
    joiner = "" if script in ("cjk", "thai") and rng.random() < 0.5 else " "
    return joiner.join(words)


def _corpus(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    scripts = list(SYLLABLES)
    return [_sentence(rng, scripts[i % len(scripts)]) for i in range(n)]


def _train(folder: Path, seed: int, vocab_size: int) -> Path:
    """A tiny SentencePiece model trained on a few hundred generated sentences (all scripts)."""
    text = folder / f"train{seed}.txt"
    text.write_text("\n".join(_corpus(seed, 400)) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(folder / f"tiny{seed}"), vocab_size=vocab_size,
                                   hard_vocab_limit=False, character_coverage=1.0, minloglevel=2)
    return folder / f"tiny{seed}.model"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    return _train(tmp_path_factory.mktemp("spm-train"), 1, 200)


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """No network, and no model in any folder xleval or sacrebleu would look in unless a test puts one."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network touched: {args!r}")

    monkeypatch.setattr(sacrebleu_spm, "download_file", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    empty = tmp_path / "sacrebleu-home"
    empty.mkdir()
    monkeypatch.setenv("SACREBLEU", str(empty))
    monkeypatch.setattr(sacrebleu_spm, "SACREBLEU_DIR", str(empty))  # read by sacrebleu at import
    monkeypatch.delenv(_spm.SPM_ENV, raising=False)


@pytest.fixture
def sacrebleu_home(monkeypatch, tmp_path, model_file) -> Path:
    """``$SACREBLEU`` holding the model under every file name sacrebleu looks for (so it does not download)."""
    home = tmp_path / "sacrebleu"
    (home / "models").mkdir(parents=True)
    for name in NAMES:
        shutil.copyfile(model_file, home / "models" / FILES[name])
    monkeypatch.setenv("SACREBLEU", str(home))
    monkeypatch.setattr(sacrebleu_spm, "SACREBLEU_DIR", str(home))
    return home


def _sacrebleu(name: str, **kwargs) -> SacreBLEU:
    with warnings.catch_warnings():  # for "spm" sacrebleu logs a note through the deprecated Logger.warn
        warnings.simplefilter("ignore", DeprecationWarning)
        return SacreBLEU(tokenize=name, **kwargs)


HYPS = _corpus(2, 48)
REFS = _corpus(3, 48)
REFS2 = [h if i % 3 == 0 else r for i, (h, r) in enumerate(zip(HYPS, _corpus(4, 48), strict=True))]


def test_file_names_and_signatures_are_sacrebleus():
    for name in NAMES:
        theirs = sacrebleu_spm.SPM_MODELS[name]
        assert _spm.SPM_MODELS[name].file == Path(theirs["url"]).name == FILES[name]
        assert _spm.SPM_MODELS[name].signature == theirs["signature"]


@pytest.mark.parametrize("name", NAMES)
def test_tokenizer_is_sacrebleus(name, sacrebleu_home, model_file):
    theirs = _sacrebleu(name).tokenizer
    ours = _spm.load_spm_tokenizer(name, model_file)
    lines = [*HYPS, *REFS, "", "  spaces  inside  ", "Mixed ka中文 한국 ال"]
    assert ours.lines(lines) == [theirs(s) for s in lines]
    assert [ours(s) for s in lines] == [theirs(s) for s in lines]
    assert any(len(theirs(s).split()) > len(s.split()) for s in lines)  # the model really splits words


@pytest.mark.parametrize("backend", ["numpy", "auto"])
@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_scores_equal_sacrebleus(name, lowercase, backend, sacrebleu_home, model_file):
    with _fast.backend(backend):
        sentence = BLEU(tokenize=name, lowercase=lowercase, effective_order=True, spm_model=model_file)
        theirs_sentence = _sacrebleu(name, lowercase=lowercase, effective_order=True)
        got = sentence.sentence_scores(HYPS, [REFS])
        want = [theirs_sentence.sentence_score(h, [r]).score for h, r in zip(HYPS, REFS, strict=True)]
        assert got.tolist() == want
        assert len(set(want)) > 10  # scores that tell tokenizations apart
        corpus, theirs = BLEU(tokenize=name, lowercase=lowercase, spm_model=model_file), _sacrebleu(name,
                                                                                                 lowercase=lowercase)
        for refs in ([REFS], [REFS, REFS2]):
            ours_score, theirs_score = corpus.corpus_score(HYPS, refs), theirs.corpus_score(HYPS, refs)
            assert ours_score.score == theirs_score.score
            assert (ours_score.counts, ours_score.totals) == (tuple(theirs_score.counts), tuple(theirs_score.totals))


@pytest.mark.parametrize("name", NAMES)
def test_signature_keeps_sacrebleus_tok_and_adds_the_checksum(name, sacrebleu_home, model_file):
    ours = BLEU(tokenize=name, spm_model=model_file)
    fields = ours.signature.split("|")
    sacre = _sacrebleu(name)
    sacre.corpus_score(HYPS, [REFS])  # sacrebleu knows nrefs only after scoring
    theirs = str(sacre.get_signature()).split("|")
    assert fields[:-1] == theirs
    assert f"tok:{'flores101' if name == 'spm' else name}" in fields
    sha = hashlib.sha256(model_file.read_bytes()).hexdigest()[:12]
    assert fields[-1] == f"xleval:{xleval.__version__},spm-sha256:{sha}"
    assert ours.corpus_score(HYPS, [REFS]).signature == ours.signature


def test_other_signatures_have_only_the_version():
    for metric in (BLEU(), BLEU(tokenize="char"), get_metric("chrf"), get_metric("ter")):
        assert metric.signature.endswith(f"|xleval:{xleval.__version__}")
        assert "sha256" not in metric.signature


def test_another_model_file_changes_only_the_checksum(sacrebleu_home, model_file, tmp_path):
    a = BLEU(tokenize="flores200", spm_model=model_file).signature
    b = BLEU(tokenize="flores200", spm_model=_train(tmp_path, 9, 180)).signature
    assert a != b and a.rsplit(",", 1)[0] == b.rsplit(",", 1)[0]


@pytest.mark.parametrize("name", NAMES)
def test_missing_model_is_one_line_naming_the_file_and_spm_model(name):
    with pytest.raises(InputError) as err:
        BLEU(tokenize=name)
    message = str(err.value)
    assert "\n" not in message
    assert repr(FILES[name]) in message and "spm_model=" in message and _spm.SPM_ENV in message
    assert err.value.argument == "spm_model"


def test_spm_model_that_does_not_exist(tmp_path):
    with pytest.raises(InputError, match=r"spm_model=.*no such file") as err:
        BLEU(tokenize="flores200", spm_model=tmp_path / "nowhere.model")
    assert "\n" not in str(err.value)


def test_spm_model_that_is_not_a_model(tmp_path):
    bad = tmp_path / "flores200sacrebleuspm"
    bad.write_text("not a model\n")
    with pytest.raises(InputError, match="is not a SentencePiece model"):
        BLEU(tokenize="flores200", spm_model=bad)


def test_spm_model_without_a_sentencepiece_tokenizer(model_file):
    with pytest.raises(InputError, match=r"spm_model=.*tokenize='13a' does not use it"):
        BLEU(tokenize="13a", spm_model=model_file)


def test_model_found_in_a_folder(monkeypatch, tmp_path, model_file):
    folder = tmp_path / "my-models"
    folder.mkdir()
    shutil.copyfile(model_file, folder / "flores200sacrebleuspm")
    want = BLEU(tokenize="flores200", spm_model=model_file).corpus_score(HYPS, [REFS]).score
    assert BLEU(tokenize="flores200", spm_model=folder).corpus_score(HYPS, [REFS]).score == want
    monkeypatch.setenv(_spm.SPM_ENV, str(folder))
    assert BLEU(tokenize="flores200").corpus_score(HYPS, [REFS]).score == want
    with pytest.raises(InputError, match=r"sacrebleu_tokenizer_spm\.model"):  # the folder has flores200's only
        BLEU(tokenize="flores101")


def test_model_found_where_sacrebleu_keeps_it(sacrebleu_home, model_file):
    metric = BLEU(tokenize="flores200")
    assert metric.signature == BLEU(tokenize="flores200", spm_model=model_file).signature
    assert metric.corpus_score(HYPS, [REFS]).score == _sacrebleu("flores200").corpus_score(HYPS, [REFS]).score


def test_registry_and_flat_options_take_spm_model(model_file):
    settings = {"bleu_tokenize": "flores200", "bleu_spm_model": str(model_file)}
    options = metric_options("bleu", settings)
    assert options == {"tokenize": "flores200", "spm_model": str(model_file)}
    metric = get_metric("bleu", level="sentence", **options)
    direct = BLEU(tokenize="flores200", effective_order=True, spm_model=model_file)
    assert metric.signature == direct.signature
    assert metric.sentence_scores(HYPS, [REFS]).tolist() == direct.sentence_scores(HYPS, [REFS]).tolist()


def test_metric_pickles_without_the_processor(model_file):
    metric = BLEU(tokenize="flores200", spm_model=model_file)
    copy = pickle.loads(pickle.dumps(metric))
    assert copy.signature == metric.signature
    assert copy.corpus_score(HYPS, [REFS]).score == metric.corpus_score(HYPS, [REFS]).score


def test_a_changed_model_file_is_refused(tmp_path, model_file):
    path = tmp_path / "flores200sacrebleuspm"
    shutil.copyfile(model_file, path)
    metric = BLEU(tokenize="flores200", spm_model=path)
    shutil.copyfile(_train(tmp_path, 7, 180), path)
    with pytest.raises(InputError, match="changed since this BLEU was built"):
        metric.corpus_score(HYPS, [REFS])


def test_missing_sentencepiece_names_the_extra(monkeypatch, tmp_path, model_file):
    path = tmp_path / "copy.model"  # a file not loaded yet in this process
    shutil.copyfile(model_file, path)
    monkeypatch.setitem(sys.modules, "sentencepiece", None)
    with pytest.raises(MissingDependencyError, match=r"xleval\[spm\]"):
        BLEU(tokenize="flores200", spm_model=path)


def test_score_frame_takes_spm_options(model_file):
    pd = pytest.importorskip("pandas")
    from xleval.metrics import score_frame

    frame = pd.DataFrame({"hypothesis": HYPS, "reference": REFS, "lp": ["en-zh"] * len(HYPS)})
    scored = score_frame(frame, ["bleu"], {"bleu": {"tokenize": "flores200", "spm_model": str(model_file)}})
    direct = BLEU(tokenize="flores200", effective_order=True, spm_model=model_file)  # sentence level: sentence_bleu
    assert scored.frame["bleu"].tolist() == direct.sentence_scores(HYPS, [REFS]).tolist()
    assert scored.signatures["bleu"] == direct.signature


@pytest.mark.parametrize("name", NAMES)
def test_the_command_line_gives_sacrebleus_spbleu(name, sacrebleu_home, model_file, tmp_path, capsys):
    """`xleval score REF -i SYS -tok NAME --spm-model FILE -b` prints sacrebleu's corpus spBLEU of the
    same files, and without a model one line that names --spm-model (exit 2, nothing downloaded)."""
    from xleval.cli import main

    ref, hyp = tmp_path / "ref.txt", tmp_path / "sys.txt"
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    expected = _sacrebleu(name).corpus_score(HYPS, [REFS]).score
    args = ["score", str(ref), "-i", str(hyp), "-m", "bleu", "-tok", name, "-b"]
    assert main([*args, "--spm-model", str(model_file)]) == 0
    assert float(capsys.readouterr().out.strip()) == round(expected, 1)
    assert main([*args, "-w", "6"]) == 0  # found in $SACREBLEU/models
    assert float(capsys.readouterr().out.strip()) == pytest.approx(expected, abs=5e-7)
    (sacrebleu_home / "models" / FILES[name]).unlink()
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--spm-model" in err[0] and FILES[name] in err[0]
