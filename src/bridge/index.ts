/** The public surface of src/bridge (other folders import from here). */
export { HostBridge, type Settlement, type ToolRequest, type PendingRequest, type BridgeHandlers, type BridgeLimits } from "./host-bridge";
export { jsonTooDeep, valueTooDeep } from "./json-depth";
