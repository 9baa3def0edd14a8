"""How a program's roles are put to a model: its format, one setting of the program (``DebateConfig.format``).

- ``chat``: DSPy's ``ChatAdapter`` (``[[ ## field ## ]]`` sections), without its silent JSON fallback call.
  A reply that stops after its free-text reasoning (small models end it with the boxed answer, as they were
  trained to, and never open the answer field) has its answer read from that text (``ReasoningFirstChatAdapter``);
  any other reply that does not parse is asked again once, showing the error (``programs.calls``).
- ``json``: DSPy's ``JSONAdapter``; on a ``local/`` model the output schema becomes a llama.cpp grammar, so
  the reply is valid JSON (free-text fields unbounded, the answer one line: ``core.local.bounded``).
- ``plain``: what a user who asks the model directly gets: the model's own chat template, one system line
  (``PLAIN_SYSTEM``), the question alone, and the final answer read from the free text
  (``answers.final_answer_in``: the boxed value, else the last number). It serves agents that answer once
  (the ``plain`` and ``plain-sc`` baselines): no persona, no confidence, no other role.
- ``auto``: the format measured best for the model (``MEASURED``), else ``chat``.

Whatever the format, answering roles reason in free text first and fill the short fields after it
(``signatures.REASONING``).

Example:
    >>> type(adapter_for("openai/gpt-4o-mini", "json")).__name__, type(adapter_for("openai/gpt-4o-mini")).__name__
    ('JSONAdapter', 'ReasoningFirstChatAdapter')
"""

from __future__ import annotations

import re
from typing import Any, Literal

import dspy
from dspy.utils.exceptions import AdapterParseError

from madspy.core.models import portable_model
from madspy.programs.answers import final_answer_in

Format = Literal["auto", "chat", "json", "plain"]
PLAIN_SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."
# The format each model answered best in, measured on train questions (bench/RESULTS.md, "Output format ...").
# SmolLM2-135M answers nothing right in any format; JSON under a grammar is the one that always parses, and fast.
MEASURED: dict[str, Format] = {"local/smollm2-135m": "json"}


class PlainAdapter(dspy.Adapter):
    r"""The question as a user asks it: one system line, the question, and the answer read from free text.

    Demos, where a program has them, are earlier turns: the question, then the worked reasoning ending in the
    boxed answer (standard few-shot prompting). Inputs other than the question (a persona) are not shown.

    >>> messages = PlainAdapter().format(dspy.Signature("question -> answer"), [], {"question": "2+2?"})
    >>> [m["role"] for m in messages], messages[1]["content"]
    (['system', 'user'], '2+2?')
    >>> PlainAdapter().parse(dspy.Signature("question -> reasoning, answer"), r"2+2=4, so \boxed{4}.")
    {'reasoning': '2+2=4, so \\boxed{4}.', 'answer': '4'}
    """

    def format(
        self, signature: type[dspy.Signature], demos: list[dict[str, Any]], inputs: dict[str, Any]
    ) -> list[dict[str, Any]]:
        if "question" not in inputs:
            raise ValueError(f"the plain format asks a question; {signature.__name__} has none (use chat or json)")
        messages = [{"role": "system", "content": PLAIN_SYSTEM}]
        for demo in demos:
            if "question" in demo and "answer" in demo:
                worked = f"{demo.get('reasoning') or ''}\n\nThe final answer is $\\boxed{{{demo['answer']}}}$.".strip()
                messages += [
                    {"role": "user", "content": str(demo["question"])},
                    {"role": "assistant", "content": worked},
                ]
        return [*messages, {"role": "user", "content": str(inputs["question"])}]

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        read = {"reasoning": completion, "answer": final_answer_in(completion)}
        return {name: read.get(name) for name in signature.output_fields}


_FIELD_HEADER = re.compile(r"\[\[ ## \w+ ## \]\]")


class ReasoningFirstChatAdapter(dspy.ChatAdapter):
    r"""DSPy's ``ChatAdapter``; a reply to a reasoning-first signature that opens its reasoning field but never its
    answer field is read as free text: the answer is the one it gives (``answers.final_answer_in``), the other fields
    are left empty (a confidence it did not state is none).

    >>> reply = "[[ ## reasoning ## ]]\n5 boxes of 3 is 15. So she has $\\boxed{15}$ pens."
    >>> signature = dspy.Signature("question -> reasoning, answer, confidence: float")
    >>> ReasoningFirstChatAdapter().parse(signature, reply)["answer"]
    '15'
    """

    def __init__(self) -> None:
        super().__init__(use_json_adapter_fallback=False)

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        try:
            return super().parse(signature, completion)
        except AdapterParseError:
            opened = completion.lstrip().startswith("[[ ## reasoning ## ]]")  # the format followed, then left
            if not opened or not {"reasoning", "answer"} <= signature.output_fields.keys():
                raise
            text = _FIELD_HEADER.sub("", completion).strip()
            answer = final_answer_in(text)
            if not answer:
                raise
            read = {"reasoning": text, "answer": answer}
            return {name: read.get(name) for name in signature.output_fields}


def resolve(model: str, format: Format = "auto") -> Format:
    """The format a model is spoken to in: ``format``, or for ``auto`` the one measured for the model.

    >>> resolve("openai/gpt-4o-mini"), resolve("openai/gpt-4o-mini", "json"), resolve("local/smollm2-135m")
    ('chat', 'json', 'json')
    """
    return MEASURED.get(portable_model(model), "chat") if format == "auto" else format


def adapter_for(model: str, format: Format = "auto") -> dspy.Adapter:
    """The DSPy adapter that speaks ``format`` (``auto``: the measured one for ``model``)."""
    chosen = resolve(model, format)
    if chosen == "json":
        return dspy.JSONAdapter()
    if chosen == "plain":
        return PlainAdapter()
    return ReasoningFirstChatAdapter()
