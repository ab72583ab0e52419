// The `platformui` command line in the test's own process: `main()` of src/cli/main.ts, which the bin
// (src/cli/bin.ts) runs, with the test's buffers as its standard output and error (neither a terminal,
// as a child process's pipes are not), the test's environment as `process.env` for the run (the clients
// read PLATFORMUI_* there themselves), and the test's folder as the working directory. It gives what a
// spawned `node cli.js …` gave: the exit code, standard output, standard error, without a Node start
// and a bundle to load per command. What only a process shows (signals, a closed pipe, the bins, a
// shell, a terminal) stays in child processes (test/cli/main.int.test.ts).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';

/** What a command left: its exit code and its two outputs, whole. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Where and with what a command runs. */
export interface CliRunOptions {
  /** The whole environment of the command (a child process's `env`): see {@link baseEnv}. */
  env?: NodeJS.ProcessEnv;
  /** Its working directory (a child process's `cwd`); the test's own when not given. */
  cwd?: string;
}

/** The test process's environment without anything that would configure the command line. */
export function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('PLATFORMUI_') || k === 'NO_COLOR' || k === 'FORCE_COLOR') delete env[k];
  return env;
}

/** Makes `process.env` exactly `env` (in place: code holding `process.env` sees it); returns what undoes it. */
function swapEnv(env: NodeJS.ProcessEnv): () => void {
  const saved = { ...process.env };
  const become = (next: NodeJS.ProcessEnv) => {
    for (const k of Object.keys(process.env)) if (!(k in next)) delete process.env[k];
    for (const [k, v] of Object.entries(next)) if (v !== undefined) process.env[k] = v;
  };
  become(env);
  return () => become(saved);
}

let running: string | undefined;

/**
 * Starts a command; `out()` and `err()` are what it wrote so far, `done` its end. One at a time: the
 * environment and the working directory are the process's.
 */
export function startCli(args: readonly string[], options: CliRunOptions = {}): { out(): string; err(): string; done: Promise<CliResult> } {
  if (running !== undefined) throw new Error(`startCli(${JSON.stringify(args)}) while \`platformui ${running}\` runs: one command at a time in the test's process`);
  running = args.join(' ');
  let stdout = '';
  let stderr = '';
  const text = (chunk: unknown) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
  const io = {
    stdout: { write: (chunk: unknown) => ((stdout += text(chunk)), true) },
    stderr: { write: (chunk: unknown) => ((stderr += text(chunk)), true) },
    env: options.env ?? baseEnv(),
  };
  const restoreEnv = swapEnv(io.env);
  const cwd = process.cwd();
  if (options.cwd !== undefined) process.chdir(options.cwd);
  const done = (async (): Promise<CliResult> => {
    try {
      const code = await main(args, io);
      return { code, stdout, stderr };
    } finally {
      process.chdir(cwd);
      restoreEnv();
      running = undefined;
    }
  })();
  return { out: () => stdout, err: () => stderr, done };
}

/** Runs a command to its end. */
export const runCli = (args: readonly string[], options: CliRunOptions = {}): Promise<CliResult> => startCli(args, options).done;

/**
 * A folder with a `platformui` command for a shell's PATH that runs in the test's process: a small Node
 * script hands its arguments, environment and working directory to {@link runCli} over loopback and
 * writes back what the command wrote, exiting with its code. For lines a shell must read (`$(…)`, `>`)
 * where the process itself is not the point. `close()` stops taking commands.
 */
export async function cliOnPath(parent: string): Promise<{ bin: string; close(): Promise<void> }> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    let request = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => void (request += chunk));
    socket.on('end', () => {
      const { argv, env, cwd } = JSON.parse(request) as { argv: string[]; env: NodeJS.ProcessEnv; cwd: string };
      runCli(argv, { env, cwd })
        .catch((err: unknown): CliResult => ({ code: 70, stdout: '', stderr: `platformui (the test's): ${String(err)}\n` }))
        .then((result) => socket.end(JSON.stringify(result)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const bin = mkdtempSync(join(parent, 'bin-'));
  const client = join(bin, 'platformui.mjs');
  writeFileSync(
    client,
    [
      "import { connect } from 'node:net';",
      `const socket = connect(${port}, '127.0.0.1');`,
      'socket.end(JSON.stringify({ argv: process.argv.slice(2), env: process.env, cwd: process.cwd() }));',
      "let answer = '';",
      "socket.setEncoding('utf8').on('data', (chunk) => (answer += chunk));",
      "socket.on('end', () => {",
      '  const { code, stdout, stderr } = JSON.parse(answer);',
      '  process.stdout.write(stdout, () => process.stderr.write(stderr, () => process.exit(code)));',
      '});',
      "socket.on('error', (err) => { process.stderr.write(`platformui (the test's): ${err.message}\\n`); process.exit(70); });",
      '',
    ].join('\n'),
  );
  writeFileSync(join(bin, 'platformui'), `#!/bin/sh\nexec '${process.execPath}' '${client}' "$@"\n`, { mode: 0o755 });
  return { bin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
