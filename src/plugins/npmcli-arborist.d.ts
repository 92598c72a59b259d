// The small part of @npmcli/arborist's API the plugin engine uses (it ships no types).
declare module "@npmcli/arborist" {
  interface ArboristNode {
    name: string;
    version: string;
    path: string;
    realpath: string;
    isLink: boolean;
    package: Record<string, unknown>;
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
  class Arborist {
    constructor(options: Record<string, unknown>);
    reify(options?: ReifyOptions): Promise<ArboristNode>;
    loadActual(options?: Record<string, unknown>): Promise<ArboristNode>;
    /** The tree `reify` would make, without writing (test/integration/dependency-warmup.test.ts). */
    buildIdealTree(options?: ReifyOptions): Promise<ArboristNode>;
  }
  export default Arborist;
}
