// The TypeScript agent client's CRUD calls against a server, as the Python client's test makes
// them; prints one JSON report for the test to check.
//
//     tsx tests/remote/ts/agent_crud.ts TARGET
import { AgentClient, AgentSchema, AgentSource, Code, ConnectError, create } from "@treadle/client";

const client = new AgentClient(process.argv[2]);
const created = await client.createAgent({ id: "echo", name: "Echo", model: "openai/gpt-4o-mini" });
for (let i = 0; i < 3; i++) await client.createAgent(create(AgentSchema, { id: `more-${i}`, model: "openai/gpt-4o-mini" }));
const listed = (await client.listAgents({ pageSize: 1 })).map((a) => a.id); // four pages
const updated = await client.updateAgent({ id: "echo", name: "Echo v2" }, { updateMask: ["name"] });
const fetched = await client.getAgent("echo");
await client.deleteAgent("echo");
const missing = await client.getAgent("echo").then(() => "found", (e: unknown) => Code[ConnectError.from(e).code]);
const bad = await client.createAgent({ id: "", model: "openai/gpt-4o-mini" }).then(() => "created", (e: unknown) => Code[ConnectError.from(e).code]);
const after = (await client.listAgents()).map((a) => a.id);
console.log(JSON.stringify({
  createdFromApi: created.source === AgentSource.API, listed, updated: [updated.name, updated.model], fetched: fetched.name,
  missing, bad, after,
}));
