import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Two cores in CI: keep the spawn-heavy integration files from starving each other.
    maxWorkers: 2,
  },
});
