"""The five debate roles as DSPy Signatures (see :mod:`madspy.signatures.roles`)."""

from madspy.signatures.roles import (
    CriticIssue,
    Critique,
    CritiqueProposalOnly,
    MaskEvaluate,
    Propose,
    Referee,
    Resolve,
    Revise,
)

__all__ = [
    "CriticIssue",
    "Critique",
    "CritiqueProposalOnly",
    "MaskEvaluate",
    "Propose",
    "Referee",
    "Resolve",
    "Revise",
]
