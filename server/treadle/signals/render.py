"""How a signal looks to the model (the functions live with the domain types, where the prompt
builder reads them too)."""

from ..core.signal_xml import (
    ATTRIBUTE_NAME,
    attribute_value,
    check_attributes,
    escape_attribute,
    escape_text,
    render_signal,
    render_summary,
    render_tag,
    signal_prompt_text,
)

__all__ = [
    "ATTRIBUTE_NAME", "attribute_value", "check_attributes", "escape_attribute", "escape_text",
    "render_signal", "render_summary", "render_tag", "signal_prompt_text",
]
