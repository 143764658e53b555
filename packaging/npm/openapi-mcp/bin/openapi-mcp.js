#!/usr/bin/env node
// The `openapi-mcp` command of the npm package: runs the prebuilt binary of this platform, which
// comes in one of the optional dependencies `@openapi-mcp/<os>-<cpu>` (npm installs only the one
// whose `os`/`cpu`/`libc` match, the way esbuild and biome ship their binaries).
//
// OPENAPI_MCP_BINARY=/path/to/openapi-mcp runs that binary instead (a cargo-built one, or a
// platform without a package).
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');

const PACKAGES = {
  'linux x64': '@openapi-mcp/linux-x64',
  'linux arm64': '@openapi-mcp/linux-arm64',
  'darwin x64': '@openapi-mcp/darwin-x64',
  'darwin arm64': '@openapi-mcp/darwin-arm64',
  'win32 x64': '@openapi-mcp/win32-x64',
};

function fail(message) {
  process.stderr.write(`openapi-mcp: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  if (process.env.OPENAPI_MCP_BINARY) {
    return process.env.OPENAPI_MCP_BINARY;
  }
  const key = `${process.platform} ${process.arch}`;
  const pkg = PACKAGES[key];
  if (!pkg) {
    fail(
      `no prebuilt binary for ${key}; install it with \`cargo install openapi-mcp-cli\` ` +
        'and set OPENAPI_MCP_BINARY to its path',
    );
  }
  const exe = process.platform === 'win32' ? 'openapi-mcp.exe' : 'openapi-mcp';
  let path;
  try {
    path = require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    fail(
      `the binary package ${pkg} is not installed: it is an optional dependency of openapi-mcp, ` +
        'so an install with --omit=optional (or --no-optional), or a lock file made on another ' +
        'platform, leaves it out; reinstall openapi-mcp without those',
    );
  }
  if (process.platform !== 'win32') {
    try {
      fs.accessSync(path, fs.constants.X_OK);
    } catch {
      // Some package managers drop the executable bit when unpacking.
      fs.chmodSync(path, 0o755);
    }
  }
  return path;
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: 'inherit' });
// The MCP client stops its server with a signal to this process: pass it on.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (e) => fail(`cannot run ${child.spawnfile}: ${e.message}`));
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
