/** How a SLOW reply streams: `chunks` pieces, `delayMs` apart, stopping when the client goes away. */
import type { ServerResponse } from 'node:http';

export interface StreamPace {
  chunks: number;
  delayMs: number;
}

/** Exactly `pace.chunks` pieces of `text` (some empty when the text is short); joined they are `text`. */
export function chunksOf(text: string, pace: StreamPace): string[] {
  const n = Math.max(1, pace.chunks);
  const step = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(text.slice(i * step, (i + 1) * step));
  return out;
}

/** Waits one beat; false when the response is already closed (the client cancelled). */
export function beat(res: ServerResponse, pace: StreamPace): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (alive: boolean) => {
      clearTimeout(timer);
      res.off('close', onClose);
      resolve(alive);
    };
    const onClose = () => done(false);
    const timer = setTimeout(() => done(!res.destroyed), pace.delayMs);
    res.once('close', onClose);
  });
}
