"""Voice notes heard offline: the decoding (PyAV) cut at the cap whatever the header
declares, and, in the slow tier, the packaged Whisper base assembled from its part
packages, checked by its SHA-256, and hearing the spoken voice notes of ``tests/data``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.peers.fixtures.audio import SAID, silent_wav, voice

from zofia_engine.audio.embedded import (
    SAMPLE_RATE,
    EmbeddedTranscriber,
    decode_capped,
    whisper_base_path,
)
from zofia_engine.audio.probe import DAMAGED, AudioRefusedError
from zofia_engine.audio.reader import VoiceReader, transcriber_for
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.errors import ModelUnavailableError
from zofia_engine.llm.gguf import file_sha256


def test_decoding_stops_at_the_cap_whatever_the_file_holds() -> None:
    whole = decode_capped(voice("en.ogg"), 60.0)
    assert len(whole) == pytest.approx(5.131 * SAMPLE_RATE, abs=0.02 * SAMPLE_RATE)
    assert 0.05 < float(abs(whole).max()) <= 1.0  # speech, as floats in [-1, 1]
    for fmt in ("en.ogg", "en.mp3", "en.m4a"):
        assert len(decode_capped(voice(fmt), 2.0)) == 2 * SAMPLE_RATE  # not a sample more
    # A WAV whose header declares 1 s while it holds 30: however much is decoded, no more
    # than the cap is kept.
    lying = bytearray(silent_wav(30.0))
    lying[40:44] = (8000 * 2).to_bytes(4, "little")  # the data chunk's size: 1 s at 8 kHz
    assert len(decode_capped(bytes(lying) + b"\0" * 100, 2.0)) <= 2 * SAMPLE_RATE


@pytest.mark.parametrize("data", [b"OggS" + b"\x01" * 500, voice("en.m4a")[:300], b"\0" * 64])
def test_a_file_that_does_not_decode_is_refused(data: bytes) -> None:
    with pytest.raises(AudioRefusedError) as refused:
        decode_capped(data, 10.0)
    assert str(refused.value) == DAMAGED


def test_the_embedded_backend_is_the_default_and_names_its_model() -> None:
    default = transcriber_for(AudioSettings())
    assert isinstance(default, EmbeddedTranscriber) and default.name == "embedded:whisper-base"
    other = EmbeddedTranscriber(AudioSettings(model_path="/models/faster-whisper-small"))
    assert other.name == "embedded:faster-whisper-small"


@pytest.mark.slow
def test_the_packaged_model_is_assembled_once_and_checked(tmp_path: Path) -> None:
    folder = whisper_base_path(tmp_path)
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    assert names == [
        "config.json", "config.json.sha256", "model.bin", "model.bin.lock", "model.bin.sha256",
        "tokenizer.json", "tokenizer.json.sha256", "vocabulary.txt", "vocabulary.txt.sha256",
    ]  # fmt: skip
    model = folder / "model.bin"
    assert model.stat().st_size == 145_217_532
    stamp = model.stat().st_mtime_ns
    assert whisper_base_path(tmp_path) == folder and model.stat().st_mtime_ns == stamp
    assert file_sha256(model) == "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
    # A file beside the model that is not Systran's is refused, removed, and copied again.
    (folder / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelUnavailableError, match=r"tokenizer\.json"):
        whisper_base_path(tmp_path)
    assert not (folder / "tokenizer.json").exists()
    assert whisper_base_path(tmp_path) == folder and (folder / "tokenizer.json").stat().st_size


def _words(text: str) -> set[str]:
    return {w.strip(".,").casefold() for w in text.split()}


@pytest.mark.slow
async def test_the_packaged_model_hears_a_voice_note_in_english_and_in_portuguese() -> None:
    reader = VoiceReader(AudioSettings())
    english = await reader.read(voice("en.ogg"))
    portuguese = await reader.read(voice("pt.ogg"))
    assert english.transcriber == "embedded:whisper-base"
    assert (english.language, portuguese.language) == ("en", "pt")
    # A synthetic voice and the smallest multilingual Whisper: most words, not all of them,
    # and not which ones (int8 kernels differ from one CPU to another).
    said_en, said_pt = _words(SAID["en"]), _words(SAID["pt"])
    assert len(_words(english.text) & said_en) >= 0.6 * len(said_en)
    assert len(_words(portuguese.text) & said_pt) >= 0.5 * len(said_pt)
