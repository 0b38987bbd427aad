"""Roles routed to their own servers and models; one backend per distinct server."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tests.peers.servers.openai_peer import FakeOpenAI

from zofia_engine.config import EngineSettings
from zofia_engine.llm.base import ChatMessage
from zofia_engine.llm.router import LLMRouter
from zofia_engine.llm.session import StepFailed


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str


def _settings(main: FakeOpenAI, judge: FakeOpenAI, **llm: object) -> EngineSettings:
    return EngineSettings.model_validate(
        {
            "llm": {
                "backend": "openai",
                "openai": {"base_url": main.base_url, "api_key": "k", "model": "small"},
                "roles": {
                    "judge": {"base_url": judge.base_url, "model": "big", "max_tokens": 77},
                    "linguist": {"model": "tiny"},
                },
                **llm,
            }
        }
    )


async def test_each_role_reaches_its_own_server_and_model() -> None:
    async with (
        FakeOpenAI(lambda b: '{"answer": "a"}') as main,
        FakeOpenAI(lambda b: '{"answer": "j"}') as judge,
    ):
        router = LLMRouter(_settings(main, judge).llm)
        assert len(router.backends) == 2  # linguist and the rest share one server
        session = router.session()
        messages = [ChatMessage("user", "hello")]
        a = await session.ask("judge", "j", messages, Reply, max_tokens=200)
        b = await session.ask("linguist", "l", messages, Reply, max_tokens=200)
        c = await session.ask("debater", "d", messages, Reply, max_tokens=200)
        await router.aclose()
    assert (a.value.answer, b.value.answer, c.value.answer) == ("j", "a", "a")
    assert [r["model"] for r in judge.requests] == ["big"]
    assert [r["model"] for r in main.requests] == ["tiny", "small"]
    assert judge.requests[0]["max_tokens"] == 77  # the role's cap beats the step's
    assert main.requests[0]["max_tokens"] == 200
    assert router.describe()["judge"] == "openai:big"
    assert [c.backend for c in session.calls] == ["openai:big", "openai:tiny", "openai:small"]


async def test_the_token_budget_stops_further_calls() -> None:
    async with FakeOpenAI(lambda b: '{"answer": "a"}') as main:
        settings = _settings(main, main, max_tokens_per_check=1000)
        router = LLMRouter(settings.llm)
        session = router.session()
        long = [ChatMessage("user", "word " * 1200)]
        await session.ask("debater", "first", long, Reply, max_tokens=10)
        try:
            await session.ask("debater", "second", long, Reply, max_tokens=10)
        except StepFailed as exc:
            assert "token budget of 1000 spent" in exc.reason
        else:
            raise AssertionError("the second call should have been refused")
        await router.aclose()
    assert len(main.requests) == 1 and len(session.calls) == 1
