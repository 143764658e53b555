// Lists a stdio MCP server's tools with the official TypeScript MCP SDK client (the one of
// Claude Desktop, Claude Code and Cursor), started the way a client configuration starts it:
// `"command": CMD, "args": [ARGS...]`. Prints one JSON line: the tool names and the time from
// spawning the command to the first tools/list page. Exit 1 on any failure.
//
// Usage: node list_tools.mjs CMD [ARGS...]   (CWD and env are the caller's)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [command, ...args] = process.argv.slice(2);
console.warn = () => {};
const transport = new StdioClientTransport({
  command,
  args,
  env: process.env,
  cwd: process.cwd(),
  stderr: 'inherit',
});
const client = new Client({ name: 'openapi-mcp-packaging-check', version: '0' });
const started = Date.now();
try {
  await client.connect(transport);
  const names = [];
  let cursor;
  let firstPageMs;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    firstPageMs ??= Date.now() - started;
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  console.log(JSON.stringify({ tools: names, first_list_ms: firstPageMs, server: client.getServerVersion() }));
  await client.close();
  process.exit(0);
} catch (e) {
  console.error(`list_tools: ${e?.stack ?? e}`);
  process.exit(1);
}
