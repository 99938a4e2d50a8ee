// Loaded into a service under test with NODE_OPTIONS="--import <this file>" (plain JavaScript, so it
// loads before any TypeScript loader). On SIGUSR2 it runs two full garbage collections and writes
// one line to stderr: `MEMPROBE {json}` with what is still alive — V8's used heap, memory outside it
// that JS objects hold (`external`, Buffers included), the active libuv resources by kind — beside
// RSS, for the record. Chaos tests bound what a leak would grow (live objects and handles), not RSS,
// which also counts memory the allocator keeps after it is freed (see test/chaos/sse.test.ts).
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
v8.setFlagsFromString('--no-expose-gc');

process.on('SIGUSR2', function probeMemory() {
  gc();
  gc();
  const m = process.memoryUsage();
  const handles = {};
  for (const kind of process.getActiveResourcesInfo()) handles[kind] = (handles[kind] ?? 0) + 1;
  const line = { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, handles };
  process.stderr.write(`MEMPROBE ${JSON.stringify(line)}\n`);
});
