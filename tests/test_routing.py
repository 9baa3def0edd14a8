"""`router/NAME` models: LiteLLM's Router over several deployments, from a router file (scripted deployments)."""

from __future__ import annotations

import litellm
import pytest
from test_evaluation import script

from madspy.cli import main
from madspy.core import routing
from madspy.core.errors import InputError, ModelError
from madspy.core.models import make_lm
from madspy.evaluation import evaluate, load_rows
from madspy.programs.transcript import Transcript


@pytest.fixture(autouse=True)
def no_router(monkeypatch):
    monkeypatch.setattr(routing, "_router", None)
    monkeypatch.delenv(routing.ENV, raising=False)


def router_file(tmp_path, deployments: dict[str, str], settings: str = "") -> str:
    lines = ["model_list:"]
    for ident, model in deployments.items():
        lines += [
            "  - model_name: arith",
            f"    litellm_params: {{model: {model}}}",
            f"    model_info: {{id: {ident}}}",
        ]
    path = tmp_path / "router.yaml"
    path.write_text("\n".join(lines) + "\n" + settings)
    return str(path)


def down(turn):
    raise litellm.ServiceUnavailableError("server stopped", "down", "scripted")


def test_an_eval_on_a_router_with_one_deployment_down_finishes_with_no_failed_row(tmp_path, scripted):
    settings = "router_settings: {num_retries: 3, allowed_fails: 0, cooldown_time: 60, retry_after: 0}\n"
    routing.use_router(router_file(tmp_path, {"down": scripted(down), "up": scripted(script)}, settings))
    ev = evaluate(["cot", "sc:3"], "arithmetic", "router/arith", out=tmp_path / "ev", n=4, cache=False, progress=False)
    rows = load_rows(tmp_path / "ev")
    assert len(rows) == 8 and all(r.answer is not None and r.usage.failed_calls == 0 for r in rows)
    calls = [c for r in rows for rnd in Transcript.load(tmp_path / "ev" / r.transcript).rounds for c in rnd.calls]
    assert calls and {c.deployment for c in calls} == {"up"}
    assert ev.summary.loc["cot", "accuracy"] == ev.summary.loc["cot", "accuracy"]  # a number, not NaN


def test_load_is_spread_over_the_deployments_and_each_call_names_its_own(tmp_path, scripted):
    routing.use_router(router_file(tmp_path, {"one": scripted(script), "two": scripted(script)}))
    evaluate(["sc:3"], "arithmetic", "router/arith", out=tmp_path / "ev", n=6, cache=False, progress=False)
    rows = load_rows(tmp_path / "ev")
    calls = [c for r in rows for rnd in Transcript.load(tmp_path / "ev" / r.transcript).rounds for c in rnd.calls]
    assert {c.deployment for c in calls} == {"one", "two"}


def test_router_files_and_names_that_cannot_be_used_are_clear_errors(tmp_path, capsys):
    with pytest.raises(ModelError, match="needs a router file"):
        make_lm("router/arith")
    bad = tmp_path / "bad.yaml"
    for text in ("model_list: [1, 2]", "model_list: [\n", "{}"):
        bad.write_text(text)
        with pytest.raises(InputError, match=r"bad\.yaml"):
            routing.use_router(bad)
    with pytest.raises(InputError, match="cannot read router file"):
        routing.use_router(tmp_path / "missing.yaml")
    routing.use_router(router_file(tmp_path, {"one": "openai/x"}))
    with pytest.raises(ModelError, match="not 'qwen'"):
        make_lm("router/qwen")
    assert main(["run", "--router", str(tmp_path / "missing.yaml"), "What is 2+2?"]) == 2
    assert "cannot read router file" in capsys.readouterr().err
