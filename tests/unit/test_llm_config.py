"""The LLM for dreaming from configuration: ``[llm] model``, ``dreammem dream --llm``, resolution errors.

LangChain's fake chat models stand in for providers (registered under a name by
``registered_chat_model``); ``init_chat_model`` itself is exercised for the errors a
user meets: a provider package that is not installed, a provider that does not exist.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from typer.testing import CliRunner

from dreammem import ConfigError, DreamMemory, LLMError
from dreammem.cli import app
from dreammem.config import LLMConfig, load_config
from dreammem.embed import HashingEmbedder
from dreammem.llm import configured_llm
from langchain_dreammem.chat_models import chat_model, registered_chat_model
from langchain_dreammem.llm import ChatModelLLM
from tests.unit.dream.support import seed

# One answer every dream prompt accepts: scores for the batch's local ids r1..r30, nothing else.
ANSWER = json.dumps(
    {
        "scores": [{"id": f"r{n}", "score": 4} for n in range(1, 31)],
        "summaries": [],
        "patterns": [],
        "conflicts": [],
    }
)
runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        seed(memory)
    return path


def _dream(store: Path, *extra: str) -> dict[str, object]:
    result = runner.invoke(
        app, ["dream", "--user", "u1", "--path", str(store), "--json", *extra], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    report: dict[str, object] = json.loads(result.output)
    return report


def test_no_model_named_means_no_llm() -> None:
    assert configured_llm(LLMConfig()) is None


def test_dream_llm_flag_dreams_with_the_named_model(store: Path) -> None:
    fake = FakeListChatModel(responses=[ANSWER] * 40)
    with registered_chat_model("fake:list", fake):
        report = _dream(store, "--llm", "fake:list")
    llm = report["llm"]
    assert isinstance(llm, dict) and llm["calls"] >= 1
    assert llm["calls"] == fake.i  # every call the dream counted reached the model
    assert str(report["mode"]).startswith("llm")


def test_the_config_llm_section_names_the_model_and_the_flag_overrides_it(
    store: Path, tmp_path: Path
) -> None:
    config = tmp_path / "dreammem.toml"
    config.write_text('[llm]\nmodel = "fake:configured"\nmax_retries = 0\n', encoding="utf-8")
    assert load_config(config).llm.model == "fake:configured"
    configured = FakeListChatModel(responses=[ANSWER] * 40)
    flagged = FakeListChatModel(responses=[ANSWER] * 40)
    with registered_chat_model("fake:configured", configured), registered_chat_model("fake:flag", flagged):
        report = _dream(store, "--config", str(config))
        assert report["mode"] != "rules" and configured.i >= 1
        with DreamMemory(store) as memory:
            seed(memory)  # a full queue again
        _dream(store, "--config", str(config), "--llm", "fake:flag")
    assert flagged.i >= 1


def test_without_an_llm_the_dream_runs_on_rules(store: Path) -> None:
    assert _dream(store)["mode"] == "rules"


@pytest.mark.parametrize(
    "provider, package", [("openai", "langchain_openai"), ("anthropic", "langchain_anthropic")]
)
def test_a_provider_package_that_is_not_installed_is_a_config_error_saying_what_to_install(
    provider: str, package: str
) -> None:
    assert importlib.util.find_spec(package) is None  # the error below is init_chat_model's real one
    with pytest.raises(ConfigError, match=package.replace("_", "-")) as info:
        configured_llm(LLMConfig(model=f"{provider}:some-model"))
    assert isinstance(info.value.__cause__, ImportError)


def test_the_cli_reports_a_missing_provider_package_as_a_config_error(store: Path) -> None:
    result = runner.invoke(
        app, ["dream", "--user", "u1", "--path", str(store), "--llm", "openai:gpt-4o-mini"]
    )
    assert isinstance(result.exception, ConfigError)
    assert "pip install langchain-openai" in str(result.exception)
    # nothing was dreamed: the queue is still full
    with DreamMemory(store) as memory:
        assert memory.stats(user_id="u1")["queue"] > 0


@pytest.mark.parametrize("name", ["no-such-provider:model", "   "])
def test_an_unknown_or_empty_model_name_is_a_config_error(name: str) -> None:
    with pytest.raises(ConfigError):
        configured_llm(LLMConfig(), name)


def test_bad_llm_settings_are_refused_by_the_config(tmp_path: Path) -> None:
    for section in ({"max_retries": 11}, {"model": ""}, {"batch": 3}, {"options": {"temperature": [1]}}):
        path = tmp_path / "c.json"
        path.write_text(json.dumps({"llm": section}), encoding="utf-8")
        with pytest.raises(ConfigError):
            load_config(path)


def test_a_registered_name_is_released_when_its_block_ends() -> None:
    fake = FakeListChatModel(responses=["x"])
    with registered_chat_model("fake:scoped", fake):
        assert chat_model("fake:scoped") is fake
    with pytest.raises(ConfigError):
        chat_model("fake:scoped")


class _FailsFirst(Iterator[AIMessage]):
    """Answers after ``failures`` calls that raise, as a rate-limited provider does."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __next__(self) -> AIMessage:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError("429 rate limited")
        return AIMessage("fine")


def test_max_retries_retries_a_call_that_raised() -> None:
    flaky = _FailsFirst(1)
    llm = ChatModelLLM(GenericFakeChatModel(messages=flaky), retries=1)
    assert llm("prompt") == "fine" and flaky.calls == 2


def test_without_retries_a_failed_call_is_an_llm_error() -> None:
    flaky = _FailsFirst(1)
    with pytest.raises(LLMError, match="429"):
        ChatModelLLM(GenericFakeChatModel(messages=flaky))("prompt")
    assert flaky.calls == 1


def test_configured_retries_reach_the_model() -> None:
    flaky = _FailsFirst(2)
    with registered_chat_model("fake:flaky", GenericFakeChatModel(messages=flaky)):
        llm = configured_llm(LLMConfig(model="fake:flaky", max_retries=2))
    assert llm is not None and llm("prompt") == "fine" and flaky.calls == 3
