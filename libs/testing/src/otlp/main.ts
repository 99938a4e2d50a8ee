/**
 * The OTLP receiver as a process (a test runs it inside a machine of the rig):
 * `node --import tsx libs/testing/src/otlp/main.ts [--host H] [--port P]`. Prints `LISTENING <port>`,
 * then one JSON line per span received (times as strings).
 */
import { parseArgs } from 'node:util';
import { startOtlpReceiver } from './receiver.js';

const { values } = parseArgs({ options: { host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '0' } } });
const receiver = await startOtlpReceiver({
  host: values.host,
  port: Number(values.port),
  onSpan: (s) => process.stdout.write(`${JSON.stringify({ ...s, startNs: String(s.startNs), endNs: String(s.endNs) })}\n`),
});
process.stdout.write(`LISTENING ${new URL(receiver.url).port}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void receiver.close().then(() => process.exit(0)));
