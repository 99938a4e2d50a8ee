import { describe, expect, it } from 'vitest';
import { SchedulerConfigSchema } from './config.js';

describe("the scheduler's SHROOMS_GATEWAYS", () => {
  it('reads the map as the client does, and refuses an entry it cannot read', () => {
    const ok = SchedulerConfigSchema.parse({ SHROOMS_MACHINE: 'laptop', SHROOMS_GATEWAYS: 'pi5=http://10.0.0.3:7387/' });
    expect(ok.SHROOMS_GATEWAYS).toEqual({ pi5: 'http://10.0.0.3:7387' });
    const bad = SchedulerConfigSchema.safeParse({ SHROOMS_MACHINE: 'laptop', SHROOMS_GATEWAYS: 'pi5=10.0.0.3:7387' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toBe('SHROOMS_GATEWAYS entry "pi5=10.0.0.3:7387" is not MACHINE=http://HOST:PORT');
  });
});
