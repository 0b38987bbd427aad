"""``zofia whatsapp`` at start: what it needs and lacks (the phone number id, a
credential from the environment) is one sentence and exit 1, said before any model
loads; and a reviewer on WhatsApp is named by their number."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bots.cli import main
from bots.service.settings import ServiceSettings

ENV = {
    "WHATSAPP_ACCESS_TOKEN": "token",
    "WHATSAPP_APP_SECRET": "secret",
    "WHATSAPP_VERIFY_TOKEN": "verify",
}


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZOFIA_CONFIG", raising=False)
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(main, ["whatsapp"], env=env)
    return result.exit_code, result.output


def test_the_help_names_the_webhook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(main, ["whatsapp", "--help"])
    assert result.exit_code == 0 and "webhook" in result.output


def test_no_phone_number_id_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, output = _run(tmp_path, monkeypatch, ENV)
    assert (code, output.strip().splitlines()[-1]) == (
        1,
        "Error: set [whatsapp] phone_number_id (WhatsApp Manager → API Setup → Phone number ID)",
    )


@pytest.mark.parametrize("missing", list(ENV))
def test_a_missing_credential_is_named_never_a_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    env = {k: v for k, v in ENV.items() if k != missing}
    env["ZOFIA__WHATSAPP__PHONE_NUMBER_ID"] = "106540352242922"
    code, output = _run(tmp_path, monkeypatch, env)
    assert code == 1 and "Traceback" not in output
    assert output.strip().splitlines()[-1] == (
        f"Error: set ${missing} (docs/whatsapp.md says where it comes from)"
    )
    assert not any(value in output for value in env.values() if len(value) > 6)


def test_a_whatsapp_reviewer_is_named_by_their_number() -> None:
    assert ServiceSettings(reviewers=["whatsapp:15551230002"]).reviewers == ["whatsapp:15551230002"]
    with pytest.raises(ValueError, match="whatsapp:WA_ID"):
        ServiceSettings(reviewers=["whatsapp:+1 555"])
