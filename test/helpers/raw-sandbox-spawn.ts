/**
 * The raw binding's spawnSync of /bin/true with a sandbox as given: what the
 * addon does with a sandbox plan no TypeScript check has seen (a link
 * swapped in after the paths were resolved, a view path that is not a write
 * path). Throws what the addon throws; the binding must be loaded.
 */
import { nativeBinding, type RawSandbox } from "../../src/native.js";
import { deadlinePlan, nativeDeadline } from "../../src/spawn/deadline-plan.js";

export function rawSandboxSpawn(sandbox: RawSandbox): void {
  nativeBinding()!.spawnSync!({
    file: "/bin/true",
    argv: ["true"],
    envp: [],
    stdio: [-1, -1, -1],
    setsid: true,
    deadline: nativeDeadline(
      deadlinePlan({
        timeout: undefined,
        killSignal: 15,
        killGraceMs: 1000,
        maxBuffer: 1024,
        ownGroup: true,
      }),
    ),
    sandbox,
  });
}
