/**
 * Frozen maps: a Map whose mutators throw, registered so the library knows
 * its entries no longer change and may keep what it derives from them
 * (validated entries, the packed envp, sizes). Used for the snapshots and
 * layered environments a runtime hands out.
 */

/** The maps freezeMap froze. */
const frozenMaps = new WeakSet<object>();

/**
 * Returns `map` frozen with its mutators disabled, so a snapshot handed out
 * cannot be changed through the ordinary Map methods. The library may keep
 * what it derives from such a map (validated entries, packed envp, sizes).
 */
export function freezeMap<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const refuse = (): never => {
    throw new TypeError("this map is frozen");
  };
  Object.defineProperties(map, {
    set: { value: refuse },
    delete: { value: refuse },
    clear: { value: refuse },
  });
  frozenMaps.add(map);
  return Object.freeze(map);
}

/** True for a map freezeMap returned: its entries no longer change. */
export function isFrozenMap(value: object): boolean {
  return frozenMaps.has(value);
}
