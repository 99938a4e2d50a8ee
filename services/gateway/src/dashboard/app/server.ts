/** The gateway's JSON under `/dashboard/api/`: reads, and actions with the header only this page sends. */
import type { ErrorAnswer } from '../wire.js';

async function answer<T>(r: Response): Promise<T> {
  const t = await r.text();
  let b: unknown;
  try {
    b = t ? JSON.parse(t) : null;
  } catch {
    b = null;
  }
  if (!r.ok) throw new Error((b as Partial<ErrorAnswer> | null)?.error?.message || `the gateway answered ${r.status}`);
  return b as T;
}

export async function getJSON<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store' }));
}

export async function postJSON<T>(path: string, body: unknown): Promise<T> {
  const r = await fetch(path, {
    method: 'POST',
    cache: 'no-store',
    headers: { 'content-type': 'application/json', 'x-shrooms-dashboard': '1', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return answer<T>(r);
}

/** `?a=1&b=x` of the parameters that have a value ('' for none). */
export function qs(params: Record<string, string | number | null | undefined>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '' && v !== null) u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}
