import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, envBool, loadConfig, redactConfig, withRenamedSettings } from './config.js';

describe('redactConfig', () => {
  it('hides secrets by name and credentials inside URLs, and nothing else', () => {
    expect(
      redactConfig({
        NATS_URL: 'nats://gateway:pw0123@127.0.0.1:4222,nats://s3cret@10.0.0.2:4222,nats://10.0.0.3:4222',
        NATS_PASS: 'pw0123',
        GATEWAY_PUBLIC_URL: 'http://laptop:7387',
        GATEWAY_PORT: 7387,
      }),
    ).toEqual({
      NATS_URL: 'nats://gateway:***@127.0.0.1:4222,nats://***@10.0.0.2:4222,nats://10.0.0.3:4222',
      NATS_PASS: '***',
      GATEWAY_PUBLIC_URL: 'http://laptop:7387',
      GATEWAY_PORT: 7387,
    });
  });

  it('shows a command line by its first word only: the rest may carry a key', () => {
    expect(redactConfig({ BRIDGE_ACP_COMMAND: 'env OPENAI_API_KEY=sk-x codex-acp', BRIDGE_CLI: 'claude' })).toEqual({
      BRIDGE_ACP_COMMAND: 'env … (2 more words withheld)',
      BRIDGE_CLI: 'claude',
    });
    expect(redactConfig({ BRIDGE_ACP_COMMAND: 'my-agent' })).toEqual({ BRIDGE_ACP_COMMAND: 'my-agent' });
  });
});

describe('envBool', () => {
  const schema = z.object({ ON: envBool(true), OFF: envBool(false) });

  it('reads yes and no in their usual spellings, any case, and the default when unset or empty', () => {
    expect(loadConfig(schema, { ON: 'No', OFF: ' TRUE ' })).toEqual({ ON: false, OFF: true });
    expect(loadConfig(schema, { ON: '0', OFF: 'on' })).toEqual({ ON: false, OFF: true });
    expect(loadConfig(schema, { ON: '', OFF: undefined })).toEqual({ ON: true, OFF: false });
  });

  it('refuses anything else at start, naming the setting, rather than reading it as false', () => {
    expect(() => loadConfig(schema, { ON: 'enabled' })).toThrow(ConfigError);
    expect(() => loadConfig(schema, { OFF: 'ture' })).toThrow(/OFF: give 1, true, yes or on; 0, false, no or off/);
  });
});

describe('withRenamedSettings', () => {
  it('reads an old name under its one name, saying so once; the new name wins when both are set', () => {
    const lines: string[] = [];
    const warn = (l: string) => lines.push(l);
    expect(withRenamedSettings({ SCHEDULER_GATEWAYS: 'pi5=http://10.8.0.3:7387' }, warn).SHROOMS_GATEWAYS).toBe('pi5=http://10.8.0.3:7387');
    expect(withRenamedSettings({ SCHEDULER_GATEWAYS: 'a=http://x' }, warn).SHROOMS_GATEWAYS).toBe('a=http://x');
    expect(lines).toEqual(['SCHEDULER_GATEWAYS is an old name: use SHROOMS_GATEWAYS']);
    expect(withRenamedSettings({ GATEWAY_URL: 'http://old', SHROOMS_GATEWAY_URL: 'http://new' }, warn).SHROOMS_GATEWAY_URL).toBe(
      'http://new',
    );
    expect(lines.at(-1)).toBe('GATEWAY_URL is an old name: use SHROOMS_GATEWAY_URL (set too, so GATEWAY_URL is ignored)');
  });
});
