/**
 * Params of an A2A call before their method parses them, for the few fields read first (routing,
 * who claims to ask, the trace): loose, each value checked where it is used.
 */
export interface LooseParams {
  id?: unknown;
  metadata?: Record<string, unknown>;
  message?: { taskId?: unknown; metadata?: Record<string, unknown> };
}

export function looseParams(params: unknown): LooseParams {
  return (params ?? {}) as LooseParams;
}
