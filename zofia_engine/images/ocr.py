"""The text in an image, read offline. RapidOCR runs PaddleOCR's detection and
recognition models on ONNX Runtime; the models ship inside its wheel, so nothing is
downloaded at run time (tesseract would need a system package and its language data).
"""

from __future__ import annotations

import io
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ModelUnavailableError
from .decode import CleanImage

__all__ = ["OCRBackend", "OCRResult", "RapidOCRBackend"]


@dataclass(frozen=True)
class OCRResult:
    """The lines read, top to bottom, their mean confidence (``None``: no text) and the
    milliseconds it took."""

    text: str
    confidence: float | None
    ms: float


class OCRBackend(Protocol):
    """Reads the text in an image (blocking; the engine calls it in a worker thread)."""

    def read(self, image: CleanImage) -> OCRResult: ...


class RapidOCRBackend:
    """RapidOCR (``rapidocr-onnxruntime``), loaded on first use, one read at a time.

    Args:
        min_confidence: lines recognised with less confidence are dropped.
        max_pixels: larger images are scaled down to this many pixels first (a
            1080×2400 phone screenshot to about 820×1830): the detector's time and
            memory grow with the area. Below about 0.8 megapixels, words of a phone
            screenshot begin to run together ("SenatorJaneDoe"), so the default
            leaves a 1080×1350 image as it is.
    """

    def __init__(self, min_confidence: float = 0.5, max_pixels: int = 1_500_000) -> None:
        self.min_confidence = min_confidence
        self.max_pixels = max_pixels
        self._engine: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            self._load()

    def _load(self) -> None:
        if self._engine is not None:
            return
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as exc:  # pragma: no cover - the local extra installs it
            raise ModelUnavailableError(
                "reading text in images needs rapidocr-onnxruntime "
                "(pip install 'zofia-factcheck[local]'), or set [images] ocr = \"none\""
            ) from exc
        self._engine = RapidOCR()

    def read(self, image: CleanImage) -> OCRResult:
        started = time.perf_counter()
        with self._lock:
            self._load()
            found, _ = self._engine(_scaled(image.data, self.max_pixels))
        lines = _reading_order(found or [])
        kept = [(text, score) for text, score in lines if score >= self.min_confidence]
        confidence = sum(s for _, s in kept) / len(kept) if kept else None
        return OCRResult(
            text="\n".join(t for t, _ in kept),
            confidence=round(confidence, 4) if confidence is not None else None,
            ms=round((time.perf_counter() - started) * 1000, 1),
        )


def _scaled(data: bytes, max_pixels: int) -> Any:
    """The image as the BGR array RapidOCR takes, at most ``max_pixels`` in area."""
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        rgb = image.convert("RGB")
    area = rgb.width * rgb.height
    if area > max_pixels:
        scale = (max_pixels / area) ** 0.5
        size = (max(1, int(rgb.width * scale)), max(1, int(rgb.height * scale)))
        rgb = rgb.resize(size, Image.Resampling.LANCZOS)
    return np.ascontiguousarray(np.asarray(rgb)[:, :, ::-1])


def _reading_order(found: list[Any]) -> list[tuple[str, float]]:
    """RapidOCR's boxes as lines, top to bottom, left to right within a line (boxes
    whose vertical centres are within half a line height are one line)."""
    boxes = []
    for box, text, score in found:
        ys = [p[1] for p in box]
        xs = [p[0] for p in box]
        boxes.append(((min(ys) + max(ys)) / 2, max(ys) - min(ys), min(xs), str(text), float(score)))
    boxes.sort(key=lambda b: (b[0], b[2]))
    rows: list[list[tuple[float, float, float, str, float]]] = []
    for b in boxes:
        if rows and abs(rows[-1][0][0] - b[0]) < max(rows[-1][0][1], b[1]) / 2:
            rows[-1].append(b)
        else:
            rows.append([b])
    lines = []
    for row in rows:
        row.sort(key=lambda b: b[2])
        text = " ".join(b[3].strip() for b in row if b[3].strip())
        if text:
            lines.append((text, min(b[4] for b in row)))
    return lines
