"""The API's poll shows ``verdict`` before ``done``: while the debate of a check whose
verdict the evidence fixed is still running, the poll answers with the early report
(``complete`` false) under the same report shape, then ``done`` with the whole report,
of the same verdict. The engine is the in-process :class:`FakeChecker` (its ``early``
event): this proves the service's and the API's handling, not the engine's."""

from __future__ import annotations

from pathlib import Path

from tests.bots.api.test_api import POST, api_settings, running_api
from tests.peers.fakes.fake_checker import FakeChecker, Gate

from bots.api.models import CheckState
from storage.sql import first_row


async def test_the_poll_shows_the_verdict_then_done_for_the_same_check(tmp_path: Path) -> None:
    gate = Gate()
    checker = FakeChecker(gate=gate, early=True, verdict="false")
    async with running_api(api_settings(tmp_path), checker) as api:
        status, body, _ = await api.call("POST", "/v1/checks", json={"text": POST})
        assert status == 202, body
        await gate.held()  # the debate is running; the early report is kept first
        status, body, _ = await api.call("GET", body["poll"])
        early = CheckState.model_validate(body)
        assert (status, early.status) == (200, "verdict")
        assert early.report is not None and early.report["complete"] is False
        assert early.report["verdict"] == "false" and early.report["debate"]["turns"] == []
        assert early.vote is not None and early.vote.verdict == "false"
        gate.open()
        done = CheckState.model_validate(await api.answered(f"/v1/checks/{early.id}"))
        assert done.status == "done" and done.report is not None
        assert done.report["complete"] is True and done.report["verdict"] == "false"
        assert set(done.report) == set(early.report)  # the same shape
        left = api.service.store.db.execute("SELECT count(*) FROM early_reports")
        assert first_row(left)[0] == 0  # the whole report replaced it


async def test_a_check_without_an_early_verdict_goes_from_running_to_done(
    tmp_path: Path,
) -> None:
    gate = Gate()
    async with running_api(api_settings(tmp_path), FakeChecker(gate=gate)) as api:
        _, body, _ = await api.call("POST", "/v1/checks", json={"text": POST})
        await gate.held()
        _, state, _ = await api.call("GET", body["poll"])
        assert (state["status"], state["report"]) == ("running", None)
        gate.open()
        assert (await api.answered(body["poll"]))["status"] == "done"
