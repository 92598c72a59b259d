/**
 * Does the lock still describe the set? Per entry `ok | missing | stale | extra` with why
 * (docs/design/team-sets.md (d) 3.). Pure: what only the network knows (the version a dist-tag
 * points at now) comes in as `facts`; without a fact the locked choice stands, as `npm ci` does.
 *
 * The lock covers what the committed files switch on (`teamEnabled`), never a personal choice: it
 * must be the same bytes on every teammate's machine.
 */
import { npa, semver } from "../core/npm-spec.js";
import { splitPluginId } from "../manifest/installed-plugins.js";
import { sameSource, type DeclaredSource } from "../manifest/team-declaration.js";
import { LOCK_SECTIONS, type LockSection, type LockedMarketplace, type LockedMarketplacePlugin, type LockedNpmPlugin, type TeamLock } from "../manifest/team-lock.js";
import type { EffectiveSet, Satisfaction, SatisfactionState, SetPlugin } from "../manifest/team-set.js";
import { compareKeys } from "./canonical-json.js";

/** What the caller resolved now, for the checks the files alone cannot answer. */
export interface SatisfyFacts {
  /** npm plugins declared by dist-tag (or without spec: `latest`): name → the version the tag names now. */
  npmTags?: ReadonlyMap<string, string>;
}

type Verdict = { state: SatisfactionState; why?: string };
const OK: Verdict = { state: "ok" };
const stale = (why: string): Verdict => ({ state: "stale", why });

/**
 * The git URL a git spec of npm's is locked under: the URL git fetches, without npm's `git+`
 * prefix (core/source-args.ts allows no `git+https` transport) and without the committish.
 * WP3's resolver writes `from.url` with this, so the comparison here holds.
 */
export function npmGitUrlOf(name: string, spec: string): string | undefined {
  const parsed = npa.resolve(name, spec, "/");
  if (parsed.type !== "git") return undefined;
  // hosted-git-info has `https()`; @types/npm-package-arg's `HostedGit` does not list it.
  const hosted = parsed.hosted as unknown as { https(options: { noCommittish: boolean }): string } | undefined;
  const url = hosted ? hosted.https({ noCommittish: true }) : parsed.fetchSpec;
  return url?.replace(/^git\+/, "");
}

/** The state of a declared marketplace's lock entry. */
export function marketplaceVerdict(declared: DeclaredSource, locked: LockedMarketplace | undefined): Verdict {
  if (!locked) return { state: "missing", why: "not locked yet" };
  if (!sameSource(declared, locked.source)) return stale(`its source changed (locked ${JSON.stringify(locked.source)}, declared ${JSON.stringify(declared)})`);
  if (declared.source === "github" || declared.source === "git") {
    if (!locked.commit) return stale("no catalog commit is locked");
    if (declared.sha !== undefined && declared.sha.toLowerCase() !== locked.commit) return stale(`declared sha ${declared.sha}, locked commit ${locked.commit}`);
  }
  if (declared.source === "url" && !locked.sha256) return stale("no catalog sha256 is locked");
  return OK;
}

/** The state of a declared marketplace plugin's lock entry, given its marketplace's. */
export function marketplacePluginVerdict(plugin: SetPlugin, locked: LockedMarketplacePlugin | undefined, marketplace: Verdict): Verdict {
  if (!locked) return { state: "missing", why: "not locked yet" };
  if (marketplace.state !== "ok") return stale(`its marketplace is ${marketplace.state}${marketplace.why ? `: ${marketplace.why}` : ""}`);
  if (plugin.version !== undefined && !semver.satisfies(locked.version, plugin.version, { includePrerelease: true })) return stale(`locked ${locked.version} does not meet the declared range ${plugin.version}`);
  return OK;
}

/** The state of a declared npm plugin's lock entry. */
export function npmVerdict(plugin: SetPlugin, locked: LockedNpmPlugin | undefined, facts: SatisfyFacts = {}): Verdict {
  if (!locked) return { state: "missing", why: "not locked yet" };
  const spec = plugin.spec ?? "latest";
  const parsed = npa.resolve(plugin.key, spec, "/");
  switch (parsed.type) {
    case "version":
    case "range":
      if (locked.from) return stale(`locked from ${locked.from.kind} ${locked.from.url}, declared the registry range ${spec}`);
      return semver.satisfies(locked.version, spec, { includePrerelease: true }) ? OK : stale(`locked ${locked.version} does not meet the declared ${spec}`);
    case "tag": {
      if (locked.from) return stale(`locked from ${locked.from.kind} ${locked.from.url}, declared the dist-tag ${spec}`);
      const now = facts.npmTags?.get(plugin.key);
      return now === undefined || now === locked.version ? OK : stale(`the dist-tag ${spec} names ${now}, locked ${locked.version}`);
    }
    case "git": {
      const url = npmGitUrlOf(plugin.key, spec);
      if (locked.from?.kind !== "git" || locked.from.url !== url) return stale(`declared the git repository ${url}, locked ${locked.from ? `${locked.from.kind} ${locked.from.url}` : "the registry"}`);
      const committish = parsed.gitCommittish ?? undefined;
      if (committish && /^[0-9a-f]{40}$/i.test(committish) && committish.toLowerCase() !== locked.from.commit) return stale(`declared commit ${committish}, locked ${locked.from.commit}`);
      if (parsed.gitRange && !semver.satisfies(locked.version, parsed.gitRange)) return stale(`locked ${locked.version} does not meet the declared semver:${parsed.gitRange}`);
      return OK;
    }
    case "remote":
      return locked.from?.kind === "tarball" && locked.from.url === spec ? OK : stale(`declared the tarball ${spec}, locked ${locked.from ? `${locked.from.kind} ${locked.from.url}` : "the registry"}`);
    default:
      return stale(`the spec ${JSON.stringify(spec)} cannot be locked`);
  }
}

/** Every entry of the set and of the lock, in lock order (section, then key), with its state. */
export function satisfies(set: EffectiveSet, lock: TeamLock, facts: SatisfyFacts = {}): Satisfaction {
  const out: Satisfaction = [];
  const add = (section: LockSection, key: string, verdict: Verdict) => out.push({ section, key, state: verdict.state, ...(verdict.why ? { why: verdict.why } : {}) });
  const wanted: Record<LockSection, Set<string>> = { marketplaces: new Set(), marketplacePlugins: new Set(), npm: new Set() };
  const marketplaceVerdicts = new Map<string, Verdict>();
  for (const [name, { source }] of set.marketplaces) {
    wanted.marketplaces.add(name);
    marketplaceVerdicts.set(name, marketplaceVerdict(source, lock.marketplaces[name]));
  }
  for (const plugin of set.plugins.values()) {
    if (!plugin.teamEnabled) continue;
    if (plugin.kind === "npm") {
      wanted.npm.add(plugin.key);
      continue;
    }
    wanted.marketplacePlugins.add(plugin.key);
  }
  for (const section of LOCK_SECTIONS) {
    const keys = [...new Set([...wanted[section], ...Object.keys(lock[section])])].sort(compareKeys);
    for (const key of keys) {
      if (!wanted[section].has(key)) {
        add(section, key, { state: "extra", why: "the project no longer switches it on" });
        continue;
      }
      if (section === "marketplaces") add(section, key, marketplaceVerdicts.get(key)!);
      else if (section === "npm") add(section, key, npmVerdict(set.plugins.get(key)!, lock.npm[key], facts));
      else add(section, key, marketplacePluginVerdict(set.plugins.get(key)!, lock.marketplacePlugins[key], marketplaceVerdicts.get(splitPluginId(key)!.marketplace)!));
    }
  }
  return out;
}

/** True when every entry is `ok` (what `--frozen` requires, before the bytes check). */
export function isSatisfied(satisfaction: Satisfaction): boolean {
  return satisfaction.every((entry) => entry.state === "ok");
}
