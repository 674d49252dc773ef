export { BudgetPause } from "./budget-pause";
export {
  HOOK_TIMEOUT_MS,
  HOOK_RESULT_BYTES,
  policyName,
  needsApproval,
  runBeforeHooks,
  runAfterHooks,
  MAX_APPROVAL_WINDOWS_PER_CELL,
  toolCallPolicy,
  type PluginHooks,
  type ApprovalAnswer,
  type ApprovalRequester,
  type PolicyDeps,
} from "./tool-call-policy";
export { admitExec, admitWait, execRan, type ExecAdmission } from "./exec-hooks";
