"""The debate's roles, and one DSPy Signature per role.

The brief's five roles (proposer, critic, resolver, referee, mask evaluator) are six
predictors: the proposer's later-round revision is a role of its own (``reviser``), with its
own inputs, demos and instructions. A seventh, the ``solver``, serves the critic's program
check: it writes the question as a program that a sandbox runs. ``Role`` names them once; the same spelling names the
predictor (``debate.critic``), its config section, a transcript call's ``role`` and its entry in
a compiled artifact. Each Signature's docstring is the hand-written instruction of its role:
the "handwritten" arm of A/B tests against compiled programs. No two roles share a
Signature class, so DSPy optimizers route traces and demos to the right predictor.

Example:
    >>> import dspy
    >>> from madspy.signatures import Propose
    >>> propose = dspy.Predict(Propose)
    >>> list(Propose.output_fields)  # free-text reasoning first, then the short structured fields
    ['reasoning', 'answer', 'confidence']
"""

from __future__ import annotations

from typing import Literal

import dspy
from pydantic import BaseModel, Field

from madspy.core.vocabulary import Vocabulary


class Role(Vocabulary):
    """The debate's roles, each one predictor of ``Debate`` under this name."""

    PROPOSER = "proposer"  # answers on its own in round 0
    REVISER = "reviser"  # the proposer in later rounds: revises, seeing peers, critiques and the referee's note
    CRITIC = "critic"
    RESOLVER = "resolver"
    REFEREE = "referee"
    MASK = "mask"  # the mask evaluator: keeps or drops a remembered answer (MAD-M2)
    SOLVER = "solver"  # the program check's solver: writes the question as a program (critic.program_check)
    PROGRAMMER = "programmer"  # the proposer of an agent in program mode: its answer is what its program computes
    VERIFIER = "verifier"  # the proposer of an agent in verify mode: it solves, then checks its answer backwards

    @property
    def answers(self) -> bool:
        """Whether this role gives an agent's answer (proposer, programmer and reviser)."""
        return self in (Role.PROPOSER, Role.PROGRAMMER, Role.VERIFIER, Role.REVISER)


IssueType = Literal[
    "invalid_assumption",
    "contradiction",
    "boundary_violation",
    "calculation_error",
    "missing_constraint",
]
Verdict = Literal["flawed", "sound"]
ResolverStatus = Literal["converged", "convergence_failed", "budget_exhausted", "undetermined"]
MaskLabel = Literal["YES", "NO", "NOT_SURE"]
# Answering roles reason in free text first (as models are trained to; ``dspy.ChainOfThought``'s order), and only
# then fill the short structured fields. Nothing caps the reasoning's steps: ``programs.steps`` derives them.
REASONING = "step-by-step reasoning in plain text, every computation written out"
# The answer field, for every role that answers. "the option's letter": asked for a letter in the question alone,
# the bench model wrote an option's text or value in 16 of 100 arc_challenge answer fields (2026-12-07).
ANSWER = "the final answer only; for a question with lettered options, the option's letter"


class CriticIssue(BaseModel):
    """One concrete flaw a critic found in one step of a proposal."""

    location: str = Field(description="which reasoning step, e.g. 'step 2'")
    issue_type: IssueType
    description: str = Field(description="what is wrong, in one sentence")
    evidence: str = Field(description="the condition or computation that shows it")


class Propose(dspy.Signature):
    """You are one debater in a panel that answers a question together.
    Answer the question on your own, from the perspective given in `persona`.
    In `reasoning`, think step by step in plain text and write out every computation.
    Then give a short final `answer` (a number, a letter, yes/no or a short phrase; no
    explanation in it) and your `confidence` that the answer is correct, from 0.0 (a
    guess) to 1.0 (certain)."""

    question: str = dspy.InputField()
    persona: str = dspy.InputField(desc="the perspective you answer from")
    reasoning: str = dspy.OutputField(desc=REASONING)
    answer: str = dspy.OutputField(desc=ANSWER)
    confidence: float = dspy.OutputField(desc="probability your answer is correct, 0.0 to 1.0")


class Revise(dspy.Signature):
    """You are one debater in a panel. You answered the question before; now you
    see other debaters' answers, critiques of your reasoning and, possibly, a note
    from the referee. In `reasoning`, re-check your reasoning against the question's
    conditions step by step, in plain text.
    Keep your answer if the objections are wrong; change it only if a specific
    argument shows your answer is wrong. In `evidence_ref` name the specific peer
    argument or critique that made you change (for example "critique 1: step 2
    adds instead of multiplying"), or write "none" if you kept your answer or
    cannot point to one. Do not change your answer just because others disagree."""

    # What every reviser of a round shares comes first (question, peers), what is its own after it:
    # a backend that caches prompt prefixes (llama.cpp's KV cache, hosted prompt caching) then
    # reuses the shared part from one reviser to the next.
    question: str = dspy.InputField()
    peer_answers: list[str] = dspy.InputField(desc="other debaters' answers and reasoning")
    persona: str = dspy.InputField(desc="the perspective you answer from")
    previous_answer: str = dspy.InputField(desc="your previous answer and reasoning")
    critiques: list[str] = dspy.InputField(desc="issues critics found in your reasoning")
    referee_note: str = dspy.InputField(desc="instruction from the referee; may be empty")
    reasoning: str = dspy.OutputField(desc=REASONING)
    answer: str = dspy.OutputField(desc=ANSWER)
    confidence: float = dspy.OutputField(desc="probability your answer is correct, 0.0 to 1.0")
    evidence_ref: str = dspy.OutputField(desc="the argument that made you change your answer, or 'none'")


class Critique(dspy.Signature):
    """You are a critic. Examine one proposed answer to the question: in `reasoning`,
    check its steps one by one in plain text, recomputing what they compute. Then
    report concrete flaws: an assumption the question does not support, a
    contradiction between steps, a value outside the allowed range, a calculation
    error, or a condition of the question that was ignored. Each issue names the
    step it is in, its type, what is wrong and the evidence. Do not write your own
    answer. If every step holds, return no issues and the verdict "sound";
    otherwise the verdict is "flawed"."""

    question: str = dspy.InputField()
    proposal: str = dspy.InputField(desc="the answer and reasoning steps under review")
    focus: str = dspy.InputField(desc="what to check especially; may be empty")
    reasoning: str = dspy.OutputField(desc="your check of each step, in plain text")
    issues: list[CriticIssue] = dspy.OutputField(desc="flaws found; empty if none")
    verdict: Verdict = dspy.OutputField()


class Resolve(dspy.Signature):
    """You are the neutral judge of a debate. Read the question, the debaters'
    final answers with their reasoning, the critics' findings and the vote tally.
    Verify the key steps yourself, in plain text, in `verification`: which steps
    you trust and why; a majority is not proof. Then give the `final_answer` (short,
    no explanation), your `confidence` that it is correct (0.0 to 1.0) and a
    `status`: "converged" if the debate settled on a well-supported answer,
    "convergence_failed" if debaters still disagree and you had to pick,
    "undetermined" if no answer is supported."""

    question: str = dspy.InputField()
    proposals: list[str] = dspy.InputField(desc="each debater's final answer and reasoning")
    critiques: list[str] = dspy.InputField(desc="the critics' findings on the final proposals")
    tally: str = dspy.InputField(desc="votes per answer")
    verification: str = dspy.OutputField(desc="which steps you trust and why, checked in plain text")
    final_answer: str = dspy.OutputField(desc=ANSWER)
    confidence: float = dspy.OutputField(desc="probability the final answer is correct, 0.0 to 1.0")
    status: ResolverStatus = dspy.OutputField()


class CritiqueProposalOnly(dspy.Signature):
    """You are a critic. You see only a proposed solution, not the original
    question: judge whether the reasoning shown holds on its own. In `reasoning`, check
    its steps one by one in plain text, recomputing what they compute. Then report concrete
    flaws: an unstated assumption, a contradiction between steps, a value outside
    a stated range, a calculation error, or a jump between steps that skips a
    needed condition. Each issue names the step it is in, its type, what is wrong
    and the evidence. Do not write your own answer. If every step holds, return no
    issues and the verdict "sound"; otherwise the verdict is "flawed"."""

    proposal: str = dspy.InputField(desc="the answer and reasoning steps under review")
    focus: str = dspy.InputField(desc="what to check especially; may be empty")
    reasoning: str = dspy.OutputField(desc="your check of each step, in plain text")
    issues: list[CriticIssue] = dspy.OutputField(desc="flaws found; empty if none")
    verdict: Verdict = dspy.OutputField()


class Referee(dspy.Signature):
    """You are the referee of a debate. You do not argue. Read the original
    question and the last round of the debate. Rate `relevance` of the round to
    the original question from 0.0 (entirely off topic) to 1.0 (fully on topic),
    say whether the debaters have `converged` on one answer, summarise any
    off-topic drift in `off_topic_summary` (empty if none) and, if relevance is
    below 0.5, write an `intervention`: one concrete instruction that names the
    drift and quotes the original question. Otherwise leave `intervention` empty.
    Rate `agreement` from 0.0 (the debaters are far apart) to 1.0 (they hold one
    answer for the same reasons)."""

    question: str = dspy.InputField()
    round_text: str = dspy.InputField(desc="the last round's answers and arguments")
    relevance: float = dspy.OutputField(desc="0.0 to 1.0")
    converged: bool = dspy.OutputField()
    off_topic_summary: str = dspy.OutputField()
    intervention: str = dspy.OutputField()
    # Last, so programs saved before it load unchanged (DSPy restores signature fields by position).
    agreement: float = dspy.OutputField(desc="0.0 to 1.0")


class MaskEvaluate(dspy.Signature):
    """You check one answer from the previous round of a debate before the next
    round sees it. In `reasoning`, solve the question yourself briefly, in plain text;
    then judge whether the given answer and its reasoning are correct: "YES" if
    correct, "NO" if wrong, "NOT_SURE" if you cannot tell."""

    question: str = dspy.InputField()
    memory: str = dspy.InputField(desc="a previous-round answer with its reasoning")
    reasoning: str = dspy.OutputField(desc="your own brief solution, in plain text")
    label: MaskLabel = dspy.OutputField()


class ProposeProgram(dspy.Signature):
    """You are one debater in a panel that answers a question together, and you answer by writing a program.
    From the perspective given in `persona`, plan in `reasoning`, in plain text, which quantities the question
    gives and how they combine. Then write the `program`: short Python that names each quantity in a variable,
    computes step by step and assigns the final number to a variable named `answer`. No input(), no print(),
    no imports but math. Give your `confidence` that the program's answer is correct, from 0.0 to 1.0."""

    # An agent in program mode (Program of Thoughts, Chen et al. 2022; PAL, Gao et al. 2023): the sandbox runs
    # the program (``programs.modes``) and the number it computes is the agent's answer; the program is its
    # argument, which peers can check.
    question: str = dspy.InputField()
    persona: str = dspy.InputField(desc="the perspective you answer from")
    reasoning: str = dspy.OutputField(desc="your plan in plain text: the quantities given and how they combine")
    program: str = dspy.OutputField(desc="Python code that assigns the final number to `answer`")
    confidence: float = dspy.OutputField(desc="probability the program's answer is correct, 0.0 to 1.0")


class ProposeAndVerify(dspy.Signature):
    """You are one debater in a panel that answers a question together, and you check your answer backwards.
    From the perspective given in `persona`, solve the question in `reasoning`, step by step in plain text,
    writing out every computation. Then, in `verification`, take your answer as given and substitute it back
    into each condition the question states, one by one, and check that every condition holds. If one does not,
    find the mistake and correct the answer. Give the short final `answer` (no explanation in it) and your
    `confidence` that it is correct, from 0.0 to 1.0."""

    # An agent in verify mode (backward verification: Weng et al. 2023, "Large Language Models are Better
    # Reasoners with Self-Verification"): its check by substitution is its argument in the debate.
    question: str = dspy.InputField()
    persona: str = dspy.InputField(desc="the perspective you answer from")
    reasoning: str = dspy.OutputField(desc=REASONING)
    verification: str = dspy.OutputField(desc="your answer substituted into each condition of the question, checked")
    answer: str = dspy.OutputField(desc=f"{ANSWER}, corrected if a check failed")
    confidence: float = dspy.OutputField(desc="probability your answer is correct, 0.0 to 1.0")


class SolveInCode(dspy.Signature):
    """Write a short Python program that solves the question.
    Name each quantity the question gives in a variable, compute step by step with arithmetic,
    and assign the final number to a variable named `answer`. No input(), no print(), no imports."""

    # The solver of the program check (``madspy.programs.program_check``): its code is run in a sandbox
    # and compared with the debaters' answers (Program of Thoughts, Chen et al. 2022).
    question: str = dspy.InputField()
    program: str = dspy.OutputField(desc="Python code that assigns the final number to `answer`")
