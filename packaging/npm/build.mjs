#!/usr/bin/env node
// Builds the npm packages of openapi-mcp from an already-built binary (no Rust build here):
//
//   openapi-mcp                the command: a small launcher (openapi-mcp/bin/openapi-mcp.js) with
//                              every platform package as an optionalDependency at the same version
//   @openapi-mcp/<os>-<cpu>    one per platform: the binary, with `os`/`cpu` (and `libc` on Linux)
//                              so that npm installs only the one matching the machine
//
// and packs each with `npm pack` into OUT. A release runs this once per platform binary (the
// main package is the same each time); CI runs it for the Linux x86-64 binary it built.
//
// Usage: node packaging/npm/build.mjs --bin target/release/openapi-mcp --out dist/npm
//            [--platform linux-x64] [--version 0.1.0]
//   --platform: one of PLATFORMS below (default: this machine's)
//   --version:  default: the workspace version in Cargo.toml
// Prints the tarballs' paths, one a line.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

// npm's `os`/`cpu` values (process.platform / process.arch). The Linux binaries link glibc.
const PLATFORMS = {
  'linux-x64': { os: 'linux', cpu: 'x64', libc: 'glibc' },
  'linux-arm64': { os: 'linux', cpu: 'arm64', libc: 'glibc' },
  'darwin-x64': { os: 'darwin', cpu: 'x64' },
  'darwin-arm64': { os: 'darwin', cpu: 'arm64' },
  'win32-x64': { os: 'win32', cpu: 'x64' },
};

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (!k.startsWith('--') || v === undefined) {
      throw new Error(`usage: build.mjs --bin BIN --out DIR [--platform P] [--version V] (at ${k})`);
    }
    out[k.slice(2)] = v;
  }
  if (!out.bin || !out.out) {
    throw new Error('usage: build.mjs --bin BIN --out DIR [--platform P] [--version V]');
  }
  return out;
}

function workspaceVersion() {
  const toml = fs.readFileSync(path.join(root, 'Cargo.toml'), 'utf8');
  const section = toml.split('[workspace.package]')[1] ?? '';
  const m = section.match(/^version\s*=\s*"([^"]+)"/m);
  if (!m) throw new Error('no [workspace.package] version in Cargo.toml');
  return m[1];
}

const common = {
  license: 'Apache-2.0',
  homepage: 'https://github.com/openapi-mcp/openapi-mcp#readme',
  repository: { type: 'git', url: 'git+https://github.com/openapi-mcp/openapi-mcp.git' },
};

function pack(dir, out) {
  const json = execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return path.join(out, JSON.parse(json)[0].filename);
}

const a = args();
const version = a.version ?? workspaceVersion();
const platform = a.platform ?? `${process.platform}-${process.arch}`;
const target = PLATFORMS[platform];
if (!target) throw new Error(`unknown platform ${platform}: one of ${Object.keys(PLATFORMS).join(', ')}`);
const out = path.resolve(a.out);
fs.mkdirSync(out, { recursive: true });
const stage = fs.mkdtempSync(path.join(out, '.stage-'));
try {
  // The platform package: the binary and a package.json.
  const exe = target.os === 'win32' ? 'openapi-mcp.exe' : 'openapi-mcp';
  const pdir = path.join(stage, platform);
  fs.mkdirSync(path.join(pdir, 'bin'), { recursive: true });
  fs.copyFileSync(a.bin, path.join(pdir, 'bin', exe));
  fs.chmodSync(path.join(pdir, 'bin', exe), 0o755);
  const platformPkg = {
    name: `@openapi-mcp/${platform}`,
    version,
    description: `The ${platform} binary of openapi-mcp (installed by the openapi-mcp package)`,
    ...common,
    os: [target.os],
    cpu: [target.cpu],
    ...(target.libc ? { libc: [target.libc] } : {}),
    files: [`bin/${exe}`],
    preferUnplugged: true,
  };
  fs.writeFileSync(path.join(pdir, 'package.json'), JSON.stringify(platformPkg, null, 2) + '\n');
  fs.writeFileSync(
    path.join(pdir, 'README.md'),
    `# @openapi-mcp/${platform}\n\nThe ${platform} binary of [openapi-mcp](https://www.npmjs.com/package/openapi-mcp). ` +
      'Install `openapi-mcp`, not this package: it picks the binary for your platform.\n',
  );

  // The main package: the launcher, README, package.json.
  const mdir = path.join(stage, 'openapi-mcp');
  fs.cpSync(path.join(here, 'openapi-mcp'), mdir, { recursive: true });
  fs.chmodSync(path.join(mdir, 'bin', 'openapi-mcp.js'), 0o755);
  const mainPkg = {
    name: 'openapi-mcp',
    version,
    description:
      'Put any OpenAPI-described REST API in front of LLM agents as MCP tools: `npx -y openapi-mcp proxy SPEC`',
    keywords: ['mcp', 'model-context-protocol', 'openapi', 'swagger', 'mcp-server', 'llm'],
    ...common,
    bin: { 'openapi-mcp': 'bin/openapi-mcp.js' },
    files: ['bin/openapi-mcp.js'],
    engines: { node: '>=18' },
    optionalDependencies: Object.fromEntries(
      Object.keys(PLATFORMS).map((p) => [`@openapi-mcp/${p}`, version]),
    ),
  };
  fs.writeFileSync(path.join(mdir, 'package.json'), JSON.stringify(mainPkg, null, 2) + '\n');

  console.log(pack(mdir, out));
  console.log(pack(pdir, out));
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}
