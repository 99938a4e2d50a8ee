/** What one occurrence of a schedule sends: the message id, the text, and the metadata. */
import {
  META,
  parseAgent,
  type Metadata,
  occurrenceMessageId,
  resultMessageId,
  scheduledByLine,
  type Occurrence,
  type Schedule,
} from '@shrooms/protocol';
import type { OutgoingMessage } from './send.js';

export function occurrenceMessage(s: Schedule, occ: Pick<Occurrence, 'at'>, recipient: string, late: boolean): OutgoingMessage {
  const agent = parseAgent(recipient)!;
  const metadata: Metadata = {
    [META.schedule]: s.id,
    [META.occurrence]: occ.at,
    [META.scheduledBy]: scheduledByLine(s.owner, occ.at, s.rule.zone, late),
  };
  // The owner's claimed session travels as the task's claim, as for any task it would ask itself.
  if (s.owner.from) metadata[META.from] = s.owner.from;
  if (s.replyTo) metadata[META.replyTo] = s.replyTo;
  return { machine: agent.machine!, session: agent.session, messageId: occurrenceMessageId(s.id, occ.at), text: s.prompt, metadata };
}

/**
 * The message that carries a finished occurrence's result back to `replyTo`. Its id is derived too
 * (occurrence + recipient), so it is sent once whatever replica or restart sends it.
 */
export function resultMessage(
  s: Schedule,
  occurrence: string,
  recipient: string,
  taskId: string,
  state: string,
  text: string,
): OutgoingMessage {
  const to = parseAgent(s.replyTo!)!;
  const stateName = state
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace('_', ' ');
  const body = [
    `Result of scheduled task ${taskId} on ${recipient} (${scheduledByLine(s.owner, occurrence, s.rule.zone)}): ${stateName}.`,
    '',
    text,
  ].join('\n');
  return {
    machine: to.machine!,
    session: to.session,
    messageId: resultMessageId(s.id, occurrence, recipient),
    text: body,
    metadata: { [META.schedule]: s.id, [META.occurrence]: occurrence },
  };
}
