import type { CodeModeResult } from "../code-mode";
import { OutputBudget } from "../code-mode";
import { jsonTooDeep } from "../bridge";
import { GuestFaultError } from "../runtime";
import type { GuestVm, VmSetup } from "../runtime";
import { InterruptGuard } from "../runtime";
import { CellBudget, prepareSource } from "../source";
import { MAX_JSON_DEPTH } from "../limits";

/** While an approval is pending the loop wakes this often to move its deadline (work wakes it sooner). */
const APPROVAL_POLL_MS = 1000;
import { parseExecInput, type ExecInputResult } from "./exec-input";
import { logRecord } from "../observability";
import { closeWith, endCell, failed, failedWithBudget, queuedPastDeadline, rejected, timerPastDeadline } from "./cell-results";
import { cellBridge, type CellEnd, type CellEnvironment, type LiveCell } from "./live-cell";
import { putToSleep, shouldSleep, SLEEP_AFTER_MS, untilDecided, wake } from "./cell-sleep";

/**
 * The cell runner: `exec` (input, source checks, a VM from the pool) and the drive loop both
 * `exec` and `wait` use. Results are built in cell-results.ts; the live cell in live-cell.ts.
 */
/**
 * `exec` (and Tool Search's `tool_search_code`, with its own input rules): validate input, check
 * and transpile the source, run it in a fresh VM, all within one budget.
 */
export async function runExec(
  rawInput: unknown,
  env: CellEnvironment,
  parse: (raw: unknown) => ExecInputResult = (raw) => parseExecInput(raw, env.options.languages),
): Promise<CellEnd> {
  // The cell's one deadline, counted from its admission to the session's queue (see src/source/cell-budget.ts).
  const time = new CellBudget(env.clock, env.options.timeoutMs, env.admittedAt);
  if (time.expiredInQueue()) return rejected(queuedPastDeadline(env.options.timeoutMs, time.queuedMs, "it was not run", env.label), "timeout", env);
  const parsed = parse(rawInput);
  if (!parsed.ok) return rejected(parsed.message, "invalid_input", env);
  const prepared = await prepareSource(parsed.input.code, parsed.input.language, time);
  if (!prepared.ok) return rejected(prepared.message, prepared.code, env);
  const source = prepared.code;

  // What the source phase left: the clock deadline and the milliseconds the tick budget stands for.
  const deadline = time.guestDeadline();
  const guard = new InterruptGuard(env.clock, deadline, time.guestBudgetMs());
  const budget = new OutputBudget(env.options.maxOutputBytes);
  const bridge = cellBridge(env, budget);
  let vm: GuestVm;
  let installed = false;
  const setup = setupOf(env.tools);
  try {
    // Waits for room in the isolate's VM memory within the cell's own deadline.
    const taken = await env.vms.pool.take(
      env.options.memoryLimitBytes,
      { deadline, clock: env.clock, signal: env.signal, owner: env.vms.owner },
      setup,
    );
    if (!taken.ok) {
      bridge.close();
      if (taken.reason === "aborted") return rejected("the code mode run was aborted", "aborted", env);
      // No room: the VM could not start, which the seed calls runtime_unavailable; not a
      // timeout (the program never ran) and not internal_error (nothing broke).
      return rejected(taken.message, "runtime_unavailable", env);
    }
    vm = taken.vm.bind(guard, bridge);
    installed = taken.installed;
    env.vms.pool.refillSoon(env.options.memoryLimitBytes, setup);
  } catch (error) {
    logRecord("host_error", { where: "exec.vm_start", error });
    // Fail closed: an engaged run never falls back to direct tool exposure.
    bridge.close();
    return rejected("QuickJS-WASI runtime is unavailable: the VM could not start", "runtime_unavailable", env);
  }
  const cell: LiveCell = { vm, bridge, budget, guard };
  try {
    if (!installed) {
      setup.install(vm);
      env.vms.pool.installed(setup, vm);
    }
    vm.start(source);
  } catch (error) {
    return { kind: "result", result: endCell(cell, error, env) };
  }
  return driveCell(cell, deadline, env);
}

/**
 * The VM setup of a cell's tools: one per tools object, which the turn layer shares between turns
 * of the same content, so the pool's image of it serves them all (see src/runtime/setup-images.ts).
 */
const setups = new WeakMap<CellEnvironment["tools"], VmSetup>();

function setupOf(tools: CellEnvironment["tools"]): VmSetup {
  let setup = setups.get(tools);
  if (!setup) {
    setup =
      "toolSearch" in tools
        ? { install: (vm) => vm.installToolSearch() }
        : { install: (vm) => vm.installTools(tools.metadataJson, tools.namesJson, tools.mcpJson, tools.namespacesJson) };
    setups.set(tools, setup);
  }
  return setup;
}

/**
 * Run a cell until it settles, fails, asks to yield, or its deadline passes with host
 * work outstanding. Bridge results that arrive within the deadline are delivered in the
 * same call, so a cell awaiting several fast tools completes in one `exec`/`wait`.
 */
export async function driveCell(cell: LiveCell, deadline: number, env: CellEnvironment): Promise<CellEnd> {
  // `cell.vm` is read afresh each time: a cell that sleeps through a decision gets a new VM.
  const { bridge } = cell;
  // Approval waits pause the budget: the deadline (and the guest's own) moves by the time paused.
  let paused = env.pause?.pausedMs() ?? 0;
  const catchUp = () => {
    const pausedNow = env.pause?.pausedMs() ?? 0;
    if (pausedNow > paused) {
      deadline += pausedNow - paused;
      cell.guard.extend(pausedNow - paused);
      paused = pausedNow;
    }
  };
  // When the loop first saw the current pause, and whether this cell can sleep through one (cell-sleep.ts).
  let pauseSeen: number | undefined;
  let maySleep = true;
  try {
    for (;;) {
      catchUp();
      if (!env.pause?.active) pauseSeen = undefined;
      // A budget spent by host-side work (charged bridge bytes) ends the cell as a timeout.
      if (cell.guard.reason) throw new GuestFaultError({ kind: "interrupted" });
      if (env.signal.aborted) {
        cell.guard.trip();
        return { kind: "result", result: closeWith(cell, failed("the code mode run was aborted", "aborted", env.telemetry())) };
      }
      bridge.dispatch();
      const ready = bridge.takeReady();
      if (ready.length > 0) {
        // Each delivery is host work done for the guest: a program that keeps re-arming
        // zero-delay timers spends its budget even where the clock is frozen.
        cell.guard.chargeSettles(ready.length);
        for (const { id, settlement } of ready) {
          cell.vm.settle(id, settlement.ok, settlement.ok ? settlement.text : settlement.message);
        }
        continue;
      }
      // A pending operator decision keeps the original exec/wait in flight: no yield or park before it.
      if (bridge.yieldRequested && !env.pause?.active) return { kind: "suspended", reason: "yield", cell };
      const vm = cell.vm;
      const status = vm.status();
      if (status.state === "failed" || status.state === "unserializable") {
        const message = vm.errorMessage() ?? "the program failed";
        const code = status.syntax ? "invalid_input" : status.state === "unserializable" ? "output_limit_exceeded" : undefined;
        return { kind: "result", result: closeWith(cell, failedWithBudget(cell, message, code, env)) };
      }
      if (status.state === "completed" && bridge.inflightCount === 0) {
        if (status.failure) {
          return { kind: "result", result: closeWith(cell, failedWithBudget(cell, vm.errorMessage() ?? "unhandled rejection", undefined, env)) };
        }
        const valueJson = vm.valueJson();
        if (valueJson !== undefined && jsonTooDeep(valueJson)) {
          return {
            kind: "result",
            result: closeWith(
              cell,
              failedWithBudget(cell, `return value is nested deeper than ${MAX_JSON_DEPTH} levels`, "output_limit_exceeded", env),
            ),
          };
        }
        const projected = cell.budget.completed(valueJson);
        const result: CodeModeResult = {
          status: "completed",
          value: projected.value,
          ...(projected.output ? { output: projected.output } : {}),
          telemetry: env.telemetry(),
        };
        return { kind: "result", result: closeWith(cell, result) };
      }
      if (bridge.inflightCount === 0 && !status.failure) {
        return {
          kind: "result",
          result: closeWith(
            cell,
            failedWithBudget(cell, "the program awaits a promise that nothing will settle (no tool call or timer is pending)", undefined, env),
          ),
        };
      }
      // When to park: as soon as only the caller can move the program on (client results),
      // or at the deadline while host tools still run. A cell's own timers never park it:
      // they run inside its deadline (they keep their due times across a park for other reasons).
      // A client call parks at once even while host tools run: the caller must see it now (the
      // host calls keep running while parked, and their results are stored for the next wait).
      const hostCalls = bridge.hostCallsInFlight;
      // An operator decision (or a policy hook) is pending: the original exec/wait stays in flight (it
      // neither parks nor times out); the approval's own timeout and the cell's pause cap bound the wait.
      if (env.pause?.active) {
        const now = env.clock.now();
        pauseSeen ??= now;
        if (maySleep && shouldSleep(cell, now - pauseSeen, now)) {
          // A decision takes a while: give the VM's memory back until it comes.
          const slept = await putToSleep(cell, env);
          if (slept.kind === "awake") {
            if (slept.always) maySleep = false;
            continue;
          }
          await untilDecided(env);
          // Cancelled while asleep: the top of the loop ends the cell as aborted (no VM to restore).
          if (env.signal.aborted) continue;
          catchUp();
          const woke = await wake(cell, slept.sleeping, deadline, env);
          if (!woke.ok) return { kind: "result", result: closeWith(cell, failedWithBudget(cell, woke.message, woke.code, env)) };
          continue;
        }
        // Wake at the (moving) deadline at the latest: a short admission (hooks) must not delay a park;
        // and once the pause has lasted long enough to sleep through (a timer due soon wakes it itself).
        const sleepAt = pauseSeen + SLEEP_AFTER_MS;
        const sleepIn = maySleep && now < sleepAt ? sleepAt - now : APPROVAL_POLL_MS;
        await bridge.waitForWork(Math.min(APPROVAL_POLL_MS, sleepIn, Math.max(1, deadline - now)), env.signal);
        continue;
      }
      if (bridge.clientCallsInFlight > 0) return { kind: "suspended", reason: "pending_tools", cell };
      const remaining = deadline - env.clock.now();
      if (hostCalls === 0) {
        const due = bridge.nextTimerDue();
        if (remaining <= 0 || (due !== undefined && due > deadline)) {
          return {
            kind: "result",
            result: closeWith(cell, failedWithBudget(cell, timerPastDeadline(env.options.timeoutMs, env.label), "timeout", env)),
          };
        }
      } else if (remaining <= 0) return { kind: "suspended", reason: "pending_tools", cell };
      await bridge.waitForWork(remaining, env.signal);
    }
  } catch (error) {
    return { kind: "result", result: endCell(cell, error, env) };
  }
}
