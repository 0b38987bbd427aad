"""A voice note's format and declared duration, read from its header (mutagen), and the
refusals past the caps: each one sentence, each made before anything is sent."""

from __future__ import annotations

import pytest

from tests.peers.fixtures.audio import flac_header, silent_wav, voice

from zofia_engine.audio.probe import (
    DAMAGED,
    UNREADABLE,
    AudioRefusedError,
    duration_words,
    probe,
    refuse_declared,
    sniff,
)
from zofia_engine.audio_settings import AudioSettings
from zofia_engine.records.audio import AUDIO_FORMATS

SETTINGS = AudioSettings()


@pytest.mark.parametrize(
    ("name", "fmt", "seconds"),
    [("en.ogg", "ogg", 5.131), ("pt.ogg", "ogg", 5.300), ("en.mp3", "mp3", 5.198),
     ("en.m4a", "m4a", 5.178)],
)  # fmt: skip
def test_each_format_a_platform_sends_declares_its_duration(
    name: str, fmt: str, seconds: float
) -> None:
    audio = probe(voice(name), SETTINGS)
    assert audio.format == fmt and audio.media_type == AUDIO_FORMATS[fmt]
    assert audio.filename == f"voice.{fmt}"  # servers tell the format by the extension
    assert audio.duration_s == pytest.approx(seconds, abs=0.01)
    assert len(audio.sha256) == 64


def test_a_wav_and_a_flac_declare_theirs() -> None:
    assert probe(silent_wav(2.5), SETTINGS).duration_s == pytest.approx(2.5)
    flac = probe(flac_header(90.0), SETTINGS)
    assert (flac.format, flac.duration_s) == ("flac", 90.0)


def test_a_voice_note_longer_than_the_cap_is_refused_in_one_sentence() -> None:
    capped = AudioSettings(max_duration_s=120)
    with pytest.raises(AudioRefusedError) as refused:
        probe(flac_header(7 * 60 + 30), capped)
    assert str(refused.value) == (
        "The voice note is 7 minutes 30 seconds long; voice notes up to 2 minutes are transcribed."
    )
    assert probe(flac_header(120), capped).duration_s == 120  # the cap itself is taken


def test_a_voice_note_larger_than_the_cap_is_refused_before_its_header_is_read() -> None:
    capped = AudioSettings(max_bytes=10_000)
    with pytest.raises(AudioRefusedError) as refused:
        probe(b"\0" * 12_000, capped)  # not even audio: the size is what is said
    assert str(refused.value) == "The voice note is 12 kB; voice notes up to 10 kB are transcribed."


def test_what_the_platform_declares_is_refused_before_a_download() -> None:
    capped = AudioSettings(max_bytes=1_000_000, max_duration_s=60)
    refuse_declared(None, None, capped)  # nothing declared: nothing to refuse yet
    refuse_declared(1_000_000, 60, capped)
    with pytest.raises(AudioRefusedError, match="is 2 MB; voice notes up to 1 MB"):
        refuse_declared(2_000_000, 10, capped)
    with pytest.raises(AudioRefusedError, match="is 1 minute 1 second long; voice notes up to"):
        refuse_declared(None, 61, capped)


@pytest.mark.parametrize(
    "data", [b"\x89PNG\r\n\x1a\n" + b"\0" * 64, b"plain text, not a sound", b"", b"\0" * 4096]
)
def test_a_file_in_no_format_transcribed_is_refused(data: bytes) -> None:
    assert sniff(data) is None
    with pytest.raises(AudioRefusedError) as refused:
        probe(data, SETTINGS)
    assert str(refused.value) == UNREADABLE


@pytest.mark.parametrize(
    "data",
    [
        voice("en.ogg")[:120],  # cut inside its first pages: no duration declared yet
        b"OggS" + b"\xff" * 200,  # an OGG page that is none
        b"ID3" + b"\0" * 40,  # an MP3 tag and no frame
        b"RIFF\0\0\0\0WAVE",  # a WAV with no format chunk
        flac_header(0.0),  # a FLAC that declares no sample
    ],
)
def test_a_damaged_or_cut_file_is_refused(data: bytes) -> None:
    with pytest.raises(AudioRefusedError) as refused:
        probe(data, SETTINGS)
    assert str(refused.value) == DAMAGED


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(0.2, "1 second"), (45, "45 seconds"), (60, "1 minute"), (300, "5 minutes"),
     (299.01, "5 minutes"), (61, "1 minute 1 second"), (450, "7 minutes 30 seconds")],
)  # fmt: skip
def test_a_duration_in_words_never_reads_as_less_than_it_is(seconds: float, words: str) -> None:
    assert duration_words(seconds) == words
