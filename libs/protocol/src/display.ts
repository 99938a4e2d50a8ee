/**
 * How an asker is shown wherever a task is shown: the verified device first, the claimed session
 * beside it in parentheses, never instead of it — `pi5.home (pi5/jimmy)`. The claim is user input:
 * control characters are dropped and its length bounded so it cannot forge a second line.
 */
const CLAIM_MAX = 130;

export function displayOrigin(device: string, claimedFrom?: string): string {
  // eslint-disable-next-line no-control-regex
  const claim = (claimedFrom ?? '').replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '').trim();
  if (!claim) return device;
  return `${device} (${claim.length > CLAIM_MAX ? `${claim.slice(0, CLAIM_MAX - 1)}…` : claim})`;
}
