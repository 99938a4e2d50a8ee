/**
 * The chain rules (spec §6). How depth is counted:
 *
 *   - A task asked by a person or by a schedule is a ROOT task: depth 0, chain `[]`.
 *   - A task asked by a session while it works on a task of depth d has depth d + 1, and its chain
 *     is the parent's chain plus the parent's session: `chain` lists the `MACHINE/SESSION` of every
 *     task above the new one, root first, so `depth === chain.length`.
 *   - With the default maximum of 3, a person → A (0) → B (1) → C (2) → D (3) is admitted and D asking
 *     E (depth 4) is refused with CHAIN_TOO_DEEP.
 *   - A cycle is a session appearing twice: the target already in the chain (person → A → B → C → A:
 *     the fourth hop, chain [A, B, C], target A) is refused with CHAIN_CYCLE. The cycle is checked
 *     first, so a cycle is always reported as a cycle even when it is also too deep.
 *
 * The guard trusts neither number alone: the depth used is the larger of the claimed `depth` and
 * the chain's length.
 */
import { ShroomsError, formatAgent } from '@shrooms/protocol';

export interface ChainRequest {
  machine: string;
  session: string;
  chain: string[];
  depth: number;
}

/** The refusal for this request's chain, or undefined when the chain is fine. */
export function checkChain(req: ChainRequest, maxDepth: number): ShroomsError | undefined {
  const target = formatAgent({ machine: req.machine, session: req.session });
  const seen = new Set<string>();
  for (const link of req.chain) {
    if (sameSession(link, target, req.session) || seen.has(link)) {
      const path = [...req.chain, target].join(' → ');
      return new ShroomsError('CHAIN_CYCLE', `the ask chain would visit ${seen.has(link) ? link : target} twice: ${path}`, {
        session: seen.has(link) ? link : target,
        chain: path,
      });
    }
    seen.add(link);
  }
  const depth = Math.max(req.depth, req.chain.length);
  if (depth > maxDepth) {
    return new ShroomsError('CHAIN_TOO_DEEP', `the ask chain would be ${depth} deep; at most ${maxDepth} is allowed`, {
      depth,
      maxDepth,
    });
  }
  return undefined;
}

/** A chain link written without a machine (`SESSION`) is taken to be the target when the names match: fail closed. */
function sameSession(link: string, target: string, session: string): boolean {
  return link === target || (!link.includes('/') && link === session);
}
