import { describe, expect, it } from 'vitest';
import { bindPolicy } from './bind.js';

const mesh = { meshAddresses: ['10.8.0.1', 'fd00:8::1/64'] };

describe('bindPolicy', () => {
  it('allows loopback in every spelling', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost', '::ffff:127.0.0.1'])
      expect(bindPolicy(host, mesh)).toMatchObject({ allowed: true, unsafe: false });
  });

  it("allows the machine's own mesh addresses", () => {
    expect(bindPolicy('10.8.0.1', mesh).allowed).toBe(true);
    expect(bindPolicy('fd00:8::1', mesh).allowed).toBe(true);
  });

  it('refuses every interface, other addresses and host names', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.20', '10.8.0.2', 'laptop.example.org']) {
      const d = bindPolicy(host, mesh);
      expect(d.allowed, host).toBe(false);
      expect(d.reason).toMatch(/unsafe override/);
    }
  });

  it('allows them only with the explicit unsafe override, and says so', () => {
    expect(bindPolicy('0.0.0.0', { ...mesh, allowUnsafe: true })).toMatchObject({
      allowed: true,
      unsafe: true,
      reason: expect.stringMatching(/^UNSAFE/),
    });
  });
});
