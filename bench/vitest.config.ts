import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The bench's smoke test is slow (a whole `pnpm bench --quick`), so it is not in the root projects
// and never runs with `pnpm test`. Run it with: pnpm exec vitest run --config bench/vitest.config.ts
export default defineConfig({
  resolve: { conditions: ['development'] },
  test: { root: fileURLToPath(new URL('.', import.meta.url)), include: ['src/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 60_000 },
});
