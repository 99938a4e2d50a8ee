/**
 * A seeded PRNG (mulberry32) and the random choices the fuzzer makes with it: one seed gives the
 * same requests in the same order on every machine, so a CI failure replays exactly.
 */
export class Prng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(xs: readonly (readonly [number, T])[]): T {
    const total = xs.reduce((a, [w]) => a + w, 0);
    let r = this.next() * total;
    for (const [w, v] of xs) {
      r -= w;
      if (r < 0) return v;
    }
    return xs[xs.length - 1]![1];
  }

  /** A string of `n` characters drawn from `alphabet` (code points, so surrogates stay as given). */
  string(n: number, alphabet: readonly string[]): string {
    let out = '';
    for (let i = 0; i < n; i++) out += this.pick(alphabet);
    return out;
  }

  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
}

/** Characters that break naive code: separators, wildcards, quotes, controls, odd unicode. */
export const HOSTILE_CHARS: readonly string[] = [
  '.',
  '*',
  '>',
  ' ',
  '/',
  '\\',
  ':',
  '%',
  '$',
  '_',
  '-',
  '"',
  "'",
  '`',
  '{',
  '}',
  '[',
  ']',
  '#',
  '?',
  '&',
  '=',
  '+',
  '~',
  '|',
  '<',
  '\u0000',
  '\u0001',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u2028',
  '\u2029',
  '\u200b',
  '\u200e',
  '\u202e',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '😀',
  'é',
  'ß',
  'Ω',
  '中',
  'a',
  'Z',
  '0',
  '9',
];

export const PLAIN_CHARS: readonly string[] = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-'.split('');
