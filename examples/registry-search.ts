// Search the node registry with filters, then walk every page of a query.
// Runs against PLATFORMUI_BASE_URL, or a local emulator started here.
import { RegistryClient } from '@platformui/sdk';
import { startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_BASE_URL ? undefined : await startEmulator();
const registry = new RegistryClient({ baseUrl: process.env.PLATFORMUI_BASE_URL ?? emulator!.url });

try {
  // The README's search. Filter values are the registry's own words: 'POSIX :: Linux', not 'Linux'
  // (a value that finds nothing but looks like one of them gets a warning naming it).
  const upscalers = await registry.searchNodes({ search: 'upscale', supported_os: 'POSIX :: Linux', limit: 20 });
  console.log(`Upscalers for Linux: ${upscalers.nodes.map((n) => n.id).join(', ')}`);

  // One page: `await` gives the page with its totals.
  const page = await registry.searchNodes({ supported_os: 'POSIX :: Linux', supported_accelerator: 'CUDA', limit: 5 });
  console.log(`Linux + CUDA: ${page.total} nodes in ${page.totalPages} pages; first page:`);
  for (const node of page.nodes) console.log(`  ${node.id}  ${node.latest_version?.version ?? '-'}  ★${node.github_stars ?? 0}`);

  // Every page: `for await` fetches the next page only when the loop needs it.
  let count = 0;
  const publishers = new Set<string>();
  for await (const node of registry.searchNodes({ limit: 25 })) {
    count++;
    if (node.publisher?.id) publishers.add(node.publisher.id);
  }
  console.log(`All nodes: ${count} from ${publishers.size} publishers`);

  const byRepo = await registry.searchNodes({ repository_url_search: 'github.com' , limit: 1 });
  console.log(`Nodes with a GitHub repository: ${byRepo.total}`);
} finally {
  await emulator?.close();
}
