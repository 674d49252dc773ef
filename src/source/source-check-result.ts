/**
 * The outcome of a pre-execution source check (`checkModuleAccess`, `checkShellCommand`): either
 * the source may run, or a message for the model saying why not and what to do instead.
 */
export type SourceCheck = { ok: true } | { ok: false; message: string };

/** The shared "nothing found" result. */
export const SOURCE_CHECK_OK: SourceCheck = { ok: true };
