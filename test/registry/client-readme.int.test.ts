// The README's RegistryClient examples, as written, against the default emulator over real
// loopback HTTP (the seed holds what they name: the publisher `acme`, upscalers on Linux), and
// what a filter value that matches nothing but resembles a registry value says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, RegistryClient } from '../../src/index.ts';
import { EMULATOR_TOKEN, SEED_FACTS, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { recorder } from '../helpers/log-recorder.ts';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

describe("the README's RegistryClient section", () => {
  it('every line finds what it names, in the order written', async () => {
    const registry = new RegistryClient({ baseUrl: emu.url, token: EMULATOR_TOKEN });

    const page = await registry.searchNodes({ search: 'upscale', supported_os: 'POSIX :: Linux', limit: 20 });
    expect([page.total, page.totalPages, page.nodes.map((n) => n.id)]).toEqual([2, 1, ['acme-esrgan-upscale', 'acme-hires-fix']]);
    expect(page.nodes.map((n) => n.id)).toEqual(SEED_FACTS.readme.linuxUpscalerIds);

    let cuda = 0;
    for await (const node of registry.searchNodes({ supported_accelerator: 'CUDA' })) if (node.supported_accelerators?.includes('CUDA')) cuda++;
    expect(cuda).toBeGreaterThan(10); // more than one page

    const node = await registry.createNode('acme', { id: 'acme-upscaler', name: 'Upscaler', latest_version: { version: '1.0.0' } });
    expect([node.id, node.latest_version?.version, node.publisher?.id]).toEqual(['acme-upscaler', '1.0.0', 'acme']);
    const mine = await registry.listPublisherNodes('acme', { limit: 50 });
    expect(mine.nodes.map((n) => n.id).sort()).toEqual([...SEED_FACTS.readme.publisherNodeIds, 'acme-upscaler'].sort());
    await registry.deletePublisher('acme');
    const publishers = await registry.listPublishers();
    expect(publishers.map((p) => p.id)).not.toContain('acme');

    const versions = await registry.listNodeVersions('nodesmith-math-expr', { statuses: ['NodeVersionStatusActive'] });
    expect(versions[0]?.version).toBe('1.10.0');
    const pack = await registry.getNodeForClass('TiledKSampler');
    expect(pack?.id).toBe('pixelforge-tiled-diffusion');
    const [a, b] = await registry.getNodes(['pixelforge-face-restore', 'nodesmith-math-expr']);
    expect([a?.id, b?.id]).toEqual(['pixelforge-face-restore', 'nodesmith-math-expr']);

    // The Errors section's example, once the publisher is gone.
    const gone = await registry.deletePublisher('acme').catch((err: unknown) => err);
    expect(gone).toBeInstanceOf(NotFoundError);
    emu.registry.reset();
  });
});

describe('a filter value that resembles a registry value', () => {
  it("warns once through the client's log when nothing matches, for one page and for the walk", async () => {
    const log = recorder();
    const registry = new RegistryClient({ baseUrl: emu.url, logger: log.logger });
    const page = await registry.searchNodes({ search: 'upscale', supported_os: 'Linux', limit: 20 });
    expect([page.total, page.nodes]).toEqual([0, []]);
    const walked: unknown[] = [];
    for await (const node of registry.searchNodes({ supported_os: 'Windows' })) walked.push(node);
    expect(walked).toEqual([]);
    expect(log.lines.map((l) => [l.level, l.message])).toEqual([
      ['warn', "[platformui] no node matches supported_os 'Linux'; registry values look like 'POSIX :: Linux' (did you mean it?)"],
      ['warn', "[platformui] no node matches supported_os 'Windows'; registry values look like 'Microsoft :: Windows' (did you mean it?)"],
    ]);
    // The value it suggests finds them.
    expect((await registry.searchNodes({ search: 'upscale', supported_os: 'POSIX :: Linux' })).total).toBe(2);
    expect(log.lines).toHaveLength(2);
  });
});
