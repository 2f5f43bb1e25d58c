// A queue worker that runs each job as an exactspawn step. Start as many as you like, on as
// many machines as you like: they share one BullMQ queue on one Redis.
//
//   REDIS_URL=redis://localhost:6379 QUEUE=steps WORKER_NAME=w1 node worker.mjs
//
// A job's data is a step: { command, values?, context?, timeoutMs }. Its result goes back to the
// queue: { worker, output, durationMs } when the step succeeds; when it fails, the job fails for
// good with the step's failure record (JSON in `failedReason`: step, correlationId, failure,
// exitCode, signal, durationMs, stderrTail: what the step.end log event says, never a value).
//
// - Cancel a running job: PUBLISH <QUEUE>:cancel <jobId>. Its step and everything it started end.
// - SIGTERM: take no new job, abort the running steps, put their jobs back on the queue, exit.
// - SIGKILL (or a crash, or the OOM killer): each step is contained, so it dies with the worker;
//   the queue sees the job's lock expire and gives it to another worker.
// - A job retried after its step had completed is not run twice: the first result is kept in the
//   hash <QUEUE>:done (one field per job id) and returned again.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UnrecoverableError, WaitingError, Worker } from "bullmq";
import { createRuntime } from "exactspawn";
import { Redis } from "ioredis";
import pino from "pino";

const queue = process.env.QUEUE ?? "steps";
const name = process.env.WORKER_NAME ?? `worker-${process.pid}`;
// Each job's step gets a directory of its own under <root>/<name>. A worker that was killed left
// its directories there: the next worker of that name removes them as it starts.
const home = join(process.env.WORKER_ROOT ?? tmpdir(), name);
await rm(home, { recursive: true, force: true });
await mkdir(home, { recursive: true });
const concurrency = Number(process.env.WORKER_CONCURRENCY ?? 4);
const connection = redisConnection();
const doneKey = `${queue}:done`;

const log = pino({ name }); // the runtime's step events go here too, each with its step and correlationId
// contain: true — a step this host cannot contain is refused (the job fails saying why) rather
// than run where a worker's death could leave its processes behind.
// inherit: "essentials" — steps get PATH, HOME, LANG, … but none of the worker's own secrets.
const runtime = createRuntime({ logger: log, contain: true, inherit: "essentials" });
const store = new Redis({ ...connection, maxRetriesPerRequest: null });
const stopping = new AbortController(); // aborted on SIGTERM: ends every running step

async function runJob(job, token, cancelled) {
  const id = String(job.id);
  const earlier = await store.hget(doneKey, id);
  if (earlier !== null) return JSON.parse(earlier); // done before, by a worker that died before it could say so

  // One per attempt: a job requeued by this worker may start elsewhere before this one is removed.
  const dir = await mkdtemp(join(home, `job-${id}-`));
  const record = { step: `job-${id}`, correlationId: `${name}:${id}` };
  try {
    let result;
    try {
      const step = runtime.bash(job.data.command, {
        step: record.step,
        correlationId: record.correlationId,
        values: job.data.values,
        context: job.data.context,
        cwd: dir,
        sandbox: { writable: [dir] }, // writes only in its own directory, no network
        timeout: job.data.timeoutMs,
        killGraceMs: 1000,
        signal: AbortSignal.any([cancelled, stopping.signal]),
        reject: false,
      });
      // Who runs it, for the producer (and a test) to see; the step does not wait for this.
      job
        .updateProgress({ worker: name, stepPid: step.pid })
        .catch((error) => log.warn({ err: error }));
      result = await step;
    } catch (error) {
      // Aborted before it started: a SubprocessError with the fields of a result (below).
      if (error.failure === "abort") result = error;
      // Refused before it started (a bad value, no containment here, …): named, never a value.
      else
        throw new UnrecoverableError(
          JSON.stringify({ ...record, code: error.code, error: error.message }),
        );
    }

    if (result.failure === null) {
      const value = { worker: name, output: result.output, durationMs: result.durationMs };
      const first = await store.hsetnx(doneKey, id, JSON.stringify(value));
      return first ? value : JSON.parse(await store.hget(doneKey, id));
    }
    if (result.failure === "abort" && !cancelled.aborted) {
      // This worker is stopping: the job goes back to the queue for another worker.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    const { failure, exitCode, signal, durationMs } = result;
    const reason = cancelled.aborted ? "cancelled" : undefined;
    const stderrTail = (result.stderr ?? "").slice(-1024);
    throw new UnrecoverableError(
      JSON.stringify({ ...record, failure, reason, exitCode, signal, durationMs, stderrTail }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const worker = new Worker(queue, runJob, {
  connection,
  concurrency,
  name,
  // How soon a dead worker's job goes back to the queue: its lock lapses after lockDuration, and
  // a live worker's stalled check (every stalledInterval) returns it to the waiting list.
  lockDuration: Number(process.env.WORKER_LOCK_MS ?? 30_000),
  stalledInterval: Number(process.env.WORKER_STALLED_MS ?? 30_000),
});
worker.on("error", (error) => log.error({ event: "worker.error", err: error }));

// Cancelling a job: whichever worker runs it aborts its step; the others ignore the message.
const cancels = new Redis(connection);
await cancels.subscribe(`${queue}:cancel`);
cancels.on("message", (_channel, jobId) => worker.cancelJob(jobId, "cancelled"));

function redisConnection() {
  if (process.env.REDIS_SOCKET) return { path: process.env.REDIS_SOCKET };
  const url = new URL(process.env.REDIS_URL ?? "redis://localhost:6379");
  return { host: url.hostname, port: Number(url.port || 6379) };
}

process.once("SIGTERM", async () => {
  log.info({ event: "worker.stopping" });
  const closed = worker.close(); // takes no new job; resolves when the running ones have settled
  stopping.abort(); // ends every running step and its tree
  await closed;
  await Promise.all([cancels.quit(), store.quit()]);
  log.info({ event: "worker.stopped" });
});

await worker.waitUntilReady();
log.info({ event: "worker.ready", concurrency });
