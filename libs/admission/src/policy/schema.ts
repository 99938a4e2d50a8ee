/**
 * The allow-list policy (a YAML or JSON file, plus rules set through the control endpoint):
 *
 * ```yaml
 * default:                     # for every session no rule below names
 *   devices: ["*"]             # verified devices that may give it tasks (DEVICE.MESH, or a machine's own name)
 *   agents: ["*"]              # claimed agents (MACHINE/SESSION) that may, when the sender is an agent
 *   agentTasks: false          # an auto-approving session runs agent tasks without holding them
 * sessions:
 *   "homeserver/review":       # MACHINE/SESSION; `*` matches any run of characters ("pi5/*", "*")
 *     devices: ["laptop.home", "homeserver"]
 *     agents: ["laptop/*"]
 *     agentTasks: true
 * ```
 *
 * A field left out of a rule comes from `default`, and one left out there from the built-in default
 * (everyone on the mesh may ask; agent tasks to auto-approving sessions are held).
 */
import type { PolicyRule } from '@shrooms/protocol';

export interface EffectiveRule {
  devices: string[];
  agents: string[];
  agentTasks: boolean;
  /** The session pattern the rule came from, or `default`. */
  source: string;
}

export const BUILTIN_RULE: Required<PolicyRule> = { devices: ['*'], agents: ['*'], agentTasks: false };
