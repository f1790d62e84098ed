"""A Treadle server built in Python, with an in-process processor.

    .venv/bin/python examples/server_with_processor.py

Serves the agent `careful`, whose input processor `no-secrets` refuses prompts that mention a
password before any model call. It reads the same TREADLE_* variables as `treadle serve`
(TREADLE_LISTEN, default 127.0.0.1:50051) and prints the same start lines. Then, from another
terminal:

    .venv/bin/treadle chat careful "my password is hunter2"   # ✋ blocked by no-secrets: ...
    .venv/bin/treadle chat careful "hello"                    # answered by the model

The agent runs on the embedded model unless MODEL names another (e.g. MODEL=openai/gpt-4o-mini
with OPENAI_API_KEY set).
"""

import asyncio
import os

from treadle.agents import Agent
from treadle.app import TreadleApp
from treadle.core.messages import SystemMessage, TextPart


class NoSecrets:
    """Refuses prompts that mention a password, before any model call."""

    id = "no-secrets"

    def process_input(self, args):
        for message in args.messages:
            for part in message.content.parts:
                if isinstance(part, TextPart) and "password" in part.text.lower():
                    args.abort("prompts must not contain passwords")
        return args.messages


app = TreadleApp()
app.add_processor(NoSecrets())
app.add_agent(
    Agent(
        id="careful",
        name="Careful",
        model=os.environ.get("MODEL", "local/smollm2-135m-instruct"),
        instructions=[SystemMessage("You are a careful assistant.")],
        input_processors=["no-secrets"],
    )
)

if __name__ == "__main__":
    asyncio.run(app.serve())  # until SIGTERM or Ctrl-C
