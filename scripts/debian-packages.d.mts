export interface DebianPackage {
  name: string;
  arch: string;
  version: string;
  sha256: string;
}
/** key → package, architecture, version and the .deb's sha256. */
export const DEBIAN_PACKAGES: Record<string, DebianPackage>;
/** The unpacked file tree of a pinned Debian package, fetched and checked first if not cached. */
export function debianPackageDir(key: string): string;
