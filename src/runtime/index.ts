/** The public surface of src/runtime (other folders import from here). */
export { systemClock, frozenClock, manualClock, type Clock } from "./clock";
export { GuestFaultError, classify, type GuestFault } from "./guest-fault";
export { GUEST_ABI_VERSION, HOST_CALL, HOST_OP, GUEST_CONTROL, GUEST_PRELUDE, GUEST_RANDOM_SOURCE } from "./guest-prelude";
export {
  DRIVABLE_GUEST_ABI,
  GuestVm,
  guestSeedState,
  pristineVm,
  buildPristineVm,
  PRISTINE_MEMORY_LIMIT_BYTES,
  type PristineVm,
  type VmImage,
  type GuestHost,
  type GuestLimits,
  type CellStatus,
} from "./guest-vm";
export { TICKS_PER_TIMEOUT_MS, BRIDGE_BYTES_PER_TICK, SETTLES_PER_TICK, InterruptGuard, type BudgetTrip } from "./interrupt-guard";
export {
  PLATFORM_ISOLATE_MEMORY_BYTES,
  DEFAULT_ISOLATE_VM_MEMORY_BYTES,
  MIN_ISOLATE_VM_MEMORY_BYTES,
  MAX_ISOLATE_VM_MEMORY_BYTES,
  VM_OVERHEAD_BYTES,
  resolveIsolateVmMemoryBytes,
  MemoryLedger,
  type MemoryReservation,
  type RoomWait,
  type RoomOutcome,
} from "./memory-ledger";
export { resetToImage, restoreImage } from "./image-restore";
export { preludeBytecode, resetPreludeBytecodeForTests, frozenWasi } from "./prelude-bytecode";
export { VmPool, type VmRoom, type VmTake, type CellVms } from "./vm-pool";
export { SetupImages, type VmSetup } from "./setup-images";
export { WORK_UNITS_PER_TICK, WORK_FLUSH_UNITS, WORK_METER_SOURCE } from "./work-meter";
