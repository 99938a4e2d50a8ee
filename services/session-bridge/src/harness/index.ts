import type { HarnessFactory } from '../bridge/bridge.js';
import { EchoHarness } from './echo.js';
import { TckHarness } from './tck.js';
import type { HarnessKind } from './types.js';

export * from './types.js';
export { EchoHarness } from './echo.js';

/** The harness for a kind; claude, pi and acp load their adapters only when asked for. */
export async function harnessFactory(kind: HarnessKind): Promise<HarnessFactory> {
  if (kind === 'echo') return (o) => new EchoHarness(o);
  if (kind === 'tck') return (o) => new TckHarness(o);
  if (kind === 'claude') {
    const m = await import('./claude.js' as string);
    return (o) => new m.ClaudeHarness(o);
  }
  if (kind === 'acp') {
    const m = await import('./acp.js' as string);
    return (o) => new m.AcpHarness(o);
  }
  const m = await import('./pi.js' as string);
  return (o) => new m.PiHarness(o);
}
