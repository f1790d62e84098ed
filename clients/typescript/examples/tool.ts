import { createTool, serveTools } from "@treadle/client/tools";

const weather = createTool({
  name: "weather",
  description: "The weather in a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: async ({ city }: { city: string }) => ({ city, forecast: "sunny", celsius: 21 }),
});
const handle = serveTools({ target: process.env.TREADLE_TARGET ?? "127.0.0.1:50051", tools: [weather] });
process.once("SIGTERM", () => handle.close());
