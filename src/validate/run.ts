/**
 * The state of one validation run: findings so far, files looked at, and the modules the child
 * will import, each tagged with the unit (plugin) it belongs to for duplicate checks.
 */
import type { ValidationIssue } from "../manifest/result.js";
import type { Component } from "../components/types.js";
import type { ValidateIssue } from "./types.js";

/** A module to import, and the plugin (unit) whose tool names must be unique together. */
export interface PendingModule {
  file: string;
  unit: string;
  /** Its plugin declares `staticTools` (docs/lazy-tools.md). */
  staticTools?: boolean;
}

export class ValidateRun {
  readonly errors: ValidateIssue[] = [];
  readonly warnings: ValidateIssue[] = [];
  readonly files = new Set<string>();
  readonly modules: PendingModule[] = [];
  /** Marketplace plugins' tools folders seen, in order: the host keys their tools by file stem (host-differences.ts). */
  readonly hostToolFolders: { id: string; toolsDir: string }[] = [];
  /** Components of the plugins checked (skills, commands, hooks, servers...). */
  readonly components: (Component & { plugin: string })[] = [];
  /**
   * Whether a component problem other than a path leaving the plugin is an error (`validate`) or
   * a warning (the install gate, which must take what Claude Code takes).
   */
  componentProblems: "error" | "warning" = "error";
  /**
   * Checking the plugins of a `.claude-plugin/` catalog: Claude Code judges a catalog by its
   * manifests and permission-guarding hooks, so other component problems are warnings there.
   */
  inClaudeCatalog = false;
  readonly #moduleFiles = new Set<string>();

  error(file: string, issue: Omit<ValidateIssue, "file">): void {
    this.files.add(file);
    this.errors.push({ file, ...issue });
  }

  warn(file: string, issue: Omit<ValidateIssue, "file">): void {
    this.files.add(file);
    this.warnings.push({ file, ...issue });
  }

  /** Record a pure validator's findings about `file`. */
  absorb(file: string, result: { issues?: ValidationIssue[]; warnings: ValidationIssue[] }): void {
    this.files.add(file);
    if ("issues" in result && result.issues) for (const issue of result.issues) this.error(file, issue);
    for (const warning of result.warnings) this.warn(file, warning);
  }

  /** Queue a module for the child (once per real file). */
  addModule(file: string, unit: string, key: string = file, staticTools = false): void {
    this.files.add(file);
    if (this.#moduleFiles.has(key)) return;
    this.#moduleFiles.add(key);
    this.modules.push({ file, unit, ...(staticTools ? { staticTools } : {}) });
  }
}
