"""How signals look to the model: exactly the renderings of the framework Treadle re-creates."""

from __future__ import annotations

import pytest

from treadle.core.errors import InvalidArgumentError
from treadle.signals import Signal, normalise_type, render_signal, render_summary
from treadle.signals.render import signal_prompt_text


def test_user_message_with_attributes_renders_as_a_user_element() -> None:
    text = render_signal("user", "user", "Can we simplify the API surface?", {"name": "Devin", "from": "slack"})
    assert text == '<user name="Devin" from="slack">Can we simplify the API surface?</user>'


def test_text_escapes_amp_lt_gt_and_keeps_quotes_attribute_values_escape_amp_lt_quote() -> None:
    text = render_signal("user", "user", 'if a < b && c > d say "hi"', {"note": 'x"y<z&', "n": 3})
    assert text == '<user note="x&quot;y&lt;z&amp;" n="3">if a &lt; b &amp;&amp; c &gt; d say "hi"</user>'


def test_a_user_signal_without_attributes_is_plain_text() -> None:
    assert render_signal("user", "user", "a < b", {}) == "a < b"
    assert render_signal("user", "user", "a < b", {"gone": None}) == "a < b"


def test_null_attributes_are_dropped_and_empty_contents_self_close() -> None:
    assert render_signal("reactive", "system-reminder", "", {"a": None, "b": True}) == '<system-reminder b="true" />'


def test_attribute_names_are_checked() -> None:
    with pytest.raises(InvalidArgumentError, match="attribute name '1bad'"):
        render_signal("user", "user", "x", {"1bad": "v"})


def test_state_signal_is_a_bare_state_element() -> None:
    assert render_signal("state", "state", "Browser is open.", {}) == "<state>Browser is open.</state>"


def test_notification_summary() -> None:
    assert render_summary({"github": 1}, "low") == (
        '<notification-summary pending="1" priority="low">github: 1</notification-summary>'
    )


def test_types_are_normalised_and_unknown_ones_rejected() -> None:
    assert normalise_type("user-message") == ("user", "user")
    assert normalise_type("system-reminder") == ("reactive", "system-reminder")
    assert normalise_type("reactive") == ("reactive", "system-reminder")
    assert normalise_type("notification", "github-review") == ("notification", "github-review")
    with pytest.raises(InvalidArgumentError, match="'bogus' is unknown"):
        normalise_type("bogus")


def test_a_signal_becomes_a_signal_message_and_a_transient_chunk() -> None:
    signal = Signal("notification", "github-review", "LGTM", attributes={"pr": 7})
    message = signal.to_message(thread_id="t1", resource_id="u1")
    # Stored as the raw contents; the XML is rendered for the prompt.
    assert (message.role, message.type, message.text) == ("signal", "github-review", "LGTM")
    assert "contents" not in message.content.metadata["signal"]
    assert signal_prompt_text(message) == '<github-review pr="7">LGTM</github-review>'
    chunk = signal.to_chunk("run_1")
    assert (chunk.type, chunk.transient, chunk.run_id, chunk.from_) == ("data-signal", True, "run_1", "SYSTEM")
    assert chunk.data["tagName"] == "github-review" and chunk.data["attributes"] == {"pr": 7}
    assert Signal("user", "user", "hi").to_chunk().type == "data-user-message"
