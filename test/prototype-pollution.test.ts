/**
 * Options are read as own properties only, once (src/known-options.ts).
 *
 * The attacker's view: a host whose Object.prototype was polluted (by a
 * dependency, a merge of parsed JSON) runs every front door — spawn,
 * spawnSync, createRuntime, runtime.bash, runtime.spawn, their sandbox,
 * contain and exec controls, the env/context/values/extra maps, the context
 * exporter — clean and then with one key set on Object.prototype, in a Node
 * process of its own (test/fixtures/polluted-host.mjs), and reports what the
 * child really got: its environment's names, uid, gid, capabilities, what
 * it could write, read, execute and connect to, whether the view was
 * read-only, its pid namespace, its containment. The two must be the same.
 *
 * Red before the fix: all 43 scenarios differed (an LD_PRELOAD in the
 * environ of a spawn without `env`, uid 65534, the sandbox applied to an
 * unsandboxed spawn, network and capabilities kept, the view off, writable
 * files executable, SECRET_TOKEN inherited through `inherit`, `allow`,
 * `grants` and `preset`, a bare TOKEN through `bareNames`, a bash step
 * uncontained through `contain: false` or `cleanup: false`, the runtime's
 * sandbox replaced, a PID namespace or cgroup limits through the addon's
 * `namespace`/`limits`, step values renamed through `nestedSeparator`, bare
 * context names through the exporter's `mode`, every spawnSync refused
 * through `signal`).
 *
 * The command line likewise: `exactspawn run` with an attacker's module
 * loaded first (node --import) that sets `inherit`, `uid`, `extra` and
 * `contain` (before: the parent's whole environment, SECRET_TOKEN included,
 * an LD_PRELOAD, uid 65534).
 *
 * The getters: each option is read once, so an option that answers
 * differently at each read cannot pass the checks with one value and reach
 * the child with another.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRuntime, nativeStatus, spawn, spawnSync as spawnSyncLib } from "../src/index.js";
import { ownItems, ownOptions, ownProperties } from "../src/known-options.js";
import { DIST_URL } from "./faults/host.js";

const root = process.getuid?.() === 0;

interface Observation {
  readonly out?: string;
  readonly exit?: number | null;
  readonly contained?: string | null;
  readonly error?: string;
}
type Report = Record<string, "skipped" | { clean: unknown; polluted: unknown }>;

describe("a polluted Object.prototype chooses no option", () => {
  it.runIf(nativeStatus().loaded && root)(
    "every front door: the child gets exactly what it gets without the pollution",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "exactspawn-polluted-"));
      let report: Report;
      try {
        const run = spawnSync(
          process.execPath,
          [join(import.meta.dirname, "fixtures/polluted-host.mjs"), DIST_URL, dir],
          { encoding: "utf8", timeout: 300_000 },
        );
        expect(run.status, run.stderr).toBe(0);
        report = JSON.parse(run.stdout) as Report;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const ran = Object.entries(report).filter(([, seen]) => seen !== "skipped");
      expect(ran.length).toBeGreaterThanOrEqual(25);
      const differing = ran.filter(
        ([, seen]) =>
          seen !== "skipped" && JSON.stringify(seen.clean) !== JSON.stringify(seen.polluted),
      );
      expect(Object.fromEntries(differing)).toEqual({});
      // The clean runs see what each scenario is about (else "the same" proves nothing).
      const clean = (name: string): Observation | undefined => {
        const seen = report[name];
        return seen === undefined || seen === "skipped" ? undefined : (seen.clean as Observation);
      };
      expect(clean("spawn env")?.out).toMatch(/^env PWD SHLVL _ \nuid 0 gid 0\n/);
      expect(clean("runtime inherit")?.out).not.toContain("SECRET_TOKEN");
      expect(clean("runtime bareNames")?.out).toContain(" CTX_TOKEN ");
      const sandboxed = clean("sandbox network");
      if (sandboxed !== undefined) {
        expect(sandboxed.out).toContain("CapEff: 0000000000000000\nwrite-outside no\n");
        expect(sandboxed.out).toContain("exec-writable no\nchmod-outside no\nnet not permitted\n");
      }
      const bash = clean("bash contain");
      if (bash !== undefined) expect(bash.contained).toBe("cgroup");
    },
    300_000,
  );
});

describe("the command line", () => {
  it.runIf(nativeStatus().loaded)(
    "exactspawn run in a polluted process: the step gets what it gets without the pollution",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "exactspawn-polluted-cli-"));
      try {
        // Loaded before the command: an attacker's module, as a dependency would be.
        const pollute = join(dir, "pollute.mjs");
        writeFileSync(
          pollute,
          [
            'Object.prototype.inherit = "all";',
            "Object.prototype.uid = 65534;",
            'Object.prototype.extra = { LD_PRELOAD: "/nonexistent.so" };',
            "Object.prototype.contain = false;",
          ].join("\n"),
        );
        const step = (imports: string[]) =>
          spawnSync(
            process.execPath,
            [
              ...imports,
              join(import.meta.dirname, "../dist/cli.js"),
              "run",
              "--",
              'cat /proc/self/environ | tr "\\0" "\\n" | cut -d= -f1 | sort | tr "\\n" " "; id -u',
            ],
            { encoding: "utf8", env: { ...process.env, SECRET_TOKEN: "s" }, timeout: 120_000 },
          );
        const clean = step([]);
        const polluted = step([`--import=${pollute}`]);
        expect(clean.status, clean.stderr).toBe(0);
        expect(clean.stdout).not.toContain("SECRET_TOKEN");
        expect({ status: polluted.status, stdout: polluted.stdout }).toEqual({
          status: clean.status,
          stdout: clean.stdout,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    240_000,
  );
});

/** `options` with a getter per key that counts its reads. */
function counted<T extends object>(values: T): { options: T; reads: Record<string, number> } {
  const reads: Record<string, number> = {};
  const options = {} as T;
  for (const [key, value] of Object.entries(values)) {
    reads[key] = 0;
    Object.defineProperty(options, key, {
      enumerable: true,
      get: () => {
        reads[key]! += 1;
        return value;
      },
    });
  }
  return { options, reads };
}

const once = (reads: Record<string, number>) =>
  Object.fromEntries(Object.keys(reads).map((key) => [key, 1]));

describe("each option is read once", () => {
  it("spawn", async () => {
    const { options, reads } = counted({
      env: { A: "1" },
      timeout: 60_000,
      reject: false,
      stdio: ["ignore", "pipe", "ignore"] as const,
      contain: false as const,
    });
    await spawn("/bin/true", [], options);
    expect(reads).toEqual(once(reads));
  });

  it("spawnSync", () => {
    const { options, reads } = counted({ env: { A: "1" }, timeout: 60_000, reject: false });
    spawnSyncLib("/bin/true", [], options);
    expect(reads).toEqual(once(reads));
  });

  it("createRuntime, runtime.bash and runtime.spawn", async () => {
    const made = counted({ parentEnv: { PATH: "/usr/bin:/bin" }, cleanup: true, contain: false });
    const runtime = createRuntime(made.options);
    expect(made.reads).toEqual(once(made.reads));
    const bash = counted({
      context: { a: "1" },
      values: { b: "2" },
      cleanup: true,
      timeout: 60_000,
      step: "s",
      contain: false as const,
      stdio: ["ignore", "pipe", "pipe"] as const,
    });
    await runtime.bash("true", bash.options);
    expect(bash.reads).toEqual(once(bash.reads));
    const child = counted({ context: { a: "1" }, timeout: 60_000, cwd: "/", step: "s" });
    await runtime.spawn("/bin/true", [], child.options);
    expect(child.reads).toEqual(once(child.reads));
  });
});

describe("the reader", () => {
  it("copies own enumerable properties into an object that inherits nothing", () => {
    const given = Object.assign(Object.create({ inherited: 1 }) as object, { own: 2 });
    Object.defineProperty(given, "hidden", { value: 3, enumerable: false });
    const plan = ownProperties(given) as Record<string, unknown>;
    const prototype: unknown = Object.getPrototypeOf(plan);
    expect(Object.getPrototypeOf(prototype)).toBeNull();
    expect(Object.isFrozen(prototype)).toBe(true);
    expect(Reflect.ownKeys(prototype as object)).toEqual([]);
    expect({ ...plan }).toEqual({ own: 2 });
    expect(plan["toString"]).toBeUndefined();
    expect(ownProperties(5)).toBe(5);
  });

  it("refuses an unknown key as assertKnownOptions does, and keeps __proto__ an ordinary key", () => {
    const known = new Set(["a", "__proto__"]);
    expect(() => ownOptions({ b: 1 }, known, "f")).toThrow(new TypeError('f: unknown option "b"'));
    const plan = ownOptions(JSON.parse('{"__proto__": {"a": 1}}') as object, known, "f");
    expect(Object.hasOwn(plan, "__proto__")).toBe(true);
    expect((plan as Record<string, unknown>)["a"]).toBeUndefined();
  });

  it("reads a hole in a list as undefined, never an inherited index", () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    const list = [, "b"];
    Object.defineProperty(Array.prototype, "0", { value: "a", writable: true, configurable: true });
    try {
      expect(list[0]).toBe("a");
      expect(ownItems(list)).toEqual([undefined, "b"]);
    } finally {
      delete (Array.prototype as unknown as Record<string, unknown>)["0"];
    }
  });
});
