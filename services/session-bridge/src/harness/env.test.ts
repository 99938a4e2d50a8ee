import { describe, expect, it } from 'vitest';
import { BRIDGE_SECRETS, harnessBaseEnv } from '../config.js';
import { modelBaseUrl } from './env.js';
import { piModelsJson } from './pi.js';

describe('the model base URL', () => {
  it('takes the form each API wants, whether or not a person wrote /v1', () => {
    for (const raw of ['http://127.0.0.1:9000', 'http://127.0.0.1:9000/', 'http://127.0.0.1:9000/v1', 'http://127.0.0.1:9000/v1/']) {
      expect(modelBaseUrl(raw, 'openai')).toBe('http://127.0.0.1:9000/v1');
      expect(modelBaseUrl(raw, 'anthropic')).toBe('http://127.0.0.1:9000');
    }
    expect(modelBaseUrl('https://openrouter.ai/api/v1', 'openai')).toBe('https://openrouter.ai/api/v1');
  });

  it('gives pi /v1 for openai-completions and none for anthropic-messages', () => {
    const url = (api?: string) => (piModelsJson('http://h:1', api, 'm') as { providers: Record<string, { baseUrl: string }> }).providers;
    expect(Object.values(url())[0]!.baseUrl).toBe('http://h:1/v1');
    expect(Object.values(url('anthropic-messages'))[0]!.baseUrl).toBe('http://h:1');
  });
});

describe("the harness's inherited environment", () => {
  it("keeps every NATS login of the bridge out, and the rest (the operator's model key among it) in", () => {
    expect([...BRIDGE_SECRETS].sort()).toEqual(['NATS_CREDS', 'NATS_PASS', 'NATS_TOKEN', 'NATS_URL', 'NATS_USER']);
    const env = harnessBaseEnv({
      NATS_URL: 'nats://bridge:pw@127.0.0.1:4222',
      NATS_USER: 'session-s',
      NATS_PASS: 'pw',
      NATS_TOKEN: 'tk',
      NATS_CREDS: '/creds/s.creds',
      CLAUDECODE: '1',
      PATH: '/usr/bin',
      ANTHROPIC_API_KEY: 'sk-op',
      SHROOMS_GATEWAY_URL: 'http://127.0.0.1:7387',
      UNSET: undefined,
    });
    expect(env).toEqual({ PATH: '/usr/bin', ANTHROPIC_API_KEY: 'sk-op', SHROOMS_GATEWAY_URL: 'http://127.0.0.1:7387' });
  });
});
