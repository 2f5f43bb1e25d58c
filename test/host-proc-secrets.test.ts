/**
 * The host's exec-time environment (/proc/<host>/environ) holds its tokens
 * even though the curated default keeps them out of every step's own
 * environment. A non-root host (a user created for the test) with
 * GITHUB_TOKEN in its environment runs steps in every mode; each step reads
 * /proc/$PPID/environ, every ancestor's, and every /proc/<pid>/environ it can
 * open: none may show the token (the host is non-dumpable while it has a
 * runtime, so its /proc entries belong to root); `exactspawn run` too. With `hostDumpable: true`
 * (the opt-out) the host's entries are readable again: the control.
 *
 * Seen red before the fix (every mode printed the host's pid) and with the
 * prctl removed (scripts/mutants row host-non-dumpable).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus } from "../src/index.js";
import { privateLibrary, removeDir, runHost, scratchDir } from "./faults/host.js";

const isRoot = process.getuid?.() === 0;
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
const TOKEN_NAME = "GITHUB_TOKEN";
const SENTINEL = `ghp_sentinel${process.pid}x`;

// Walks up from the step through every ancestor it can see, then over every
// /proc/<pid>/environ; prints "LEAK <pid>" for each that holds the token's
// name. The name is assembled so that no process's argv or environ the walk
// reads holds it by accident (the step's own environment does not have it).
const WALK = `
n=GITHUB; n="\${n}_TOKEN="
leak() { cat "/proc/$1/environ" 2>/dev/null | tr '\\0' '\\n' | grep -q "^$n" && echo "LEAK $1"; }
leak "$PPID"
p=$$
while [ -n "$p" ] && [ "$p" -gt 1 ]; do
  p=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
  [ -n "$p" ] && leak "$p"
done
for d in /proc/[0-9]*; do leak "\${d#/proc/}"; done
echo done
`;

/** A user created for the test (removed after), and a scratch dir with a private library copy. */
const user = `espsec${process.pid % 100000}`;
let dir = "";
let library: ReturnType<typeof privateLibrary>;
const ready = nativeStatus().loaded && isRoot && setpriv;

beforeAll(() => {
  if (!ready) return;
  execFileSync("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", user]);
  dir = scratchDir("exactspawn-host-proc-");
  library = privateLibrary(dir);
});
afterAll(() => {
  if (!ready) return;
  removeDir(dir);
  execFileSync("userdel", [user]);
});

/** setpriv's arguments that run the rest as the test user, without capabilities. */
function asUser(): string[] {
  return [`--reuid=${user}`, `--regid=${user}`, "--clear-groups", "--inh-caps=-all", "--"];
}

interface Modes {
  bash: string;
  bashUncontained: string;
  spawnUncontained: string;
  pidNamespace: string;
}

/** Runs every mode in a host of its own, as the test user, with the token in its env. */
function hostRun(runtimeOptions: string): Modes {
  const run = runHost<Modes>(
    dir,
    `
    import { createRuntime, spawn } from DIST;
    const walk = ${JSON.stringify(WALK)};
    const runtime = createRuntime({ ${runtimeOptions} });
    const out = (r) => r.stdout + r.stderr;
    const bash = out(await runtime.bash(walk));
    const bashUncontained = out(await runtime.bash(walk, { contain: false }));
    const spawnUncontained = out(await runtime.spawn("/bin/bash", ["-c", walk], { reject: false }));
    const pidNamespace = out(await runtime.spawn("/bin/bash", ["-c", walk], { reject: false, contain: { mechanism: "pid-namespace" } }));
    report({ bash, bashUncontained, spawnUncontained, pidNamespace });
    `,
    {
      wrap: ["setpriv", ...asUser()],
      env: { [TOKEN_NAME]: SENTINEL },
      library,
    },
  );
  expect(run.stderr).toBe("");
  return run.report!;
}

describe.runIf(ready)("a non-root host's secrets in /proc/<host>/environ", () => {
  it("no step of a default runtime reads them, in any mode", () => {
    const r = hostRun("");
    for (const mode of ["bash", "bashUncontained", "spawnUncontained", "pidNamespace"] as const) {
      expect(r[mode], mode).toBe("done\n");
    }
  });

  it("exactspawn run's step does not read them either", () => {
    const cli = fileURLToPath(new URL("cli.js", library.distUrl));
    const run = spawnSync("setpriv", [...asUser(), process.execPath, cli, "run", "--", WALK], {
      encoding: "utf8",
      env: { ...process.env, [TOKEN_NAME]: SENTINEL },
      cwd: dir,
      timeout: 120_000,
    });
    expect(run.stdout).toBe("done\n");
    expect(run.status).toBe(0);
  });

  it("hostDumpable: true (the opt-out) leaves them readable: the control", () => {
    const r = hostRun("hostDumpable: true");
    expect(r.bashUncontained).toMatch(/^LEAK \d+$/m);
  });
});
