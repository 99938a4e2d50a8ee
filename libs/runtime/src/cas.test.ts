import { JetStreamApiError } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { isStreamFull } from './cas.js';

// The errors as the NATS client builds them from the server's answer (its own class, not a look-alike).
const apiError = (err_code: number, code: number, description: string) => new JetStreamApiError({ err_code, code, description });

describe('isStreamFull', () => {
  it("is true for the store failure a stream at its max_msgs answers (nats-server's ErrMaxMsgs)", () => {
    expect(isStreamFull(apiError(10077, 503, 'maximum messages exceeded'))).toBe(true);
  });

  it('is false for other store failures, other codes and a text that only reads like it', () => {
    expect(isStreamFull(apiError(10077, 503, 'maximum bytes exceeded'))).toBe(false);
    expect(isStreamFull(apiError(10077, 503, 'maximum messages per subject exceeded'))).toBe(false);
    expect(isStreamFull(apiError(10071, 400, 'maximum messages exceeded'))).toBe(false);
    expect(isStreamFull(new Error('maximum messages exceeded'))).toBe(false);
  });
});
