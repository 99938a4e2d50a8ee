/**
 * Runs work for one key at a time inside this process. Admits for the same window queue here
 * instead of racing each other on the KV; only other replicas are left to race (compare-and-set
 * settles those), which keeps retries few under bursts.
 */
export type KeyedLock = <T>(key: string, work: () => Promise<T>) => Promise<T>;

export function keyedLock(): KeyedLock {
  const tails = new Map<string, Promise<void>>();
  return async function withKey<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const tail = before.then(() => mine);
    tails.set(key, tail);
    await before;
    try {
      return await work();
    } finally {
      done();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}
