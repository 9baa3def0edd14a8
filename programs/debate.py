"""The ``Debate`` module: the debate's roles as predictors of one ``dspy.Module``, and the loop that runs them.

Round 0: every agent answers on its own (or, with a cascade, one agent first). After each
round: votes and flips are recorded, then the budget, the echo alarm, the stop rules and the
referee decide whether the debate goes on; if it does, critics attack the proposals. Each later
round: the memory policy picks (and the mask evaluator may prune) the peer answers each agent
sees, then every agent revises. At the end the decision protocol (or the resolver, for
``judge``) picks the answer. All calls of one step run concurrently (in turn when they all go
to in-process local models, which serve one call at a time). The replaceable parts live in
their own modules: config, protocols, stopping, memory, flips, critique, checks, topology, credit,
budget, transcript.

Example (a scripted model stands in for a real one; see ``madspy.testing``)::

    debate = Debate(DebateConfig.with_agents(3, model="openai/gpt-4o-mini", rounds=2))
    result = debate(question="What is 17 * 23?")
    result.answer, result.confidence, result.status, result.stop_reason
    result.transcript.rounds[0].calls[0].prompt_tokens
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import dspy

from madspy.core.models import check_question, make_lm, one_call_at_a_time
from madspy.programs.answers import echoes_tally, format_tally, normalize_answer, read_answer
from madspy.programs.budget import RunBudget
from madspy.programs.calibration import signals
from madspy.programs.calls import Job, Outcome, run_jobs
from madspy.programs.checks import check_proposal, checks_on
from madspy.programs.config import DebateConfig
from madspy.programs.credit import CreditLedger
from madspy.programs.critique import CHECKLIST, CONFIDENT_FLAGGED, focus_for, issue_lines, valid_issues, verdict_line
from madspy.programs.defenses import (
    DATA_REMINDER,
    REVISER_WARNING,
    adversary_persona,
    anchored_votes,
    critic_weights,
    neutralize,
    neutralize_question,
    spotlight,
)
from madspy.programs.distinct import digest, distinct_answers
from madspy.programs.flips import Flip, echo_ratio, flip_kind
from madspy.programs.formats import adapter_for
from madspy.programs.memory import MASKED, MaskDecision, best_by_logprob, keeps, peer_view, summary_line
from madspy.programs.modes import ROLE_OF_MODE, ProgramPredict
from madspy.programs.program_check import run_program, sampling
from madspy.programs.protocols import DecisionContext, Vote, get_protocol, tally
from madspy.programs.steps import proposal_steps
from madspy.programs.stopping import first_reason, stop_rules
from madspy.programs.topology import group_votes, visible
from madspy.programs.transcript import Call, Decision, Event, EventKind, Round, Status, StopReason, Transcript, Usage
from madspy.signatures import (
    Critique,
    CritiqueProposalOnly,
    MaskEvaluate,
    Propose,
    ProposeAndVerify,
    ProposeProgram,
    Referee,
    Resolve,
    Revise,
    Role,
    SolveInCode,
)

# Stops after which the resolver still judges the final proposals with fresh critiques.
FINAL_CRITIQUE_REASONS = {
    StopReason.STABLE_ANSWERS,
    StopReason.MAX_ROUNDS,
    StopReason.ECHO_ALARM,
    StopReason.OFF_TOPIC,
    StopReason.REFEREE_CONVERGED,
}
# Stops that count as converged even when the last votes differ (the referee's call, one confident agent);
# agents that keep disagreeing (stable_answers) have not converged.
CONVERGED_REASONS = {
    StopReason.CONFIDENT_AGREEMENT,
    StopReason.DECISIVE_VOTE,
    StopReason.REFEREE_CONVERGED,
    StopReason.CASCADE_CONFIDENT,
}
# Stops where a judge protocol takes the majority instead of calling the resolver, and why.
MAJORITY_INSTEAD_OF_JUDGE = {
    StopReason.CONFIDENT_AGREEMENT: "unanimous and confident; resolver not needed",
    StopReason.CASCADE_CONFIDENT: "one confident agent; no debate needed",
    StopReason.BUDGET_EXHAUSTED: "token budget spent; majority of the last answers",
    StopReason.TIME_EXHAUSTED: "time budget spent; majority of the last answers",
}


@functools.lru_cache(maxsize=128)
def _lm(
    model: str,
    temperature: float,
    max_tokens: int,
    timeout_s: float,
    num_retries: int,
    cache: bool,
    api_base: str | None,
) -> dspy.LM:
    return make_lm(
        model,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout_s=timeout_s,
        num_retries=num_retries,
        cache=cache,
        api_base=api_base,
    )


def format_proposal(p: dspy.Prediction | dict[str, Any]) -> str:
    """A proposal as peers, critics and the resolver read it.

    Its steps are derived from the free-text reasoning (``steps.steps_of``), numbered so a critic can name one.

    >>> print(format_proposal({"answer": "391", "confidence": 0.9, "reasoning": "17*20=340. 17*3=51. 340+51=391."}))
    answer: 391 (confidence 0.90)
    step 1: 17*20=340.
    step 2: 17*3=51.
    step 3: 340+51=391.
    """
    steps = proposal_steps(p)
    lines = [f"answer: {p.get('answer')} (confidence {float(p.get('confidence') or 0):.2f})"]
    lines += [f"step {i}: {s}" for i, s in enumerate(steps, 1)]
    return "\n".join(lines)


class Debate(dspy.Module):
    """A multi-agent debate whose roles (``signatures.Role``) are DSPy predictors of this module.

    Args:
        config: all settings (agents, rounds, protocol, roles, stop rules, models).
        normalize: maps an answer to the key votes are counted on (None: no vote).
            Tasks pass their own; the default handles numbers, case and punctuation.
        **settings: shortcuts for ``DebateConfig`` fields when ``config`` is None.

    Calling the module returns a ``dspy.Prediction`` with ``answer``,
    ``confidence``, ``status``, ``stop_reason``, ``usage`` and ``transcript``.
    """

    def __init__(
        self,
        config: DebateConfig | None = None,
        *,
        normalize: Callable[[str], str | None] = normalize_answer,
        **settings: Any,
    ):
        super().__init__()
        self.config = config if config is not None else DebateConfig(**settings)
        self.normalize = normalize
        self.manifest: dict[str, Any] = {}  # set by load_program: task, model, scores, versions
        # One predictor per role, named by the role: what artifacts and optimizers see.
        self.proposer = dspy.Predict(Propose)
        self.reviser = dspy.Predict(Revise)
        self.critic = dspy.Predict(CritiqueProposalOnly if self.config.critic.isolated else Critique)
        self.resolver = dspy.Predict(Resolve)
        self.mask = dspy.Predict(MaskEvaluate)
        self.referee = dspy.Predict(Referee)
        self.solver = dspy.Predict(SolveInCode)
        self.programmer = ProgramPredict(ProposeProgram)
        self.verifier = dspy.Predict(ProposeAndVerify)
        for model in self.config.models():  # fail now, not mid-debate, on an unknown model
            self._lm_for(model, 0.0)

    def fork(self, **changes: Any) -> Debate:
        """A new ``Debate`` with this one's role instructions and demos and its config updated by ``changes``.

        >>> Debate(DebateConfig(model="openai/m")).fork(rounds=2).config.rounds
        2
        """
        debate = Debate(self.config.updated(**changes), normalize=self.normalize)
        source = dict(self.named_predictors())
        for name, predictor in debate.named_predictors():
            predictor.signature, predictor.demos = source[name].signature, list(source[name].demos)
        debate.manifest = self.manifest
        return debate

    def _lm_for(self, model: str | None, temperature: float) -> dspy.LM:
        c = self.config
        api_base = c.api_base if model in (None, c.model) else None
        return _lm(model or c.model, temperature, c.max_tokens, c.timeout_s, c.num_retries, c.cache, api_base)

    def job(
        self, role: Role, agent: int | None, round_: int, model: str | None, temperature: float, **inputs: Any
    ) -> Job:
        """One call of ``role``'s predictor, for ``agent`` (None for the judge-like roles) in round ``round_``."""
        model = model or self.config.model
        # A rollout id per agent keeps identical agents (self-consistency) from sharing cached replies.
        config = {"rollout_id": agent} if agent is not None and temperature > 0 else {}
        if role.answers and self.config.memory == "mask_objective":
            config["logprobs"] = True
        return Job(
            role,
            agent,
            round_,
            getattr(self, role),
            self._lm_for(model, temperature),
            adapter_for(model, self.config.format),
            inputs,
            config,
        )

    def solver_jobs(self, round_: int, samples: int, **inputs: Any) -> list[Job]:
        """The solver's calls, as a debate makes them: the critic's model, at ``sampling(samples)``'s temperatures
        (the first greedy) and per-call settings."""
        model = self.config.critic.model
        return [
            replace(self.job(Role.SOLVER, None, round_, model, temperature, **inputs), config=config)
            for temperature, config in sampling(samples)
        ]

    def forward(
        self, question: str, run_budget: RunBudget | None = None, on_round: Callable[[Round], None] | None = None
    ) -> dspy.Prediction:
        """Debate ``question``.

        ``run_budget`` is a token budget shared by many questions; ``on_round`` is
        called with each finished round (streaming, progress).
        """
        cfg = self.config
        for model in cfg.models():
            question = check_question(question, model, cfg.max_tokens)
        return _Run(self, question, run_budget, on_round).execute()


def as_dict(result: dspy.Prediction) -> dict[str, Any]:
    """A debate result as plain JSON-ready data (the CLI's ``--json`` output)."""
    return {
        "answer": result.answer,
        "confidence": result.confidence,
        "status": result.status,
        "stop_reason": result.stop_reason,
        "candidates": result.candidates,  # every answer's score where the protocol scores them (free, weighted)
        "usage": result.usage,
        "transcript": result.transcript.model_dump(mode="json"),
    }


class _Run:
    """The state of one debate on one question (a ``Debate`` is reusable and thread-safe)."""

    def __init__(
        self,
        debate: Debate,
        question: str,
        run_budget: RunBudget | None = None,
        on_round: Callable[[Round], None] | None = None,
    ):
        self.debate, self.cfg = debate, debate.config
        # What the debaters read of the question: its instructions and answer claims removed (untrusted_as_data).
        self.question = neutralize_question(question) if self.cfg.defenses.untrusted_as_data else question
        self.run_budget, self.on_round = run_budget, on_round
        self.t0 = time.perf_counter()
        self.rules = stop_rules(self.cfg.stop, self.cfg.rounds, len(self.cfg.agents))
        self.transcript = Transcript(question=question, config=self.cfg.model_dump())
        self.proposals: dict[int, dspy.Prediction] = {}  # each agent's latest proposal
        self.history: list[list[Vote]] = []  # the votes after each round: the one record of who answered what
        self.memories: list[dict[int, str]] = []  # each round's proposals as peers read them
        self.critiques: dict[int, list[str]] = {}  # the critic's findings on each agent's latest proposal
        self.verdicts: dict[int, str] = {}  # the critic's finding, one line, on each proposal it reviewed
        self.flags: Counter[str] = Counter()  # rounds in which the critic flagged a proposal holding each answer
        self.dropped: set[int] = set()  # agents whose last answer the mask removed
        self.notes: dict[int, str] = {}  # per-agent instruction for the next round
        self.flagged_confident: set[int] = set()  # confident proposals the critic flagged
        self.checked: dict[int, list[dict[str, Any]]] = {}  # what the calculator found in this round's proposals
        self.program_values: list[float | None] | None = None  # what the program check's programs computed
        self.off_topic = 0  # rounds the referee judged off topic
        self.extra_rounds = 0  # rounds run past the last one because the debaters were far apart

    # -- the loop --------------------------------------------------------------
    def execute(self) -> dspy.Prediction:
        stop = StopReason.MAX_ROUNDS
        for index in range(self.cfg.round_limit):
            rnd = Round(index=index)
            self.transcript.rounds.append(rnd)
            started = time.perf_counter()
            reason = self._round(rnd)
            rnd.wall_s = round(time.perf_counter() - started, 4)
            if self.on_round is not None:
                self.on_round(rnd)
            if reason is not None:
                stop = reason
                break
        return self._finish(stop)

    def _round(self, rnd: Round) -> StopReason | None:
        """One round's steps, in order; why the debate stops after it, or None to go on."""
        cfg = self.cfg
        if rnd.index == 0 and self.question != self.transcript.question:
            rnd.events.append(Event(kind=EventKind.QUESTION_NEUTRALIZED))
        if rnd.index > 0 and cfg.memory in MASKED and cfg.mask.enabled:
            self._mask_step(rnd)
        if (spent := self._budget_spent()) is not None:
            return spent
        everyone = list(range(len(cfg.agents)))
        if rnd.index == 0 and cfg.cascade_gate is not None and len(everyone) > 1:
            self._answer_step(rnd, [0])
            if self._cascade_confident(rnd):
                self.history.append(self._votes(rnd))
                return StopReason.CASCADE_CONFIDENT
            everyone = everyone[1:]
        self._answer_step(rnd, everyone)
        self.memories.append({i: self._shown(i) for i in sorted(self.proposals)})
        votes = self._votes(rnd)
        self._record_flips(rnd, votes)
        self.history.append(votes)
        if not votes:
            return StopReason.ALL_AGENTS_FAILED
        if checks_on(self.cfg.critic):
            self._calculator_step(rnd)
        stop = self._stop_reason(rnd)
        if stop is None and self._echo_alarm(rnd) and cfg.echo.reaction == "devils_advocate":
            self._assign_devils_advocate(rnd, votes)  # only when a next round will hear it
        if self._critique_due(stop):
            self._critique_step(rnd)
            stop = stop or self._budget_spent()
        elif checks_on(self.cfg.critic):
            self._record_findings(dict(self.checked))
        return stop

    def _stop_reason(self, rnd: Round) -> StopReason | None:
        """Why the debate stops after this round's answers, or None: budget, echo alarm, stop rules, referee."""
        if (spent := self._budget_spent()) is not None:
            return spent
        if self._echo_alarm(rnd) and self.cfg.echo.reaction == "stop":
            return StopReason.ECHO_ALARM
        reason = first_reason(self.rules, self.history)
        if reason in (StopReason.DECISIVE_VOTE, StopReason.CONFIDENT_AGREEMENT) and self._refuted(rnd):
            reason = None
        if reason is None and self._referee_due(rnd):
            return self._referee_step(rnd)
        if reason == StopReason.MAX_ROUNDS and self._may_extend():
            # At the last round the referee says whether the debaters are still far apart (not if it
            # finds a reason to stop: off topic, converged).
            referee_stop = self._referee_step(rnd) if rnd.referee is None else None
            if referee_stop is None and self._far_apart(rnd):
                self.extra_rounds += 1
                rnd.events.append(
                    Event(
                        kind=EventKind.EXTRA_ROUND,
                        value=rnd.referee["agreement"],
                        threshold=self.cfg.referee.extend_below,
                    )
                )
                return None
        return reason

    def _critique_due(self, stop: StopReason | None) -> bool:
        """Whether critics attack this round's proposals: the debate goes on, or a resolver will judge them."""
        cfg = self.cfg
        if not cfg.critic.enabled:
            return False
        judged = cfg.decision_protocol in ("judge", "unanimity") and cfg.resolver.enabled
        return stop is None or (judged and stop in FINAL_CRITIQUE_REASONS)

    # -- calls -------------------------------------------------------------------
    def _run(self, jobs: list[Job], rnd: Round) -> list[Outcome]:
        # Calls that would only queue for one in-process model run in turn, so each call's
        # latency is its own service time, not time spent waiting for the model.
        serial = all(one_call_at_a_time(job.lm.model) for job in jobs)
        if self.cfg.budget_s is not None:  # no call starts after the time budget, even inside a step
            jobs = [replace(job, deadline=self.t0 + self.cfg.budget_s) for job in jobs]
        outcomes = run_jobs(jobs, 1 if serial else self.cfg.concurrency, self.t0)
        rnd.calls.extend(o.call for o in outcomes)
        rnd.events += [
            Event(kind=EventKind.CALL_FAILED, role=o.call.role, agent=o.call.agent, error=o.call.error)
            for o in outcomes
            if not o.call.ok
        ]
        return outcomes

    def _answer_step(self, rnd: Round, agents: list[int]) -> None:
        d, cfg = self.debate, self.cfg
        jobs = []
        for i in agents:
            agent = cfg.agents[i]
            if i not in self.proposals:
                jobs.append(
                    d.job(
                        ROLE_OF_MODE[agent.mode],
                        i,
                        rnd.index,
                        agent.model,
                        agent.temperature,
                        question=self.question,
                        persona=self._persona(i),
                    )
                )
                continue
            jobs.append(
                d.job(
                    Role.REVISER,
                    i,
                    rnd.index,
                    agent.model,
                    agent.temperature,
                    question=self.question,
                    peer_answers=self._peers(i),
                    persona=self._persona(i),
                    previous_answer=format_proposal(self.proposals[i]),
                    critiques=self.critiques.get(i, []),
                    referee_note="\n".join(filter(None, [self._anchor(), self._warning(), self.notes.get(i, "")])),
                )
            )
        self.notes = {}
        for job, outcome in zip(jobs, self._run(jobs, rnd), strict=True):
            if outcome.prediction is not None:
                outcome.prediction["answer"] = read_answer(
                    outcome.prediction.get("answer"), self.question, self.debate.normalize
                )
                self.proposals[job.agent] = outcome.prediction
            elif job.agent in self.proposals:
                rnd.events.append(Event(kind=EventKind.KEPT_PREVIOUS_ANSWER, agent=job.agent))

    def _persona(self, agent: int) -> str:
        """The agent's persona, or an adversary's instructions (robustness tests)."""
        adversaries = self.cfg.adversaries
        return adversary_persona(adversaries.answer) if agent in adversaries.agents else self.cfg.agents[agent].persona

    def _shown(self, agent: int) -> str:
        """The agent's latest proposal as others read it: instructions inside it removed (untrusted_as_data),
        marked as data (spotlight)."""
        text, defenses, adversaries = format_proposal(self.proposals[agent]), self.cfg.defenses, self.cfg.adversaries
        if adversaries.plant and agent in adversaries.agents:  # an instruction hidden in what it sends
            text = f"{text}\n{adversaries.plant}"
        text = neutralize(text) if defenses.untrusted_as_data else text
        return spotlight(text) if defenses.spotlight else text

    def _warning(self) -> str:
        """What revisers are told about their peers (warn_revisers, spotlight)."""
        defenses, notes = self.cfg.defenses, []
        if defenses.warn_revisers:
            notes.append(REVISER_WARNING)
        if defenses.spotlight:
            notes.append(DATA_REMINDER)
        return "\n".join(notes)

    def _peers(self, agent: int) -> list[str]:
        """What reviser ``agent`` reads of the others: its memory policy's view of the agents it sees."""
        cfg = self.cfg
        seen = visible(agent, len(cfg.agents), cfg.topology, cfg.neighbors, cfg.group_size)
        answers = [{v.agent: v.answer for v in votes} for votes in self.history]
        if cfg.memory != "digest":
            return peer_view(cfg.memory, seen, self.memories, self.dropped, answers, cfg.summary_keep_rounds)
        among = seen | {agent}  # its own answer too, so every reviser of an all-to-all round reads the same digest
        older = [
            summary_line(r, {a: x for a, x in round_answers.items() if a in among})
            for r, round_answers in enumerate(answers[:-1])
        ]
        latest = distinct_answers([v for v in self.history[-1] if v.agent in among], self._steps())
        return older + digest(latest, self.memories[-1], self.verdicts, len(among))

    def _steps(self) -> dict[int, int]:
        return {i: len(proposal_steps(p)) for i, p in self.proposals.items()}

    def _critique_targets(self) -> dict[int, int]:
        """For each agent, whose proposal the critic reviews for it: its own, or with ``per_answer`` its answer's
        best-argued holder (agents without a usable answer are reviewed alone)."""
        if not self.cfg.critic.per_answer:
            return {i: i for i in self.proposals}
        targets = {i: i for i in self.proposals}
        for answer in distinct_answers(self.history[-1], self._steps()):
            targets |= dict.fromkeys(answer.holders, answer.representative)
        return targets

    def _cascade_confident(self, rnd: Round) -> bool:
        """Whether agent 0, who answered alone, is confident enough to skip the debate (iMAD)."""
        first = self.proposals.get(0)
        confident = first is not None and float(first.get("confidence") or 0.0) >= self.cfg.cascade_gate
        rnd.events.append(Event(kind=EventKind.CASCADE, agent=0, flag=confident))
        return confident

    def _mask_step(self, rnd: Round) -> None:
        """Drop last-round answers before the next round sees them (MAD-M2)."""
        last = self.memories[-1]
        logprobs = {
            c.agent: c.mean_logprob
            for c in self.transcript.rounds[rnd.index - 1].calls
            if c.role.answers and c.agent in last
        }
        if self.cfg.memory == "mask_objective" and all(logprobs.get(j) is not None for j in last):
            kept = best_by_logprob(logprobs, self.cfg.objective_keep)
            labels = {j: f"logprob {logprobs[j]:.3f}" for j in last}
        else:
            if self.cfg.memory == "mask_objective":
                rnd.events.append(Event(kind=EventKind.NO_LOGPROBS))
            labels = self._mask_labels(rnd, last)
            policy = "mask_strict" if self.cfg.memory == "mask_objective" else self.cfg.memory
            kept = {j for j, label in labels.items() if keeps(label, policy)}
        rnd.masks = [MaskDecision(agent=j, round=rnd.index - 1, label=labels[j], kept=j in kept) for j in last]
        self.dropped = set(last) - kept

    def _mask_labels(self, rnd: Round, last: dict[int, str]) -> dict[int, str]:
        """The mask evaluator's YES / NO / NOT_SURE per memory (ERROR, kept, when its call failed)."""
        mask = self.cfg.mask
        jobs = [
            self.debate.job(Role.MASK, j, rnd.index, mask.model, mask.temperature, question=self.question, memory=text)
            for j, text in last.items()
        ]
        return {
            j: str(o.prediction.label) if o.prediction is not None else "ERROR"
            for j, o in zip(last, self._run(jobs, rnd), strict=True)
        }

    def _votes(self, rnd: Round) -> list[Vote]:
        """Each usable proposal as a vote on its normalized answer (recorded on the round)."""
        votes = []
        for i, p in sorted(self.proposals.items()):
            answer = str(p.get("answer") or "").strip()
            key = self.debate.normalize(answer)
            if key is None:
                rnd.events.append(Event(kind=EventKind.NO_USABLE_ANSWER, agent=i))
                continue
            votes.append(Vote(i, answer, key, float(p.get("confidence") or 0.0)))
        rnd.votes = {str(v.agent): v.answer for v in votes}
        return votes

    def _record_flips(self, rnd: Round, votes: list[Vote]) -> None:
        """Every answer change since the last round, with the argument it cites, and the round's echo ratio."""
        before = {v.agent: v.key for v in self.history[-1]} if self.history else {}
        # The answers the revisers read that a sandbox computed: round 0's of agents in program mode.
        computed = [i for i, a in enumerate(self.cfg.agents) if a.mode == "program"] if len(self.history) == 1 else []
        checked = {i: before[i] for i in computed if i in before}
        for v in votes:
            if v.agent in before and before[v.agent] != v.key:
                ref = str(self.proposals[v.agent].get("evidence_ref") or "")
                rnd.flips.append(
                    Flip(
                        agent=v.agent,
                        round=rnd.index,
                        before=before[v.agent],
                        after=v.key,
                        evidence_ref=ref,
                        kind=flip_kind(ref, len(self.critiques.get(v.agent, [])), v.key, checked),
                    )
                )
        rnd.echo_ratio = echo_ratio([f.kind for f in rnd.flips])
        if self._echo_alarm(rnd):
            rnd.events.append(Event(kind=EventKind.ECHO_ALARM, value=rnd.echo_ratio, threshold=self.cfg.echo.threshold))

    def _echo_alarm(self, rnd: Round) -> bool:
        """Whether this round's conformity flips exceed the echo threshold and a reaction is set."""
        echo = self.cfg.echo
        return rnd.echo_ratio is not None and rnd.echo_ratio > echo.threshold and echo.reaction != "none"

    def _assign_devils_advocate(self, rnd: Round, votes: list[Vote]) -> None:
        """The first agent that conformed argues the strongest alternative next round."""
        majority = next(iter(tally(votes)))
        advocate = next(f.agent for f in rnd.flips if f.kind == "conformity")
        self.notes[advocate] = (
            f"Devil's advocate: most debaters now answer {majority}. Argue for the strongest alternative "
            f"answer and find the flaw in the majority's reasoning; keep {majority} only if no alternative survives."
        )
        rnd.events.append(Event(kind=EventKind.DEVILS_ADVOCATE, agent=advocate))

    def _anchor(self) -> str:
        """The topic anchor restated to every reviser while the referee is on (keeps long debates on the question)."""
        if not self.cfg.referee.enabled:
            return ""
        focus = ", ".join(tally(self.history[-1])) if self.history else "the first answers"
        return f'Topic anchor: the original question is "{self.question}". Current focus: deciding between {focus}.'

    def _referee_due(self, rnd: Round) -> bool:
        ref = self.cfg.referee
        if not ref.enabled:
            return False
        if ref.cadence == "every":
            return rnd.index % ref.every == ref.every - 1
        sizes = [len("".join(memory.values())) for memory in self.memories]
        return len(sizes) > 1 and sizes[-1] > ref.long_factor * (sum(sizes[:-1]) / (len(sizes) - 1))

    def _referee_step(self, rnd: Round) -> StopReason | None:
        """The referee's call: relevance, convergence and an intervention for the next round; a stop reason."""
        d, ref = self.debate, self.cfg.referee
        round_text = "\n\n".join(f"agent {i}: {text}" for i, text in self.memories[-1].items())
        (outcome,) = self._run(
            [
                d.job(
                    Role.REFEREE,
                    None,
                    rnd.index,
                    ref.model,
                    ref.temperature,
                    question=self.question,
                    round_text=round_text,
                )
            ],
            rnd,
        )
        p = outcome.prediction
        if p is None:
            return None
        rnd.referee = {k: p.get(k) for k in d.referee.signature.output_fields}
        if p.relevance < ref.threshold:
            self.off_topic += 1
            note = str(p.intervention or "").strip() or (
                f'Off topic: {p.off_topic_summary}. Return to the original question: "{self.question}"'
            )
            for i in range(len(self.cfg.agents)):
                self.notes[i] = "\n".join(filter(None, [f"Referee: {note}", self.notes.get(i, "")]))
            rnd.events.append(Event(kind=EventKind.OFF_TOPIC, value=p.relevance, threshold=ref.threshold))
            if self.off_topic >= ref.max_off_topic:
                return StopReason.OFF_TOPIC
        if p.converged and ref.stop_on_converged:
            return StopReason.REFEREE_CONVERGED
        return None

    def _may_extend(self) -> bool:
        """Whether the config lets a far-apart debate run one more round past its last."""
        ref = self.cfg.referee
        return ref.enabled and ref.extend_below is not None and self.extra_rounds < ref.max_extra_rounds

    def _far_apart(self, rnd: Round) -> bool:
        """Whether the referee rated this round's agreement under ``referee.extend_below``."""
        agreement = (rnd.referee or {}).get("agreement")
        return agreement is not None and agreement < self.cfg.referee.extend_below

    def _budget_spent(self) -> StopReason | None:
        """``budget_exhausted`` (tokens, of the question or the run), ``time_exhausted``, or None."""
        spent = sum(c.prompt_tokens + c.completion_tokens for c in self.transcript.calls())
        question_over = self.cfg.budget_tokens is not None and spent >= self.cfg.budget_tokens
        if question_over or (self.run_budget is not None and spent >= self.run_budget.remaining):
            return StopReason.BUDGET_EXHAUSTED
        if self.cfg.budget_s is not None and time.perf_counter() - self.t0 >= self.cfg.budget_s:
            return StopReason.TIME_EXHAUSTED
        return None

    def _critique_step(self, rnd: Round) -> None:
        critic = self.cfg.critic
        conf = {i: float(p.get("confidence") or 0.0) for i, p in self.proposals.items()}
        targets = self._critique_targets()
        reviewed = sorted(set(targets.values()))
        found = self._critique(rnd, {i: focus_for(conf[i], critic.deep_review_below) for i in reviewed})
        if critic.checklist_retry:
            quiet = {i: CHECKLIST for i, issues in found.items() if not issues}
            found.update(self._critique(rnd, quiet))
        found = {i: found[target] for i, target in targets.items() if target in found}
        if checks_on(self.cfg.critic):
            found = {i: self.checked.get(i, []) + found.get(i, []) for i in found.keys() | self.checked}
        self._record_findings(found)

    def _record_findings(self, found: dict[int, list[dict[str, Any]]]) -> None:
        """What the critic (and the calculator) found in each agent's proposal: what revisers, the digest, the
        resolver and critic-weighted votes read."""
        critic = self.cfg.critic
        conf = {i: float(p.get("confidence") or 0.0) for i, p in self.proposals.items()}
        self.verdicts = {i: verdict_line(issues) for i, issues in found.items()}
        keys = {v.agent: v.key for v in self.history[-1]}
        flagged = {keys[i] for i, issues in found.items() if issues and i in keys}
        self.flags.update(flagged)  # one count per round and answer, however many holders
        self.critiques = {i: issue_lines(issues) or ["the critic found no valid issue"] for i, issues in found.items()}
        self.flagged_confident = {
            i
            for i, issues in found.items()
            if issues and critic.flag_weight_above is not None and conf[i] > critic.flag_weight_above
        }

    def _calculator_step(self, rnd: Round) -> None:
        """Run the deterministic checks (``checks.check_proposal``) on each agent's latest proposal; the solver's
        programs (``critic.program_check``) are written and run once a debate."""
        critic, self.checked = self.cfg.critic, {}
        programs = self._program_values(rnd) if critic.program_check else []
        for i, proposal in sorted(self.proposals.items()):
            steps, answer = proposal_steps(proposal), str(proposal.get("answer") or "")
            stated = proposal.get("confidence")
            issues, events = check_proposal(
                i,
                answer,
                steps,
                self.question,
                critic,
                programs,
                confidence=None if stated is None else float(stated),
                normalize=self.debate.normalize,
            )
            rnd.events.extend(events)
            if issues:
                self.checked[i] = issues

    def _program_values(self, rnd: Round) -> list[float | None]:
        """What the solver's programs for the question compute (None for one that fails): written and run in
        the first round that checks, kept for the rest of the debate."""
        if self.program_values is None:
            jobs = self.debate.solver_jobs(rnd.index, self.cfg.critic.program_samples, question=self.question)
            outcomes = self._run(jobs, rnd)
            self.program_values = [
                run_program(str(o.prediction.get("program") or "")) if o.prediction is not None else None
                for o in outcomes
            ]
            ran = [f"{v:g}" for v in self.program_values if v is not None]
            rnd.events.append(Event(kind=EventKind.PROGRAMS_RUN, count=len(ran), text=", ".join(ran) or "none"))
        return self.program_values

    def _refuted(self, rnd: Round) -> bool:
        """Whether a consensus stop is overruled: a proposal holding the winning answer fails a check, and a
        round is left to debate it."""
        if not checks_on(self.cfg.critic) or rnd.index + 1 >= self.cfg.round_limit:
            return False
        votes = self.history[-1]
        top = Counter(v.key for v in votes).most_common(1)[0][0]
        failed = [v.agent for v in votes if v.key == top and v.agent in self.checked]
        if failed:
            rnd.events.append(Event(kind=EventKind.DECISIVE_VOTE_REFUTED, count=len(failed)))
        return bool(failed)

    def _critique(self, rnd: Round, focus: dict[int, str]) -> dict[int, list[dict[str, Any]]]:
        """Critic calls for the agents in ``focus``; their valid issues (failed calls are left out)."""
        d, critic = self.debate, self.cfg.critic
        agents = sorted(focus)
        jobs = [
            d.job(
                Role.CRITIC,
                i,
                rnd.index,
                critic.model,
                critic.temperature,
                proposal=self._shown(i),
                focus=focus[i],
                **({} if critic.isolated else {"question": self.question}),
            )
            for i in agents
        ]
        found = {}
        for i, outcome in zip(agents, self._run(jobs, rnd), strict=True):
            if outcome.prediction is None:
                continue
            found[i] = valid_issues(outcome.prediction, steps=len(proposal_steps(self.proposals[i])))
            dropped = len(outcome.prediction.get("issues") or []) - len(found[i])
            if dropped:
                rnd.events.append(Event(kind=EventKind.CHALLENGES_DROPPED, agent=i, count=dropped))
        return found

    # -- the decision --------------------------------------------------------------
    def _judge(self, votes: list[Vote], counts: dict[str, int]) -> Decision | None:
        d, resolver = self.debate, self.cfg.resolver
        rnd = self.transcript.rounds[-1]
        job = d.job(
            Role.RESOLVER,
            None,
            rnd.index,
            resolver.model,
            resolver.temperature,
            question=self.question,
            proposals=[f"agent {v.agent}: {self._shown(v.agent)}" for v in votes],
            critiques=[
                f"on agent {i}: {CONFIDENT_FLAGGED + ' ' if i in self.flagged_confident else ''}{line}"
                for i, lines in sorted(self.critiques.items())
                for line in lines
            ],
            tally=format_tally(counts),
        )
        (outcome,) = self._run([job], rnd)
        p = outcome.prediction
        if p is None or not str(p.get("final_answer") or "").strip():
            return None
        if echoes_tally(str(p.final_answer)):
            rnd.events.append(Event(kind=EventKind.TALLY_ECHOED))
            return None
        return Decision(
            protocol="judge",
            answer=read_answer(p.final_answer, self.question, self.debate.normalize),
            confidence=float(p.confidence),
            tally=counts,
            judge_status=str(p.status),
        )

    def _decide(self, votes: list[Vote], stop: StopReason) -> Decision:
        protocol = self.cfg.decision_protocol
        if self.cfg.topology == "groups":
            votes = group_votes(votes, len(self.cfg.agents), self.cfg.group_size)
        if stop in MAJORITY_INSTEAD_OF_JUDGE and protocol == "judge":
            decision = get_protocol("majority").decide(votes)
            return decision.model_copy(update={"note": MAJORITY_INSTEAD_OF_JUDGE[stop]})
        defenses = self.cfg.defenses
        if defenses.evidence_flips_only:  # an answer reached by conformity alone does not count
            votes = anchored_votes(self.history, {r.index: r.flips for r in self.transcript.rounds})
        ctx = DecisionContext(
            history=self.history,
            conformity=self.transcript.conformity_flips(),
            credit=CreditLedger(self.cfg.credit_ledger).weights() if self.cfg.credit_ledger else {},
            judge=self._judge if self.cfg.resolver.enabled else None,
            weights=critic_weights({v.agent: self.flags[v.key] for v in votes}) if defenses.critic_weighting else {},
        )
        return get_protocol(protocol).decide(votes, ctx)

    def _finish(self, stop: StopReason) -> dspy.Prediction:
        votes = next((v for v in reversed(self.history) if v), [])
        decision = (
            self._decide(votes, stop)
            if votes
            else Decision(
                protocol=self.cfg.decision_protocol, answer=None, confidence=0.0, tally={}, note="no agent answered"
            )
        )
        if decision.answer is not None:
            key = self.debate.normalize(decision.answer)  # as written by a vote of any round, or by the judge
            first = [v.key for v in self.history[0]] if self.history else []
            seen = signals(decision.confidence, key, first, [v.key for v in votes], flagged=self.flags[key] > 0)
            calibrated = self.cfg.calibrator(seen) if self.cfg.calibrator else None
            update = {"vote_share": seen["vote_share"], "calibrated_confidence": calibrated, "signals": seen}
            decision = decision.model_copy(update=update)
        calls: list[Call] = self.transcript.calls()
        t = self.transcript
        t.decision, t.status, t.stop_reason = decision, _status(stop, votes, decision, calls), stop
        t.usage = Usage.of(calls)
        if self.run_budget is not None:
            self.run_budget.add(t.usage.total_tokens)
        t.wall_s = round(time.perf_counter() - self.t0, 4)
        return dspy.Prediction(
            answer=decision.answer,
            candidates=decision.candidates,
            confidence=decision.confidence
            if decision.calibrated_confidence is None
            else decision.calibrated_confidence,
            status=t.status,
            stop_reason=stop,
            usage=t.usage.model_dump(),
            transcript=t,
        )


def _status(stop: StopReason, votes: list[Vote], decision: Decision, calls: list[Call]) -> Status:
    """What a finished debate's result is, from why it stopped, its last votes, its decision and its calls."""
    if stop in (StopReason.BUDGET_EXHAUSTED, StopReason.TIME_EXHAUSTED):
        return Status(stop.value)
    if decision.answer is None:
        return Status.FAILED
    if any(not c.ok for c in calls) or stop == StopReason.ALL_AGENTS_FAILED:  # answered from an earlier round
        return Status.DEGRADED
    if decision.judge_status == "undetermined":
        return Status.UNDETERMINED
    if stop in CONVERGED_REASONS or len({v.key for v in votes}) == 1:
        return Status.CONVERGED
    return Status.CONVERGENCE_FAILED
