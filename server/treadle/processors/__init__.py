"""Processors: the one extension mechanism of the agent loop.

A processor is any object with an ``id`` and one or more of the hook methods named in
``HOOKS``; each hook takes one ``*Args`` dataclass and may be sync or async.
"""

from ..core.args import (
    AfterToolCallArgs,
    BeforeToolCallArgs,
    OutputResult,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    ProcessInputStepArgs,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
    ProcessOutputStreamArgs,
    ProcessToolResultArgs,
    ProcessorStreamWriter,
    RunInfo,
    StepResult,
)
from ..core.processor import HOOKS, TOOL_HOOKS, Processor, ProcessorViolation, implements, wants_tool
from ..core.results import (
    MessagesResult,
    ProcessAPIErrorResult,
    ProcessInputStepResult,
    ProcessLLMRequestResult,
)

__all__ = [
    "HOOKS",
    "TOOL_HOOKS",
    "AfterToolCallArgs",
    "BeforeToolCallArgs",
    "MessagesResult",
    "OutputResult",
    "ProcessAPIErrorArgs",
    "ProcessAPIErrorResult",
    "ProcessInputArgs",
    "ProcessInputStepArgs",
    "ProcessInputStepResult",
    "ProcessLLMRequestArgs",
    "ProcessLLMRequestResult",
    "ProcessLLMResponseArgs",
    "ProcessOutputResultArgs",
    "ProcessOutputStepArgs",
    "ProcessOutputStreamArgs",
    "ProcessToolResultArgs",
    "Processor",
    "ProcessorStreamWriter",
    "ProcessorViolation",
    "RunInfo",
    "StepResult",
    "implements",
    "wants_tool",
]
