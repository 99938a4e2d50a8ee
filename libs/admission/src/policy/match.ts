/**
 * Which rule applies to a session, and whether it admits an asker. Patterns are globs where `*`
 * matches any run of characters; the most specific pattern naming the session wins (the one with
 * the most literal characters), so `homeserver/review` beats `homeserver/*` beats `*`.
 */
import { BUILTIN_RULE, type EffectiveRule } from './schema.js';
import type { PolicyFile, PolicyRule } from '@shrooms/protocol';

export function globMatch(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!text.startsWith(first) || text.length < first.length + last.length || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = text.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

const specificity = (pattern: string) => pattern.replaceAll('*', '').length;

/**
 * The rule for `MACHINE/SESSION`: the file's rules with the control endpoint's rules laid over them
 * (a control rule replaces the file's rule of the same pattern), the most specific match merged
 * over the defaults.
 */
export function ruleFor(agent: string, file: PolicyFile, overrides: ReadonlyMap<string, PolicyRule>): EffectiveRule {
  const rules = new Map<string, PolicyRule>(Object.entries(file.sessions ?? {}));
  for (const [pattern, rule] of overrides) rules.set(pattern, rule);
  let best: [string, PolicyRule] | undefined;
  for (const [pattern, rule] of rules) {
    if (!globMatch(pattern, agent)) continue;
    if (!best || specificity(pattern) > specificity(best[0]) || (specificity(pattern) === specificity(best[0]) && pattern < best[0])) {
      best = [pattern, rule];
    }
  }
  const base = { ...BUILTIN_RULE, ...definedOnly(file.default ?? {}) };
  return { ...base, ...definedOnly(best?.[1] ?? {}), source: best?.[0] ?? 'default' };
}

export interface Asker {
  /** Verified device. */
  device: string;
  /** Claimed agent `MACHINE/SESSION`, when the sender says who it is. */
  from?: string;
  fromAgent: boolean;
}

/** Why the rule refuses the asker, or undefined when it admits. */
export function refusalReason(rule: EffectiveRule, asker: Asker): string | undefined {
  if (!rule.devices.some((p) => globMatch(p, asker.device))) return `device ${asker.device} is not on the allow-list (${rule.source})`;
  if (!asker.fromAgent) return undefined;
  if (asker.from === undefined) {
    return rule.agents.includes('*') ? undefined : `an agent that does not say who it is may not give tasks here (${rule.source})`;
  }
  const from = asker.from;
  if (!rule.agents.some((p) => globMatch(p, from))) return `agent ${from} is not on the allow-list (${rule.source})`;
  return undefined;
}

function definedOnly(rule: PolicyRule): PolicyRule {
  return Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined)) as PolicyRule;
}
