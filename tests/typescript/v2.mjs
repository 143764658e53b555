// End-to-end checks with the official TypeScript MCP SDK v2 client (`@modelcontextprotocol/client`),
// in both protocol eras it speaks: 2025-11-25 (its default `versionNegotiation` mode, 'legacy':
// initialize, sessions over HTTP) and 2026-07-28 (`{ pin: '2026-07-28' }`: server/discover, `_meta`
// on every request, Mcp-Method/Mcp-Name and Mcp-Param-* headers over HTTP). 'auto' must settle on
// 2026-07-28 against us.
//
//   [COMBOS=stdio:2025,stdio:2026,http:2025,http:2026] [COMPILE=0] node v2.mjs list BIN SPEC...
//       Serves each spec with `openapi-mcp proxy` over stdio and over Streamable HTTP and reads its
//       whole tool list in each era (COMBOS narrows that); the lists must be identical, and every
//       outputSchema must compile with the SDK's own validator (v2 no longer fails the listing on
//       one that does not: callTool refuses that tool instead; COMPILE=0 skips this, which takes
//       most of the time on large specs).
//   node v2.mjs calls BIN PETSTORE_SPEC HEADERS_SPEC
//       Calls tools through the proxy against a recording upstream on 127.0.0.1:0 and checks the
//       HTTP request the upstream received, byte for byte, and what the client got back: stdio,
//       Streamable HTTP stateful and --stateless, each era. The x-mcp-header fixture is called over
//       HTTP to check the Mcp-Param-* headers the 2026 client sends and the proxy accepts;
//       `--confirm destructive` asks through the client's elicitation handler in both eras.
//
// Prints one line per check or spec; exit 1 when any fails. Node >= 20; no network beyond 127.0.0.1.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';

const MODERN = '2026-07-28';
const ERAS = {
  '2025': { mode: 'legacy', expectEra: 'legacy' },
  '2026': { mode: { pin: MODERN }, expectEra: 'modern' },
};
const API_KEY = 'ts-v2-e2e-secret-key';
// Ajv warns on each format it does not know (uint64, ...); those are not failures.
console.warn = () => {};

let failures = 0;
function check(cond, what) {
  what = what.replace(/\s*\n\s*/g, ' ');
  if (cond) {
    console.log(`  ok: ${what}`);
  } else {
    failures += 1;
    console.log(`  FAIL: ${what}`);
  }
}

function newClient(era) {
  return new Client(
    { name: 'openapi-mcp-ts-v2-check', version: '0' },
    { versionNegotiation: { mode: ERAS[era].mode }, listMaxPages: 0 },
  );
}

function stdioTransport(bin, spec, extra = [], env = {}) {
  return new StdioClientTransport({
    command: bin,
    args: ['proxy', spec, ...extra],
    env: { ...getDefaultEnvironment(), RUST_LOG: 'warn', ...env },
    stderr: 'ignore',
  });
}

// Starts `openapi-mcp proxy --transport http` and resolves with its URL and a stop function.
function startHttpProxy(bin, spec, extra = [], env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      bin,
      ['proxy', spec, ...extra, '--transport', 'http', '--listen', '127.0.0.1:0'],
      { env: { ...process.env, RUST_LOG: 'warn', ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    let done = false;
    const timer = setTimeout(() => finish(new Error(`no URL from openapi-mcp in 30 s: ${log}`)), 30000);
    function finish(err, url) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        child.kill();
        reject(err);
      } else {
        resolve({
          url,
          stop: () =>
            new Promise((r) => {
              if (child.exitCode !== null) return r();
              child.once('exit', () => r());
              child.kill();
            }),
        });
      }
    }
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      if (log.length < 65536) log += chunk;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(log);
      if (m) finish(null, m[1]);
    });
    child.on('exit', (code) => finish(new Error(`openapi-mcp exited (${code}) before serving: ${log}`)));
  });
}

// --- list -----------------------------------------------------------------------------------------

async function listOnce(client, transport) {
  await client.connect(transport);
  const { tools } = await client.listTools();
  return { tools, era: client.getProtocolEra() };
}

// The outputSchemas the SDK's validator cannot compile (callTool refuses those tools).
function uncompilable(tools) {
  const validator = new AjvJsonSchemaValidator();
  const bad = [];
  for (const t of tools) {
    if (!t.outputSchema) continue;
    try {
      validator.getValidator(t.outputSchema);
    } catch (e) {
      bad.push(`${t.name}: ${String(e?.message ?? e).slice(0, 200)}`);
    }
  }
  return bad;
}

// JSON with sorted keys: the SDK normalises some schemas (a missing top-level `type: "object"`)
// differently per era, which moves keys but changes nothing.
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function errorChain(e) {
  const parts = [];
  for (let x = e; x; x = x.cause) parts.push(String(x.message ?? x));
  return parts.join(' <- ');
}

// COMBOS: which transports and eras to list each spec in ("stdio:2025,http:2026", ...).
async function list(bin, specs, combos) {
  let failed = 0;
  let listed = 0;
  for (const spec of specs) {
    const base = ['--base-url', 'http://127.0.0.1:9'];
    let http;
    const counts = [];
    try {
      if (combos.some(([t]) => t === 'http')) http = await startHttpProxy(bin, spec, base);
      let first;
      for (const [transportName, era] of combos) {
        const client = newClient(era);
        const transport =
          transportName === 'stdio'
            ? stdioTransport(bin, spec, base)
            : new StreamableHTTPClientTransport(new URL(http.url));
        const what = `${transportName} ${era}`;
        const started = Date.now();
        let r;
        try {
          r = await listOnce(client, transport);
        } catch (e) {
          throw new Error(`${what}: ${errorChain(e)}`);
        } finally {
          await client.close().catch(() => {});
        }
        if (r.era !== ERAS[era].expectEra) throw new Error(`${what}: era ${r.era}, expected ${ERAS[era].expectEra}`);
        counts.push(`${what} ${r.tools.length} (${Date.now() - started} ms)`);
        listed += r.tools.length;
        // The other transports and eras must serve the very same list.
        if (first === undefined) {
          first = { what, tools: r.tools, json: canonical(r.tools) };
        } else if (canonical(r.tools) !== first.json) {
          throw new Error(`${what}: the tool list differs from ${first.what}'s`);
        }
      }
      // Compiled once, when no connection is left open: Ajv blocks the event loop, and a
      // keep-alive socket the server closes meanwhile would be reused before its close is seen.
      const bad = process.env.COMPILE === '0' ? [] : uncompilable(first?.tools ?? []);
      if (bad.length) throw new Error(`${bad.length} outputSchema(s) the SDK cannot compile: ${bad.slice(0, 3).join('; ')}`);
      console.log(`ok   ${spec}: ${counts.join(', ')}`);
    } catch (e) {
      failed += 1;
      console.log(`FAIL ${spec}: ${String(e?.message ?? e).slice(0, 600)}`);
    } finally {
      await http?.stop();
    }
  }
  console.log(`typescript sdk v2: ${specs.length} specs, ${failed} failed, ${listed} tools listed (${combos.map((c) => c.join(' ')).join(', ')})`);
  return failed;
}

// --- calls ----------------------------------------------------------------------------------------

// A recording upstream that plays a tiny petstore and the reports API of the headers fixture.
function startUpstream() {
  const received = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const rec = { method: req.method, target: req.url, headers: req.headers, body };
      received.push(rec);
      const [status, payload] = respond(rec);
      if (payload === undefined) {
        res.writeHead(status);
        res.end();
      } else {
        const text = JSON.stringify(payload);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(text);
      }
    });
  });
  function respond({ method, target, body }) {
    if (target === '/api/pets' && method === 'POST') return [201, { id: 7, ...JSON.parse(body) }];
    if (method === 'GET' && (target === '/api/pets' || target.startsWith('/api/pets?'))) {
      return [200, [{ id: 1, name: 'Rex', tag: 'dog' }, { id: 2, name: 'Tom' }]];
    }
    if (method === 'GET' && target.startsWith('/api/pets/search?')) return [200, []];
    if (method === 'GET' && target === '/api/pets/404') return [404, { code: 404, message: 'no such pet' }];
    const m = /^\/api\/pets\/(\d+)$/.exec(target);
    if (m && method === 'GET') return [200, { id: Number(m[1]), name: 'Rex' }];
    if (m && method === 'DELETE') return [204, undefined];
    if (method === 'GET' && target.startsWith('/api/reports?')) return [200, [{ id: 'r1' }]];
    return [500, { code: 500, message: `unexpected ${method} ${target}` }];
  }
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        base: `http://127.0.0.1:${server.address().port}/api`,
        take: () => received.splice(0, received.length),
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}

// fetch that records the headers of every MCP request the client sends.
function recordingFetch(sent) {
  return async (url, init) => {
    const h = new Headers(init?.headers);
    let method;
    try {
      method = JSON.parse(init?.body ?? 'null')?.method;
    } catch {}
    sent.push({ httpMethod: init?.method ?? 'GET', method, headers: Object.fromEntries(h.entries()) });
    return fetch(url, init);
  };
}

function textOf(r) {
  return (r.content ?? []).map((c) => c.text ?? '').join('');
}

function noMcpHeaders(req) {
  return Object.keys(req.headers).filter((h) => h.startsWith('mcp-') || h === 'authorization');
}

async function exercisePetstore(client, up, label, era) {
  console.log(`[petstore ${label} ${era}]`);
  check(client.getProtocolEra() === ERAS[era].expectEra, `era ${client.getProtocolEra()}`);
  check(client.getServerVersion()?.name === 'petstore', `server identifies as petstore: ${JSON.stringify(client.getServerVersion())}`);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(
    JSON.stringify(names) ===
      JSON.stringify([
        'petstore_create_pet',
        'petstore_delete_pet',
        'petstore_list_pets',
        'petstore_search_pets_legacy',
        'petstore_show_pet_by_id',
        'petstore_update_pet',
      ]),
    `tools/list serves the 6 petstore tools: ${names}`,
  );
  const show = tools.find((t) => t.name === 'petstore_show_pet_by_id');
  check(show?.inputSchema?.properties?.petId !== undefined, 'inputSchema has petId');
  check(show?.outputSchema?.type === 'object', 'outputSchema is an object');
  check(show?.annotations?.readOnlyHint === true, 'GET tool is readOnlyHint');
  up.take();

  let r = await client.callTool({ name: 'petstore_list_pets', arguments: { limit: 5, tags: ['dog', 'cat food'] } });
  check(!r.isError, 'list_pets succeeded');
  check(
    JSON.stringify(r.structuredContent) === JSON.stringify({ result: [{ id: 1, name: 'Rex', tag: 'dog' }, { id: 2, name: 'Tom' }] }),
    `array result as {result: [...]}: ${JSON.stringify(r.structuredContent)}`,
  );
  let reqs = up.take();
  check(reqs.length === 1 && reqs[0].method === 'GET' && reqs[0].target === '/api/pets?limit=5&tags=dog&tags=cat%20food', `query bytes: ${reqs[0]?.target}`);
  check(reqs[0]?.headers['x-api-key'] === API_KEY, 'API key sent in X-API-Key');
  check(reqs.length === 1 && noMcpHeaders(reqs[0]).length === 0, `no MCP or Authorization header reaches the API: ${reqs[0] && noMcpHeaders(reqs[0])}`);

  r = await client.callTool({ name: 'petstore_show_pet_by_id', arguments: { petId: 12 } });
  check(!r.isError && JSON.stringify(r.structuredContent) === '{"id":12,"name":"Rex"}', `show_pet_by_id: ${JSON.stringify(r.structuredContent)}`);
  reqs = up.take();
  check(reqs[0]?.target === '/api/pets/12', `path bytes: ${reqs[0]?.target}`);

  r = await client.callTool({ name: 'petstore_search_pets_legacy', arguments: { q: 'a&b=c#d/e?f %' } });
  check(!r.isError, `search succeeded: ${textOf(r).slice(0, 200)}`);
  reqs = up.take();
  check(reqs[0]?.target === '/api/pets/search?q=a%26b%3Dc%23d%2Fe%3Ff%20%25', `query value percent-encoded: ${reqs[0]?.target}`);

  r = await client.callTool({ name: 'petstore_create_pet', arguments: { name: 'Fido', tag: 'dog', status: 'available' } });
  check(!r.isError && r.structuredContent?.id === 7, `create_pet returns the created pet: ${JSON.stringify(r.structuredContent)}`);
  reqs = up.take();
  check(reqs[0]?.method === 'POST' && (reqs[0]?.headers['content-type'] ?? '').startsWith('application/json'), 'POST with Content-Type application/json');
  check(reqs[0] && JSON.stringify(JSON.parse(reqs[0].body)) === '{"name":"Fido","tag":"dog","status":"available"}', `body bytes: ${reqs[0]?.body}`);

  r = await client.callTool({ name: 'petstore_show_pet_by_id', arguments: { petId: 404 } });
  check(r.isError === true && textOf(r).includes('404') && textOf(r).includes('no such pet'), `HTTP 404 is isError with status and body: ${textOf(r).slice(0, 200)}`);
  up.take();

  r = await client.callTool({ name: 'petstore_delete_pet', arguments: { petId: 3 } });
  check(!r.isError && textOf(r) !== '', `204 gives a short text: ${textOf(r)}`);
  reqs = up.take();
  check(reqs[0]?.method === 'DELETE' && reqs[0]?.target === '/api/pets/3', 'DELETE sent');

  r = await client.callTool({ name: 'petstore_create_pet', arguments: { nmae: 'x', status: 'lost' } });
  check(r.isError === true && /nmae/.test(textOf(r)) && /status/.test(textOf(r)), `validation error names the fields: ${textOf(r).slice(0, 200)}`);
  check(up.take().length === 0, 'nothing sent upstream for invalid arguments');

  try {
    r = await client.callTool({ name: 'no_such_tool', arguments: {} });
    check(false, `unknown tool must be a JSON-RPC error, got a result: ${JSON.stringify(r).slice(0, 200)}`);
  } catch (e) {
    check(/no_such_tool|-32602|not found/i.test(String(e?.message ?? e)), `unknown tool is a JSON-RPC error: ${String(e?.message ?? e).slice(0, 200)}`);
  }
  check(up.take().length === 0, 'nothing sent upstream for an unknown tool');
}

async function exerciseHeaders(client, up, label, era, sent) {
  console.log(`[x-mcp-header ${label} ${era}]`);
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === 'conformance_list_reports');
  check(tool !== undefined, `tool conformance_list_reports listed: ${tools.map((t) => t.name)}`);
  const annotated = tool?.inputSchema?.properties?.region?.['x-mcp-header'] === 'Region';
  console.log(`  (the tool ${annotated ? 'carries' : 'does not carry yet'} x-mcp-header annotations)`);
  up.take();
  for (const [region, encoded] of [
    ['eu-west-1', 'eu-west-1'],
    ['Zürich', `=?base64?${Buffer.from('Zürich').toString('base64')}?=`],
  ]) {
    sent?.splice(0, sent.length);
    const r = await client.callTool({ name: 'conformance_list_reports', arguments: { region, limit: 5, verbose: true } });
    check(!r.isError && JSON.stringify(r.structuredContent) === '{"result":[{"id":"r1"}]}', `call with region ${region}: ${JSON.stringify(r.structuredContent) ?? textOf(r).slice(0, 200)}`);
    const reqs = up.take();
    check(
      reqs.length === 1 && reqs[0].target === `/api/reports?region=${encodeURIComponent(region)}&limit=5&verbose=true`,
      `upstream query: ${reqs[0]?.target}`,
    );
    check(reqs.length === 1 && noMcpHeaders(reqs[0]).length === 0, `no MCP header reaches the API: ${reqs[0] && noMcpHeaders(reqs[0])}`);
    if (sent) {
      const call = sent.find((s) => s.method === 'tools/call');
      const h = call?.headers ?? {};
      if (era === '2026') {
        check(h['mcp-method'] === 'tools/call' && h['mcp-name'] === 'conformance_list_reports', `client sent Mcp-Method/Mcp-Name: ${h['mcp-method']} ${h['mcp-name']}`);
        if (annotated) {
          check(
            h['mcp-param-region'] === encoded && h['mcp-param-limit'] === '5' && h['mcp-param-verbose'] === 'true',
            `client mirrored the arguments into Mcp-Param-*: ${h['mcp-param-region']} ${h['mcp-param-limit']} ${h['mcp-param-verbose']}`,
          );
        }
      } else {
        check(!Object.keys(h).some((k) => k.startsWith('mcp-param-')), 'a 2025-era call carries no Mcp-Param-* header');
      }
    }
  }
}

// --confirm destructive: the proxy asks the user (the client's elicitation handler) before a
// DELETE is sent; 2025: an elicitation/create request, 2026: an input_required result that the
// SDK fulfils through the same handler and retries.
async function exerciseConfirm(connect, up, label, era) {
  console.log(`[confirm ${label} ${era}]`);
  const asked = [];
  let answer;
  const client = new Client(
    { name: 'openapi-mcp-ts-v2-check', version: '0' },
    { versionNegotiation: { mode: ERAS[era].mode }, capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    return answer;
  });
  await connect(client);
  try {
    up.take();
    answer = { action: 'accept', content: { confirm: true } };
    let r = await client.callTool({ name: 'petstore_delete_pet', arguments: { petId: 3 } });
    check(!r.isError && asked.length === 1, `accepted: the call went through after one question: ${textOf(r).slice(0, 120)}`);
    check(/DELETE/.test(asked[0]?.message ?? '') && asked[0]?.requestedSchema?.properties?.confirm?.type === 'boolean', `the question names the request: ${asked[0]?.message}`);
    let reqs = up.take();
    check(reqs.length === 1 && reqs[0].method === 'DELETE' && reqs[0].target === '/api/pets/3', `DELETE sent once after the yes: ${reqs.map((q) => `${q.method} ${q.target}`)}`);

    asked.length = 0;
    answer = { action: 'decline' };
    r = await client.callTool({ name: 'petstore_delete_pet', arguments: { petId: 4 } });
    check(r.isError === true && asked.length === 1, `declined: a tool error: ${textOf(r).slice(0, 160)}`);
    check(up.take().length === 0, 'declined: nothing sent upstream');

    asked.length = 0;
    answer = { action: 'accept', content: { confirm: false } };
    r = await client.callTool({ name: 'petstore_delete_pet', arguments: { petId: 5 } });
    check(r.isError === true && up.take().length === 0, 'accepted with confirm: false: nothing sent');

    asked.length = 0;
    r = await client.callTool({ name: 'petstore_show_pet_by_id', arguments: { petId: 6 } });
    check(!r.isError && asked.length === 0 && up.take().length === 1, 'a read-only tool is not asked about');
  } finally {
    await client.close().catch(() => {});
  }

  // A client that cannot ask: 2025 gets a tool error, 2026 MissingRequiredClientCapability.
  const mute = newClient(era);
  await connect(mute);
  try {
    let outcome;
    try {
      const r = await mute.callTool({ name: 'petstore_delete_pet', arguments: { petId: 7 } });
      outcome = r.isError ? `tool error: ${textOf(r).slice(0, 120)}` : 'sent';
    } catch (e) {
      outcome = `error ${e?.code}: ${String(e?.message ?? e).slice(0, 120)}`;
    }
    const want = era === '2025' ? /^tool error/ : /^error -32021/;
    check(want.test(outcome), `no elicitation capability: ${outcome}`);
    check(up.take().length === 0, 'no elicitation capability: nothing sent upstream');
  } finally {
    await mute.close().catch(() => {});
  }
}

async function calls(bin, petstore, headersSpec) {
  const up = await startUpstream();
  const env = { OPENAPI_MCP_API_KEY: API_KEY };
  const base = ['--base-url', up.base];
  try {
    for (const era of Object.keys(ERAS)) {
      // stdio
      let client = newClient(era);
      await client.connect(stdioTransport(bin, petstore, base, env));
      try {
        await exercisePetstore(client, up, 'stdio', era);
      } finally {
        await client.close().catch(() => {});
      }
      client = newClient(era);
      await client.connect(stdioTransport(bin, headersSpec, base, env));
      try {
        await exerciseHeaders(client, up, 'stdio', era, null);
      } finally {
        await client.close().catch(() => {});
      }
      // Streamable HTTP, with sessions and --stateless
      for (const extra of [[], ['--stateless']]) {
        const label = `http${extra.length ? ' stateless' : ''}`;
        const proxy = await startHttpProxy(bin, petstore, [...base, ...extra], env);
        try {
          client = newClient(era);
          await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
          try {
            await exercisePetstore(client, up, label, era);
          } finally {
            await client.close().catch(() => {});
          }
        } finally {
          await proxy.stop();
        }
        const hproxy = await startHttpProxy(bin, headersSpec, [...base, ...extra], env);
        try {
          const sent = [];
          client = newClient(era);
          await client.connect(new StreamableHTTPClientTransport(new URL(hproxy.url), { fetch: recordingFetch(sent) }));
          try {
            await exerciseHeaders(client, up, label, era, sent);
          } finally {
            await client.close().catch(() => {});
          }
        } finally {
          await hproxy.stop();
        }
      }
    }
    // --confirm destructive, over stdio and HTTP (with sessions), each era.
    for (const era of Object.keys(ERAS)) {
      const confirm = [...base, '--confirm', 'destructive'];
      await exerciseConfirm((c) => c.connect(stdioTransport(bin, petstore, confirm, env)), up, 'stdio', era);
      const proxy = await startHttpProxy(bin, petstore, confirm, env);
      try {
        await exerciseConfirm((c) => c.connect(new StreamableHTTPClientTransport(new URL(proxy.url))), up, 'http', era);
      } finally {
        await proxy.stop();
      }
    }
    // 'auto' probes server/discover first and must settle on 2026-07-28 against us.
    console.log('[versionNegotiation auto]');
    for (const transportName of ['stdio', 'http']) {
      const proxy = transportName === 'http' ? await startHttpProxy(bin, petstore, base, env) : null;
      const client = new Client({ name: 'openapi-mcp-ts-v2-check', version: '0' }, { versionNegotiation: { mode: 'auto' } });
      try {
        await client.connect(proxy ? new StreamableHTTPClientTransport(new URL(proxy.url)) : stdioTransport(bin, petstore, base, env));
        check(client.getProtocolEra() === 'modern' && client.getNegotiatedProtocolVersion() === MODERN, `${transportName}: auto negotiates ${client.getNegotiatedProtocolVersion()}`);
        const r = await client.callTool({ name: 'petstore_show_pet_by_id', arguments: { petId: 5 } });
        check(!r.isError && r.structuredContent?.id === 5, `${transportName}: auto-mode call works`);
        up.take();
      } finally {
        await client.close().catch(() => {});
        await proxy?.stop();
      }
    }
  } finally {
    await up.close();
  }
  console.log(`typescript sdk v2 calls: ${failures} failed`);
  return failures;
}

const [cmd, bin, ...rest] = process.argv.slice(2);
let failed;
if (cmd === 'list') {
  // COMBOS from the environment: "stdio:2025,stdio:2026,http:2025,http:2026" (the default).
  const combos = (process.env.COMBOS || 'stdio:2025,stdio:2026,http:2025,http:2026').split(',').map((c) => c.split(':'));
  failed = await list(bin, rest, combos);
} else if (cmd === 'calls') {
  try {
    failed = await calls(bin, rest[0], rest[1]);
  } catch (e) {
    console.log(`FAIL: ${e?.stack ?? e}`);
    failed = 1;
  }
} else {
  console.error('usage: node v2.mjs list BIN SPEC... | node v2.mjs calls BIN PETSTORE_SPEC HEADERS_SPEC');
  failed = 2;
}
process.exit(failed ? 1 : 0);
