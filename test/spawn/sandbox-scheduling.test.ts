/**
 * A sandboxed step cannot change its host's scheduling (issue 27, item 4):
 * `setpriority` (renice), `sched_setscheduler`/`sched_setparam`/
 * `sched_setattr` (SCHED_IDLE), `sched_setaffinity` (pin to one CPU) and
 * `ioprio_set` (the idle I/O class) are refused with EPERM unless they name
 * the caller itself (pid/who 0, and for setpriority/ioprio_set the
 * per-process `which`: a process group or a user reaches other processes).
 * The step's own changes (`who` 0) still work; its own pid or tid named
 * explicitly is refused too (the filter is shared by the whole sandbox and
 * cannot know one pid; docs/sandbox.md). Each host is a Node process of its
 * own in a session of its own (test/faults/host.ts), as root and as a uid
 * with no account (a same-uid child is what the kernel lets make these
 * changes): the host reads its own nice, policy, affinity and I/O priority
 * before and after through the probe, unsandboxed.
 *
 * The root host tries no user-wide call (`PRIO_USER`, `IOPRIO_WHO_USER`):
 * without the rule it would renice every root process of the machine; the
 * uid host tries them (only it and its children run as that uid).
 *
 * Seen red before the rules existed (every attack answered "ok", the host
 * ended at nice 19, SCHED_IDLE, CPU 0 only, I/O class idle), and with each
 * rule removed: `npm run test:mutants -- --only filter-setpriority-other,...`.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { getPriority } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, sandboxSupport } from "../../src/index.js";
import { privateLibrary, removeDir, runHost, scratchDir } from "../faults/host.js";
import { fixtureBinary } from "../fixtures/build.js";

const filtered = nativeStatus().loaded && !sandboxSupport().missing.includes("syscalls");
const root = process.getuid?.() === 0;
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
// A uid with no account: only the host and its children run as it.
const UID = 40_000 + (process.pid % 10_000);

let dir = "";
let probe = "";
beforeAll(() => {
  dir = scratchDir("exactspawn-sched-");
  // A copy any user can run (the fixture directory lives in this run's TMPDIR).
  probe = join(dir, "sandbox-probe");
  copyFileSync(fixtureBinary("sandbox-probe"), probe);
});
afterAll(() => {
  if (dir !== "") removeDir(dir);
});

/** Each attack on the host: the probe's arguments (WHO "parent" is the host). */
const ON_HOST = [
  ["setpriority", "process", "parent", "19"],
  ["setpriority", "pgrp", "parent-group", "19"],
  ["sched_setscheduler", "parent"],
  ["sched_setparam", "parent"],
  ["sched_setattr", "parent"],
  ["sched_setaffinity", "parent"],
  ["ioprio_set", "process", "parent"],
  ["ioprio_set", "pgrp", "parent-group"],
];
/** Every process of the caller's uid, the host included (who 0: the caller's own uid). */
const USER_WIDE = [
  ["setpriority", "user", "0", "19"],
  ["ioprio_set", "user", "0"],
];
/** The step's own changes: who 0 works; its own pid or tid named is refused. */
// Its own nice value raised to 19: allowed whatever the run's nice value (lowering it is not).
const OWN = [
  ["setpriority", "process", "0", "19"],
  ["sched_setaffinity", "0"],
  ["ioprio_set", "process", "0"],
  ["sched_setscheduler", "0"],
  ["sched_setaffinity", "tid"],
  ["setpriority", "process", "self", "19"],
];

interface SchedReport {
  before: string;
  after: string;
  answers: string[];
  own: string[];
}

const HOST = (probePath: string, attacks: string[][]) => `
  const { spawn } = await import(DIST);
  const probe = ${JSON.stringify(probePath)};
  const box = { writable: [], executable: ${JSON.stringify(
    [probePath, "/usr", "/lib", "/lib64"].filter((path) => existsSync(path)),
  )} };
  const run = async (args, sandbox) => {
    const r = await spawn(probe, args, { sandbox, reject: false, env: {} });
    return String(r.stdout).trim() || "exit " + r.exitCode + " " + String(r.stderr).trim();
  };
  const show = () => run(["show", String(process.pid)], undefined);
  const before = await show();
  const answers = [];
  for (const args of ${JSON.stringify(attacks)}) answers.push(args[0] + ": " + (await run(args, box)));
  const after = await show();
  const own = [];
  for (const args of ${JSON.stringify(OWN)}) own.push(args.join(" ") + ": " + (await run(args, box)));
  report({ before, after, answers, own });
`;

function check(run: ReturnType<typeof runHost<SchedReport>>, attacks: string[][]) {
  expect({ signal: run.signal, status: run.status, stderr: run.stderr }).toEqual({
    signal: null,
    status: 0,
    stderr: "",
  });
  const r = run.report as SchedReport;
  expect(r.answers).toEqual(attacks.map(([call]) => `${call}: ${call} EPERM`));
  // Its nice value (the test run's), SCHED_OTHER, its affinity, no I/O class set: as before the attacks.
  expect(r.after).toBe(r.before);
  expect(r.before.split(" ")[0]).toBe(String(getPriority()));
  expect(r.own).toEqual([
    "setpriority process 0 19: ok",
    "sched_setaffinity 0: ok",
    "ioprio_set process 0: ok",
    "sched_setscheduler 0: ok",
    "sched_setaffinity tid: sched_setaffinity EPERM",
    "setpriority process self 19: setpriority EPERM",
  ]);
}

describe.runIf(filtered && setpriv)("sandbox: the host's scheduling is out of reach", () => {
  it.runIf(root)("a root host: renice, SCHED_IDLE, affinity and I/O class refused", () => {
    check(runHost<SchedReport>(dir, HOST(probe, ON_HOST), { wrap: ["setsid", "--wait"] }), ON_HOST);
  });

  it.runIf(root)("a host that is not root: the same, and the user-wide calls", () => {
    const attacks = [...ON_HOST, ...USER_WIDE];
    check(
      runHost<SchedReport>(dir, HOST(probe, attacks), {
        wrap: [
          "setsid",
          "--wait",
          "setpriv",
          `--reuid=${UID}`,
          `--regid=${UID}`,
          "--clear-groups",
          "--",
        ],
        library: privateLibrary(dir),
      }),
      attacks,
    );
  });
});
