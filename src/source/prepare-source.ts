/**
 * From an `exec` cell's code to the JavaScript body the VM runs: the shell-command and
 * module-access checks, then (TypeScript cells) the compiler start and the transform, each paid
 * from the cell's budget (cell-budget.ts), then the QuickJS compile of the result charged by
 * size. Failures are data, never exceptions: `invalid_input` for the model to fix, `timeout`
 * naming the phase that did not fit, `runtime_unavailable` when the compiler cannot load.
 * TypeScript takes the fast path (typescript-strip.ts) when it can, the compiler otherwise.
 */
import type { CodeModeLanguage } from "../code-mode";
import {
  COSTS,
  describeSource,
  estimateChecksMs,
  estimateGuestCompileMs,
  estimateTranspileMs,
  type CellBudget,
  type PlannedPhase,
} from "./cell-budget";
import { checkSource } from "./source-checks";
import { logRecord } from "../observability";

export type PreparedSource = { ok: true; code: string } | { ok: false; code: "invalid_input" | "timeout" | "runtime_unavailable"; message: string };

export async function prepareSource(code: string, language: CodeModeLanguage, budget: CellBudget): Promise<PreparedSource> {
  const typescript = language === "typescript";
  const detail = describeSource(code.length, typescript ? "TypeScript" : "JavaScript");
  try {
    // Loaded lazily: JavaScript cells never evaluate the TypeScript modules.
    const ts = typescript ? await import("./typescript-transform") : undefined;
    const checks: PlannedPhase = { phase: "source checks", estimateMs: estimateChecksMs(code.length), detail: `checking ${detail}` };
    const transform: PlannedPhase = { phase: "TypeScript transform", estimateMs: estimateTranspileMs(code.length), detail: `transpiling ${detail}` };
    const compile: PlannedPhase = {
      phase: "guest compile",
      estimateMs: estimateGuestCompileMs(code.length),
      detail: `compiling ${detail} in the VM`,
    };
    // A TypeScript cell first tries the fast path (typescript-strip.ts), which starts no compiler;
    // the cell is charged what it actually loads, and a compiler start only when it needs one.
    const compilerFirst = ts !== undefined && ts.routesToCompiler(code);
    const fast: PlannedPhase | undefined =
      ts && !compilerFirst
        ? { ...transform, estimateMs: transform.estimateMs + (ts.isTypeScriptStripperLoaded() ? 0 : COSTS.stripperStartMs) }
        : undefined;
    const refused = budget.admitPlan([checks, ...(fast ? [fast] : []), ...(compilerFirst ? compilerPlan(ts, transform) : []), compile]);
    if (refused) return { ok: false, code: "timeout", message: refused };

    const checked = await budget.run(checks.phase, checks.estimateMs, checks.detail, () => checkSource(code));
    if (!checked.ok) return { ok: false, code: "timeout", message: checked.message };
    if (!checked.value.ok) return { ok: false, code: "invalid_input", message: checked.value.message };

    let body = code;
    if (ts) {
      let stripped: string | undefined;
      if (fast) {
        const out = await budget.run(fast.phase, fast.estimateMs, fast.detail, () => ts.stripTypeScript(code));
        if (!out.ok) return { ok: false, code: "timeout", message: out.message };
        stripped = out.value;
      }
      if (stripped === undefined) {
        const compiled = await compileWithCompiler(ts, code, budget, compilerPlan(ts, transform), compile);
        if (!compiled.ok) return compiled;
        stripped = compiled.code;
      }
      body = stripped;
    }
    // QuickJS compiles the body inside the VM, in one call no interrupt reaches: charged now.
    const compiling = budget.charge(compile.phase, compile.estimateMs, compile.detail);
    if (compiling) return { ok: false, code: "timeout", message: compiling };
    return { ok: true, code: body };
  } catch (error) {
    // A check that throws (a bug, or input nobody anticipated) fails the cell as data: never an
    // HTTP 500, and never a cell that runs unchecked.
    logRecord("host_error", { where: "source.check", error });
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return {
      ok: false,
      code: "invalid_input",
      message: `code mode could not check this cell's source (${reason.slice(0, 200)}); simplify the code and try again.`,
    };
  }
}

type TypeScriptModule = typeof import("./typescript-transform");

/** The compiler's phases for this cell: its start (once per isolate) and the transform. */
function compilerPlan(ts: TypeScriptModule, transform: PlannedPhase): PlannedPhase[] {
  const start: PlannedPhase = {
    phase: "TypeScript compiler start",
    estimateMs: COSTS.compilerStartMs,
    detail: "starting the compiler (once per isolate)",
  };
  return ts.isTypeScriptCompilerLoaded() ? [transform] : [start, transform];
}

/** The compiler path: its phases admitted together (with the guest compile after them), then run. */
async function compileWithCompiler(
  ts: TypeScriptModule,
  code: string,
  budget: CellBudget,
  plan: PlannedPhase[],
  compile: PlannedPhase,
): Promise<PreparedSource> {
  const refused = budget.admitPlan([...plan, compile]);
  if (refused) return { ok: false, code: "timeout", message: refused };
  for (const step of plan) {
    if (step.phase === "TypeScript compiler start") {
      let failure: string | undefined;
      const started = await budget.run(step.phase, step.estimateMs, step.detail, () =>
        ts.loadTypeScriptCompiler().then(
          () => undefined,
          (error: unknown) => {
            failure = error instanceof Error ? error.message : String(error);
          },
        ),
      );
      if (failure !== undefined) return { ok: false, code: "runtime_unavailable", message: `TypeScript compiler unavailable: ${failure}` };
      if (!started.ok) return { ok: false, code: "timeout", message: started.message };
    } else {
      const out = await budget.run(step.phase, step.estimateMs, step.detail, () => ts.transpileTypeScript(code));
      if (!out.ok) return { ok: false, code: "timeout", message: out.message };
      // Diagnostics are the model's to fix; a compiler that cannot load is the runtime's fault.
      if (!out.value.ok) return { ok: false, code: out.value.unavailable ? "runtime_unavailable" : "invalid_input", message: out.value.message };
      return { ok: true, code: out.value.code };
    }
  }
  return { ok: false, code: "runtime_unavailable", message: "TypeScript compiler unavailable: no transform was planned" };
}
