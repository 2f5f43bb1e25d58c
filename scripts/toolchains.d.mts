/** A tool taken from the npm registry, pinned by version and tarball sha512. */
export interface Toolchain {
  readonly name: string;
  readonly version: string;
  readonly integrity: string;
  /** The executable inside the unpacked package. */
  readonly bin: string;
}
export const TOOLCHAINS: Readonly<Record<string, Toolchain>> & {
  readonly bun: Toolchain;
  readonly deno: Toolchain;
};
/** Where the pinned tools are unpacked (EXACTSPAWN_TOOLCHAINS overrides it). */
export const CACHE: string;
export function toolchainDir(key: string): string;
export function toolchainBin(key: string): string;
