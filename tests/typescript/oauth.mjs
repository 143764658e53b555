// The proxy as an OAuth resource server (#21) through the official TypeScript SDK v2 client
// (`@modelcontextprotocol/client`), in both eras it speaks (2025-11-25 and 2026-07-28): the
// client finds everything from the proxy's 401 by itself (its ClientCredentialsProvider and its
// own discovery: RFC 9728 protected resource metadata -> RFC 8414 authorization server metadata
// -> token with the RFC 8707 `resource`), lists the tools and calls one against a recording
// upstream; a tool needing a scope the token lacks gets 403 insufficient_scope, which the SDK
// answers by re-authorizing with the union of scopes (step-up): the AS does not grant it to that
// client, the second 403 fails the call, and nothing reaches the upstream. A client the AS
// allows both scopes (the SDK asks for the metadata's scopes_supported) calls that tool.
//
// The authorization server is the Authlib one of the Python tests (tests/python/oauth_as.py),
// started here with PYTHON (a Python with the pinned Authlib).
//
//   node oauth.mjs BIN PYTHON PY_DIR
//
// Prints one line per check; exit 1 when any fails. No network beyond 127.0.0.1.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, ClientCredentialsProvider } from '@modelcontextprotocol/client';

const [bin, python, pyDir] = process.argv.slice(2);
if (!bin || !python || !pyDir) {
  console.error('usage: node oauth.mjs BIN PYTHON PY_DIR');
  process.exit(2);
}

const SPEC = `
openapi: 3.0.3
info: {title: Scoped Pets, version: '1'}
components:
  securitySchemes:
    petauth:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: https://as.example/authorize
          tokenUrl: https://as.example/token
          scopes: {'pets:read': read pets, 'pets:write': add pets}
security: [{petauth: ['pets:read']}]
paths:
  /pets:
    get:
      operationId: listPets
      responses: {'200': {description: ok, content: {application/json: {schema: {type: array, items: {type: object}}}}}}
    post:
      operationId: addPet
      security: [{petauth: ['pets:write']}]
      requestBody:
        content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
      responses: {'201': {description: created}}
`;
const CLIENTS = {
  reader: ['ts-reader-secret-value', 'pets:read'],
  writer: ['ts-writer-secret-value', 'pets:read pets:write'],
};
const ERAS = {
  '2025-11-25': { mode: 'legacy' },
  '2026-07-28': { mode: { pin: '2026-07-28' } },
};

let failures = 0;
function check(cond, what) {
  if (cond) {
    console.log(`  ok: ${what}`);
  } else {
    failures += 1;
    console.log(`  FAIL: ${what}`);
  }
}

/** A child process whose stdout/stderr lines are collected; resolves once `pattern` shows. */
function start(cmd, args, env, stream, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const lines = [];
    let found = false;
    let buf = '';
    child[stream].on('data', (d) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        const m = !found && line.match(pattern);
        if (m) {
          found = true;
          resolve({ child, lines, match: m[1] });
        }
      }
    });
    const other = stream === 'stdout' ? 'stderr' : 'stdout';
    child[other].on('data', (d) => lines.push(d.toString()));
    child.on('exit', (code) => {
      if (!found) reject(new Error(`${cmd} exited (${code}) before it was ready:\n${lines.join('\n')}`));
    });
  });
}

/** The recording upstream: what the proxy sends, answered with canned JSON. */
function upstream() {
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      const [status, payload] = req.method === 'POST' ? [201, { id: 1 }] : [200, [{ id: 1, name: 'rex' }]];
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, requests, port: server.address().port })));
}

async function session(url, issuer, clientId, scope, era, log) {
  const provider = new ClientCredentialsProvider({
    clientId,
    clientSecret: CLIENTS[clientId][0],
    scope,
    expectedIssuer: issuer,
  });
  // Every HTTP exchange the SDK makes (its own discovery and token requests included).
  const fetchLogged = async (input, init) => {
    const res = await fetch(input, init);
    const u = new URL(typeof input === 'string' ? input : input.url ?? String(input));
    log.push(`${init?.method ?? 'GET'} ${u.origin === new URL(url).origin ? 'proxy' : 'as'}${u.pathname} ${res.status}`);
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: fetchLogged });
  const client = new Client({ name: 'openapi-mcp-ts-oauth-check', version: '0' }, { versionNegotiation: { mode: ERAS[era].mode } });
  await client.connect(transport);
  return { client, provider };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'ts-oauth-'));
  const spec = join(dir, 'scoped.yaml');
  writeFileSync(spec, SPEC);
  const up = await upstream();
  const asProc = await start(
    python,
    ['-c', 'import json,sys; from oauth_as import serve_forever; serve_forever(json.loads(sys.argv[1]))', JSON.stringify(CLIENTS)],
    { AUTHLIB_INSECURE_TRANSPORT: '1', PYTHONPATH: pyDir, PYTHONWARNINGS: 'ignore' },
    'stdout',
    /^(http:\/\/127\.0\.0\.1:\d+)$/,
  );
  const issuer = asProc.match;
  const proxy = await start(
    bin,
    ['proxy', spec, '--base-url', `http://127.0.0.1:${up.port}`, '--transport', 'http', '--listen', '127.0.0.1:0', '--oauth-issuer', issuer],
    { RUST_LOG: 'info' },
    'stderr',
    /(http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  );
  const url = proxy.match;
  const seen = [];
  try {
    for (const era of Object.keys(ERAS)) {
      console.log(`[${era}]`);
      // A client allowed pets:read only.
      const log = [];
      const { client, provider } = await session(url, issuer, 'reader', 'pets:read', era, log);
      const first = log.slice(0, 4).join(', ');
      check(
        /^POST proxy\/mcp 401, GET proxy\/\.well-known\/oauth-protected-resource\/mcp 200, GET as\/\.well-known\/oauth-authorization-server 200, POST as\/token 200$/.test(first),
        `the SDK went 401 -> protected resource metadata -> AS metadata -> token by itself: ${first}`,
      );
      const tokens = await provider.tokens();
      seen.push(tokens?.access_token);
      check(tokens?.scope === 'pets:read' || tokens?.scope === undefined, `token for pets:read: ${tokens?.scope}`);
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      check(JSON.stringify(names) === '["scoped_add_pet","scoped_list_pets"]', `tools/list: ${names}`);
      up.requests.length = 0;
      const r = await client.callTool({ name: 'scoped_list_pets', arguments: {} });
      check(!r.isError && JSON.stringify(r.structuredContent ?? r.content).includes('rex'), `listPets called: ${JSON.stringify(r.content).slice(0, 80)}`);
      check(up.requests.length === 1 && up.requests[0].method === 'GET' && up.requests[0].url === '/pets', `the upstream got GET /pets`);
      check(!('authorization' in up.requests[0].headers), 'the MCP token did not reach the upstream');
      // addPet needs pets:write: 403 insufficient_scope; the SDK steps up, the AS grants only
      // pets:read to this client, the second 403 ends the call.
      log.length = 0;
      let err;
      try {
        await client.callTool({ name: 'scoped_add_pet', arguments: { name: 'rex' } });
      } catch (e) {
        err = e;
      }
      check(err && /403|insufficient_scope/i.test(String(err?.message ?? err)), `addPet without pets:write fails: ${String(err?.message ?? err).slice(0, 140)}`);
      check(
        /^POST proxy\/mcp 403, .*POST as\/token 200, POST proxy\/mcp 403$/.test(log.join(', ')),
        `403 insufficient_scope -> the SDK re-authorized (step-up) -> 403 again: ${log.join(', ')}`,
      );
      check(up.requests.length === 1, 'nothing more reached the upstream');
      await client.close();

      // A client the AS allows pets:write.
      const log2 = [];
      const w = await session(url, issuer, 'writer', undefined, era, log2);
      const wt = await w.provider.tokens();
      seen.push(wt?.access_token);
      check((wt?.scope ?? '').split(' ').includes('pets:write'), `its token has pets:write: ${wt?.scope}`);
      log2.length = 0;
      const added = await w.client.callTool({ name: 'scoped_add_pet', arguments: { name: 'rex' } });
      check(!added.isError && !log2.some((l) => l.endsWith(' 403')), `addPet called, no 403: ${JSON.stringify(added.content).slice(0, 80)}`);
      const last = up.requests[up.requests.length - 1];
      check(last?.method === 'POST' && JSON.parse(last.body).name === 'rex', 'the upstream got POST /pets');
      await w.client.close();
    }
  } finally {
    proxy.child.kill('SIGTERM');
    asProc.child.stdin.end();
    asProc.child.kill('SIGTERM');
    up.server.close();
  }
  await new Promise((r) => setTimeout(r, 200));
  const text = proxy.lines.join('\n');
  check(seen.every((t) => t && !text.includes(t)) && !text.includes('secret-value'), 'no token or client secret in the proxy log');
  console.log(failures ? `oauth (TypeScript SDK): ${failures} check(s) failed` : 'oauth (TypeScript SDK): all checks passed');
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.log(`FAIL: ${e?.stack ?? e}`);
  process.exit(1);
});
