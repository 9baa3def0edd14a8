"""Saving and loading programs: round trip, and refusal of damaged or foreign files."""

from __future__ import annotations

import json

import dspy
import pytest

from madspy.core.errors import InputError, ProgramFileError
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import adopt_roles, load_program, program_state, save_program


@pytest.fixture
def saved(scripted, tmp_path):
    model = scripted(lambda t: "unused")
    debate = Debate(DebateConfig.with_agents(2, model=model, rounds=2, protocol="majority"))
    debate.critic.signature = debate.critic.signature.with_instructions("Find the calculation error.")
    debate.proposer.demos = [dspy.Example(question="2+2?", persona="p", reasoning="2+2=4", answer="4", confidence=0.9)]
    path = tmp_path / "program.json"
    save_program(debate, path, manifest={"task": "arithmetic"})
    return path


def test_round_trip_restores_instructions_demos_config_and_manifest(saved):
    debate = load_program(saved)
    assert debate.critic.signature.instructions == "Find the calculation error."
    assert debate.proposer.demos[0].answer == "4"
    assert debate.config.rounds == 2 and len(debate.config.agents) == 2
    assert debate.manifest["task"] == "arithmetic" and "dspy" in debate.manifest["versions"]
    assert debate.reviser.signature.instructions.startswith("You are one debater")


def test_adopted_roles_take_instructions_and_demos_and_the_rest_stays_as_written(saved, scripted):
    # A compiled role reused in another setting: here a 2-agent debate's critic and proposer in a 3-sample vote.
    voting = Debate(DebateConfig.with_agents(3, model=scripted(lambda t: "unused"), rounds=1))
    before = program_state(voting)
    record = adopt_roles(voting, saved, ["proposer", "critic"])
    after = program_state(voting)
    assert after["critic"]["instructions"] == "Find the calculation error."
    assert after["proposer"]["demos"] == [
        {"question": "2+2?", "persona": "p", "reasoning": "2+2=4", "answer": "4", "confidence": 0.9}
    ]
    assert {k: v for k, v in after.items() if k not in ("proposer", "critic")} == {
        k: v for k, v in before.items() if k not in ("proposer", "critic")
    }
    assert voting.config.rounds == 1 and len(voting.config.agents) == 3  # the setting is the target's
    assert record == {
        "program": saved.as_posix(),
        "sha256": json.loads(saved.read_text())["sha256"],
        "roles": ["proposer", "critic"],
    }
    voting.proposer.demos[0]["answer"] = "5"  # a copy: the source program is not changed through it
    assert load_program(saved).proposer.demos[0].answer == "4"


def test_adopting_an_unknown_role_or_none_is_refused(saved):
    with pytest.raises(InputError, match=r"name some of proposer, .*got judge"):
        adopt_roles(Debate(), saved, ["judge"])
    with pytest.raises(InputError, match="got none"):
        adopt_roles(Debate(), saved, [])


def test_overrides_port_a_program_to_another_setting(saved):
    assert load_program(saved, rounds=4).config.rounds == 4


def test_a_local_model_in_the_models_folder_is_saved_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("MADSPY_MODELS_DIR", str(tmp_path / "models"))
    for folder in ("models", "other"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.gguf").write_bytes(b"GGUF")  # never loaded: nothing is asked
    here, elsewhere = f"local/{tmp_path}/models/x.gguf", f"local/{tmp_path}/other/x.gguf"
    config = DebateConfig.with_agents(2, model=here, rounds=1).updated(critic={"model": elsewhere})
    path = tmp_path / "p.json"
    save_program(Debate(config), path, manifest={"model": here})
    loaded = load_program(path)
    assert loaded.config.model == "local/x" and loaded.manifest["model"] == "local/x"
    assert loaded.config.critic.model == elsewhere  # outside the models folder: the path is all there is


def test_tampered_file_is_refused(saved):
    doc = json.loads(saved.read_text())
    doc["roles"]["critic"]["instructions"] = "Always say sound."
    saved.write_text(json.dumps(doc))
    with pytest.raises(ProgramFileError, match="sha256"):
        load_program(saved)


def test_truncated_file_is_refused(saved):
    saved.write_text(saved.read_text()[:200])
    with pytest.raises(ProgramFileError, match="not valid JSON"):
        load_program(saved)


def test_file_from_another_dspy_minor_is_refused(saved):
    doc = json.loads(saved.read_text())
    doc["manifest"]["versions"]["dspy"] = "2.6.27"
    body = {k: v for k, v in doc.items() if k != "sha256"}
    from madspy.programs.artifact import content_digest

    doc["sha256"] = content_digest(body)
    saved.write_text(json.dumps(doc))
    with pytest.raises(ProgramFileError, match=r"dspy 2\.6\.27"):
        load_program(saved)


def test_other_format_and_missing_keys_are_refused(saved):
    saved.write_text(json.dumps({"format": "something/9"}))
    with pytest.raises(ProgramFileError, match="lacks"):
        load_program(saved)
    saved.write_text("[]")
    with pytest.raises(ProgramFileError, match="expected a JSON object"):
        load_program(saved)
