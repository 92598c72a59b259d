/**
 * The organization policy's view of npm specs (core/policy.ts), apart because it needs
 * npm-package-arg: the host's boot loads it only when a policy file exists.
 */
import { npa } from "./npm-spec.js";
import { npmSpecSource, type PolicySource } from "./policy.js";
/**
 * Where npm would fetch `spec` from: a registry name with the registry `registryOf` names for it
 * (the user's .npmrc at install; the recorded tarball URL at boot), a GitHub repository or git
 * host, a tarball URL, a folder. `name` is the package name when known (`spec` is then its range).
 */
export function npmPolicySource(spec: string, registryOf: (name: string | undefined) => string | undefined, name?: string, cwd?: string): PolicySource {
  let parsed: ReturnType<typeof npa>;
  try {
    parsed = name !== undefined ? npa.resolve(name, spec, cwd) : npa(spec, cwd);
  } catch {
    return { kind: "npm", name: name ?? spec };
  }
  const hosted = parsed.hosted;
  if (parsed.type === "git" && hosted) return hosted.type === "github" ? { kind: "github", owner: hosted.user, repo: hosted.project } : { kind: "git", url: `https://${hosted.domain}/${hosted.user}/${hosted.project}.git` };
  const kind = parsed.type === "range" || parsed.type === "version" || parsed.type === "tag" ? "registry" : String(parsed.type);
  const pkg = parsed.name ?? name;
  return npmSpecSource(kind, pkg, typeof parsed.fetchSpec === "string" ? parsed.fetchSpec : spec, kind === "registry" ? registryOf(pkg) : undefined);
}

