/**
 * Fetching the metadata of a plugin's dependencies while the other specs still resolve, into the
 * packument cache arborist reads (npm-client.ts `packumentCache`).
 *
 * Without it, arborist learns of a plugin's dependencies only when it builds its tree, after
 * every spec has resolved, and it builds that tree one node at a time (`#buildDepStep` awaits a
 * node's dependencies before it takes the next): 20 plugins with a dependency each cost 20
 * registry round trips one after another. Here each dependency is fetched as soon as the
 * manifest naming it arrives, concurrently with the other specs, and the dependencies of the
 * version npm would pick are walked the same way; arborist then finds them all in memory.
 *
 * Best effort by design: a failed fetch is dropped (arborist fetches it again and reports it with
 * its own retries), and a fetch never retries here, so an unreachable registry costs its one
 * attempt. Only registry specs (versions, ranges, tags) are followed; git, file, alias and URL
 * dependencies are arborist's to fetch.
 */
import { npa } from "../core/npm-spec.js";
import { npmOptions, type NpmClientOptions } from "./npm-client.js";

type Pacote = typeof import("pacote");

/** What a manifest names: the fields arborist installs from. */
interface DependencyFields {
  dependencies?: unknown;
  optionalDependencies?: unknown;
  peerDependencies?: unknown;
  peerDependenciesMeta?: unknown;
}

const REGISTRY_SPEC_TYPES = new Set(["version", "range", "tag"]);

/** One command's walk, keyed by its packument cache. */
interface Walk {
  /** The `name@range`s already fetched or being fetched. */
  seen: Set<string>;
  /** The fetch in flight per package name: a second range of it waits, then reads the cache. */
  inFlight: Map<string, Promise<unknown>>;
}
const walks = new WeakMap<Map<string, unknown>, Walk>();

/** The registry dependency specs (`name@range`) arborist will place for `manifest`. */
export function registryDependencySpecs(manifest: DependencyFields, cwd: string): string[] {
  return registryDependencies(manifest, cwd).map(({ spec }) => spec);
}

function registryDependencies(manifest: DependencyFields, cwd: string): { name: string; spec: string }[] {
  const record = (value: unknown): Record<string, unknown> => (value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
  const peersMeta = record(manifest.peerDependenciesMeta);
  // Optional peers are not installed by npm unless something else needs them.
  const peers = Object.entries(record(manifest.peerDependencies)).filter(([name]) => record(peersMeta[name]).optional !== true);
  const all = new Map<string, unknown>([...peers, ...Object.entries(record(manifest.optionalDependencies)), ...Object.entries(record(manifest.dependencies))]);
  const specs: { name: string; spec: string }[] = [];
  for (const [name, range] of all) {
    if (typeof range !== "string") continue;
    try {
      if (REGISTRY_SPEC_TYPES.has(npa.resolve(name, range, cwd).type)) specs.push({ name, spec: `${name}@${range}` });
    } catch {
      // Not a valid spec: arborist reports it.
    }
  }
  return specs;
}

/**
 * Fetch the dependency tree of `manifest` (as far as registry specs go) into the client's
 * packument cache. Never throws; resolves when every fetch it started has settled.
 */
export async function warmDependencies(pacote: Pacote, manifest: DependencyFields, client: NpmClientOptions, cwd: string): Promise<void> {
  const cache = client.packumentCache;
  if (!cache) return;
  let state = walks.get(cache);
  if (!state) walks.set(cache, (state = { seen: new Set(), inFlight: new Map() }));
  const { seen, inFlight } = state;
  const options = { ...npmOptions(client), fetchRetries: 0, where: cwd } as never;
  const walk = async (from: DependencyFields): Promise<void> => {
    const fresh = registryDependencies(from, cwd).filter(({ spec }) => !seen.has(spec));
    for (const { spec } of fresh) seen.add(spec);
    await Promise.all(
      fresh.map(async ({ name, spec }) => {
        const before = inFlight.get(name);
        const fetching = (async () => {
          await before;
          try {
            return (await pacote.manifest(spec, options)) as DependencyFields;
          } catch {
            return undefined;
          }
        })();
        inFlight.set(name, fetching);
        const picked = await fetching;
        if (picked) await walk(picked);
      }),
    );
  };
  await walk(manifest);
}
