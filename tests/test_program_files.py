"""Program files hold what a program is, not where it runs: transport and side-effect settings come from the caller."""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import litellm
import pytest
from scripts import by_agent

from madspy.core.errors import ProgramFileError
from madspy.evaluation import evaluate
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import amend_manifest, content_digest, load_program, save_program
from madspy.programs.config import CALLER_FIELDS
from madspy.testing import ScriptedLLM

PERSONAS = [a.persona for a in DebateConfig.default_agents(3)]
ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted([*ROOT.glob("compiled/*.json"), *ROOT.glob("bench/programs/*.json")])
LOGGER = "madspy.programs.artifact"


class _Relay(ScriptedLLM):
    """A scripted model that, like LiteLLM's HTTP providers, sends its request to ``api_base`` when given one."""

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("api_base"):
            urllib.request.urlopen(urllib.request.Request(kwargs["api_base"], data=b"{}"), timeout=5).close()
        return super().completion(model, messages, *args, **kwargs)


@pytest.fixture(scope="module", autouse=True)
def relay_provider() -> None:
    """``relay/<name>``: the script registered as ``scripted/<name>``, reached through ``api_base`` when set."""
    if not any(p.get("provider") == "relay" for p in litellm.custom_provider_map):
        litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": "relay", "custom_handler": _Relay()}]
    litellm.utils.custom_llm_setup()


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that counts what it receives: its URL and the paths requested."""
    received: list[str] = []

    class Counting(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", received
    server.shutdown()
    server.server_close()


@pytest.fixture
def relay(scripted) -> str:
    """A relay model whose debaters answer 391, 391 and 401, in every debate."""
    return scripted(by_agent(PERSONAS, [["391"], ["391"], ["401"]])).replace("scripted/", "relay/", 1)


def older_file(path: Path, model: str, **fields: Any) -> Path:
    """A program file as an earlier madspy saved it: ``fields`` (transport, ledger) in its config, hashed with it."""
    config = DebateConfig.with_agents(3, model=model, rounds=1, protocol="credit")
    save_program(Debate(config), path, manifest={"task": "arithmetic"})
    body = {k: v for k, v in json.loads(path.read_text()).items() if k != "sha256"}
    body["config"] |= fields
    path.write_text(json.dumps({**body, "sha256": content_digest(body)}, indent=2))
    return path


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]


def test_api_base_in_a_file_is_ignored_with_one_warning_and_no_request_reaches_it(relay, listener, tmp_path, caplog):
    url, received = listener
    path = older_file(tmp_path / "theirs.json", relay, api_base=url, timeout_s=1.0, num_retries=9, cache=False)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        debate = load_program(path)
    assert warnings_of(caplog) == [
        f"{path}: ignoring api_base, cache, num_retries, timeout_s saved in the program file: where a program runs "
        "and what it writes come from the caller (flags, environment, serve's settings)"
    ]
    config = debate.config
    assert (config.api_base, config.timeout_s, config.num_retries, config.cache) == (None, 120.0, 3, True)
    assert debate(question="What is 17 * 23?").answer == "391"
    assert received == []


def test_api_base_given_by_the_caller_is_where_requests_go(relay, listener, tmp_path, caplog):
    url, received = listener
    path = older_file(tmp_path / "theirs.json", relay, api_base="http://127.0.0.1:9/elsewhere")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        debate = load_program(path, api_base=url, num_retries=0)
    assert len(warnings_of(caplog)) == 1 and debate.config.num_retries == 0
    result = debate(question="What is 17 * 23?")
    assert result.answer == "391" and len(received) == result.transcript.usage.calls == 3  # each where it was told


def test_credit_ledger_in_a_file_is_not_written_by_eval(relay, tmp_path, caplog):
    ledger = tmp_path / "theirs" / "credit.json"
    path = older_file(tmp_path / "theirs.json", relay, credit_ledger=str(ledger))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        ev = evaluate(
            programs=[str(path)],
            task="arithmetic",
            model=relay,
            out=tmp_path / "eval",
            n=2,
            concurrency=1,
            cache=False,
            progress=False,
        )
    assert [r.answer for r in ev.rows] == ["391", "391"]  # debated and scored: eval records credit after that
    assert any("credit_ledger" in w for w in warnings_of(caplog))
    assert not ledger.exists() and not ledger.parent.exists()


def test_credit_ledger_weighs_the_votes_when_the_caller_gives_it_not_when_the_file_does(relay, tmp_path):
    ledger = tmp_path / "credit.json"
    ledger.write_text('{"0": 0.1, "1": 0.1, "2": 3.0}')
    path = older_file(tmp_path / "theirs.json", relay, credit_ledger=str(ledger))
    unweighted = load_program(path)(question="What is 17 * 23?").transcript.decision
    weighted = load_program(path, credit_ledger=str(ledger))(question="What is 17 * 23?").transcript.decision
    assert unweighted.answer == "391" and weighted.answer == "401"


def test_a_new_save_holds_none_of_the_callers_fields(relay, tmp_path, caplog):
    config = DebateConfig.with_agents(2, model=relay, rounds=1).updated(
        api_base="http://127.0.0.1:9/v1", timeout_s=5.0, num_retries=0, cache=False, concurrency=2, credit_ledger="x"
    )
    path = tmp_path / "mine.json"
    saved = save_program(Debate(config), path)
    assert not CALLER_FIELDS & saved["config"].keys()
    assert not CALLER_FIELDS & json.loads(path.read_text())["config"].keys()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        loaded = load_program(path)
    assert warnings_of(caplog) == [] and loaded.config.api_base is None and loaded.config.credit_ledger is None


def test_amending_an_older_file_drops_the_callers_fields(relay, tmp_path, caplog):
    path = older_file(tmp_path / "theirs.json", relay, api_base="http://127.0.0.1:9/v1", concurrency=1)
    before = json.loads(path.read_text())
    amended = amend_manifest(path, {"held_out": []})
    assert not CALLER_FIELDS & amended["config"].keys()
    assert amended["roles"] == before["roles"] and amended["manifest"]["held_out"] == []
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        load_program(path)
    assert warnings_of(caplog) == []


def test_a_model_naming_a_server_is_refused_in_a_file_and_when_saving(relay, tmp_path):
    server = "huggingface/https://127.0.0.1:9/endpoint"
    path = older_file(tmp_path / "theirs.json", relay, critic={**DebateConfig().critic.model_dump(), "model": server})
    with pytest.raises(ProgramFileError, match=r"names a server in model 'huggingface/https://"):
        load_program(path)
    assert load_program(path, critic={"model": None}).config.critic.model is None  # the caller's model replaces it
    with pytest.raises(ProgramFileError, match="names a server; save the model's name"):
        save_program(Debate(DebateConfig(model=relay).updated(critic={"model": server})), tmp_path / "mine.json")


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_committed_program_files_still_load(path, scripted, caplog):
    config = json.loads(path.read_text())["config"]
    changed = sorted(k for k in CALLER_FIELDS & config.keys() if config[k] != DebateConfig.model_fields[k].default)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        debate = load_program(path, model=scripted(lambda t: "unused"))  # no local model is loaded
    assert debate.manifest["versions"]
    assert len(warnings_of(caplog)) == (1 if changed else 0)


def test_serve_runs_a_file_with_the_servers_settings_not_the_files(relay, listener, tmp_path):
    from madspy.server.app import ServeSettings, create_app

    url, received = listener
    path = older_file(tmp_path / "theirs.json", relay, api_base="http://127.0.0.1:9/elsewhere", concurrency=1)
    settings = ServeSettings(store=tmp_path / "t.sqlite3", api_base=url, lm_timeout_s=7.0, num_retries=0, cache=False)
    config = create_app({"theirs": path}, settings).state.service.programs["theirs"].config
    assert (config.api_base, config.timeout_s, config.num_retries, config.cache) == (url, 7.0, 0, False)
    assert config.concurrency == DebateConfig().concurrency and received == []
