"""Chat time to first token: the web console in a browser against the Python client, same server,
same model, same kind of run.

    .venv/bin/python bench/console_first_token.py [--runs N]

One server in this process; its agent calls a loopback OpenAI-compatible fake (the wire-level
one the tests use) that answers 20 deltas at once. Turn by turn, alternating, a run is streamed
by ``treadle_client.AgentClient.stream`` (time from the call to the first text delta received)
and by the console's chat page in headless Chromium (time from the form's submit to the first
answer text in the page, measured in the page). Every run is a new turn on a memory thread, as
the console's chat makes it. Printed: the median and the spread of each, and the console's page
weight and first contentful paint.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.async_api import async_playwright  # noqa: E402

from tests.support import OpenAIServer, Turn  # noqa: E402
from treadle.agents import Agent  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.messages import SystemMessage  # noqa: E402
from treadle.v1 import agent_pb2  # noqa: E402
from treadle_client import AgentClient  # noqa: E402

WATCH = """() => new Promise((resolve) => {
  const form = document.querySelector('form.chat-form');
  let sent = 0;
  form.addEventListener('submit', () => { sent = performance.now(); }, { capture: true, once: true });
  const log = document.querySelector('[data-testid="chat-log"]');
  const seen = new MutationObserver(() => {
    const answers = log.querySelectorAll('[data-testid="answer"]');
    const last = answers[answers.length - 1];
    if (sent && last && last.textContent && last.dataset.timed !== '1') {
      last.dataset.timed = '1'; seen.disconnect(); resolve(performance.now() - sent);
    }
  });
  seen.observe(log, { childList: true, subtree: true, characterData: true });
})"""


async def main(runs: int) -> None:
    import tempfile

    model = OpenAIServer([Turn.say([f"w{i} " for i in range(20)]) for _ in range(2 * runs + 2)])
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, data_dir=Path(tempfile.mkdtemp())), env={})
    app.add_agent(Agent(id="bench", name="bench", model="openai/test-model", base_url=model.base_url,
                        instructions=[SystemMessage("Be brief.")]))
    await app.start()
    base = f"http://127.0.0.1:{app.console_port}/"
    client_ms: list[float] = []
    console_ms: list[float] = []
    try:
        async with async_playwright() as pw, AgentClient(f"127.0.0.1:{app.port}") as client:
            browser = await pw.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                               args=["--no-sandbox", "--disable-gpu"])
            page = await browser.new_page()
            sizes: list[int] = []

            async def on_response(response: object) -> None:
                headers = await response.all_headers()  # type: ignore[attr-defined]
                if response.request.method == "GET":  # type: ignore[attr-defined]
                    sizes.append(int(headers.get("content-length", "0")))

            page.on("response", on_response)
            await page.goto(base + "#/chat/bench?resource=bench&thread=console-bench")
            await page.wait_for_selector("#chat-input:focus")
            paint = await page.evaluate(
                "performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint')?.startTime")
            options = agent_pb2.CallOptions(memory=agent_pb2.MemoryOptions(resource="bench", thread_id="client-bench"))
            for i in range(runs + 1):  # the first of each is a warm-up
                started = time.perf_counter()
                first = None
                async for chunk in client.stream("bench", "hello", options=options):
                    if first is None and chunk.WhichOneof("chunk") == "text_delta":
                        first = (time.perf_counter() - started) * 1000
                if i and first is not None:
                    client_ms.append(first)
                timed = asyncio.ensure_future(page.evaluate(WATCH))
                await page.wait_for_timeout(50)  # the observer is in place
                await page.keyboard.type("hello")
                await page.keyboard.press("Enter")
                took = await timed
                await page.wait_for_selector(f'[data-testid="finish"] >> nth={i}')
                if i:
                    console_ms.append(took)
            await browser.close()
    finally:
        await app.stop(0)
        model.close()

    def line(name: str, xs: list[float]) -> str:
        return f"{name:<28} median {statistics.median(xs):6.1f} ms  (min {min(xs):.1f}, max {max(xs):.1f}, n={len(xs)})"

    print(f"console page: {len(sizes)} files, {sum(sizes)} bytes sent (gzip); first contentful paint {paint:.0f} ms")
    print("time to first token, same server and model:")
    print(line("  Python client Stream", client_ms))
    print(line("  console chat (Chromium)", console_ms))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    asyncio.run(main(parser.parse_args().runs))
