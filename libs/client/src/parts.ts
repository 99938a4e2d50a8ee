/** What a worker returns with `done` beside its summary (the MCP tool and the CLI share this). */
import { readFile, realpath } from 'node:fs/promises';
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import { DEFAULT_LIMITS, ShroomsError, type Part } from '@shrooms/protocol';

export interface ReturnedPartsOptions {
  /** The folder relative paths start from. Default: this process's working directory. */
  cwd?: string;
  /**
   * Refuse every file whose real path (symlinks followed) is outside `cwd`. Default: false — what
   * the caller may read decides (the CLI, run by a person or by a session's shell tool).
   */
  confine?: boolean;
}

/**
 * The files and data a worker returns with `done`, as A2A parts: each file read whole (at most
 * `DEFAULT_LIMITS.partBytes`), named by its bare file name; data as one data part. Unreadable or
 * (with `confine`) outside files are INVALID_PARAMS, too large ones LIMIT_EXCEEDED.
 */
export async function returnedParts(files: string[] = [], data?: unknown, opts: ReturnedPartsOptions = {}): Promise<Part[] | undefined> {
  const parts: Part[] = [];
  for (const f of files) {
    const bytes = await readReturned(f, opts.cwd ?? process.cwd(), opts.confine ?? false);
    if (bytes.length > DEFAULT_LIMITS.partBytes)
      throw new ShroomsError(
        'LIMIT_EXCEEDED',
        `${f} is ${bytes.length} bytes; a returned file may have at most ${DEFAULT_LIMITS.partBytes}`,
        {
          limit: 'partBytes',
          max: DEFAULT_LIMITS.partBytes,
        },
      );
    parts.push({ raw: bytes.toString('base64'), filename: basename(f) });
  }
  if (data !== undefined) parts.push({ data });
  return parts.length ? parts : undefined;
}

async function readReturned(f: string, cwd: string, confine: boolean): Promise<Buffer> {
  const cannot = (err: Error): never => {
    throw new ShroomsError('INVALID_PARAMS', `cannot read ${f}: ${err.message}`);
  };
  const path = resolve(cwd, f);
  if (!confine) return readFile(path).catch(cannot);
  // Real paths on both sides: a symlink inside the folder that leads out of it is outside, and a
  // folder reached through a symlink still holds its own files.
  const [real, root] = await Promise.all([realpath(path), realpath(cwd)]).catch(cannot);
  const rel = relative(root, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new ShroomsError(
      'INVALID_PARAMS',
      `${f} is outside the session's folder ${cwd}${real === f ? '' : ` (it leads to ${real})`}; only files inside it can be returned`,
      { path: f, folder: cwd },
    );
  // The path checked is the path read.
  return readFile(real).catch(cannot);
}
