import { NoRespondersError, RequestError, TimeoutError } from '@nats-io/nats-core';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { hasJetStreamApiCode, isNatsOutage, isTransientJetStreamError, retryJetStream, transientOrMadeMeanwhile } from './retry.js';

// The errors as the NATS client builds them (its own classes), not look-alikes.
const apiError = (err_code: number, code: number, description: string) => new JetStreamApiError({ err_code, code, description });
const noResponders = () => new RequestError('no responders', { cause: new NoRespondersError('$JS.API.STREAM.INFO.X') });

describe('isTransientJetStreamError', () => {
  it('is true for a timeout, for no responders and for a call whose cause had none', () => {
    expect(isTransientJetStreamError(new TimeoutError())).toBe(true);
    expect(isTransientJetStreamError(noResponders())).toBe(true);
    // How a JetStream call wraps it (JetStreamNotEnabled, which the client does not export).
    expect(isTransientJetStreamError(new Error('jetstream is not enabled', { cause: noResponders() }))).toBe(true);
  });

  it('is true for the API codes of a cluster between leaders', () => {
    expect(isTransientJetStreamError(apiError(10008, 503, 'JetStream system temporarily unavailable'))).toBe(true);
    expect(isTransientJetStreamError(apiError(10009, 500, 'JetStream cluster can not handle request'))).toBe(true);
    expect(isTransientJetStreamError(apiError(10023, 503, 'insufficient resources'))).toBe(true);
    // An R3 bucket created while a peer of the forming cluster is still offline (seen in the quorum chaos test).
    expect(isTransientJetStreamError(apiError(10005, 400, 'no suitable peers for placement, peer offline'))).toBe(true);
  });

  it('is false for refusals and for a text that only reads like an outage', () => {
    expect(isTransientJetStreamError(apiError(JetStreamApiCodes.StreamWrongLastSequence, 400, 'wrong last sequence: 3'))).toBe(false);
    expect(isTransientJetStreamError(apiError(JetStreamApiCodes.StreamNotFound, 404, 'stream not found'))).toBe(false);
    const account = apiError(JetStreamApiCodes.JetStreamNotEnabledForAccount, 503, 'JetStream not enabled for account');
    expect(isTransientJetStreamError(new Error(account.message, { cause: account }))).toBe(false);
    expect(isTransientJetStreamError(new Error('timeout: no responders, leader not current (503)'))).toBe(false);
    expect(isTransientJetStreamError('timeout')).toBe(false);
  });
});

describe('transientOrMadeMeanwhile', () => {
  it('retries a create that lost the race to another creator, and nothing that is for good', () => {
    expect(transientOrMadeMeanwhile(apiError(10065, 400, 'subjects overlap with an existing stream'))).toBe(true);
    expect(transientOrMadeMeanwhile(apiError(10058, 400, 'stream name already in use with a different configuration'))).toBe(true);
    expect(
      transientOrMadeMeanwhile(new Error('wrapped', { cause: apiError(10065, 400, 'subjects overlap with an existing stream') })),
    ).toBe(true);
    expect(transientOrMadeMeanwhile(new TimeoutError())).toBe(true);
    expect(transientOrMadeMeanwhile(apiError(10059, 404, 'stream not found'))).toBe(false);
    expect(transientOrMadeMeanwhile(new Error('subjects overlap with an existing stream'))).toBe(false);
  });
});

describe('hasJetStreamApiCode', () => {
  it('finds the code on the error or its causes, by code only', () => {
    const notFound = apiError(JetStreamApiCodes.StreamNotFound, 404, 'stream not found');
    expect(hasJetStreamApiCode(notFound, JetStreamApiCodes.StreamNotFound)).toBe(true);
    expect(hasJetStreamApiCode(new Error('a', { cause: new Error('b', { cause: notFound }) }), new Set([10059]))).toBe(true);
    expect(hasJetStreamApiCode(notFound, 10058)).toBe(false);
    expect(hasJetStreamApiCode(new Error('stream not found'), JetStreamApiCodes.StreamNotFound)).toBe(false);
  });
});

describe('retryJetStream', () => {
  it('retries a transient failure and throws any other at once', async () => {
    let calls = 0;
    await expect(retryJetStream(async () => (++calls < 3 ? Promise.reject(new TimeoutError()) : 'ok'), { firstDelayMs: 1 })).resolves.toBe(
      'ok',
    );
    expect(calls).toBe(3);
    calls = 0;
    const refused = apiError(JetStreamApiCodes.StreamWrongLastSequence, 400, 'wrong last sequence: 3');
    await expect(retryJetStream(async () => (++calls, Promise.reject(refused)), { firstDelayMs: 1 })).rejects.toBe(refused);
    expect(calls).toBe(1);
  });
});

describe('isNatsOutage', () => {
  it('is true for a JetStream API 503 and false for an API refusal', () => {
    expect(isNatsOutage(apiError(10008, 503, 'JetStream system temporarily unavailable'))).toBe(true);
    expect(isNatsOutage(new Error('wrapped', { cause: apiError(10008, 503, 'JetStream system temporarily unavailable') }))).toBe(true);
    expect(isNatsOutage(apiError(10071, 400, 'wrong last sequence: 3'))).toBe(false);
    expect(isNatsOutage(new Error('503 but only in the text'))).toBe(false);
  });

  it('is false for a store that refused a message for good, whatever HTTP status JetStream gave it', () => {
    // A full ledger (max_msgs, discard new) answers 503 with err_code 10077: not NATS going away.
    const full = apiError(10077, 503, 'maximum messages exceeded');
    expect(isNatsOutage(full)).toBe(false);
    expect(isNatsOutage(new Error('wrapped', { cause: full }))).toBe(false);
    expect(isNatsOutage(apiError(10077, 503, 'maximum bytes exceeded'))).toBe(false);
  });

  it('is true for the codes of JetStream not being there, whatever their HTTP status', () => {
    expect(isNatsOutage(apiError(10009, 500, 'JetStream cluster can not handle request'))).toBe(true);
    expect(isNatsOutage(apiError(JetStreamApiCodes.JetStreamNotEnabledForAccount, 503, 'JetStream not enabled for account'))).toBe(true);
  });
});
