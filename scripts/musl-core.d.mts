export interface MuslCheck {
  outcome: "ok" | "FAIL" | "skip";
  name: string;
  detail: string;
}
export interface MuslCoreResult {
  ok: boolean;
  build?: string;
  exit?: string;
  checks: MuslCheck[];
  output: string;
  prebuild?: string;
  seconds?: number;
}
export const MUSL_TARGETS: Record<
  string,
  { zig: string; platform: string; qemu: boolean; loader: string }
>;
export const MUSL_CORE_VERSION: string;
/** Loads prebuilds/linux-<arch>/exactspawn.musl.node (or `file`) with musl's own loader. */
export function loadPrebuild(arch: string, dir: string, file?: string): MuslCheck;
/** What this machine lacks to build and run the target, or undefined. */
export function muslCoreMissing(arch: string): string | undefined;
/** Builds the driver for one target and runs it. */
export function runMuslCore(arch: string): MuslCoreResult;
/** One result cell for the matrix. */
export function muslCoreSummary(result: MuslCoreResult): string;
/** The native/core/ files (without .cc) the musl driver links. */
export const CORE: readonly string[];
