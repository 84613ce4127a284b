// A real MCP client, the official TypeScript SDK's, for the serve package's
// end-to-end test. It connects over stdio (starting the server command) or
// streamable HTTP, lists the tools, calls the ones given in OKF_CALLS, reads
// the manifest resource, and prints what it saw as one JSON object.
//
//   node client.mjs stdio <command> [args...]
//   OKF_TOKEN=... node client.mjs http <url>
//
// OKF_CALLS is a JSON array of {"tool": name, "arguments": {...}}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...args] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args, stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.OKF_TOKEN}` } },
  });
} else {
  console.error("usage: client.mjs stdio <command> [args...] | client.mjs http <url>");
  process.exit(2);
}

const client = new Client({ name: "okf-e2e", version: "1.0.0" });
await client.connect(transport);
const report = { server: client.getServerVersion(), tools: [], calls: [] };
const { tools } = await client.listTools();
report.tools = tools.map((t) => ({
  name: t.name,
  readOnly: t.annotations?.readOnlyHint === true,
  description: t.description,
}));
for (const c of JSON.parse(process.env.OKF_CALLS ?? "[]")) {
  const r = await client.callTool({ name: c.tool, arguments: c.arguments });
  report.calls.push({
    tool: c.tool,
    isError: r.isError === true,
    text: r.content.map((x) => x.text ?? "").join(""),
  });
}
const { contents } = await client.readResource({ uri: "okf://manifest" });
report.resource = contents[0];
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
