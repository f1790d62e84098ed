// The package's subpath exports resolve to the built JavaScript (`npm test` builds first), with
// the names the Mastra Processor API's users import.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

test("each subpath exports its names from dist/", () => {
  // A plain `node` (no tsx) importing the package by its name, as an installed copy would.
  const script = `
    const names = {};
    for (const sub of ["", "/processors", "/memory", "/stream", "/errors", "/tools", "/voices"]) {
      const m = await import("@treadle/client" + sub);
      names[sub || "."] = Object.keys(m).filter((k) => !k.endsWith("Schema")).sort();
    }
    names.resolved = import.meta.resolve("@treadle/client/processors");
    console.log(JSON.stringify(names));`;
  const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" }));
  assert.match(out.resolved, /\/dist\/processors\.js$/);
  for (const name of ["attach", "AttachError", "TripWire", "MessageList", "RequestContext", "HOOKS", "TextGate"]) {
    assert.ok(out["/processors"].includes(name), name);
  }
  assert.deepEqual(out["/memory"], ["MessageList"]); // MastraDBMessage is a type
  assert.deepEqual(out["/errors"], ["APICallError", "TripWire"]);
  assert.deepEqual(out["/tools"], ["createTool", "serveTools"]);
  assert.deepEqual(out["/voices"], ["serveVoices"]);
  for (const name of ["AgentClient", "AgentRef", "ThreadSubscription", "attach", "serveTools", "createTool", "serveVoices", "createClient"]) assert.ok(out["."].includes(name), name);
});
