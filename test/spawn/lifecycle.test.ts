/**
 * Resource lifecycle of the native engine at volume: after many sequential
 * spawns (1,000 in `npm test`, 10,000 in `npm run test:long`) and 1,000
 * concurrent children, fds, pidfds and zombies are back to where they
 * started. RSS is reported, not asserted; nothing here is timed.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, spawn } from "../../src/index.js";
import { nativeBinding } from "../../src/native.js";
import { eventually, openFds, pidfdCount, zombieChildren } from "../fixtures/process-state.js";
import { byRun } from "../helpers/long.js";

const SEQUENTIAL = byRun(1_000, 10_000);

const settle = () => new Promise((r) => setImmediate(r));
const threadCount = () =>
  Number(/Threads:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]);
// Generous: on a saturated 2-core machine a spawn of /bin/true can take 20 ms.
const VOLUME_TIMEOUT = 900_000;

describe.runIf(nativeStatus().loaded)("spawn lifecycle (native engine)", () => {
  let baseline: number[];
  let rssBefore: number;
  let threadsBefore: number;

  beforeAll(async () => {
    // The exit watch's event set (epoll, timerfd, eventfd; with the addon's
    // thread where the host's loop is not used) starts with the first spawn
    // and lives as long as the environment: part of the baseline.
    await spawn("/bin/true", [], { stdio: "ignore" });
    baseline = openFds();
    threadsBefore = threadCount();
    rssBefore = process.memoryUsage().rss;
  });

  afterAll(() => {
    const growth = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    console.log(`RSS growth over the lifecycle tests: ${growth.toFixed(1)} MiB`);
  });

  const backToBaseline = async () => {
    await settle();
    const leaked = () => openFds().filter((fd) => !baseline.includes(fd));
    expect(await eventually(() => leaked().length === 0)).toBe(true);
    expect(pidfdCount()).toBe(0);
    expect(zombieChildren()).toEqual([]);
    // Every watch went through its lifetime by the table (native/watch_state.h).
    expect(nativeBinding()!.debugCounters!().invalidWatchMoves).toBe(0);
  };

  it("watches with the waiter this run asks for (the thread project: EXACTSPAWN_EXIT_WATCH=thread)", () => {
    const thread = process.env["EXACTSPAWN_EXIT_WATCH"] === "thread";
    expect(nativeStatus().exitWatch).toBe(thread ? "thread" : "host-loop");
  });

  it(
    `${SEQUENTIAL.toLocaleString("en")} sequential spawns of /bin/true leave nothing behind`,
    async () => {
      let failures = 0;
      for (let i = 0; i < SEQUENTIAL; i++) {
        const result = await spawn("/bin/true", [], { stdio: "ignore" });
        if (result.exitCode !== 0) failures++;
      }
      expect(failures).toBe(0);
      await backToBaseline();
    },
    VOLUME_TIMEOUT,
  );

  it(
    "1,000 concurrent sleeping children are watched, killed and reaped",
    async () => {
      const children = Array.from({ length: 1000 }, () =>
        spawn("/bin/sleep", ["1000"], { stdio: "ignore", reject: false }),
      );
      expect(pidfdCount()).toBe(1000);
      // No thread per child (the exit watch's waiter started with the first spawn; the
      // slack is for threads the runtime may start on its own, such as its pool).
      const threads = threadCount();
      console.log(`threads with 1,000 children alive: ${threads} (${threadsBefore} before)`);
      expect(threads).toBeLessThanOrEqual(threadsBefore + 8);
      for (const child of children) expect(child.kill("SIGKILL")).toBe(true);
      const results = await Promise.all(children.map((c) => c.result));
      expect(results.every((r) => r.signal === "SIGKILL")).toBe(true);
      await backToBaseline();
    },
    VOLUME_TIMEOUT,
  );

  it(
    "1,000 concurrent children with captured output all report correctly",
    async () => {
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          spawn("/bin/sh", ["-c", `echo ${i}; exit ${i % 50}`], { reject: false }),
        ),
      );
      results.forEach((r, i) => {
        expect(r.stdout).toBe(`${i}\n`);
        expect(r.exitCode).toBe(i % 50);
      });
      await backToBaseline();
    },
    VOLUME_TIMEOUT,
  );
});
