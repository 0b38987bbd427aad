"""What the configured engine is made of, and whether each part answers.

``zofia doctor`` prints these findings. Each part is tried the way a check uses it:
the models are loaded, each LLM server gets one small request with a schema and a
request for log-probabilities (which also teaches an ``auto`` backend its mode), each
search backend one query, the Wikipedia source its article count.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Literal

from .config import EngineSettings
from .errors import ZofiaError
from .llm.base import ChatMessage, CompletionRequest, LLMBackend
from .llm.router import LLMRouter
from .retrieval.web.base import SearchBackend, WebQuery

__all__ = ["Finding", "Status", "diagnose_engine"]

Status = Literal["ok", "warning", "missing"]

PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
PROBE_MESSAGES = (
    ChatMessage("system", "You answer with one JSON object."),
    ChatMessage("user", 'Reply with the JSON object {"ok": true}.'),
)


@dataclass(frozen=True)
class Finding:
    """One part of the set-up. ``missing`` means a check cannot run without it;
    ``warning`` that checks run, with less (no web evidence, no probabilities)."""

    part: str
    status: Status
    summary: str


async def _timed(work: Awaitable[object]) -> float:
    started = time.perf_counter()
    await work
    return time.perf_counter() - started


async def _guard(part: str, needed: bool, probe: Awaitable[Finding]) -> Finding:
    try:
        return await probe
    except (ZofiaError, OSError) as exc:
        return Finding(part, "missing" if needed else "warning", f"failed: {exc}")


async def _llm(backend: LLMBackend, roles: list[str], model: str) -> Finding:
    part = f"LLM {backend.name} ({', '.join(roles)})"
    listed: list[str] | None = None
    lister = getattr(backend, "list_models", None)
    if lister is not None:
        listed = await lister()
    load = await _timed(asyncio.to_thread(backend.load))
    where = getattr(backend, "base_url", "") or str(getattr(backend, "model_path", "") or "")
    request = CompletionRequest(
        messages=PROBE_MESSAGES, model=model, schema=PROBE_SCHEMA, max_tokens=24, top_logprobs=1
    )
    reply = await backend.complete(request)
    mode = getattr(backend, "mode", None) or "grammar (llama.cpp)"
    facts = [
        f"model {model or reply.model}" + (f" at {where}" if where else ""),
        f"structured output: {mode}",
        f"logprobs: {'yes' if reply.logprobs else 'no'}",
        f"answered in {reply.latency_ms / 1000:.1f} s",
    ]
    if load > 0.5:
        facts.append(f"loaded in {load:.1f} s")
    status: Status = "ok" if reply.logprobs else "warning"
    if listed is not None and model and model not in listed:
        facts.insert(1, f"the server lists no model {model!r} (it lists {', '.join(listed[:5])})")
        status = "warning"
    return Finding(part, status, "; ".join(facts))


async def _ner(settings: EngineSettings) -> Finding:
    from .retrieval.ner import build_ner_backend

    backend = build_ner_backend(settings.ner)
    seconds = await _timed(asyncio.to_thread(backend.load))
    return Finding(f"NER {settings.ner.backend}", "ok", f"loaded in {seconds:.1f} s")


async def _encoder(settings: EngineSettings) -> Finding:
    from .encoder import SentenceTransformerEncoder

    s = settings.encoder
    encoder = SentenceTransformerEncoder(s.model, s.device, s.batch_size)
    seconds = await _timed(asyncio.to_thread(encoder.load))
    name = s.model or "all-MiniLM-L6-v2 (packaged)"
    return Finding(
        "encoder", "ok", f"{name}, {encoder.dimension} dimensions, loaded in {seconds:.1f} s"
    )


async def _web(settings: EngineSettings) -> list[Finding]:
    from .retrieval.web.factory import build_search_backends

    backends = build_search_backends(settings.web)
    if not backends:
        return [
            Finding("web search", "warning", "off: no backend configured, no open-web evidence")
        ]
    found = []
    for backend in backends:
        try:
            found.append(
                await _guard(backend.name, False, _search(backend, WebQuery(("fact check",))))
            )
        finally:
            await backend.aclose()
    return found


async def _search(backend: SearchBackend, query: WebQuery) -> Finding:
    hits = await backend.search(query)
    return Finding(backend.name, "ok", f"a test query answered with {len(hits)} results")


async def _wikipedia(settings: EngineSettings) -> Finding:
    from .retrieval.wikipedia.factory import build_wikipedia_backend

    backend = build_wikipedia_backend(settings.wikipedia)
    if backend is None:
        return Finding("Wikipedia", "warning", "off (wikipedia.backend = none)")
    try:
        count = await backend.count_articles()
    finally:
        await backend.aclose()
    articles = "articles: unknown" if count is None else f"{count:,} articles"
    return Finding(backend.name, "ok", articles)


async def _images(settings: EngineSettings, vision: bool) -> list[Finding]:
    """The OCR, tried on an image drawn here; the vision role and reverse search named."""
    s = settings.images
    if not s.enabled:
        return [Finding("images", "warning", "off: image posts are refused")]
    found = [await _guard("OCR", False, _ocr(settings))]
    if not vision:
        found.append(Finding("vision", "warning", "none: images are read for their text only"))
    if s.reverse.backend == "none":
        found.append(Finding("reverse image search", "warning", "off: offline"))
    else:  # a search costs quota: configured, not tried
        found.append(Finding("reverse image search", "ok", f"{s.reverse.backend}, not tried"))
    return found


async def _ocr(settings: EngineSettings) -> Finding:
    if settings.images.ocr == "none":
        return Finding("OCR", "warning", "off: images are not read")
    from PIL import Image, ImageDraw, ImageFont

    from .images.decode import clean_image
    from .images.ocr import RapidOCRBackend

    drawn = Image.new("RGB", (640, 160), "white")
    ImageDraw.Draw(drawn).text(
        (20, 50), "zofia doctor", fill="black", font=ImageFont.load_default(48)
    )
    with io.BytesIO() as out:
        drawn.save(out, format="PNG")
        image = clean_image(out.getvalue(), max_bytes=10**6, max_pixels=10**6)
    ocr = RapidOCRBackend(settings.images.min_ocr_confidence, settings.images.max_ocr_pixels)
    seconds = await _timed(asyncio.to_thread(ocr.load))
    read = await asyncio.to_thread(ocr.read, image)
    if "doctor" not in read.text.casefold():
        return Finding("OCR", "warning", f"RapidOCR read {read.text!r} for 'zofia doctor'")
    return Finding(
        "OCR",
        "ok",
        f"RapidOCR, loaded in {seconds:.1f} s, read a test line in {read.ms / 1000:.1f} s",
    )


async def diagnose_engine(settings: EngineSettings) -> list[Finding]:
    """Try every part the settings name; nothing here raises for a part that fails.

    Returns:
        One finding per part: the LLM backends (one per distinct server, with the
        roles routed to it), NER, the encoder, each web backend, Wikipedia, and the
        parts of image posts (the OCR, the vision role, reverse image search).
    """
    findings: list[Finding] = []
    try:
        router = LLMRouter(settings.llm)
    except ZofiaError as exc:
        return [Finding("LLM", "missing", f"failed: {exc}")]
    vision = router.has_vision
    try:
        for backend in router.backends:
            routes = [(r, route) for r, route in router.routes.items() if route.backend is backend]
            roles = [role for role, _ in routes]
            model = routes[0][1].model if backend.name != "embedded" else ""
            findings.append(await _guard(f"LLM {backend.name}", True, _llm(backend, roles, model)))
    finally:
        await router.aclose()
    findings.append(await _guard("NER", True, _ner(settings)))
    findings.append(await _guard("encoder", True, _encoder(settings)))
    findings.extend(await _web(settings))
    findings.append(await _guard("Wikipedia", False, _wikipedia(settings)))
    findings.extend(await _images(settings, vision))
    return findings
