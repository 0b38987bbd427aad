"""The packaged GGUF model is checked by SHA-256 before llama.cpp opens it: the digest is
computed once, as the parts are copied, and kept in a sidecar, later starts read the
sidecar, and a file that is not the expected one is refused (and removed) in one clear
sentence."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import types
from pathlib import Path

import pytest

from zofia_engine.errors import ModelUnavailableError
from zofia_engine.llm.gguf import (
    GGUF_MAGIC,
    QWEN_CODER_1_5B,
    PackagedModel,
    file_sha256,
    packaged_model_path,
)

CHUNKS = (GGUF_MAGIC + b"\x03\x00\x00\x00" + b"\0" * 4088, b"padding" * 2000, b"tail")
DIGEST = hashlib.sha256(b"".join(CHUNKS)).hexdigest()


def _model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sha256: str) -> PackagedModel:
    """A fake GGUF in three part modules, as the part packages ship it."""
    names = []
    for i, chunk in enumerate(CHUNKS, 1):
        part = tmp_path / f"part{i}.bin"
        part.write_bytes(chunk)
        module = types.ModuleType(f"zofia_digest_part{i}")
        module.get_part_path = lambda part=part: str(part)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
        names.append(module.__name__)
    return PackagedModel("Fake model", "fake.gguf", tuple(names), "fake-part1 ... 3", sha256)


def _no_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("hashed again")

    monkeypatch.setattr(hashlib, "file_digest", refuse)


def test_the_packaged_model_has_a_digest() -> None:
    assert re.fullmatch(r"[0-9a-f]{64}", QWEN_CODER_1_5B.sha256)


def test_a_wrong_digest_is_refused_and_the_file_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "0" * 64
    model = _model(tmp_path, monkeypatch, wrong)
    cache = tmp_path / "cache"
    with pytest.raises(ModelUnavailableError) as refused:
        packaged_model_path(model, cache_dir=cache)
    message = str(refused.value)
    assert f"its SHA-256 is {DIGEST}, not {wrong}" in message
    assert "the packaged Fake model" in message and "reinstall fake-part1 ... 3" in message
    assert not (cache / "fake.gguf").exists() and not (cache / "fake.gguf.sha256").exists()


def test_the_digest_is_computed_once_and_read_from_the_sidecar_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _model(tmp_path, monkeypatch, DIGEST.upper())  # written either way
    cache = tmp_path / "cache"
    path = packaged_model_path(model, cache_dir=cache)
    assert path.read_bytes() == b"".join(CHUNKS)
    record = json.loads((cache / "fake.gguf.sha256").read_text())
    assert record["sha256"] == DIGEST and record["size"] == path.stat().st_size
    _no_hashing(monkeypatch)
    assert packaged_model_path(model, cache_dir=cache) == path  # a later start: no hashing


def test_the_digest_is_taken_while_the_parts_are_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _model(tmp_path, monkeypatch, DIGEST)
    cache = tmp_path / "cache"
    _no_hashing(monkeypatch)  # no second pass over the assembled file
    path = packaged_model_path(model, cache_dir=cache)
    record = json.loads((cache / "fake.gguf.sha256").read_text())
    assert record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() == DIGEST
    stat = path.stat()
    assert (record["size"], record["mtime_ns"], record["inode"]) == (
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ino,
    )


def test_a_cached_file_changed_after_it_was_hashed_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _model(tmp_path, monkeypatch, DIGEST)
    cache = tmp_path / "cache"
    path = packaged_model_path(model, cache_dir=cache)
    stat = path.stat()
    # Same size, same magic, the modification time put back: only the digest tells.
    tampered = bytearray(path.read_bytes())
    tampered[-1] ^= 0xFF
    path.write_bytes(bytes(tampered))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(ModelUnavailableError, match="is not the expected file"):
        packaged_model_path(model, cache_dir=cache)
    assert not path.exists()
    assert packaged_model_path(model, cache_dir=cache).read_bytes() == b"".join(CHUNKS)


def test_a_forged_or_broken_sidecar_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"".join(CHUNKS))
    sidecar = tmp_path / "model.gguf.sha256"
    sidecar.write_text(json.dumps({"sha256": "f" * 64, "size": 1, "mtime_ns": 0}))
    assert file_sha256(path) == DIGEST  # the record does not match the file: hashed
    sidecar.write_text("not json")
    assert file_sha256(path) == DIGEST
    assert json.loads(sidecar.read_text())["sha256"] == DIGEST
