/**
 * The sessions on the mesh, as the local gateway's `GET /agents` shows them from the signal field.
 * Only a routing and display hint: a session missing here may still have a queue in the ledger.
 */
import { ShroomsError } from '@shrooms/protocol';
import { z } from 'zod';
import { agentRef, parseAgentName, type AgentRef } from './refs.js';

export const AgentInfoSchema = z.object({
  /** `MACHINE/SESSION`. */
  name: z.string(),
  machine: z.string(),
  session: z.string(),
  harness: z.string(),
  /** starting | idle | working | waiting | stopped */
  state: z.string(),
  cwd: z.string().optional(),
  gatewayUrl: z.string().optional(),
  openTasks: z.number().int(),
  queuedTasks: z.number().int(),
  lastSpokeAt: z.string().optional(),
  autoApprove: z.boolean(),
  /** The task the session works on now, `MACHINE/SESSION:ID`. */
  task: z.string().optional(),
});
export type AgentInfo = z.infer<typeof AgentInfoSchema>;

const SignalViewSchema = z
  .object({
    machine: z.string(),
    session: z.string(),
    harness: z.string().default('unknown'),
    state: z.string().default('unknown'),
    cwd: z.string().optional(),
    gatewayUrl: z.string().optional(),
    openTasks: z.number().int().default(0),
    queuedTasks: z.number().int().default(0),
    lastSpokeAt: z.string().optional(),
    autoApprove: z.boolean().default(false),
    task: z.string().optional(),
  })
  .loose();

export const AgentsReplySchema = z.object({ agents: z.array(z.unknown()) }).loose();

export function toAgentInfo(raw: unknown): AgentInfo | undefined {
  const p = SignalViewSchema.safeParse(raw);
  if (!p.success) return undefined;
  const s = p.data;
  return {
    name: `${s.machine}/${s.session}`,
    machine: s.machine,
    session: s.session,
    harness: s.harness,
    state: s.state,
    ...(s.cwd ? { cwd: s.cwd } : {}),
    ...(s.gatewayUrl ? { gatewayUrl: s.gatewayUrl.replace(/\/$/, '') } : {}),
    openTasks: s.openTasks,
    queuedTasks: s.queuedTasks,
    ...(s.lastSpokeAt ? { lastSpokeAt: s.lastSpokeAt } : {}),
    autoApprove: s.autoApprove,
    ...(s.task ? { task: `${s.machine}/${s.task}` } : {}),
  };
}

const LOOPBACK = /^https?:\/\/(127\.|localhost[:/]|\[::1\])/i;

/**
 * Where a target lives. A bare SESSION is this machine's — unless this machine has no such session
 * and exactly one other machine does (the name `list_agents` shows).
 */
export function resolveTarget(target: string, local: string, agents: AgentInfo[]): AgentRef {
  const a = parseAgentName(target);
  if (a.machine) return agentRef(a.machine, a.session);
  if (agents.some((x) => x.machine === local && x.session === a.session)) return agentRef(local, a.session);
  const elsewhere = agents.filter((x) => x.session === a.session);
  if (elsewhere.length === 1) return agentRef(elsewhere[0]!.machine, a.session);
  if (elsewhere.length > 1) {
    throw new ShroomsError(
      'INVALID_PARAMS',
      `"${a.session}" is a session on several machines (${elsewhere.map((x) => x.name).join(', ')}); write MACHINE/SESSION`,
    );
  }
  return agentRef(local, a.session);
}

/**
 * The gateway that serves `machine`: this machine's own; else what its sessions announce (the
 * session asked for first; loopback addresses of another machine are useless from here); else the
 * static map.
 */
export function gatewayFor(
  machine: string,
  session: string | undefined,
  ctx: { local: string; localUrl: string; agents: AgentInfo[]; staticMap: Readonly<Record<string, string>> },
): string {
  if (machine === ctx.local) return ctx.localUrl;
  const usable = (u?: string) => (u && !LOOPBACK.test(u) ? u : undefined);
  const own = ctx.agents.find((x) => x.machine === machine && x.session === session);
  const any = ctx.agents.find((x) => x.machine === machine && usable(x.gatewayUrl));
  const url = usable(own?.gatewayUrl) ?? usable(any?.gatewayUrl) ?? ctx.staticMap[machine];
  if (url) return url.replace(/\/$/, '');
  throw new ShroomsError(
    'SESSION_NOT_FOUND',
    `no gateway is known for machine ${machine}: none of its sessions announces a reachable one on the mesh now; set SHROOMS_GATEWAYS=${machine}=http://HOST:7387`,
  );
}
