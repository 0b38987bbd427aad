"""Several sequences decoded together in one llama.cpp context, with shared prefixes.

:class:`BatchDecoder` owns the context of a loaded model and one worker thread; calls
:meth:`~BatchDecoder.submit` a :class:`~zofia_engine.llm.llama_calls.Generation` and
wait on its future. The context holds ``n_seq`` sequences (slots), one per call being
answered at once.

**Batching.** Each generation step puts the pending token of every sequence that is
generating into one ``llama_batch`` (one seq id each, in id order; llama.cpp runs
separate streams in one pass only when their ids are consecutive, so an idle stream in
between gets a placeholder token, removed after the decode) and calls ``llama_decode``
once; each sequence then samples from its own logits with its own sampler (grammar,
temperature, logprobs, ``max_tokens``, end of generation, cancellation). A new
sequence's prompt is evaluated in chunks of ``n_batch`` tokens, one chunk per loop,
each in a decode of its own between generation steps, so that running replies keep
advancing while a long prompt is read. Separate decodes keep every token's arithmetic
exactly as when the call runs alone (llama.cpp splits batches of several sequences
into equal parts per sequence, which would cut prompts differently), so at
temperature 0 a reply does not depend on what runs beside it.

**Shared prefixes.** Each slot keeps the list of tokens in its KV cache, also after
its call has finished (a prefix cache). A new call takes the longest common token
prefix with any slot: a free slot holding it is reused in place (positions from the
prefix on are removed); a prefix held by a running sequence is copied into a free slot
(``llama_memory_seq_cp``, then the tail removed). Only the rest of the prompt is
evaluated; the last prompt token always is, for its logits. A call whose prompt shares
at least :data:`MIN_WAIT` more tokens with a prompt still being read waits until that
part is in the cache, so the calls of one check evaluate their system and post
messages once.

**Context.** Sequences have streams of their own (``kv_unified`` off): a cell's
position in its stream is then the same as when the call runs alone, which the exact
equality above needs. llama.cpp divides ``n_ctx`` evenly: each sequence has a window
of ``n_ctx / n_seq`` tokens (:attr:`BatchDecoder.window`), and a prefix is copied as
its whole stream (a memory copy of the stream's K and V, at the next decode).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .llama_calls import Generation

if TYPE_CHECKING:
    from concurrent.futures import Future

    from llama_cpp import Llama

__all__ = ["MIN_WAIT", "BatchDecoder", "common_prefix", "open_context"]

MIN_WAIT = 16  # tokens of a prompt being read that are worth waiting for


def open_context(llm: Llama, *, n_ctx: int, n_batch: int, n_seq: int, n_threads: int) -> None:
    """Give ``llm`` a context for ``n_seq`` sequences of ``n_ctx / n_seq`` tokens each.

    llama-cpp-python's ``Llama`` always makes a context for one sequence; this one
    replaces it (``llm.ctx`` is then the new context, freed by ``llm.close()``).
    """
    import llama_cpp
    from llama_cpp import _internals

    # The settings llama-cpp-python chose (flash attention off, ...), for this context too.
    params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
    params.n_ctx = n_ctx
    params.n_batch = params.n_ubatch = max(n_batch, n_seq)
    params.n_seq_max = n_seq
    params.kv_unified = False
    params.n_threads = params.n_threads_batch = n_threads
    context = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
    old: Any = llm._ctx
    llm._ctx = context
    old.close()
    llm._stack.enter_context(contextlib.closing(context))
    llm.context_params = params


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass(eq=False)
class _Slot:
    seq_id: int
    tokens: list[int] = field(default_factory=list)  # in the KV cache, positions 0..n-1
    job: Generation | None = None
    used_at: int = 0  # when its last call was admitted or finished (for eviction)


class BatchDecoder:
    """Runs :class:`Generation` s on ``llm``, several at once (see the module's text).

    Args:
        llm: a model whose context :func:`open_context` made for ``n_seq`` sequences.
        n_seq: sequences decoded together (the context's ``n_seq_max``).
        n_batch: prompt tokens evaluated per decode.
        lock: held around every decode and sampling step.
    """

    def __init__(self, llm: Llama, *, n_seq: int, n_batch: int, lock: threading.Lock) -> None:
        import llama_cpp

        self._llm = llm
        self._ctx = llm._ctx
        self._memory = llama_cpp.llama_get_memory(self._ctx.ctx)
        self._n_batch = n_batch
        self._lock = lock
        self._batch = llama_cpp.llama_batch_init(max(n_batch, n_seq), 0, 1)
        self._slots = [_Slot(i) for i in range(n_seq)]
        self._clock = itertools.count(1)
        self._inbox: list[Generation] = []
        self._waiting: list[Generation] = []  # the worker's own: arrived, not admitted
        self._order: list[_Slot] = []  # running slots, in the order they were admitted
        self._cond = threading.Condition()
        self._closing = False
        self.window = int(llama_cpp.llama_n_ctx_seq(self._ctx.ctx))
        self._thread = threading.Thread(target=self._run, name="llama-batch", daemon=True)
        self._thread.start()

    def running(self) -> list[Generation]:
        """The calls holding a sequence now (their prompt being read or their reply being
        written), in sequence order: a snapshot, taken without waiting for the worker."""
        return [job for slot in self._slots if (job := slot.job) is not None]

    def submit(self, job: Generation) -> Future[Generation]:
        """Queue ``job``; its future gets it back finished (or the error that ended it)."""
        with self._cond:
            if self._closing:
                raise RuntimeError("the model was closed")
            self._inbox.append(job)
            self._cond.notify()
        return job.future

    def close(self) -> None:
        """Finish the queued and running calls, stop the worker, free the batch."""
        import llama_cpp

        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()
        llama_cpp.llama_batch_free(self._batch)

    # ------------------------------------------------------------------ the worker

    def _run(self) -> None:
        while True:
            with self._cond:
                self._waiting += self._inbox
                self._inbox.clear()
                if not self._order and not self._waiting:
                    if self._closing:
                        return
                    self._cond.wait()
                    continue
            try:
                self._admit()
                self._step()
            except Exception as exc:  # a failed decode: its sequences end with the error
                for slot in list(self._order):
                    self._fail(slot, exc)

    def _admit(self) -> None:
        for job in list(self._waiting):
            if job.cancel.is_set():
                self._waiting.remove(job)
                job.end("cancelled")
                job.future.set_result(job)
                continue
            plan = self._plan(job)
            if plan is None:
                continue
            self._waiting.remove(job)
            try:
                self._place(job, *plan)
            except Exception as exc:
                job.future.set_exception(exc)

    def _plan(self, job: Generation) -> tuple[_Slot, _Slot | None, int] | None:
        """Where ``job`` goes: (slot, slot to copy the prefix from, prefix length);
        ``None`` while no slot is free or a prompt being read will soon share more."""
        free = [s for s in self._slots if s.job is None]
        if not free:
            return None
        shared = {s.seq_id: common_prefix(s.tokens, job.prompt) for s in self._slots}
        known = max(shared.values())
        for slot in self._order:
            assert slot.job is not None
            if not slot.job.prompt_done and (
                common_prefix(slot.job.prompt, job.prompt) >= known + MIN_WAIT
            ):
                return None
        best_free = max(free, key=lambda s: (shared[s.seq_id], s.used_at))
        spare = min(free, key=lambda s: (shared[s.seq_id], s.used_at))
        if known > shared[best_free.seq_id]:
            source = max(self._order, key=lambda s: shared[s.seq_id])
            return spare, source, known
        if known == 0:
            return spare, None, 0
        return best_free, None, known

    def _place(self, job: Generation, slot: _Slot, source: _Slot | None, prefix: int) -> None:
        import llama_cpp

        prefix = min(prefix, len(job.prompt) - 1)  # the last prompt token gives the logits
        with self._lock:
            if source is not None:  # another stream: a copy of the whole stream, then trimmed
                llama_cpp.llama_memory_seq_rm(self._memory, slot.seq_id, -1, -1)
                llama_cpp.llama_memory_seq_cp(self._memory, source.seq_id, slot.seq_id, -1, -1)
                slot.tokens = list(source.tokens)
            if not llama_cpp.llama_memory_seq_rm(self._memory, slot.seq_id, prefix, -1):
                llama_cpp.llama_memory_seq_rm(self._memory, slot.seq_id, -1, -1)
                prefix = 0  # a model whose memory cannot be cut (recurrent): start afresh
        del slot.tokens[prefix:]
        job.reused = job.evaluated = prefix
        slot.job = job
        slot.used_at = next(self._clock)
        self._order.append(slot)

    def _step(self) -> None:
        """One prompt chunk (of the earliest sequence still reading), then one
        generation step of every sequence with a token to evaluate."""
        for slot in list(self._order):
            assert slot.job is not None
            if slot.job.cancel.is_set():
                slot.job.end("cancelled")
                self._release(slot)
        reading = [s for s in self._order if s.job is not None and not s.job.prompt_done]
        if reading:
            self._read(reading[0])
        writing = [s for s in self._order if s.job is not None and s.job.pending is not None]
        if writing:
            self._write(writing)

    def _read(self, slot: _Slot) -> None:
        job = slot.job
        assert job is not None
        start = job.evaluated
        chunk = job.prompt[start : start + self._n_batch]
        last = start + len(chunk) == len(job.prompt)
        n = len(chunk)
        with self._lock:
            self._decode([(slot, t, start + i, last and i == n - 1) for i, t in enumerate(chunk)])
            slot.tokens += chunk
            job.evaluated += n
            try:
                running = job.take(self._llm, self._ctx, n - 1) if last else True
            except Exception as exc:  # e.g. a grammar that allows no token
                self._fail(slot, exc)
                return
        if not running:
            self._release(slot)

    def _write(self, slots: list[_Slot]) -> None:
        """One token of each of ``slots``, in one decode. llama.cpp decodes separate
        streams in one pass only when their seq ids are consecutive, so the entries go
        in seq id order, and every stream in between that has no token to evaluate
        gets a placeholder (removed again after the decode)."""
        import llama_cpp

        writing = {s.seq_id for s in slots}
        low, high = min(writing), max(writing)
        entries: list[tuple[_Slot, int, int, bool]] = []
        for slot in self._slots[low : high + 1]:
            token = slot.job.pending if slot.job is not None else None
            if slot.seq_id in writing and token is not None:
                entries.append((slot, token, len(slot.tokens), True))
            else:
                entries.append((slot, 0, len(slot.tokens), False))
        ended: list[_Slot] = []
        with self._lock:
            self._decode(entries)
            for i, (slot, token, pos, wanted) in enumerate(entries):
                if not wanted:
                    llama_cpp.llama_memory_seq_rm(self._memory, slot.seq_id, pos, -1)
                    continue
                assert slot.job is not None
                slot.tokens.append(token)
                slot.job.pending = None
                try:
                    running = slot.job.take(self._llm, self._ctx, i)
                except Exception as exc:  # e.g. a grammar that allows no token
                    self._fail(slot, exc)
                    continue
                if not running:
                    ended.append(slot)
        for slot in ended:
            self._release(slot)

    def _decode(self, entries: list[tuple[_Slot, int, int, bool]]) -> None:
        """Decode ``entries``: (sequence, token, position, wants logits)."""
        import llama_cpp

        batch = self._batch
        batch.n_tokens = len(entries)
        for i, (slot, token, pos, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = slot.seq_id
            batch.logits[i] = logits
        status = llama_cpp.llama_decode(self._ctx.ctx, batch)
        if status != 0:
            raise RuntimeError(f"llama_decode returned {status}")

    def _release(self, slot: _Slot) -> None:
        """The slot's call is done: its future gets the result, the slot keeps its cache."""
        job = slot.job
        assert job is not None
        slot.job = None
        slot.used_at = next(self._clock)
        self._order.remove(slot)
        job.future.set_result(job)

    def _fail(self, slot: _Slot, exc: BaseException) -> None:
        """The slot's call ends with ``exc``; its cache, maybe half written, is dropped."""
        import llama_cpp

        job = slot.job
        if job is None:
            return
        slot.job = None
        self._order.remove(slot)
        llama_cpp.llama_memory_seq_rm(self._memory, slot.seq_id, -1, -1)
        slot.tokens = []
        if not job.future.done():
            job.future.set_exception(exc)
