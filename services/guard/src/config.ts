/**
 * The guard's configuration: one zod schema over the environment, parsed once and frozen — the
 * connection, its health server and the admission settings (GUARD_*, libs/admission).
 */
import { AdmissionConfigSchema } from '@shrooms/admission';
import { BaseConfigSchema, HealthConfigSchema, loadConfig } from '@shrooms/runtime';
import type { z } from 'zod';

export const GuardConfigSchema = BaseConfigSchema.extend(HealthConfigSchema.shape).extend(AdmissionConfigSchema.shape);
export type GuardConfig = z.infer<typeof GuardConfigSchema>;

export function loadGuardConfig(env: Record<string, string | undefined> = process.env): Readonly<GuardConfig> {
  return loadConfig(GuardConfigSchema, env);
}
