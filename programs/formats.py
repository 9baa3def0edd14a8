"""How a program's roles are put to a model: its format, one setting of the program (``DebateConfig.format``).

- ``chat``: DSPy's ``ChatAdapter`` (``[[ ## field ## ]]`` sections), without its silent JSON fallback call.
  A reply that stops after its free-text reasoning (small models end it with the boxed answer, as they were
  trained to, and never open the answer field) has its answer read from that text (``ReasoningFirstChatAdapter``);
  any other reply that does not parse is asked again once, showing the error (``programs.calls``).
- ``json``: DSPy's ``JSONAdapter``; on a ``local/`` model the output schema becomes a llama.cpp grammar, so
  the reply is valid JSON (free-text fields unbounded, the answer one line: ``core.local.bounded``).
- ``text``: free text both ways, as a model is trained to talk: the role's instructions as the system message,
  the inputs as plain paragraphs (the question last), and a reply that reasons, boxes its answer and ends with
  ``Confidence: x`` (and ``Evidence: ...`` for a reviser), read by a parser (``TextAdapter``). It serves the
  answering roles; other roles (critic, judges) are spoken to in ``chat``.
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

Format = Literal["auto", "chat", "json", "text", "plain"]
PLAIN_SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."
# The format each model answered best in, measured on train questions (bench/RESULTS.md, "Free-text reasoning: the
# format chosen on 40 gsm8k train questions").
# The bench model: plain 0.725, chat 0.725, text 0.65 (2 answers unread) on 40 gsm8k train questions (2026-12-07).
# SmolLM2-135M answers nothing right in any format; JSON under a grammar is the one that always parses, and fast.
MEASURED: dict[str, Format] = {"local/qwen2.5-coder-1.5b-instruct-q4_k_m": "chat", "local/smollm2-135m": "json"}


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
                worked = worked_reply(demo, stated=False)  # the plain prompt asks for no confidence
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
    are left empty (a confidence it did not state is none). An answer field that holds no letter or digit is
    replaced by the reasoning's final answer the same way.

    >>> reply = "[[ ## reasoning ## ]]\n5 boxes of 3 is 15. So she has $\\boxed{15}$ pens."
    >>> signature = dspy.Signature("question -> reasoning, answer, confidence: float")
    >>> ReasoningFirstChatAdapter().parse(signature, reply)["answer"]
    '15'
    """

    def __init__(self) -> None:
        super().__init__(use_json_adapter_fallback=False)

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        try:
            fields = super().parse(signature, completion)
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
        if _says_nothing(fields.get("answer")) and isinstance(fields.get("reasoning"), str):
            fields["answer"] = final_answer_in(fields["reasoning"]) or fields["answer"]
        return fields


def _says_nothing(answer: Any) -> bool:
    """An answer field with no letter or digit in it (Qwen2.5-Coder wrote ``**`` after reasoning to
    "**Final Answer:** 216", 1 of 200 gsm8k replies, 2026-12-07): the reasoning's own final answer is read instead.

    >>> _says_nothing("**"), _says_nothing(""), _says_nothing("216"), _says_nothing(None)
    (True, True, False, False)
    """
    return isinstance(answer, str) and not any(c.isalnum() for c in answer)


TEXT_FIELDS = ("reasoning", "answer", "confidence", "evidence_ref")  # the outputs the text format reads from free text
_CONFIDENCE = re.compile(r"^\W*confidence\W*[:=]\W*(\d+(?:\.\d+)?)\s*(%?)", re.IGNORECASE | re.MULTILINE)
_EVIDENCE = re.compile(r"^\W*evidence\W*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)


class TextAdapter(dspy.Adapter):
    r"""Free text both ways for the answering roles: the instructions, the inputs as paragraphs, and a reply that
    reasons, boxes its answer and states its confidence (and, revising, its evidence) on last lines, read here.
    Signatures with other outputs are spoken to by ``ReasoningFirstChatAdapter``.

    >>> signature = dspy.Signature("question -> reasoning, answer, confidence: float", "Answer it.")
    >>> reply = "3 * 4 = 12, and 12 - 5 = 7.\nSo she keeps $\\boxed{7}$ pens.\nConfidence: 0.9"
    >>> TextAdapter().parse(signature, reply) | {"reasoning": "..."}
    {'reasoning': '...', 'answer': '7', 'confidence': 0.9}
    >>> TextAdapter().format(signature, [], {"question": "2+2?"})[1]
    {'role': 'user', 'content': '2+2?'}
    """

    def __init__(self) -> None:
        super().__init__()
        self.structured = ReasoningFirstChatAdapter()

    @staticmethod
    def speaks(signature: type[dspy.Signature]) -> bool:
        """Whether a signature's outputs are all ones the text format reads (an answering role's)."""
        return "question" in signature.input_fields and set(signature.output_fields) <= set(TEXT_FIELDS)

    def format(
        self, signature: type[dspy.Signature], demos: list[dict[str, Any]], inputs: dict[str, Any]
    ) -> list[dict[str, Any]]:
        if not self.speaks(signature):
            return self.structured.format(signature, demos, inputs)
        messages = [{"role": "system", "content": f"{signature.instructions}\n\n{_closing(signature)}"}]
        for demo in demos:
            if {"question", "answer"} <= demo.keys():
                messages += [
                    {"role": "user", "content": _paragraphs(signature, demo)},
                    {"role": "assistant", "content": worked_reply(demo)},
                ]
        return [*messages, {"role": "user", "content": _paragraphs(signature, inputs)}]

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        if not self.speaks(signature):
            return self.structured.parse(signature, completion)
        confidence, evidence = _CONFIDENCE.findall(completion), _EVIDENCE.findall(completion)
        body = _EVIDENCE.sub("", _CONFIDENCE.sub("", completion)).strip()
        answer = final_answer_in(body)
        if not answer:
            raise AdapterParseError("TextAdapter", signature, completion, message="the reply gives no answer")
        read: dict[str, Any] = {"reasoning": body, "answer": answer}
        if confidence:
            value, percent = confidence[-1]
            read["confidence"] = float(value) / (100 if percent or float(value) > 1 else 1)
        if evidence:
            read["evidence_ref"] = evidence[-1].strip()
        return {name: read.get(name) for name in signature.output_fields}


TEXT_REPLY = (
    "Reason step by step in plain text, writing out every computation, and put your final answer within \\boxed{}."
)
TEXT_CONFIDENCE = "Then write a last line 'Confidence: x', x from 0.0 to 1.0, the probability your answer is right."
TEXT_EVIDENCE = "If you changed your answer, write a line 'Evidence: ...' naming the argument that made you."


def _closing(signature: type[dspy.Signature]) -> str:
    """How a text reply is asked to end, for the outputs the signature has."""
    wanted = {"confidence": TEXT_CONFIDENCE, "evidence_ref": TEXT_EVIDENCE}
    return " ".join([TEXT_REPLY, *(line for name, line in wanted.items() if name in signature.output_fields)])


def _paragraphs(signature: type[dspy.Signature], values: dict[str, Any]) -> str:
    """A role's inputs as plain paragraphs, the question last and bare (as a user asks it)."""
    others = [
        f"{name.replace('_', ' ').capitalize()}:\n{_text(values.get(name))}"
        for name in signature.input_fields
        if name != "question" and values.get(name) not in (None, "", [])
    ]
    return "\n\n".join([*others, str(values.get("question", ""))])


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(f"{i}. {item}" for i, item in enumerate(value, 1))
    return str(value)


def worked_reply(fields: dict[str, Any], stated: bool = True) -> str:
    r"""Output fields as the free-text reply the plain and text formats read: the reasoning, the boxed answer and,
    if ``stated``, the confidence and evidence lines (how demos are shown, and how the scripted model replies).

    >>> print(worked_reply({"reasoning": "2+2=4", "answer": "4", "confidence": 0.9, "evidence_ref": "none"}))
    2+2=4
    <BLANKLINE>
    The final answer is $\boxed{4}$.
    Confidence: 0.9
    """
    lines = [f"{fields.get('reasoning') or ''}\n\nThe final answer is $\\boxed{{{fields.get('answer')}}}$.".strip()]
    if stated and fields.get("confidence") is not None:
        lines.append(f"Confidence: {fields['confidence']}")
    if stated and fields.get("evidence_ref") not in (None, "", "none"):
        lines.append(f"Evidence: {fields['evidence_ref']}")
    return "\n".join(lines)


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
    if chosen == "text":
        return TextAdapter()
    return ReasoningFirstChatAdapter()
