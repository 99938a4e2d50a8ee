/**
 * Tools that run without asking: reading the mesh and the session's own task bookkeeping (finishing
 * the task it was given, acknowledging an answer). Asking another agent or scheduling work makes
 * work elsewhere, so those ask unless the session auto-approves. Its own module: the MCP setup and
 * the ACP presets read it without loading the Claude adapter into every bridge.
 */
export const READ_ONLY_TOOLS: readonly string[] = ['list_agents', 'task_status', 'task_update', 'task_ack', 'list_schedules'];
