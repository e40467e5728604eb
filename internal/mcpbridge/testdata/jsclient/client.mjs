// A scripted MCP client on the official TypeScript SDK, used by
// TestRealClient (internal/mcpbridge/jsclient_test.go). It starts the
// bridge as a child process over stdio, lists the tools, makes the calls of
// the plan given as JSON in argv[2] ({command, args, env, calls: [{name,
// arguments}]}), and prints what it saw as one JSON object on stdout.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const plan = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args ?? [],
  env: plan.env ?? {},
  stderr: 'inherit',
});
const client = new Client({ name: 'svc-mcp-jsclient', version: '1.0.0' });
await client.connect(transport);

const listed = await client.listTools();
const out = {
  server: client.getServerVersion(),
  tools: listed.tools.map((t) => ({
    name: t.name,
    annotations: t.annotations ?? null,
    required: t.inputSchema.required ?? [],
  })),
  calls: [],
};
for (const c of plan.calls ?? []) {
  const r = await client.callTool({ name: c.name, arguments: c.arguments ?? {} });
  out.calls.push({
    name: c.name,
    isError: r.isError === true,
    texts: r.content.map((x) => x.text),
    structured: r.structuredContent ?? null,
  });
}
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
