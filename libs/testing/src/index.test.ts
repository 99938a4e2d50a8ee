import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { inChildNode } from './tls.js';

// The built package, as `shrooms-agent up` imports it for its local nats-server (./shrooms test builds first).
const BUILT = fileURLToPath(new URL('../dist/index.js', import.meta.url));

it('loads neither nats.js nor HTTP client code when imported: `up` keeps running with what it loads', async () => {
  // node:http imported as an ES module reads every export, WebSocket too, which loads undici.
  const script = `import(require('node:url').pathToFileURL(process.env.BUILT).href).then(() => console.log(JSON.stringify({
  undici: loaded('internal/deps/undici/undici'),
  nats: Object.keys(require.cache).filter((f) => f.includes('@nats-io')).length,
})));`;
  expect(await inChildNode(script, { BUILT })).toEqual({ undici: false, nats: 0 });
});
