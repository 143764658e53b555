// MCP tasks on several replicas (#38): three `openapi-mcp proxy --tasks --stateless` instances
// behind a real nginx (round robin, no stickiness), sharing a Redis task store (a real
// redis-server with a password), driven by the official requester of the Tasks extension,
// @modelcontextprotocol/ext-tasks, over @modelcontextprotocol/client 2.x pinned to 2026-07-28.
// The job API (below, in this process) records which instance sent each request (each proxy adds
// a static `X-Instance` header), so every check names the replica that did the work:
//   1. a task started through nginx; the instance that created it (its POST reached the API) is
//      killed (SIGKILL); a new client session resumes the task from its serialized reference
//      through nginx and settles it `completed` with the job's result: every status poll came
//      from a surviving instance;
//   2. a second task started through nginx is cancelled through an instance that did not create
//      it (nginx's /iN/ location pinned to that instance): the API's DELETE comes from that
//      instance, and a third path reads it back `cancelled`;
//   3. another caller (another Authorization) gets `task not found` (-32602) for it on any replica;
//   4. every Redis key expires, the keys hold no task id, the values no plain result, and no log
//      holds the Redis password.
// Everything listens on 127.0.0.1; nginx and redis-server run from a temporary directory, as
// children of this script, and are stopped (and the directory removed) at the end.
//
// Usage: node replicas.mjs OPENAPI_MCP_BIN SPEC NGINX REDIS_SERVER REDIS_CLI
//   SPEC: tests/conformance/tasks.yaml (greet, slow_compute, failing_job, get_job, cancel_job).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, openSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const CLIENT_INFO = { name: 'openapi-mcp-tasks-replicas', version: '0' };
const INSTANCES = 3;
const [bin, spec, nginxBin, redisBin, redisCli] = process.argv.slice(2);
if (!bin || !spec || !nginxBin || !redisBin || !redisCli) {
  console.error('usage: node replicas.mjs OPENAPI_MCP_BIN SPEC NGINX REDIS_SERVER REDIS_CLI');
  process.exit(2);
}

let failures = 0;
function check(cond, what) {
  console.log(`  ${cond ? 'ok' : 'FAIL'}: ${what}`);
  if (!cond) failures += 1;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Waits until `probe()` is truthy (polled every 50 ms) or `child` exits; throws after `ms`.
async function until(what, child, probe, ms = 30000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode})`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready in ${ms / 1000} s`);
    await sleep(50);
  }
}

// --- the job API (as tests/conformance/tasks-upstream.mjs, plus who sent each request) ------------
const jobs = new Map();
const seen = []; // { instance, method, path }
let nextJob = 0;
const api = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const path = url.pathname;
  const json = (status, body, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  req.resume();
  req.on('end', () => {
    seen.push({ instance: req.headers['x-instance'] ?? '?', method: req.method, path });
    if (req.method === 'GET' && path === '/api/greet') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`Hello, ${url.searchParams.get('name') ?? 'world'}!`);
      return;
    }
    if (req.method === 'POST' && path === '/api/compute') {
      const seconds = Number(url.searchParams.get('seconds') ?? 0);
      const id = `job-${++nextJob}`;
      jobs.set(id, { end: Date.now() + seconds * 1000, label: url.searchParams.get('label') ?? '', cancelled: false });
      json(202, { id, status: 'queued' }, { location: `/api/jobs/${id}`, 'retry-after': '1' });
      return;
    }
    const m = path.match(/^\/api\/jobs\/([^/]+)$/);
    const job = m && jobs.get(m[1]);
    if (!job) {
      json(404, { error: 'no such job' });
      return;
    }
    if (req.method === 'DELETE') {
      job.cancelled = true;
      res.writeHead(202);
      res.end();
    } else if (job.cancelled) {
      json(200, { id: m[1], status: 'cancelled' });
    } else if (Date.now() < job.end) {
      json(200, { id: m[1], status: 'running' }, { 'retry-after': '1' });
    } else {
      json(200, { id: m[1], status: 'succeeded', result: `computed ${job.label}` });
    }
  });
});
// Which instance sent `method` on a path matching `re` (every one, in order).
const senders = (method, re) => seen.filter((r) => r.method === method && re.test(r.path)).map((r) => r.instance);

// --- the raw 2026-07-28 path of the ext-tasks session (as tests/typescript/tasks.mjs) -------------
let nextId = 0;
async function post(url, request, headersIn = {}, signal) {
  const params = request.params ?? {};
  const name = params.name ?? params.taskId ?? params.uri;
  const headers = new Headers({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': request.method,
    ...(name === undefined ? {} : { 'mcp-name': String(name) }),
  });
  for (const [k, v] of Object.entries(headersIn)) headers.set(k, v);
  const resp = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request), signal });
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
}

async function session(url, authorization) {
  const auth = { authorization };
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } }));
  const s = createTaskSessionFromClient(client, {
    endpointId: 'openapi-mcp-tasks-replicas',
    rawDispatch: (unframed, options) =>
      post(url, { jsonrpc: '2.0', id: `raw-${++nextId}`, ...unframed }, { ...auth, ...(options?.context?.headers ?? {}) }, options?.signal),
    v2RequestFraming: { protocolVersion: MODERN, clientInfo: CLIENT_INFO, clientCapabilities: {} },
  });
  return { client, session: s };
}

function text(result) {
  return (result?.content ?? []).map((c) => c.text ?? '').join('\n');
}

// --- the run ----------------------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'openapi-mcp-tasks-replicas.'));
chmodSync(work, 0o755); // nginx workers run as nobody when started as root
mkdirSync(join(work, 'tmp'));
const children = [];
const password = `pw-${Math.random().toString(36).slice(2)}-${Date.now()}`;
let redisPort;
try {
  await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${api.address().port}/api`;

  // redis-server: loopback only, no persistence, a password; a free port (retried if taken).
  let redis;
  for (let attempt = 0; ; attempt++) {
    redisPort = await freePort();
    const log = join(work, 'redis.log');
    redis = spawn(redisBin, ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
      '--dir', work, '--requirepass', password, '--logfile', log], { stdio: 'ignore' });
    children.push(redis);
    try {
      await until('redis-server', redis, () => existsSync(log) && readFileSync(log, 'utf8').includes('Ready to accept connections'), 10000);
      break;
    } catch (e) {
      if (attempt === 2) throw new Error(`${e.message}: ${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
    }
  }
  const version = spawnSync(redisBin, ['--version'], { encoding: 'utf8' }).stdout.trim().split(' ').slice(0, 3).join(' ');

  // The replicas: the same task store and store key, each naming itself to the API.
  const store = `redis://:${password}@127.0.0.1:${redisPort}/0`;
  const proxies = [];
  for (let n = 0; n < INSTANCES; n++) {
    const name = `i${n}`;
    const logPath = join(work, `proxy-${name}.log`);
    const out = openSync(logPath, 'w');
    const child = spawn(bin, ['proxy', spec, '--base-url', apiUrl, '--prefix', '', '--tasks', '--task-store', store,
      '--transport', 'http', '--listen', '127.0.0.1:0', '--stateless', '--header', `X-Instance: ${name}`], {
      env: { ...process.env, RUST_LOG: 'info', OPENAPI_MCP_STORE_KEY: 'the replicas check key, 32 bytes or more' },
      stdio: ['ignore', out, out],
    });
    children.push(child);
    const addr = await until(`proxy ${name}`, child,
      () => /over Streamable HTTP at http:\/\/([^/ ]+)\/mcp/.exec(readFileSync(logPath, 'utf8'))?.[1]);
    proxies.push({ name, addr, child, logPath });
  }

  // nginx: /mcp round robin over the three; /iN/mcp pinned to instance N.
  let nginxPort, nginx;
  for (let attempt = 0; ; attempt++) {
    nginxPort = await freePort();
    const conf = join(work, 'nginx.conf');
    const loc = (path, target) => `
        location = ${path} {
            proxy_pass http://${target}/mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_buffering off;
            proxy_next_upstream error timeout;
            proxy_connect_timeout 2s;
            proxy_read_timeout 60s;
        }`;
    writeFileSync(conf, `daemon off;
master_process on;
worker_processes 1;
pid ${work}/nginx.pid;
error_log ${work}/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path ${work}/tmp/body;
    proxy_temp_path ${work}/tmp/proxy;
    fastcgi_temp_path ${work}/tmp/fastcgi;
    uwsgi_temp_path ${work}/tmp/uwsgi;
    scgi_temp_path ${work}/tmp/scgi;
    upstream replicas {
${proxies.map((p) => `        server ${p.addr};`).join('\n')}
    }
    server {
        listen 127.0.0.1:${nginxPort};${loc('/mcp', 'replicas')}${proxies.map((p) => loc(`/${p.name}/mcp`, p.addr)).join('')}
    }
}
`);
    nginx = spawn(nginxBin, ['-p', work, '-c', conf, '-e', `${work}/error.log`], { stdio: 'ignore' });
    children.push(nginx);
    try {
      // The pid file is written once the socket is bound (nginx exits when the bind fails).
      await until('nginx', nginx, () => existsSync(join(work, 'nginx.pid')), 10000);
      await sleep(100);
      if (nginx.exitCode === null) break;
      throw new Error('nginx exited');
    } catch (e) {
      const errors = existsSync(join(work, 'error.log')) ? readFileSync(join(work, 'error.log'), 'utf8') : '';
      if (attempt === 2 || !errors.includes('Address already in use')) throw new Error(`nginx did not start: ${e.message} ${errors}`);
    }
  }
  const nginxVersion = spawnSync(nginxBin, ['-v'], { encoding: 'utf8' }).stderr.trim();
  const via = (path) => `http://127.0.0.1:${nginxPort}${path}`;
  console.log(`[${nginxVersion} on 127.0.0.1:${nginxPort}, round robin over ${proxies.map((p) => `${p.name}=${p.addr}`).join(', ')}; `
    + `task store ${version} on 127.0.0.1:${redisPort} (password); ext-tasks over @modelcontextprotocol/client, ${MODERN}]`);

  const ALICE = 'Bearer alice-token-of-the-replicas-check';
  const BOB = 'Bearer bob-token-of-the-replicas-check';

  // 1. Started through nginx, its creator killed, resumed and settled through the others.
  const first = await session(via('/mcp'), ALICE);
  const greet = await first.session.callTool('greet', { name: 'replicas' });
  check(greet.kind === 'immediate' && text((await greet.settle()).outcome.result) === 'Hello, replicas!',
    'a synchronous call through nginx answers at once');
  const moved = await first.session.callTool('slow_compute', { seconds: 4, label: 'moved' });
  check(moved.kind === 'task', `slow_compute through nginx is a task (${moved.kind})`);
  const creators = senders('POST', /^\/api\/compute$/);
  const creator = proxies.find((p) => p.name === creators[creators.length - 1]);
  check(creator !== undefined, `the API saw the POST from instance ${creator?.name}`);
  let reference;
  await moved.handoff((r) => {
    reference = r;
  });
  await first.client.close();
  creator.child.kill('SIGKILL');
  await new Promise((r) => (creator.child.exitCode !== null || creator.child.signalCode !== null ? r() : creator.child.once('exit', r)));
  const killedAt = seen.length;
  console.log(`  (instance ${creator.name}, which created task ${reference.taskId.slice(0, 8)}…, killed)`);

  const second = await session(via('/mcp'), ALICE);
  const resumed = await second.session.resumeTask(reference);
  const end = (await resumed.settle()).outcome;
  check(end.status === 'completed' && !end.result?.isError && text(end.result).includes('computed moved'),
    `the task settles completed through the surviving replicas: ${end.status} ${text(end.result).replace(/\s+/g, " ").slice(0, 160)}`);
  const polls = seen.slice(killedAt).filter((r) => r.method === 'GET' && r.path.startsWith('/api/jobs/')).map((r) => r.instance);
  check(polls.length > 0 && !polls.includes(creator.name),
    `every status poll after the kill came from another replica: ${JSON.stringify(polls)}`);
  const byInstance = {};
  for (const i of senders('GET', /^\/api\/jobs\//)) byInstance[i] = (byInstance[i] ?? 0) + 1;
  console.log(`  (status polls per instance over the run: ${JSON.stringify(byInstance)})`);

  // 2. A second task, cancelled through an instance that did not create it.
  const long = await second.session.callTool('slow_compute', { seconds: 120, label: 'cancel-me' });
  check(long.kind === 'task', 'a second slow_compute through nginx is a task');
  const longCreator = senders('POST', /^\/api\/compute$/).at(-1);
  const other = proxies.find((p) => p !== creator && p.name !== longCreator);
  const third = await session(via(`/${other.name}/mcp`), ALICE);
  await third.session.cancelTask(long.handle.taskId);
  const deletes = senders('DELETE', /^\/api\/jobs\//);
  check(deletes.length === 1 && deletes[0] === other.name,
    `tasks/cancel through ${other.name} (created on ${longCreator}) called the API's DELETE from ${other.name}: ${JSON.stringify(deletes)}`);
  const back = await session(via(`/${longCreator}/mcp`), ALICE);
  const view = await back.session.task(long.handle.taskId).snapshot();
  check(view.status === 'cancelled', `the creator ${longCreator} reads it back cancelled (${view.status})`);
  const viewRr = await second.session.task(long.handle.taskId).snapshot();
  check(viewRr.status === 'cancelled', `and so does round robin (${viewRr.status})`);

  // 3. Another caller: the task does not exist for them, on any replica.
  for (const p of proxies.filter((q) => q !== creator)) {
    const got = await post(via(`/${p.name}/mcp`), {
      jsonrpc: '2.0', id: `bob-${p.name}`, method: 'tasks/get',
      params: {
        taskId: long.handle.taskId,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
        },
      },
    }, { authorization: BOB });
    check(got?.error?.code === -32602, `another Authorization gets -32602 on ${p.name}: ${JSON.stringify(got?.error ?? got?.result)}`);
  }
  for (const s of [second, third, back]) {
    await s.session.close();
    await s.client.close();
  }

  // 4. What Redis holds, and what the logs hold.
  const cli = (...args) => spawnSync(redisCli, ['-h', '127.0.0.1', '-p', String(redisPort), '--no-auth-warning', '-a', password, ...args],
    { encoding: 'latin1' }).stdout;
  const keys = cli('--scan').split('\n').filter((k) => k);
  check(keys.length > 0, `Redis holds the task records (${keys.length} keys, e.g. ${keys[0]})`);
  const forever = keys.filter((k) => cli('TTL', k).trim() === '-1');
  check(forever.length === 0, `every Redis key expires (TTL set on records and indexes): ${JSON.stringify(forever)}`);
  const ids = [reference.taskId, long.handle.taskId];
  check(!keys.some((k) => ids.some((id) => k.includes(id))), 'no Redis key holds a task id');
  const values = keys.filter((k) => cli('TYPE', k).trim() === 'string').map((k) => cli('GET', k));
  check(values.length > 0 && !values.some((v) => v.includes('computed moved') || v.includes('/api/jobs/')),
    `no Redis value holds a result or a status URL in clear (${values.length} values read)`);
  const logs = proxies.map((p) => readFileSync(p.logPath, 'utf8')).join('\n');
  check(logs.includes('task poll') && !logs.includes(password), 'the proxies logged their polls and never the Redis password');
} catch (e) {
  failures += 1;
  console.log(`  FAIL: ${e?.stack ?? e}`);
} finally {
  for (const c of children.reverse()) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null
    : new Promise((r) => { const t = setTimeout(() => { c.kill('SIGKILL'); r(); }, 5000); c.once('exit', () => { clearTimeout(t); r(); }); }))));
  api.close();
  if (failures > 0 && process.env.KEEP_WORK) console.log(`  (work dir kept: ${work})`);
  else rmSync(work, { recursive: true, force: true });
}
if (failures > 0) {
  console.log(`tasks replicas: ${failures} FAILED`);
  process.exit(1);
}
console.log('tasks replicas: all passed');
process.exit(0);
