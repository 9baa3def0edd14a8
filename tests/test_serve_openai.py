"""`madspy serve` as an OpenAI model: the openai package, LiteLLM and DSPy call a real server."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import dspy
import httpx
import litellm
import openai
import pytest
from openai import OpenAI
from scripts import critique, proposal, resolution
from servers import running

from madspy.cli import main
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import save_program
from madspy.server.app import ServeSettings, create_app
from madspy.testing import calls_of

KEY = "s3cret"
AUTH = {"Authorization": f"Bearer {KEY}"}


def multiplies(turn):
    """Agents answer the product of the two numbers in the question they debate (unsure, then sure)."""
    numbers = re.search(r"(\d+) \* (\d+)", turn.inputs.get("question", ""))
    answer = str(int(numbers[1]) * int(numbers[2])) if numbers else "no product asked"
    if turn.role == "proposer":
        return proposal(answer, confidence=0.5)
    if turn.role == "reviser":
        return proposal(answer, confidence=0.95, evidence="critique 1")
    if turn.role == "critic":
        return critique(flawed=False)
    return resolution(answer)


def always_seven(turn):
    if turn.role in ("proposer", "reviser"):
        return proposal("7", confidence=0.95)
    return critique(flawed=False) if turn.role.startswith("critic") else resolution("7")


@pytest.fixture
def served(scripted, tmp_path):
    """A server of two saved programs, ``arith`` (multiplies) and ``seven``: (its context manager, arith's model)."""

    def start(latency_s: float = 0.0, **settings):
        scripts = {"arith": multiplies, "seven": always_seven}
        models = {name: scripted(script, latency_s=latency_s) for name, script in scripts.items()}
        paths = {name: tmp_path / f"{name}.json" for name in models}
        for name, model in models.items():
            save_program(Debate(DebateConfig.with_agents(2, model=model, rounds=3, cache=False)), paths[name])
        config = ServeSettings(**{"store": tmp_path / "t.sqlite3", "api_key": KEY, **settings})
        return running(create_app(paths, config)), models["arith"]

    return start


def client(url: str, key: str = KEY, max_retries: int = 0) -> OpenAI:
    return OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=max_retries)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_openai_package_reads_answer_usage_and_the_madspy_field(served):
    server, model = served()
    with server as url, httpx.Client(base_url=url, headers=AUTH) as http:
        c = client(url)
        assert [(m.id, m.owned_by) for m in c.models.list()] == [("arith", "madspy"), ("seven", "madspy")]
        assert c.models.retrieve("seven").model_extra["madspy"]["model"].startswith("scripted/")

        chat = [
            {"role": "system", "content": "You are terse."},
            *user("What is 2 * 2?"),
            {"role": "assistant", "content": "4"},
            *user("What is 17 * 23?"),
        ]
        r = c.chat.completions.create(model="arith", messages=chat, temperature=0.2, max_tokens=5, seed=1)
        assert r.object == "chat.completion" and r.model == "arith"
        assert r.choices[0].message.content == "391" and r.choices[0].finish_reason == "stop"
        extra = r.model_extra["madspy"]
        assert (extra["answer"], extra["status"], extra["stop_reason"]) == ("391", "converged", "confident_agreement")
        assert extra["confidence"] == 0.95 and r.id == f"chatcmpl-{extra['transcript_id']}"

        t = http.get(f"/v1/transcripts/{extra['transcript_id']}").json()
        assert t["question"] == "What is 17 * 23?"  # the last user message alone: earlier messages are ignored
        calls = [call for rnd in t["rounds"] for call in rnd["calls"]]
        assert r.usage.prompt_tokens == sum(call["prompt_tokens"] for call in calls) > 0
        assert r.usage.completion_tokens == sum(call["completion_tokens"] for call in calls) > 0
        assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
        assert {turn.inputs["question"] for turn in calls_of(model) if turn.role == "proposer"} == {"What is 17 * 23?"}

        assert (
            c.chat.completions.create(model="seven", messages=user("What is 17 * 23?")).choices[0].message.content
            == "7"
        )  # model picks the program
        one = c.chat.completions.create(model="arith", messages=user("What is 3 * 3?"), extra_body={"rounds": 1})
        assert one.choices[0].message.content == "9"
        assert len(http.get(f"/v1/transcripts/{one.model_extra['madspy']['transcript_id']}").json()["rounds"]) == 1
        debate = http.post("/v1/debate", json={"question": "What is 17 * 23?", "program": "seven"}).json()
        assert debate["answer"] == "7"  # madspy's own route picks a program too, by default the first
        assert http.post("/v1/debate", json={"question": "What is 17 * 23?"}).json()["answer"] == "391"


def test_openai_package_streams_rounds_then_the_answer(served):
    server, _ = served()
    with server as url, httpx.Client(base_url=url, headers=AUTH) as http:
        chunks = list(
            client(url).chat.completions.create(
                model="arith", messages=user("What is 17 * 23?"), stream=True, stream_options={"include_usage": True}
            )
        )
        assert {chunk.object for chunk in chunks} == {"chat.completion.chunk"}
        assert chunks[0].choices[0].delta.role == "assistant"
        extras = [(c.model_extra or {}).get("madspy", {}) for c in chunks]
        rounds = [extra["round"] for extra in extras if "round" in extra]
        assert [r["index"] for r in rounds] == [0, 1] and rounds[0]["votes"] == {"0": "391", "1": "391"}
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "391"
        finish = [c for c in chunks if c.choices and c.choices[0].finish_reason]
        assert len(finish) == 1 and finish[0].choices[0].finish_reason == "stop"
        extra = finish[0].model_extra["madspy"]
        assert extra["status"] == "converged" and extra["answer"] == "391"
        assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0  # include_usage: the last chunk
        t = http.get(f"/v1/transcripts/{extra['transcript_id']}").json()
        assert chunks[-1].usage.prompt_tokens == t["usage"]["prompt_tokens"]

        with http.stream(
            "POST", "/v1/chat/completions", json={"model": "arith", "messages": user("What is 2 * 5?"), "stream": True}
        ) as r:
            lines = [line for line in r.iter_lines() if line]
        assert all(line.startswith("data: ") for line in lines) and lines[-1] == "data: [DONE]"
        assert '"usage"' not in "".join(lines)  # usage only when asked for


def test_errors_in_openai_shape(served):
    server, _ = served()
    with server as url:
        with pytest.raises(openai.AuthenticationError) as e:
            client(url, key="wrong").chat.completions.create(model="arith", messages=user("What is 2 * 2?"))
        assert e.value.status_code == 401 and e.value.body["code"] == "invalid_api_key"
        assert set(e.value.body) == {"message", "type", "param", "code"}

        c = client(url)
        with pytest.raises(openai.BadRequestError) as e:
            c.chat.completions.create(model="arith", messages=[{"role": "system", "content": "What is 2 * 2?"}])
        assert e.value.body["param"] == "messages" and "no user message" in e.value.body["message"]
        assert e.value.body["type"] == "invalid_request_error"

        with pytest.raises(openai.NotFoundError) as e:
            c.chat.completions.create(model="gpt-4o", messages=user("What is 2 * 2?"))
        assert e.value.body["code"] == "model_not_found" and "arith, seven" in e.value.body["message"]

        refused = {
            "n": 2,
            "tools": [{"type": "function", "function": {"name": "f"}}],
            "logprobs": True,
            "response_format": {"type": "json_object"},
        }
        for name, value in refused.items():
            with pytest.raises(openai.BadRequestError) as e:
                c.chat.completions.create(model="arith", messages=user("What is 2 * 2?"), **{name: value})
            assert e.value.body["param"] == name and "not supported" in e.value.body["message"]
        with pytest.raises(openai.BadRequestError, match="unrecognized request argument: colour"):
            c.chat.completions.create(model="arith", messages=user("2 * 2?"), extra_body={"colour": "red"})
        with pytest.raises(openai.BadRequestError) as e:
            c.chat.completions.create(model="arith", messages=user("2 * 2?"), extra_body={"rounds": 0})
        assert e.value.body["param"] == "rounds"
        with pytest.raises(openai.BadRequestError, match="the question is empty"):
            c.chat.completions.create(model="arith", messages=user("  "))
        with pytest.raises(openai.BadRequestError, match="text only, not image_url"):
            c.chat.completions.create(
                model="arith",
                messages=[
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}],
                    }
                ],
            )
        with pytest.raises(openai.BadRequestError) as e:
            c.chat.completions.create(model="arith", messages="What is 2 * 2?")
        assert e.value.body["param"] == "messages"

        big = httpx.post(
            f"{url}/v1/chat/completions", headers=AUTH, json={"model": "arith", "messages": user("x" * 70000)}
        )
        assert big.status_code == 413 and big.json()["error"]["code"] == "request_too_large"
        form_type = {"Content-Type": "application/x-www-form-urlencoded"}  # what curl -d sends
        form = httpx.post(
            f"{url}/v1/chat/completions", headers=AUTH | form_type, content=b'{"model": "arith", "messages": []}'
        )
        assert form.status_code == 400 and "Content-Type: application/json" in form.json()["error"]["message"]
        unknown = httpx.post(f"{url}/v1/completions", headers=AUTH, json={"model": "arith", "prompt": "hi"})
        assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "invalid_request_error"
        own = httpx.post(f"{url}/v1/debate", headers=AUTH, json={"question": "2 * 2?", "program": "nope"})
        assert own.status_code == 404 and own.json() == {"error": "no program 'nope'; this server serves arith, seven"}


def test_busy_429_and_timeout_504_without_a_retry(served, scripted):
    # The first LM call of a process pays LiteLLM's one-time setup (~0.7 s here): pay it before the timed requests.
    Debate(DebateConfig.with_agents(1, model=scripted(always_seven), rounds=1, cache=False))(question="warm up")
    # One 0.5 s step answers well inside the 1 s limit; the default debate (three steps, 1.8 s) does not.
    server, _ = served(latency_s=0.5, max_concurrent=1, timeout_s=1.0)
    with server as url, httpx.Client(base_url=url, headers=AUTH, timeout=10) as http:
        c = client(url)
        outcomes: list[str] = []

        def ask() -> None:
            try:
                c.chat.completions.create(
                    model="arith", messages=user("2 * 2?"), extra_body={"rounds": 1, "protocol": "majority"}
                )  # one 0.5 s step
                outcomes.append("answered")
            except openai.RateLimitError as e:
                outcomes.append(e.body["code"])

        threads = [threading.Thread(target=ask) for _ in range(2)]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["answered", "rate_limit_exceeded"]

        retrying = client(url, max_retries=2)  # the 504 says x-should-retry: false, so the debate runs once
        with pytest.raises(openai.InternalServerError) as e:
            retrying.chat.completions.create(model="arith", messages=user("What is 2 * 2?"))
        assert e.value.status_code == 504 and "longer than 1s" in e.value.body["message"]
        deadline = time.monotonic() + 10
        while http.get("/healthz").json()["running"] and time.monotonic() < deadline:
            time.sleep(0.02)
        stored = http.get(f"/v1/transcripts/{e.value.body['transcript_id']}").json()
        assert stored["status"] == "time_exhausted"
        assert 'madspy_http_requests_total{code="504"} 1' in http.get("/metrics").text

        with pytest.raises(openai.APIError, match=r"longer than 1s"):  # streaming: an error line ends the stream
            list(c.chat.completions.create(model="arith", messages=user("What is 2 * 2?"), stream=True))


def test_litellm_calls_a_program_as_an_openai_model(served):
    server, _ = served()
    with server as url:
        r = litellm.completion(
            model="openai/arith", api_base=f"{url}/v1", api_key=KEY, messages=user("What is 12 * 12?")
        )
        assert r.choices[0].message.content == "144"
        assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0
        stream = litellm.completion(
            model="openai/seven", api_base=f"{url}/v1", api_key=KEY, messages=user("What is 12 * 12?"), stream=True
        )
        assert "".join(chunk.choices[0].delta.content or "" for chunk in stream) == "7"  # round chunks add nothing
        with pytest.raises(litellm.NotFoundError):
            litellm.completion(model="openai/nope", api_base=f"{url}/v1", api_key=KEY, messages=user("2 * 2?"))


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_a_dspy_program_uses_a_served_debate_as_its_lm(served, engine):
    server, model = served()
    with server as url:
        lm = dspy.LM("openai/arith", api_base=f"{url}/v1", api_key=KEY, cache=False, engine=engine)
        with dspy.context(lm=lm):
            assert dspy.Predict("question -> answer")(question="What is 6 * 7?").answer == "42"
            thought = dspy.ChainOfThought("question -> answer")(question="What is 6 * 8?")
            assert thought.answer == "48" and "A debate of 2 agents" in thought.reasoning
            assert "/v1/transcripts/" in thought.reasoning
            two_inputs = dspy.Predict("context, question -> answer")(context="Numbers: 3 and 4.", question="3 * 4?")
            assert two_inputs.answer == "12"
            with pytest.raises(Exception, match="a debate fills one output field"):
                dspy.Predict("question -> answer, unit")(question="What is 6 * 7?")
        debated = [turn.inputs["question"] for turn in calls_of(model) if turn.role == "proposer"]
        # DSPy's field markers and format instructions are stripped: the debaters see the question itself.
        assert (
            debated
            == ["What is 6 * 7?"] * 2 + ["What is 6 * 8?"] * 2 + ["context: Numbers: 3 and 4.\n\nquestion: 3 * 4?"] * 2
        )


def test_serve_cli_names_programs(tmp_path, monkeypatch, capsys):
    served_with = {}
    monkeypatch.setattr("madspy.server.app.serve", lambda programs, settings: served_with.update(programs))
    assert main(["serve", "--program", "arith=a.json", "--program", "runs/gsm8k.json", "--db", str(tmp_path)]) == 0
    assert served_with == {"arith": Path("a.json"), "gsm8k": Path("runs/gsm8k.json")}
    assert main(["serve", "--program", "a.json", "--program", "b/a.json", "--db", str(tmp_path)]) == 2
    assert "two programs named 'a'" in capsys.readouterr().err


def test_a_bare_path_is_served_by_its_file_stem(scripted, tmp_path):
    path = tmp_path / "arith-v2.json"
    save_program(Debate(DebateConfig.with_agents(2, model=scripted(multiplies), rounds=2, cache=False)), path)
    with running(create_app(path, ServeSettings(store=tmp_path / "t.sqlite3", api_key=KEY))) as url:
        c = client(url)
        assert [m.id for m in c.models.list()] == ["arith-v2"]
        assert c.chat.completions.create(model="arith-v2", messages=user("5 * 5?")).choices[0].message.content == "25"
