"""The `no-secrets` guard as a remote processor: a separate Python process attached to a running
server (started with `treadle serve --config examples/agents.yaml`, say).

    .venv/bin/python examples/remote_guard.py [HOST:PORT]     # default $TREADLE_TARGET or 127.0.0.1:50051

Prints `processor no-secrets attached to HOST:PORT` once the server has accepted it, and a line
per failed try while the server cannot be reached. Runs until SIGTERM or Ctrl-C. The class is
the same as an in-process one (examples/server_with_processor.py).
"""

import sys

from treadle.core.messages import TextPart
from treadle_client import default_target, run_processors


class NoSecrets:
    """Refuses prompts that mention a password, before any model call."""

    id = "no-secrets"

    def process_input(self, args):
        for message in args.messages:
            for part in message.content.parts:
                if isinstance(part, TextPart) and "password" in part.text.lower():
                    args.abort("prompts must not contain passwords")
        return args.messages


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else default_target()
    run_processors([NoSecrets()], target)
