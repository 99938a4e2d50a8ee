/**
 * The outbox on disk: the worker's updates the ledger has not taken, kept in the bridge's state
 * folder so that a bridge stopped or killed while NATS is away writes them at its next start
 * instead of delivering their tasks again (a worker would do the work twice). One small JSON file,
 * replaced whole (written aside, then renamed) on every change, removed when nothing is kept.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { PartSchema } from '@shrooms/protocol';
import { HarnessUpdateStatusSchema } from '../harness/types.js';

export const OUTBOX_FILE = 'outbox.json';

const KeptSchema = z.object({
  taskId: z.string(),
  key: z.string(),
  status: HarnessUpdateStatusSchema,
  text: z.string(),
  parts: z.array(PartSchema).optional(),
  /** When the worker said it (ISO); files written before it was kept lack it. */
  at: z.string().datetime().optional(),
});
export type KeptUpdate = z.infer<typeof KeptSchema>;

const FileSchema = z.object({ v: z.literal(1), machine: z.string(), session: z.string(), updates: z.array(KeptSchema) });

export interface OutboxFile {
  readonly path: string;
  readonly machine: string;
  readonly session: string;
}

/** Writes what is kept (the file goes when nothing is). Throws when the folder cannot be written. */
export function saveKept(f: OutboxFile, updates: KeptUpdate[]): void {
  if (updates.length === 0) {
    rmSync(f.path, { force: true });
    return;
  }
  const aside = `${f.path}.${process.pid}.tmp`;
  writeFileSync(aside, JSON.stringify({ v: 1, machine: f.machine, session: f.session, updates }), { mode: 0o600 });
  renameSync(aside, f.path);
}

/**
 * What an earlier run kept, or nothing. A file that is not an outbox of this session is moved aside
 * (`…bad`, kept for a person to read) and named in the error, so it is said once, not read again.
 */
export function loadKept(f: OutboxFile): KeptUpdate[] {
  if (!existsSync(f.path)) return [];
  const parsed = FileSchema.safeParse(safeJson(readFileSync(f.path, 'utf8')));
  if (parsed.success && parsed.data.machine === f.machine && parsed.data.session === f.session) return parsed.data.updates;
  const bad = `${f.path}.bad`;
  renameSync(f.path, bad);
  const why = parsed.success ? `it is of ${parsed.data.machine}/${parsed.data.session}` : 'it is not an outbox file';
  throw new Error(`the kept updates in ${f.path} were not read (${why}); moved to ${bad}, their tasks are delivered again`);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
