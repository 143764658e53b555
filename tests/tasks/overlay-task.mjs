// x-mcp-task through an Overlay on a real spec (#38), checked with the official Tasks extension
// client: OpenAI's createResponse (tests/tasks/overlays/openai-responses-task.yaml) against a slow
// stand-in on 127.0.0.1 is an immediate execution without the overlay and a task, settled
// completed with the API's answer, with it. Run by tests/tasks/run.sh (CI) when the shared specs are present.
// Usage (from the SDK install dir, e.g. target/ts-client): OPENAI_API_KEY=sk-test node overlay-task.mjs BIN
//   ../shared/specs/openai-api-3.1.yaml tests/tasks/overlays/openai-responses-task.yaml
import { spawn } from 'node:child_process';
import http from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
const MODERN = '2026-07-28', CI = { name: 'overlay-check', version: '0' };
const [bin, spec, overlay] = process.argv.slice(2);
const api = http.createServer((req, res) => { req.resume(); req.on('end', () => setTimeout(() => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'resp_1', object: 'response', status: 'completed', output: [] })); }, 1500)); });
await new Promise((r) => api.listen(0, '127.0.0.1', r));
async function run(extra) {
  const child = spawn(bin, ['proxy', spec, '--base-url', `http://127.0.0.1:${api.address().port}`, '--tasks',
    '--transport', 'http', '--listen', '127.0.0.1:0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, RUST_LOG: 'warn' } });
  let log = '';
  const url = await new Promise((res, rej) => { child.stderr.on('data', (c) => { log += c; const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(log); if (m) res(m[1]); }); child.on('exit', () => rej(new Error(log))); });
  const client = new Client(CI, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  let n = 0;
  const s = createTaskSessionFromClient(client, { endpointId: 'x', v2RequestFraming: { protocolVersion: MODERN, clientInfo: CI, clientCapabilities: {} },
    rawDispatch: async (u, o) => { const h = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': u.method, ...(u.params?.name ?? u.params?.taskId ? { 'mcp-name': String(u.params?.name ?? u.params?.taskId) } : {}), }); for (const [k, v] of Object.entries(o?.context?.headers ?? {})) h.set(k, v); const r = await fetch(url, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: ++n, ...u }) }); const t = await r.text(); if (process.env.TRACE) console.log("<<", u.method, t.slice(0, 400)); if ((r.headers.get('content-type') ?? '').startsWith('text/event-stream')) { const m = t.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5))).filter((m) => m.id !== undefined); return m.at(-1); } return JSON.parse(t); } });
  const ex = await s.callTool('openai_create_response', {});
  const out = (await ex.settle()).outcome;
  console.log(`${extra.join(' ') || '(no overlay)'}: kind=${ex.kind} status=${out.status} text=${JSON.stringify(out.result?.content?.[0]?.text ?? '').slice(0, 80)} outcome=${JSON.stringify(out).slice(0,600)} log-warnings=${JSON.stringify(log.split('\n').filter((l) => /x-mcp-task|overlay/i.test(l)))}`);
  await client.close(); child.kill();
  return { kind: ex.kind, status: out.status };
}
const plain = await run([]);
const marked = await run(['--overlay', overlay]);
api.close();
const ok = plain.kind === 'immediate' && marked.kind === 'task' && marked.status === 'completed';
console.log(ok ? 'overlay-task: passed' : 'overlay-task: FAILED');
process.exit(ok ? 0 : 1);
