/**
 * `ProxyClient`: the partner proxy's AI image jobs (`registry-and-proxy.md`,
 * endpoints 6–7).
 *
 * @module
 */
import { checkArgs, checkId } from '../args.ts';
import { toBase64 } from '../base64.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { RelightParams, SkinEnhancerCreativeParams, Task, TaskRecord } from '../schemas/proxy.ts';
import * as rules from '../schemas/rules.generated.ts';
import { type ClientOptions, type Credential, type RequestOptions } from '../transport/options.ts';
import { APIPromise } from '../transport/promise.ts';
import { BEARER_SERVICE, Transport, path } from '../transport/transport.ts';
import { checkExclusive, checkPromptWeights, checkWebhookUrl } from './rules.ts';

/** Options of {@link ProxyClient}. */
export interface ProxyClientOptions extends ClientOptions {
  /** Service base URL (the registry's). In Node, defaults to `PLATFORMUI_BASE_URL`. */
  baseUrl?: string;
  /** Bearer token, or a function returning it. In Node, defaults to `PLATFORMUI_TOKEN`. */
  token?: Credential;
  /** Provider name replacing the literal `vendor` path segment. Default `'vendor'`. */
  vendor?: string;
}

const IMAGE_FIELDS = ['image', 'transfer_light_from_lightmap', 'transfer_light_from_reference_image'] as const;

/**
 * Client of the partner proxy. Each call starts a paid job and resolves at
 * once with its {@link Task} (`task_id`, `status`, `generated`): the `data` of
 * the task record the wire carries, `{ data: { task_id, … } }`. It is never
 * retried unless you pass `{ retry: { allowPost: true } }`.
 *
 * @example
 * ```ts
 * const proxy = new ProxyClient({ baseUrl, token });
 * const task = await proxy.relightImage({ image: 'https://example.com/in.jpg', prompt: 'golden hour (warm:1.2)', style: 'smooth' });
 * console.log(task.task_id, task.status); // '…', 'CREATED'
 * ```
 */
export class ProxyClient {
  readonly #transport: Transport;
  /** The provider path segment in use. */
  readonly vendor: string;

  constructor(options: ProxyClientOptions = {}) {
    this.vendor = checkId(options.vendor ?? 'vendor', 'vendor');
    this.#transport = new Transport({ service: 'proxy', options, credential: options.token, ...BEARER_SERVICE });
  }

  /**
   * `POST /proxy/{vendor}/v1/ai/image-relight`: relights an image. Checked
   * first: `light_transfer_strength` 0–100, `style` one of the presets,
   * lightmap and reference image never together, every `(text:weight)` of
   * `prompt` weighing 1–1.4, `webhook_url` absolute http(s). Bytes given for
   * `image`, `transfer_light_from_lightmap` or `transfer_light_from_reference_image` are sent as base64.
   * Resolves with the started {@link Task} (the `data` of the wire's task record).
   */
  relightImage(params: RelightParams, options?: RequestOptions): APIPromise<Task> {
    return this.#start('image-relight', options, () => {
      const p = checkArgs(rules.RelightParams, params, '');
      checkExclusive(p, 'transfer_light_from_lightmap', 'transfer_light_from_reference_image');
      checkPromptWeights(p.prompt);
      checkWebhookUrl(p.webhook_url);
      return p;
    });
  }

  /**
   * `POST /proxy/{vendor}/v1/ai/skin-enhancer/creative`: enhances skin
   * (creative mode). Checked first: `sharpen` and `smart_grain` 0–100,
   * `webhook_url` absolute http(s). Resolves with the started {@link Task}.
   */
  enhanceSkinCreative(params: SkinEnhancerCreativeParams, options?: RequestOptions): APIPromise<Task> {
    return this.#start('skin-enhancer/creative', options, () => {
      const p = checkArgs(rules.SkinEnhancerCreativeParams, params, '');
      checkWebhookUrl(p.webhook_url);
      return p;
    });
  }

  #start(operation: string, options: RequestOptions | undefined, check: () => Record<string, unknown>): APIPromise<Task> {
    return APIPromise.from(async () => {
        const body: Record<string, unknown> = { ...check() };
        for (const f of IMAGE_FIELDS) {
          const v = body[f];
          if (v !== undefined && typeof v !== 'string') body[f] = await toBase64(v as Blob | Uint8Array | ArrayBuffer);
        }
        // The wire's task record is `{ data: task }`; callers get the task itself.
        const { data: record, response } = await this.#transport.request<TaskRecord>({
          method: 'POST',
          path: `${path`proxy/${this.vendor}`}/v1/ai/${operation}`,
          json: body,
          auth: true,
          schema: rules.TaskRecord,
          options,
        });
        return { data: record.data, response };
    });
  }
}
