// The TypeScript SDK's client (1.x) calling tools as 2025-11-25 tasks with callToolStream:
// node task_client.mjs SDK_DIR URL — prints one JSON line per stream message.
const [sdk, url] = process.argv.slice(2);
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const { CallToolResultSchema, ElicitRequestSchema } = await import(`${sdk}/dist/esm/types.js`);

const client = new Client(
  { name: "ts-task-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async () => ({
  action: "accept",
  content: { name: "Ada" },
}));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
for (const [name, args] of [["slow", { seconds: 0.2 }], ["ask", {}]]) {
  const stream = client.experimental.tasks.callToolStream(
    { name, arguments: args }, CallToolResultSchema, { task: { ttl: 60000 } },
  );
  for await (const message of stream) {
    const line = { tool: name, type: message.type };
    if (message.task) line.status = message.task.status;
    if (message.result) line.text = message.result.content?.[0]?.text;
    if (message.error) line.error = String(message.error);
    console.log(JSON.stringify(line));
  }
}
await client.close();
