"""A post's images read before it is checked: each one decoded within the caps and
cleaned of metadata, its text read offline and searched for the words fact-checkers stamp. The
text read becomes part of the post, each image's under its own marker, so Stage 1
and every agent see it, and so a repeat of the same screenshot is a repeat of the text.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..bounded_work import BoundedThreads
from ..errors import InvalidPostError
from ..image_settings import ImageSettings
from ..post import Post, PostImage, ReadPost
from ..records.images import ImageFinding
from ..refusals import POST_REFUSALS, PostRefusal
from ..text import clean_post
from .decode import CleanImage, ImageRefusedError, clean_image, too_many
from .labels import find_labels
from .ocr import OCRBackend, OCRResult, RapidOCRBackend

__all__ = ["NO_TEXT", "ImageReader", "image_marker"]

log = logging.getLogger(__name__)

NO_TEXT = POST_REFUSALS[PostRefusal.NO_TEXT_IN_IMAGES]


def image_marker(index: int) -> str:
    """The line that opens image ``index``'s text in the post. Its words stay "picture":
    stored posts hold it, and their repeat keys (``text_hash``) are made from it."""
    return f"[Text read from picture {index}]"


@dataclass(frozen=True)
class _Read:
    image: CleanImage
    ocr: OCRResult | None
    note: str = ""


class ImageReader:
    """Reads the images of posts.

    Args:
        settings: the ``[images]`` section.
        ocr: the OCR to use instead of the one the settings name (tests, benchmarks).
    """

    def __init__(self, settings: ImageSettings, *, ocr: OCRBackend | None = None) -> None:
        self.settings = settings
        if ocr is None and settings.ocr == "rapidocr":
            ocr = RapidOCRBackend(settings.min_ocr_confidence, settings.max_ocr_pixels)
        self.ocr = ocr
        # One image at a time (a decoded image can take hundreds of MB), on a thread
        # of its own, with a bounded queue behind it.
        self._worker = BoundedThreads(
            "zofia-images",
            workers=1,
            waiting=settings.max_waiting,
            busy=PostRefusal.IMAGES_BUSY,
            too_slow=PostRefusal.IMAGE_TOO_SLOW,
        )

    def load(self) -> None:
        """Load the OCR models now (blocking)."""
        load = getattr(self.ocr, "load", None)
        if load is not None:
            load()

    async def read(self, post: Post) -> ReadPost:
        """``post`` read: its images cleaned and read, and their text in its text; the
        empty-post rule applied (:meth:`~zofia_engine.post.ReadPost.of`).

        Raises:
            ImageRefusedError: an image is refused (too large, not an image …); the
                message names which one when there are several.
            InvalidPostError: images are off, or there is no text anywhere.
        """
        if not post.images:
            return ReadPost.of(post)
        s = self.settings
        if not s.enabled:  # the caption alone, if there is one
            if post.text.strip():
                return ReadPost.of(post.model_copy(update={"images": ()}))
            raise InvalidPostError(PostRefusal.IMAGES_OFF)
        if len(post.images) > s.max_images:
            raise too_many(len(post.images), s.max_images)
        read = [
            await self._worker.run(
                self._read_one, image.data, n, len(post.images), timeout_s=s.read_timeout_s
            )
            for n, image in enumerate(post.images, 1)
        ]
        caption = post.text.strip()
        blocks = [caption] if caption else []
        findings = []
        for n, done in enumerate(read, 1):
            text = clean_post(done.ocr.text)[0].strip() if done.ocr else ""
            if text:
                blocks.append(f"{image_marker(n)}\n{text}")
            findings.append(_finding(n, done, text))
        if not any(b for b in blocks):
            raise InvalidPostError(PostRefusal.NO_TEXT_IN_IMAGES)
        # Validated again, so that the caption and the images' text keep the length cap.
        fields = post.model_dump(exclude={"text", "images", "original_chars"})
        images = tuple(PostImage(data=d.image.data, media_type=d.image.media_type) for d in read)
        text = "\n\n".join(blocks)
        as_read = Post.model_validate(
            {**fields, "text": text, "images": images, "original_chars": post.original_chars}
        )
        return ReadPost.of(as_read, tuple(findings), caption=bool(caption))

    def _read_one(self, data: bytes, n: int, of: int) -> _Read:
        try:
            image = clean_image(
                data, max_bytes=self.settings.max_bytes, max_pixels=self.settings.max_pixels
            )
        except ImageRefusedError as exc:
            if of > 1:
                raise ImageRefusedError(PostRefusal.NTH_IMAGE, n=n, of=of, refusal=exc) from None
            raise
        if self.ocr is None:
            return _Read(image, None)
        try:
            return _Read(image, self.ocr.read(image))
        except Exception as exc:  # the OCR's own failure: the image is still checked
            log.warning("OCR failed on a %dx%d image: %r", image.width, image.height, exc)
            return _Read(image, OCRResult("", None, 0.0), "its text could not be read")


def _finding(n: int, done: _Read, text: str) -> ImageFinding:
    image, ocr = done.image, done.ocr
    notes = [note for note in (image.note, done.note) if note]
    if ocr is None:
        notes.append("its text was not read (OCR is off)")
    return ImageFinding(
        index=n,
        sha256=image.sha256,
        bytes=image.received_bytes,
        width=image.width,
        height=image.height,
        media_type=image.media_type,
        text=text,
        ocr_confidence=ocr.confidence if ocr and text else None,
        ocr_ms=ocr.ms if ocr else 0.0,
        labels=find_labels(text),
        notes=notes,
    )
