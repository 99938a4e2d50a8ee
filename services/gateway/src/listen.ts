import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** The same app on more addresses (loopback and the mesh address), one server each. */
export async function listenAlso(app: FastifyInstance, hosts: string[], port: number): Promise<Server[]> {
  const servers: Server[] = [];
  for (const host of hosts) {
    const server = createServer((req, res) => app.routing(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    servers.push(server);
  }
  return servers;
}
