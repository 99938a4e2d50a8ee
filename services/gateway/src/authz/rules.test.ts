import { describe, expect, it } from 'vitest';
import { ShroomsError } from '@shrooms/protocol';
import { authorize, type Action } from './rules.js';

const task = { id: 's:1', status: { state: 'TASK_STATE_INPUT_REQUIRED' as const }, metadata: { 'shrooms/device': 'laptop.home' } };
const asker = { device: 'laptop.home', machine: 'laptop', self: false };
const other = { device: 'pi5.home', machine: 'pi5', self: false };
const owner = { device: 'box', machine: 'box', self: true };
const target = { machine: 'box', session: 's', task };

const may = (action: Action, caller: typeof asker & { from?: string }) => {
  try {
    authorize(action, caller, target);
    return true;
  } catch (err) {
    expect(err).toBeInstanceOf(ShroomsError);
    expect((err as ShroomsError).key).toBe(action === 'update' ? 'UPDATE_FORBIDDEN' : 'ACTION_FORBIDDEN');
    return false;
  }
};

describe('who may do what', () => {
  it('lets the asking device and the owner cancel, answer and acknowledge, and no other device', () => {
    for (const action of ['cancel', 'answer', 'ack'] as const) {
      expect(may(action, asker), action).toBe(true);
      expect(may(action, owner), action).toBe(true);
      expect(may(action, other), action).toBe(false);
    }
  });

  it("lets only the owner's machine answer a permission prompt, release, reject and control", () => {
    for (const action of ['answer_permission', 'release', 'reject', 'control'] as const) {
      expect(may(action, owner), action).toBe(true);
      expect(may(action, asker), action).toBe(false);
    }
  });

  it('lets only the worker session on its own machine update', () => {
    expect(may('update', { ...owner, from: 'box/s' })).toBe(true);
    expect(may('update', { ...owner, from: 'box/other' })).toBe(false);
    expect(may('update', { ...asker, from: 'box/s' })).toBe(false);
  });
});
