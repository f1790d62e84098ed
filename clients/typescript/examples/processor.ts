import { attach, type Processor, type ProcessInputArgs } from "@treadle/client/processors";

class ContentFilter implements Processor {
  id = "content-filter";
  async processInput({ messages, abort }: ProcessInputArgs) {
    const text = messages.flatMap((m) => m.content.parts).map((p) => (p.type === "text" ? p.text : ""));
    if (text.join(" ").includes("secret")) abort("Blocked content detected in input");
    return messages;
  }
}
const handle = attach({ target: process.env.TREADLE_TARGET ?? "127.0.0.1:50051", processors: [new ContentFilter()] });
process.once("SIGTERM", () => handle.close());
