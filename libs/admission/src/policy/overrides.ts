/**
 * Rules set through the control endpoint, kept in KV bucket `shrooms_guard_policy` (key M.S of the
 * session pattern, `*` allowed) so every guard replica sees them: each replica watches the bucket
 * and keeps the rules in memory. A replica that writes a rule sees it at once; the others within
 * a watch delivery.
 */
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, decodeToken, keys, parseAgent, PolicyRuleSchema, type PolicyRule } from '@shrooms/protocol';
import { keepWatching, keysNow, retryJetStream, type Logger } from '@shrooms/runtime';

export class PolicyOverrides {
  readonly rules = new Map<string, PolicyRule>();
  private stopWatch: () => void = () => {};
  /** Keys skipped as not a session pattern, each warned about once. */
  private readonly badKeys = new Set<string>();

  private constructor(
    readonly kv: KV,
    private readonly nc: NatsConnection,
    private readonly log: Logger,
  ) {}

  static async open(
    nc: NatsConnection,
    opts: { replicas: number; log: Logger; retryIf?: (err: unknown) => boolean },
  ): Promise<PolicyOverrides> {
    // Retried as the windows' bucket is (open.ts).
    const kv = await retryJetStream(
      () =>
        new Kvm(nc).create(BUCKETS.guardPolicy, {
          history: 5,
          replicas: opts.replicas,
          description: 'shrooms guard: allow-list rules set through the control endpoint; key MACHINE.SESSION (encoded)',
        }),
      opts.retryIf ? { retryIf: opts.retryIf } : {},
    );
    const o = new PolicyOverrides(kv, nc, opts.log);
    await o.follow();
    return o;
  }

  /** `pattern` is `MACHINE/SESSION` where either part may be or contain `*`. */
  async set(pattern: string, rule: PolicyRule): Promise<void> {
    const [machine, session] = splitPattern(pattern);
    await this.kv.put(keys.policy(machine, session), JSON.stringify(rule));
    this.rules.set(pattern, rule);
  }

  async clear(pattern: string): Promise<void> {
    const [machine, session] = splitPattern(pattern);
    await this.kv.delete(keys.policy(machine, session));
    this.rules.delete(pattern);
  }

  close(): void {
    this.stopWatch();
  }

  /**
   * Resolves once the stored rules are loaded; later changes keep arriving. A watch that ends by
   * itself is started again (keepWatching): until then this replica answers with the rules it has.
   */
  private async follow(): Promise<void> {
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    this.stopWatch = await keepWatching((ended, again) => this.watch(ended, again, markReady), {
      log: this.log,
      what: 'the watch of the allow-list rules',
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>(
      (resolve) =>
        (timer = setTimeout(() => {
          this.log.warn('allow-list rules still loading; going on with what arrived');
          resolve();
        }, 5_000)),
    );
    await Promise.race([ready, late]);
    clearTimeout(timer);
  }

  /**
   * One watch of the bucket: the stored rules (removed ones too: the watch delivers their markers),
   * then each change; `loaded` once the stored ones are in. Started `again`, it drops then the rules
   * it was not brought — gone while no watch ran — so a replica never keeps one another revoked.
   */
  private async watch(ended: (err?: unknown) => void, again: boolean, loaded: () => void): Promise<() => void> {
    const iter = await this.kv.watch();
    let brought: Set<string> | undefined = again ? new Set() : undefined;
    const markLoaded = (): void => {
      if (brought) for (const pattern of this.rules.keys()) if (!brought.has(pattern)) this.rules.delete(pattern);
      brought = undefined;
      loaded();
    };
    try {
      // Whether anything is stored. One stream-info request: kv.keys() would leave a consumer on the
      // server for five minutes.
      if ((await keysNow(this.nc, BUCKETS.guardPolicy)).length === 0) markLoaded();
    } catch (err) {
      iter.stop();
      throw err;
    }
    void (async () => {
      for await (const e of iter as AsyncIterable<KvWatchEntry>) {
        const pattern = this.apply(e);
        if (pattern !== undefined) brought?.add(pattern);
        if (e.isUpdate || e.delta === 0) markLoaded();
      }
    })().then(() => ended(), ended);
    return () => iter.stop();
  }

  /** Takes one stored rule in; returns its session pattern, none for a key that is not one. */
  private apply(e: KvWatchEntry): string | undefined {
    const pattern = this.patternOf(e.key);
    if (pattern === undefined) return undefined;
    if (e.operation !== 'PUT' || e.value.length === 0) {
      this.rules.delete(pattern);
      return pattern;
    }
    const parsed = PolicyRuleSchema.safeParse(safeJson(e.string()));
    if (!parsed.success) {
      this.log.error({ key: e.key }, 'ignoring an unreadable allow-list rule in the policy bucket');
      return pattern;
    }
    this.rules.set(pattern, parsed.data);
    return pattern;
  }

  /**
   * The session pattern a key stands for (`keys.policy`: MACHINE.SESSION, each encoded). A key
   * written by hand may not decode (`home.my_session`: `_` starts an escape): it is skipped, with
   * one warning per key, rather than end the watch — every replica would stop at it again.
   */
  private patternOf(key: string): string | undefined {
    const dot = key.indexOf('.');
    try {
      if (dot <= 0) throw new Error('no MACHINE.SESSION');
      return `${decodeToken(key.slice(0, dot))}/${decodeToken(key.slice(dot + 1))}`;
    } catch (err) {
      if (!this.badKeys.has(key)) {
        this.badKeys.add(key);
        this.log.warn(
          { key, err: (err as Error).message },
          'ignoring a key in the policy bucket that is not MACHINE.SESSION encoded; set rules through the control endpoint',
        );
      }
      return undefined;
    }
  }
}

export function splitPattern(pattern: string): [string, string] {
  const slash = pattern.indexOf('/');
  if (slash <= 0 || slash === pattern.length - 1) throw new Error(`a session pattern is MACHINE/SESSION, got ${JSON.stringify(pattern)}`);
  const machine = pattern.slice(0, slash);
  const session = pattern.slice(slash + 1);
  if (!isPatternPart(machine) || !isPatternPart(session)) throw new Error(`not a session pattern: ${JSON.stringify(pattern)}`);
  return [machine, session];
}

/** A name (see parseAgent) in which `*` may stand for any run of characters. */
function isPatternPart(part: string): boolean {
  const probe = part.replaceAll('*', 'x');
  return parseAgent(probe) !== undefined && !probe.includes('/');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
