// json-stringify-nice (npm's lockfile serializer, used by arborist) ships no types.
declare module "json-stringify-nice" {
  /** `JSON.stringify` with keys sorted (`order` first), and a trailing newline when indented. */
  export default function stringify(value: unknown, order?: readonly string[], space?: number | string): string;
}
