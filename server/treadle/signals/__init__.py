"""The thread runtime: signals into running and idle threads, subscriptions, state channels,
the notification inbox. Knows the loop and the store protocol; never gRPC or SQL."""

from .hub import ActiveRunChanged, Subscription, ThreadHub
from .notifications import DecideArgs, Decision, NotificationCenter, NotificationInput, NotificationResult
from .render import render_signal, render_summary, render_tag
from .runtime import Accepted, ActiveRun, IfActive, IfIdle, Sent, Target, ThreadRuntime
from .signal import Signal, normalise_type
from .state import StateInput, StateResult, send_state
from .store import InMemorySignalStore, NotificationRecord, PendingSignal, SignalStore, StateChannel

__all__ = [
    "Accepted", "ActiveRun", "ActiveRunChanged", "DecideArgs", "Decision", "IfActive", "IfIdle",
    "InMemorySignalStore", "NotificationCenter", "NotificationInput", "NotificationRecord",
    "NotificationResult", "PendingSignal", "Sent", "Signal", "SignalStore", "StateChannel",
    "StateInput", "StateResult", "Subscription", "Target", "ThreadHub", "ThreadRuntime",
    "normalise_type", "render_signal", "render_summary", "render_tag", "send_state",
]
