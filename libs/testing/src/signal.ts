/**
 * A session's signal as a bridge renews it while idle, without the field's own stamps (`at`,
 * `ttlMs`: `SignalField.renew` adds them): for tests that write the field as a bridge would.
 */
export function idleSignal(machine: string, session: string) {
  return {
    machine,
    session,
    harness: 'echo',
    state: 'idle' as const,
    openTasks: 0,
    queuedTasks: 0,
    autoApprove: false,
    remindersStopped: false,
  };
}
