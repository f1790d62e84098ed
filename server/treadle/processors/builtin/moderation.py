"""``Moderation``: a model judges the input (and optionally the output or tool results) against
content categories."""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Tracer

from ._judge import JudgedProcessor, JudgeOptions, judge_instructions

MODERATION_CATEGORIES = ("hate", "harassment", "violence", "self-harm", "sexual", "illicit")


class Moderation(JudgedProcessor):
    name = "Moderation"
    description = "A model flags content in the listed categories."
    label = "Content flagged"
    default_categories = MODERATION_CATEGORIES

    def __init__(self, *, model: str, id: str = "moderation", models: Any = None,
                 tracer: Tracer | None = None, **options: Any) -> None:
        self.id = id
        super().__init__(JudgeOptions(model=model, **options), models, tracer)

    def system_prompt(self) -> str:
        return judge_instructions(
            "You are a content moderator. Decide whether the user's text contains content in "
            "any of these categories.", self.options.categories, self.options.instructions)
