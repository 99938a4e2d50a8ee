import { ConfigError, loadConfig } from '@shrooms/runtime';
import { expect, it } from 'vitest';
import { GatewayConfigSchema } from './config.js';

const load = (env: Record<string, string>) => loadConfig(GatewayConfigSchema, { SHROOMS_MACHINE: 'box', ...env });

it('refuses a retention of finished tasks not longer than an open task may wait: the ledger would drop it first', () => {
  // The bucket drops any task that long after its last write, open or not.
  expect(() => load({ LIMIT_TASK_EXPIRY_MS: '86400000', LIMIT_FINISHED_RETENTION_MS: '86400000' })).toThrow(ConfigError);
  expect(() => load({ LIMIT_FINISHED_RETENTION_MS: '3600000' })).toThrow(
    'LIMIT_FINISHED_RETENTION_MS: 3600000 ms is not longer than LIMIT_TASK_EXPIRY_MS (86400000 ms)',
  );
  expect(load({ LIMIT_TASK_EXPIRY_MS: '3600000', LIMIT_FINISHED_RETENTION_MS: '7200000' }).LIMIT_FINISHED_RETENTION_MS).toBe(7_200_000);
});
