/**
 * The native engine: pipes from pipe2(O_CLOEXEC), posix_spawn through the
 * addon, exit through its pidfd watch. Parent pipe ends become
 * `net.Socket({ fd })` streams (never fs streams: those would hold a libuv
 * threadpool thread per read). Child pipe ends are closed in the parent as
 * soon as the spawn returned, whatever the outcome.
 */
import { Socket } from "node:net";
import type { NativeBinding, RawChildExit, RawChildHandle } from "../native.js";
import type { Engine, EngineChild, EngineExit, EngineRequest } from "./engine.js";

type SpawnCapable = NativeBinding & Required<Pick<NativeBinding, "spawn" | "pipe" | "closeFd">>;

export function canSpawnNatively(binding: NativeBinding | null): binding is SpawnCapable {
  return (
    binding !== null &&
    typeof binding.spawn === "function" &&
    typeof binding.pipe === "function" &&
    typeof binding.closeFd === "function"
  );
}

class NativeChild implements EngineChild {
  readonly pid: number;
  readonly streams: ReadonlyArray<Socket | null>;
  readonly #handle: RawChildHandle;
  constructor(handle: RawChildHandle, streams: ReadonlyArray<Socket | null>) {
    this.#handle = handle;
    this.pid = handle.pid;
    this.streams = streams;
  }
  kill(signal: number): number {
    return this.#handle.kill(signal);
  }
  killGroup(signal: number): number {
    return this.#handle.killGroup(signal);
  }
  ref(): void {
    this.#handle.ref();
  }
  unref(): void {
    this.#handle.unref();
  }
}

function toExit(raw: RawChildExit | Error): EngineExit | Error {
  if (raw instanceof Error) return raw;
  return {
    exitCode: raw.exitCode,
    signal: raw.signal,
    resourceUsage: { userCpuMicros: raw.userCpuMicros, systemCpuMicros: raw.systemCpuMicros },
  };
}

export function nativeEngine(binding: SpawnCapable): Engine {
  return {
    native: true,
    start(request: EngineRequest, onExit: (exit: EngineExit | Error) => void): EngineChild {
      const stdio: number[] = [];
      const parentEnds: (number | null)[] = [];
      const childEnds: number[] = [];
      let handle: RawChildHandle;
      try {
        for (let i = 0; i < request.stdio.length; i++) {
          const slot = request.stdio[i];
          if (slot === "pipe") {
            const [readEnd, writeEnd] = binding.pipe();
            const childEnd = i === 0 ? readEnd : writeEnd;
            stdio.push(childEnd);
            childEnds.push(childEnd);
            parentEnds.push(i === 0 ? writeEnd : readEnd);
          } else {
            stdio.push(slot === "ignore" ? -1 : slot === "inherit" ? i : (slot as number));
            parentEnds.push(null);
          }
        }
        handle = binding.spawn({
          file: request.file,
          argv: request.argv,
          envp: request.envp,
          cwd: request.cwd,
          stdio,
          setsid: request.setsid,
          setpgroup: request.setpgroup,
          onExit: (raw) => {
            try {
              onExit(toExit(raw));
            } catch (error) {
              // Never let an exception travel back into the addon's loop callback.
              process.nextTick(() => {
                throw error;
              });
            }
          },
        });
      } catch (error) {
        for (const fd of parentEnds) if (fd !== null) binding.closeFd(fd);
        throw error;
      } finally {
        for (const fd of childEnds) binding.closeFd(fd);
      }
      const streams = parentEnds.map((fd, i) =>
        fd === null
          ? null
          : i === 0
            ? new Socket({ fd, readable: false, writable: true })
            : new Socket({ fd, readable: true, writable: false }),
      );
      return new NativeChild(handle, streams);
    },
  };
}
