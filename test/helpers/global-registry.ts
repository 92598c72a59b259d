/**
 * Vitest global setup: one Verdaccio for the whole run, shared by every test file.
 *
 * Wire it in vitest.config.ts with `test.globalSetup: ["test/helpers/global-registry.ts"]`.
 * Test files then get it with `await useGlobalRegistry()` (or `inject("xcshRegistry")` for the
 * raw `{url, token}`); the URL is also in `process.env.XCSH_TEST_REGISTRY_URL` for spawned
 * processes of the main vitest process. Each test should publish under names of its own
 * (the registry is shared), e.g. with a per-file scope.
 */
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { connectRegistry, startRegistry, type LocalRegistry, type RegistryHandle } from "./registry.js";

declare module "vitest" {
  export interface ProvidedContext {
    xcshRegistry: { url: string; token: string };
  }
}

let registry: LocalRegistry | undefined;

/** Start the shared registry and provide `{url, token}` to the test files. */
export async function setup(project: TestProject): Promise<void> {
  registry = await startRegistry();
  project.provide("xcshRegistry", { url: registry.url, token: registry.token });
  process.env.XCSH_TEST_REGISTRY_URL = registry.url;
}

/** Stop it at the end of the run. */
export async function teardown(): Promise<void> {
  await registry?.stop();
  registry = undefined;
}

/** In a test file: a publishing handle on the shared registry (dispose it in `afterAll`). */
export async function useGlobalRegistry(): Promise<RegistryHandle & { dispose(): Promise<void> }> {
  const { url, token } = inject("xcshRegistry");
  return connectRegistry(url, token);
}
