"""Settings of voice notes and audio files in posts: their caps, and who transcribes them."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from .settings_base import SettingsSection

__all__ = ["AudioSettings"]


class AudioSettings(SettingsSection):
    """Voice notes and audio files in posts. Each is at most ``max_bytes`` and
    ``max_duration_s`` long: refused with one sentence from what the platform declares,
    before a download, and from the file's own header, before it is transcribed.

    ``backend`` says who transcribes: ``embedded`` runs Whisper base offline (it ships in
    two packages of the ``local`` extra; ``model_path`` names another faster-whisper
    model folder), ``openai`` sends the file to any OpenAI-compatible
    ``/v1/audio/transcriptions`` server at ``base_url`` (whisper.cpp's server,
    faster-whisper behind such an API, OpenAI itself when ``base_url`` is empty), and
    ``none`` answers a voice note with one sentence. ``language`` (ISO 639-1, ``"pt"``)
    tells the transcriber which language to hear; empty, it finds out.
    """

    enabled: bool = True
    backend: Literal["embedded", "openai", "none"] = "embedded"
    max_bytes: int = Field(16_000_000, ge=10_000)
    max_duration_s: float = Field(300.0, gt=0)
    language: str = Field("", max_length=8)
    # the OpenAI-compatible server: its root (``http://127.0.0.1:8080/v1``; empty:
    # api.openai.com), key and model; one request within timeout_s, retried `retries` times
    base_url: str = ""
    api_key: str = ""
    model: str = "whisper-1"
    timeout_s: float = Field(120.0, gt=0)
    retries: int = Field(2, ge=0, le=10)
    # the embedded model: a faster-whisper (CTranslate2) folder instead of the packaged
    # Whisper base; its threads and beam; one file at a time, `max_waiting` more may wait
    model_path: str = ""
    threads: int = Field(2, ge=1, le=64)
    beam_size: int = Field(5, ge=1, le=10)
    max_waiting: int = Field(2, ge=0)

    @model_validator(mode="after")
    def _key_for_openai(self) -> Self:
        if self.enabled and self.backend == "openai" and not self.base_url and not self.api_key:
            raise ValueError(
                "audio uses api.openai.com but audio.api_key is empty (set "
                "ZOFIA__AUDIO__API_KEY, or audio.base_url for a local transcription server)"
            )
        return self
