/**
 * Report, section 2: QuickJS-WASI VM costs inside workerd, raw engine against GuestVm. Pure.
 */
import type { VmFigures } from "./measure-vm.ts";
import { factor, msSpread, table, timingCells } from "./report-format.ts";
import type { Summary } from "./stats.ts";

export function reportVm(f: VmFigures): string[] {
  const { raw, rawLimits, guest, reuse } = f.phases;
  const p = f.plan;
  const L: string[] = [];
  L.push("## 2. QuickJS-WASI VM inside workerd", "");
  L.push(
    "A bench-only worker (bench/bench-worker.ts, bench/wrangler.bench.toml; not the production worker) with the engine imported as",
    '`import quickjsModule from "quickjs-wasi/quickjs.wasm"`. Its four routes (raw engine, engine with GuestVm\'s options, GuestVm, and the',
    "pool's cycle: a cell in a VM, then that VM reset to the pristine image in place for the next cell, as VmPool does, in batches 5× larger) are",
    `called in ${p.rounds} interleaved rounds (order reversing every round); each call runs a warm-up, then ${f.batchesPerRound} batches of ${f.batchSize} iterations.`,
    `workerd's \`performance.now()\` has a ${f.clock.minStepMs ?? "?"} ms resolution here (coarser than one VM), so phases are timed per batch (K creates, then K`,
    "evals, then K disposes, divided by K) and the create+eval+dispose total is timed as K complete iterations one after the other (one",
    "VM alive at a time, as a request runs). Times pool every batch of every round; ratios are per round (a route's median over raw's",
    "median in the same round), given as the median across rounds with the IQR. Local workerd lets the clock advance during synchronous",
    "code; **production Workers freeze `performance.now()`/`Date.now()` between I/O, so these in-isolate timings can only be taken",
    "locally.** `dispose` only drops the instance; its memory is reclaimed by V8's GC later, inside whatever runs next.",
    "",
  );
  const row = (name: string, s: Summary, vs: string): string[] => [name, ...timingCells(s), vs];
  L.push(
    ...table(
      ["measure", "median (ms)", "IQR (ms)", "p90 (ms)", "min (ms)", "max (ms)", "ratio vs raw (per round)"],
      [
        row("**baseline** raw: `QuickJS.create({ wasm })`", raw.create, "1×"),
        row('**baseline** raw: `evalCode("1+2")` + read + dispose handle', raw.eval, "1×"),
        row("raw: `vm.dispose()`", raw.dispose, "—"),
        row("**baseline** raw: create + eval + dispose, sequential", raw.sequentialTotal, "1×"),
        row(
          "`QuickJS.create` with GuestVm's options (memory limit, stack limit, interrupt handler)",
          rawLimits.create,
          factor(f.ratios.limitsCreate),
        ),
        row("`GuestVm.create` (options + host callbacks + prelude)", guest.createWithPrelude, factor(f.ratios.guestCreate)),
        row('GuestVm: `installTools("[]")` + `start("return 1 + 2")` + status + value', guest.run, factor(f.ratios.guestRun)),
        row("GuestVm: `dispose()`", guest.dispose, "—"),
        row("GuestVm: create + prelude + run + dispose, sequential", guest.sequentialTotal, factor(f.ratios.guestTotal)),
        row("pool VM: bind + the same run + `dispose()` (the cell)", reuse.run, "—"),
        row("pool VM: `GuestVm.reuse`, its instance reset to the pristine image in place (what replaces create + prelude)", reuse.reset, "—"),
      ],
    ),
    "",
    `Per-round medians of the sequential totals (the figures the goals judge): raw ${msSpread(f.rawTotalRounds)}, GuestVm ${msSpread(f.guestTotalRounds)}.`,
    `Prelude + host callbacks (GuestVm.create − QuickJS.create with the same options, per round): ${msSpread(f.preludeCost)}.`,
    "",
  );
  return L;
}
