import type { PendingRequest } from "../bridge";
import type { OutputBudgetState } from "../code-mode";

/** Everything a parked cell needs besides its VM snapshot; stored as JSON beside it. */
export type ParkedRunState = {
  runId: string;
  turnId: string;
  tenantId: string;
  sessionId: string;
  reason: "pending_tools" | "yield";
  /** `exportHandle` token of the guest control object inside the snapshot. */
  controlToken: number;
  pending: PendingRequest[];
  budget: OutputBudgetState;
  /** Output items already delivered in earlier results (incremental output). */
  delivered: { count: number; digest: string };
  /** Client calls whose results earlier waits already delivered (a repeat is a 409). */
  deliveredCalls?: string[];
  restartSafe: boolean;
  createdAt: number;
  expiresAt: number;
};
