'use strict';
// Runs one of the toolkit's binaries from the platform package (@mcp-conformance/linux-x64),
// installed as an optional dependency: npm installs only the one whose os/cpu/libc match.
// The binary gets this process's stdio and arguments; SIGINT, SIGTERM, SIGHUP and SIGQUIT are
// passed on to it; its exit code becomes ours, and if a signal ended it, that signal ends us
// too, so a shell or CI sees 130/143 as if it had run the binary itself.
// packaging/build.sh fills in the @...@ values.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');

const PLATFORM_PACKAGE = '@PLATFORM_PACKAGE@';
const VERSION = '@VERSION@';
const GLIBC_MIN = '@GLIBC@';
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
const FROM_SOURCE = [
  'Build from source instead (Rust >= @RUST_VERSION@), from a checkout of the repository:',
  '  cargo install --locked --path conformance   # mcp-conformance',
  '  cargo install --locked --path server        # mcp-echo-server',
  '  cargo install --locked --path bench         # mcp-bench',
  'See docs/install.md there.',
].join('\n');

function fail(tool, lines) {
  process.stderr.write(`${tool}: ${lines.join('\n')}\n`);
  process.exit(1);
}

function versionBelow(have, need) {
  const a = have.split('.').map(Number);
  const b = need.split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] || 0;
    const y = b[i] || 0;
    if (x !== y) return x < y;
  }
  return false;
}

// What this machine lacks for the one prebuilt binary set, or null if it can run it.
function unsupported() {
  const platform = `${process.platform}-${process.arch}`;
  if (process.platform !== 'linux' || process.arch !== 'x64') return platform;
  process.report.excludeNetwork = true; // the report's network part can wait on DNS
  const report = process.report.getReport();
  const glibc = report.header && report.header.glibcVersionRuntime;
  if (!glibc) return `${platform} with musl libc (no glibc)`;
  if (versionBelow(glibc, GLIBC_MIN)) return `${platform} with glibc ${glibc}`;
  return null;
}

function binaryPath(tool) {
  const missing = unsupported();
  if (missing) {
    fail(tool, [
      `no prebuilt binary for ${missing} yet.`,
      `mcp-conformance ${VERSION} ships binaries for linux x64 with glibc >= ${GLIBC_MIN} only.`,
      FROM_SOURCE,
    ]);
  }
  let manifest;
  try {
    manifest = require.resolve(`${PLATFORM_PACKAGE}/package.json`);
  } catch {
    fail(tool, [
      `the package holding the binaries, ${PLATFORM_PACKAGE}@${VERSION}, is not installed.`,
      'It is an optional dependency of mcp-conformance: install without --omit=optional ' +
        '(or --no-optional), e.g. npm install mcp-conformance, and check that npm did not skip it.',
    ]);
  }
  const bin = path.join(path.dirname(manifest), 'bin', tool);
  if (!fs.existsSync(bin)) {
    fail(tool, [
      `${PLATFORM_PACKAGE} is installed at ${path.dirname(manifest)} but has no bin/${tool}.`,
      `Reinstall it: npm install ${PLATFORM_PACKAGE}@${VERSION}`,
    ]);
  }
  return bin;
}

module.exports = function launch(tool) {
  const bin = binaryPath(tool);
  const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, forward);
  child.on('error', (err) => fail(tool, [`cannot run ${bin}: ${err.message}`]));
  child.on('exit', (code, signal) => {
    for (const s of FORWARDED) process.removeListener(s, forward);
    if (signal === null) process.exit(code);
    // Die of the same signal; should it be ignored here, exit as a shell would report it.
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 1000);
  });
};
