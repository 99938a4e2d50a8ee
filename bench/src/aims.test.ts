import { describe, expect, it } from 'vitest';
import { judgeAims } from './aims.js';
import { onNode, otherNodes, type Figure } from './figures.js';

const mb = (value: number): Figure =>
  ({ title: 't', unit: 'MB', better: 'lower', arms: { ours: { value } }, ratios: {} }) as unknown as Figure;
const plan = { throughput: { concurrency: [] }, memory: { retained: [10_000, 100_000] } };

describe('the memory aims on other Nodes', () => {
  const figures: Record<string, Figure> = {
    idle_rss_bridge_mb: mb(59),
    idle_rss_gateway_mb: mb(63),
    [onNode('idle_rss_bridge_mb', '22.23.3')]: mb(58),
    [onNode('idle_rss_gateway_mb', '22.23.3')]: mb(64),
    [onNode('idle_rss_bridge_mb', '24.21.0')]: mb(71),
    [onNode('idle_rss_gateway_mb', '24.21.0')]: mb(76),
    [onNode('gateway_rss_10000_tasks_mb', '24.21.0')]: mb(88),
    [onNode('gateway_rss_100000_tasks_mb', '24.21.0')]: mb(105),
  };

  it('finds the Nodes a run measured on besides its own, in order', () => {
    expect(otherNodes(figures)).toEqual(['22.23.3', '24.21.0']);
  });

  it('judges each memory aim on each Node, under its own name', () => {
    const byName = Object.fromEntries(judgeAims(figures, plan).map((a) => [a.aim, a]));
    expect(byName['idle bridge RSS']).toMatchObject({ value: 59, target: 60, met: true });
    expect(byName['idle bridge RSS on Node 22.23.3']).toMatchObject({ value: 58, met: true });
    expect(byName['idle bridge RSS on Node 24.21.0']).toMatchObject({ value: 71, met: false });
    expect(byName['idle gateway RSS on Node 24.21.0']).toMatchObject({ value: 76, target: 80, met: true });
    expect(byName['gateway RSS flat (idle), 10,000 → 100,000 retained tasks on Node 24.21.0']).toMatchObject({ ratio: 1.19, met: true });
    // Not measured on 22 here: not met, never left out.
    expect(byName['gateway RSS flat (idle), 10,000 → 100,000 retained tasks on Node 22.23.3']).toMatchObject({ ratio: null, met: false });
  });
});
