/**
 * xcsh-tools: the library agent hosts call at boot, and the types of the custom-tool contract.
 * Explicit named exports only; this file is the public API.
 */
export type {
  AgentToolResult,
  AgentToolUpdateCallback,
  Component,
  CustomTool,
  CustomToolAPI,
  CustomToolContext,
  CustomToolFactory,
  CustomToolLogger,
  CustomToolPendingAction,
  CustomToolResult,
  CustomToolSessionEvent,
  CustomToolSessionEventReason,
  CustomToolsLoadResult,
  CustomToolUIContext,
  ExecOptions,
  ExecResult,
  HostPendingAction,
  ImageContent,
  LoadedCustomTool,
  PushPendingAction,
  RenderResultOptions,
  TextContent,
  Theme,
  ToolLoadError,
  ToolPathWithSource,
  ToolSource,
  SkippedProjectSource,
  UntrustedProjectReport,
} from "./core/contract.js";
export type { DiscoverCustomToolsOptions, LoadCustomToolsOptions, ProjectTrustOption, ProviderId } from "./core/host-options.js";
export { PROVIDER_IDS } from "./core/host-options.js";
export { XcshToolsError, isXcshToolsError } from "./core/errors.js";
// Discovery: where tools come from (docs/library-api.md, "Where tools come from"), scanned without importing plugin code.
export { DISCOVERY_ERROR_CODES, discoverToolPaths, selectProviders } from "./discovery/index.js";
export type {
  DiscoverToolPathsOptions,
  DiscoveryErrorCode,
  IgnoredToolFile,
  ToolDiscoveryResult,
  ToolMetadataFile,
} from "./discovery/index.js";
export { discoverAndLoadCustomTools } from "./boot/discover-and-load.js";
// Boot index: what is installed, answered without scanning or importing plugin code when fresh.
import type { BootIndexCheck, BootIndexOptions, BootRefreshReport, InstalledToolsList, ListInstalledToolsOptions } from "./boot/index.js";
/*
 * Loaded on the first call, like `listInstalledComponents` below: a host's boot imports this
 * module for `discoverAndLoadCustomTools` (boot/discover.ts) and never asks for these.
 */
const bootIndex = () => import("./boot/index.js");
/** Whether the boot index answers, without changing anything (boot/check.ts). */
export async function checkBootIndex(options: BootIndexOptions = {}): Promise<BootIndexCheck> {
  return (await bootIndex()).checkBootIndex(options);
}
/** What a host would load at boot, without importing plugin code here (boot/installed-tools.ts). */
export async function listInstalledTools(options: ListInstalledToolsOptions = {}): Promise<InstalledToolsList> {
  return (await bootIndex()).listInstalledTools(options);
}
/** Rebuild the boot index after a change (boot/refresh.ts). */
export async function refreshBootIndex(options: BootIndexOptions & { validate?: boolean } = {}): Promise<BootRefreshReport> {
  return (await bootIndex()).refreshBootIndex(options);
}
import type { InstalledComponentsList, ListInstalledComponentsOptions } from "./boot/components-library.js";
/**
 * Every installed plugin's components (boot/components-library.ts). Loaded on the first call: the
 * component readers (YAML, their schemas) must not weigh on a host's boot, which imports this
 * module and never asks for them.
 */
export async function listInstalledComponents(options: ListInstalledComponentsOptions = {}): Promise<InstalledComponentsList> {
  return (await import("./boot/components-library.js")).listInstalledComponents(options);
}
export type { InstalledComponentsList, ListInstalledComponentsOptions } from "./boot/components-library.js";
export type { InstalledPluginComponents } from "./components/installed.js";
export type { Component as PluginComponent, ComponentCost, ComponentExec, ComponentIssue, ComponentKind, PluginRootKind } from "./components/types.js";
export type {
  BootIndexCheck,
  BootIndexOptions,
  BootRefreshReport,
  InstalledTool,
  InstalledToolsList,
  ListInstalledToolsOptions,
} from "./boot/index.js";
// Loader wing: module import, tool-shape checks, loader, adapter, exec, session, render.
export {
  CustomToolLoader,
  DEFAULT_FACTORY_TIMEOUT_MS,
  LOADER_ERROR_CODES,
  createNoOpUIContext,
  loadCustomTools,
  silentLogger,
} from "./host/loader.js";
export type { LoaderErrorCode } from "./host/loader.js";
export { CustomToolAdapter } from "./host/adapter.js";
export { execCommand } from "./host/exec.js";
export { dispatchSessionEvent } from "./host/session.js";
export type { SessionDispatchSummary, SessionHookFailure } from "./host/session.js";
export {
  createTextComponent,
  renderCallWithFallback,
  renderResultWithFallback,
  renderWithFallback,
  resultText,
} from "./host/render.js";
export type { TextComponent } from "./host/render.js";
export { TOOL_NAME_PATTERN, checkTool, isObjectSchema } from "./host/tool-shape.js";
export type { ToolShapeProblem } from "./host/tool-shape.js";
export {
  DEFAULT_IMPORT_TIMEOUT_MS,
  detectRuntime,
  importToolModule,
  resolveImportDirs,
  selectImportStrategy,
} from "./host/module-import.js";
export type { ImportStrategy, ImportToolModuleOptions, ImportedToolModule, RuntimeInfo } from "./host/module-import.js";
// Tools that import `xcsh-tools` get this module: the loader below must not import it, so it is handed over here.
import { provideOwnApi } from "./host/import/module-map.js";
provideOwnApi(() => import("./index.js"));
