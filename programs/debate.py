"""The ``Debate`` module: the five roles in one ``dspy.Module``, and the loop that runs them.

Round 0: every agent answers on its own (or, with a cascade, one agent first).
After each round: votes and flips are recorded, stop rules and the echo alarm are
checked, the referee may intervene, and critics attack each proposal. Each later
round: the memory policy picks (and the mask evaluator may prune) the peer answers
each agent sees, then every agent revises. At the end the decision protocol (or the
resolver, for ``judge``) picks the answer. All calls of one step run concurrently (in
turn when they all go to in-process local models, which serve one call at a time).
The replaceable parts live in their own modules: config, protocols, stopping,
memory, flips, critique, topology, credit, budget, transcript.

Example:
    >>> from madspy.programs import Debate, DebateConfig
    >>> debate = Debate(DebateConfig.with_agents(3, model="openai/gpt-4o-mini", rounds=2))
    >>> # result = debate(question="What is 17 * 23?")
    >>> # result.answer, result.confidence, result.status, result.stop_reason
    >>> # result.transcript.rounds[0].calls[0].prompt_tokens
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import dspy

from madspy.core.models import adapter_for, check_question, make_lm, one_call_at_a_time
from madspy.programs.answers import clean_answer, echoes_tally, format_tally, normalize_answer
from madspy.programs.budget import RunBudget
from madspy.programs.calls import Job, Outcome, run_jobs
from madspy.programs.config import DebateConfig
from madspy.programs.credit import CreditLedger
from madspy.programs.critique import CHECKLIST, CONFIDENT_FLAGGED, focus_for, issue_lines, valid_issues
from madspy.programs.flips import Flip, echo_ratio, flip_kind
from madspy.programs.memory import MASKED, MaskDecision, best_by_logprob, keeps, peer_view
from madspy.programs.protocols import DecisionContext, Vote, get_protocol, tally
from madspy.programs.stopping import first_reason, stop_rules
from madspy.programs.topology import group_votes, visible
from madspy.programs.transcript import Call, Decision, Round, Transcript, Usage
from madspy.signatures import Critique, CritiqueProposalOnly, MaskEvaluate, Propose, Referee, Resolve, Revise, Role

FINAL_CRITIQUE_REASONS = {"stable_answers", "max_rounds", "echo_alarm", "off_topic", "referee_converged"}
# Stops that count as converged even when the last votes differ (the referee's call, one confident agent);
# agents that keep disagreeing (stable_answers) have not converged.
CONVERGED_REASONS = {"confident_agreement", "referee_converged", "cascade_confident"}


@functools.lru_cache(maxsize=128)
def _lm(model: str, temperature: float, max_tokens: int, timeout_s: float, num_retries: int, cache: bool,
        api_base: str | None) -> dspy.LM:
    return make_lm(model, temperature=temperature, max_tokens=max_tokens, timeout_s=timeout_s,
                   num_retries=num_retries, cache=cache, api_base=api_base)


def format_proposal(p: dspy.Prediction | dict[str, Any]) -> str:
    """A proposal as peers, critics and the resolver read it."""
    steps = p.get("reasoning_steps") or []
    lines = [f"answer: {p.get('answer')} (confidence {float(p.get('confidence') or 0):.2f})"]
    lines += [f"step {i}: {s}" for i, s in enumerate(steps, 1)]
    return "\n".join(lines)


class Debate(dspy.Module):
    """A multi-agent debate whose five roles are DSPy predictors.

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
        # One predictor per role, named by the role (signatures.Role): what artifacts and optimizers see.
        self.proposer = dspy.Predict(Propose)
        self.reviser = dspy.Predict(Revise)
        self.critic = dspy.Predict(CritiqueProposalOnly if self.config.critic.isolated else Critique)
        self.resolver = dspy.Predict(Resolve)
        self.mask = dspy.Predict(MaskEvaluate)
        self.referee = dspy.Predict(Referee)
        for model in self.config.models():  # fail now, not mid-debate, on an unknown model
            self._lm_for(model, 0.0)

    def _lm_for(self, model: str | None, temperature: float) -> dspy.LM:
        c = self.config
        api_base = c.api_base if model in (None, c.model) else None
        return _lm(model or c.model, temperature, c.max_tokens, c.timeout_s, c.num_retries, c.cache, api_base)

    def _job(self, role: Role, agent: int | None, round_: int, model: str | None, temperature: float,
             **inputs: Any) -> Job:
        model = model or self.config.model
        # A rollout id per agent keeps identical agents (self-consistency) from sharing cached replies.
        config = {"rollout_id": agent} if agent is not None and temperature > 0 else {}
        if role.answers and self.config.memory == "mask_objective":
            config["logprobs"] = True
        return Job(role, agent, round_, getattr(self, role), self._lm_for(model, temperature), adapter_for(model),
                   inputs, config)

    def forward(self, question: str, run_budget: RunBudget | None = None,
                on_round: Callable[[Round], None] | None = None) -> dspy.Prediction:
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

    def __init__(self, debate: Debate, question: str, run_budget: RunBudget | None = None,
                 on_round: Callable[[Round], None] | None = None):
        self.debate = debate
        self.run_budget = run_budget
        self.on_round = on_round
        self.cfg = debate.config
        self.question = question
        self.t0 = time.perf_counter()
        self.transcript = Transcript(question=question, config=self.cfg.model_dump())
        self.proposals: dict[int, dspy.Prediction] = {}
        self.critiques: dict[int, list[str]] = {}
        self.history: list[list[Vote]] = []
        self.snapshots: list[dict[int, str]] = []  # formatted proposals after each round
        self.dropped: set[int] = set()  # agents whose last answer the mask removed
        self.notes: dict[int, str] = {}  # per-agent instruction for the next round
        self.flagged_confident: set[int] = set()  # confident proposals the critic flagged
        self.off_topic = 0  # rounds the referee judged off topic
        self.extra_rounds = 0  # rounds run past the last one because the debaters were far apart

    # -- steps ---------------------------------------------------------------
    def _run(self, jobs: list[Job], rnd: Round) -> list[Outcome]:
        # Calls that would only queue for one in-process model run in turn, so each call's
        # latency is its own service time, not time spent waiting for the model.
        serial = all(one_call_at_a_time(job.lm.model) for job in jobs)
        outcomes = run_jobs(jobs, 1 if serial else self.cfg.concurrency, self.t0)
        rnd.calls.extend(o.call for o in outcomes)
        for o in outcomes:
            if not o.call.ok:
                who = o.call.role if o.call.agent is None else f"{o.call.role} {o.call.agent}"
                rnd.events.append(f"{who} failed: {o.call.error}")
        return outcomes

    def _answer_step(self, rnd: Round, agents: list[int]) -> None:
        d, cfg = self.debate, self.cfg
        answers = [{int(a): v for a, v in r.votes.items()} for r in self.transcript.rounds[: len(self.snapshots)]]
        jobs = []
        for i in agents:
            agent = cfg.agents[i]
            if i in self.proposals:
                jobs.append(d._job(
                    Role.REVISER, i, rnd.index, agent.model, agent.temperature,
                    question=self.question, persona=agent.persona,
                    previous_answer=format_proposal(self.proposals[i]),
                    peer_answers=peer_view(cfg.memory, visible(i, len(cfg.agents), cfg.topology, cfg.neighbors,
                                                               cfg.group_size),
                                           self.snapshots, self.dropped, answers, cfg.summary_keep_rounds),
                    critiques=self.critiques.get(i, []),
                    referee_note="\n".join(filter(None, [self._anchor(), self.notes.get(i, "")])),
                ))
            else:
                jobs.append(d._job(Role.PROPOSER, i, rnd.index, agent.model, agent.temperature,
                                   question=self.question, persona=agent.persona))
        for job, outcome in zip(jobs, self._run(jobs, rnd)):
            if outcome.prediction is not None:
                outcome.prediction["answer"] = clean_answer(str(outcome.prediction.get("answer") or ""))
                self.proposals[job.agent] = outcome.prediction
            elif job.agent in self.proposals:
                rnd.events.append(f"agent {job.agent} keeps its previous answer")

    def _cascade(self, rnd: Round) -> bool:
        """Round 0 with agent 0 alone; True when it is confident enough to skip the debate (iMAD)."""
        self._answer_step(rnd, [0])
        first = self.proposals.get(0)
        confident = first is not None and float(first.get("confidence") or 0.0) >= self.cfg.cascade_gate
        rnd.events.append(f"cascade: agent 0 alone is {'' if confident else 'not '}confident enough to skip the debate")
        return confident

    def _mask_step(self, rnd: Round) -> None:
        """Drop last-round answers before the next round sees them (seed 003)."""
        last = self.snapshots[-1]
        logprobs = {c.agent: c.mean_logprob for c in self.transcript.rounds[rnd.index - 1].calls
                    if c.role.answers and c.agent in last}
        if self.cfg.memory == "mask_objective" and all(logprobs.get(j) is not None for j in last):
            kept = best_by_logprob(logprobs, self.cfg.objective_keep)
            labels = {j: f"logprob {logprobs[j]:.3f}" for j in last}
        else:
            if self.cfg.memory == "mask_objective":
                rnd.events.append("objective mask: the backend returned no log-probabilities; subjective strict mask used")
            labels = self._mask_labels(rnd, last)
            policy = "mask_strict" if self.cfg.memory == "mask_objective" else self.cfg.memory
            kept = {j for j, label in labels.items() if keeps(label, policy)}
        rnd.masks = [MaskDecision(agent=j, round=rnd.index - 1, label=labels[j], kept=j in kept) for j in last]
        self.dropped = set(last) - kept

    def _mask_labels(self, rnd: Round, last: dict[int, str]) -> dict[int, str]:
        """The mask evaluator's YES / NO / NOT_SURE per memory (ERROR, kept, when its call failed)."""
        d, mask = self.debate, self.cfg.mask
        jobs = [d._job(Role.MASK, j, rnd.index, mask.model, mask.temperature,
                       question=self.question, memory=text) for j, text in last.items()]
        return {j: str(o.prediction.label) if o.prediction is not None else "ERROR"
                for j, o in zip(last, self._run(jobs, rnd))}

    def _flips(self, rnd: Round, votes: list[Vote]) -> str | None:
        """Record answer changes; on an echo alarm react as configured (returns a stop reason)."""
        before = {v.agent: v.key for v in self.history[-1]} if self.history else {}
        for v in votes:
            if v.agent in before and before[v.agent] != v.key:
                ref = str(self.proposals[v.agent].get("evidence_ref") or "")
                rnd.flips.append(Flip(agent=v.agent, round=rnd.index, before=before[v.agent], after=v.key,
                                      evidence_ref=ref, kind=flip_kind(ref)))
        rnd.echo_ratio = echo_ratio([f.kind for f in rnd.flips])
        echo = self.cfg.echo
        if rnd.echo_ratio is None or rnd.echo_ratio <= echo.threshold or echo.reaction == "none":
            return None
        rnd.events.append(f"echo alarm: {rnd.echo_ratio:.2f} of flips cite no argument (> {echo.threshold})")
        if echo.reaction == "stop":
            return "echo_alarm"
        majority = next(iter(tally(votes)))
        advocate = next(f.agent for f in rnd.flips if f.kind == "conformity")
        self.notes[advocate] = (
            f"Devil's advocate: most debaters now answer {majority}. Argue for the strongest alternative "
            f"answer and find the flaw in the majority's reasoning; keep {majority} only if no alternative survives."
        )
        rnd.events.append(f"agent {advocate} plays devil's advocate next round")
        return None

    def _anchor(self) -> str:
        """The topic anchor restated to every reviser while the referee is on (seed 004)."""
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
        sizes = [len("".join(snap.values())) for snap in self.snapshots]
        return len(sizes) > 1 and sizes[-1] > ref.long_factor * (sum(sizes[:-1]) / (len(sizes) - 1))

    def _referee_step(self, rnd: Round) -> str | None:
        """Relevance, convergence and an intervention for the next round; returns a stop reason."""
        d, ref = self.debate, self.cfg.referee
        round_text = "\n\n".join(f"agent {i}: {text}" for i, text in self.snapshots[-1].items())
        job = d._job(Role.REFEREE, None, rnd.index, ref.model, ref.temperature,
                     question=self.question, round_text=round_text)
        (outcome,) = self._run([job], rnd)
        p = outcome.prediction
        if p is None:
            return None
        rnd.referee = {k: p.get(k) for k in d.referee.signature.output_fields}
        if p.relevance < ref.threshold:
            self.off_topic += 1
            note = str(p.intervention or "").strip() or (
                f"Off topic: {p.off_topic_summary}. Return to the original question: \"{self.question}\"")
            for i in range(len(self.cfg.agents)):
                self.notes[i] = "\n".join(filter(None, [f"Referee: {note}", self.notes.get(i, "")]))
            rnd.events.append(f"referee: relevance {p.relevance:.2f} < {ref.threshold}; intervention sent to all agents")
            if self.off_topic >= ref.max_off_topic:
                return "off_topic"
        if p.converged and ref.stop_on_converged:
            return "referee_converged"
        return None

    def _far_apart(self, rnd: Round) -> bool:
        """At the last round: whether the referee finds the debaters so far apart that one more round runs."""
        ref = self.cfg.referee
        if not ref.enabled or ref.extend_below is None or self.extra_rounds >= ref.max_extra_rounds:
            return False
        if rnd.referee is None and self._referee_step(rnd) is not None:
            return False  # it found a reason to stop (off topic, converged)
        agreement = (rnd.referee or {}).get("agreement")
        if agreement is None or agreement >= ref.extend_below:
            return False
        self.extra_rounds += 1
        rnd.events.append(f"referee: agreement {agreement:.2f} < {ref.extend_below}; one more round")
        return True

    def _spent(self) -> int:
        return sum(c.prompt_tokens + c.completion_tokens for r in self.transcript.rounds for c in r.calls)

    def _budget_spent(self) -> str | None:
        """``budget_exhausted`` (tokens, of the question or the run), ``time_exhausted`` or None."""
        spent = self._spent()
        question_over = self.cfg.budget_tokens is not None and spent >= self.cfg.budget_tokens
        if question_over or (self.run_budget is not None and spent >= self.run_budget.remaining):
            return "budget_exhausted"
        if self.cfg.budget_s is not None and time.perf_counter() - self.t0 >= self.cfg.budget_s:
            return "time_exhausted"
        return None

    def _critique_step(self, rnd: Round) -> None:
        critic = self.cfg.critic
        conf = {i: float(p.get("confidence") or 0.0) for i, p in self.proposals.items()}
        found = self._critique(rnd, {i: focus_for(c, critic.deep_review_below) for i, c in conf.items()})
        if critic.checklist_retry:
            quiet = {i: CHECKLIST for i, issues in found.items() if not issues}
            found.update(self._critique(rnd, quiet))
        self.critiques = {i: issue_lines(issues) or ["the critic found no valid issue"] for i, issues in found.items()}
        self.flagged_confident = {i for i, issues in found.items()
                                  if issues and critic.flag_weight_above is not None and conf[i] > critic.flag_weight_above}

    def _critique(self, rnd: Round, focus: dict[int, str]) -> dict[int, list[dict[str, Any]]]:
        """Critic calls for the agents in ``focus``; their valid issues (failed calls are left out)."""
        d, critic = self.debate, self.cfg.critic
        agents = sorted(focus)
        jobs = [
            d._job(Role.CRITIC, i, rnd.index, critic.model, critic.temperature,
                   proposal=format_proposal(self.proposals[i]), focus=focus[i],
                   **({} if critic.isolated else {"question": self.question}))
            for i in agents
        ]
        found = {}
        for i, outcome in zip(agents, self._run(jobs, rnd)):
            if outcome.prediction is None:
                continue
            found[i] = valid_issues(outcome.prediction)
            dropped = len(outcome.prediction.get("issues") or []) - len(found[i])
            if dropped:
                rnd.events.append(f"critic on agent {i}: {dropped} challenge(s) naming no step dropped")
        return found

    def _votes(self, rnd: Round) -> list[Vote]:
        votes = []
        for i, p in sorted(self.proposals.items()):
            answer = str(p.get("answer") or "").strip()
            key = self.debate.normalize(answer)
            if key is None:
                rnd.events.append(f"agent {i} gave no usable answer")
                continue
            votes.append(Vote(i, answer, key, float(p.get("confidence") or 0.0)))
        rnd.votes = {str(v.agent): v.answer for v in votes}
        return votes

    def _judge(self, votes: list[Vote], counts: dict[str, int]) -> Decision | None:
        d, resolver = self.debate, self.cfg.resolver
        rnd = self.transcript.rounds[-1]
        job = d._job(
            Role.RESOLVER, None, rnd.index, resolver.model, resolver.temperature,
            question=self.question,
            proposals=[f"agent {v.agent}: {format_proposal(self.proposals[v.agent])}" for v in votes],
            critiques=[f"on agent {i}: {CONFIDENT_FLAGGED + ' ' if i in self.flagged_confident else ''}{line}"
                       for i, lines in sorted(self.critiques.items()) for line in lines],
            tally=format_tally(counts),
        )
        (outcome,) = self._run([job], rnd)
        p = outcome.prediction
        if p is None or not str(p.get("final_answer") or "").strip():
            return None
        if echoes_tally(str(p.final_answer)):
            rnd.events.append("the resolver returned the tally, not an answer")
            return None
        return Decision(protocol="judge", answer=clean_answer(str(p.final_answer)), confidence=float(p.confidence),
                        tally=counts, judge_status=str(p.status))

    # -- the loop --------------------------------------------------------------
    def execute(self) -> dspy.Prediction:
        cfg = self.cfg
        rules = stop_rules(cfg.stop, cfg.rounds)
        stop_reason = "max_rounds"
        for r in range(cfg.round_limit):
            rnd = Round(index=r)
            started = time.perf_counter()
            self.transcript.rounds.append(rnd)
            reason = self._round(rnd, rules)
            rnd.wall_s = round(time.perf_counter() - started, 4)
            if self.on_round is not None:
                self.on_round(rnd)
            if reason is not None:
                stop_reason = reason
                break
        return self._finish(stop_reason)

    def _round(self, rnd: Round, rules: list) -> str | None:
        """One round's steps; returns why the debate stops after it, or None to go on."""
        cfg = self.cfg
        if rnd.index > 0 and cfg.memory in MASKED and cfg.mask.enabled:
            self._mask_step(rnd)
        if spent := self._budget_spent():
            return spent
        everyone = list(range(len(cfg.agents)))
        if rnd.index == 0 and cfg.cascade_gate is not None and len(everyone) > 1:
            if self._cascade(rnd):
                self.history.append(self._votes(rnd))
                return "cascade_confident"
            everyone = everyone[1:]
        self._answer_step(rnd, everyone)
        self.notes = {}
        self.snapshots.append({i: format_proposal(p) for i, p in sorted(self.proposals.items())})
        votes = self._votes(rnd)
        echo_stop = self._flips(rnd, votes)
        self.history.append(votes)
        if not votes:
            return "all_agents_failed"
        reason = self._budget_spent() or echo_stop or first_reason(rules, self.history)
        if reason is None and self._referee_due(rnd):
            reason = self._referee_step(rnd)
        if reason == "max_rounds" and self._far_apart(rnd):
            reason = None
        # The resolver judges the final proposals with their critiques; other stops need no last critique.
        resolver_next = cfg.decision_protocol in ("judge", "unanimity") and cfg.resolver.enabled
        needs_critique = cfg.critic.enabled and (reason is None or (resolver_next and reason in FINAL_CRITIQUE_REASONS))
        if needs_critique:
            self._critique_step(rnd)
            reason = reason or self._budget_spent()
        return reason

    def _decide(self, votes: list[Vote], stop_reason: str) -> Decision:
        protocol = self.cfg.decision_protocol
        if self.cfg.topology == "groups":
            votes = group_votes(votes, len(self.cfg.agents), self.cfg.group_size)
        skip_judge = {"confident_agreement": "unanimous and confident; resolver not needed",
                      "cascade_confident": "one confident agent; no debate needed",
                      "budget_exhausted": "token budget spent; majority of the last answers",
                      "time_exhausted": "time budget spent; majority of the last answers"}
        if stop_reason in skip_judge and protocol == "judge":
            decision = get_protocol("majority").decide(votes)
            return decision.model_copy(update={"note": skip_judge[stop_reason]})
        ctx = DecisionContext(
            history=self.history,
            conformity=self.transcript.conformity_flips(),
            credit=CreditLedger(self.cfg.credit_ledger).weights() if self.cfg.credit_ledger else {},
            judge=self._judge if self.cfg.resolver.enabled else None,
        )
        return get_protocol(protocol).decide(votes, ctx)

    def _finish(self, stop_reason: str) -> dspy.Prediction:
        votes = next((v for v in reversed(self.history) if v), [])
        decision = self._decide(votes, stop_reason) if votes else Decision(
            protocol=self.cfg.decision_protocol, answer=None, confidence=0.0, tally={}, note="no agent answered")
        calls: list[Call] = self.transcript.calls()
        status = self._status(stop_reason, votes, decision, calls)
        t = self.transcript
        t.decision, t.status, t.stop_reason = decision, status, stop_reason
        t.usage = Usage.of(calls)
        if self.run_budget is not None:
            self.run_budget.add(t.usage.total_tokens)
        t.wall_s = round(time.perf_counter() - self.t0, 4)
        return dspy.Prediction(
            answer=decision.answer,
            candidates=decision.candidates,
            confidence=decision.confidence,
            status=status,
            stop_reason=stop_reason,
            usage=t.usage.model_dump(),
            transcript=t,
        )

    @staticmethod
    def _status(stop_reason: str, votes: list[Vote], decision: Decision, calls: list[Call]) -> str:
        if stop_reason in ("budget_exhausted", "time_exhausted"):
            return stop_reason
        if decision.answer is None:
            return "failed"
        if any(not c.ok for c in calls) or stop_reason == "all_agents_failed":  # answered from an earlier round
            return "degraded"
        if decision.judge_status == "undetermined":
            return "undetermined"
        if stop_reason in CONVERGED_REASONS or len({v.key for v in votes}) == 1:
            return "converged"
        return "convergence_failed"
