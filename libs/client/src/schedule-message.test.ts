import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { scheduleAsTask, scheduleIdForMessage, scheduleRequestFromSendMessage } from './schedule-message.js';
import type { Schedule } from '@shrooms/protocol';

const target = { machine: 'home', session: 'review', origin: { device: 'laptop', from: 'laptop/webapp' } };
const message = (metadata?: Record<string, unknown>) => ({
  messageId: 'm-1',
  role: 'ROLE_USER' as const,
  parts: [{ text: 'check the roadmap' }],
  ...(metadata ? { metadata } : {}),
});

describe('scheduleRequestFromSendMessage', () => {
  it('returns null for an ordinary message', () => {
    expect(scheduleRequestFromSendMessage({ message: message() }, target)).toBeNull();
  });

  it('builds a create request from shrooms/at, shrooms/repeat and shrooms/reply_to', () => {
    const req = scheduleRequestFromSendMessage(
      { message: message({ 'shrooms/at': '2026-10-12T08:00[Europe/Berlin]', 'shrooms/repeat': 'weekly:mon', 'shrooms/reply_to': true }) },
      target,
    );
    expect(req).toEqual({
      id: scheduleIdForMessage('laptop', 'm-1'),
      recipients: ['home/review'],
      prompt: 'check the roadmap',
      at: '2026-10-12T08:00[Europe/Berlin]',
      repeat: 'weekly:mon',
      origin: target.origin,
      replyTo: 'laptop/webapp',
    });
  });

  it('reads shrooms/at as { at, zone } from the request metadata too', () => {
    const req = scheduleRequestFromSendMessage(
      { message: message(), metadata: { 'shrooms/at': { at: '2026-10-12T08:00', zone: 'UTC' } } },
      target,
    );
    expect(req).toMatchObject({ at: '2026-10-12T08:00', zone: 'UTC' });
  });

  it('gives a resend of the same message from the same device the same schedule id', () => {
    expect(scheduleIdForMessage('laptop', 'm-1')).toBe(scheduleIdForMessage('laptop', 'm-1'));
    expect(scheduleIdForMessage('laptop', 'm-1')).not.toBe(scheduleIdForMessage('pi5', 'm-1'));
  });

  it('refuses shrooms/at on an answer to a task with INVALID_PARAMS', () => {
    expect(() =>
      scheduleRequestFromSendMessage({ message: { ...message({ 'shrooms/at': '2026-10-12T08:00Z' }), taskId: 'review:x' } }, target),
    ).toThrow(ShroomsError);
  });
});

describe('scheduleAsTask', () => {
  it('answers with a SUBMITTED task named after the message, carrying the schedule', () => {
    const s = {
      id: 'a2a-1',
      rule: { at: '2026-10-12T08:00', zone: 'Europe/Berlin', repeat: { freq: 'weekly' } },
      next: { at: '2026-10-12T06:00:00.000Z', cursor: 0, seq: 0 },
      updatedAt: '2026-10-01T00:00:00.000Z',
    } as Schedule;
    const task = scheduleAsTask(s, 'review', 'm-1', 'ctx');
    expect(task).toMatchObject({
      id: 'review:m-1',
      contextId: 'ctx',
      status: { state: 'TASK_STATE_SUBMITTED' },
      metadata: { 'shrooms/schedule': 'a2a-1' },
    });
    expect(task.status.message?.parts[0]?.text).toBe('scheduled a2a-1: first Mon 12 Oct 2026 08:00 (Europe/Berlin), repeating weekly');
  });
});
