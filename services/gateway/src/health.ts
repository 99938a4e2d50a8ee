import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from './app.js';

/** `/healthz`: the process answers. `/readyz`: NATS connected and the ledger reachable. */
export function registerHealth(app: FastifyInstance, deps: Pick<GatewayDeps, 'nc' | 'ledger'>): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, boolean> = { nats: !deps.nc.isClosed() && !deps.nc.isDraining() };
    try {
      await deps.ledger.kv.status();
      checks.ledger = true;
    } catch {
      checks.ledger = false;
    }
    const ok = Object.values(checks).every(Boolean);
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks });
  });
}
