// The Treadle console: one page, no build step. It calls the server's public API through the
// Connect protocol (JSON) at the same origin; see docs/console.md.

// --- Connect client --------------------------------------------------------------------------

class RpcError extends Error {
  constructor(code, message) { super(message || code); this.code = code; }
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function headers(contentType) {
  const h = { "Content-Type": contentType, "Connect-Protocol-Version": "1" };
  const token = sessionStorage.getItem("treadle.token");
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

async function call(method, request = {}) {
  const response = await fetch(`/treadle.v1.${method}`, {
    method: "POST", headers: headers("application/json"), body: JSON.stringify(request),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new RpcError(body.code || "unknown", body.message || response.statusText);
  return body;
}

async function* stream(method, request, signal) {
  const data = enc.encode(JSON.stringify(request));
  const envelope = new Uint8Array(5 + data.length);
  new DataView(envelope.buffer).setUint32(1, data.length);
  envelope.set(data, 5);
  const response = await fetch(`/treadle.v1.${method}`, {
    method: "POST", headers: headers("application/connect+json"), body: envelope, signal,
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new RpcError(body.code || "unknown", body.message || response.statusText);
  }
  const reader = response.body.getReader();
  let buf = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new RpcError("unavailable", "the stream ended early");
    const joined = new Uint8Array(buf.length + value.length);
    joined.set(buf); joined.set(value, buf.length); buf = joined;
    while (buf.length >= 5) {
      const flags = buf[0];
      const size = new DataView(buf.buffer, buf.byteOffset).getUint32(1);
      if (buf.length < 5 + size) break;
      const message = JSON.parse(dec.decode(buf.subarray(5, 5 + size)));
      buf = buf.slice(5 + size);
      if (flags & 2) {
        if (message.error) throw new RpcError(message.error.code, message.error.message);
        return;
      }
      yield message;
    }
  }
}

// --- DOM helpers -------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v; // through the CSSOM: the page's CSP allows no inline style attributes
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

function table(caption, heads, rows) {
  return h("div", { class: "scroll" }, h("table", {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, heads.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.length ? rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))
      : h("tr", {}, h("td", { colspan: heads.length, class: "muted" }, "none")))));
}

const short = (name) => String(name || "").replace(/^[A-Z_]+?_(?=[A-Z]+$)/, "").replace(/^(RUN_STATUS|FINISH_REASON|MESSAGE_ROLE)_/, "").toLowerCase();
const json = (v) => JSON.stringify(v);
const link = (href, text) => h("a", { href }, text);
const when = (ts) => ts ? h("time", { datetime: ts, title: ts }, ts.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC")) : "";
const enc64 = encodeURIComponent;

function errorBox(e) {
  const hint = e.code === "unauthenticated" ? " Enter a token above." : e.code === "permission_denied" ? " Use a token that may." : "";
  return h("p", { class: "error", role: "alert" }, `${e.code ? e.code + ": " : ""}${e.message}${hint}`);
}

function toYaml(v, indent = 0) {
  const pad = " ".repeat(indent);
  const isObj = (x) => x && typeof x === "object" && !Array.isArray(x);
  const scalar = (x) => {
    if (typeof x !== "string") return String(x);
    return /^[\w./@-][\w ./@,()'-]*$/.test(x) && !/^(true|false|null|yes|no|~|[-\d.]+)$/i.test(x) && !/ $/.test(x) ? x : JSON.stringify(x);
  };
  if (Array.isArray(v)) {
    if (!v.length) return " []";
    return v.map((x) => (isObj(x) || Array.isArray(x)) ? `\n${pad}-${toYaml(x, indent + 2).replace(/^\n\s*/, " ")}` : `\n${pad}- ${scalar(x)}`).join("");
  }
  if (isObj(v)) {
    const keys = Object.keys(v);
    if (!keys.length) return " {}";
    return keys.map((k) => `\n${pad}${k}:${(isObj(v[k]) || Array.isArray(v[k])) ? toYaml(v[k], indent + 2) : " " + scalar(v[k])}`).join("");
  }
  return " " + scalar(v);
}

function usageText(u) {
  if (!u) return "";
  return `${u.inputTokens || 0} in / ${u.outputTokens || 0} out`;
}

// --- chunks, as they stream --------------------------------------------------------------------

const QUIET = new Set(["textStart", "textEnd", "reasoningStart", "reasoningEnd", "stepFinish", "responseMetadata",
  "toolCallInputStreamingStart", "toolCallDelta", "toolCallInputStreamingEnd", "start"]);
const SIGNALS = new Set(["data-signal", "data-user-message"]);

function chunkCase(chunk) {
  return Object.keys(chunk).find((k) => !["runId", "from", "metadata"].includes(k));
}

export class ChunkView {
  constructor(container) { this.box = container; this.text = null; this.nested = new Map(); this.runId = ""; }
  line(cls, text) { this.text = null; const el = h("div", { class: `event ${cls}` }, text); this.box.append(el); return el; }
  add(chunk) {
    if (chunk.runId) this.runId = chunk.runId;
    const kind = chunkCase(chunk);
    const c = chunk[kind] || {};
    switch (kind) {
      case "textDelta":
        if (!this.text) { this.text = h("div", { class: "text", "data-testid": "answer" }); this.box.append(this.text); }
        this.text.append(c.text || "");
        return;
      case "reasoningDelta": this.line("muted", `(thinking) ${c.text || ""}`); return;
      case "stepStart": if ((c.stepNumber || 0) > 1) this.line("muted", `step ${c.stepNumber}${c.modelId ? ` (${c.modelId})` : ""}`); return;
      case "toolCall": this.line("tool", `→ ${c.toolName}(${json(c.args ?? {})})`); return;
      case "toolResult": this.line(c.isError ? "error" : "tool", `← ${c.toolName}: ${json(c.result ?? null)}`); return;
      case "toolError": this.line("error", `← ${c.toolName} failed: ${c.error}`); return;
      case "data":
        if (SIGNALS.has(c.name)) {
          const s = c.data || {};
          const who = s.type === "user" || !s.type ? (s.attributes?.name || "user") : (s.tagName || s.type);
          this.line("signal", `↳ signal from ${who}: ${s.contents ?? ""}`).dataset.testid = "signal";
        } else this.line("data", `◆ ${c.name} ${json(c.data ?? null)}`);
        return;
      case "tripwire": {
        const el = this.line("tripwire", `✋ blocked by ${c.processorId || "a processor"}: ${c.reason}`);
        el.setAttribute("role", "alert"); el.dataset.testid = "tripwire";
        return;
      }
      case "error": this.line("error", `error: ${c.message || c.name}`).setAttribute("role", "alert"); return;
      case "abort": this.line("error", `aborted${c.reason ? ": " + c.reason : ""}`); return;
      case "finish": {
        const skipped = (c.skippedProcessors || []).map((s) => `${s.processorId} ${s.hook} (${s.message || short(s.reason)})`);
        this.line("muted", `finished: ${short(c.reason)} · ${usageText(c.totalUsage)}${skipped.length ? " · skipped: " + skipped.join(", ") : ""}`).dataset.testid = "finish";
        return;
      }
      default:
        if (QUIET.has(kind)) return;
        this.generic(kind, c);
    }
  }
  generic(kind, c) {
    // A chunk this page does not know (sub-agent output, newer chunk kinds): its name and JSON,
    // and any chunk it carries rendered inside, nested.
    this.text = null;
    const inner = [];
    const payload = { ...c };
    for (const key of ["output", "chunk", "chunks"]) {
      const found = [].concat(payload[key] ?? []).filter((x) => x && typeof x === "object" && chunkCase(x));
      if (found.length) { inner.push(...found); delete payload[key]; }
    }
    const label = [kind, c.toolName || c.agentId || c.name].filter(Boolean).join(" ");
    const el = h("details", { class: "event generic", "data-kind": kind }, h("summary", {}, `◇ ${label}`), h("pre", {}, JSON.stringify(payload, null, 2)));
    if (inner.length) {
      const key = `${kind}:${c.toolCallId || c.id || ""}`;
      let view = this.nested.get(key);
      if (!view) {
        view = new ChunkView(h("div", { class: "nested", "data-testid": "nested" }, h("div", { class: "muted" }, `◇ ${label}`)));
        this.nested.set(key, view); this.box.append(view.box);
      }
      for (const x of inner) view.add(x);
      return;
    }
    this.box.append(el);
  }
}

// --- messages in stored form -------------------------------------------------------------------

function messageView(m) {
  const role = short(m.role);
  const parts = (m.content?.parts || []).map((p) => {
    const kind = Object.keys(p).find((k) => k !== "providerMetadata");
    const v = p[kind] || {};
    if (kind === "text") return h("div", { class: "text" }, v.text || "");
    if (kind === "reasoning") return h("div", { class: "muted text" }, `(thinking) ${v.text || ""}`);
    if (kind === "stepStart") return null;
    if (kind === "toolInvocation") return h("div", { class: "event tool" }, `tool ${v.toolName || ""} ${json(v.args ?? {})} → ${json(v.result ?? null)}`);
    if (kind === "data") return h("div", { class: "event data" }, `◆ ${v.name || v.type || "data"} ${json(v.data ?? null)}`);
    return h("details", { class: "event" }, h("summary", {}, `◇ ${kind}`), h("pre", {}, JSON.stringify(v, null, 2)));
  });
  const who = role === "signal" ? `signal <${m.type || "signal"}>` : role;
  return h("div", { class: `msg ${role}`, "data-testid": "message" }, h("span", { class: "who" }, `${who} · ${m.createdAt || ""}`), parts);
}

// --- pages -------------------------------------------------------------------------------------

let page = { abort: new AbortController(), timers: [] };
const main = () => document.getElementById("main");

function render(title, ...nodes) {
  document.title = `${title} · Treadle console`;
  main().replaceChildren(h("h1", {}, title), ...nodes);
}

async function agentsPage() {
  render("Agents", h("p", { class: "muted" }, "Loading…"));
  const { agents = [] } = await call("AgentService/ListAgents", { pageSize: 200 });
  render("Agents", table("Agents on this server", ["Id", "Name", "Model", "Source", ""],
    agents.map((a) => [link(`#/agents/${enc64(a.id)}`, a.id), a.name || "", a.model || "", short(a.source),
      link(`#/chat/${enc64(a.id)}`, "chat")])));
}

async function agentPage(id) {
  render(`Agent ${id}`, h("p", { class: "muted" }, "Loading…"));
  const { agent } = await call("AgentService/GetAgent", { id });
  let replicas = null;
  try { replicas = await call("ConsoleService/ListReplicas"); } catch { /* not admin: attach state unknown */ }
  const procState = (ref) => {
    if (ref.builtin) return h("span", { class: "badge local" }, `built-in ${ref.builtin}, in process`);
    if (!replicas) return h("span", { class: "muted" }, "unknown (needs an admin token)");
    const mine = (replicas.processors || []).filter((r) => r.processorId === ref.id);
    if (!mine.length) return h("span", { class: "badge missing" }, "no remote replica (in process, or not attached)");
    const ejected = mine.filter((r) => r.health === "ejected").length;
    return h("span", { class: `badge ${ejected === mine.length ? "ejected" : "attached"}` }, `attached: ${mine.length} replica(s)${ejected ? `, ${ejected} ejected` : ""}`);
  };
  const toolState = (name) => {
    if (!replicas) return h("span", { class: "muted" }, "unknown (needs an admin token)");
    const mine = (replicas.tools || []).filter((t) => t.toolName === name);
    return mine.length ? h("span", { class: "badge attached" }, `attached: ${mine.length} replica(s)`)
      : h("span", { class: "badge local" }, "no remote replica (in process, or not attached)");
  };
  const lanes = [["input", agent.inputProcessors], ["output", agent.outputProcessors], ["error", agent.errorProcessors]];
  const procRows = lanes.flatMap(([lane, refs]) => (refs || []).map((r) => [lane, r.id || r.builtin, short(r.failurePolicy) || "fail_closed", procState(r)]));
  const variants = variantLines(agent);
  const versions = h("div", { "data-testid": "versions" });
  render(`Agent ${id}`,
    h("p", {}, link(`#/chat/${enc64(id)}`, "Chat with this agent"), " · ", link(`#/scores?${new URLSearchParams({ agent: id })}`, "Scores")),
    h("h2", {}, "Processors"), table("Processors by lane", ["Lane", "Id", "Failure policy", "Attach state"], procRows),
    h("h2", {}, "Tools"), table("Tools", ["Name", "Attach state"], (agent.tools || []).map((t) => [t, toolState(t)])),
    ...(variants.length ? [h("h2", {}, "Variants"), h("pre", { "data-testid": "variants" }, variants.join("\n"))] : []),
    h("h2", {}, "Versions"), versions,
    h("h2", {}, "Definition"), h("pre", { "data-testid": "yaml" }, toYaml(agent).trimStart()));
  await versionsBox(id, versions);
}

// Per-request variants, one line each, as `treadle agents show` prints them.
const VARIANT_FIELDS = ["model", "instructions", "tools", "inputProcessors", "outputProcessors", "errorProcessors", "defaultOptions"];
const snake = (k) => k.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());

function ruleText(r) {
  if (r.field) {
    const op = (r.operator || "").replace(/_/g, " ");
    return ["exists", "not exists"].includes(op) ? `${r.field} ${op}` : `${r.field} ${op} ${JSON.stringify(r.value ?? null)}`;
  }
  const inner = (r.conditions || []).map(ruleText).join(` ${(r.operator || "").toUpperCase()} `);
  return (r.conditions || []).length === 1 ? inner : `(${inner})`;
}

function variantValue(field, v) {
  if (field === "model") return String(v.value || "");
  if (field === "instructions") {
    const t = v.value || (v.messages || []).map((m) => m.content).join(" / ");
    return JSON.stringify(t.length <= 60 ? t : t.slice(0, 57) + "...");
  }
  if (field === "tools") return "+ " + (v.value || []).join(", ");
  if (field === "defaultOptions") return JSON.stringify(v.value || {});
  return "+ " + (v.value || []).map((r) => r.id || r.builtin).join(", ");
}

export function variantLines(agent) {
  const lines = [];
  for (const f of VARIANT_FIELDS) {
    const list = agent[`${f}Variants`] || [];
    if (!list.length) continue;
    lines.push(`${snake(f).replace(/_/g, " ")} variants:`);
    list.forEach((v, i) => lines.push(`  [${i}] ${variantValue(f, v)}  ${v.rules ? "when " + ruleText(v.rules) : "always"}`));
  }
  if (agent.resolver) lines.push(`resolver: ${agent.resolver.id} (resolveAgent, once per call)`);
  return lines;
}

// Stored versions (AgentVersionService): the list, publish / restore, and a diff of two.
async function versionsBox(agentId, box) {
  let versions;
  try {
    versions = [];
    let token = "";
    for (let i = 0; i < 10; i++) {
      const r = await call("AgentVersionService/ListAgentVersions", { agentId, pageSize: 100, pageToken: token });
      versions.push(...(r.versions || []));
      token = r.nextPageToken; if (!token) break;
    }
  } catch (e) { box.replaceChildren(errorBox(e)); return; }
  if (!versions.length) { box.replaceChildren(h("p", { class: "muted" }, "No stored versions: calls run the definition.")); return; }
  const status = h("p", { role: "status", class: "muted" });
  const act = (label, method, v, extra) => h("button", { type: "button", class: "secondary", "aria-label": `${label} v${v.number}`, onclick: async () => {
    try {
      const r = await call(`AgentVersionService/${method}`, { agentId, version: v.id, ...extra });
      await versionsBox(agentId, box);
      box.querySelector('[role="status"]').textContent = `${label === "Publish" ? "published" : "restored as"} v${r.version?.number}`;
    } catch (e) { status.replaceChildren(errorBox(e)); }
  } }, label);
  const rows = versions.map((v) => {
    const state = short(v.state);
    const published = state === "published";
    return [h("span", {}, `v${v.number}`, published ? h("span", { class: "badge published live", "data-testid": "published" }, "● live") : null),
      h("span", { class: `badge ${state}` }, state), v.author || "", when(v.createTime),
      (v.message || "") + (v.restoredFrom ? ` (restored from ${v.restoredFrom})` : ""),
      h("span", { class: "actions" }, published ? null : act("Publish", "PublishAgentVersion", v), act("Restore", "RestoreAgentVersion", v, { message: `restore v${v.number}` }))];
  });
  const opts = (sel) => [h("option", { value: "definition" }, "definition"),
    ...versions.map((v) => h("option", { value: v.id, selected: v === sel }, `v${v.number} ${short(v.state)}`))];
  const from = h("select", { id: "diff-from" }, opts(versions[versions.length > 1 ? 1 : 0]));
  const to = h("select", { id: "diff-to" }, opts(versions[0]));
  const diff = h("div", { "data-testid": "diff" });
  const form = h("form", { class: "row", onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const r = await call("AgentVersionService/DiffAgentVersions", { agentId, fromVersion: from.value, toVersion: to.value });
      diff.replaceChildren(table("Changed fields", ["Field", "Before", "After"], (r.changes || []).map((c) => [c.field, c.before || "", c.after || ""])),
        r.instructionsDiff ? h("pre", { class: "diff" }, r.instructionsDiff.split("\n").map((l) =>
          h("span", { class: l.startsWith("+") && !l.startsWith("+++") ? "add" : l.startsWith("-") && !l.startsWith("---") ? "del" : "" }, l + "\n"))) : null);
    } catch (e) { diff.replaceChildren(errorBox(e)); }
  } }, h("label", {}, "From", from), h("label", {}, "To", to), h("button", { type: "submit" }, "Diff"));
  box.replaceChildren(table("Stored versions, newest first", ["Version", "State", "Author", "Created", "Message", ""], rows), status, form, diff);
}

async function threadOptions(resource, selected) {
  const opts = [h("option", { value: "" }, "New thread")];
  if (resource) {
    try {
      const { threads = [] } = await call("ThreadService/ListThreads", { resourceId: resource, pageSize: 100 });
      for (const t of threads) opts.push(h("option", { value: t.id, selected: t.id === selected }, t.title ? `${t.title} (${t.id})` : t.id));
    } catch { /* shown when sending */ }
  }
  return opts;
}

async function chatPage(agentId, q) {
  const { agents = [] } = await call("AgentService/ListAgents", { pageSize: 200 });
  agentId = agentId || agents[0]?.id || "";
  const resource = q.get("resource") || "console";
  const threadId = q.get("thread") || "";
  const agentSel = h("select", { id: "chat-agent" }, agents.map((a) => h("option", { value: a.id, selected: a.id === agentId }, a.id)));
  const resIn = h("input", { id: "chat-resource", value: resource, size: 14 });
  const threadSel = h("select", { id: "chat-thread" }, await threadOptions(resource, threadId));
  const log = h("div", { class: "log", "aria-live": "polite", "data-testid": "chat-log" });
  const input = h("input", { id: "chat-input", placeholder: "Message", "aria-label": "Message", autocomplete: "off" });
  const send = h("button", { type: "submit" }, "Send");
  const stop = h("button", { type: "button", class: "secondary", disabled: true }, "Stop");
  const go = () => {
    const p = new URLSearchParams({ resource: resIn.value, ...(threadSel.value ? { thread: threadSel.value } : {}) });
    location.hash = `#/chat/${enc64(agentSel.value)}?${p}`;
  };
  agentSel.addEventListener("change", go); threadSel.addEventListener("change", go); resIn.addEventListener("change", go);
  let thread = threadId;
  let running = null;
  stop.addEventListener("click", () => running?.abort());
  const form = h("form", { class: "chat-form", onsubmit: async (ev) => {
    ev.preventDefault();
    const text = input.value.trim();
    if (!text || running) return;
    if (!thread) thread = `console-${new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14)}`;
    input.value = "";
    log.append(h("div", { class: "msg user" }, h("span", { class: "who" }, "you"), h("div", { class: "text" }, text)));
    const box = h("div", { class: "msg assistant", "data-testid": "reply" }, h("span", { class: "who" }, agentSel.value));
    log.append(box);
    const view = new ChunkView(box);
    running = new AbortController();
    page.abort.signal.addEventListener("abort", () => running?.abort());
    send.disabled = true; stop.disabled = false;
    try {
      const req = { agentId: agentSel.value, prompt: text, options: { memory: { resource: resIn.value, threadId: thread } } };
      for await (const r of stream("AgentService/Stream", req, running.signal)) for (const c of r.chunks || []) view.add(c);
    } catch (e) {
      if (e.name !== "AbortError") box.append(errorBox(e)); else view.line("muted", "stopped");
    } finally {
      running = null; send.disabled = false; stop.disabled = true;
    }
    if (view.runId) {
      box.append(h("div", { class: "event" }, link(`#/runs/${enc64(resIn.value)}/${enc64(thread)}/${enc64(view.runId)}`, "Run details"), " · ",
        link(`#/threads/${enc64(resIn.value)}/${enc64(thread)}`, "Thread")));
    }
    if (!threadSel.value) {
      threadSel.replaceChildren(...await threadOptions(resIn.value, thread));
      history.replaceState(null, "", `#/chat/${enc64(agentSel.value)}?${new URLSearchParams({ resource: resIn.value, thread })}`);
    }
    input.focus();
  } }, input, send, stop);
  render("Chat",
    h("div", { class: "row" }, h("label", {}, "Agent", agentSel), h("label", {}, "Resource", resIn), h("label", {}, "Thread", threadSel)),
    log, form);
  if (threadId) {
    try {
      const { messages = [] } = await call("ThreadService/ListMessages", { resourceId: resource, threadId, pageSize: 100 });
      log.prepend(...messages.map(messageView));
    } catch (e) { log.prepend(errorBox(e)); }
  }
  input.focus();
}

async function threadsPage(q) {
  const resource = q.get("resource") || "console";
  const resIn = h("input", { id: "threads-resource", value: resource });
  const form = h("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); location.hash = `#/threads?resource=${enc64(resIn.value)}`; } },
    h("label", {}, "Resource", resIn), h("button", { type: "submit" }, "List"));
  render("Threads", form, h("p", { class: "muted" }, "Loading…"));
  try {
    const { threads = [] } = await call("ThreadService/ListThreads", { resourceId: resource, pageSize: 200 });
    render("Threads", form, table(`Threads of ${resource}`, ["Thread", "Title", "Updated"],
      threads.map((t) => [link(`#/threads/${enc64(resource)}/${enc64(t.id)}`, t.id), t.title || "", t.updateTime || ""])));
  } catch (e) { render("Threads", form, errorBox(e)); }
}

function runRows(resource, threadId, runs) {
  return runs.map((r) => [link(`#/runs/${enc64(resource)}/${enc64(threadId)}/${enc64(r.id)}`, r.id), r.agentId,
    h("span", { class: `badge ${short(r.status)}` }, short(r.status)), short(r.finishReason), usageText(r.usage), r.startTime || ""]);
}

async function threadPage(resource, threadId) {
  const title = `Thread ${threadId}`;
  render(title, h("p", { class: "muted" }, "Loading…"));
  const [{ messages = [] }, { runs = [] }, { agents = [] }] = await Promise.all([
    call("ThreadService/ListMessages", { resourceId: resource, threadId, pageSize: 200 }),
    call("ThreadService/ListRuns", { resourceId: resource, threadId, pageSize: 100 }),
    call("AgentService/ListAgents", { pageSize: 200 })]);
  const active = h("p", { class: "muted", "data-testid": "active" }, "connecting…");
  const list = h("div", { "data-testid": "messages" }, messages.map(messageView));
  const live = h("div", { class: "log", "aria-live": "polite", "data-testid": "live" });
  const agentId = runs[runs.length - 1]?.agentId || agents[0]?.id || "";
  const agentSel = h("select", { id: "thread-agent" }, agents.map((a) => h("option", { value: a.id, selected: a.id === agentId }, a.id)));
  const text = h("input", { id: "thread-text", placeholder: "Contents", "aria-label": "Contents", autocomplete: "off" });
  const kind = h("select", { id: "thread-kind", "aria-label": "Send as" },
    ["message", "signal: reactive", "signal: user", "signal: notification"].map((k) => h("option", { value: k }, k)));
  const result = h("p", { class: "muted", role: "status" });
  const send = h("form", { class: "row", onsubmit: async (ev) => {
    ev.preventDefault();
    const base = { agentId: agentSel.value, resourceId: resource, threadId };
    try {
      const r = kind.value === "message"
        ? await call("ThreadService/SendMessage", { ...base, message: { contents: text.value } })
        : await call("ThreadService/SendSignal", { ...base, signal: { type: kind.value.split(": ")[1], contents: text.value } });
      result.textContent = `sent: ${short(r.accepted?.action)}${r.accepted?.runId ? ` (run ${r.accepted.runId})` : ""}`;
      text.value = "";
    } catch (e) { result.replaceChildren(errorBox(e)); }
  } }, h("label", {}, "Agent", agentSel), h("label", {}, "Send", kind), h("label", { style: "flex:1" }, "Contents", text), h("button", { type: "submit" }, "Send"));
  const runsBox = h("div", {}, table("Runs", ["Run", "Agent", "Status", "Finish", "Usage", "Started"], runRows(resource, threadId, runs)));
  render(title, h("p", { class: "muted" }, `resource ${resource} · `, link(`#/chat/${enc64(agentId)}?${new URLSearchParams({ resource, thread: threadId })}`, "continue in chat")),
    h("h2", {}, "Messages"), list, h("h2", {}, "Live"), active, live, send, result, h("h2", {}, "Runs"), runsBox);
  subscribe(resource, threadId, active, live, list, runsBox);
}

async function subscribe(resource, threadId, active, live, list, runsBox) {
  const views = new Map();
  try {
    for await (const r of stream("ThreadService/SubscribeToThread", { resourceId: resource, threadId }, page.abort.signal)) {
      for (const m of r.messages || []) list.append(messageView(m));
      for (const c of r.chunks || []) {
        let view = views.get(c.runId);
        if (!view) {
          view = new ChunkView(h("div", { class: "msg assistant" }, h("span", { class: "who" }, `run ${c.runId}`)));
          views.set(c.runId, view); live.append(view.box);
        }
        view.add(c);
      }
      if (r.activeRun) {
        const id = r.activeRun.runId;
        active.textContent = id ? `running: ${id} (${r.activeRun.agentId})` : "idle";
        if (!id) {
          const [{ messages = [] }, { runs = [] }] = await Promise.all([
            call("ThreadService/ListMessages", { resourceId: resource, threadId, pageSize: 200 }),
            call("ThreadService/ListRuns", { resourceId: resource, threadId, pageSize: 100 })]);
          list.replaceChildren(...messages.map(messageView));
          runsBox.replaceChildren(table("Runs", ["Run", "Agent", "Status", "Finish", "Usage", "Started"], runRows(resource, threadId, runs)));
        }
      }
    }
  } catch (e) {
    if (e.name !== "AbortError") active.replaceChildren(errorBox(e));
  }
}

async function runsPage(q) {
  const resource = q.get("resource") || "console";
  const thread = q.get("thread") || "";
  const resIn = h("input", { id: "runs-resource", value: resource });
  const threadIn = h("input", { id: "runs-thread", value: thread });
  const form = h("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); location.hash = `#/runs?${new URLSearchParams({ resource: resIn.value, thread: threadIn.value })}`; } },
    h("label", {}, "Resource", resIn), h("label", {}, "Thread", threadIn), h("button", { type: "submit" }, "List runs"));
  if (!thread) { render("Runs", form, h("p", { class: "muted" }, "Runs are kept per memory thread: give its resource and thread.")); return; }
  try {
    const { runs = [] } = await call("ThreadService/ListRuns", { resourceId: resource, threadId: thread, pageSize: 100 });
    render("Runs", form, table(`Runs of ${thread}`, ["Run", "Agent", "Status", "Finish", "Usage", "Started"], runRows(resource, thread, runs)));
  } catch (e) { render("Runs", form, errorBox(e)); }
}

async function scoresPage(q) {
  const agent = q.get("agent") || ""; const scorer = q.get("scorer") || ""; const run = q.get("run") || "";
  const { agents = [] } = await call("AgentService/ListAgents", { pageSize: 200 });
  const agentSel = h("select", { id: "scores-agent" }, h("option", { value: "" }, "any"),
    agents.map((a) => h("option", { value: a.id, selected: a.id === agent }, a.id)));
  const scorerIn = h("input", { id: "scores-scorer", value: scorer, size: 14 });
  const runIn = h("input", { id: "scores-run", value: run, size: 20 });
  const form = h("form", { class: "row", onsubmit: (ev) => {
    ev.preventDefault();
    const p = Object.entries({ agent: agentSel.value, scorer: scorerIn.value.trim(), run: runIn.value.trim() }).filter(([, v]) => v);
    location.hash = `#/scores?${new URLSearchParams(p)}`;
  } }, h("label", {}, "Agent", agentSel), h("label", {}, "Scorer", scorerIn), h("label", {}, "Run", runIn), h("button", { type: "submit" }, "Show"));
  render("Scores", form, h("p", { class: "muted" }, "Loading…"));
  const filter = { agentId: agent, scorerId: scorer };
  let aggNode; let listNode;
  try {
    const { aggregates = [] } = await call("ScoreService/AggregateScores", { ...filter, buckets: 10 });
    aggNode = table(run ? "Per scorer and agent version (all runs of the filter, not only this run)" : "Per scorer and agent version",
      ["Agent", "Scorer", "Version", "Count", "Mean", "Min – max", "Distribution over [0, 1]"],
      aggregates.map((a) => [a.agentId, a.scorerId, a.agentVersion || "none", String(a.count || 0),
        h("span", { "data-testid": "mean" }, (a.mean || 0).toFixed(3)), `${(a.min || 0).toFixed(2)} – ${(a.max || 0).toFixed(2)}`, bars(a.distribution || [])]));
  } catch (e) { aggNode = errorBox(e); }
  try {
    const r = await call("ScoreService/ListScores", { ...filter, runId: run, pageSize: 100 });
    const scores = r.scores || [];
    listNode = [table(`Scores, newest first${r.nextPageToken ? " (the latest 100)" : ""}`, ["Run", "Scorer", "Agent", "Version", "Score", "Reason", "Source", "Stored"],
      scores.map((x) => [x.threadId ? link(`#/runs/${enc64(x.resourceId)}/${enc64(x.threadId)}/${enc64(x.runId)}`, x.runId) : x.runId,
        x.scorerId, x.agentId, x.agentVersion || "", h("span", { "data-testid": "score" }, (x.score || 0).toFixed(2)), x.reason || "",
        short(x.source), when(x.createTime)]))];
  } catch (e) { listNode = [errorBox(e)]; }
  render("Scores", form, h("h2", {}, "Aggregates"), aggNode, h("h2", {}, run ? `Scores of run ${run}` : "Scores"), ...listNode);
}

async function voicePage(agentId) {
  const { agents = [] } = await call("AgentService/ListAgents", { pageSize: 200 });
  const voiced = agents.filter((a) => a.voice);
  if (!voiced.length) { render("Voice", h("p", { class: "muted" }, "No agent here has a voice.")); return; }
  agentId = agentId && voiced.some((a) => a.id === agentId) ? agentId : voiced[0].id;
  const agentSel = h("select", { id: "voice-agent", onchange: () => { location.hash = `#/voice/${enc64(agentSel.value)}`; } },
    voiced.map((a) => h("option", { value: a.id, selected: a.id === agentId }, a.id)));
  const [speakers, listener] = await Promise.all([
    call("VoiceService/GetSpeakers", { agentId }).then((r) => r.speakers || [], (e) => e),
    call("VoiceService/GetListener", { agentId }).then((r) => !!r.enabled, (e) => e)]);
  const speakerSel = h("select", { id: "voice-speaker" }, h("option", { value: "" }, "default"),
    (Array.isArray(speakers) ? speakers : []).map((sp) => h("option", { value: sp.voiceId }, sp.voiceId)));
  const text = h("textarea", { id: "voice-text", rows: 3, "aria-label": "Text to speak" }, "Hello from Treadle.");
  const out = h("div", { "aria-live": "polite", "data-testid": "speech" });
  const button = h("button", { type: "submit" }, "Speak");
  const form = h("form", { onsubmit: async (ev) => {
    ev.preventDefault();
    button.disabled = true;
    const pieces = []; const said = h("ol", { class: "said" });
    out.replaceChildren(h("p", { class: "muted" }, "speaking…"), said);
    let format = null;
    try {
      const req = { agentId, text: text.value, speaker: speakerSel.value, format: { encoding: "AUDIO_ENCODING_WAV" } };
      for await (const r of stream("VoiceService/Speak", req, page.abort.signal)) {
        if (r.audio) pieces.push(Uint8Array.from(atob(r.audio), (c) => c.charCodeAt(0)));
        if (r.text) said.append(h("li", {}, r.text));
        format = r.format || format;
      }
      const wav = finishWav(pieces);
      const audio = h("audio", { controls: true, src: URL.createObjectURL(new Blob([wav], { type: "audio/wav" })), "data-testid": "audio" });
      out.replaceChildren(audio, h("p", { class: "muted", "data-testid": "speech-info" },
        `${wav.length} bytes of WAV · ${format?.sampleRateHertz || "?"} Hz · ${said.children.length} sentence(s)`), said);
      audio.play().catch(() => { /* the page may not play sound yet: the controls do */ });
    } catch (e) { out.replaceChildren(errorBox(e)); }
    button.disabled = false;
  } }, h("div", { class: "row" }, h("label", {}, "Speaker", speakerSel)), h("label", { class: "block" }, "Text", text), h("div", { class: "row" }, button));
  render("Voice",
    h("div", { class: "row" }, h("label", {}, "Agent", agentSel)),
    h("dl", { class: "kv" }, h("dt", {}, "Listens"), h("dd", { "data-testid": "listener" }, listener instanceof Error ? errorBox(listener)
      : listener ? "yes (an input or realtime provider)" : "no (no input provider)"),
    h("dt", {}, "Speakers"), h("dd", { "data-testid": "speakers" }, speakers instanceof Error ? errorBox(speakers) : `${speakers.length}`)),
    h("h2", {}, "Speak"), form, out);
}

// Speak's WAV header carries the streaming placeholder sizes (0xFFFFFFFF); a complete file gets
// its real RIFF and data sizes so that every browser plays it.
export function finishWav(pieces) {
  const wav = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0; for (const p of pieces) { wav.set(p, at); at += p.length; }
  if (wav.length < 12 || dec.decode(wav.subarray(0, 4)) !== "RIFF") return wav;
  const view = new DataView(wav.buffer);
  view.setUint32(4, wav.length - 8, true);
  for (let i = 12; i + 8 <= wav.length;) {
    const id = dec.decode(wav.subarray(i, i + 4));
    if (id === "data") { view.setUint32(i + 4, wav.length - i - 8, true); break; }
    i += 8 + view.getUint32(i + 4, true) + (view.getUint32(i + 4, true) & 1);
  }
  return wav;
}

function bars(counts) {
  const top = Math.max(1, ...counts.map(Number));
  const n = counts.length || 1;
  return h("div", { class: "bars", role: "img", "data-testid": "distribution",
    "aria-label": counts.map((c, i) => `${(i / n).toFixed(1)}–${((i + 1) / n).toFixed(1)}: ${c}`).join(", ") },
  counts.map((c, i) => h("span", { class: "bar", title: `${(i / n).toFixed(1)}–${((i + 1) / n).toFixed(1)}: ${c}`, style: `height:${Math.round((Number(c) / top) * 100)}%` })));
}

const ms = (d) => d ? `${(parseFloat(d) * 1000).toFixed(1)} ms` : "";
const span_ms = (a, b) => `${(Number(BigInt(b) - BigInt(a)) / 1e6).toFixed(1)} ms`;

async function runPage(resource, threadId, runId) {
  const title = `Run ${runId}`;
  render(title, h("p", { class: "muted" }, "Loading…"));
  let run = null; let token = "";
  for (let i = 0; i < 20 && !run; i++) {
    const r = await call("ThreadService/ListRuns", { resourceId: resource, threadId, pageSize: 100, pageToken: token });
    run = (r.runs || []).find((x) => x.id === runId) || null;
    token = r.nextPageToken; if (!token) break;
  }
  if (!run) { render(title, errorBox(new RpcError("not_found", `no run ${runId} in thread ${threadId}`))); return; }
  const kv = (pairs) => h("dl", { class: "kv" }, pairs.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  const outcomes = (o) => Object.entries(o || {}).map(([k, v]) => `${k} ${v}`).join(", ");
  let spansNode;
  try {
    const { spans = [] } = await call("ConsoleService/ListSpans", { runId });
    spansNode = spans.length ? waterfall(spans) : h("p", { class: "muted" }, "This server no longer keeps this run's spans (it keeps its latest runs').");
  } catch (e) { spansNode = errorBox(e); }
  render(title,
    kv([["Status", h("span", { class: `badge ${short(run.status)}`, "data-testid": "status" }, short(run.status))], ["Finish reason", short(run.finishReason)],
      ["Usage", usageText(run.usage)], ["Agent", link(`#/agents/${enc64(run.agentId)}`, run.agentId)],
      ["Version", h("span", { "data-testid": "run-version" }, run.agentVersionId ? `v${run.agentVersionNumber} (${run.agentVersionSelection || "published"})` : "the definition (no stored version)")],
      ["Model", h("span", { "data-testid": "run-model" }, run.resolvedModel || (run.steps || [])[0]?.model || "")],
      ["Variants", h("span", { "data-testid": "run-variants" }, [(run.matchedVariants || []).map((v) => `${snake(v.field || "")}[${v.index || 0}]`).join(", ") || "none",
        (run.resolverOverrides || []).length ? ` · resolver set ${run.resolverOverrides.join(", ")}` : ""].join(""))],
      ["Scores", link(`#/scores?${new URLSearchParams({ run: runId })}`, "this run's scores")],
      ["Thread", link(`#/threads/${enc64(resource)}/${enc64(threadId)}`, threadId)], ["Started", run.startTime || ""], ["Ended", run.endTime || ""]]),
    h("h2", {}, "Steps"), table("Steps", ["Step", "Model", "Finish", "Usage", "Started", "Ended"],
      (run.steps || []).map((s) => [String(s.number), s.model || "", s.finishReason || "", usageText(s.usage), s.startTime || "", s.endTime || ""])),
    h("h2", {}, "Processor hooks"), table("Hook invocations per step (step 0: before and after the steps)", ["Step", "Processor", "Hook", "Count", "Time", "Outcomes"],
      (run.hooks || []).map((x) => [String(x.step || 0), x.processorId, x.hook, String(x.count || 0), ms(x.totalDuration), outcomes(x.outcomes)])),
    h("h2", {}, "Trace"), spansNode);
}

function waterfall(spans) {
  const start = spans.reduce((m, s) => (BigInt(s.startUnixNano) < m ? BigInt(s.startUnixNano) : m), BigInt(spans[0].startUnixNano));
  const end = spans.reduce((m, s) => (BigInt(s.endUnixNano) > m ? BigInt(s.endUnixNano) : m), 0n);
  const total = Number(end - start) || 1;
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const depth = (s) => { let d = 0; let p = byId.get(s.parentSpanId); while (p && d < 20) { d++; p = byId.get(p.parentSpanId); } return d; };
  const kind = (s) => s.attributes?.["treadle.processor.hook"] ? "hook" : s.name.startsWith("chat ") ? "chat" : s.name.startsWith("execute_tool ") ? "tool" : "";
  // Parents before their children, siblings in start order.
  const kids = new Map();
  for (const s of spans) { const k = byId.has(s.parentSpanId) ? s.parentSpanId : ""; if (!kids.has(k)) kids.set(k, []); kids.get(k).push(s); }
  const order = []; const walk = (k) => { for (const s of kids.get(k) || []) { order.push(s); walk(s.spanId); } }; walk("");
  return h("div", { class: "waterfall", role: "list", "data-testid": "waterfall" }, order.map((s) => {
    const left = (Number(BigInt(s.startUnixNano) - start) / total) * 100;
    const width = (Number(BigInt(s.endUnixNano) - BigInt(s.startUnixNano)) / total) * 100;
    const dur = span_ms(s.startUnixNano, s.endUnixNano);
    const attrs = Object.entries(s.attributes || {}).map(([k, v]) => `${k}=${json(v)}`).join("\n");
    return h("div", { class: "wf-row", role: "listitem", "data-kind": kind(s) || "span" },
      h("div", { class: "wf-name", style: `padding-left:${depth(s) * 12}px`, title: `${s.name} · ${dur}\n${attrs}` }, `${s.name} `, h("span", { class: "muted" }, dur)),
      h("div", { class: "wf-track" }, h("div", { class: `wf-bar ${kind(s)} ${s.status === "ERROR" ? "error" : ""}`, style: `left:${left.toFixed(2)}%;width:${Math.max(width, 0.2).toFixed(2)}%` })));
  }));
}

async function processorsPage() {
  const box = h("div", { "aria-live": "polite" });
  render("Processors & tools", h("p", { class: "muted" }, "Attached replicas, refreshed every second."), box);
  const refresh = async () => {
    try {
      const r = await call("ConsoleService/ListReplicas");
      box.replaceChildren(
        h("h2", {}, "Processor replicas"),
        table("Attached processor streams", ["Processor", "Instance", "Health", "Ejected for", "Ejections", "Failures in a row", "Pending", "Hooks"],
          (r.processors || []).map((p) => [p.processorId, p.instanceId, h("span", { class: `badge ${p.health}`, "data-testid": "health" }, p.health),
            p.ejectedForSeconds ? `${p.ejectedForSeconds.toFixed(1)} s` : "", String(p.ejections || 0), String(p.consecutiveFailures || 0),
            String(p.pending || 0), (p.hooks || []).join(", ")])),
        h("h2", {}, "Hook latency"),
        table("Answered invocations since the server started", ["Processor", "Hook", "Count", "Mean", "Max", "Timeouts", "Errors"],
          (r.hookLatency || []).map((x) => [x.processorId, x.hook, String(x.count || 0), `${(x.meanMs || 0).toFixed(1)} ms`,
            `${(x.maxMs || 0).toFixed(1)} ms`, String(x.timeouts || 0), String(x.errors || 0)])),
        h("h2", {}, "Tool replicas"),
        table("Attached tool streams", ["Tool", "Instance", "Pending"], (r.tools || []).map((t) => [t.toolName, t.instanceId, String(t.pending || 0)])));
    } catch (e) { box.replaceChildren(errorBox(e)); }
  };
  await refresh();
  page.timers.push(setInterval(refresh, 1000));
}

// --- routing -----------------------------------------------------------------------------------

async function route() {
  page.abort.abort(); page.timers.forEach(clearInterval);
  page = { abort: new AbortController(), timers: [] };
  const [path, query] = (location.hash.slice(1) || "/agents").split("?");
  const q = new URLSearchParams(query || "");
  const seg = path.split("/").filter(Boolean).map(decodeURIComponent);
  for (const a of document.querySelectorAll("nav a")) {
    if (a.getAttribute("href") === `#/${seg[0] || "agents"}`) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  try {
    switch (seg[0] || "agents") {
      case "agents": await (seg[1] ? agentPage(seg[1]) : agentsPage()); break;
      case "chat": await chatPage(seg[1], q); break;
      case "threads": await (seg[2] ? threadPage(seg[1], seg[2]) : threadsPage(q)); break;
      case "runs": await (seg[3] ? runPage(seg[1], seg[2], seg[3]) : runsPage(q)); break;
      case "scores": await scoresPage(q); break;
      case "voice": await voicePage(seg[1]); break;
      case "processors": await processorsPage(); break;
      default: render("Not found", h("p", {}, "No such page."));
    }
  } catch (e) {
    main().replaceChildren(h("h1", {}, "Error"), errorBox(e));
  }
}

document.getElementById("token").value = sessionStorage.getItem("treadle.token") || "";
document.getElementById("token-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  sessionStorage.setItem("treadle.token", document.getElementById("token").value.trim());
  route();
});
window.addEventListener("hashchange", () => { route().then(() => { if (!document.activeElement || document.activeElement === document.body) main().focus(); }); });
route();
