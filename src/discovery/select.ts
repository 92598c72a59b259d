/**
 * Which discovery providers run, in discovery order. Apart from the providers themselves so that
 * the boot index can name its question without loading any provider (and their validators).
 */
import { PROVIDER_IDS, type DiscoverCustomToolsOptions, type ProviderId } from "../core/host-options.js";

/** The providers that run for `options`, in discovery order. */
export function selectProviders(options: Pick<DiscoverCustomToolsOptions, "providers" | "disabledProviders"> = {}): ProviderId[] {
  const wanted = options.providers ? new Set(options.providers) : undefined;
  const disabled = new Set(options.disabledProviders ?? []);
  return PROVIDER_IDS.filter((id) => (wanted ? wanted.has(id) : true) && !disabled.has(id));
}
