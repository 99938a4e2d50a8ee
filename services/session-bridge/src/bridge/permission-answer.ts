/**
 * What an answer to a permission prompt means. The owner answers a task waiting on a prompt with a
 * message; its text decides. Kept apart so the rule can be read, tested and tightened in one place.
 */
export type PermissionAnswer = 'allow' | 'deny';

const ALLOW = /^\s*(y|yes|allow|allowed|ok|okay|approve|approved|go)\b/i;

/** `allow` when the text starts with a yes-word (yes, allow, ok, approve, go …); anything else denies. */
export function parsePermissionAnswer(text: string): PermissionAnswer {
  return ALLOW.test(text) ? 'allow' : 'deny';
}
