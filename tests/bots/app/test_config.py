"""Settings: the paper's defaults, TOML loading, environment overrides, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.app.settings import Settings
from zofia_engine.config import EngineSettings
from zofia_engine.config import load_config as load_engine_config
from zofia_engine.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = REPO_ROOT / "config.example.toml"
KEY = "BSAtestkey123"


def load_config(path: str | Path | None, environ: dict[str, str] | None = None) -> Settings:
    """The deployment's loader: the engine's sections and every other layer's."""
    return load_engine_config(path, environ, schema=Settings)


def _toml(tmp_path: Path, text: str, name: str = "zofia.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path | None = None, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={} if environ is None else environ)
    return str(info.value)


# ------------------------------------------------------------------------ defaults


def test_defaults_are_the_papers_hyperparameters() -> None:
    s = Settings()
    # §3.1 / Algorithm 2: dynamic NER threshold.
    assert s.engine.ner.threshold_init == 0.8
    assert s.engine.ner.threshold_step == 0.1
    assert s.engine.ner.threshold_floor == 0.1
    assert s.engine.ner.min_entities == 1
    # §3.3 / eq. 5 / Algorithm 3: SC-MMR.
    assert s.engine.keywords.gamma == 0.5
    assert s.engine.keywords.alpha == 0.3
    assert s.engine.keywords.beta == 2.5
    assert s.engine.keywords.lambda_min == 0.1
    assert s.engine.keywords.lambda_max == 1.0
    # §4 implementation details: 10 web entries, 3 Wikipedia sentences.
    assert s.engine.web.max_results == 10
    assert s.engine.wikipedia.sentences == 3
    # Offline by default: packaged Wikipedia summaries, no open-web backend.
    assert s.engine.wikipedia.backend == "offline"
    assert s.engine.web.backends == []
    assert s.engine.web.brave.api_key == ""
    assert s.engine.encoder.model == ""  # the packaged all-MiniLM-L6-v2
    # §4.1.3 / eq. 9 and §4.2 / Algorithm 1: θ_sim, 2-4 sub-claims, at most 5 rounds.
    assert s.engine.agents.theta_sim == 0.1
    assert (s.engine.agents.min_sub_claims, s.engine.agents.max_sub_claims) == (2, 4)
    assert s.engine.debate.max_rounds == 5
    assert s.engine.debate.style == "zofia"
    assert (s.engine.debate.stop_margin, s.engine.debate.verdict_confidence) == (
        -0.15,
        0.7,
    )  # RADAR §4.1
    assert s.engine.agents.require_evidence and s.engine.triage.enabled
    assert len(s.engine.agents.linguist_dimensions) == 5
    # §5.1: temperature 0; the embedded model by default, no API key needed.
    assert s.engine.llm.temperature == 0.0
    assert s.engine.llm.backend == "embedded"


def test_no_file_and_empty_environment_give_the_defaults() -> None:
    assert load_config(None, environ={}) == Settings()


def test_empty_file_gives_the_defaults(tmp_path: Path) -> None:
    assert load_config(_toml(tmp_path, ""), environ={}) == Settings()


def test_settings_are_frozen() -> None:
    with pytest.raises(ValueError, match="frozen"):
        Settings().engine.keywords.gamma = 0.9  # type: ignore[misc]


# ------------------------------------------------------------------- loading TOML


def test_toml_file_is_loaded(tmp_path: Path) -> None:
    path = _toml(
        tmp_path,
        """
[ner]
threshold_init = 0.7
labels = ["PER", "ORG"]

[keywords]
gamma = 0.4
max_keywords = 5

[web]
backends = ["searxng"]
max_results = 5

[web.searxng]
base_url = "http://127.0.0.1:8888"

[wikipedia]
backend = "mediawiki"
sentences = 2

[wikipedia.mediawiki]
api_url = "http://127.0.0.1:9999/w/api.php"
""",
    )

    s = load_config(path, environ={})

    assert s.engine.ner.threshold_init == 0.7
    assert s.engine.ner.labels == ["PER", "ORG"]
    assert s.engine.keywords.gamma == 0.4
    assert s.engine.keywords.max_keywords == 5
    assert s.engine.web.backends == ["searxng"]
    assert s.engine.web.max_results == 5
    assert s.engine.web.searxng.base_url == "http://127.0.0.1:8888"
    assert s.engine.wikipedia.backend == "mediawiki"
    assert s.engine.wikipedia.sentences == 2
    assert s.engine.wikipedia.mediawiki.api_url == "http://127.0.0.1:9999/w/api.php"
    # Untouched settings keep the paper's values.
    assert s.engine.keywords.alpha == 0.3
    assert s.engine.ner.threshold_step == 0.1


def test_path_may_be_a_string(tmp_path: Path) -> None:
    path = _toml(tmp_path, "[keywords]\ngamma = 0.25\n")
    assert load_config(str(path), environ={}).engine.keywords.gamma == 0.25


# ----------------------------------------------------------------- wrong settings


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[keywords]\ngama = 0.4\n", "keywords.gama"),
        ("gama = 0.4\n", "gama"),
        ("[keyword]\ngamma = 0.4\n", "keyword"),
        ("[web.brave]\napikey = 'x'\n", "web.brave.apikey"),
    ],
    ids=["nested", "top-level", "unknown-section", "deeper"],
)
def test_unknown_key_is_named(tmp_path: Path, text: str, where: str) -> None:
    message = _error(_toml(tmp_path, text))
    assert f"{where}: unknown setting" in message


def test_bad_type_is_named(tmp_path: Path) -> None:
    message = _error(_toml(tmp_path, '[keywords]\ngamma = "high"\n'))
    assert "keywords.gamma" in message
    assert "number" in message


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[keywords]\ngamma = 1.5\n", "keywords.gamma"),
        ("[ner]\nthreshold_init = 0\n", "ner.threshold_init"),
        ("[web]\nmax_results = 0\n", "web.max_results"),
        ("[web]\nmax_results = 21\n", "web.max_results"),
        ("[wikipedia]\nsentences = 0\n", "wikipedia.sentences"),
        ("[web]\nbackends = ['bing']\n", "web.backends.0"),
        ("[wikipedia]\nbackend = 'dbpedia'\n", "wikipedia.backend"),
    ],
)
def test_out_of_range_value_is_named(tmp_path: Path, text: str, where: str) -> None:
    message = _error(_toml(tmp_path, text))
    assert f"{where}:" in message


def test_several_errors_are_all_reported(tmp_path: Path) -> None:
    message = _error(_toml(tmp_path, "[keywords]\ngamma = 2\ngama = 1\n"))
    assert "keywords.gamma" in message
    assert "keywords.gama" in message


# --------------------------------------------------------------- backends and keys


def test_brave_without_a_key_names_the_key(tmp_path: Path) -> None:
    message = _error(_toml(tmp_path, '[web]\nbackends = ["brave"]\n'))
    assert "web.brave.api_key" in message
    assert "BRAVE_API_KEY" in message


@pytest.mark.parametrize("name", ["BRAVE_API_KEY", "ZOFIA__WEB__BRAVE__API_KEY"])
def test_environment_fills_the_brave_key(tmp_path: Path, name: str) -> None:
    path = _toml(tmp_path, '[web]\nbackends = ["brave"]\n')

    s = load_config(path, environ={name: KEY})

    assert s.engine.web.brave.api_key == KEY
    assert s.engine.web.backends == ["brave"]


def test_empty_brave_api_key_variable_does_not_count(tmp_path: Path) -> None:
    path = _toml(tmp_path, '[web]\nbackends = ["brave"]\n')
    assert "web.brave.api_key" in _error(path, {"BRAVE_API_KEY": ""})


def test_environment_key_overrides_the_file(tmp_path: Path) -> None:
    path = _toml(tmp_path, '[web.brave]\napi_key = "from-file"\n')
    assert load_config(path, environ={"BRAVE_API_KEY": KEY}).engine.web.brave.api_key == KEY


def test_openai_without_a_key_names_the_variable(tmp_path: Path) -> None:
    message = _error(_toml(tmp_path, '[llm]\nbackend = "openai"\n'))
    assert "OPENAI_API_KEY" in message and "llm.openai.base_url" in message


def test_a_local_openai_compatible_server_needs_no_key(tmp_path: Path) -> None:
    path = _toml(
        tmp_path, '[llm]\nbackend = "openai"\n[llm.openai]\nbase_url = "http://localhost:8000/v1"\n'
    )
    assert load_config(path, environ={}).engine.llm.openai.base_url == "http://localhost:8000/v1"


def test_roles_point_at_their_own_models(tmp_path: Path) -> None:
    text = (
        '[llm.roles.judge]\nbackend = "openai"\nmodel = "big"\n'
        '[llm.roles.linguist]\nmodel = "small"\n'
    )
    s = load_config(_toml(tmp_path, text), environ={"OPENAI_API_KEY": KEY})
    assert (
        s.engine.llm.roles["judge"].model == "big"
        and s.engine.llm.roles["judge"].backend == "openai"
    )
    assert s.engine.llm.openai.api_key == KEY
    assert "llm.roles.umpire" in _error(_toml(tmp_path, '[llm.roles.umpire]\nmodel = "x"\n'))


def test_numeric_looking_brave_key_stays_a_string() -> None:
    s = load_config(None, environ={"BRAVE_API_KEY": "1234567890"})
    assert s.engine.web.brave.api_key == "1234567890"


def test_environment_value_is_parsed_as_toml() -> None:
    s = load_config(
        None,
        environ={
            "ZOFIA__KEYWORDS__GAMMA": "0.3",
            "ZOFIA__WEB__MAX_RESULTS": "7",
            "ZOFIA__WEB__BACKENDS": '["searxng"]',
            "ZOFIA__WEB__SEARXNG__BASE_URL": "http://127.0.0.1:8888",
            "ZOFIA__ENCODER__DEVICE": "cuda:0",
        },
    )

    assert s.engine.keywords.gamma == 0.3
    assert isinstance(s.engine.keywords.gamma, float)
    assert s.engine.web.max_results == 7
    assert s.engine.web.backends == ["searxng"]
    assert s.engine.web.searxng.base_url == "http://127.0.0.1:8888"
    assert s.engine.encoder.device == "cuda:0"


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    path = _toml(tmp_path, "[keywords]\ngamma = 0.4\nalpha = 0.2\n")

    s = load_config(path, environ={"ZOFIA__KEYWORDS__GAMMA": "0.3"})

    assert s.engine.keywords.gamma == 0.3
    assert s.engine.keywords.alpha == 0.2


def test_unrelated_environment_variables_are_ignored() -> None:
    environ = {"PATH": "/usr/bin", "ZOFIA_GAMMA": "9", "HOME": "/root"}
    assert load_config(None, environ=environ) == Settings()


def test_unknown_environment_override_is_named() -> None:
    message = _error(None, {"ZOFIA__KEYWORDS__GAMA": "0.3"})
    assert "keywords.gama" in message


def test_out_of_range_environment_override_is_named() -> None:
    message = _error(None, {"ZOFIA__KEYWORDS__GAMMA": "3"})
    assert "keywords.gamma" in message


def test_searxng_without_base_url_names_it(tmp_path: Path) -> None:
    message = _error(_toml(tmp_path, '[web]\nbackends = ["searxng"]\n'))
    assert "web.searxng.base_url" in message


def test_environment_does_not_touch_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ZOFIA__KEYWORDS__GAMMA", "0.9")
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    # An explicit environ replaces os.environ entirely.
    assert load_config(None, environ={}) == Settings()
    # Without one, os.environ is read.
    s = load_config(None)
    assert s.engine.keywords.gamma == 0.9
    assert s.engine.web.brave.api_key == KEY


# ------------------------------------------------------------ unreadable files


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "zofia.toml"
    message = _error(path)
    assert str(path) in message
    assert "not found" in message


def test_invalid_toml_names_the_path(tmp_path: Path) -> None:
    path = _toml(tmp_path, "[keywords\ngamma = 0.4\n")
    message = _error(path)
    assert str(path) in message
    assert "TOML" in message


@pytest.mark.parametrize("kind", ["directory", "not-utf8"])
def test_unreadable_file_is_a_config_error(tmp_path: Path, kind: str) -> None:
    if kind == "directory":
        path = tmp_path / "conf.d"
        path.mkdir()
    else:
        path = tmp_path / "latin1.toml"
        path.write_bytes(b"# Zo\xe9Fia\n[keywords]\ngamma = 0.4\n")
    message = _error(path)
    assert str(path) in message


# ------------------------------------------------------------------ the example


def test_example_config_loads_and_equals_the_defaults() -> None:
    if not EXAMPLE.is_file():
        pytest.skip("config.example.toml is not written yet")
    assert load_config(EXAMPLE, environ={}) == Settings()


def test_the_engine_knows_no_platform(tmp_path: Path) -> None:
    path = _toml(tmp_path, "[telegram]\ntoken_env = 'X'\n")
    with pytest.raises(ConfigError, match="telegram: unknown setting"):
        load_engine_config(path, environ={})
    assert set(EngineSettings.model_fields) == {
        "ner",
        "encoder",
        "keywords",
        "web",
        "wikipedia",
        "llm",
        "agents",
        "debate",
        "triage",
        "retrieval",
        "factcheck",
        "evidence",
        "tree",
        "images",
        "audio",
        "stance",
    }
    assert load_config(path, environ={}).telegram.token_env == "X"


def test_stop_thresholds_per_judge_model(tmp_path: Path) -> None:
    path = _toml(
        tmp_path,
        "[debate.thresholds]\n'qwen2.5' = [-0.3, 0.6]\n'qwen2.5-coder-1.5b' = [0.1, 0.8]\n",
    )
    debate = load_engine_config(path, environ={}, schema=EngineSettings).debate
    assert debate.taus("Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf") == (0.1, 0.8)  # longest match
    assert debate.taus("qwen2.5-7b-instruct") == (-0.3, 0.6)
    assert debate.taus("llama3-8b") == (-0.15, 0.7)  # the paper's values
    with pytest.raises(ConfigError, match="style"):
        load_engine_config(_toml(tmp_path, "[debate]\nstyle = 'chess'\n"), environ={})
