#!/usr/bin/env node
// `npm run test:asan`: builds the addon with AddressSanitizer and
// UndefinedBehaviorSanitizer into .asan/ (a scratch copy of the native
// sources, so build/ is left alone), then runs the native test files against
// it with the sanitizer runtimes preloaded into Node. Any report fails the run
// (halt_on_error / -fno-sanitize-recover). Leak checking is off here because
// Node itself does not free everything at exit; scripts/valgrind-spawn.mjs
// checks the addon for leaks instead.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const scratch = join(root, ".asan");
const run = (cmd, args, options = {}) => {
  const result = spawnSync(cmd, args, { stdio: "inherit", ...options });
  if (result.status !== 0) {
    console.error(`test:asan: ${cmd} ${args.join(" ")} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
};
const gccFile = (name) =>
  spawnSync("gcc", [`-print-file-name=${name}`], { encoding: "utf8" }).stdout.trim();

rmSync(scratch, { recursive: true, force: true });
mkdirSync(join(scratch, "scripts"), { recursive: true });
for (const item of ["binding.gyp", "native", "package.json", "scripts/native-stamp.mjs"]) {
  cpSync(join(root, item), join(scratch, item), { recursive: true });
}
symlinkSync(join(root, "node_modules"), join(scratch, "node_modules"));

const sanitize =
  "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g";
run("npx", ["node-gyp", "rebuild"], {
  cwd: scratch,
  env: {
    ...process.env,
    CXXFLAGS: sanitize,
    CFLAGS: sanitize,
    LDFLAGS: "-fsanitize=address,undefined",
  },
});

const files = process.argv.slice(2);
run(
  "npx",
  [
    "vitest",
    "run",
    "--project",
    "native",
    ...(files.length > 0
      ? files
      : [
          // The files that drive the addon. Not the bash-step suites: their
          // children inherit LD_PRELOAD from the host's environment, so every
          // bash would run under ASan too (the 2,000-step fuzz took > 10 min).
          "test/native.test.ts",
          "test/native",
          "test/spawn/behaviour-native.test.ts",
          "test/spawn/host-exit.test.ts",
          "test/spawn/lifecycle.test.ts",
          "test/spawn/line-iterator.test.ts",
          "test/spawn/native-binding.test.ts",
          "test/spawn/native-engine.test.ts",
          "test/spawn/spawn-sync.test.ts",
          "test/step/runtime-spawn.test.ts",
          "test/faults",
        ]),
  ],
  {
    cwd: root,
    env: {
      ...process.env,
      EXACTSPAWN_PREBUILD: scratch,
      EXACTSPAWN_EXPECT_ASAN: "1",
      LD_PRELOAD: `${gccFile("libasan.so")} ${gccFile("libubsan.so")}`,
      ASAN_OPTIONS: "detect_leaks=0:halt_on_error=1:abort_on_error=1",
      UBSAN_OPTIONS: "halt_on_error=1:print_stacktrace=1",
    },
  },
);
console.log("test:asan: clean");
