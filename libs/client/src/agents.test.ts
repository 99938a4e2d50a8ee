import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { gatewayFor, resolveTarget, toAgentInfo, type AgentInfo } from './agents.js';

const agent = (machine: string, session: string, gatewayUrl?: string): AgentInfo =>
  toAgentInfo({ machine, session, harness: 'echo', state: 'idle', gatewayUrl, at: new Date().toISOString(), ttlMs: 30000 })!;

describe('resolving a target', () => {
  const agents = [
    agent('laptop', 'web'),
    agent('home', 'review', 'http://10.0.0.2:7387'),
    agent('pi5', 'web', 'http://10.0.0.3:7387'),
    agent('pi5', 'tests', 'http://10.0.0.3:7387'),
    agent('home', 'tests', 'http://10.0.0.2:7387'),
  ];

  it('takes MACHINE/SESSION as written', () => {
    expect(resolveTarget('pi5/web', 'laptop', agents).name).toBe('pi5/web');
  });

  it('prefers this machine for a bare session name', () => {
    expect(resolveTarget('web', 'laptop', agents).name).toBe('laptop/web');
  });

  it('finds a bare name that only one other machine has', () => {
    expect(resolveTarget('review', 'laptop', agents).name).toBe('home/review');
  });

  it('refuses a bare name several other machines have', () => {
    expect(() => resolveTarget('tests', 'laptop', agents)).toThrow(/several machines \(pi5\/tests, home\/tests\)/);
  });

  it('leaves an unknown bare name to this machine (its gateway knows queued sessions)', () => {
    expect(resolveTarget('nobody', 'laptop', agents).name).toBe('laptop/nobody');
  });
});

describe('finding the gateway of a machine', () => {
  const ctx = (agents: AgentInfo[], staticMap: Record<string, string> = {}) => ({
    local: 'laptop',
    localUrl: 'http://127.0.0.1:7387',
    agents,
    staticMap,
  });

  it('uses the local gateway for this machine, whatever the signals say', () => {
    expect(gatewayFor('laptop', 'web', ctx([agent('laptop', 'web', 'http://elsewhere:1')]))).toBe('http://127.0.0.1:7387');
  });

  it('uses the gateway another machine announces, but not a loopback one', () => {
    expect(gatewayFor('home', 'x', ctx([agent('home', 'a', 'http://127.0.0.1:7387'), agent('home', 'b', 'http://10.0.0.2:7387/')]))).toBe(
      'http://10.0.0.2:7387',
    );
  });

  it('falls back to the static map, then says what to set', () => {
    expect(gatewayFor('pi5', 'x', ctx([], { pi5: 'http://10.0.0.3:7387' }))).toBe('http://10.0.0.3:7387');
    try {
      gatewayFor('pi5', 'x', ctx([]));
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ShroomsError);
      expect((e as ShroomsError).key).toBe('SESSION_NOT_FOUND');
      expect((e as ShroomsError).message).toMatch(/SHROOMS_GATEWAYS=pi5=/);
    }
  });
});
