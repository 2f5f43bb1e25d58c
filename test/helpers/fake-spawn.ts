/**
 * A fake addon `spawn` for engine tests: it takes the positional call the
 * native engine makes (native/spawn_args.h) and records each one as the
 * options object it stands for, with its `flags` and whether posix_spawn was
 * asked for, so tests read the fields by name.
 */
import type {
  RawChildHandle,
  RawExitCallback,
  RawSpawn,
  RawSpawnMore,
  RawSpawnOptions,
} from "../../src/native.js";

export interface RecordedSpawn extends RawSpawnMore {
  readonly file: string;
  readonly argv: RawSpawnOptions["argv"];
  readonly argvCount: number | undefined;
  readonly envp: RawSpawnOptions["envp"];
  readonly envpCount: number | undefined;
  readonly cwd: string | undefined;
  readonly stdio: readonly number[];
  readonly flags: number;
  readonly setsid: boolean;
  readonly setpgroup: boolean;
  /** flags bit 4: posix_spawn(3) for a child without controls. */
  readonly posixSpawn: boolean;
  readonly onExit: RawExitCallback;
  /** The deadline plan's numbers (nativeDeadlineNumbers), or undefined. */
  readonly deadline: Float64Array | undefined;
}

/** A `spawn` that records its calls in `calls` and returns `start()`'s handle (or throws). */
export function fakeSpawn(calls: RecordedSpawn[], start: () => RawChildHandle): RawSpawn {
  return ((...args: unknown[]) => {
    const [file, argv, argvCount, envp, envpCount, cwd, stdio, flags, onExit, deadline, more] =
      args as [
        string,
        RawSpawnOptions["argv"],
        number,
        RawSpawnOptions["envp"],
        number,
        string | undefined,
        readonly number[],
        number,
        RawExitCallback,
        Float64Array | undefined,
        RawSpawnMore | undefined,
      ];
    calls.push({
      ...more,
      file,
      argv,
      argvCount,
      envp,
      envpCount,
      cwd,
      stdio,
      flags,
      setsid: (flags & 1) !== 0,
      setpgroup: (flags & 2) !== 0,
      posixSpawn: (flags & 4) !== 0,
      onExit,
      deadline,
    });
    return start();
  }) as RawSpawn;
}
