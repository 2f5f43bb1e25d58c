/**
 * The exec controls on the native engine (the addon's own child path), run
 * as root, each checked in what the real child sees: its own
 * /proc/self/status, /proc/self/limits and /proc/self/stat, read by the child
 * itself (`cat`), never by this library. Each control's test has a contrast
 * (the same spawn without the control) and was seen red once with the control
 * removed from native/core/child_path.cc: one scratch build with every control
 * skipped failed all twelve control tests, each on its own assertion; one with
 * the child's error report not stored failed the four error tests. Restored.
 */
import { type ChildProcess, spawn as spawnChild, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { getPriority, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, type SpawnOptions, spawn } from "../../src/index.js";
import { type NativeBinding, nativeBinding, type RawSpawnOptions } from "../../src/native.js";
import {
  eventually,
  isRunning,
  LeftBehind,
  openFds,
  zombieChildren,
} from "../fixtures/process-state.js";

const root = resolve(import.meta.dirname, "../..");
const dist = pathToFileURL(join(root, "dist/index.js")).href;
const NOBODY = 65_534;
const isRoot = process.getuid?.() === 0;

/** The child's own /proc/self/status, as a record of its lines. */
async function childStatus(options: SpawnOptions = {}): Promise<Record<string, string>> {
  const result = await spawn("/bin/cat", ["/proc/self/status"], options);
  return Object.fromEntries(
    String(result.stdout)
      .trim()
      .split("\n")
      .map((line) => {
        const [key, value] = line.split(":\t") as [string, string];
        return [key, value.trim()];
      }),
  );
}

/** The child's own /proc/self/limits: "soft hard" per resource line. */
async function childLimits(options: SpawnOptions): Promise<Record<string, string>> {
  const result = await spawn("/bin/cat", ["/proc/self/limits"], options);
  const out: Record<string, string> = {};
  for (const line of String(result.stdout).split("\n").slice(1)) {
    const match = /^(.+?)\s{2,}(\S+)\s+(\S+)/.exec(line);
    if (match) out[match[1]!] = `${match[2]} ${match[3]}`;
  }
  return out;
}

/** Field 19 (nice) of the child's own /proc/self/stat. */
async function childNice(options: SpawnOptions): Promise<number> {
  const result = await spawn("/bin/cat", ["/proc/self/stat"], options);
  const stat = String(result.stdout);
  // Fields after the command name (which may contain spaces) start at field 3.
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19 - 3]);
}

async function failure(promise: PromiseLike<unknown>): Promise<NodeJS.ErrnoException> {
  return (await Promise.resolve(promise).then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e,
  )) as NodeJS.ErrnoException;
}

describe.runIf(nativeStatus().loaded && isRoot)("exec controls (native engine, as root)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "exactspawn-controls-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("sets uid, gid and the supplementary groups (real, effective, saved)", async () => {
    const before = await childStatus();
    expect(before["Uid"]).toBe("0\t0\t0\t0");
    const status = await childStatus({ uid: NOBODY, gid: NOBODY - 1, groups: [4242, 17] });
    expect(status["Uid"]).toBe(`${NOBODY}\t${NOBODY}\t${NOBODY}\t${NOBODY}`);
    expect(status["Gid"]).toBe(`${NOBODY - 1}\t${NOBODY - 1}\t${NOBODY - 1}\t${NOBODY - 1}`);
    expect(status["Groups"]?.split(" ").map(Number).sort()).toEqual([17, 4242]);
  });

  it("drops a root parent's supplementary groups when uid is set and groups are not", () => {
    // A host holding group 4242 (setpriv), so there is something to drop.
    const host = join(dir, "groups-host.mjs");
    writeFileSync(
      host,
      `import { spawn } from ${JSON.stringify(dist)};
      const groups = async (o) => /Groups:\\t(.*)/.exec((await spawn("/bin/cat", ["/proc/self/status"], o)).stdout)[1].trim();
      console.log(JSON.stringify([await groups({}), await groups({ uid: ${NOBODY} }), await groups({ uid: ${NOBODY}, groups: [7] })]));`,
    );
    const result = spawnSync("setpriv", ["--groups", "4242", "--", process.execPath, host], {
      encoding: "utf8",
    });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual(["4242", "", "7"]);
  });

  it("sets the umask", async () => {
    const parent = process.umask().toString(8).padStart(4, "0");
    expect((await childStatus())["Umask"]).toBe(parent);
    expect((await childStatus({ umask: 0o027 }))["Umask"]).toBe("0027");
    expect((await childStatus({ umask: 0o7777 }))["Umask"]).toBe("0777");
  });

  it("sets each requested resource limit, soft and hard, and no other", async () => {
    const before = await childLimits({});
    const limits = await childLimits({
      rlimits: { nofile: [100, 200], cpu: 7, core: 0, fsize: [1 << 20, Infinity], nproc: 500 },
    });
    expect(limits["Max open files"]).toBe("100 200");
    expect(limits["Max cpu time"]).toBe("7 7");
    expect(limits["Max core file size"]).toBe("0 0");
    expect(limits["Max file size"]).toBe(`${1 << 20} unlimited`);
    expect(limits["Max processes"]).toBe("500 500");
    expect(limits["Max stack size"]).toBe(before["Max stack size"]);
    expect(before["Max open files"]).not.toBe("100 200");
  });

  it("sets the nice value", async () => {
    // Without the control the child keeps the host's own value (0 unless the run is niced).
    expect(await childNice({})).toBe(getPriority());
    expect(await childNice({ nice: 7 })).toBe(7);
    expect(await childNice({ nice: -5 })).toBe(-5);
  });

  it("sets no_new_privs", async () => {
    expect((await childStatus({ umask: 0o22 }))["NoNewPrivs"]).toBe("0");
    expect((await childStatus({ noNewPrivileges: true }))["NoNewPrivs"]).toBe("1");
  });

  it("gives the child an empty mask and no ignored signal at all, glibc's 32 and 33 included", async () => {
    // The parent blocks every signal around clone, so the child starts with a full mask: seen
    // red once with the child's final rt_sigprocmask removed (SigBlk fffffffffffbfeff).
    const status = await childStatus({ umask: 0o22 });
    expect(status["SigBlk"]).toBe("0000000000000000");
    expect(status["SigIgn"]).toBe("0000000000000000");
  });

  it("changes the directory as the new user (EACCES naming the cwd)", async () => {
    const locked = join(dir, "root-only");
    mkdirSync(locked);
    chmodSync(locked, 0o700);
    const asRoot = await spawn("/bin/pwd", [], { cwd: locked });
    expect(asRoot.stdout).toBe(`${locked}\n`);
    const error = await failure(spawn("/bin/pwd", [], { cwd: locked, uid: NOBODY }));
    expect(error).toMatchObject({ code: "EACCES", syscall: "chdir", path: locked });
    expect(error.errno).toBeLessThan(0);
  });

  it("reports an exec failure as execve with the path, leaving no zombie and no fd", async () => {
    const before = openFds();
    const missing = join(dir, "missing");
    const error = await failure(spawn(missing, [], { umask: 0o22, stdio: "pipe" }));
    expect(error).toMatchObject({ code: "ENOENT", syscall: "execve", path: missing });
    expect(await eventually(() => openFds().every((fd) => before.includes(fd)))).toBe(true);
    expect(zombieChildren()).toEqual([]);
  });

  it("reports a limit the kernel refuses as setrlimit (EPERM above fs.nr_open)", async () => {
    const before = openFds();
    const error = await failure(
      spawn("/bin/true", [], { rlimits: { nofile: 1 << 30 }, stdio: "pipe" }),
    );
    expect(error).toMatchObject({ code: "EPERM", syscall: "setrlimit", path: "/bin/true" });
    expect(error.message).toBe("setrlimit EPERM /bin/true");
    expect(await eventually(() => openFds().every((fd) => before.includes(fd)))).toBe(true);
    expect(zombieChildren()).toEqual([]);
  });

  it("the addon reports soft > hard as EINVAL from setrlimit (TypeScript refuses it earlier)", () => {
    const binding = nativeBinding() as Required<NativeBinding>;
    let thrown: unknown;
    try {
      binding.spawn({
        file: "/bin/true",
        argv: ["true"],
        envp: [],
        stdio: [-1, -1, -1],
        controls: { rlimits: [["nofile", 10, 5]] },
        onExit: () => {},
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: "EINVAL",
      syscall: "setrlimit",
      step: "rlimits",
      path: "/bin/true",
    });
    expect(zombieChildren()).toEqual([]);
  });
});

describe.runIf(nativeStatus().loaded)("the addon's controls object (marshalling)", () => {
  // The addon as users get it: through the package's own loader
  // (node-gyp-build finds build/ or the committed prebuild), never by path.
  const binding = () => nativeBinding() as Required<NativeBinding>;
  const cases: [string, Record<string, unknown>][] = [
    ["controls must be an object", { controls: 5 }],
    ["controls.uid", { controls: { uid: "0" } }],
    ["controls.uid", { controls: { uid: 2 ** 32 - 1 } }],
    ["controls.gid", { controls: { gid: Number.NaN } }],
    ["controls.groups[0]", { controls: { groups: [-1] } }],
    ["controls.umask", { controls: { umask: 0o10000 } }],
    ["controls.rlimits[0] must be [name, soft, hard]", { controls: { rlimits: [["cpu", 1]] } }],
    ["controls.rlimits[0] names no resource", { controls: { rlimits: [["files", 1, 1]] } }],
    ["controls.rlimits[0].soft", { controls: { rlimits: [["cpu", -1, 1]] } }],
    ["controls.nice", { controls: { nice: 20 } }],
    ["controls.noNewPrivileges", { controls: { noNewPrivileges: 1 } }],
    ["controls.parentDeathSignal", { controls: { parentDeathSignal: 0 } }],
  ];
  for (const [what, extra] of cases) {
    it(`refuses ${JSON.stringify(extra)} with a TypeError naming ${what}, starting nothing`, () => {
      expect(() =>
        binding().spawn({
          file: "/bin/true",
          argv: ["true"],
          envp: [],
          stdio: [-1, -1, -1],
          onExit: () => {
            throw new Error("nothing may start");
          },
          ...extra,
        } as RawSpawnOptions),
      ).toThrow(new RegExp(`^spawn: ${what.replace(/[[\]().]/g, "\\$&")}`));
      expect(zombieChildren()).toEqual([]);
    });
  }
});

describe.runIf(nativeStatus().loaded)("parentDeathSignal (native engine)", () => {
  let dir: string;
  beforeAll(() => {
    // dist/ is current: the global setup compiled it (recompiling here raced other files importing it).
    dir = mkdtempSync(join(tmpdir(), "exactspawn-pdeath-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const leftovers = new LeftBehind();
  const hosts: ChildProcess[] = [];
  afterEach(() => {
    for (const host of hosts.splice(0)) host.kill("SIGKILL");
    leftovers.killAll();
  });

  /** A Node host running `source`; it prints a JSON array of pids once. */
  function startHost(source: string): { pids: Promise<number[]>; kill: () => void } {
    const file = join(dir, `host-${Math.random().toString(36).slice(2)}.mjs`);
    writeFileSync(file, source.replaceAll("DIST", JSON.stringify(dist)));
    const child = spawnChild(process.execPath, [file], { stdio: ["ignore", "pipe", "inherit"] });
    hosts.push(child);
    const pids = new Promise<number[]>((resolvePids) => {
      let out = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) {
          const pids = JSON.parse(out) as number[];
          leftovers.add(...pids);
          resolvePids(pids);
        }
      });
    });
    return { pids, kill: () => child.kill("SIGKILL") };
  }

  it("kills the child when its SIGKILLed host ends; without it the child stays", async () => {
    const host = startHost(`
      import { spawn } from DIST;
      const guarded = spawn("/bin/sleep", ["1000"], { parentDeathSignal: "SIGKILL", stdio: "ignore", reject: false });
      const loose = spawn("/bin/sleep", ["1000"], { stdio: "ignore", reject: false });
      console.log(JSON.stringify([guarded.pid, loose.pid]));
      setInterval(() => {}, 1000);
    `);
    const [guarded, loose] = await host.pids;
    expect(isRunning(guarded!)).toBe(true);
    host.kill();
    expect(await eventually(() => !isRunning(guarded!))).toBe(true);
    expect(isRunning(loose!)).toBe(true);
  });

  it("fires when the spawning THREAD ends: a terminated worker's child is killed", async () => {
    const host = startHost(`
      import { Worker } from "node:worker_threads";
      const worker = new Worker(\`
        import { spawn } from DIST;
        import { parentPort } from "node:worker_threads";
        const guarded = spawn("/bin/sleep", ["1000"], { parentDeathSignal: "SIGTERM", stdio: "ignore", reject: false });
        const loose = spawn("/bin/sleep", ["1000"], { stdio: "ignore", reject: false });
        parentPort.postMessage([guarded.pid, loose.pid]);
        setInterval(() => {}, 1000);
      \`, { eval: true, type: "module" });
      worker.once("message", async (pids) => {
        await worker.terminate();
        console.log(JSON.stringify(pids));
        setInterval(() => {}, 1000);
      });
    `);
    const [guarded, loose] = await host.pids;
    // The host process is alive; only the worker thread that spawned the children ended.
    expect(await eventually(() => !isRunning(guarded!))).toBe(true);
    expect(isRunning(loose!)).toBe(true);
  });
});

describe.runIf(nativeStatus().loaded)("the child path on several threads at once", () => {
  it("gives every child exactly its own argv and exit, whichever thread spawned it", async () => {
    // Each thread reuses a child stack of its own: a stack two threads shared
    // would let one thread's child overwrite another's frames before exec.
    const lane = `
      const { parentPort, workerData } = require("node:worker_threads");
      (async () => {
        const { spawn } = await import(workerData.dist);
        const wrong = [];
        for (let i = 0; i < workerData.count; i++) {
          const tag = workerData.lane * 1000 + i;
          const result = await spawn("/bin/sh", ["-c", 'printf %s "$1"; exit $(($1 % 200))', "sh", String(tag)], { umask: 0o077, reject: false });
          if (result.stdout !== String(tag) || result.exitCode !== tag % 200) wrong.push(tag);
        }
        parentPort.postMessage(wrong);
      })();`;
    const lanes = Array.from(
      { length: 4 },
      (_, index) =>
        new Promise<number[]>((done, fail) => {
          const worker = new Worker(lane, {
            eval: true,
            workerData: { dist, lane: index, count: 100 },
          });
          worker.once("message", done);
          worker.once("error", fail);
        }),
    );
    expect((await Promise.all(lanes)).flat()).toEqual([]);
  }, 60_000);
});
