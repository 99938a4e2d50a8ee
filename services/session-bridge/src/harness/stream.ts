/**
 * Helpers for the zod schemas of the CLIs' streams. The CLIs are not ours and change between
 * releases: a field we read that comes in another shape must not drop the whole event (a dropped
 * `result` would hang the turn), so every field we read is optional and falls back to undefined.
 */
import { z } from 'zod';

/** An optional field that reads as undefined when absent or of another shape. */
export function field<T extends z.ZodType>(schema: T) {
  return schema.optional().catch(undefined);
}

/** An event of one `type`, other fields kept. */
export function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.object({ type: z.literal(type), ...shape }).loose();
}
