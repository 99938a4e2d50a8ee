/**
 * A copy of `base` with `more`'s fields, as `{ ...base, ...more }` makes it — for copies made once per
 * task or request. On Node 20 (V8 11.3) a spread followed by fields its source lacks gives every copy
 * a hidden class of its own: 3–4 µs more to make and JSON-encode each, and every read of its fields
 * after megamorphic. Assigned into a new object, the copies share one. Node 22 and 24 share one either
 * way.
 */
export function withFields<T extends object, U extends object>(base: T, more: U): WithFields<T, U> {
  // An own `__proto__` (JSON.parse makes one from a client's `"__proto__"` key) is a field to a
  // spread, but Object.assign would set the copy's prototype with it: such a copy is a spread.
  if (Object.hasOwn(base, '__proto__') || Object.hasOwn(more, '__proto__')) return { ...base, ...more } as unknown as WithFields<T, U>;
  return Object.assign({}, base, more) as unknown as WithFields<T, U>;
}

/** The type of `{ ...base, ...more }`, kept a union when `base` is one. */
export type WithFields<T, U> = T extends unknown ? Omit<T, keyof U> & U : never;

/**
 * A string of its own with the text of `s`, for objects kept long. V8 keeps a string cut from another
 * (`slice`, `substring`: a NATS key cut from the subject it came with) as a view of the whole, and a
 * joined one (a template) as its parts, so whatever keeps such a string keeps those too. JSON's round
 * trip makes a new, flat string.
 */
export function ownString(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/**
 * One copy of each text that many long-kept objects repeat (a task's state, the machine, session and
 * device names of the rows of many tasks) instead of the copy each decoded task brings: up to `max`
 * texts (default 4,096); past that each caller gets a string of its own.
 */
export class StringPool {
  private readonly texts = new Map<string, string>();
  constructor(private readonly max = 4_096) {}

  /** How many texts it holds. */
  get size(): number {
    return this.texts.size;
  }

  share<S extends string>(s: S): S {
    const kept = this.texts.get(s);
    if (kept !== undefined) return kept as S;
    const own = ownString(s);
    if (this.texts.size < this.max) this.texts.set(own, own);
    return own as S;
  }
}
