// Create a node under your publisher, then list that publisher's nodes.
// Needs the publisher's id and a token that may act on it: PLATFORMUI_PUBLISHER and
// PLATFORMUI_TOKEN, with PLATFORMUI_BASE_URL. Without PLATFORMUI_BASE_URL it starts an
// emulator and uses its seeded publisher `acme` (the README's) and the emulator's token.
//
// It changes nothing it did not create: the node it adds is the only change. The API has no
// call that deletes a node, and deletePublisher() deletes a whole publisher with all its
// nodes, so that call runs only on the emulator this example started itself.
import { ConflictError, RegistryClient } from '@platformui/sdk';
import { EMULATOR_TOKEN, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_BASE_URL ? undefined : await startEmulator();
const publisherId = emulator ? 'acme' : process.env.PLATFORMUI_PUBLISHER;
// The emulator started here gets its own token, whatever token your shell holds.
const registry = emulator
  ? new RegistryClient({ baseUrl: emulator.url, token: EMULATOR_TOKEN })
  : new RegistryClient({ baseUrl: process.env.PLATFORMUI_BASE_URL, token: process.env.PLATFORMUI_TOKEN });

try {
  if (!publisherId) throw new Error('Set PLATFORMUI_PUBLISHER to the id of your own publisher');
  const nodeId = `${publisherId}-example-upscaler`;
  try {
    const node = await registry.createNode(publisherId, {
      id: nodeId,
      name: 'Example Upscaler',
      description: 'Created by examples/publish-node.ts',
      tags: ['image', 'upscale'],
      supported_os: ['OS Independent'],
      latest_version: { version: '0.1.0', changelog: 'First release', dependencies: ['numpy'] },
    });
    console.log(`Created ${node.id}: status ${node.status}, version ${node.latest_version?.version} (${node.latest_version?.status})`);
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    console.log(`A node ${nodeId} exists already; left as it is`);
  }

  const page = await registry.listPublisherNodes(publisherId, { limit: 5 });
  console.log(`${publisherId} has ${page.total} nodes: ${page.nodes.map((n) => n.id).join(', ')}`);

  if (emulator) {
    // Only here, on a throwaway emulator: this deletes the publisher and every node it has.
    await registry.deletePublisher(publisherId);
    console.log(`Deleted ${publisherId} on the emulator; ${(await registry.listPublishers()).length} publishers left`);
  }
} finally {
  await emulator?.close();
}
