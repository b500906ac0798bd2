import { defineConfig } from 'vitest/config';

// One project per test layer so CI can report them apart and engines are only needed where used.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], testTimeout: 60_000 } },
      { test: { name: 'contract', include: ['tests/contract/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000, fileParallelism: false } },
      { test: { name: 'integration', include: ['tests/integration/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 300_000, fileParallelism: false } },
      { test: { name: 'e2e', include: ['tests/e2e/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 300_000, fileParallelism: false } },
      { test: { name: 'fault', include: ['tests/fault/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 300_000, fileParallelism: false } },
    ],
  },
});
