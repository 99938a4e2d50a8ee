import { describe, expect, it } from 'vitest';
import { redactConfig } from './config.js';

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
});
