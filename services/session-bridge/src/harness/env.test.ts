import { describe, expect, it } from 'vitest';
import { BRIDGE_SECRETS, harnessBaseEnv, withheldFromHarness } from '../config.js';
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
    expect(BRIDGE_SECRETS.every(withheldFromHarness)).toBe(true);
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

  it("keeps the telemetry exporter's secrets, any NATS credential and the services' own settings out", () => {
    const withheld = {
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer otel-token',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=otel-key',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x',
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'x',
      OTEL_EXPORTER_OTLP_CLIENT_KEY: '/keys/client.key',
      OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: '/keys/traces.key',
      NATS_BRIDGE_PASSWORD: 'deploy-secret',
      NATS_NKEY_SEED: 'SUA…',
      BRIDGE_SESSION: 's',
      BRIDGE_ACP_COMMAND: 'my-agent --api-key sk-in-the-command',
      BRIDGE_STATE_DIR: '/state',
      GATEWAY_PEERS_FILE: '/etc/shrooms/peers.yaml',
      GATEWAY_GUARD: 'required',
      GUARD_POLICY_FILE: '/etc/shrooms/policy.yaml',
      GUARD_RATE_MAX: '30',
      SCHEDULER_MISSED: 'fire-once',
    };
    const kept = {
      PATH: '/usr/bin',
      HOME: '/home/me',
      LANG: 'C.UTF-8',
      HTTPS_PROXY: 'http://proxy:3128',
      SSH_AUTH_SOCK: '/run/ssh.sock',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      SHROOMS_MODEL_BASE_URL: 'http://127.0.0.1:9000',
      SHROOMS_MODEL_API_KEY: 'sk-model',
      SHROOMS_MODEL: 'm',
      SHROOMS_MACHINE: 'box',
      SHROOMS_GATEWAY_URL: 'http://127.0.0.1:7387',
      GATEWAY_URL: 'http://127.0.0.1:7387',
      SHROOMS_PI_BIN: '/opt/pi',
    };
    expect(harnessBaseEnv({ ...withheld, ...kept })).toEqual(kept);
  });
});
