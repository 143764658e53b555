// MCP tasks (the io.modelcontextprotocol/tasks extension, SEP-2663; #38) with the official
// requester, @modelcontextprotocol/ext-tasks, over @modelcontextprotocol/client 2.x pinned to
// 2026-07-28 and Streamable HTTP: `openapi-mcp proxy --tasks` in front of a job API
// (tests/conformance/tasks-upstream.mjs, tests/conformance/tasks.yaml) whose operations answer
// 202 Accepted with a Location to poll:
//   - a synchronous tool answers at once (an immediate execution);
//   - slow_compute is a task settled to its result; failing_job a task completed with isError;
//   - a cancelled task settles cancelled, and the API's DELETE was called;
//   - a task started on one instance is resumed from its serialized reference by a new client
//     session on a second instance that shares the first one's SQLite task store.
// The package's 2026-07-28 path needs a raw dispatch (the SDK's codecs reject V2 task results):
// here it is a plain fetch of the same endpoint with the SEP-2243 headers.
//
// Usage: node tasks.mjs OPENAPI_MCP_BIN UPSTREAM_MJS SPEC
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const MODERN = '2026-07-28';
const CLIENT_INFO = { name: 'openapi-mcp-ts-tasks-check', version: '0' };
const [bin, upstreamScript, spec] = process.argv.slice(2);
if (!bin || !upstreamScript || !spec) {
  console.error('usage: node tasks.mjs OPENAPI_MCP_BIN UPSTREAM_MJS SPEC');
  process.exit(2);
}

let failures = 0;
function check(cond, what) {
  if (cond) {
    console.log(`  ok: ${what}`);
  } else {
    failures += 1;
    console.log(`  FAIL: ${what}`);
  }
}

// Spawns `command args` and resolves with the first match of `pattern` in its output.
function startUntil(command, args, env, stream, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, RUST_LOG: 'warn', ...env },
      stdio: ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', stream === 'stderr' ? 'pipe' : 'ignore'],
    });
    let log = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no ${pattern} from ${command} in 30 s: ${log}`));
    }, 30000);
    const out = stream === 'stdout' ? child.stdout : child.stderr;
    out.setEncoding('utf8');
    out.on('data', (chunk) => {
      if (log.length < 65536) log += chunk;
      const m = pattern.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}): ${log}`));
    });
  });
}

// The raw 2026-07-28 request path of the ext-tasks session (the host's request coordinator):
// frame the request (jsonrpc, an id of ours), POST it to the MCP endpoint with Mcp-Method /
// Mcp-Name, and read its response (JSON, or the last message of an SSE stream).
let nextId = 0;
function rawDispatchTo(url) {
  return async (unframed, options) => {
    const request = { jsonrpc: '2.0', id: `raw-${++nextId}`, ...unframed };
    const params = request.params ?? {};
    const name = params.name ?? params.taskId ?? params.uri;
    // Headers the session asks for (it sends Mcp-Name on tasks/*) replace ours, whatever their case.
    const headers = new Headers({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': request.method,
      ...(name === undefined ? {} : { 'mcp-name': String(name) }),
    });
    for (const [k, v] of Object.entries(options?.context?.headers ?? {})) headers.set(k, v);
    const resp = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request), signal: options?.signal });
    const text = await resp.text();
    if ((resp.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const messages = text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .filter((d) => d)
        .map((d) => JSON.parse(d))
        .filter((m) => m.id !== undefined);
      return messages[messages.length - 1];
    }
    return JSON.parse(text);
  };
}

// The user's answers to input requests (the --confirm question inside a task), in order.
const answers = [];
const asked = [];
async function session(url) {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const s = createTaskSessionFromClient(client, {
    endpointId: 'openapi-mcp-tasks-check',
    rawDispatch: rawDispatchTo(url),
    v2RequestFraming: {
      protocolVersion: MODERN,
      clientInfo: CLIENT_INFO,
      clientCapabilities: { elicitation: { form: {} } },
    },
    onInputRequest: async (request) => {
      asked.push(request);
      return answers.shift() ?? { action: 'cancel' };
    },
  });
  return { client, session: s };
}

function text(result) {
  return (result?.content ?? []).map((c) => c.text ?? '').join('\n');
}

const dir = mkdtempSync(join(tmpdir(), 'openapi-mcp-ts-tasks-'));
const children = [];
try {
  const up = await startUntil(process.execPath, [upstreamScript], {}, 'stdout', /(http:\/\/127\.0\.0\.1:\d+\/api)/);
  children.push(up.child);
  const proxyArgs = [
    'proxy', spec, '--base-url', up.url, '--prefix', '', '--tasks', '--confirm', 'destructive',
    '--task-store', `sqlite:${join(dir, 'tasks.sqlite3')}`,
    '--transport', 'http', '--listen', '127.0.0.1:0',
  ];
  const env = { OPENAPI_MCP_STORE_KEY: 'a ts tasks check key of 32 bytes or more' };
  const a = await startUntil(bin, proxyArgs, env, 'stderr', /(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  children.push(a.child);
  const b = await startUntil(bin, proxyArgs, env, 'stderr', /(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  children.push(b.child);
  console.log(`[ext-tasks over @modelcontextprotocol/client, ${MODERN}, two instances sharing a SQLite task store]`);

  const onA = await session(a.url);
  const greet = await onA.session.callTool('greet', { name: 'ts' });
  check(greet.kind === 'immediate', `greet is an immediate execution (${greet.kind})`);
  const greeted = (await greet.settle()).outcome;
  check(greeted.status === 'completed' && text(greeted.result) === 'Hello, ts!', `greet answers: ${text(greeted.result)}`);

  const slow = await onA.session.callTool('slow_compute', { seconds: 2, label: 'ts' });
  check(slow.kind === 'task', `slow_compute is a task (${slow.kind})`);
  const done = (await slow.settle()).outcome;
  check(done.status === 'completed' && !done.result.isError && text(done.result).includes('computed ts'),
    `slow_compute settles completed with its result: ${done.status} ${text(done.result).slice(0, 120)}`);

  const failing = await onA.session.callTool('failing_job', {});
  const failed = (await failing.settle()).outcome;
  check(failed.status === 'completed' && failed.result.isError === true && text(failed.result).includes('the job failed'),
    `failing_job settles completed with isError: ${failed.status} ${failed.result?.isError}`);

  const long = await onA.session.callTool('slow_compute', { seconds: 60, label: 'cancel-me' });
  check(long.kind === 'task', 'a long slow_compute is a task');
  await long.cancel();
  const ctl = onA.session.task(long.handle.taskId);
  const view = await ctl.snapshot();
  check(view.status === 'cancelled', `after cancel the task is cancelled (${view.status})`);
  const seen = await (await fetch(`${up.url}/_requests`)).json();
  check(seen.some((r) => r.startsWith('DELETE /api/jobs/')), `the API's DELETE was called: ${seen.filter((r) => r.startsWith('DELETE'))}`);

  // --confirm inside a task: confirm_delete waits in input_required; the session's input
  // handler answers (tasks/update) and the DELETE is sent only on acceptance.
  answers.push({ action: 'decline' });
  const declined = (await (await onA.session.callTool('confirm_delete', { filename: 'keep.txt' })).settle()).outcome;
  check(declined.status === 'completed' && declined.result.isError === true && text(declined.result).includes('declined'),
    `a declined confirmation completes with isError: ${declined.status} ${text(declined.result).slice(0, 120)}`);
  answers.push({ action: 'accept', content: { confirm: true } });
  const del = await onA.session.callTool('confirm_delete', { filename: 'gone.txt' });
  check(del.kind === 'task', `confirm_delete is a task (${del.kind})`);
  const deleted = (await del.settle()).outcome;
  check(deleted.status === 'completed' && !deleted.result.isError,
    `an accepted confirmation sends the call and the task completes: ${deleted.status} ${text(deleted.result).slice(0, 120)}`);
  check(asked.length === 2 && asked.every((r) => r.kind === 'elicitation' && String(r.params?.message ?? '').includes('DELETE /files/')),
    `the user was asked twice, with the request in the question: ${JSON.stringify(asked.map((r) => r.params?.message))}`);
  const sent = await (await fetch(`${up.url}/_requests`)).json();
  const deletes = sent.filter((r) => r.startsWith('DELETE /api/files/'));
  check(deletes.length === 1 && deletes[0] === 'DELETE /api/files/gone.txt', `only the accepted DELETE was sent: ${deletes}`);

  // Started on A, resumed on B from its serialized reference (a reconnect to another replica).
  const moved = await onA.session.callTool('slow_compute', { seconds: 3, label: 'moved' });
  check(moved.kind === 'task', 'the task to move is a task');
  // The client goes away (its connection closes; it does not close its session, which would
  // cancel the tasks it still owns) after persisting the task's reference.
  let reference;
  await moved.handoff((r) => {
    reference = r;
  });
  await onA.client.close();
  const onB = await session(b.url);
  const resumed = await onB.session.resumeTask(reference);
  const end = (await resumed.settle()).outcome;
  check(end.status === 'completed' && text(end.result).includes('computed moved'),
    `instance B settles the task A started: ${end.status} ${text(end.result).slice(0, 120)}`);
  await onB.session.close();
  await onB.client.close();
} catch (e) {
  failures += 1;
  console.log(`  FAIL: ${e?.stack ?? e}`);
} finally {
  for (const c of children) c.kill();
  rmSync(dir, { recursive: true, force: true });
}
if (failures > 0) {
  console.log(`tasks: ${failures} FAILED`);
  process.exit(1);
}
console.log('tasks: all passed');
