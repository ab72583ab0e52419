// Open a workflow someone else saved in the editor, find the node packs this server lacks,
// and print what to install: each registry pack with its version and download, the classes
// that need a newer server, those from outside the registry, and those nobody provides.
import { readFileSync } from 'node:fs';
import { CloudClient, RegistryClient } from '@platformui/sdk';
import { EMULATOR_API_KEY, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_CLOUD_URL && process.env.PLATFORMUI_BASE_URL ? undefined : await startEmulator();
const cloud = new CloudClient({ baseUrl: process.env.PLATFORMUI_CLOUD_URL ?? emulator!.url, apiKey: emulator ? EMULATOR_API_KEY : process.env.PLATFORMUI_API_KEY });
const registry = new RegistryClient({ baseUrl: process.env.PLATFORMUI_BASE_URL ?? emulator!.url });

try {
  const workflow: unknown = JSON.parse(readFileSync(new URL('./workflows/shared-workflow.json', import.meta.url), 'utf8'));
  // The classes this server has; every other class of the workflow is looked up once.
  const objectInfo = await cloud.getObjectInfo();
  const missing = await registry.findMissingPacks(workflow, { objectInfo });

  console.log(`Packs to install (${missing.packs.length}):`);
  for (const pack of missing.packs) {
    // The workflow was saved with a version of the pack: install that one when the registry still has it.
    const pinned = pack.pinnedVersion ? await registry.getNodeVersion(pack.id, pack.pinnedVersion).catch(() => undefined) : undefined;
    const version = pinned?.version ?? pack.version;
    const url = (pinned ?? pack).downloadUrl || '(no download URL)';
    console.log(`  ${pack.id}@${version}${pinned ? ' (the version the workflow was saved with)' : ''}  for ${pack.classTypes.join(', ')}`);
    console.log(`    ${url}`);
  }
  for (const c of missing.coreUpdate) console.log(`Update the server${c.version ? ` to ${c.version}` : ''} for ${c.classType}`);
  for (const c of missing.outsideRegistry) console.log(`Outside the registry: ${c.classType} from ${c.repository ?? c.auxId}`);
  if (missing.unknown.length) console.log(`No pack provides: ${missing.unknown.join(', ')}`);
} finally {
  cloud.close();
  await emulator?.close();
}
