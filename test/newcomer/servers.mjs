// The servers the README's examples talk to: `platformui emulator` from the
// installed package, and the placeholder hosts of the README and the help
// mapped onto them.
import { join } from 'node:path';
import { killGroup, spawnTracked, StepFailure } from './lib.mjs';

/**
 * The documented placeholder hosts, and which emulator stands for each.
 * `default` is `platformui emulator` with no option at all; `local` and
 * `local-2` are `platformui emulator --personality local`, because the README
 * writes a self-hosted server as port 8188 (and the pool's GPUs as gpu-a and
 * gpu-b: two servers, so two emulators). A host matches only as a whole
 * (`https://cloud.example` does not match `https://cloud.example.com`).
 */
export const PLACEHOLDERS = [
  ['https://registry.example.com', 'default'], // RegistryClient
  ['https://api.example.com', 'default'], // ProxyClient
  ['https://cloud.example.com', 'default'], // CloudClient, codegen
  ['https://cloud.example', 'default'], // the command line's `export PLATFORMUI_CLOUD_URL=…`
  ['http://127.0.0.1:8787', 'default'], // `platformui-emulator --port 8787`
  ['http://127.0.0.1:8188', 'local'],
  ['http://localhost:8188', 'local'],
  ['http://gpu-a:8188', 'local'],
  ['http://gpu-b:8188', 'local-2'],
  ['https://cloud.comfy.org', 'v2'], // Comfy API v2: the published spec, with the emulator's key
  ['http://127.0.0.1:8189', 'v2-real'], // comfy-api-proxy on loopback: no key
];

/** The personality of each emulator besides the default one. */
const PERSONALITY = { local: 'local', 'local-2': 'local', v2: 'v2', 'v2-real': 'v2-real' };

const hostPattern = (host) => new RegExp(`${host.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?![\\w.-])`, 'g');

/** The emulators `text` needs besides the default one ('local', 'local-2'). */
export function emulatorsFor(text) {
  return [...new Set(PLACEHOLDERS.filter(([host, which]) => which !== 'default' && hostPattern(host).test(text)).map(([, w]) => w))];
}

/** `text` with every placeholder host replaced by the URL of its emulator in `urls` ({ default, local, … }). */
export function mapHosts(text, urls) {
  let out = text;
  for (const [host, which] of PLACEHOLDERS) out = out.replace(hostPattern(host), urls[which] ?? host);
  return out;
}

/**
 * Starts `platformui emulator [args]` from the app's installed package and
 * resolves once it prints its URL: `{ url, printed, env, stop() }`. `env` is
 * what a user exports from what it printed (lines `PLATFORMUI_X=value` when it
 * prints them, else the documented EMULATOR_TOKEN / EMULATOR_API_KEY of
 * `@platformui/sdk/emulator`, given in `credentials`). `stop()` sends SIGINT
 * and resolves with the exit code.
 */
export function startEmulator({ appDir, env, args = [], credentials, log, timeout = 30_000 }) {
  const bin = join(appDir, 'node_modules', '.bin', 'platformui');
  log?.(`\n$ platformui emulator ${args.join(' ')}`);
  const child = spawnTracked(bin, ['emulator', ...args], { cwd: appDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  let stderr = '';
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? signal)));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    let ready = false;
    const fail = (why) => {
      if (ready) return;
      killGroup(child, 'SIGKILL');
      reject(new StepFailure(`platformui emulator ${args.join(' ')}: ${why}\n${printed}${stderr}`));
    };
    const timer = setTimeout(() => fail(`printed no URL within ${timeout / 1000}s`), timeout);
    child.on('error', (err) => fail(String(err)));
    exited.then((code) => fail(`exited (${code}) before printing its URL`));
    child.stdout.on('data', (d) => {
      printed += d;
      const m = /listening on (http:\/\/\S+)/.exec(printed);
      if (!m) return;
      ready = true;
      child.stdout.removeAllListeners('data');
      child.stdout.on('data', (more) => (printed += more));
      clearTimeout(timer);
      // The rest of the banner comes in the same write; a short pause lets it in.
      setTimeout(() => {
        const url = m[1];
        log?.(printed.trimEnd());
        const exported = Object.fromEntries([...printed.matchAll(/\b(PLATFORMUI_[A-Z_]+)=(\S+)/g)].map((x) => [x[1], x[2]]));
        const fallback = { PLATFORMUI_BASE_URL: url, PLATFORMUI_TOKEN: credentials.token, PLATFORMUI_CLOUD_URL: url, PLATFORMUI_API_KEY: credentials.apiKey };
        resolve({
          url,
          env: { ...fallback, ...exported },
          async stop() {
            killGroup(child, 'SIGINT');
            const kill = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
            const code = await exited;
            clearTimeout(kill);
            if (stderr.trim()) log?.(`[emulator stderr]\n${stderr}`);
            return code;
          },
        });
      }, 50);
    });
  });
}

/**
 * Starts the default emulator and the `extra` ones ('local', 'local-2'),
 * calls `fn({ urls, env })`, then stops them all (each must exit 0 on SIGINT).
 */
export async function withEmulators({ appDir, env, credentials, log, extra = [] }, fn) {
  const started = {};
  let value;
  let ok = false;
  try {
    started.default = await startEmulator({ appDir, env, credentials, log });
    for (const name of extra) started[name] = await startEmulator({ appDir, env, credentials, log, args: ['--personality', PERSONALITY[name]] });
    const urls = Object.fromEntries(Object.entries(started).map(([k, v]) => [k, v.url]));
    value = await fn({ urls, env: started.default.env });
    ok = true;
  } finally {
    const codes = await Promise.all(Object.values(started).map((e) => e.stop()));
    const bad = Object.keys(started).filter((_, i) => codes[i] !== 0);
    // Reported only when fn itself succeeded: its own failure says more.
    if (bad.length && ok) throw new StepFailure(`emulator ${bad.join(', ')} did not exit 0 on SIGINT (${codes.join(', ')})`);
  }
  return value;
}
