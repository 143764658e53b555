// `--oauth-proxy` (#21) through the official TypeScript SDK clients' own authorization-code OAuth
// support: the proxy is the authorization server its MCP clients see, and sends each user through
// the API's own sign-in, a real authorization server (Authlib, tests/python/oauth_code_as.py:
// authorization code with PKCE required, rotating refresh tokens, opaque tokens), started here
// with PYTHON (a Python with the pinned Authlib).
//
// The MCP clients: SDK 2.x (`@modelcontextprotocol/client`) in both eras (2025-11-25, and
// 2026-07-28 pinned with `versionNegotiation`), and SDK 1.x (`@modelcontextprotocol/sdk`, the
// client of Claude Desktop, Claude Code and Cursor). Each has an `OAuthClientProvider` whose
// `redirectToAuthorization(url)` follows the redirects itself as a user's browser would (fetch
// with `redirect: 'manual'`): the proxy's /authorize -> the API's authorize page (signed in as
// one user, the X-Test-User header oauth_code_as.py reads) -> the proxy's /oauth/callback -> the
// client's redirect URI with `code`; then `transport.finishAuth(...)` and a new connection.
// The SDK does the rest by itself: 401 -> protected resource metadata -> authorization server
// metadata -> dynamic registration (SDK 2.x in the 2026-07-28 era: a Client ID Metadata Document
// URL instead, served over https from 127.0.0.1 with a throwaway CA made by `openssl`, which
// the proxy trusts through SSL_CERT_FILE) -> /authorize with PKCE S256, `state` and `resource`
// -> /token -> tools/list -> a call against a recording API (a node http server on 127.0.0.1)
// that answers with the user whose API token it got. Checked: that API token is the user's own
// from Authlib, never an MCP token, and the MCP client never saw an API token; a token the
// proxy refuses (its signature broken: the 401 its 15-minute expiry would give) is answered by
// the SDK with the refresh-token grant at the proxy's /token, and the call goes through without
// a new sign-in; no token or secret in the proxy's log.
//
//   node oauth_proxy.mjs BIN PYTHON PY_DIR
//
// Prints one line per check; exit 1 when any fails. No network beyond 127.0.0.1.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { writeFileSync, readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [bin, python, pyDir] = process.argv.slice(2);
if (!bin || !python || !pyDir) {
  console.error('usage: node oauth_proxy.mjs BIN PYTHON PY_DIR');
  process.exit(2);
}

const UPSTREAM_SECRET = 'ts-upstream-client-secret-value';
const STORE_KEY = `${'t'.repeat(16)}-store-key-for-the-ts-e2e-0123456789`;
// The client's redirect URI: the browser stops there (nothing listens on port 9).
const REDIRECT = 'http://127.0.0.1:9/callback';

let failures = 0;
function check(cond, what) {
  if (cond) {
    console.log(`  ok: ${what}`);
  } else {
    failures += 1;
    console.log(`  FAIL: ${what}`);
  }
}

/** Whether `patterns` match entries of `log` in this order (other entries may come between). */
function inOrder(log, patterns) {
  let i = 0;
  for (const entry of log) {
    if (i < patterns.length && patterns[i].test(entry)) i += 1;
  }
  return i === patterns.length;
}

const spec = (as) => `
openapi: 3.0.3
info: {title: Per-user API, version: '1'}
components:
  securitySchemes:
    apiauth:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: ${as.authorize}
          tokenUrl: ${as.token}
          scopes: {'pets:read': read pets, 'pets:write': add pets}
security: [{apiauth: ['pets:read']}]
paths:
  /me:
    get:
      operationId: getMe
      responses: {'200': {description: ok, content: {application/json: {schema: {type: object}}}}}
  /pets:
    post:
      operationId: addPet
      security: [{apiauth: ['pets:write']}]
      requestBody:
        content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
      responses: {'201': {description: created}}
`;

// The API's authorization server (Authlib) in a Python child, driven over stdin/stdout, one JSON
// line per command: `allow URI` (a redirect URI for the proxy's client), `user TOKEN` (whose live
// access token it is), `state` (the tokens it issued and the PKCE it saw).
const AS_PY = `
import json, os, sys
from oauth_code_as import CodeAuthServer
a = CodeAuthServer("upstream-client", os.environ["UPSTREAM_SECRET"], ["pets:read", "pets:write"])
print(json.dumps({"issuer": a.issuer, "authorize": a.authorize_url, "token": a.token_url}), flush=True)
for line in sys.stdin:
    cmd, _, arg = line.rstrip("\\n").partition(" ")
    if cmd == "allow":
        a.allow_redirect(arg)
        out = "ok"
    elif cmd == "user":
        out = a.user_of("Bearer " + arg)
    else:
        out = {"tokens": list(a.tokens) + list(a.refresh), "grants": a.grants_seen, "challenges": a.challenges}
    print(json.dumps(out), flush=True)
`;

function authServer() {
  const child = spawn(python, ['-c', AS_PY], {
    env: { ...process.env, AUTHLIB_INSECURE_TRANSPORT: '1', PYTHONPATH: pyDir, PYTHONWARNINGS: 'ignore', UPSTREAM_SECRET },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const waiting = [];
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.resolve(JSON.parse(line)));
  child.on('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the authorization server exited (${code}): ${stderr}`));
  });
  // Answers come in the order of the commands.
  const ask = (cmd) =>
    new Promise((resolve, reject) => {
      waiting.push({ resolve, reject });
      if (cmd !== undefined) child.stdin.write(`${cmd}\n`);
    });
  return ask(undefined).then((urls) => ({ child, ask, ...urls }));
}

/** The recording API: answers with the user whose API token the request carried. */
function api(as) {
  const requests = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      const auth = req.headers.authorization ?? '';
      const user = auth.startsWith('Bearer ') ? await as.ask(`user ${auth.slice(7)}`) : null;
      requests.push({ method: req.method, url: req.url, authorization: auth, user });
      const [status, payload] = !user ? [401, { message: 'Bad credentials' }] : req.url.startsWith('/me') ? [200, { login: user }] : [201, { id: 1, owner: user }];
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, requests, url: `http://127.0.0.1:${server.address().port}` })));
}

/**
 * A Client ID Metadata Document served over https on 127.0.0.1, with a certificate from a CA made
 * here for this run (openssl); undefined (and said so) without openssl.
 */
async function metadataDocumentServer(dir) {
  const ca = join(dir, 'ca.pem');
  try {
    const run = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=openapi-mcp ts e2e CA',
      '-keyout', join(dir, 'ca.key'), '-out', ca, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
    run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', join(dir, 'leaf.key'), '-out', join(dir, 'leaf.csr'));
    writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n');
    run('x509', '-req', '-in', join(dir, 'leaf.csr'), '-CA', ca, '-CAkey', join(dir, 'ca.key'), '-CAcreateserial', '-days', '1',
      '-extfile', join(dir, 'leaf.ext'), '-out', join(dir, 'leaf.pem'));
  } catch (e) {
    console.log(`  (no Client ID Metadata Document run: openssl failed or is missing: ${String(e.message).split('\n')[0]})`);
    return undefined;
  }
  const fetched = [];
  let url;
  const server = createHttpsServer({ key: readFileSync(join(dir, 'leaf.key')), cert: readFileSync(join(dir, 'leaf.pem')) }, (req, res) => {
    fetched.push({ url: req.url, authorization: req.headers.authorization });
    if (req.url !== '/clients/ts-e2e.json') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      client_id: url,
      client_name: 'openapi-mcp TypeScript e2e (CIMD)',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${server.address().port}/clients/ts-e2e.json`;
  return { server, url, fetched, ca };
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startProxy(specPath, apiUrl, store, caFile) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = ['proxy', specPath, '--base-url', apiUrl, '--transport', 'http', '--listen', `127.0.0.1:${port}`, '--oauth-proxy', origin,
    '--upstream-client-id', 'upstream-client', '--oauth-store', `sqlite:${store}`];
  const env = { ...process.env, RUST_LOG: 'debug', OPENAPI_MCP_STORE_KEY: STORE_KEY, OPENAPI_MCP_UPSTREAM_CLIENT_SECRET: UPSTREAM_SECRET };
  if (caFile) env.SSL_CERT_FILE = caFile;
  const child = spawn(bin, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const lines = [];
  await new Promise((resolve, reject) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      lines.push(line);
      if (line.includes('over Streamable HTTP at')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the proxy exited (${code}):\n${lines.join('\n')}`)));
  });
  return { child, lines, origin, url: `${origin}/mcp` };
}

/**
 * An OAuthClientProvider kept in memory, whose redirectToAuthorization is a browser signed in at
 * the API's authorization server as `user`.
 */
class BrowserProvider {
  constructor(user, asIssuer, clientMetadataUrl) {
    this.user = user;
    this.asIssuer = asIssuer;
    if (clientMetadataUrl) this.clientMetadataUrl = clientMetadataUrl;
    this.hops = [];
    this.consents = 0;
    this.cookies = {};
    this.authorizeUrl = undefined;
    this.callback = undefined;
    this.sentState = undefined;
    this.saved = [];
    this._info = this._tokens = this._verifier = this._discovery = undefined;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: `openapi-mcp TypeScript e2e (${this.user})`,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this.sentState = randomBytes(16).toString('hex');
    return this.sentState;
  }
  clientInformation() {
    return this._info;
  }
  saveClientInformation(info) {
    this._info = info;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
    this.saved.push(tokens);
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    return this._verifier;
  }
  saveDiscoveryState(s) {
    this._discovery = s;
  }
  discoveryState() {
    return this._discovery;
  }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') this._info = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this._verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this._discovery = undefined;
  }
  async redirectToAuthorization(authorizationUrl) {
    this.authorizeUrl = new URL(authorizationUrl);
    let url = String(authorizationUrl);
    for (let i = 0; i < 10; i += 1) {
      this.hops.push(url);
      if (url.startsWith(REDIRECT)) {
        this.callback = new URL(url).searchParams;
        return;
      }
      const headers = url.startsWith(this.asIssuer) ? { 'X-Test-User': this.user } : {};
      let res = await this.browse(url, { redirect: 'manual', headers });
      if (res.status === 200 && new URL(url).pathname === '/authorize') {
        // The proxy's consent page (#36): read it and press "Approve", as the user would, with
        // this browser's cookie.
        const page = await res.text();
        const action = page.match(/<form method="post" action="([^"]+)"/);
        const field = (name) => page.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1];
        if (!action || !field('request') || !field('csrf')) {
          throw new Error(`${url}: not a consent page: ${page.slice(0, 200)}`);
        }
        const to = new URL(action[1], url);
        res = await this.browse(to.href, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: to.origin },
          body: new URLSearchParams({ request: field('request'), csrf: field('csrf'), decision: 'approve' }).toString(),
        });
        this.consents += 1;
      }
      if (res.status !== 302 && res.status !== 303) {
        throw new Error(`${url}: ${res.status} ${(await res.text()).slice(0, 200)}`);
      }
      url = new URL(res.headers.get('location'), url).href;
    }
    throw new Error('too many redirects');
  }
  /** fetch, keeping the cookies a browser would (name=value, per origin). */
  async browse(url, init) {
    const origin = new URL(url).origin;
    const jar = (this.cookies[origin] ??= new Map());
    const headers = { ...(init.headers ?? {}) };
    if (jar.size) headers.Cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { ...init, headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return res;
  }
}

/**
 * The fetch given to the SDK: logs each exchange and the MCP-Protocol-Version it sent, and keeps
 * every body the MCP client read.
 */
function loggedFetch(origin, log, bodies, versions) {
  return async (input, init) => {
    const res = await fetch(input, init);
    const u = new URL(typeof input === 'string' ? input : (input.url ?? String(input)));
    const method = init?.method ?? 'GET';
    log.push(`${method} ${u.origin === origin ? 'proxy' : u.origin}${u.pathname} ${res.status}`);
    // (The SDK's own discovery requests carry a version of their own.)
    const version = u.pathname === '/mcp' && new Headers(init?.headers).get('mcp-protocol-version');
    if (version) versions.push(version);
    const type = res.headers.get('content-type') ?? '';
    // Not the long-lived GET event stream (it ends only when the connection closes).
    if (res.body && (method !== 'GET' || type.includes('json'))) {
      res
        .clone()
        .text()
        .then((t) => bodies.push(t), () => {});
    }
    return res;
  };
}

const ERAS = {
  '2025-11-25': { mode: 'legacy' },
  '2026-07-28': { mode: { pin: '2026-07-28' } },
};

/** One user through the whole dance with one SDK; returns the provider and what it saw. */
async function dance({ sdk, era, user, proxy, as, upstream, cimd }) {
  const provider = new BrowserProvider(user, as.issuer, cimd?.url);
  const log = [];
  const bodies = [];
  const versions = [];
  const fetchFn = loggedFetch(proxy.origin, log, bodies, versions);
  const info = { name: `openapi-mcp-ts-oauth-proxy-${user}`, version: '0' };
  const transport = () =>
    sdk === 1
      ? new Transport1(new URL(proxy.url), { authProvider: provider, fetch: fetchFn })
      : new StreamableHTTPClientTransport(new URL(proxy.url), { authProvider: provider, fetch: fetchFn });
  const client = () => (sdk === 1 ? new Client1(info) : new Client(info, { versionNegotiation: { mode: ERAS[era].mode } }));

  const first = transport();
  let err;
  try {
    await client().connect(first);
  } catch (e) {
    err = e;
  }
  check(err && /unauthori[sz]ed/i.test(`${err.name} ${err.message}`), `${user}: the first connect needs the user's authorization: ${String(err?.message ?? err).slice(0, 100)}`);
  const a = provider.authorizeUrl?.searchParams;
  const clientId = cimd ? cimd.url : provider._info?.client_id;
  check(
    a && a.get('response_type') === 'code' && a.get('code_challenge_method') === 'S256' && /^[A-Za-z0-9_-]{43}$/.test(a.get('code_challenge') ?? '') &&
      a.get('resource') === proxy.url && a.get('redirect_uri') === REDIRECT && a.get('state') === provider.sentState && a.get('client_id') === clientId &&
      provider.authorizeUrl.origin + provider.authorizeUrl.pathname === `${proxy.origin}/authorize`,
    `${user}: the SDK sent the user to the proxy's /authorize with PKCE S256, state, resource=${a?.get('resource')} and client_id ${cimd ? '= its metadata document URL' : 'from registration'}`,
  );
  const h = provider.hops.map((u) => new URL(u));
  const up = h[1]?.searchParams;
  check(
    h.length === 4 && `${h[1].origin}${h[1].pathname}` === as.authorize && up.get('client_id') === 'upstream-client' && up.get('redirect_uri') === `${proxy.origin}/oauth/callback` &&
      up.get('code_challenge_method') === 'S256' && up.get('code_challenge') !== a?.get('code_challenge') && up.get('state') !== a?.get('state') &&
      `${h[2].origin}${h[2].pathname}` === `${proxy.origin}/oauth/callback` && h[3].href.startsWith(REDIRECT),
    `${user}: the browser went /authorize -> the API's authorize page (the proxy's own client id, PKCE, state) -> /oauth/callback -> the redirect URI: ${h.map((u) => u.pathname).join(' -> ')}`,
  );
  check(provider.consents === 1, `${user}: approved the client on the proxy's consent page (once) before the API's sign-in`);
  const cb = provider.callback;
  check(cb?.get('code') && cb.get('state') === provider.sentState && cb.get('iss') === proxy.origin, `${user}: back at the client with the proxy's code, its state and iss=${cb?.get('iss')}`);
  if (!cb?.get('code')) throw new Error(`${user}: the sign-in did not come back to the client; nothing more to check`);
  await (sdk === 1 ? first.finishAuth(cb.get('code')) : first.finishAuth(cb));
  await first.close().catch(() => {});

  const c = client();
  await c.connect(transport());
  const reg = cimd ? [] : [/^POST proxy\/register 201$/];
  check(
    inOrder(log, [/^POST proxy\/mcp 401$/, /^GET proxy\/\.well-known\/oauth-protected-resource\/mcp 200$/, /^GET proxy\/\.well-known\/oauth-authorization-server 200$/, ...reg, /^POST proxy\/token 200$/, /^POST proxy\/mcp 200$/]) &&
      (cimd ? !log.some((l) => l.includes('/register')) : true),
    `${user}: the SDK went 401 -> protected resource metadata -> AS metadata -> ${cimd ? 'no registration (metadata document)' : 'registration'} -> token -> MCP by itself: ${log.filter((l) => !l.startsWith('POST proxy/mcp 20') && !l.startsWith('GET proxy/mcp')).join(', ')}`,
  );
  if (cimd) check(cimd.fetched.some((f) => f.url === '/clients/ts-e2e.json' && !f.authorization), `${user}: the proxy fetched the client's metadata document over https (no credentials)`);
  const mcpTokens = () => provider.saved.flatMap((t) => [t.access_token, t.refresh_token]).filter(Boolean);
  check(provider._tokens?.access_token && provider._tokens?.refresh_token && !/^upstream-/.test(provider._tokens.access_token), `${user}: the SDK holds the proxy's own access and refresh tokens`);

  const names = (await c.listTools()).tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === '["per_add_pet","per_get_me"]', `${user}: tools/list: ${names}`);
  upstream.requests.length = 0;
  const r = await c.callTool({ name: 'per_get_me', arguments: {} });
  const text = JSON.stringify(r.structuredContent ?? r.content);
  check(!r.isError && text.replace(/[\s\\]/g, '').includes(`"login":"${user}"`), `${user}: get_me answered as ${user}: ${text.slice(0, 80)}`);
  const spoken = [...new Set(versions)];
  check(spoken.length === 1 && spoken[0] === era, `${user}: every MCP request that named a protocol version named ${spoken}`);
  const sent = upstream.requests[0];
  check(
    upstream.requests.length === 1 && sent.method === 'GET' && sent.url === '/me' && sent.user === user && sent.authorization.startsWith('Bearer upstream-at-'),
    `${user}: the API got GET /me with ${user}'s own API token (Authlib's)`,
  );
  check(!mcpTokens().some((t) => sent.authorization.includes(t)), `${user}: no MCP token reached the API`);
  // The SDK asked for the scopes the protected resource metadata lists; the API's server granted
  // them, so the tool needing pets:write goes through too, as the same user.
  check(
    a.get('scope') === 'pets:read pets:write' && provider._tokens.scope === 'pets:read pets:write',
    `${user}: the SDK asked for and got the metadata's scopes_supported: ${provider._tokens.scope}`,
  );
  const added = await c.callTool({ name: 'per_add_pet', arguments: { name: 'rex' } });
  const last = upstream.requests[upstream.requests.length - 1];
  check(
    !added.isError && JSON.stringify(added.content).replace(/[\s\\]/g, '').includes(`"owner":"${user}"`) && last.method === 'POST' && last.url === '/pets' && last.user === user,
    `${user}: add_pet (pets:write) reached the API as POST /pets with ${user}'s token`,
  );

  // The proxy refuses the access token (as it would after its 15 minutes): the SDK answers the 401
  // with its refresh token at the proxy's /token, by itself, and the call goes through.
  const before = provider._tokens;
  const [head, payload, sig] = before.access_token.split('.');
  provider._tokens = { ...before, access_token: [head, payload, (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)].join('.') };
  const hops = provider.hops.length;
  log.length = 0;
  upstream.requests.length = 0;
  const again = await c.callTool({ name: 'per_get_me', arguments: {} });
  check(
    !again.isError && JSON.stringify(again.content).replace(/[\s\\]/g, '').includes(`"login":"${user}"`) &&
      inOrder(log, [/^POST proxy\/mcp 401$/, /^POST proxy\/token 200$/, /^POST proxy\/mcp 200$/]) && provider.hops.length === hops,
    `${user}: a refused access token -> the SDK's refresh-token grant -> the call went through, no new sign-in: ${log.join(', ')}`,
  );
  check(
    provider._tokens.access_token !== before.access_token && provider._tokens.refresh_token && provider._tokens.refresh_token !== before.refresh_token &&
      upstream.requests.length === 1 && upstream.requests[0].user === user,
    `${user}: new access and refresh tokens (rotation); the API got ${user}'s token again`,
  );
  await c.close();
  return { provider, bodies, mcpTokens: mcpTokens() };
}

async function main() {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'ts-oauth-proxy-'));
  const as = await authServer();
  const upstream = await api(as);
  const specPath = join(dir, 'api.yaml');
  writeFileSync(specPath, spec(as));
  const cimd = await metadataDocumentServer(dir);
  const proxy = await startProxy(specPath, upstream.url, join(dir, 'oauth.sqlite3'), cimd?.ca);
  await as.ask(`allow ${proxy.origin}/oauth/callback`);
  check(proxy.lines.some((l) => l.includes(`${proxy.origin}/oauth/callback`)), 'the start-up line names the callback URL to register at the API');
  const runs = [
    { label: '@modelcontextprotocol/client 2.x, 2025-11-25, dynamic registration', sdk: 2, era: '2025-11-25', user: 'alice' },
    { label: `@modelcontextprotocol/client 2.x, 2026-07-28, ${cimd ? 'Client ID Metadata Document' : 'dynamic registration'}`, sdk: 2, era: '2026-07-28', user: 'bob', cimd },
    { label: '@modelcontextprotocol/sdk 1.x, 2025-11-25, dynamic registration', sdk: 1, era: '2025-11-25', user: 'carol' },
  ];
  const seen = [];
  try {
    for (const run of runs) {
      console.log(`[${run.label}]`);
      seen.push(await dance({ ...run, proxy, as, upstream }));
    }
    const state = await as.ask('state');
    const apiTokens = state.tokens;
    check(apiTokens.length >= 6 && state.challenges.every(([m, u]) => m === 'S256' && u === `${proxy.origin}/oauth/callback`), `the API's authorization server issued ${apiTokens.length} tokens, each after the proxy's S256 PKCE`);
    const clientSaw = seen.flatMap((s) => [...s.bodies, ...s.provider.hops, JSON.stringify(s.provider.saved), JSON.stringify(s.provider._info ?? {})]).join('\n');
    check(
      ['alice', 'bob', 'carol'].every((u) => clientSaw.replace(/[\s\\]/g, '').includes(`"login":"${u}"`)) &&
        !apiTokens.some((t) => clientSaw.includes(t)) && !/upstream-(at|rt)-/.test(clientSaw),
      `the MCP clients never saw an API token (${clientSaw.length} bytes read: responses, tool results, redirects, stored tokens)`,
    );
    proxy.child.kill('SIGTERM');
    await new Promise((r) => proxy.child.once('exit', r));
    const logText = proxy.lines.join('\n');
    const mcp = seen.flatMap((s) => s.mcpTokens);
    check(
      mcp.length >= 6 && ![...apiTokens, ...mcp].some((t) => logText.includes(t)) && !logText.includes(UPSTREAM_SECRET) && !logText.includes(STORE_KEY),
      'no API token, MCP token, client secret or store key in the proxy log',
    );
  } finally {
    proxy.child.kill('SIGTERM');
    as.child.stdin.end();
    as.child.kill('SIGTERM');
    upstream.server.close();
    cimd?.server.close();
  }
  console.log(
    failures
      ? `oauth proxy (TypeScript SDK): ${failures} check(s) failed`
      : `oauth proxy (TypeScript SDK): all checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.log(`FAIL: ${e?.stack ?? e}`);
  process.exit(1);
});
