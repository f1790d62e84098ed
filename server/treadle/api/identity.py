"""Who serves which processor id or tool name: the first credential to attach a name holds it.

An attach is accepted only for names the caller's credential allows (``api/auth.py``), and a
name the config names exactly for one credential is allowed to no other, whatever its patterns
(``Credential.reserved``): a wildcard cannot take it while its owner restarts. On top of that,
while a name is attached under one credential, another credential cannot attach it, even one
whose scope would allow it: no stream can slip in beside the real one and take half the calls.
Replicas under the same credential share the name. With auth off nothing is checked.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..config.auth import Scope
from ..core.errors import PermissionDeniedError
from . import auth


class Owners:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self._held: dict[str, tuple[str, int]] = {}

    def claim(self, names: Iterable[str]) -> str | None:
        """Check the caller may attach every name, then hold them; returns who to ``release``."""
        names = list(names)
        for name in names:
            auth.require(self.scope, name)
        owner = auth.owner()
        if owner is None:
            return None
        for name in names:
            holder = self._held.get(name)
            if holder is not None and holder[0] != owner:
                what = {"tools": "tool", "voices": "voice provider"}.get(self.scope, "processor")
                raise PermissionDeniedError(
                    f"{what} {name!r} is attached under credential {holder[0]!r}; "
                    f"credential {owner!r} cannot attach it too"
                )
        for name in names:
            held = self._held.get(name, (owner, 0))
            self._held[name] = (owner, held[1] + 1)
        return owner

    def release(self, names: Iterable[str], owner: str | None) -> None:
        if owner is None:
            return
        for name in names:
            holder, count = self._held.get(name, (owner, 0))
            if count <= 1:
                self._held.pop(name, None)
            else:
                self._held[name] = (holder, count - 1)
