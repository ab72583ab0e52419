/**
 * The v2 asset records of the emulator: content-addressed blobs (bytes kept
 * in the cloud's {@link FileStore}, as `input` files, or the outputs jobs
 * wrote) and the records (ids) that reference them, per lane (account).
 * Deleting a record leaves its blob: `HEAD by-hash` still finds it.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { FileStore } from '../cloud-files.ts';

/** Where a blob's bytes are: a file of the cloud's store. */
export interface BlobRef {
  hash: `blake3:${string}`;
  size: number;
  contentType: string;
  /** The store's file name and type (`input` for uploads, `output`/`temp` for outputs). */
  name: string;
  type: string;
}

/** One asset record. */
export interface AssetRecord {
  id: string;
  lane: string;
  blob: BlobRef;
  filePath: string;
  tags: string[];
  created: number;
  /** ms since epoch, or undefined (no expiry asked). */
  expires: number | undefined;
  /** The job that wrote it, for outputs. */
  jobId?: string;
}

/** Asset records and blobs, per lane. */
export class AssetStore {
  /** Every live record by id. */
  readonly records = new Map<string, AssetRecord>();
  readonly #blobs = new Map<string, BlobRef>();
  readonly #files: FileStore;

  constructor(files: FileStore) {
    this.#files = files;
  }

  /** The blob of `hash` that `lane` may reference (its bytes still stored), or undefined. */
  blob(lane: string, hash: string): BlobRef | undefined {
    const blob = this.#blobs.get(`${lane}\u0000${hash}`);
    return blob && this.#files.has(blob.name, blob.type) ? blob : undefined;
  }

  /**
   * Stores a new blob's bytes as an input file named after its `file_path`
   * (prefixed with the hash when another blob holds that name) and returns it.
   */
  addBlob(lane: string, hash: `blake3:${string}`, data: Buffer | undefined, size: number, contentType: string, filePath: string): BlobRef {
    const base = (filePath.split(/[\\/]/).pop() || 'asset').replace(/[^\w.-]/g, '_');
    const taken = this.#files.get(base, 'input');
    const name = taken && !this.#isBlobOf(base, hash) ? `${hash.slice(7, 19)}-${base}` : base;
    this.#files.put({ name, type: 'input', size, contentType, ...(data ? { data } : {}), created: Date.now() });
    const blob: BlobRef = { hash, size, contentType, name, type: 'input' };
    this.#blobs.set(`${lane}\u0000${hash}`, blob);
    return blob;
  }

  /** Registers a blob whose bytes a job wrote (an output file). */
  addOutputBlob(lane: string, blob: BlobRef): void {
    if (!this.#blobs.has(`${lane}\u0000${blob.hash}`)) this.#blobs.set(`${lane}\u0000${blob.hash}`, blob);
  }

  /** A new record of `blob`. */
  mint(lane: string, blob: BlobRef, filePath: string, tags: string[] = [], expiresInS?: number, jobId?: string): AssetRecord {
    const now = Date.now();
    const record: AssetRecord = { id: randomUUID(), lane, blob, filePath, tags, created: now, expires: expiresInS === undefined ? undefined : now + expiresInS * 1000, ...(jobId ? { jobId } : {}) };
    this.records.set(record.id, record);
    return record;
  }

  /** The first live record of `hash` in `lane` (the real server keeps one per hash). */
  recordOf(lane: string, hash: string): AssetRecord | undefined {
    for (const r of this.records.values()) if (r.lane === lane && r.blob.hash === hash) return r;
    return undefined;
  }

  /** A live record of `lane`, or undefined (another lane's is unknown too). */
  get(lane: string, id: string): AssetRecord | undefined {
    const r = this.records.get(id);
    return r && r.lane === lane ? r : undefined;
  }

  /** Deletes a record (not its blob); false when unknown. */
  delete(lane: string, id: string): boolean {
    return this.get(lane, id) !== undefined && this.records.delete(id);
  }

  clear(): void {
    this.records.clear();
    this.#blobs.clear();
  }

  #isBlobOf(name: string, hash: string): boolean {
    for (const b of this.#blobs.values()) if (b.name === name && b.type === 'input') return b.hash === hash;
    return false;
  }
}
