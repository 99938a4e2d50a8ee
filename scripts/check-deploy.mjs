#!/usr/bin/env node
/**
 * Checks the deploy files, offline:
 *
 *   docker    deploy/Dockerfile: context paths, pinned pnpm, frozen lockfile, deploy --prod, non-root
 *   compose   deploy/compose/docker-compose.yml against the compose JSON schema, then consistency
 *   k8s       deploy/k3s rendered by kustomize, each object against the Kubernetes schemas
 *             (unknown fields refused), then references, selectors, probes, the R3 setting
 *   nats      nats-server -t on the NATS config with the environment compose and k3s give it
 *   systemd   the workstation bridge unit (systemd-analyze verify)
 *   run       every container command of ours, run here against a real nats-server started from
 *             the deploy config, until it is ready (/readyz 200 and registered in $SRV)
 *   image     (only when asked: --image) the Dockerfile's build stage run in a temp folder
 *
 * usage: node scripts/check-deploy.mjs [--only a,b] [--skip a,b] [--image] [--strict] [--built]
 *                                      [--deploy-dir DIR] [--no-kubectl]
 *   --strict      WAIT lines (work another part of the project has still to land) fail too
 *   --built       run the built CLI (services/shrooms-agent/bundle) instead of the sources via tsx
 *   --deploy-dir  check another copy of deploy/ (the tests break one on purpose)
 * Exit 0 when nothing failed. Prints one line per finding and a summary.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkCompose } from './deploy-check/compose.mjs';
import { checkDockerfile } from './deploy-check/dockerfile.mjs';
import { checkImageBuild } from './deploy-check/image.mjs';
import { checkK8s } from './deploy-check/k8s.mjs';
import { checkNats } from './deploy-check/nats.mjs';
import { createReport } from './deploy-check/report.mjs';
import { checkServicesStart } from './deploy-check/run.mjs';
import { checkSystemd } from './deploy-check/systemd.mjs';
import { cliInfo, onPath, REPO_ROOT } from './deploy-check/util.mjs';

const ALL = ['docker', 'compose', 'k8s', 'nats', 'systemd', 'run'];
const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    skip: { type: 'string' },
    image: { type: 'boolean' },
    strict: { type: 'boolean' },
    built: { type: 'boolean' },
    'deploy-dir': { type: 'string' },
    'no-kubectl': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(
    'usage: node scripts/check-deploy.mjs [--only docker,compose,k8s,nats,systemd,run] [--skip …] [--image] [--strict] [--built] [--deploy-dir DIR] [--no-kubectl]\n',
  );
  process.exit(0);
}
const list = (s) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];
const wanted = new Set(values.only ? list(values.only) : ALL);
for (const s of list(values.skip)) wanted.delete(s);
if (values.image) wanted.add('image');
for (const w of wanted)
  if (![...ALL, 'image'].includes(w)) {
    process.stderr.write(`check-deploy: unknown check ${w} (checks: ${ALL.join(', ')}, image)\n`);
    process.exit(2);
  }

const repoRoot = REPO_ROOT;
const deployDir = resolve(values['deploy-dir'] ?? join(repoRoot, 'deploy'));
const report = createReport({ strict: values.strict });
const cli = cliInfo({ built: values.built, root: repoRoot });
if (!cli.helpOk) report.fail('shrooms-agent --help', cli.helpOutput.split('\n').slice(-3).join(' | '));

const needsCompose = ['compose', 'nats', 'run'].some((c) => wanted.has(c));
const needsK8s = ['k8s', 'nats', 'run'].some((c) => wanted.has(c));
const quietReport = createReport({ quiet: true });
const pick = (check) => (wanted.has(check) ? report : quietReport);

if (wanted.has('docker')) checkDockerfile({ file: join(deployDir, 'Dockerfile'), contextDir: repoRoot, report, repoRoot });
const compose = needsCompose
  ? checkCompose({ file: join(deployDir, 'compose/docker-compose.yml'), report: pick('compose'), cli, repoRoot: resolve(deployDir, '..') })
  : undefined;
const k8s = needsK8s
  ? await checkK8s({
      dir: join(deployDir, 'k3s'),
      report: pick('k8s'),
      cli,
      repoRoot: resolve(deployDir, '..'),
      useKubectl: !values['no-kubectl'] && onPath('kubectl'),
    })
  : undefined;
if (wanted.has('nats')) checkNats({ natsDir: join(deployDir, 'nats'), compose, k8s, report, repoRoot: resolve(deployDir, '..') });
if (wanted.has('systemd')) checkSystemd({ dir: join(deployDir, 'systemd'), report, cli, repoRoot });
if (wanted.has('run')) {
  const natsConfig = join(deployDir, 'nats/nats.conf');
  if (!existsSync(natsConfig)) report.fail('services start', `${natsConfig} is missing`);
  else await checkServicesStart({ compose, k8s, natsConfig, cli, report, repoRoot });
}
if (wanted.has('image')) checkImageBuild({ file: join(deployDir, 'Dockerfile'), contextDir: repoRoot, report, repoRoot });

process.stdout.write(`\n${report.summary()}\n`);
process.exit(report.counts.fail > 0 ? 1 : 0);
