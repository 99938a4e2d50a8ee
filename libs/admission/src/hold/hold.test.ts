import { describe, expect, it } from 'vitest';
import { holdReason } from './hold.js';

const claude = (autoApprove: boolean) => ({ harness: 'claude', autoApprove });

describe('holdReason', () => {
  it('holds an agent task for an auto-approving session that is not switched on', () => {
    expect(holdReason({ fromAgent: true, agentTasks: false, signal: claude(true), holdWhenUnknown: true })).toBeDefined();
  });

  it('always treats pi as auto-approving', () => {
    expect(
      holdReason({ fromAgent: true, agentTasks: false, signal: { harness: 'pi', autoApprove: false }, holdWhenUnknown: true }),
    ).toBeDefined();
  });

  it('runs the task when the session asks before running tools', () => {
    expect(holdReason({ fromAgent: true, agentTasks: false, signal: claude(false), holdWhenUnknown: true })).toBeUndefined();
  });

  it('runs the task when the session is switched on for agent tasks', () => {
    expect(holdReason({ fromAgent: true, agentTasks: true, signal: claude(true), holdWhenUnknown: true })).toBeUndefined();
  });

  it('never holds a task a person asked for', () => {
    expect(holdReason({ fromAgent: false, agentTasks: false, signal: claude(true), holdWhenUnknown: true })).toBeUndefined();
  });

  it('holds when the signal is missing unless told otherwise', () => {
    expect(holdReason({ fromAgent: true, agentTasks: false, signal: null, holdWhenUnknown: true })).toBeDefined();
    expect(holdReason({ fromAgent: true, agentTasks: false, signal: null, holdWhenUnknown: false })).toBeUndefined();
  });
});
