#!/usr/bin/env node
// npm's install hook. It never fails the install:
// 1. the addon the library would load (prebuild or local build; arch, libc
//    and kernel checked by dist/native.js, the one loader) loads: done;
// 2. else, when a toolchain is present (make, a C++ compiler, python3), it
//    builds the addon from source and checks it the same way;
// 3. else (or when that build fails) it says in one line what is missing and
//    that the library runs on its child_process fallback, and exits 0.
import { spawnSync } from "node:child_process";
import { accessSync, closeSync, constants, existsSync, openSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const say = (line) => process.stderr.write(`exactspawn: ${line}\n`);
/** Lines the user must see during a long install: on stderr, and on the terminal when there is one. */
function tell(...lines) {
  const text = lines.map((line) => `exactspawn: ${line}\n`).join("");
  process.stderr.write(text);
  if (process.stderr.isTTY) return; // already on the terminal (--foreground-scripts)
  let tty;
  try {
    tty = openSync("/dev/tty", "w");
    // From column 1 on a cleared line: npm draws its progress spinner there.
    writeSync(tty, `\r\x1b[K${text}`);
  } catch {
    // No controlling terminal (CI, a service): stderr only.
  } finally {
    if (tty !== undefined) closeSync(tty);
  }
}

/** The loader's verdict, asked of a fresh process (a rebuilt file must be loaded anew). */
function status() {
  const code = `import(${JSON.stringify(join(root, "dist/native.js"))}).then((m) => {
    process.stdout.write(JSON.stringify(m.nativeStatus()));
  })`;
  const run = spawnSync(process.execPath, ["-e", code], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, EXACTSPAWN_NATIVE: "", EXACTSPAWN_LOG_LEVEL: "silent" },
  });
  try {
    return JSON.parse(run.stdout);
  } catch {
    return { loaded: false, reason: (run.stderr.trim().split("\n")[0] ?? "").slice(0, 300) };
  }
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/** What a source build lacks here (empty when it can be tried). */
function missingToolchain() {
  const cxx = process.env.CXX ? [process.env.CXX.split(" ")[0]] : ["c++", "g++", "clang++"];
  const missing = [];
  if (!onPath("make")) missing.push("make");
  if (!cxx.some(onPath)) missing.push("a C++ compiler (g++ or clang++)");
  if (!onPath("python3") && !onPath("python")) missing.push("python3");
  return missing;
}

function nodeGyp() {
  if (process.env.npm_config_node_gyp) return [process.execPath, process.env.npm_config_node_gyp];
  try {
    return [process.execPath, createRequire(import.meta.url).resolve("node-gyp/bin/node-gyp.js")];
  } catch {
    return undefined;
  }
}

const FALLBACK = "the library runs on its child_process fallback";

// A source checkout runs this before `prepare` compiles dist/.
if (!existsSync(join(root, "dist/native.js")) && existsSync(join(root, "tsconfig.build.json"))) {
  spawnSync("npm", ["run", "--silent", "compile"], { cwd: root, stdio: "inherit" });
}
if (!existsSync(join(root, "dist/native.js"))) {
  say("dist/ is not compiled; the addon was not checked (npm run compile, then npm rebuild)");
  process.exit(0);
}

const first = status();
if (first.loaded) {
  say(`native addon ready on ${first.platform}`);
  process.exit(0);
}
if (/the kernel cannot run the addon/.test(first.reason ?? "")) {
  say(`${first.reason}; ${FALLBACK}`);
  process.exit(0);
}
const missing = missingToolchain();
const gyp = nodeGyp();
if (missing.length > 0 || gyp === undefined) {
  const lack = gyp === undefined ? ["node-gyp"] : missing;
  say(
    `no prebuilt addon for ${first.platform ?? process.arch}, and no toolchain to build one ` +
      `(missing: ${lack.join(", ")}): installed; ${FALLBACK} ` +
      "(install them, then `npm rebuild exactspawn` builds the addon)",
  );
  process.exit(0);
}
// npm (7 and later) shows an install script's output only when it fails:
// the user would wait minutes in silence. What is built and why goes to the
// terminal itself when there is one, and to stderr (shown with
// --foreground-scripts, and in npm's log).
tell(
  `no prebuilt addon fits ${first.platform}: building it from source ` +
    "(node-gyp: the addon and its exec helper; a minute or two on an idle machine, " +
    "much longer on a busy one)",
  "npm shows this build's output only if it fails; `npm install --foreground-scripts` shows it as it runs",
);
const started = Date.now();
const build = spawnSync(gyp[0], [gyp[1], "rebuild"], { cwd: root, stdio: "inherit" });
const after = build.status === 0 ? status() : undefined;
const took = `${Math.round((Date.now() - started) / 1000)} s`;
if (after?.loaded) {
  const helper = after.helper?.run === "unavailable" ? after.helper : undefined;
  tell(
    `native addon built from source in ${took} and ready on ${after.platform}`,
    ...(helper === undefined
      ? []
      : [
          `built without its exec helper (${helper.reason ?? helper.error?.code ?? "missing"}): ` +
            "steps with uid/gid, sandbox or a PID-namespace containment fail naming it",
        ]),
  );
} else {
  const why = after === undefined ? `node-gyp rebuild exited with ${build.status}` : after.reason;
  say(`the source build did not give a loadable addon (${why}): installed; ${FALLBACK}`);
}
process.exit(0);
