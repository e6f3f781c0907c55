"""Builders of tiny, randomly initialised local models for tests (no network, a few seconds).

Each builder trains a tokenizer on the fly with the ``tokenizers`` library on a small
multilingual corpus, instantiates a transformers model with hidden size 32, 2 layers and a
vocabulary of about 500, and saves both with ``save_pretrained`` into a directory, exactly as a
downloaded hub snapshot would look. Reusable by every test that needs a local model:

- :func:`build_tiny_gpt2` — causal LM (GPT-2 architecture, byte-level BPE tokenizer)
- :func:`build_tiny_encoder` — ``kind="xlm-roberta"`` (Unigram, XLM-R special tokens, what
  COMET expects) or ``kind="bert"`` (WordPiece, ``[CLS]``/``[SEP]``)
- :func:`build_tiny_comet` — a COMET model directory (``checkpoints/model.ckpt`` +
  ``hparams.yaml``) around a tiny XLM-R encoder, loadable by ``comet.load_from_checkpoint``

Heavy libraries are imported inside the functions, so importing this module is free.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["TINY_CORPUS", "build_tiny_gpt2", "build_tiny_encoder", "build_tiny_comet", "build_tiny_mt5_tokenizer",
           "build_tiny_metricx"]

HIDDEN = 32
LAYERS = 2
HEADS = 2
MAX_LEN = 128
VOCAB = 500

# A small multilingual corpus: Latin, Cyrillic, CJK and Arabic script, so that every test string
# tokenises into known pieces (plus byte/char fallbacks) rather than all-<unk>.
TINY_CORPUS = [
    "The cat sat on the mat.",
    "A quick brown fox jumps over the lazy dog.",
    "The weather is nice today, isn't it?",
    "Machine translation systems are evaluated with metrics.",
    "Die Katze sitzt auf der Matte.",
    "Das Wetter ist heute schön.",
    "Le chat est assis sur le tapis.",
    "Il fait beau aujourd'hui.",
    "El gato está sentado en la alfombra.",
    "Кошка сидит на коврике.",
    "Сегодня хорошая погода.",
    "猫坐在垫子上。",
    "今天天气很好。",
    "猫はマットの上に座っている。",
    "고양이가 매트 위에 앉아 있다.",
    "القطة تجلس على السجادة.",
    "Numbers 0 1 2 3 4 5 6 7 8 9 and punctuation: , . ; ! ? ( ) - ' \"",
] * 4


def _save_config_and_model(model, tokenizer, path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_gpt2(path: str | Path, *, seed: int = 0, vocab_size: int = VOCAB) -> Path:
    """A tiny GPT-2 causal LM + byte-level BPE tokenizer saved in ``path``; returns the path."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte encodable: no <unk>
        show_progress=False,
    )
    tok.train_from_iterator(TINY_CORPUS, trainer=trainer)
    tokenizer = GPT2TokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        model_max_length=MAX_LEN,
    )
    config = GPT2Config(
        vocab_size=tok.get_vocab_size(),
        n_positions=MAX_LEN,
        n_embd=HIDDEN,
        n_layer=LAYERS,
        n_head=HEADS,
        bos_token_id=0,
        eos_token_id=0,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config).eval()
    return _save_config_and_model(model, tokenizer, Path(path))


def build_tiny_encoder(path: str | Path, *, kind: str = "xlm-roberta", seed: int = 0, vocab_size: int = VOCAB) -> Path:
    """A tiny encoder (``kind`` ``"xlm-roberta"`` or ``"bert"``) + its tokenizer saved in ``path``."""
    if kind == "xlm-roberta":
        return _build_tiny_xlmr(Path(path), seed, vocab_size)
    if kind == "bert":
        return _build_tiny_bert(Path(path), seed, vocab_size)
    raise ValueError(f"kind must be 'xlm-roberta' or 'bert', got {kind!r}")


def _build_tiny_xlmr(path: Path, seed: int, vocab_size: int) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizerFast

    # XLM-R's layout: <s>=0 <pad>=1 </s>=2 <unk>=3, sentencepiece-style "▁" word prefixes.
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size - 1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
        unk_token="<unk>",
        show_progress=False,
    )
    tok.train_from_iterator(TINY_CORPUS, trainer=trainer)
    tok.add_special_tokens(["<mask>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    tokenizer = XLMRobertaTokenizerFast(tokenizer_object=tok, model_max_length=MAX_LEN)
    config = XLMRobertaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=MAX_LEN + 2,  # RoBERTa positions start after padding_idx=1
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    )
    torch.manual_seed(seed)
    # keep the pooler so AutoModel loads every weight (COMET drops it, bert_score ignores it)
    model = XLMRobertaModel(config).eval()
    return _save_config_and_model(model, tokenizer, path)


def _build_tiny_bert(path: Path, seed: int, vocab_size: int) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, BertTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        show_progress=False,
    )
    tok.train_from_iterator(TINY_CORPUS, trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer = BertTokenizerFast(tokenizer_object=tok, model_max_length=MAX_LEN)
    config = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=MAX_LEN,
        pad_token_id=0,
    )
    torch.manual_seed(seed)
    model = BertModel(config).eval()
    return _save_config_and_model(model, tokenizer, path)


_COMET_CLASSES = {"regression": "RegressionMetric", "qe": "ReferencelessRegression", "unified": "UnifiedMetric",
                  "xcomet": "XCOMETMetric"}


def build_tiny_comet(path: str | Path, encoder_dir: str | Path, *, kind: str = "regression", seed: int = 0) -> Path:
    """A COMET model directory in the hub layout, around the local encoder ``encoder_dir``.

    ``kind``: ``"regression"`` (reference-based, like wmt22-comet-da), ``"qe"``
    (ReferencelessRegression) or ``"unified"`` (UnifiedMetric over [mt, src, ref], like
    cometkiwi/xcomet; usable with or without references) or ``"xcomet"`` (XCOMETMetric: also tags error
    spans of the translation, ``metadata.error_spans``). The COMET class is instantiated with
    ``pretrained_model`` set to the local encoder directory (COMET loads encoders through
    ``from_pretrained``, which accepts a directory), its randomly initialised weights are saved
    as a Lightning checkpoint, and ``hparams.yaml`` is written beside ``checkpoints/``.
    """
    import pytorch_lightning as ptl
    import torch
    import yaml
    from comet import models as comet_models

    cls = getattr(comet_models, _COMET_CLASSES[kind])
    options = {"pretrained_model": str(encoder_dir), "nr_frozen_epochs": 0, "hidden_sizes": [16],
               "local_files_only": True}
    if kind in ("unified", "xcomet"):
        options.update(word_layer=1, layer_transformation="softmax")  # tiny encoder: 2 layers
    if kind == "xcomet":
        options.update(encoder_model="XLM-RoBERTa")  # XCOMET's default is XLM-RoBERTa-XL
    torch.manual_seed(seed)
    model = cls(**options).eval()
    if kind == "xcomet":  # a random tagger says "OK" almost everywhere: spread its logits so that spans appear
        with torch.no_grad():
            model.hidden2tag.weight.normal_(0.0, 4.0)
            model.hidden2tag.bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0]))
    hparams = dict(model.hparams)
    path = Path(path)
    (path / "checkpoints").mkdir(parents=True, exist_ok=True)
    checkpoint = {
        "state_dict": model.state_dict(),
        "hyper_parameters": hparams,
        "pytorch-lightning_version": ptl.__version__,
        "epoch": 0,
        "global_step": 0,
    }
    torch.save(checkpoint, path / "checkpoints" / "model.ckpt")
    with open(path / "hparams.yaml", "w", encoding="utf-8") as fh:
        yaml.safe_dump(hparams, fh)
    return path


def build_tiny_mt5_tokenizer(path: str | Path, *, vocab_size: int = VOCAB) -> Path:
    """A tiny tokenizer in mT5's layout (``<pad>``=0, ``</s>``=1, ``<unk>``=2, Unigram pieces with "▁"
    word prefixes, ``</s>`` appended to every input), saved in ``path``; returns the path."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(TINY_CORPUS, trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", 1)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                        model_max_length=MAX_LEN)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_metricx(path: str | Path, *, seed: int = 0, tie: bool = False, d_model: int = 8,
                       layers: int = 1) -> Path:
    """A MetricX-shaped checkpoint: a tiny mT5 (d_model 8, one layer each side; ``d_model``, ``layers`` for a
    larger one) with mT5's full vocabulary of 250112 (MetricX reads the logit of entry 250089), saved like
    google/metricx-*: ``config.json`` naming ``MT5ForRegression`` + weights, no tokenizer. As in MetricX's
    checkpoints (mT5), the output projection ``lm_head.weight`` is stored apart from the embeddings and
    ``config.json`` says ``tie_word_embeddings: false`` (``tie=True``: one shared matrix, the T5 layout,
    where the decoder output is rescaled by d_model**-0.5). transformers 5's MT5Config forces tying in
    memory, so the file is written here. The score row is fitted so that scores spread over [0, 25]
    (some clamped) instead of sitting near 0."""
    import json

    import torch
    from safetensors.torch import load_file, save_file
    from transformers import MT5Config, MT5ForConditionalGeneration

    config = MT5Config(vocab_size=250112, d_model=d_model, d_kv=4, d_ff=2 * d_model, num_layers=layers,
                       num_decoder_layers=layers, num_heads=2, relative_attention_num_buckets=8, dropout_rate=0.0,
                       pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    torch.manual_seed(seed)
    model = MT5ForConditionalGeneration(config).eval()
    with torch.no_grad():  # the score row: least squares from probe inputs' decoder states to spread targets
        probes = torch.randint(3, VOCAB, (64, 12))
        hidden = model.encoder(input_ids=probes).last_hidden_state
        states = model.decoder(input_ids=torch.zeros((64, 1), dtype=torch.long),
                               encoder_hidden_states=hidden).last_hidden_state[:, 0, :]
        if tie:
            states = states * (config.d_model ** -0.5)
        targets = torch.linspace(-3.0, 28.0, 64)[torch.randperm(64)]
        row = torch.linalg.lstsq(states, targets[:, None]).solution[:, 0]
        if tie:
            model.shared.weight[250089] = row
        else:
            lm_head = torch.randn(250112, d_model) * 0.05
            lm_head[250089] = row
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    if not tie:
        weights = load_file(path / "model.safetensors")
        weights["lm_head.weight"] = lm_head.contiguous()
        save_file(weights, path / "model.safetensors", metadata={"format": "pt"})
    cfg = json.loads((path / "config.json").read_text())
    cfg["architectures"] = ["MT5ForRegression"]
    cfg["tie_word_embeddings"] = tie
    (path / "config.json").write_text(json.dumps(cfg, indent=2))
    return path
