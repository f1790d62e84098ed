"""Test helpers shipped with Treadle, for users' tests as much as for ours.

``ScriptedModel`` plays scripted provider responses without any network, and
``ScriptedModels`` stands in for the model router so any agent uses it.
"""

from .scripted import ScriptedModel, ScriptedModels, text_response, tool_call_response

__all__ = ["ScriptedModel", "ScriptedModels", "text_response", "tool_call_response"]
