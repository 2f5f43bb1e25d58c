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
  refuseMutation(map, ["set", "delete", "clear"], "this map is frozen");
  frozenMaps.add(map);
  return Object.freeze(map);
}

/** Replaces `methods` on `collection` (a Map or Set) by ones that throw TypeError(`message`). */
export function refuseMutation(
  collection: object,
  methods: readonly string[],
  message: string,
): void {
  const refuse = (): never => {
    throw new TypeError(message);
  };
  for (const method of methods) Object.defineProperty(collection, method, { value: refuse });
}

/** True for a map freezeMap returned: its entries no longer change. */
export function isFrozenMap(value: object): boolean {
  return frozenMaps.has(value);
}
