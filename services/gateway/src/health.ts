import type { FastifyInstance } from 'fastify';
import { healthKey, healthProbe, natsHealthChecks } from '@shrooms/runtime';
import type { GatewayDeps } from './app.js';

/**
 * `/healthz`: the process answers. `/readyz`: NATS answers, JetStream answers and the ledger takes
 * a write (under a `_health.` key no task listing matches) — what the manifests' probes ask; one
 * evaluation a second at most, however many ask.
 */
export function registerHealth(app: FastifyInstance, deps: Pick<GatewayDeps, 'nc' | 'ledger' | 'config'>): void {
  const ready = healthProbe(natsHealthChecks({ nc: deps.nc, kv: deps.ledger.kv, key: healthKey(deps.config.SHROOMS_MACHINE, 'gateway') }));
  app.get('/healthz', async (_req, reply) =>
    reply.code(deps.nc.isClosed() ? 503 : 200).send({ status: deps.nc.isClosed() ? 'unavailable' : 'ok' }),
  );
  app.get('/readyz', async (_req, reply) => {
    const report = await ready();
    return reply.code(report.status === 'ok' ? 200 : 503).send(report);
  });
}
