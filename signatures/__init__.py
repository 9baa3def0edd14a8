"""The debate's roles and their DSPy Signatures (see :mod:`madspy.signatures.roles`)."""

from madspy.signatures.roles import (
    CriticIssue,
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

__all__ = [
    "CriticIssue",
    "Critique",
    "CritiqueProposalOnly",
    "MaskEvaluate",
    "Propose",
    "ProposeAndVerify",
    "ProposeProgram",
    "Referee",
    "Resolve",
    "Revise",
    "Role",
    "SolveInCode",
]
