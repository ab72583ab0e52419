// Create a node under a publisher, list the publisher's nodes, then delete the publisher.
// Needs a token: PLATFORMUI_TOKEN, or the emulator's default token.
import { ConflictError, RegistryClient } from '@platformui/sdk';
import { EMULATOR_TOKEN, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_BASE_URL ? undefined : await startEmulator();
const registry = new RegistryClient({
  baseUrl: process.env.PLATFORMUI_BASE_URL ?? emulator!.url,
  token: process.env.PLATFORMUI_TOKEN ?? EMULATOR_TOKEN,
});

try {
  const [publisher] = await registry.listPublishers();
  if (!publisher?.id) throw new Error('the registry has no publishers');

  try {
    const node = await registry.createNode(publisher.id, {
      id: `${publisher.id}-example-upscaler`,
      name: 'Example Upscaler',
      description: 'Created by examples/publish-node.ts',
      tags: ['image', 'upscale'],
      supported_os: ['OS Independent'],
      latest_version: { version: '0.1.0', changelog: 'First release', dependencies: ['numpy'] },
    });
    console.log(`Created ${node.id}: status ${node.status}, version ${node.latest_version?.version} (${node.latest_version?.status})`);
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    console.log('The example node exists already');
  }

  const page = await registry.listPublisherNodes(publisher.id, { limit: 5 });
  console.log(`${publisher.id} has ${page.total} nodes: ${page.nodes.map((n) => n.id).join(', ')}`);

  await registry.deletePublisher(publisher.id);
  const left = await registry.listPublishers();
  console.log(`Deleted ${publisher.id}; ${left.length} publishers left`);
} finally {
  await emulator?.close();
}
