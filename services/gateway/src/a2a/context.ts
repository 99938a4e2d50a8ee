import { ShroomsError, isValidName } from '@shrooms/protocol';
import type { ScheduleHook } from '../tasks/schedule.js';
import type { ScheduleClient } from '@shrooms/client';
import type { TaskService } from '../tasks/service.js';
import type { Identify } from './caller.js';
import type { SseStreams } from './sse.js';

/** What the A2A bindings share. */
export interface A2AContext {
  tasks: TaskService;
  identify: Identify;
  sse: SseStreams;
  schedule?: ScheduleHook;
  schedules?: ScheduleClient;
  /** `GATEWAY_DEFAULT_SESSION`: where the machine card leads and `POST /a2a` goes without a session. */
  defaultSession?: string;
  /** Validates a session name from the path (it reaches subjects only encoded, but must be a name). */
  sessionName(raw: string): string;
}

export function sessionName(raw: string): string {
  if (!isValidName(raw)) throw new ShroomsError('SESSION_NOT_FOUND', `no session ${JSON.stringify(raw.slice(0, 80))}`);
  return raw;
}
