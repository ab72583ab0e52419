// Can a library built on the SDK declare its own types? (issue 24, item 3)
//
// A consumer compiled with `declaration: true` writes the inferred type of each
// of its exports into its .d.ts, so every type it can reach through the SDK
// must be nameable from the entry it imports: a type only a private chunk
// (`dist/cloud-*.d.ts`) declares fails there with TS2883 (TS 6) / TS2742 (TS 5),
// one an entry declares without exporting with TS4058.
//
// The types are enumerated with the compiler API from the published .d.ts, not
// from a list: every export of every entry in package.json `exports`, then,
// breadth first, what each type leads to: properties and methods, call results
// and parameters, awaited payloads, array and tuple elements, index signatures,
// iterated items, and union members. Each distinct type gets an exported
// function of the consumer returning a value of it, e.g. (the issue's example)
//     export async function t42() { return { v: (await ret(x3!["getQueue"]))!["queue_running"]![0]!["workflow"] }; }
// so the declaration emitter has to name it. A new method is covered without
// touching this file. One consumer per entry, importing that entry alone: a type
// the emulator's signatures use must be nameable without the root in the program.
//
// Usage: await checkDeclarations({ appDir, format: 'esm' | 'cjs', typescript: '<dir of a typescript package>' })
// appDir holds the installed package and @types/node in node_modules; the consumers
// are written to appDir/declarations-<format>-ts<version>/. Throws an Error listing
// the diagnostics, each with the first access path that reaches the type.
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve, sep } from 'node:path';

const PACKAGE = '@platformui/sdk';
// Bounds on the walk: far above what the package needs, so a runaway type (a
// recursive generic) fails with a clear message instead of hanging.
const MAX_DEPTH = 16;
const MAX_TYPES = 20_000;
// Diagnostics shown in the error (all of them are in the consumer files).
const MAX_SHOWN = 60;

// What the access paths use: a call's result, a function's parameters, an iterated item,
// and the members of a union that have a key (or a key of a given literal value).
const HELPERS = `
declare function ret<R>(f: (...args: any) => R): R;
declare function params<A extends any[]>(f: (...args: A) => any): A;
declare function item<T>(x: T): T extends AsyncIterable<infer U> ? U : T extends Iterable<infer U> ? U : never;
declare function having<T, K extends PropertyKey>(x: T, key: K): Extract<T, { [P in K]: unknown }>;
declare function where<T, K extends PropertyKey, V>(x: T, key: K, value: V): Extract<T, { [P in K]: V }>;
`;

/**
 * Compiles, with `declaration: true`, one consumer per public entry (ESM or
 * CommonJS, module nodenext) that re-exports every type reachable from that
 * entry of the package installed in `appDir`. Resolves to what was checked;
 * throws an Error whose message lists the diagnostics.
 *
 * @param {{ appDir: string, format: 'esm' | 'cjs', typescript: string }} options
 * @returns {Promise<{ typescript: string, entries: string[], exports: number, types: number }>}
 */
export async function checkDeclarations({ appDir, format, typescript }) {
  if (format !== 'esm' && format !== 'cjs') throw new Error(`format must be 'esm' or 'cjs', not ${format}`);
  const ts = createRequire(import.meta.url)(resolve(typescript));
  if (typeof ts.createProgram !== 'function') throw new Error(`${typescript} is not a typescript package directory`);
  const pkgDir = realpathSync(join(appDir, 'node_modules', ...PACKAGE.split('/')));
  // The emulator's types use node:http, as a Node consumer's do.
  if (!existsSync(join(appDir, 'node_modules', '@types', 'node'))) throw new Error(`${appDir} needs @types/node installed (npm install @types/node): the emulator's types use node:http`);
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const entries = Object.keys(pkg.exports).filter((k) => k !== './package.json').map((k) => PACKAGE + k.slice(1));

  const dir = join(appDir, `declarations-${format}-ts${ts.version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: format === 'esm' ? 'module' : 'commonjs' }));
  const options = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    strict: true,
    skipLibCheck: false,
    declaration: true,
    emitDeclarationOnly: true,
    outDir: join(dir, 'out'),
  };
  const host = ts.createCompilerHost(options);
  // `types: ['node']` resolves from the consumer's directory, as tsc run there would.
  host.getCurrentDirectory = () => dir;
  // The consumer being compiled lives in memory; every other file comes from disk, parsed
  // once: each program reuses the library and package files of the last.
  const consumer = { file: '', text: '' };
  const parsed = new Map();
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => {
    if (resolve(name) === consumer.file) return ts.createSourceFile(name, consumer.text, lang);
    if (!parsed.has(name)) parsed.set(name, getSourceFile(name, lang, ...rest));
    return parsed.get(name);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => resolve(name) === consumer.file || fileExists(name);
  let program;
  const compile = (text) => {
    consumer.text = text;
    program = ts.createProgram([consumer.file], options, host, program);
    return program.getTypeChecker();
  };

  const realpathOf = memo((f) => { try { return realpathSync(f); } catch { return f; } });
  const inPackage = (node) => realpathOf(node.getSourceFile().fileName).startsWith(pkgDir + sep);
  const declared = (symbol) => (symbol?.declarations?.length ? symbol.declarations.some(inPackage) : undefined);
  // Private and protected members are not the consumer's to reach (nor `#private`, `__#…`; symbol keys are `__@…`).
  const hidden = (p) => p.name.startsWith('__') || (p.declarations ?? []).some((d) => ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected));
  /** A type worth naming: anything but primitives, literals, any/unknown/never and type parameters. */
  const structured = (t) => !!(t.flags & (ts.TypeFlags.Object | ts.TypeFlags.Union | ts.TypeFlags.Intersection)) && !(t.flags & ts.TypeFlags.EnumLiteral);

  /** The values a type leads to, as [expression, label step, awaits]. `e` is an expression of type `t` (possibly null or undefined). */
  function children(checker, t, e) {
    const out = [];
    const v = `(${e})!`;
    const u = checker.getNonNullableType(t);
    if (!structured(u)) return out;
    // Anonymous types and unions have no declaring symbol of their own: theirs are ours.
    const ours = declared(u.aliasSymbol ?? u.symbol) ?? true;
    const awaited = checker.getAwaitedType(u);
    if (awaited && awaited !== u) out.push([`(await ${v})`, 'await', true]);
    if (checker.isTupleType(u)) checker.getTypeArguments(u).forEach((_, i) => out.push([`${v}[${i}]`, `[${i}]`]));
    for (const info of checker.getIndexInfosOfType(u)) {
      if (info.keyType.flags & ts.TypeFlags.Number) out.push([`${v}[0]`, '[n]']);
      else if (info.keyType.flags & ts.TypeFlags.String) out.push([`${v}["\\u0000key"]`, '[key]']);
    }
    const props = checker.getPropertiesOfType(u);
    if (props.some((p) => /^__@(async)?[iI]terator@/.test(p.escapedName))) out.push([`item(${v})`, 'item']);
    // Library types (Promise, Map, zod's…) are followed only through the steps above.
    if (!ours) return out;
    for (const p of props) {
      if (!hidden(p) && declared(p) !== false) out.push([`${v}[${JSON.stringify(p.name)}]`, `.${p.name}`]);
    }
    if (checker.getSignaturesOfType(u, ts.SignatureKind.Call).length) {
      out.push([`ret(${v})`, '()']);
      out.push([`params(${v})`, '(params)']);
    }
    if (u.flags & ts.TypeFlags.Union) {
      // Each object member, picked out by a key the others lack or by a literal value of a shared key.
      const common = new Set(props.map((p) => p.name));
      for (const m of u.types.filter((m) => m.flags & ts.TypeFlags.Object)) {
        const own = checker.getPropertiesOfType(m).filter((p) => !hidden(p));
        const key = own.find((p) => !common.has(p.name) && !(p.flags & ts.SymbolFlags.Optional));
        const literal = own.map((p) => [p, checker.getTypeOfSymbol(p)])
          .find(([p, pt]) => common.has(p.name) && pt.flags & (ts.TypeFlags.StringLiteral | ts.TypeFlags.NumberLiteral | ts.TypeFlags.BooleanLiteral));
        if (key) out.push([`having(${v}, ${JSON.stringify(key.name)})`, `{${key.name}}`]);
        else if (literal) {
          const value = checker.typeToString(literal[1]);
          out.push([`where(${v}, ${JSON.stringify(literal[0].name)}, ${value} as const)`, `{${literal[0].name}: ${value}}`]);
        }
      }
    }
    return out;
  }

  /** One entry's consumer: its exports, the walk, then the declaration emit. Returns [roots, nodes, diagnostics as text]. */
  function checkEntry(entry, slug) {
    consumer.file = join(dir, `consumer-${slug}.ts`);
    const imports = `import * as e from '${entry}';`;
    let checker = compile(`${imports}\nexport {};\n`);
    const imported = program.getSemanticDiagnostics(program.getSourceFile(consumer.file));
    if (imported.length) return [[], [], [`the consumer cannot import ${entry}:\n${formatted(ts, imported)}`]];

    // The roots: `declare const x<i>: <declare>;` for the value and the type of each export.
    const roots = [];
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(consumer.file).statements[0].moduleSpecifier);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const name = exported.name;
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      // The value (a function, a class's static side, a constant): `typeof` works for type-only exports too.
      if (target.flags & ts.SymbolFlags.Value) roots.push({ declare: `typeof e.${name}`, label: `${entry} ${name} (value)` });
      // The type (an instance of a class, an interface, an alias), its required type parameters as any.
      if (target.flags & ts.SymbolFlags.Type && !(target.flags & ts.SymbolFlags.Enum)) {
        const declaration = target.declarations?.find((d) => d.typeParameters) ?? target.declarations?.[0];
        const required = (declaration?.typeParameters ?? []).filter((p) => !p.default).length;
        roots.push({ declare: `e.${name}${required ? `<${Array(required).fill('any').join(', ')}>` : ''}`, label: `${entry} ${name}` });
      }
    }

    // Each node: an exported function returning a value of one type, with the path that reaches it.
    const render = (list) => [
      imports,
      HELPERS,
      ...roots.map((r, i) => `declare const x${i}: ${r.declare};`),
      ...list.flatMap((n, i) => [`/** ${n.label.replace(/\*\//g, '*\\/')} */`, `export ${n.async ? 'async ' : ''}function t${i}() { return { v: ${n.expr} }; }`]),
    ].join('\n') + '\n';
    /** The type of each node's value (`v`) in the current program. */
    const typesOf = () => program.getSourceFile(consumer.file).statements
      .filter((s) => ts.isFunctionDeclaration(s) && s.name?.text.startsWith('t'))
      .map((s) => checker.getTypeAtLocation(s.body.statements[0].expression.properties[0].initializer));
    // A type's identity across programs (each level's checker has its own type objects): its
    // fully qualified text, which names the declaring file of every named type in it.
    const keyOf = (t) => checker.typeToString(t, undefined, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseFullyQualifiedType);

    // The walk, breadth first, one program per level.
    const nodes = [];
    const seen = new Set();
    let frontier = roots.map((r, i) => ({ expr: `x${i}`, label: r.label, async: false }));
    for (let depth = 0; frontier.length; depth++) {
      if (depth > MAX_DEPTH || nodes.length > MAX_TYPES) {
        throw new Error(`declarations: ${entry} leads to over ${nodes.length} types or ${MAX_DEPTH} levels; a recursive type? Last paths:\n${frontier.slice(0, 5).map((n) => n.label).join('\n')}`);
      }
      checker = compile(render(frontier));
      const types = typesOf();
      const next = [];
      frontier.forEach((n, i) => {
        const t = checker.getNonNullableType(types[i]);
        if (!structured(t)) return;
        const key = keyOf(t);
        if (seen.has(key)) return;
        seen.add(key);
        nodes.push(n);
        for (const [expr, step, awaits] of children(checker, t, n.expr)) next.push({ expr, label: `${n.label} ${step}`, async: n.async || !!awaits });
      });
      frontier = next;
    }

    // The consumer, compiled with declaration: true.
    compile(render(nodes));
    const sf = program.getSourceFile(consumer.file);
    writeFileSync(consumer.file, consumer.text); // to look at after a failure (KEEP_TMP=1 in pack.mjs)
    const diagnostics = [...ts.getPreEmitDiagnostics(program, sf), ...program.emit(sf, () => {}, undefined, true).diagnostics];
    const unique = [...new Map(diagnostics.map((d) => [`${d.file?.fileName}:${d.start}:${d.code}`, d])).values()];
    const lines = sf.text.split('\n');
    return [roots, nodes, unique.map((d) => {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (d.file !== sf || d.start === undefined) return `TS${d.code} ${d.file ? `${d.file.fileName}: ` : ''}${message}`;
      const { line } = sf.getLineAndCharacterOfPosition(d.start);
      const fn = /^export (?:async )?function t(\d+)/.exec(lines[line])?.[1];
      return `TS${d.code} ${fn === undefined ? `${consumer.file}:${line + 1}` : nodes[Number(fn)].label}\n    ${message.replace(/\n/g, '\n    ')}`;
    })];
  }

  let exports = 0;
  let types = 0;
  const problems = [];
  for (const entry of entries) {
    const [roots, nodes, diagnostics] = checkEntry(entry, entry.slice(PACKAGE.length + 1) || 'root');
    exports += roots.length;
    types += nodes.length;
    problems.push(...diagnostics);
  }
  if (problems.length) {
    throw new Error(`${format === 'esm' ? 'ESM' : 'CommonJS'} consumers compiled with declaration: true (TypeScript ${ts.version}) cannot name ${problems.length} type(s) they reach through ${PACKAGE} (each line: the first access path to the type):
${problems.slice(0, MAX_SHOWN).join('\n')}${problems.length > MAX_SHOWN ? `\n… and ${problems.length - MAX_SHOWN} more (the consumers are in ${dir})` : ''}
hint: export every type a public signature uses from each entry whose signatures use it (src/index.ts, src/emulator/index.ts, …), under a name no other type of that entry has. TS2742/TS2883 name a private chunk (dist/*-<hash>.d.ts) that declares it; TS4058/TS4094 a type the entry declares without exporting it.`);
  }
  return { typescript: ts.version, entries, exports, types };
}

function formatted(ts, diagnostics) {
  return ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' });
}

function memo(f) {
  const cache = new Map();
  return (k) => (cache.has(k) ? cache.get(k) : (cache.set(k, f(k)), cache.get(k)));
}
