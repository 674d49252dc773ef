import type { CatalogProjection } from "../catalog";
import type { ResolvedCodeModeOptions } from "../config";

/** Everything a turn needs after it was opened; persisted in the session object's SQLite. */
export type TurnSpec = {
  turnId: string;
  tenantId: string;
  sessionId: string;
  agentId?: string;
  model?: string;
  codeModeEngaged: boolean;
  options: ResolvedCodeModeOptions;
  catalog: CatalogProjection;
  /** One counter lifetime; a replaced or restored catalog gets a new scope. */
  counterScope: string;
  createdAt: number;
};

export type TurnCounters = { search: number; describe: number; call: number };
