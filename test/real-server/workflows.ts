// Workflows both real-server suites run: model-free, so a CPU server runs them.

type Node = { class_type: string; inputs: Record<string, unknown> };

/**
 * `source` (node '1') → n × ImageBlur (0.05–0.15 s each on 256×256, by machine) → SaveImage
 * (node '9'): a job long enough to act on mid-run.
 */
export function blurChain(n: number, prefix: string, source: Node): Record<string, Node> {
  const w: Record<string, Node> = { '1': source };
  let prev = '1';
  for (let i = 0; i < n; i++) {
    const id = String(100 + i);
    w[id] = { class_type: 'ImageBlur', inputs: { image: [prev, 0], blur_radius: 9, sigma: 3 } };
    prev = id;
  }
  w['9'] = { class_type: 'SaveImage', inputs: { images: [prev, 0], filename_prefix: prefix } };
  return w;
}
