// The small part of @npmcli/arborist's API the plugin engine uses (it ships no types).
declare module "@npmcli/arborist" {
  interface ArboristNode {
    name: string;
    version: string;
    path: string;
    realpath: string;
    isLink: boolean;
    isProjectRoot: boolean;
    inBundle: boolean;
    /** A link's folder; the node itself otherwise. */
    target: ArboristNode;
    package: Record<string, unknown>;
    edgesOut: Map<string, { to: ArboristNode | null }>;
    children: Map<string, ArboristNode>;
    /** Every node of the tree, by location (on the root). */
    inventory: Map<string, ArboristNode>;
  }
  interface ReifyOptions {
    add?: string[];
    rm?: string[];
    update?: boolean | { all?: boolean; names?: string[] };
    save?: boolean;
    [key: string]: unknown;
  }
  /** What `reify` changed: a tree of ADD/CHANGE/REMOVE entries (set after `reify`). */
  interface ArboristDiff {
    action: "ADD" | "CHANGE" | "REMOVE" | null;
    ideal: ArboristNode | null;
    children: ArboristDiff[];
  }
  class Arborist {
    diff: ArboristDiff | null;
    /** Build bin links and run lifecycle scripts of `nodes` (reify does this itself unless ignoreScripts). */
    rebuild(options: { nodes: Iterable<ArboristNode>; handleOptionalFailure?: boolean }): Promise<void>;
    constructor(options: Record<string, unknown>);
    reify(options?: ReifyOptions): Promise<ArboristNode>;
    loadActual(options?: Record<string, unknown>): Promise<ArboristNode>;
    /** The tree `reify` would make, without writing (test/integration/dependency-warmup.test.ts). */
    buildIdealTree(options?: ReifyOptions): Promise<ArboristNode>;
  }
  export type { ArboristNode, ArboristDiff };
  export default Arborist;
}
