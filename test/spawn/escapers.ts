/**
 * A bash step that starts three escapers (a `setsid` daemon, a double fork,
 * a `nohup` job), each printing its pid on stdout first: the containment
 * tests record each (pid + start time, process-state.ts) while the step
 * runs, end the step, and look for them once it has settled.
 */
import { spawn } from "../../src/index.js";
import { type LeftBehind, type SeenProcess, seen } from "../fixtures/process-state.js";

/**
 * Starts `bash -c escapers + script`, records the three escapers as their
 * pids arrive (each also left to `left`, killed after the test), then calls
 * `end` (which ends the step) and awaits the settled run.
 */
export async function runWithEscapers(
  left: LeftBehind,
  escapers: string,
  script: string,
  options: Parameters<typeof spawn>[2],
  end: (child: ReturnType<typeof spawn>) => void,
): Promise<{ escapers: SeenProcess[]; result: Awaited<ReturnType<typeof spawn>> }> {
  const child = spawn("/bin/bash", ["-c", escapers + script], {
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
    stdio: ["pipe", "pipe", "ignore"],
    reject: false,
    ...options,
  });
  const seenEscapers: SeenProcess[] = [];
  let lines = 0;
  for await (const line of child.lines()) {
    const escaper = seen(Number(line));
    if (escaper !== undefined) seenEscapers.push(escaper);
    left.add(Number(line));
    if (++lines === 3) break;
  }
  end(child);
  const result = await child;
  return { escapers: seenEscapers, result };
}

/**
 * Host-script text (for runHost, where DIST stands for the library) that runs
 * `step` under bash in a worker thread with the spawn option `contain` (its
 * source text), takes the step's three escaper pids from its stdout, then
 * terminates the worker: `pids` holds them afterwards.
 */
export function stepInTerminatedWorker(step: string, contain: string): string {
  return `
      import { Worker } from "node:worker_threads";
      const STEP_TEXT = ${JSON.stringify(step)};
      const worker = new Worker(\`
        const { parentPort } = require("node:worker_threads");
        import(\${JSON.stringify(DIST)}).then(async ({ spawn }) => {
          const step = spawn("/bin/bash", ["-c", \${JSON.stringify(STEP_TEXT)}], { contain: ${contain}, stdio: ["ignore", "pipe", "ignore"], env: { PATH: "/usr/bin:/bin" } });
          const pids = [];
          for await (const line of step.lines()) { pids.push(Number(line)); if (pids.length === 3) break; }
          parentPort.postMessage(pids);
        });
      \`, { eval: true });
      const pids = await new Promise((resolve) => worker.once("message", resolve));
      await worker.terminate();
`;
}
