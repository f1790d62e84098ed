"""Scorers: live evaluation of finished runs, off the request path (the Agent's ``scorers``)."""

from .builtins import NAMES, ScoreResult, ScorerError, ScoringRun
from .service import Scoring, sampled

__all__ = ["NAMES", "ScoreResult", "ScorerError", "Scoring", "ScoringRun", "sampled"]
