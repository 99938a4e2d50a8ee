import type { AgentInfo } from '@shrooms/client';
import { describe, expect, it } from 'vitest';
import { agentLine } from './agents.js';

const web: AgentInfo = {
  name: 'laptop/web',
  machine: 'laptop',
  session: 'web',
  harness: 'claude',
  state: 'idle',
  cwd: '/home/me/src/web',
  openTasks: 0,
  queuedTasks: 0,
  autoApprove: false,
};

describe('a session as list_agents writes it', () => {
  it('says what a working session works on, and its load', () => {
    expect(agentLine({ ...web, state: 'working', task: 'laptop/web:m-1', openTasks: 1, queuedTasks: 2 })).toBe(
      'laptop/web — claude, working on laptop/web:m-1, in /home/me/src/web (1 open, 2 queued)',
    );
  });

  it('leaves out what an idle session does not have', () => {
    expect(agentLine({ ...web, cwd: undefined } as AgentInfo)).toBe('laptop/web — claude, idle');
  });
});
