import { describe, expect, it } from 'vitest';
import { globMatch, refusalReason, ruleFor } from './match.js';
import type { PolicyFile, PolicyRule } from '@shrooms/protocol';

describe('globMatch', () => {
  it('matches literally without a star', () => {
    expect(globMatch('pi5/jimmy', 'pi5/jimmy')).toBe(true);
    expect(globMatch('pi5/jimmy', 'pi5/jimmy2')).toBe(false);
  });

  it('lets a star stand for any run of characters', () => {
    expect(globMatch('*', 'anything/at.all')).toBe(true);
    expect(globMatch('pi5/*', 'pi5/jimmy')).toBe(true);
    expect(globMatch('pi5/*', 'pi55/jimmy')).toBe(false);
    expect(globMatch('*.home', 'pi5.home')).toBe(true);
    expect(globMatch('*.home', 'pi5.office')).toBe(false);
    expect(globMatch('a*b*c', 'axxbyyc')).toBe(true);
    expect(globMatch('a*b*c', 'acb')).toBe(false);
    expect(globMatch('ab*ba', 'aba')).toBe(false);
  });
});

const file: PolicyFile = {
  default: { agentTasks: false, devices: ['*.home', 'laptop'] },
  sessions: {
    'homeserver/*': { agents: ['laptop/*'] },
    'homeserver/review': { devices: ['laptop.home'], agentTasks: true },
    '*/open': { devices: ['*'] },
  },
};

describe('ruleFor', () => {
  it('falls back to the file default, then to the built-in default', () => {
    expect(ruleFor('pi5/jimmy', file, new Map())).toEqual({
      devices: ['*.home', 'laptop'],
      agents: ['*'],
      agentTasks: false,
      source: 'default',
    });
    expect(ruleFor('pi5/jimmy', {}, new Map())).toEqual({ devices: ['*'], agents: ['*'], agentTasks: false, source: 'default' });
  });

  it('takes the most specific pattern and fills its gaps from the default', () => {
    expect(ruleFor('homeserver/review', file, new Map())).toEqual({
      devices: ['laptop.home'],
      agents: ['*'],
      agentTasks: true,
      source: 'homeserver/review',
    });
    expect(ruleFor('homeserver/build', file, new Map()).source).toBe('homeserver/*');
    expect(ruleFor('laptop/open', file, new Map()).devices).toEqual(['*']);
  });

  it('lets a control rule replace the file rule of the same pattern', () => {
    const overrides = new Map<string, PolicyRule>([['homeserver/review', { agentTasks: false }]]);
    expect(ruleFor('homeserver/review', file, overrides)).toMatchObject({ devices: ['*.home', 'laptop'], agentTasks: false });
  });
});

describe('refusalReason', () => {
  const rule = { devices: ['laptop.home', 'pi5.home'], agents: ['laptop/*'], agentTasks: false, source: 'x/y' };

  it('admits a listed device with a person asking', () => {
    expect(refusalReason(rule, { device: 'pi5.home', fromAgent: false })).toBeUndefined();
  });

  it('refuses a device that is not listed', () => {
    expect(refusalReason(rule, { device: 'phone.home', fromAgent: false })).toMatch(/phone.home/);
  });

  it('checks the claimed agent only when the sender is an agent', () => {
    expect(refusalReason(rule, { device: 'pi5.home', from: 'pi5/jimmy', fromAgent: false })).toBeUndefined();
    expect(refusalReason(rule, { device: 'pi5.home', from: 'pi5/jimmy', fromAgent: true })).toMatch(/pi5\/jimmy/);
    expect(refusalReason(rule, { device: 'laptop.home', from: 'laptop/webapp', fromAgent: true })).toBeUndefined();
  });

  it('refuses an agent that does not say who it is unless every agent is allowed', () => {
    expect(refusalReason(rule, { device: 'laptop.home', fromAgent: true })).toBeDefined();
    expect(refusalReason({ ...rule, agents: ['*'] }, { device: 'laptop.home', fromAgent: true })).toBeUndefined();
  });
});
