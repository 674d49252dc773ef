/**
 * Pre-execution check for shell commands sent as code-mode cells (seed 002, `exec` rules). It gives
 * the model actionable `invalid_input` guidance before a cell runs; it is a first line of defence
 * only: the real boundary is the QuickJS-WASI guest, which has no subprocess access at all.
 */

import { analyzeCell } from "./cell-structure";
import { SHELL_COMMANDS } from "./shell-command-names";
import { SOURCE_CHECK_OK, type SourceCheck } from "./source-check-result";

/** Words that may legitimately follow an identifier in JavaScript/TypeScript (`ls in x`, `x as T`). */
const BINARY_WORDS = new Set(["in", "instanceof", "as", "satisfies", "of"]);

/** Shell control operators that may follow a command word, longest first. */
const SHELL_OPERATORS = ["&&", "||", ">>", "2>&1", "2>", "&>", "|", ">", "<", ";", "&"];

const COMMAND_WORD = /^(?:[A-Za-z_][A-Za-z0-9_+-]*|\.{1,2}\/[^\s;|&<>]+|~\/[^\s;|&<>]+)/;
const ENV_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=(?:"[^"]*"|'[^']*'|[^\s"';|&]*)\s+/;
/** The next line carries on the expression (`find\n  .call(x)`, `time -offset\n  > limit`). */
const CONTINUATION = /^[.([?:=+\-*/%&|^<>,!`]/;
/** A line only JavaScript writes. */
const JAVASCRIPT_LINE = /^(?:return|const|let|var|function|class|await|throw|try|interface|type|enum)\b|^(?:if|for|while|switch)\s*\(|=>|[;{]\s*$/;

/**
 * Only this much of the first line is examined, and at most this many `;`/`|`/`&&` segments:
 * a shell command line is short, and a hostile cell must not make the check expensive.
 */
const MAX_LINE_CHARS = 1024;
const MAX_SEGMENTS = 64;
/** Lines after the first that are read to decide an ambiguous first line. */
const LOOKAHEAD_LINES = 5;

/** The editor lines of a source, read on demand (a megabyte cell is never split whole). */
class LineReader {
  private pos = 0;
  constructor(private readonly source: string) {}

  next(): string | undefined {
    const s = this.source;
    if (this.pos > s.length) return undefined;
    let end = this.pos;
    while (end < s.length) {
      const c = s.charCodeAt(end);
      if (c === 10 || c === 13) break;
      end++;
    }
    const line = s.slice(this.pos, end);
    this.pos = end + (s.charCodeAt(end) === 13 && s.charCodeAt(end + 1) === 10 ? 2 : 1);
    return line;
  }
}

/** What the rest of the cell says about an ambiguous first line (`ls -la` is valid JavaScript). */
type Surroundings = {
  /** The next meaningful line, if any. */
  nextLine: string | undefined;
  /** One of the next few lines is plainly JavaScript. */
  javascriptFollows: boolean;
  /** The cell declares this name itself (`const time = …`). */
  declares(name: string): boolean;
};

/**
 * Heuristic (documented because it errs towards *accepting* code):
 * only the first meaningful line matters (leading blank lines, `//` and `#` comment lines, a
 * `$ ` prompt and a ```sh code fence are skipped). It is a shell command when
 *   1. its first word is a known command name (`ls`, `git`, `npm`, ...) or a `./`/`../`/`~/`
 *      path, optionally after `VAR=value` assignments, and
 *   2. what follows does not have JavaScript's shape:
 *      - another word, a number or a quoted string (`git status`, `sleep 5`, `echo "hi"`): two
 *        operands side by side never parse as JavaScript (`ls in x`, `x as T` excepted);
 *      - a long flag (`--force`), a path (`/tmp`, `./src`, `~`, `.`, `..`) or a glob (`*.ts`);
 *      - a short flag followed by another operand (`rm -rf dir`, `git log -n 5`);
 *      - a shell operator (`|`, `&&`, `>`, `;` ...) followed by another shell command or a file
 *        name (`ls | grep x`, `ls > out.txt`);
 *      - nothing (`ls`, `pwd;`) or a short flag alone (`ls -la`): these also parse as JavaScript
 *        (`ls - la`), so they are a shell command only when the rest of the cell does not say
 *        otherwise: the next line does not continue the expression, none of the next few lines
 *        is plainly JavaScript, and the cell does not declare the words itself
 *        (`time -offset` with `const time = …` is a subtraction).
 * Anything else (`ls = 1`, `git.status`, `ls(x)`, `ls[0]`, `cat - 1`, `echo \`x\``) is JavaScript.
 *
 * Bounded work: lines are read on demand, the first line is examined up to MAX_LINE_CHARS and
 * MAX_SEGMENTS segments without recursion, and the cell's declarations are only analysed for an
 * ambiguous line (`declared` lets the caller share an analysis it already has).
 */
export function checkShellCommand(source: string, declared?: ReadonlySet<string>): SourceCheck {
  const lines = new LineReader(source);
  let first: string | undefined;
  // Skip blank lines, comments and a code fence.
  for (let line = lines.next(); line !== undefined; line = lines.next()) {
    const t = line.trim();
    if (t === "" || t.startsWith("//")) continue;
    if (t.startsWith("#") && !t.startsWith("#!")) continue; // shell comment (invalid JS at line start)
    if (isFence(t)) continue;
    first = t.slice(0, MAX_LINE_CHARS);
    break;
  }
  if (first === undefined) return SOURCE_CHECK_OK;

  if (/^#!\s*\/(usr\/)?(bin\/)?(env\s+)?(ba|z|fi)?sh\b/.test(first)) return shellRejection(first);
  // A copied terminal prompt: `$ ls -la` (`$ ls` is two identifiers: never JavaScript).
  const prompt = /^\$\s+(.*)$/.exec(first);
  if (prompt) first = prompt[1]!;

  let surroundings: Surroundings | undefined;
  const around = (): Surroundings => (surroundings ??= readSurroundings(source, lines, declared));
  if (!looksLikeShellLine(first, around)) return SOURCE_CHECK_OK;
  return shellRejection(first);
}

function readSurroundings(source: string, lines: LineReader, declared: ReadonlySet<string> | undefined): Surroundings {
  let nextLine: string | undefined;
  let javascriptFollows = false;
  for (let read = 0, line = lines.next(); line !== undefined && read < LOOKAHEAD_LINES; line = lines.next()) {
    const t = line.trim().slice(0, MAX_LINE_CHARS);
    if (t === "" || t.startsWith("//") || isFence(t)) continue;
    nextLine ??= t;
    if (JAVASCRIPT_LINE.test(t)) javascriptFollows = true;
    read++;
  }
  let names = declared;
  return {
    nextLine,
    javascriptFollows,
    declares: (name) => (names ??= analyzeCell(source).declared).has(name),
  };
}

/** A Markdown code fence around a command (```` ```sh ````). */
function isFence(line: string): boolean {
  return line.length < 32 && /^(```|~~~)\s*(sh|bash|shell|zsh|console|terminal|shellscript)?\s*$/i.test(line);
}

type Verdict = boolean | { next: string };

/** Decides the first line segment by segment (`a; b | c && d`), without recursion. */
function looksLikeShellLine(line: string, around: () => Surroundings): boolean {
  let text = line;
  for (let segment = 0; segment < MAX_SEGMENTS; segment++) {
    const verdict = segmentVerdict(text, around);
    if (typeof verdict === "boolean") return verdict;
    text = verdict.next;
  }
  return true; // dozens of chained segments that each looked like a shell command
}

function segmentVerdict(line: string, around: () => Surroundings): Verdict {
  // `NODE_ENV=test npm test`: leading variable assignments only count before a command word.
  let text = line;
  let sawAssignment = false;
  for (let m = ENV_ASSIGNMENT.exec(text); m; m = ENV_ASSIGNMENT.exec(text)) {
    text = text.slice(m[0].length);
    sawAssignment = true;
  }
  const wordMatch = COMMAND_WORD.exec(text);
  if (!wordMatch) return false;
  const word = wordMatch[0];
  const isPath = /^[.~]/.test(word);
  if (!isPath && !SHELL_COMMANDS.has(word)) return false;
  const after = text.slice(word.length);
  // `export const x = 1` is module syntax (checkModuleAccess explains it), not `export FOO=bar`.
  if (
    word === "export" &&
    /^\s+(const|let|var|function|class|default|async|type|interface|enum|declare|abstract|namespace)\b|^\s*[{*=]/.test(after)
  ) {
    return false;
  }
  if (isPath) return after === "" || /^\s/.test(after) || /^[;|&<>]/.test(after);

  // Nothing after the command word: `ls`, `pwd`, `ls;`.
  if (/^\s*;?\s*$/.test(after)) {
    if (sawAssignment) return true;
    return !javascriptAround(word, undefined, /^\s*;/.test(after), around);
  }
  // `ls;pwd`, `cd src; make` go on with the next segment; `ls.x`, `ls(`, `ls=`, `ls[` are JavaScript.
  if (!/^\s/.test(after)) {
    if (after.startsWith(";")) return { next: after.slice(1).trim() };
    return false;
  }
  return argumentsVerdict(word, after.trimStart(), around);
}

/** The ambiguous forms are JavaScript when the rest of the cell says so (see checkShellCommand). */
function javascriptAround(word: string, flag: string | undefined, terminated: boolean, around: () => Surroundings): boolean {
  const s = around();
  if (!terminated && s.nextLine !== undefined && CONTINUATION.test(s.nextLine)) return true;
  if (s.javascriptFollows) return true;
  return s.declares(word) || (flag !== undefined && s.declares(flag));
}

function argumentsVerdict(word: string, argsIn: string, around: () => Surroundings): Verdict {
  let args = argsIn;
  let flag: string | undefined;
  // Short flags: `ls -la`, `rm -rf dir`, `git log -n 5`, `time -p make`.
  for (let m = /^-([A-Za-z][\w-]*)/.exec(args); m; m = /^-([A-Za-z][\w-]*)/.exec(args)) {
    flag ??= m[1]!;
    const rest = args.slice(m[0].length);
    const more = rest.trimStart();
    // `ls -la` or `time -offset` alone: a subtraction in JavaScript.
    if (more === "" || more === ";") return !javascriptAround(word, flag, more === ";", around);
    if (more.length === rest.length) {
      // Directly followed by something: `ls -la;pwd` goes on; `time -offset.x`, `-offset)` are JavaScript.
      return more.startsWith(";") ? { next: more.slice(1).trim() } : false;
    }
    args = more;
  }
  const c = args[0]!;
  // Long flags: `--force` (`ls --force` never parses as JavaScript).
  if (/^--[A-Za-z]/.test(args)) return true;
  // `head -5 file`: a negative number followed by another operand.
  if (/^-\d+\s+[\w./~"'-]/.test(args)) return true;
  // A second operand: word, number, quoted string. `ls in x`, `x as T` remain JavaScript.
  if (/^[A-Za-z0-9_$@]/.test(c)) {
    const bare = /^[A-Za-z_$][\w$]*/.exec(args)?.[0];
    const next = /^[^\s;|&<>]+/.exec(args)?.[0];
    if (bare !== undefined && BINARY_WORDS.has(bare) && bare === next) return false;
    return true;
  }
  if (c === '"' || c === "'") return true;
  // Paths and globs: `/tmp`, `./src`, `..`, `.`, `~`, `~/x`, `*.ts`. JavaScript would write a
  // division as `ls / x`, and never `cd ..` or `ls *.ts`.
  if (c === "/" && /^\/(?:[A-Za-z_.~-]|$)/.test(args)) return true;
  if (c === "." && /^\.{1,2}(?:\/|\s|$)/.test(args)) return true;
  if (c === "~" || c === "{" || c === "\\" || c === "#") return true;
  if (/^\*\.[A-Za-z]/.test(args)) return true;
  // Shell operators followed by another command or a file name: `ls | grep x`, `ls > out.txt`.
  const op = SHELL_OPERATORS.find((o) => args.startsWith(o));
  if (op !== undefined) {
    const rhs = args.slice(op.length).trim();
    if (rhs === "") return op === ";" || op === "&";
    if (op === ">" || op === ">>" || op === "<" || op === "2>" || op === "&>") {
      if (/^[\w./~-]+\.[A-Za-z0-9]+$/.test(rhs) || /^(\/|~\/|\.\.?\/)[^\s]*$/.test(rhs) || rhs === "&1") return true;
    }
    return { next: rhs };
  }
  return false;
}

function shellRejection(line: string): SourceCheck {
  const shown = line.length > 80 ? `${line.slice(0, 77)}...` : line;
  return {
    ok: false,
    message:
      `This looks like a shell command (\`${shown}\`), but exec runs JavaScript, not a shell. ` +
      "`code` is a JavaScript or TypeScript function body, and `command` is only an alias for `code`. " +
      "Call the async tool globals instead, or find one with the catalog, e.g. " +
      '`const [tool] = await catalog.search("run a shell command"); return await tool({ /* input */ });` ' +
      "(use `await tool.describe()` for its input schema). Plain computation needs no tool: `return 1 + 2;`.",
  };
}
