/** The public surface of src/runtime (other folders import from here). */
export * from "./clock";
export * from "./guest-fault";
export * from "./guest-prelude";
export * from "./guest-vm";
export * from "./interrupt-guard";
export * from "./memory-ledger";
export * from "./prelude-bytecode";
export * from "./vm-pool";
export * from "./work-meter";
