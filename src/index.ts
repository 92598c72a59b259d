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
} from "./host/types.js";
export type { DiscoverCustomToolsOptions, LoadCustomToolsOptions, ProviderId } from "./host/options.js";
export { PROVIDER_IDS } from "./host/options.js";
export { XcshToolsError, isXcshToolsError } from "./core/errors.js";
