/** What a worker returns with `done` beside its summary (the MCP tool and the CLI share this). */
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { DEFAULT_LIMITS, ShroomsError, type Part } from '@shrooms/protocol';

/**
 * The files and data a worker returns with `done`, as A2A parts: each file read whole (at most
 * `DEFAULT_LIMITS.partBytes`), named by its bare file name; data as one data part.
 */
export async function returnedParts(files: string[] = [], data?: unknown): Promise<Part[] | undefined> {
  const parts: Part[] = [];
  for (const f of files) {
    const bytes = await readFile(resolve(f)).catch((err: Error) => {
      throw new ShroomsError('INVALID_PARAMS', `cannot read ${f}: ${err.message}`);
    });
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
