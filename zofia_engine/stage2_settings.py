"""Stage 2's settings (ZoFia §4, RADAR, ToE): the language models and their roles, the
agents, triage, the debate and its early stop, the evidence's weighing and the tree
of claims."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .settings_base import SettingsSection

__all__ = [
    "ROLES",
    "AgentSettings",
    "DebateSettings",
    "EmbeddedSettings",
    "EvidenceSettings",
    "LLMSettings",
    "OpenAISettings",
    "Role",
    "RoleSettings",
    "StanceSettings",
    "TreeSettings",
    "TriageSettings",
]

ROLES = ("triage", "linguist", "expert", "extractor", "verifier", "debater", "judge")
Role = Literal[
    "triage", "linguist", "expert", "extractor", "verifier", "debater", "judge", "vision"
]


class OpenAISettings(SettingsSection):
    """Any OpenAI-compatible chat-completions server (OpenAI, DeepSeek, vLLM, Ollama,
    llama.cpp server). Empty ``base_url`` means api.openai.com."""

    base_url: str = ""
    api_key: str = ""
    model: str = "gpt-4o-mini"
    # "auto": learn once per server which of the modes below it takes, strictest first.
    # "json_schema": a strict schema (OpenAI, vLLM, llama-server); "json_object_schema":
    # json_object carrying the schema (llama-cpp-python's server); "json_object": JSON
    # mode, the schema in the prompt (DeepSeek); "none": the schema in the prompt alone.
    structured_output: Literal[
        "auto", "json_schema", "json_object_schema", "json_object", "none"
    ] = "auto"
    logprobs: bool = True
    requests_per_second: float = Field(0.0, ge=0)


class EmbeddedSettings(SettingsSection):
    """llama.cpp in-process. Empty ``model_path`` means the packaged
    Qwen2.5-Coder-1.5B-Instruct Q4_K_M (assembled once into the user cache)."""

    model_path: str = ""
    # Shared evenly by the [llm] concurrency sequences: 4096 tokens each by default.
    n_ctx: int = Field(16384, ge=512)
    n_threads: int = Field(0, ge=0)
    n_batch: int = Field(512, ge=8)
    # llama.cpp repacks quantised weights into memory of its own for the CPU; mapped,
    # the file's pages stay resident too.
    use_mmap: bool = False
    logprobs: bool = True


class RoleSettings(SettingsSection):
    """Where one agent role's calls go; empty fields fall back to ``[llm]``.
    ``max_tokens`` 0 keeps each step's own cap on reply length."""

    backend: Literal["embedded", "openai", ""] = ""
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    max_tokens: int = Field(0, ge=0)


class LLMSettings(SettingsSection):
    """The language models of Stage 2 (paper §4). Temperature 0 as in the paper."""

    backend: Literal["embedded", "openai"] = "embedded"
    temperature: float = Field(0.0, ge=0, le=2)
    timeout_s: float = Field(120.0, gt=0)
    retries: int = Field(3, ge=0, le=10)
    max_calls_per_check: int = Field(60, ge=1)
    # No check spends more; the check service reserves this much of the day's token
    # budget for each check until it ends (the embedded full depth spends about 47,000).
    max_tokens_per_check: int = Field(100_000, ge=1000)
    # Independent calls decoded together on the embedded model, or sent at once to an
    # OpenAI-compatible server.
    concurrency: int = Field(4, ge=1, le=16)
    openai: OpenAISettings = OpenAISettings()
    embedded: EmbeddedSettings = EmbeddedSettings()
    roles: dict[Role, RoleSettings] = {}

    @model_validator(mode="after")
    def _openai_has_a_key(self) -> LLMSettings:
        vision = self.roles.get("vision")
        uses_openai = (
            self.backend == "openai"
            or any(r.backend == "openai" for r in self.roles.values())
            or (vision is not None and bool(vision.model) and not vision.base_url)
        )
        official = not self.openai.base_url
        if vision is not None and vision.backend == "embedded":
            raise ValueError(
                "llm.roles.vision: the embedded model reads no images; name a vision "
                'model on an OpenAI-compatible server (backend = "openai")'
            )
        if uses_openai and official and not self.openai.api_key:
            raise ValueError(
                "llm uses api.openai.com but llm.openai.api_key is empty "
                "(set OPENAI_API_KEY, or llm.openai.base_url for a local server)"
            )
        return self


class AgentSettings(SettingsSection):
    """Stage 2 agents and debate (paper §4.1-4.2, Algorithm 1)."""

    linguist_dimensions: list[
        Literal["sentence", "word", "grammar", "emotion", "information_quality"]
    ] = ["sentence", "word", "grammar", "emotion", "information_quality"]
    max_sub_claims: int = Field(4, ge=0, le=8)
    min_sub_claims: int = Field(2, ge=0, le=8)
    # A claim is kept when the post's sentence it names carries this share of its
    # content words; else the extractor wrote it, not the post, and it is dropped.
    claim_support: float = Field(0.5, ge=0, le=1)
    # Eq. 9 over the evidence's sentences: each claim reads its top-k sentences whose
    # cosine to it is at least theta_sim (the paper's 0.1).
    theta_sim: float = Field(0.1, ge=-1, le=1)
    top_k_sentences: int = Field(6, ge=1, le=50)
    # A cited sentence counts only when its cosine to the claim reaches this; below, it
    # is not about the claim. Measured (bench/citation_threshold.py): 95 % of the common
    # claims' settling sentences reach 0.49; 25 % of off-subject sentences reach 0.45.
    min_citation_similarity: float = Field(0.45, ge=-1, le=1)
    # Each claim's two closest sentences are also asked, one by one, whether they and the
    # claim can both be true; a "no" with at least this probability refutes the claim
    # (a small model reads a sentence on the same subject as support). Needs token
    # probabilities; 1.1 turns it off. Measured (bench/reader_accuracy.py): 0.7 separated
    # the tuning claims best, but true news against background sentences reached 0.71
    # ("Apple unveiled a new iPhone" against "The iPhone is a line of smartphones"), and
    # a refuted core claim makes a post false: 0.8 keeps such misreadings out.
    contradiction_at: float = Field(0.8, ge=0, le=1.1)
    # How claims are read at the adaptive depth. "parts": what the evidence about the
    # claim's subject says for each of its checkable parts (places, people, dates,
    # numbers, nationalities, categories …), compared by code; a claim with no such part
    # is read as a whole, citing only sentences about its subject. "stance": every claim
    # read as a whole (a stance and the sentences that show it, and the contradiction
    # question above). A post in another language than English is read as a whole (the
    # parser is English). docs/verdicts.md has the measurements behind the default.
    reading: Literal["parts", "stance"] = "parts"
    # A claim read part by part is settled only when the model says the passage says the
    # claim with the passage's own words in its parts with at least this probability.
    said_at: float = Field(0.5, ge=0, le=1)
    # Two readings must agree before a claim read part by part settles: "presence"
    # also asks, by code and over every value of the sentences about its subject,
    # whether each claimed value is there at all (docs/verdicts.md); "none" settles on
    # the part comparison alone (the last wave's rule, for comparison).
    second_reading: Literal["presence", "none"] = "presence"
    # A part the comparison leaves unsettled (the model said "not stated", or gave a value
    # that neither agrees nor differs): "presence" counts it as answered by the sentence
    # the second reading finds the claim's own value in (the yes/no and the agreement
    # still decide); "unsettled" leaves the claim unsettled.
    unsettled_part: Literal["presence", "unsettled"] = "presence"
    # A claim is read against a fact-checker's answer to it when a document of a
    # fact-check archive (the local corpus) or a published fact-check holds a sentence
    # within this cosine of it; it then settles only where the stance reading or its
    # figures and a yes/no on the answer's findings agree (docs/verdicts.md). 1.1: off,
    # the default until its calibration is fitted on more than LIAR-PLUS's dev sample
    # (bench/liar_settle.py turns it on at 0.55).
    answered_at: float = Field(1.1, ge=0, le=1.1)
    # Two category words ("mammal", "fish") are different kinds of thing under this
    # cosine; from it they may be two words for one ("film", "movie").
    same_kind_at: float = Field(0.5, ge=-1, le=1)
    # Searching again (adaptive depth only): a core claim the first search left unsettled
    # gets up to `search_rounds` rounds of planned queries (at most two each), a query
    # within `query_repeat_at` cosine of one already run is not run (FIRE's stop), and
    # the loop stops once the claim is settled, a round finds nothing new, or
    # `search_seconds` have passed. 0 rounds: off.
    search_rounds: int = Field(2, ge=0, le=5)
    search_seconds: float = Field(20.0, ge=0)
    query_repeat_at: float = Field(0.9, ge=0, le=1)
    # "adaptive": the evidence is read first, and the full debate is held only when it
    # settled a claim (else one round gives the lean); the tree of claims and the
    # per-document stance calls are left out. "full": the paper's whole run.
    depth: Literal["adaptive", "full"] = "adaptive"
    max_post_chars: int = Field(6000, ge=200)
    max_evidence_chars: int = Field(600, ge=50)
    # No verdict without evidence: true, false or misleading needs a claim whose quote
    # was found in the retrieved text (or a published fact-check); else it is unproven.
    # Off reproduces the paper, which always rules real or fake.
    require_evidence: bool = True


class DebateSettings(SettingsSection):
    """The debate (ZoFia's Algorithm 1, or RADAR's role-anchored debate) and when it stops.

    ``zofia``: pro and con, the judge rules or lets it continue, at most ``max_rounds``
    (the paper: 5). ``radar``: a Politician and a Scientist argue from the shared
    evidence in three phases (opening, rebuttal, closing), at most 3 rounds, both of a
    round at once. With ``early_stop``, after each round the debate ends when RADAR's
    stop margin s = p(STOP) − p(CONTINUE) reaches ``stop_margin`` (τs) and the judge's
    top outcome probability reaches ``verdict_confidence`` (τv); the defaults are the
    paper's for LLaMA3-8B, ``thresholds`` holds others per judge model name
    (``zofia calibrate`` prints them). Without token probabilities the judge's word
    decides, as with ``early_stop = "judge"``.
    """

    style: Literal["zofia", "radar"] = "zofia"
    max_rounds: int = Field(5, ge=1, le=10)
    min_rounds: int = Field(1, ge=1, le=10)
    # "thresholds": RADAR's controller; "judge": the judge's word alone (Algorithm 1);
    # "never": every round is held (zofia calibrate collects its scores that way).
    early_stop: Literal["thresholds", "judge", "never"] = "thresholds"
    stop_margin: float = Field(-0.15, ge=-1, le=1)
    verdict_confidence: float = Field(0.7, ge=0, le=1)
    # Measured with `zofia calibrate` (README, "Verdicts"): the packaged model's pair.
    thresholds: dict[str, tuple[float, float]] = {
        "qwen2.5-coder-1.5b-instruct-q4_k_m": (-0.55, 0.5)
    }
    # At the adaptive depth a debate text repeats an earlier one (and is not shown) when
    # this share of its word trigrams occurs in it; a round of repeats ends the debate
    # (bench/repeat_threshold.py). The full depth shows every turn, as the papers do.
    repeat_threshold: float = Field(0.8, ge=0, le=1)
    # Divide the judge's outcome probabilities by its prior on a content-free post
    # (contextual calibration). On: `zofia calibrate` measured that it lowers the
    # packaged model's calibration error (0.224 to 0.179 on 16 LIAR items).
    contextual_calibration: bool = True

    def taus(self, model: str) -> tuple[float, float]:
        """(τs, τv) for the judge model ``model``: the longest key of ``thresholds`` it
        contains, else the defaults."""
        name = model.casefold()
        keys = sorted((k for k in self.thresholds if k.casefold() in name), key=len)
        return self.thresholds[keys[-1]] if keys else (self.stop_margin, self.verdict_confidence)


class EvidenceSettings(SettingsSection):
    """What each document is worth (ToE's evidence objects, AgentFact's source rule).

    ``stance``: one short call per web document, all at once, on whether it supports or
    refutes the core claim, with the sentence that shows it. ``credibility``: each
    document's source rated from the news-domain quality data shipped with the engine;
    with it, support from a low-quality or satire source counts against the post
    (AgentFact), and never carries a ``true`` verdict on its own.
    """

    stance: bool = True
    credibility: bool = True
    max_stance_documents: int = Field(10, ge=0, le=30)


class TreeSettings(SettingsSection):
    """ToE's tree of claims. The core claim is the root, the extracted sub-claims its
    children; a node whose own reliability is below ``expand_below`` (the root always,
    once) is split into 2 to 4 sub-claims, one dimension each, with importances
    summing to 1. A parent's veracity is its children's, weighted by reliability times
    importance. The search stops when the root is decisive (reliability above
    ``decide_above`` and veracity outside [``false_below``, ``true_above``]) or has
    converged (veracity within ``converge_within`` over the last 3 updates with
    reliability above ``expand_below``). The root's veracity maps to false below
    ``verdict_false_below``, true above ``verdict_true_above``. The paper's values,
    except ``max_depth`` (its 5, here 3). Off: ZoFia's flat claims, exactly.
    """

    enabled: bool = True
    max_depth: int = Field(3, ge=1, le=5)
    max_evaluations: int = Field(20, ge=1, le=100)
    max_documents: int = Field(10, ge=1, le=30)
    expand_below: float = Field(0.7, ge=0, le=1)
    decide_above: float = Field(0.7, ge=0, le=1)
    true_above: float = Field(0.7, ge=0, le=1)
    false_below: float = Field(0.3, ge=0, le=1)
    converge_within: float = Field(0.1, ge=0, le=1)
    verdict_true_above: float = Field(0.6, ge=0, le=1)
    verdict_false_below: float = Field(0.4, ge=0, le=1)


class TriageSettings(SettingsSection):
    """One short call on the post alone before the full check: a checkable claim gets
    the full check; an opinion or greeting, satire, or a likely scam gets a short card.
    A post is taken as not a claim only when the model's token probability of that
    kind is at least ``min_confidence`` (when the backend gives probabilities): a
    skipped claim costs more than a needless check.

    ``overlap``: whether the check starts beside the triage call instead of after it.
    ``"auto"`` overlaps when everything the check may ask runs on this machine (every
    role on the embedded model, and only local sources: the corpus, the offline
    Wikipedia): the calls share one batch and the post's prompt, and a greeting's
    wasted calls cost only idle time. With any paid API or remote source (``"auto"``, or
    ``"never"``) nothing is asked or searched before the triage says there is a claim;
    ``"always"`` trades that for time."""

    enabled: bool = True
    min_confidence: float = Field(0.8, ge=0, le=1)
    overlap: Literal["auto", "always", "never"] = "auto"


class StanceSettings(SettingsSection):
    """How evidence sentences are read against claims.

    ``backend``: ``"llm"`` (the default) lets the verifier LLM judge; ``"nli"`` scores
    each (sentence, claim) pair with ``model``, a transformers sequence classifier.
    ``model``: its hub name or local directory (required for ``"nli"``).
    ``device``: where it runs (``"cpu"``, ``"cuda"``, ``"cuda:1"``).
    ``batch_size``: pairs per forward pass.
    ``labels``: the model's label names mapped to ``supports`` / ``refutes`` /
    ``neither``, for models whose names are not recognised (``LABEL_0``, ``LABEL_1``);
    empty: entail/support, contradict/refute and neutral/unsupported/not are guessed.
    ``min_probability``: the least probability with which a sentence must support or
    refute a claim to count as its evidence.
    """

    backend: Literal["llm", "nli"] = "llm"
    model: str = ""
    device: str = "cpu"
    batch_size: int = Field(16, ge=1, le=256)
    labels: dict[str, Literal["supports", "refutes", "neither"]] = {}
    min_probability: float = Field(0.5, ge=0, le=1)

    @model_validator(mode="after")
    def _nli_has_a_model(self) -> StanceSettings:
        if self.backend == "nli" and not self.model.strip():
            raise ValueError(
                'stance.backend = "nli" needs stance.model (a hub name or a local path)'
            )
        return self
