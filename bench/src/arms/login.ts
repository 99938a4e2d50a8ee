/**
 * The NATS login of a bench process of its own (floor responder, load generator): the `admin` user
 * its parent passes as NATS_USER / NATS_PASS (nats.ts). Kept apart from nats.ts so that those
 * processes do not load the test helpers (their memory is reported).
 */
export function benchLogin(env: NodeJS.ProcessEnv = process.env): { user?: string; pass?: string } {
  return env.NATS_USER ? { user: env.NATS_USER, pass: env.NATS_PASS ?? '' } : {};
}
