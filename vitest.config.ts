import { defineConfig } from "vitest/config";

// The whole suite runs twice: with the native addon, and with it forced off
// (EXACTSPAWN_NATIVE=0), so every policy guarantee is proven on the fallback too.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Two cores in CI: keep the spawn-heavy integration files from starving each other.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: "native", env: { EXACTSPAWN_NATIVE: "" } } },
      {
        extends: true,
        test: {
          name: "fallback",
          env: { EXACTSPAWN_NATIVE: "0" },
          // Engine-specific suites pick their engine themselves; the native
          // project already runs the fallback one (it disables the addon).
          exclude: [
            "test/spawn/behaviour-native.test.ts",
            "test/spawn/behaviour-child-path.test.ts",
            "test/spawn/behaviour-fallback.test.ts",
          ],
        },
      },
    ],
  },
});
