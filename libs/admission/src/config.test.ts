import { ConfigError, loadConfig } from '@shrooms/runtime';
import { expect, it } from 'vitest';
import { AdmissionConfigSchema } from './config.js';
import { WINDOW_MAX_ENTRIES } from './window/window.js';

it('takes a window limit up to the most one window holds', () => {
  const at = String(WINDOW_MAX_ENTRIES);
  expect(loadConfig(AdmissionConfigSchema, { GUARD_RATE_MAX: at, GUARD_BUDGET_MAX: at })).toMatchObject({
    GUARD_RATE_MAX: WINDOW_MAX_ENTRIES,
    GUARD_BUDGET_MAX: WINDOW_MAX_ENTRIES,
  });
});

it('refuses a window limit past it, naming the setting and why', () => {
  for (const name of ['GUARD_RATE_MAX', 'GUARD_BUDGET_MAX']) {
    const load = () => loadConfig(AdmissionConfigSchema, { [name]: String(WINDOW_MAX_ENTRIES + 1) });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`${name}: at most ${WINDOW_MAX_ENTRIES}: a window keeps every task id it admitted in one NATS message`);
  }
});
