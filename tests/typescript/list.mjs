// Lists the tools of each spec through the official TypeScript MCP SDK client over stdio, as
// Claude Desktop, Claude Code and Cursor do: the client compiles every outputSchema with Ajv
// (one it cannot compile fails the whole list) and closes the connection on any stdio message
// over its 10 MiB buffer. Prints one line per spec; exit 1 when any spec fails.
//
// Usage: node list.mjs BIN SPEC... (EXTRA="--output-schema strict" adds proxy options)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [bin, ...specs] = process.argv.slice(2);
// Ajv warns on each format it does not know (uint64, ...); those are not failures.
console.warn = () => {};
const extra = (process.env.EXTRA || '').split(' ').filter(Boolean);
let failed = 0;
let tools = 0;
for (const spec of specs) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ['proxy', spec, '--base-url', 'http://127.0.0.1:9', ...extra],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'openapi-mcp-ts-check', version: '0' });
  const started = Date.now();
  try {
    await client.connect(transport);
    let cursor;
    let n = 0;
    let pages = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      n += page.tools.length;
      pages += 1;
      cursor = page.nextCursor;
    } while (cursor);
    tools += n;
    console.log(`ok   ${spec}: ${n} tools in ${pages} page(s), ${Date.now() - started} ms`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${spec}: ${String(e?.message ?? e).slice(0, 400)}`);
  } finally {
    await client.close().catch(() => {});
  }
}
console.log(`typescript sdk: ${specs.length} specs, ${failed} failed, ${tools} tools listed`);
process.exit(failed ? 1 : 0);
