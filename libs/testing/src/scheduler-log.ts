/**
 * What a scheduler replica's log (its JSON lines) says it is still sending. Each firing logs
 * `occurrence claimed` before its send and one of `occurrence fired`, `occurrence not taken yet;
 * will retry` or `schedule step failed; retried next tick` after it; a replica works on a schedule
 * one firing at a time. Tests wait for none in flight before they count what reached the ledger, instead of
 * sleeping while a straggling send might land.
 */
const ENDS = new Set(['occurrence fired', 'occurrence not taken yet; will retry', 'schedule step failed; retried next tick']);

/** The schedules whose last claim in `output` has no end after it (empty: every send began was answered). */
export function sendsInFlight(output: string): string[] {
  const open = new Set<string>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !line.includes('"schedule":')) continue;
    let l: { schedule?: unknown; msg?: unknown };
    try {
      l = JSON.parse(line) as typeof l;
    } catch {
      continue;
    }
    if (typeof l.schedule !== 'string') continue;
    if (l.msg === 'occurrence claimed') open.add(l.schedule);
    else if (ENDS.has(String(l.msg))) open.delete(l.schedule);
  }
  return [...open];
}
