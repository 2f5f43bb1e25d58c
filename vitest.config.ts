import { defineConfig } from "vitest/config";

// Three projects: the native addon, and the child_process fallback
// (EXACTSPAWN_NATIVE=0), so every engine-dependent guarantee is proven on both;
// and the files that exercise the exit watch once more with the waiter Bun and
// Deno get (its own thread, EXACTSPAWN_EXIT_WATCH=thread; under Node the
// host's loop waits).
//
// `npm test` runs the native project in full and, on the fallback, what
// depends on the engine; volume tests run their short counts there.
// `npm run test:long` (EXACTSPAWN_TEST_LONG=1) runs the full counts (10,000
// sequential spawns, the deep boundary fuzz, the 2,000-step bash fuzz, the
// 1,000-step soak) and the complete fallback pass of every file.
const long = process.env["EXACTSPAWN_TEST_LONG"] === "1";

// Engine-specific suites pick their engine themselves: the native project
// already runs the fallback one (it disables the addon in its own worker).
const BEHAVIOUR = [
  "test/spawn/behaviour-native.test.ts",
  "test/spawn/behaviour-posix-spawn.test.ts",
  "test/spawn/behaviour-fallback.test.ts",
  "test/spawn/streams-native.test.ts",
  "test/spawn/streams-fallback.test.ts",
];

// Left out of the fallback project in `npm test` (all run there under
// test:long): files that never load an engine (pure planners and policy,
// fake bindings, bash run directly), files that pin the engine themselves
// or need the addon, the command's argument handling (its manners and where
// its values come from: the command's engine path is run-command's), and
// the soak.
const NOT_ENGINE_DEPENDENT = [
  "test/debian-packages.test.ts",
  "test/docs-examples.test.ts",
  "test/env/**",
  "test/limits.test.ts",
  "test/limits-kernel.test.ts",
  "test/matrix-suite.test.ts",
  "test/musl-core.test.ts",
  "test/process-hygiene.test.ts",
  "test/native.test.ts",
  "test/native/**",
  "test/runtimes.test.ts",
  "test/cli/bench-command.test.ts",
  "test/cli/env-file.test.ts",
  "test/cli/explain-command.test.ts",
  "test/cli/manners.test.ts",
  "test/cli/secret-sources.test.ts",
  "test/spawn/host-exit.test.ts",
  "test/spawn/deadline-plan.test.ts",
  "test/spawn/lifecycle.test.ts",
  "test/spawn/native-binding.test.ts",
  "test/spawn/native-engine.test.ts",
  "test/spawn/resolve-file.test.ts",
  "test/spawn/spawn-errors.test.ts",
  "test/spawn/spawn-options.test.ts",
  "test/spawn/stream-options.test.ts",
  "test/spawn/stream-input.property.test.ts",
  "test/step/preamble.test.ts",
  "test/step/spill-files.test.ts",
  "test/soak.test.ts",
];

const ALL = ["test/**/*.test.ts"];

// Exits, signals, captured output, reap retries, host exit and worker teardown.
const EXIT_WATCH = [
  "test/spawn/behaviour-native.test.ts",
  "test/spawn/lifecycle.test.ts",
  "test/spawn/traced-child.test.ts",
  "test/spawn/host-exit.test.ts",
  "test/spawn/output-limit.test.ts",
  "test/spawn/deadline-busy-host.test.ts",
  "test/faults/worker-terminate.test.ts",
];

export default defineConfig({
  test: {
    // Compiles a stale dist/ first and gives the run a private TMPDIR.
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Three files at a time on two cores: most of a test's time is a child's or a
    // blocked loop's, not the worker's (npm test on a quiet 2-core machine, fresh
    // clone, 2026-12-06: 335 s with 2 workers, 291 s with 3, all green). The
    // tests wait for events, never for a scheduling margin, so more load makes
    // them slower, not red.
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: "native", include: ALL, env: { EXACTSPAWN_NATIVE: "" } } },
      {
        extends: true,
        test: {
          name: "fallback",
          include: ALL,
          env: { EXACTSPAWN_NATIVE: "0" },
          exclude: long ? BEHAVIOUR : [...BEHAVIOUR, ...NOT_ENGINE_DEPENDENT],
        },
      },
      {
        extends: true,
        test: {
          name: "thread",
          include: EXIT_WATCH,
          env: { EXACTSPAWN_NATIVE: "", EXACTSPAWN_EXIT_WATCH: "thread" },
        },
      },
    ],
  },
});
