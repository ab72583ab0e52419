/**
 * `platformui-emulator`: starts the emulator from a shell.
 *
 *     platformui-emulator [--port N] [--host H]
 *
 * @module
 */
import { startEmulator } from './index.ts';

const USAGE = 'Usage: platformui-emulator [--port N] [--host H]\n';

/** Parses `--port N`, `--port=N`, `--host H`, `--host=H`, `--help`. */
function parseArgs(argv: readonly string[]): { port: number; host: string; help: boolean } {
  const out = { port: 0, host: '127.0.0.1', help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') {
      out.help = true;
      continue;
    }
    const m = /^--(port|host)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`Unknown argument: ${arg}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === '') throw new Error(`--${m[1]} needs a value`);
    if (m[1] === 'port') {
      const port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid port: ${value}`);
      out.port = port;
    } else {
      out.host = value;
    }
  }
  return out;
}

async function main(): Promise<void> {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  const emulator = await startEmulator({ port: args.port, host: args.host });
  const tokens = [...emulator.registry.tokens].map(([token, ids]) => `  ${token} -> ${[...ids].join(', ')}`);
  process.stdout.write(`platformui emulator listening on ${emulator.url}\nBearer tokens:\n${tokens.join('\n')}\n`);

  const stop = (signal: string) => {
    process.stdout.write(`\n${signal}: stopping\n`);
    emulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
