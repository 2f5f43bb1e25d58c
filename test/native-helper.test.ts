/**
 * The exec helper as the loader sets it up (src/native.ts, native/core/helper_file.cc):
 * one descriptor for the process however many workers load the library
 * (issue 35, finding 8: each worker's setHelperPath forgot the descriptor an
 * earlier worker had opened, 20 workers held 20), and a helper that cannot run
 * here named as such (issue 36, finding 5).
 *
 * Oracles: the host's /proc/self/fd links (a host of its own, so the runner's
 * descriptors do not count), helperStatus(), and the error a step gets.
 */
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, spawn } from "../src/index.js";
import { nativeBinding } from "../src/native.js";
import { removeDir, runHost, scratchDir } from "./faults/host.js";

const root = resolve(import.meta.dirname, "..");
const native = nativeStatus().loaded;
const isRoot = process.getuid?.() === 0;
const own = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
/** The helper of the other architecture's prebuild (both are in the tree). */
const foreign =
  process.arch === "x64"
    ? {
        file: join(root, "prebuilds/linux-arm64/exactspawn-helper"),
        built: "aarch64",
        runs: "x86_64",
      }
    : {
        file: join(root, "prebuilds/linux-x64/exactspawn-helper"),
        built: "x86_64",
        runs: "aarch64",
      };
const NATIVE_URL = pathToFileURL(join(root, "dist/native.js")).href;
const qemu = spawnSync("sh", ["-c", "command -v qemu-x86_64"], { encoding: "utf8" }).stdout.trim();
/**
 * Under `npm run test:asan` the host's LD_PRELOAD (the sanitizer runtimes)
 * reaches a Node run under qemu-user, whose ASan shadow mapping the emulator
 * cannot give: it was OOM-killed after a minute with no output. The qemu case
 * tests the exec fallback, not memory safety: it runs in the ordinary suite.
 */
const underAsan = process.env["EXACTSPAWN_EXPECT_ASAN"] === "1";

/** What a step's error says of itself (the fields a host reads). */
function named(error: unknown) {
  const e = error as NodeJS.ErrnoException & { step?: string };
  return { code: e.code, syscall: e.syscall, path: e.path, step: e.step, message: e.message };
}

describe.runIf(native)("the exec helper's descriptor", () => {
  it("is one for the process after 20 workers each loaded the library and ran a helper step", () => {
    const dir = scratchDir("exactspawn-helper-fd-");
    try {
      // Each worker loads the library (the loader sets the helper's path),
      // opens the helper (a uid step as root, else its status) and is
      // terminated; the host counts the descriptors that point at the helper
      // (its file, or its in-memory copy).
      const step = isRoot
        ? `await m.spawn("/bin/true", [], { uid: 0, gid: 0 });`
        : "m.nativeStatus().helper;";
      const run = runHost<{ helperFds: string[]; errors: string[] }>(
        dir,
        `import { Worker } from "node:worker_threads";
        import { once } from "node:events";
        import { readdirSync, readlinkSync } from "node:fs";
        const helperFds = () => readdirSync("/proc/self/fd").flatMap((fd) => {
          try {
            const to = readlinkSync("/proc/self/fd/" + fd);
            return /exactspawn-helper/.test(to) ? [to] : [];
          } catch { return []; }
        });
        const errors = [];
        for (let i = 0; i < 20; i++) {
          const worker = new Worker(
            \`const { parentPort } = require("node:worker_threads");
            import(\${JSON.stringify(DIST)}).then(async (m) => {
              ${step}
              parentPort.postMessage("done");
            }, (e) => parentPort.postMessage(String(e)));\`,
            { eval: true },
          );
          const [said] = await once(worker, "message");
          if (said !== "done") errors.push(said);
          await worker.terminate();
        }
        report({ helperFds: helperFds(), errors });`,
      );
      expect(run.stderr).toBe("");
      expect(run.report?.errors).toEqual([]);
      // Before the fix: 20 descriptors, all to the same file.
      expect(run.report?.helperFds.length).toBe(1);
    } finally {
      removeDir(dir);
    }
  });
});

describe.runIf(native)("a helper that cannot run here, named as the helper's", () => {
  const binding = nativeBinding()!;
  let shipped: string;
  beforeAll(() => {
    shipped = binding.helperStatus!().path;
  });
  afterAll(() => binding.setHelperPath!(shipped));

  it("refuses a helper built for another architecture: status and step say so", async () => {
    binding.setHelperPath!(foreign.file);
    const status = binding.helperStatus!();
    // Before: { run: "file" }, and the step failed at execveat with a bare ENOEXEC.
    expect({ run: status.run, reason: status.reason, error: named(status.error) }).toEqual({
      run: "unavailable",
      reason: `built for ${foreign.built}, this process runs ${foreign.runs}`,
      error: expect.objectContaining({ code: "ENOEXEC", path: foreign.file, step: "helper" }),
    });
    const failed = await spawn("/bin/true", [], own).then(() => undefined, named);
    expect(failed).toEqual({
      code: "ENOEXEC",
      syscall: undefined,
      path: foreign.file,
      step: "helper",
      message: expect.stringContaining(`built for ${foreign.built}`),
    });
  });

  it("says a PID-namespace containment lacks the helper, not that the kernel cannot", () => {
    // A host of its own: the PID namespace support is probed once per process.
    const dir = scratchDir("exactspawn-helper-pidns-");
    const missing = join(dir, "missing-helper");
    try {
      const run = runHost<{ error: ReturnType<typeof named>; missing: unknown }>(
        dir,
        `import { nativeBinding } from ${JSON.stringify(NATIVE_URL)};
        import { spawn } from DIST;
        nativeBinding().setHelperPath(${JSON.stringify(missing)});
        try {
          await spawn("/bin/true", [], { contain: { mechanism: "pid-namespace" } });
          report({ error: null });
        } catch (e) {
          report({ error: { code: e.code, message: e.message }, missing: e.missing });
        }`,
      );
      expect(run.stderr).toBe("");
      // Before: "contain: this host cannot make a PID namespace (ENOENT): a kernel with PID namespaces…".
      expect(run.report).toEqual({
        error: {
          code: "ERR_EXACTSPAWN_CONTAINMENT_UNAVAILABLE",
          message: `contain: a PID namespace's init is the exec helper, which cannot run: open ENOENT ${missing}`,
        },
        missing: ["exec helper"],
      });
    } finally {
      removeDir(dir);
    }
  });

  it.runIf(qemu !== "" && process.arch === "x64" && !underAsan)(
    "runs the helper by /proc/self/fd/N there, and names it when every exec fails (vfork is a fork)",
    () => {
      // qemu-user 7.2 has no execveat (ENOSYS): the helper is exec'd by
      // /proc/self/fd/N instead. Its vfork child is a fork: a failure never
      // reaches the parent's memory, only the start-status pipe (every exec
      // refused by debugRefuseHelperExec to see it).
      const dir = scratchDir("exactspawn-helper-qemu-");
      try {
        const run = runHost<unknown>(
          dir,
          `import { nativeBinding } from ${JSON.stringify(NATIVE_URL)};
          import { spawn } from DIST;
          const path = nativeBinding().helperStatus().path;
          const step = async () => {
            try {
              const result = await spawn("/bin/true", [], { uid: ${own.uid}, gid: ${own.gid}, reject: false });
              return { exitCode: result.exitCode };
            } catch (e) {
              return { step: e.step, syscall: e.syscall, code: e.code, path: e.path === path ? "the helper" : e.path };
            }
          };
          const runs = await step();
          nativeBinding().debugRefuseHelperExec(38, 3);
          report({ runs, refused: await step() });`,
          { wrap: [qemu] },
        );
        expect(run.stderr).toBe("");
        // Before the fallback: runs was { step: "helper", syscall: "execveat", code: "ENOSYS", … }.
        expect(run.report).toEqual({
          runs: { exitCode: 0 },
          refused: { step: "helper", syscall: "execveat", code: "ENOSYS", path: "the helper" },
        });
      } finally {
        removeDir(dir);
      }
    },
  );
});
