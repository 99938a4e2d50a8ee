/**
 * Subjects of the floor arm (bench only; plain core NATS, no stream captures them). Grammar, with
 * B = the reply size in bytes the client wants back:
 *
 *   bench.floor.hop1.req.B   client → hop1: hop1 asks hop2 the same and answers with its reply
 *   bench.floor.hop2.req.B   hop1 → hop2: answers with B bytes
 *   bench.floor.hop1.nb.B    client → hop1: answered at once (B bytes); hop1 then publishes to hop2
 *   bench.floor.hop2.nb      hop1 → hop2: counted, no answer (the "work" done later)
 *   bench.floor.hop2.count   → hop2: answers with how many nb messages it has counted
 */
const P = 'bench.floor';
export const floorSubjects = {
  hop1Request: (bytes: number) => `${P}.hop1.req.${bytes}`,
  hop1RequestAll: () => `${P}.hop1.req.*`,
  hop2Request: (bytes: number) => `${P}.hop2.req.${bytes}`,
  hop2RequestAll: () => `${P}.hop2.req.*`,
  hop1Accept: (bytes: number) => `${P}.hop1.nb.${bytes}`,
  hop1AcceptAll: () => `${P}.hop1.nb.*`,
  hop2Work: () => `${P}.hop2.nb`,
  hop2Count: () => `${P}.hop2.count`,
};

/** The size token at the end of a subject. */
export function bytesOf(subject: string): number {
  return Number(subject.slice(subject.lastIndexOf('.') + 1)) || 0;
}
