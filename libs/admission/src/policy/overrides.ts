/**
 * Rules set through the control endpoint, kept in KV bucket `shrooms_guard_policy` (key M.S of the
 * session pattern, `*` allowed) so every guard replica sees them: each replica watches the bucket
 * and keeps the rules in memory. A replica that writes a rule sees it at once; the others within
 * a watch delivery.
 */
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, decodeToken, keys, parseAgent, PolicyRuleSchema, type PolicyRule } from '@shrooms/protocol';
import { keysNow, retryJetStream, type Logger } from '@shrooms/runtime';

export class PolicyOverrides {
  readonly rules = new Map<string, PolicyRule>();
  private stopWatch: () => void = () => {};

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

  /** Resolves once the stored rules are loaded; later changes keep arriving. */
  private async follow(): Promise<void> {
    const iter = await this.kv.watch();
    this.stopWatch = () => iter.stop();
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    // Whether anything is stored (removed rules too: the watch delivers their markers). One
    // stream-info request: kv.keys() would leave a consumer on the server for five minutes.
    if ((await keysNow(this.nc, BUCKETS.guardPolicy)).length === 0) markReady();
    void (async () => {
      for await (const e of iter as AsyncIterable<KvWatchEntry>) {
        this.apply(e);
        if (e.isUpdate || e.delta === 0) markReady();
      }
    })();
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

  private apply(e: KvWatchEntry): void {
    const dot = e.key.indexOf('.');
    const pattern = `${decodeToken(e.key.slice(0, dot))}/${decodeToken(e.key.slice(dot + 1))}`;
    if (e.operation !== 'PUT' || e.value.length === 0) {
      this.rules.delete(pattern);
      return;
    }
    const parsed = PolicyRuleSchema.safeParse(safeJson(e.string()));
    if (!parsed.success) {
      this.log.error({ key: e.key }, 'ignoring an unreadable allow-list rule in the policy bucket');
      return;
    }
    this.rules.set(pattern, parsed.data);
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
