"""A tiny NLI sequence classifier built on disk by the tests themselves (no hub).

Its weights are random (or, with ``bias``, give every pair the same known answer): it
proves the loading, label mapping and batching code, never an NLI model's quality.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["NLI_LABELS", "PAIRS", "WORDS", "build_nli"]

NLI_LABELS = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}
PAIRS = [
    ("the sky is blue", "the sky is blue"),
    ("paris is the capital of france", "berlin is the capital of france"),
    ("water is wet", "the moon is made of cheese and rock"),
    ("the river is long and the earth is round", "the earth is flat"),
    ("grass is green", "grass"),
]
WORDS = sorted({word for pair in PAIRS for text in pair for word in text.split()})


def build_nli(
    root: Path, id2label: dict[int, str], *, bias: list[float] | None = None, seed: int = 0
) -> Path:
    """Save a tiny BertForSequenceClassification and its tokenizer under ``root``.

    With ``bias`` the classifier's weights are zeroed, so every pair gets the softmax
    of ``bias``: a known answer.
    """
    import torch  # here, not at import: collecting a test module must not load torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    root.mkdir(parents=True, exist_ok=True)
    vocab = root / "vocab.txt"
    vocab.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n",
        encoding="utf-8",
    )
    tokenizer = BertTokenizer(vocab_file=str(vocab), do_lower_case=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        id2label=id2label,
        label2id={name: i for i, name in id2label.items()},
    )
    model = BertForSequenceClassification(config)
    model.train(False)  # eval mode (transformers' eval() has no annotations)
    if bias is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(root)
    tokenizer.save_pretrained(root)
    return root
