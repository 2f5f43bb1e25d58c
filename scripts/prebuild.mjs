#!/usr/bin/env node
// Builds the N-API prebuild for this platform into prebuilds/<platform>-<arch>/
// with prebuildify (--napi --strip), then loads it back with PREBUILDS_ONLY=1
// and checks its source stamp against native/.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { nativeSourceStamp } from "./native-stamp.mjs";

const run = (cmd, args, env = process.env) => {
  const result = spawnSync(cmd, args, { stdio: "inherit", env });
  if (result.status !== 0) process.exit(result.status ?? 1);
};

run("npx", ["prebuildify", "--napi", "--strip", "--target", `node@${process.versions.node}`]);

const require = createRequire(import.meta.url);
process.env.PREBUILDS_ONLY = "1";
const binding = require("node-gyp-build")(new URL("..", import.meta.url).pathname);
const expected = nativeSourceStamp();
if (binding.sourceStamp !== expected) {
  console.error(`prebuild stamp ${binding.sourceStamp} != native/ stamp ${expected}`);
  process.exit(1);
}
console.log(`prebuild ok: ${process.platform}-${process.arch}, stamp ${expected}`);

// prebuildify leaves no build/Release behind; rebuild it so the working tree keeps its addon.
delete process.env.PREBUILDS_ONLY;
run("npx", ["node-gyp", "rebuild"]);
