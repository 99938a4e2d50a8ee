// Preloaded into our services by `pnpm bench --profile` (NODE_OPTIONS=--import …): Node 20 does not
// take --cpu-prof in NODE_OPTIONS, so this starts the V8 sampling profiler through the inspector and
// writes CPU.<pid>.cpuprofile into BENCH_CPU_PROF_DIR when the process exits (the in-process
// inspector session answers synchronously, so this works inside process.exit).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  let written = false;
  const flush = () => {
    if (written) return;
    written = true;
    session.post('Profiler.stop', (err, res) => {
      if (!err && res?.profile) writeFileSync(join(dir, `CPU.${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  };
  const exit = process.exit.bind(process);
  process.exit = (code) => {
    flush();
    return exit(code);
  };
  process.on('exit', flush);
}
