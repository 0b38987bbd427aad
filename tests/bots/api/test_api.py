"""The HTTP API through real HTTP on 127.0.0.1: the real check service on an SQLite file
(PostgreSQL and a worker for the queued deployment), checking with
:class:`~tests.peers.fakes.fake_checker.FakeChecker` (our ``Checker`` port), as the bots' check-flow
tests do. These prove what the API does around a check (keys, admission, shares,
repeats, refusals, votes, the OpenAPI document), not that any fact-checking happened.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from click.testing import CliRunner

from tests.peers.fakes.fake_checker import FakeChecker, Gate, fake_service
from tests.peers.fixtures.images import ScriptedOCR, headline

from bots.api.app import ApiConfig, build_app, serving_api
from bots.api.checks import requester_of
from bots.api.models import Accepted, CheckState, VoteState
from bots.api.openapi import EXAMPLES, OPENAPI_PATH
from bots.app.settings import Settings
from bots.cli import main
from bots.service.checks import CheckService
from bots.service.shown import report_of
from bots.web.app import public_json
from storage.api_keys import ApiKeys
from storage.sql import first_row
from zofia_engine.image_settings import ImageSettings
from zofia_engine.images.reader import ImageReader

SECRET = "s3cret-for-tests-only"
PUBLIC_URL = "https://factcheck.example.org"
POST = "The city council of Springfield banned bicycles from every street in March."
OTHER = "The river bridge in Springfield will close for repairs in May, officials said."
AS_JSON = {"Content-Type": "application/json"}
GENEROUS = {"user_per_minute": 100, "chat_per_minute": 100, "user_daily": 1000}


def api_settings(tmp_path: Path, **service: Any) -> Settings:
    return Settings.model_validate(
        {
            "storage": {"path": str(tmp_path / "zofia.db"), "secret": SECRET},
            "service": {**GENEROUS, **service},
            "site": {"public_url": PUBLIC_URL},
            # The tests poll every 20 ms: no key's rate binds them (test_api_bounds' do).
            "api": {"max_body_bytes": 100_000, "key_per_minute": 100_000},
        }
    )


@dataclass
class Api:
    """A running API, a client session, and a key named ``tipline``."""

    url: str
    http: aiohttp.ClientSession
    service: CheckService
    keys: ApiKeys
    key: str
    app: web.Application

    async def call(
        self, method: str, path: str, *, key: str | None = None, **kwargs: Any
    ) -> tuple[int, Any, Any]:
        """``(status, JSON body, headers)``; ``key``: this key, not the fixture's."""
        headers = {"Authorization": f"Bearer {self.key if key is None else key}"}
        headers |= kwargs.pop("headers", {})
        async with self.http.request(method, self.url + path, headers=headers, **kwargs) as r:
            return r.status, await r.json(), r.headers

    async def answered(self, path: str, key: str | None = None) -> Any:
        """The body of ``path`` once its check is done or failed."""
        async with asyncio.timeout(20):
            while True:
                status, body, _ = await self.call("GET", path, key=key)
                assert status == 200, body
                if body["status"] in ("done", "failed"):
                    return body
                await asyncio.sleep(0.02)

    async def take(self, route: str, payload: dict[str, Any], key: str | None = None) -> Any:
        """Post ``payload`` to ``route`` and return the answer, polled for if need be."""
        status, body, _ = await self.call("POST", route, json=payload, key=key)
        assert status in (200, 202), body
        return body if status == 200 else await self.answered(body["poll"], key)

    def count(self, table: str) -> int:
        return int(first_row(self.service.store.db.execute(f"SELECT count(*) FROM {table}"))[0])


@contextlib.asynccontextmanager
async def running_api(settings: Settings, checker: FakeChecker) -> AsyncIterator[Api]:
    async with fake_service(settings, checker) as service:
        keys = ApiKeys(service.store.database, service.secret)
        key = keys.add("tipline")
        config = ApiConfig(settings.api, settings.engine.images, settings.site.public_url)
        async with serving_api(service, config, port=0) as runner, aiohttp.ClientSession() as s:
            host, port = runner.addresses[0][:2]
            assert host == "127.0.0.1"
            yield Api(f"http://{host}:{port}", s, service, keys, key, runner.app)


async def test_a_check_is_taken_at_once_then_polled_to_the_report_page_json(
    tmp_path: Path,
) -> None:
    gate = Gate()
    checker = FakeChecker(gate=gate)
    async with running_api(api_settings(tmp_path), checker) as api:
        status, body, headers = await api.call("POST", "/v1/checks", json={"text": POST})
        assert status == 202, body
        accepted = Accepted.model_validate(body)
        assert accepted.poll == f"/v1/checks/{accepted.id}" == headers["Location"]
        assert headers["Retry-After"] == "5" and headers["Cache-Control"] == "no-store"
        await gate.held()
        status, body, headers = await api.call("GET", accepted.poll)
        assert (status, body["status"], body["report"]) == (200, "running", None)
        assert headers["Retry-After"] == "5"
        gate.open()
        state = CheckState.model_validate(await api.answered(accepted.poll))
        assert state.status == "done" and state.repeat is None and state.error == ""
        found = report_of(api.service.store, accepted.id)
        assert found is not None and state.report == public_json(found[1])
        assert state.page == f"{PUBLIC_URL}/c/{accepted.id}"
        review = state.claim_review  # a ClaimReview of the report (docs/api.md)
        assert review is not None and review["url"] == state.page
        assert review["reviewRating"]["alternateName"] == "False"
        assert review["author"]["name"] == "ZoFia" and review["claimReviewed"] == POST[:80]
        assert state.vote is not None and (state.vote.category, state.vote.truth_score) == (
            "info",
            1,
        )
        row = api.service.store.checks.get(accepted.id)
        who = requester_of("tipline")
        assert row is not None and row.platform == "api"
        assert row.chat == api.service.namer.chat("api", who.chat_id)  # the key's chat
        assert len(checker.runs) == 1


async def test_a_repeat_is_answered_from_the_store_at_once(tmp_path: Path) -> None:
    checker = FakeChecker()
    async with running_api(api_settings(tmp_path), checker) as api:
        first = await api.take("/v1/checks", {"text": POST})
        status, body, headers = await api.call("POST", "/v1/checks", json={"text": f" {POST}\n"})
        assert status == 200 and "Location" not in headers
        state = CheckState.model_validate(body)
        assert state.status == "done" and state.repeat == "exact" and state.id != first["id"]
        assert state.report is not None and state.report["verdict"] == "false"
        status, body, _ = await api.call("POST", "/v1/votes", json={"text": POST})
        assert status == 200 and VoteState.model_validate(body).vote is not None
        assert len(checker.runs) == 1  # no engine run for either repeat


async def test_without_a_valid_key_a_request_gets_401_and_costs_nothing(tmp_path: Path) -> None:
    async with running_api(api_settings(tmp_path), FakeChecker()) as api:
        revoked = api.keys.add("old")
        api.keys.revoke("old")
        for headers in (
            {},
            {"Authorization": api.key},  # no scheme
            {"Authorization": f"Basic {api.key}"},
            {"Authorization": "Bearer zofia_not-a-key"},
            {"Authorization": f"Bearer {revoked}"},
        ):
            async with api.http.post(
                api.url + "/v1/checks", json={"text": POST}, headers=headers
            ) as response:
                body = await response.json()
                assert response.status == 401, headers
                assert response.headers["WWW-Authenticate"].startswith("Bearer")
            assert list(body) == ["error"] and body["error"].count(".") == 1
        assert api.count("attempts") == 0 and api.count("checks") == 0
        status, _, _ = await api.call("GET", OPENAPI_PATH, key="")  # the one open route
        assert status == 200


async def test_a_key_sees_only_its_own_checks(tmp_path: Path) -> None:
    async with running_api(api_settings(tmp_path), FakeChecker()) as api:
        other = api.keys.add("other-tipline")
        mine = await api.take("/v1/checks", {"text": POST})
        for path in (f"/v1/checks/{mine['id']}", f"/v1/votes/{mine['id']}"):
            status, body, _ = await api.call("GET", path, key=other)
            assert (status, body) == (404, {"error": "No check of this key has this id."})
        status, _, _ = await api.call("GET", "/v1/checks/not-an-id")
        assert status == 404


def _one_sentence(body: Any, reason: str | None = None) -> str:
    """The refusal's sentence; ``reason``: the engine's kind it must name (none else)."""
    assert list(body) == (["error"] if reason is None else ["error", "reason"])
    assert body.get("reason") == reason
    sentence = str(body["error"])
    assert sentence.endswith(".") and "\n" not in sentence and "Traceback" not in sentence
    return sentence


async def test_bad_input_gets_one_sentence_and_costs_nothing(tmp_path: Path) -> None:
    async with running_api(api_settings(tmp_path), FakeChecker()) as api:
        cases: list[tuple[int, dict[str, Any], str]] = [
            (415, {"data": POST, "headers": {"Content-Type": "text/plain"}}, "JSON"),
            (400, {"data": "{not json", "headers": AS_JSON}, "not JSON"),
            (400, {"json": ["a list"]}, "not a check"),
            (400, {"json": {}}, "no text"),
            (400, {"json": {"text": "  "}}, "no text"),
            (400, {"json": {"txt": POST}}, "txt"),
            (400, {"json": {"text": POST, "language": "Klingon"}}, "language"),
            (400, {"json": {"text": POST, "published": "last week"}}, "published"),
            (400, {"json": {"text": POST, "url": "javascript:alert(1)"}}, "url"),
            (400, {"json": {"images": [{"data": "not base64!"}]}}, "images[0].data"),
            (400, {"data": b'{"text": "\xff"}', "headers": AS_JSON}, "UTF-8"),
            (413, {"json": {"text": "word " * 30_000}}, "over 100 kB"),
            (413, {"data": _chunks(150_000), "headers": AS_JSON}, "over 100 kB"),
        ]
        for status, request, words in cases:
            got, body, _ = await api.call("POST", "/v1/checks", **request)
            assert got == status, (request, body)
            assert words in _one_sentence(body), body
        too_many: dict[str, Any] = {"json": {"images": [{"data": "aGk="}] * 5}}
        got, body, _ = await api.call("POST", "/v1/checks", **too_many)
        assert got == 422 and "up to 4" in _one_sentence(body, "too_many_images")
        assert api.count("attempts") == 0 and api.count("checks") == 0  # nothing counted
        # A link the bots would not fetch either counts, as there, and is said in a sentence.
        payload = {"url": "http://127.0.0.1:9/private"}
        status, body, _ = await api.call("POST", "/v1/checks", json=payload)
        assert status == 422 and _one_sentence(body, "unreachable")
        assert api.count("attempts") == 1 and api.count("checks") == 0
        status, body, _ = await api.call("GET", "/v1/nothing-here")
        assert status == 404 and "openapi" in _one_sentence(body)
        status, body, headers = await api.call("DELETE", "/v1/checks")
        assert status == 405 and "POST" in headers["Allow"] and _one_sentence(body)


async def _chunks(size: int) -> AsyncIterator[bytes]:
    """A body sent chunked, without a Content-Length: refused as it is read."""
    yield b'{"text": "'
    for _ in range(size // 10_000):
        yield b"x" * 10_000
    yield b'"}'


async def test_images_come_base64_within_the_caps_and_are_read_by_the_engine(
    tmp_path: Path,
) -> None:
    checker = FakeChecker()
    lines = ["Springfield bans bicycles", "from every street"]
    checker.reader = ImageReader(ImageSettings(max_bytes=20_000), ocr=ScriptedOCR("\n".join(lines)))
    settings = api_settings(tmp_path)
    engine = settings.engine.model_copy(update={"images": ImageSettings(max_bytes=20_000)})
    settings = settings.model_copy(update={"engine": engine})
    small, large = headline(lines, size=(500, 300)), headline(lines)
    assert len(small) < 20_000 < len(large)

    def image(data: bytes) -> dict[str, str]:
        return {"data": base64.b64encode(data).decode(), "media_type": "image/png"}

    async with running_api(settings, checker) as api:
        payload = {"text": "Is this real?", "images": [image(small), image(large)]}
        status, body, _ = await api.call("POST", "/v1/checks", json=payload)
        sentence = _one_sentence(body, "nth_image_too_large")
        assert status == 422 and "Image 2 of 2" in sentence and "20 kB" in sentence
        assert api.count("attempts") == 0  # refused before it counted
        state = await api.take("/v1/checks", {"text": "Is this real?", "images": [image(small)]})
        (post,) = checker.runs
        assert lines[0] in post.text and len(post.images) == 1
        (finding,) = state["report"]["images"]
        assert "sha256" not in finding  # scrubbed, as the report page's JSON is
        # The field's first name, "pictures", is still taken.
        await api.take("/v1/checks", {"text": "Is this real too?", "pictures": [image(small)]})
        assert len(checker.runs) == 2 and len(checker.runs[1].images) == 1
        # A damaged image among several: the reason is its own kind, not the wrapper's.
        payload["images"] = [image(small), image(small[: len(small) // 2])]  # read: counted
        status, body, _ = await api.call("POST", "/v1/checks", json=payload)
        assert status == 422 and "Image 2 of 2" in _one_sentence(body, "image_damaged")


async def test_a_key_has_its_own_share_of_the_queue_with_retry_after(tmp_path: Path) -> None:
    gate = Gate()
    settings = api_settings(tmp_path, max_pending_checks=4, chat_pending_share=0.5)
    async with running_api(settings, FakeChecker(gate=gate)) as api:
        other = api.keys.add("other-tipline")
        for n, asker in enumerate(("ana", "bo")):  # two askers: the key's share binds
            payload = {"text": f"{OTHER} ({n})", "asker": asker}
            status, _, _ = await api.call("POST", "/v1/checks", json=payload)
            assert status == 202
        third = {"text": POST, "asker": "cy"}
        status, body, headers = await api.call("POST", "/v1/checks", json=third)
        said = _one_sentence(body)
        assert status == 429 and "2 checks waiting already" in said and "in 2 min" in said
        assert int(headers["Retry-After"]) == 120  # the typical run, none finished yet
        status, _, _ = await api.call("POST", "/v1/checks", json=third, key=other)
        assert status == 202  # another key's share is its own
        gate.open()


async def test_a_key_has_its_own_share_of_the_days_budget(tmp_path: Path) -> None:
    gate = Gate()
    settings = api_settings(
        tmp_path, daily_token_budget=300_000, chat_budget_share=0.5, user_budget_share=1.0
    )
    async with running_api(settings, FakeChecker(gate=gate)) as api:
        other = api.keys.add("other-tipline")
        for n in range(2):  # each reserves llm.max_tokens_per_check (100,000)
            status, _, _ = await api.call("POST", "/v1/checks", json={"text": f"{OTHER} {n}"})
            assert status == 202
        status, body, headers = await api.call("POST", "/v1/checks", json={"text": POST})
        assert status == 429 and _one_sentence(body)
        # The share is held by the two checks under way: it frees when they end (the
        # typical run), not at midnight.
        assert int(headers["Retry-After"]) == 120
        status, _, _ = await api.call("POST", "/v1/checks", json={"text": POST}, key=other)
        assert status == 202
        gate.open()


async def test_a_vote_is_read_from_the_report_by_the_written_table(tmp_path: Path) -> None:
    checker = FakeChecker()
    async with running_api(api_settings(tmp_path), checker) as api:
        expected: dict[str, tuple[str, int | None]]
        expected = {"false": ("info", 1), "true": ("info", 5), "misleading": ("info", 3)}
        expected |= {"unproven": ("unsure", None), "scam": ("scam", None)}
        expected |= {"satire": ("satire", None), "no_claim": ("irrelevant", None)}
        for n, (verdict, vote) in enumerate(expected.items()):
            checker.verdict = verdict
            state = VoteState.model_validate(await api.take("/v1/votes", {"text": f"{POST} {n}"}))
            assert state.vote is not None and state.vote.verdict == verdict
            assert (state.vote.category, state.vote.truth_score) == vote, verdict


def _routes(app: Any) -> set[tuple[str, str]]:
    return {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.method != "HEAD"  # aiohttp adds HEAD beside each GET
    }


async def test_the_openapi_document_lists_every_route_and_its_examples_are_valid(
    tmp_path: Path,
) -> None:
    async with running_api(api_settings(tmp_path), FakeChecker()) as api:
        status, document, _ = await api.call("GET", OPENAPI_PATH, key="")
        assert status == 200 and document["openapi"].startswith("3.1")
        settings = api_settings(tmp_path)
        app = build_app(api.service, ApiConfig(settings.api, settings.engine.images))
        documented = {
            (method.upper(), path)
            for path, operations in document["paths"].items()
            for method in operations
        }
        assert documented == _routes(app)
        models = {model.__name__: model for model in EXAMPLES}
        seen = 0
        for operations in document["paths"].values():
            for operation in operations.values():
                bodies = [operation.get("requestBody", {}), *operation["responses"].values()]
                for media in (b.get("content", {}).get("application/json", {}) for b in bodies):
                    if "schema" in media:
                        name = media["schema"]["$ref"].rsplit("/", 1)[-1]
                        models[name].model_validate(media["example"])
                        seen += 1
        assert seen >= 20
        assert set(models) <= set(document["components"]["schemas"])


def _cli(config: Path, *args: str) -> Any:
    return CliRunner().invoke(main, [*args, "--config", str(config)])


async def test_keys_made_on_the_command_line_are_shown_once_and_revoked(tmp_path: Path) -> None:
    config = tmp_path / "zofia.toml"
    config.write_text(
        f'[storage]\npath = "{tmp_path / "zofia.db"}"\nsecret = "{SECRET}"\n', encoding="utf-8"
    )
    made = _cli(config, "api-key", "add", "cofacts")
    assert made.exit_code == 0, made.output
    key = made.stdout.strip()
    assert key.startswith("zofia_") and len(key) > 40 and "shown once" in made.stderr
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("zofia.db*"))
    assert key.encode() not in stored  # only its keyed hash
    taken = _cli(config, "api-key", "add", "cofacts")
    assert taken.exit_code == 1 and "is taken" in taken.output
    listed = _cli(config, "api-key", "list")
    assert listed.output.startswith("cofacts\tmade ") and "revoked" not in listed.output
    settings = api_settings(tmp_path)
    async with running_api(settings, FakeChecker()) as api:
        assert (await api.take("/v1/checks", {"text": POST}, key=key))["status"] == "done"
        revoked = await asyncio.to_thread(_cli, config, "api-key", "revoke", "cofacts")
        assert revoked.exit_code == 0, revoked.output
        status, _, _ = await api.call("POST", "/v1/checks", json={"text": POST}, key=key)
        assert status == 401
    assert "revoked" in _cli(config, "api-key", "list").output
    again = _cli(config, "api-key", "revoke", "cofacts")
    assert again.exit_code == 1 and "revoked already" in again.output
    assert _cli(config, "api-key", "add", "cofacts").exit_code == 1  # the name stays taken
    assert "--host" in CliRunner().invoke(main, ["api", "--help"]).output
