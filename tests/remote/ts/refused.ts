// A processor the server refuses (its id is malformed): prints what `ready()` reports and how
// many streams were opened once it has.
//
//     tsx tests/remote/ts/refused.ts TARGET
import { AttachError, attach } from "@treadle/client/processors";

const target = process.argv[2]!;
const handle = attach({ target, processors: [{ id: "bad id!", processInput() {} }], backoff: [10, 20] });
const outcome = await handle.ready(30_000).then(() => ({ attached: true }), (e: unknown) =>
  e instanceof AttachError ? { code: e.code, details: e.details } : { error: String(e) });
console.log(JSON.stringify({ ...outcome, streams: handle.streamsOpened(target) }));
await handle.close();
