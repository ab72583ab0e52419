// The command line's grammars and decisions, in process: durations, targets,
// --set values, which node an --input means, every error class's exit code
// and line, and main()'s parsing (globals anywhere, help, usage errors).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  ExecutionError,
  InsufficientCreditsError,
  InvalidArgumentError,
  JobCancelledError,
  JobTimeoutError,
  MissingCredentialsError,
  NotFoundError,
  PermissionDeniedError,
  SubmissionError,
  SubscriptionInactiveError,
  Workflow,
  WorkflowValidationError,
} from '../../src/index.ts';
import { parseAssignment, parseDuration, parsePositiveInt, parseTarget, parseValue, UsageError } from '../../src/cli/args.ts';
import { describeFailure, Interrupted, serverMessage } from '../../src/cli/errors.ts';
import { COMMANDS, main } from '../../src/cli/main.ts';
import { describeInput } from '../../src/cli/commands/object-info.ts';
import { resolveTarget } from '../../src/cli/targets.ts';

describe('parseDuration', () => {
  it.each([
    ['10m', 600_000],
    ['90s', 90_000],
    ['1h', 3_600_000],
    ['1.5h', 5_400_000],
    ['250ms', 250],
    ['1500', 1500],
    [' 2M ', 120_000],
  ])('%s → %d ms', (text, ms) => expect(parseDuration(text, '--timeout')).toBe(ms));

  it.each(['', '0', '-5s', '10 minutes', 'soon', '25d', '30000h'])('refuses %j', (text) => {
    expect(() => parseDuration(text, '--timeout')).toThrow(UsageError);
    expect(() => parseDuration(text, '--timeout')).toThrow(/^--timeout must be a duration like 90s, 10m, 1h/);
  });
});

describe('parsePositiveInt, parseAssignment, parseValue', () => {
  it('numbers in range only', () => {
    expect(parsePositiveInt('20', '--limit', 1000)).toBe(20);
    for (const bad of ['0', '1001', '2.5', 'x', '-1']) expect(() => parsePositiveInt(bad, '--limit', 1000)).toThrow('--limit must be a whole number from 1 to 1000');
  });

  it('splits at the first =', () => {
    expect(parseAssignment('6.inputs.text=a=b', '--set', 'X')).toEqual({ left: '6.inputs.text', right: 'a=b' });
    expect(parseAssignment('image=', '--input', 'X')).toEqual({ left: 'image', right: '' });
    expect(() => parseAssignment('=x', '--set', 'NODE.INPUT=VALUE')).toThrow('--set takes NODE.INPUT=VALUE, got "=x"');
    expect(() => parseAssignment('novalue', '--set', 'NODE.INPUT=VALUE')).toThrow(UsageError);
  });

  it('JSON when it parses, the text otherwise', () => {
    expect(parseValue('42')).toBe(42);
    expect(parseValue('4.5')).toBe(4.5);
    expect(parseValue('true')).toBe(true);
    expect(parseValue('null')).toBe(null);
    expect(parseValue('["4", 0]')).toEqual(['4', 0]);
    expect(parseValue('"007"')).toBe('007');
    expect(parseValue('a cat')).toBe('a cat');
    expect(parseValue('')).toBe('');
    expect(parseValue('{oops')).toBe('{oops');
  });
});

describe('parseTarget', () => {
  it.each([
    ['6.inputs.text', { node: '6', input: 'text' }],
    ['6.text', { node: '6', input: 'text' }],
    ['KSampler.seed', { node: 'KSampler', input: 'seed' }],
    ['"Load v1.5".image', { node: 'Load v1.5', input: 'image' }],
    ['"Load Photo".inputs.image', { node: 'Load Photo', input: 'image' }],
    ['5.inputs.images.image0', { node: '5', input: 'images.image0' }],
  ])('%s', (text, target) => expect(parseTarget(text, '--set', false)).toEqual(target));

  it('an input alone only where allowed (--input)', () => {
    expect(parseTarget('image', '--input', true)).toEqual({ node: undefined, input: 'image' });
    expect(() => parseTarget('image', '--set', false)).toThrow(/--set: "image" names no input: write <node>\.<input>/);
  });

  it.each(['', '.text', '6.', '"Title.image', '"Title"image', '6.inputs.'])('refuses %j', (text) => {
    expect(() => parseTarget(text, '--set', true)).toThrow(UsageError);
  });
});

describe('resolveTarget', () => {
  const wf = () =>
    Workflow.from({
      '1': { class_type: 'LoadImage', inputs: { image: 'a.png' }, _meta: { title: 'Load Photo' } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'x' }, _meta: { title: 'Save' } },
      '10': { class_type: 'LoadImage', inputs: { image: 'b.png' }, _meta: { title: 'Load Mask' } },
      '11': { class_type: 'LoadImage', inputs: { image: 'c.png' }, _meta: { title: 'Load Mask' } },
    });

  it('a node by id, title or class', () => {
    expect(resolveTarget(wf(), { node: '1', input: 'image' }, '--input').node.id).toBe('1');
    expect(resolveTarget(wf(), { node: 'Load Photo', input: 'image' }, '--input').node.id).toBe('1');
    expect(resolveTarget(wf(), { node: 'SaveImage', input: 'filename_prefix' }, '--set').node.id).toBe('3');
  });

  it('says which nodes when a title or class matches several, or none', () => {
    expect(() => resolveTarget(wf(), { node: 'Load Mask', input: 'image' }, '--input')).toThrow(
      '--input: 2 nodes titled "Load Mask" (#10 LoadImage "Load Mask", #11 LoadImage "Load Mask"): name one by id, like 10.<input>',
    );
    expect(() => resolveTarget(wf(), { node: 'Nope', input: 'x' }, '--set')).toThrow(/^--set: no node with id, title or class "Nope"; the workflow has #1 LoadImage "Load Photo", #2 ImageInvert/);
  });

  it('an input alone: the one node holding a value there, never a link', () => {
    const one = Workflow.from({ '1': { class_type: 'LoadImage', inputs: { image: 'a.png' } }, '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } } });
    expect(resolveTarget(one, { node: undefined, input: 'image' }, '--input')).toMatchObject({ node: { id: '1' }, input: 'image' });
    expect(() => resolveTarget(wf(), { node: undefined, input: 'image' }, '--input')).toThrow(
      '--input: 3 nodes have an input "image" (#1 LoadImage "Load Photo", #10 LoadImage "Load Mask", #11 LoadImage "Load Mask"): say which, like --input "Load Photo".image=… or --input 10.image=… or --input 11.image=…',
    );
    expect(() => resolveTarget(one, { node: undefined, input: 'images' }, '--input')).toThrow('--input: no node has an input "images" holding a value; name the node: --input <node>.images=…');
    const linked = Workflow.from({ '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } } });
    expect(() => resolveTarget(linked, { node: undefined, input: 'image' }, '--input')).toThrow('(#2 ImageInvert take it from a link)');
  });
});

describe('describeFailure: exit codes and lines', () => {
  const cloud = { service: 'cloud' as const };
  const api = (Cls: typeof AuthenticationError, status: number) => new Cls({ status, body: { error: 'x' }, method: 'GET', url: 'http://127.0.0.1:8188/api/queue' });
  it.each([
    ['usage', new UsageError('bad'), 2, 'bad'],
    ['Ctrl-C', new Interrupted('interrupted: job j was stopped'), 130, 'interrupted: job j was stopped'],
    ['standard output closed', new Interrupted('standard output was closed: job j was stopped', 141), 141, 'standard output was closed: job j was stopped'],
    ['abort', new APIUserAbortError(), 130, 'interrupted'],
    ['missing key', new MissingCredentialsError('x', 'apiKey'), 3, 'no API key: set PLATFORMUI_API_KEY or pass --api-key-file FILE'],
    ['401', api(AuthenticationError, 401), 3, 'the server refused the API key (401): check PLATFORMUI_API_KEY or --api-key-file'],
    ['402', api(InsufficientCreditsError, 402), 3, 'not enough credits (402): add credits to the account, then run again'],
    ['429', api(SubscriptionInactiveError, 429), 3, 'the subscription is not active (429): renew it, then run again'],
    ['403', api(PermissionDeniedError, 403), 3, /^not allowed \(403\) for this API key: /],
    ['refused', new APIConnectionError('GET', 'http://127.0.0.1:9/api/queue', 'Connection failed (ECONNREFUSED)'), 4, 'could not reach http://127.0.0.1:9 (Connection failed (ECONNREFUSED)): is the server running? (--server or PLATFORMUI_CLOUD_URL)'],
    ['submission refused', new APIConnectionError('POST', 'http://127.0.0.1:9/api/prompt', 'Connection failed (ECONNREFUSED)', 'ECONNREFUSED', { promptId: 'j' }), 4, 'could not reach http://127.0.0.1:9 (Connection failed (ECONNREFUSED)): is the server running? (--server or PLATFORMUI_CLOUD_URL)'],
    ['submission unconfirmed', new APITimeoutError('POST', 'https://cloud.example.com/api/prompt', 60_000).aboutJob('j'), 4, 'the submission to https://cloud.example.com got no answer, and job j was not found by its id: it may exist (`platformui job j` tells); it was not sent again'],
    ['request timeout', new APITimeoutError('GET', 'https://cloud.example.com/api/queue', 60_000), 4, 'no answer from https://cloud.example.com in 60 s: is the server up? (--server or PLATFORMUI_CLOUD_URL; --timeout to wait longer)'],
    ['short request timeout', new APITimeoutError('GET', 'https://cloud.example.com/api/queue', 1), 4, 'no answer from https://cloud.example.com in 1 ms: is the server up? (--server or PLATFORMUI_CLOUD_URL; --timeout to wait longer)'],
    ['job timeout', new JobTimeoutError('j', 600_000), 1, 'Job j sent nothing for 600000 ms: stopped it; allow more with --timeout'],
    ['failed', new ExecutionError('j', { exception_type: 'OOMError', exception_message: 'oom', node_id: '3', node_type: 'KSampler' }), 1, 'Job j failed in KSampler #3: OOMError: oom'],
    ['cancelled', new JobCancelledError('j'), 1, 'Job j was cancelled'],
    ['refused workflow', new SubmissionError(400, { error: { type: 'x', message: 'Prompt outputs failed validation' }, node_errors: {} }), 1, /^the server refused the workflow: Submission rejected \(400\): Prompt outputs failed validation/],
    ['not found', api(NotFoundError, 404), 1, /^404 GET/],
    ['no server', new InvalidArgumentError('is required: pass it to the client or set PLATFORMUI_CLOUD_URL in Node, got nothing', 'baseUrl'), 2, 'no server: pass --server URL or set PLATFORMUI_CLOUD_URL'],
    ['bad server', new InvalidArgumentError('must be an absolute http(s) URL, got "foo"', 'baseUrl'), 2, 'the server\'s URL (--server or PLATFORMUI_CLOUD_URL) must be an absolute http(s) URL, got "foo"'],
    ['bad argument', new InvalidArgumentError('must be at least 1', 'limit'), 2, 'limit: must be at least 1'],
    ['anything else', new Error('boom'), 1, 'boom'],
  ])('%s', (_, err, code, line) => {
    const f = describeFailure(err, cloud);
    expect(f.code).toBe(code);
    expect(f.lines).toHaveLength(1);
    if (typeof line === 'string') expect(f.lines[0]).toBe(line);
    else expect(f.lines[0]).toMatch(line);
  });

  it('the registry names its own variables', () => {
    expect(describeFailure(new MissingCredentialsError('x', 'token'), { service: 'registry' }).lines).toEqual(['no token: set PLATFORMUI_TOKEN or pass --token-file FILE']);
  });

  it('an invalid workflow: one line per error (warnings left out) and a summary', () => {
    const issue = (severity: 'error' | 'warning', message: string) => ({ severity, code: 'value_not_in_list' as const, path: [], message });
    const f = describeFailure(new WorkflowValidationError([issue('error', '#3 KSampler: a'), issue('warning', '#4 X: w'), issue('error', '#9 SaveImage: b')]), cloud);
    expect(f).toEqual({ code: 1, lines: ['invalid workflow: #3 KSampler: a', 'invalid workflow: #9 SaveImage: b'], summary: 'the workflow has 2 errors: nothing was submitted' });
  });

  it('a 401 when no key was sent: the server wants one, in its own words, and how to give it', () => {
    const noKeySent = { url: 'http://127.0.0.1:8188', how: 'set PLATFORMUI_API_KEY=…, or pass --api-key-file FILE' };
    const missing = new AuthenticationError({ status: 401, body: { error: 'unauthorized', message: 'Missing X-API-Key header' }, method: 'GET', url: 'http://127.0.0.1:8188/api/queue' });
    expect(describeFailure(missing, { service: 'cloud', noKeySent })).toEqual({
      code: 3,
      lines: ['http://127.0.0.1:8188 wants an API key (401: Missing X-API-Key header), and none was sent: set PLATFORMUI_API_KEY=…, or pass --api-key-file FILE'],
    });
    const bare = new AuthenticationError({ status: 401, body: '', method: 'GET', url: 'http://127.0.0.1:8188/api/queue' });
    expect(describeFailure(bare, { service: 'cloud', noKeySent }).lines[0]).toMatch(/^http:\/\/127\.0\.0\.1:8188 wants an API key \(401\), and none was sent: /);
  });

  it('serverMessage: what the server said, without the SDK\'s status, method and URL', () => {
    expect(serverMessage(api(NotFoundError, 404))).toBe('x');
    expect(serverMessage(new NotFoundError({ status: 404, body: { error: 'not_found', message: 'No route for GET /api/jobs' }, method: 'GET', url: 'http://h/api/jobs' }))).toBe('No route for GET /api/jobs');
    expect(serverMessage(new NotFoundError({ status: 404, body: '404: Not Found', method: 'GET', url: 'http://h/api/jobs' }))).toBe('404: Not Found');
    expect(serverMessage(new NotFoundError({ status: 404, body: '', method: 'GET', url: 'http://h/api/jobs' }))).toBe('');
  });
});

describe('object-info input specs', () => {
  it.each([
    [['INT', { default: 20, min: 1, max: 10000 }], ['INT', 'default 20, 1..10000']],
    [[['euler', 'euler_a', 'dpm'], {}], ['COMBO', 'euler | euler_a | dpm']],
    [['COMBO', { options: ['a', 'b'], default: 'a' }], ['COMBO', 'a | b, default "a"']],
    [[['1', '2', '3', '4', '5', '6', '7', '8']], ['COMBO', '1 | 2 | 3 | 4 | 5 | 6 | … (8 in all)']],
    [['STRING', { multiline: true }], ['STRING', 'multiline']],
    [['IMAGE'], ['IMAGE', '']],
  ])('%j', (spec, words) => expect(describeInput(spec)).toEqual(words));
});

describe('main', () => {
  /** Runs main() in this process with buffers for streams. */
  async function run(...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await main(argv, { stdout: { write: (s: string) => void (stdout += s) }, stderr: { write: (s: string) => void (stderr += s) }, env: {} });
    return { code, stdout, stderr };
  }

  it('--help of every command, with an example; global options listed too', async () => {
    for (const c of COMMANDS) {
      const r = await run(...c.name.split(' '), '--help');
      expect(r.code, c.name).toBe(0);
      if (c.passthrough) continue; // its own help: tested against the emulator
      expect(r.stdout, c.name).toMatch(new RegExp(`^Usage: platformui ${c.name}\\b`));
      expect(r.stdout, c.name).toMatch(/\nExamples?:\n {2}platformui /);
      if (c.service !== 'none') expect(r.stdout, c.name).toContain('--api-key-file FILE');
    }
    expect(await run('help', 'nodes', 'search')).toEqual(await run('nodes', 'search', '-h'));
    expect((await run('help')).stdout).toMatch(/^Usage: platformui <command>/);
  });

  it('a group with --help lists its commands (exit 0); nodes search shows every option in its usage', async () => {
    for (const argv of [['nodes', '--help'], ['help', 'nodes'], ['nodes', '-h']]) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: platformui nodes <command>/);
      expect(r.stdout).toMatch(/^ {2}nodes search +search the registry/m);
    }
    const usage = (await run('nodes', 'search', '--help')).stdout.split('\n')[0]!;
    for (const option of ['--os', '--accelerator', '--limit', '--page', '--all']) expect(usage).toContain(option);
  });

  it('the exit codes in the help include 141 (standard output closed)', async () => {
    expect((await run('--help')).stdout).toMatch(/141 standard\s+output closed/);
  });

  it('global options anywhere: before the command, between its arguments', async () => {
    for (const argv of [
      ['--json', '--server', 'http://x.invalid', 'run', '--help'],
      ['run', '--server=http://x.invalid', '--help', '--json'],
    ]) {
      const r = await run(...argv);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: platformui run/);
    }
  });

  it('usage errors: exit 2 with one line and where to look', async () => {
    const cases: Array<[string[], string]> = [
      [[], ''],
      [['nodes'], 'platformui: nodes: which one? platformui nodes search\n'],
      [['nodes', 'find'], 'platformui: nodes: which one? platformui nodes search\n'],
      [['queue', 'extra'], 'platformui queue: unexpected argument "extra": platformui queue\n(see platformui queue --help)\n'],
      [['jobs', '--limit'], "platformui jobs: Option '--limit <value>' argument missing\n(see platformui jobs --help)\n"],
      [['run', 'wf.json', '--bogus'], "platformui run: Unknown option '--bogus'\n(see platformui run --help)\n"],
      [['queue', '--server'], 'platformui: --server needs a value\n'],
      [['queue', '--json=yes'], 'platformui: --json takes no value\n'],
      [['queue', '--token', 'abc'], 'platformui: --token: a secret on the command line shows in `ps` and in shell history: set PLATFORMUI_TOKEN or pass --token-file FILE\n'],
      [['queue', '--api-key=abc'], 'platformui: --api-key: a secret on the command line shows in `ps` and in shell history: set PLATFORMUI_API_KEY or pass --api-key-file FILE\n'],
    ];
    for (const [argv, first] of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      if (first) expect(r.stderr).toBe(first.includes('(see ') ? first : `${first}(see platformui --help)\n`);
      expect(r.stderr).not.toContain('abc');
    }
  });

  it('--version and -V print the package version, whatever else is on the line', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const argv of [['--version'], ['-V'], ['run', '--version'], ['--version', '--json']]) expect(await run(...argv)).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('did you mean: a misspelt option, global option, command or status', async () => {
    const cases: Array<[string[], string]> = [
      [['run', 'wf.json', '--inptu', 'image=a.png'], "platformui run: Unknown option '--inptu' (did you mean --input?)\n(see platformui run --help)\n"],
      [['queue', '--jsno'], "platformui queue: Unknown option '--jsno' (did you mean --json?)\n(see platformui queue --help)\n"],
      [['--verison'], "platformui: Unknown option '--verison' (did you mean --version?)\n(see platformui --help)\n"],
      [['rn', 'wf.json'], 'platformui: unknown command "rn" (did you mean run?): the commands are example, run, job, jobs, queue, worker, object-info, nodes search, publishers, emulator, codegen\n(see platformui --help)\n'],
      [['jobs', '--status', 'faild'], 'platformui jobs: --status: unknown status "faild" (did you mean failed?); the statuses are pending, in_progress, completed, failed, cancelled\n(see platformui jobs --help)\n'],
      // Nothing close: the plain message.
      [['run', 'wf.json', '--frobnicate'], "platformui run: Unknown option '--frobnicate'\n(see platformui run --help)\n"],
    ];
    for (const [argv, stderr] of cases) expect(await run(...argv), argv.join(' ')).toEqual({ code: 2, stdout: '', stderr });
  });

  it('--timeout is global, checked for every command before any request', async () => {
    for (const argv of [['queue', '--timeout', 'soon'], ['--timeout=0', 'nodes', 'search']]) {
      const r = await run(...argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^platformui: --timeout must be a duration like 90s, 10m, 1h/);
    }
    expect((await run('queue', '--help')).stdout).toMatch(/^ {2}--timeout DURATION +the longest wait for an answer from the server/m);
  });

  it('an option a command would ignore, or an empty filter or name, is a usage error before any request', async () => {
    // A closed port: a request would be exit 4, not 2.
    const closed = ['--server', 'http://127.0.0.1:9'];
    for (const [argv, said] of [
      [['example', '--server', 'http://127.0.0.1:9'], '--server: platformui example talks to no server'],
      [['emulator', '--timeout', '5s'], '--timeout: platformui emulator talks to no server'],
      [['example', '--api-key-file', 'k'], '--api-key-file: platformui example talks to no server'],
      [['nodes', 'search', '--os', '', ...closed], '--os: empty'],
      [['nodes', 'search', '--accelerator', ' ', ...closed], '--accelerator: empty'],
      [['jobs', '--status', '', ...closed], '--status: empty'],
      [['jobs', '--status', ',', ...closed], '--status: empty'],
      [['object-info', '', ...closed], 'the node class: empty'],
    ] as const) {
      const r = await run(...argv);
      expect(r, argv.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr.split('\n')[0]).toBe(`platformui ${argv[0] === 'nodes' ? 'nodes search' : argv[0]}: ${said}`);
    }
  });

  it('codegen takes --url as --server; both naming different servers is a usage error', async () => {
    const r = await run('codegen', '--url', 'http://127.0.0.1:1', '--server', 'http://127.0.0.1:2');
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'platformui codegen: --url and --server name different servers: give one\n(see platformui codegen --help)\n' });
    const file = await run('codegen', '--url', 'http://127.0.0.1:1', '--file', 'object_info.json');
    expect(file.stderr).toBe('platformui codegen: give --server (or --url) or --file, not both\n(see platformui codegen --help)\n');
  });

  it('no server configured: a usage error naming --server and the variable', async () => {
    const saved = process.env.PLATFORMUI_CLOUD_URL;
    delete process.env.PLATFORMUI_CLOUD_URL;
    try {
      const r = await run('queue');
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('platformui queue: no server: pass --server URL or set PLATFORMUI_CLOUD_URL\n(see platformui queue --help)\n');
    } finally {
      if (saved !== undefined) process.env.PLATFORMUI_CLOUD_URL = saved;
    }
  });

  it('an unreadable key file: exit 2 naming the file, not its content', async () => {
    const r = await run('queue', '--server', 'https://cloud.invalid', '--api-key-file', '/nonexistent/key');
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'platformui queue: --api-key-file: cannot read /nonexistent/key (ENOENT)\n(see platformui queue --help)\n' });
  });
});
