/**
 * Runs the fake model server by hand: `node --import tsx libs/testing/src/fake-model/main.ts
 * [--port 0] [--host 127.0.0.1] [--slow-ms 500] [--quiet]`. Prints `LISTENING <port>`, then one JSON
 * line per model request on stderr (unless --quiet). Stops on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startFakeModel } from './server.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'slow-ms': { type: 'string', default: '500' },
    quiet: { type: 'boolean', default: false },
  },
});

const fake = await startFakeModel({
  port: Number(values.port),
  host: values.host,
  slow: { delayMs: Number(values['slow-ms']) },
  onRequest(r) {
    if (values.quiet) return;
    const line = {
      n: r.n,
      api: r.api,
      path: r.path,
      stream: r.stream,
      model: r.model,
      tools: r.tools.length,
      round: r.conversation.round,
      task: r.conversation.taskId,
      reply: r.reply,
    };
    process.stderr.write(`${JSON.stringify(line)}\n`);
  },
});
process.stdout.write(`LISTENING ${fake.port}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void fake.close().then(() => process.exit(0));
  });
}
