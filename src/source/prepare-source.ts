/**
 * From an `exec` cell's code to the JavaScript body the VM runs: the shell-command and
 * module-access checks, then (TypeScript cells) the compiler start and the transform, each paid
 * from the cell's budget (cell-budget.ts), then the QuickJS compile of the result charged by
 * size. Failures are data, never exceptions: `invalid_input` for the model to fix, `timeout`
 * naming the phase that did not fit, `runtime_unavailable` when the compiler cannot load.
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
    // Loaded lazily: JavaScript cells never evaluate the compiler module.
    const ts = typescript ? await import("./typescript-transform") : undefined;
    const plan: PlannedPhase[] = [{ phase: "source checks", estimateMs: estimateChecksMs(code.length), detail: `checking ${detail}` }];
    if (ts && !ts.isTypeScriptCompilerLoaded()) {
      plan.push({ phase: "TypeScript compiler start", estimateMs: COSTS.compilerStartMs, detail: "starting the compiler (once per isolate)" });
    }
    if (ts) plan.push({ phase: "TypeScript transform", estimateMs: estimateTranspileMs(code.length), detail: `transpiling ${detail}` });
    plan.push({ phase: "guest compile", estimateMs: estimateGuestCompileMs(code.length), detail: `compiling ${detail} in the VM` });
    const refused = budget.admitPlan(plan);
    if (refused) return { ok: false, code: "timeout", message: refused };

    const [checks, ...rest] = plan;
    const checked = await budget.run(checks!.phase, checks!.estimateMs, checks!.detail, () => checkSource(code));
    if (!checked.ok) return { ok: false, code: "timeout", message: checked.message };
    if (!checked.value.ok) return { ok: false, code: "invalid_input", message: checked.value.message };

    let body = code;
    for (const step of rest) {
      if (step.phase === "TypeScript compiler start") {
        let failure: string | undefined;
        const started = await budget.run(step.phase, step.estimateMs, step.detail, () =>
          ts!.loadTypeScriptCompiler().then(
            () => undefined,
            (error: unknown) => {
              failure = error instanceof Error ? error.message : String(error);
            },
          ),
        );
        if (failure !== undefined) return { ok: false, code: "runtime_unavailable", message: `TypeScript compiler unavailable: ${failure}` };
        if (!started.ok) return { ok: false, code: "timeout", message: started.message };
      } else if (step.phase === "TypeScript transform") {
        const out = await budget.run(step.phase, step.estimateMs, step.detail, () => ts!.transpileTypeScript(code));
        if (!out.ok) return { ok: false, code: "timeout", message: out.message };
        // Diagnostics are the model's to fix; a compiler that cannot load is the runtime's fault.
        if (!out.value.ok) return { ok: false, code: out.value.unavailable ? "runtime_unavailable" : "invalid_input", message: out.value.message };
        body = out.value.code;
      } else {
        // QuickJS compiles the body inside the VM, in one call no interrupt reaches: charged now.
        const compile = budget.charge(step.phase, step.estimateMs, step.detail);
        if (compile) return { ok: false, code: "timeout", message: compile };
      }
    }
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
