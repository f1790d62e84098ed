"""Deterministic PII detection: e-mail addresses, phone numbers, card numbers (Luhn-checked),
IBANs (mod-97-checked) and IP addresses; and the hold point that lets a stream guard release
text only where no match can still be growing."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from stdnum import iban as _iban
from stdnum import luhn as _luhn

PII_TYPES: tuple[str, ...] = ("email", "phone", "card", "iban", "ip")

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-])"
)
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}(?![A-Za-z0-9])")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?!\d)")
_IPV4 = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?!\w|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,5}){1,4}(?!\w)"
)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$|^\d{2}[./-]\d{2}[./-]\d{4}$")


@dataclass(frozen=True)
class Match:
    type: str
    start: int
    end: int
    text: str


def _emails(text: str) -> Iterable[Match]:
    for m in _EMAIL.finditer(text):
        yield Match("email", m.start(), m.end(), m.group())


def _ibans(text: str) -> Iterable[Match]:
    for m in _IBAN.finditer(text):
        # The pattern may take a following group that is not part of the IBAN: try shorter.
        candidate = m.group()
        while len(candidate.replace(" ", "")) >= 15:
            if _iban.is_valid(candidate):
                yield Match("iban", m.start(), m.start() + len(candidate), candidate)
                break
            candidate = candidate[:-1].rstrip()


def _cards(text: str) -> Iterable[Match]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _luhn.is_valid(digits):
            yield Match("card", m.start(), m.end(), m.group())


def _ips(text: str) -> Iterable[Match]:
    for pattern in (_IPV4, _IPV6):
        for m in pattern.finditer(text):
            try:
                ipaddress.ip_address(m.group())
            except ValueError:
                continue
            yield Match("ip", m.start(), m.end(), m.group())


def _phones(text: str) -> Iterable[Match]:
    for m in _PHONE.finditer(text):
        s = m.group()
        digits = sum(c.isdigit() for c in s)
        separated = s.startswith("+") or "(" in s or re.search(r"\d[ .-]\d", s) is not None
        if 7 <= digits <= 15 and separated and not _DATE.match(s):
            yield Match("phone", m.start(), m.end(), s)


_DETECTORS = {"email": _emails, "iban": _ibans, "card": _cards, "ip": _ips, "phone": _phones}
_PRIORITY = ("email", "iban", "card", "ip", "phone")
"""Where matches overlap, the earlier type wins (a card number is not also a phone number)."""


_DIGIT = re.compile(r"\d")
_IBAN_START = re.compile(r"[A-Z]{2}\d{2}")


def _possible(text: str) -> set[str]:
    """The types ``text`` could hold at all, from cheap checks (most of a stream holds none, and
    is settled without running the detectors)."""
    digits = len(_DIGIT.findall(text))
    out = set()
    if "@" in text:
        out.add("email")
    if digits >= 7:
        out.add("phone")
    if digits >= 13:
        out.add("card")
    if (digits >= 4 and text.count(".") >= 3) or text.count(":") >= 2:
        out.add("ip")
    if digits >= 4 and _IBAN_START.search(text):
        out.add("iban")
    return out


def find(text: str, types: Iterable[str] = PII_TYPES) -> list[Match]:
    """Non-overlapping matches of ``types`` in ``text``, in text order."""
    wanted = _possible(text).intersection(types)
    if not wanted:
        return []
    taken: list[Match] = []
    for kind in _PRIORITY:
        if kind not in wanted:
            continue
        for m in _DETECTORS[kind](text):
            if all(m.end <= t.start or m.start >= t.end for t in taken):
                taken.append(m)
    return sorted(taken, key=lambda m: m.start)


def redact(text: str, matches: list[Match], template: str) -> str:
    out, at = [], 0
    for m in matches:
        out.append(text[at:m.start])
        out.append(template.format(type=m.type.upper()))
        at = m.end
    out.append(text[at:])
    return "".join(out)


MAX_HOLD = 256
"""The most text a stream guard holds back; a longer unbroken run is released."""

_NUMBERISH = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ+().- ")
"""What phone numbers, card numbers and IBANs are written with."""


def hold_point(text: str, matches: list[Match]) -> int:
    """Where ``text`` may be cut: everything before can be released, because no match can
    start before it and still grow with the text that follows."""
    cut = len(text)
    while cut > 0 and not text[cut - 1].isspace():
        cut -= 1  # the last word may be the start of an e-mail address, IP or IBAN
    start, floor = len(text), max(0, len(text) - MAX_HOLD)
    while start > floor and text[start - 1] in _NUMBERISH:
        start -= 1
    if start < cut and _DIGIT.search(text, start) is not None:
        cut = start  # digit groups (phones, cards, IBANs) may go on
    for m in matches:
        if m.start < cut < m.end or (m.end == len(text) and m.start < cut):
            cut = m.start
    return max(cut, len(text) - MAX_HOLD, 0)
