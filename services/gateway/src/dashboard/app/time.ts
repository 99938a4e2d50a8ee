/** Ages and times as the page shows them. */

/** `42s`, `5m`, `3h 12m`, `4d`. */
export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return `${hr}h ${m % 60}m`;
  return `${Math.floor(hr / 24)}d`;
}

/** A time in the viewer's locale; '' for none. */
export function when(at: number | string | undefined): string {
  const t = typeof at === 'number' ? at : Date.parse(at ?? '');
  if (!t) return '';
  return new Date(t).toLocaleString();
}
