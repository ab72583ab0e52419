/**
 * Downloads a job's output files into a directory, under the names the server
 * gave them, never over an existing file: `out_00001_.png` becomes
 * `out_00001_-1.png` when the first is taken (a rerun against a server whose
 * counter started again). A name is reserved by creating the file exclusively,
 * so two runs writing into one directory never share one.
 *
 * @module
 */
import { constants } from 'node:fs';
import { access, mkdir, open, stat, unlink } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { CloudClient, FileRef, OutputFile } from '../index.ts';
import { UsageError } from './args.ts';
import type { FileLine } from './display.ts';

/** The server's file name as a plain name in `dir`: no folders, no `..` (a hostile name must not write elsewhere). */
function localName(filename: string): string {
  const name = basename(filename.replace(/\\/g, '/'));
  return name === '' || name === '.' || name === '..' ? 'output' : name;
}

/** Creates `dir/name`, or `dir/name-1.ext`, `-2`… when taken; returns the path reserved. */
async function reserve(dir: string, name: string): Promise<string> {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 0; ; n++) {
    const path = join(dir, n === 0 ? name : `${stem}-${n}${ext}`);
    try {
      await (await open(path, 'wx')).close();
      return path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new UsageError(`--out: cannot write ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
}

/**
 * Makes `dir` ready for the outputs: created when missing (with its parents),
 * a folder, writable. Called before the first request, so a wrong `--out`
 * costs no job (exit 2, nothing submitted).
 */
export async function prepareOut(dir: string): Promise<void> {
  const why = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // mkdir says EEXIST or ENOTDIR for a file in the way: say which.
    const file = await stat(dir).then((s) => !s.isDirectory(), () => false);
    throw new UsageError(file ? `--out: ${dir} is a file, not a folder` : code === 'ENOTDIR' ? `--out: cannot create ${dir} (a parent is a file)` : `--out: cannot create ${dir} (${why(err)})`);
  }
  const info = await stat(dir);
  if (!info.isDirectory()) throw new UsageError(`--out: ${dir} is a file, not a folder`);
  try {
    await access(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new UsageError(`--out: cannot write into ${dir} (${why(err)})`);
  }
}

/**
 * Downloads every file into `dir` (created when missing), one after the
 * other, whatever output key it came under, and returns each path with its
 * size, and node and key where known. A failed or aborted download leaves no partial file behind.
 */
export async function downloadAll(cloud: CloudClient, files: readonly (FileRef & Partial<OutputFile>)[], dir: string, signal?: AbortSignal): Promise<FileLine[]> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new UsageError(`--out: cannot create ${dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const lines: FileLine[] = [];
  for (const file of files) {
    const path = await reserve(dir, localName(file.filename));
    try {
      const bytes = await cloud.downloadToFile(file, path, signal ? { signal } : undefined);
      lines.push({ path, bytes, nodeId: file.nodeId, mediaType: file.mediaType });
    } catch (err) {
      await unlink(path).catch(() => undefined);
      throw err;
    }
  }
  return lines;
}
