/**
 * The tasks preloaded for the GetTask/ListTasks figures: finished echo tasks of the session (or
 * tenant) `shelf`, one question and its answer each, status times 1 ms apart (newest = highest i).
 * Task i has the id `shelf:shelf-<i>` in both arms.
 */
export const SHELF = 'shelf';
/** Status time of task 0; later tasks are 1 ms apart. */
export const SHELF_EPOCH_MS = Date.parse('2026-01-01T00:00:00.000Z');

export const shelfMessageId = (i: number) => `shelf-${i}`;
export const shelfTaskId = (i: number) => `${SHELF}:${shelfMessageId(i)}`;
export const shelfText = (i: number) => `question ${i}: what does the echo say?`;

/** Task i in spec JSON, shaped as our echo harness leaves a finished task. */
export function shelfTask(i: number, withMetadata = false): Record<string, unknown> {
  const id = shelfTaskId(i);
  const contextId = `shelf-ctx-${i}`;
  const at = new Date(SHELF_EPOCH_MS + i).toISOString();
  const parts = [{ text: shelfText(i) }];
  const question = { messageId: shelfMessageId(i), role: 'ROLE_USER', parts, taskId: id, contextId };
  const answer = { messageId: `${id}#done-2`, role: 'ROLE_AGENT', parts, taskId: id, contextId, metadata: { at } };
  return {
    id,
    contextId,
    status: { state: 'TASK_STATE_COMPLETED', timestamp: at, message: answer },
    history: [question, answer],
    artifacts: [{ artifactId: `${id}#summary`, name: 'summary', parts }],
    ...(withMetadata ? { metadata: { 'shrooms/created_at': at } } : {}),
  };
}
