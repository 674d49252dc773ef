/**
 * Pre-execution source checks for code-mode cells (seed 002, `exec` rules).
 *
 * These checks give the model actionable `invalid_input` guidance before a cell runs. They are a
 * first line of defence only: the real boundary is the QuickJS-WASI guest, which has no module
 * loader, filesystem, network or subprocess access at all.
 *
 * Both functions are pure and synchronous; neither loads the TypeScript compiler.
 */

export type SourceCheck = { ok: true } | { ok: false; message: string };

const OK: SourceCheck = { ok: true };

// ---------------------------------------------------------------------------------------------
// A small JavaScript tokenizer. It only needs to know what is code and what is not: strings,
// template literal text, comments and regular expression literals are skipped, so the word
// `import` inside them never looks like module syntax. Where JavaScript's grammar is ambiguous
// (is `/` a division or a regex?) it uses the usual previous-token heuristic, refined with brace
// and parenthesis context so `}` and `)` are classified correctly in the common cases.
// ---------------------------------------------------------------------------------------------

type TokenType = "name" | "punct" | "string" | "template" | "regex" | "number" | "private";

type Token = {
  type: TokenType;
  /** Identifier value with unicode escapes decoded; punctuator text; literal contents otherwise. */
  value: string;
  /** 1-based line of the token start. */
  line: number;
};

/** Keywords after which an expression (so a regex literal, or an object literal) may start. */
const EXPRESSION_KEYWORDS = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
  "extends",
]);

const CONTROL_KEYWORDS = new Set(["if", "while", "for", "with"]);

// Longest first.
const PUNCTUATORS = [
  ">>>=",
  "...",
  "===",
  "!==",
  "**=",
  "<<=",
  ">>=",
  ">>>",
  "&&=",
  "||=",
  "??=",
  "=>",
  "==",
  "!=",
  "<=",
  ">=",
  "&&",
  "||",
  "??",
  "?.",
  "++",
  "--",
  "+=",
  "-=",
  "*=",
  "%=",
  "&=",
  "|=",
  "^=",
  "**",
  "<<",
  ">>",
];

const ID_START = /[\p{ID_Start}$_]/u;
const ID_CONTINUE = /[\p{ID_Continue}$\u200c\u200d]/u;
const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;
const WHITESPACE = /[\t\v\f \u00a0\ufeff\p{Zs}]/u;
const NUMBER =
  /(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)n?/y;

type BraceKind = "block" | "expr" | "template";

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const braces: BraceKind[] = [];
  const parens: boolean[] = []; // true when the paren is an if/while/for/with head
  let pos = 0;
  let line = 1;
  // Whether a `/` at this point starts a regex (true) or is a division operator (false).
  let regexAllowed = true;

  const n = source.length;
  const push = (type: TokenType, value: string, startLine: number) => {
    tokens.push({ type, value, line: startLine });
  };
  const last = () => tokens[tokens.length - 1];
  const isPropertyName = (index: number) => {
    const before = tokens[index - 1];
    return before !== undefined && before.type === "punct" && (before.value === "." || before.value === "?.");
  };

  const countLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const c = source[i]!;
      if (c === "\n" || c === "\u2028" || c === "\u2029" || (c === "\r" && source[i + 1] !== "\n")) line++;
    }
  };

  /** Scan template literal text starting after a backtick or a closing `}` of a substitution. */
  const scanTemplate = () => {
    const startLine = line;
    const start = pos;
    while (pos < n) {
      const c = source[pos]!;
      if (c === "\\") {
        pos += 2;
      } else if (c === "`") {
        countLines(start, pos);
        pos++;
        push("template", source.slice(start, pos - 1), startLine);
        regexAllowed = false;
        return;
      } else if (c === "$" && source[pos + 1] === "{") {
        countLines(start, pos);
        pos += 2;
        push("template", source.slice(start, pos - 2), startLine);
        braces.push("template");
        regexAllowed = true;
        return;
      } else {
        pos++;
      }
    }
    // Unterminated: the rest is template text.
    pos = Math.min(pos, n);
    countLines(start, pos);
    push("template", source.slice(start, pos), startLine);
  };

  /** Does a `{` at this point open an expression (object literal) rather than a block? */
  const braceOpensExpression = () => {
    const prev = last();
    if (!prev) return false;
    if (prev.type === "punct") {
      return !(prev.value === ")" || prev.value === "]" || prev.value === "}" || prev.value === ";" || prev.value === "=>");
    }
    if (prev.type === "name") return EXPRESSION_KEYWORDS.has(prev.value) && !isPropertyName(tokens.length - 1);
    return false;
  };

  if (source.startsWith("#!")) {
    while (pos < n && !LINE_TERMINATOR.test(source[pos]!)) pos++;
  }

  while (pos < n) {
    const c = source[pos]!;

    if (LINE_TERMINATOR.test(c)) {
      countLines(pos, pos + 1);
      pos++;
      continue;
    }
    if (WHITESPACE.test(c)) {
      pos++;
      continue;
    }

    // Comments.
    if (c === "/" && source[pos + 1] === "/") {
      while (pos < n && !LINE_TERMINATOR.test(source[pos]!)) pos++;
      continue;
    }
    if (c === "/" && source[pos + 1] === "*") {
      const end = source.indexOf("*/", pos + 2);
      const stop = end === -1 ? n : end + 2;
      countLines(pos, stop);
      pos = stop;
      continue;
    }

    // Strings.
    if (c === '"' || c === "'") {
      const startLine = line;
      const start = ++pos;
      while (pos < n && source[pos] !== c) {
        if (source[pos] === "\\") pos++;
        else if (source[pos] === "\n" || source[pos] === "\r") break; // unterminated
        pos++;
      }
      const value = source.slice(start, Math.min(pos, n));
      countLines(start, Math.min(pos, n));
      if (pos < n && source[pos] === c) pos++;
      push("string", value, startLine);
      regexAllowed = false;
      continue;
    }

    // Template literals.
    if (c === "`") {
      pos++;
      scanTemplate();
      continue;
    }

    // Regex literal or division.
    if (c === "/") {
      if (regexAllowed) {
        const startLine = line;
        const start = ++pos;
        let inClass = false;
        while (pos < n) {
          const r = source[pos]!;
          if (r === "\\") {
            pos += 2;
            continue;
          }
          if (LINE_TERMINATOR.test(r)) break; // unterminated; stop at the line end
          if (r === "[") inClass = true;
          else if (r === "]") inClass = false;
          else if (r === "/" && !inClass) break;
          pos++;
        }
        const body = source.slice(start, Math.min(pos, n));
        if (pos < n && source[pos] === "/") pos++;
        while (pos < n && ID_CONTINUE.test(source[pos]!)) pos++; // flags
        push("regex", body, startLine);
        regexAllowed = false;
        continue;
      }
      const op = source[pos + 1] === "=" ? "/=" : "/";
      pos += op.length;
      push("punct", op, line);
      regexAllowed = true;
      continue;
    }

    // Numbers (before punctuators so `.5` is a number).
    if (/\d/.test(c) || (c === "." && /\d/.test(source[pos + 1] ?? ""))) {
      NUMBER.lastIndex = pos;
      const m = NUMBER.exec(source);
      const text = m ? m[0] : c;
      pos += text.length;
      // Swallow any trailing identifier characters (e.g. invalid `1abc`) so they are not names.
      while (pos < n && ID_CONTINUE.test(source[pos]!)) pos++;
      push("number", text, line);
      regexAllowed = false;
      continue;
    }

    // Identifiers (with unicode escapes decoded) and private names.
    if (ID_START.test(c) || c === "\\" || (c === "#" && pos + 1 < n)) {
      const isPrivate = c === "#";
      if (isPrivate) pos++;
      let value = "";
      while (pos < n) {
        const ch = source[pos]!;
        if (ch === "\\" && source[pos + 1] === "u") {
          const braced = /^\\u\{([\da-fA-F]+)\}/.exec(source.slice(pos, pos + 12));
          const plain = /^\\u([\da-fA-F]{4})/.exec(source.slice(pos, pos + 6));
          const m = braced ?? plain;
          if (!m) {
            pos++;
            break;
          }
          const cp = Number.parseInt(m[1]!, 16);
          value += cp <= 0x10ffff ? String.fromCodePoint(cp) : "";
          pos += m[0].length;
          continue;
        }
        const cp = source.codePointAt(pos)!;
        const chr = String.fromCodePoint(cp);
        if (value === "" ? ID_START.test(chr) : ID_CONTINUE.test(chr)) {
          value += chr;
          pos += chr.length;
          continue;
        }
        break;
      }
      if (value === "" && !isPrivate) {
        // A lone backslash or similar: skip it.
        pos++;
        continue;
      }
      push(isPrivate ? "private" : "name", value, line);
      const index = tokens.length - 1;
      regexAllowed = !isPrivate && EXPRESSION_KEYWORDS.has(value) && !isPropertyName(index);
      continue;
    }

    // Punctuators.
    let op = PUNCTUATORS.find((p) => source.startsWith(p, pos)) ?? c;
    if (op === "?." && /\d/.test(source[pos + 2] ?? "")) op = "?"; // `a?.5:b`
    if (op === "{") {
      braces.push(braceOpensExpression() ? "expr" : "block");
      pos++;
      push("punct", "{", line);
      regexAllowed = true;
      continue;
    }
    if (op === "}") {
      const kind = braces.pop();
      pos++;
      if (kind === "template") {
        scanTemplate();
        continue;
      }
      push("punct", "}", line);
      regexAllowed = kind !== "expr";
      continue;
    }
    if (op === "(") {
      const prev = last();
      const index = tokens.length - 1;
      parens.push(prev !== undefined && prev.type === "name" && CONTROL_KEYWORDS.has(prev.value) && !isPropertyName(index));
      pos++;
      push("punct", "(", line);
      regexAllowed = true;
      continue;
    }
    if (op === ")") {
      const control = parens.pop() ?? false;
      pos++;
      push("punct", ")", line);
      regexAllowed = control;
      continue;
    }
    pos += op.length;
    push("punct", op, line);
    // After `]`, postfix `++`/`--`: an expression just ended. Everything else expects an operand.
    regexAllowed = !(op === "]" || op === "++" || op === "--");
  }

  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Module access
// ---------------------------------------------------------------------------------------------

const GLOBAL_OBJECTS = new Set(["globalThis", "global", "self", "window", "module"]);
const PROCESS_LOADERS = new Set(["mainModule", "binding", "_linkedBinding", "dlopen"]);

/** Index of the `)` matching the `(` at `open`, or -1. */
function matchingParen(tokens: Token[], open: number): number {
  let depth = 0;
  for (let j = open; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t.type !== "punct") continue;
    if (t.value === "(") depth++;
    else if (t.value === ")" && --depth === 0) return j;
  }
  return -1;
}

function moduleAccessMessage(what: string, line: number): string {
  return (
    `Module access is not available in code mode (found ${what} on line ${line}). ` +
    "The guest has no import, require or module loader, and no filesystem, network or packages. " +
    "Tools are already available as async globals: call them directly, e.g. " +
    '`const [tool] = await catalog.search("what you need"); return await tool({ /* input */ });` ' +
    "(use `await tool.describe()` for its full input schema), and write helper logic inline."
  );
}

/**
 * Rejects module syntax and module-loader patterns: import/export declarations, dynamic
 * `import()`, `import.meta`, `require(...)` / `require.resolve`, `module.exports`, `exports.x`,
 * `__non_webpack_require__`, `importScripts(...)`, `process.mainModule`, `createRequire`.
 * Strings, comments, template text and regex literals are never inspected.
 */
export function checkModuleAccess(source: string): SourceCheck {
  const tokens = tokenize(source);
  const at = (i: number): Token | undefined => tokens[i];
  const isPunct = (t: Token | undefined, value: string) => t !== undefined && t.type === "punct" && t.value === value;
  const isName = (t: Token | undefined, value?: string) =>
    t !== undefined && t.type === "name" && (value === undefined || t.value === value);
  const isDot = (t: Token | undefined) => isPunct(t, ".") || isPunct(t, "?.");

  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok.type !== "name") continue;
    const prev = at(i - 1);
    const next = at(i + 1);
    const next2 = at(i + 2);
    const property = isDot(prev);
    const objectKey = isPunct(next, ":") && !property;
    const fail = (what: string): SourceCheck => ({ ok: false, message: moduleAccessMessage(what, tok.line) });

    switch (tok.value) {
      case "import":
        if (property || objectKey) break;
        if (isPunct(next, "(")) {
          // A method named `import` (`get import() {`, `{ import() { ... } }`): the parameter
          // list is followed by a body on the same line, which a call expression never is.
          const close = matchingParen(tokens, i + 1);
          const after = close === -1 ? undefined : at(close + 1);
          if (isPunct(after, "{") && after!.line === tokens[close]!.line) break;
          return fail("dynamic `import(...)`");
        }
        if (isPunct(next, ".") && isName(next2, "meta")) return fail("`import.meta`");
        return fail("an `import` declaration");
      case "export":
        if (property || objectKey) break;
        return fail("an `export` declaration");
      case "require":
        if (objectKey) break;
        if (property) {
          // `globalThis.require(...)`, `module.require(...)`: loader lookups through a global.
          if (isName(at(i - 2)) && GLOBAL_OBJECTS.has(at(i - 2)!.value)) return fail("`require`");
          break;
        }
        if (isDot(next) && isName(next2)) return fail(`\`require.${next2!.value}\``);
        if (isPunct(next, "(")) return fail("`require(...)`");
        return fail("`require`");
      case "module":
        if (property || objectKey) break;
        if (isDot(next) && isName(next2) && (next2!.value === "exports" || next2!.value === "require")) {
          return fail(`\`module.${next2!.value}\``);
        }
        if (isPunct(next, "[") && at(i + 2)?.type === "string" && /^(exports|require)$/.test(at(i + 2)!.value)) {
          return fail("`module[...]` loader access");
        }
        break;
      case "exports":
        if (property || objectKey) break;
        if (isDot(next) || isPunct(next, "[") || isPunct(next, "=")) return fail("`exports`");
        break;
      case "__non_webpack_require__":
      case "__webpack_require__":
        if (objectKey || property) break;
        return fail(`\`${tok.value}\``);
      case "importScripts":
        if (objectKey) break;
        if (isPunct(next, "(")) return fail("`importScripts(...)`");
        break;
      case "process":
        if (property || objectKey) break;
        if (isDot(next) && isName(next2) && PROCESS_LOADERS.has(next2!.value)) {
          return fail(`\`process.${next2!.value}\``);
        }
        break;
      case "createRequire":
        return fail("`createRequire`");
    }
  }
  return OK;
}

// ---------------------------------------------------------------------------------------------
// Shell commands
// ---------------------------------------------------------------------------------------------

const SHELL_COMMANDS = new Set([
  // files and text
  "ls", "ll", "la", "cd", "pwd", "cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag",
  "find", "fd", "sed", "awk", "cut", "sort", "uniq", "wc", "tr", "tee", "xargs", "diff", "file", "stat", "du",
  "df", "tree", "touch", "mkdir", "rmdir", "rm", "mv", "cp", "ln", "chmod", "chown", "chgrp", "tar", "zip",
  "unzip", "gzip", "gunzip", "jq", "yq", "echo", "printf", "clear",
  // shell builtins and environment
  "export", "unset", "source", "alias", "which", "whereis", "env", "printenv", "history",
  "sudo", "su", "exit", "sleep", "kill", "killall", "pkill", "ps", "top", "htop", "whoami", "id", "uname",
  "hostname", "date", "man", "bash", "sh", "zsh", "fish", "time", "nohup", "xdg-open", "open",
  // package managers, runtimes, builds
  "git", "gh", "npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "deno", "node", "tsc", "tsx", "ts-node",
  "python", "python2", "python3", "pip", "pip3", "pipx", "poetry", "uv", "ruby", "gem", "bundle", "rake",
  "go", "cargo", "rustc", "rustup", "java", "javac", "mvn", "gradle", "dotnet", "php", "composer", "perl",
  "make", "cmake", "gcc", "g++", "clang", "apt", "apt-get", "apt-cache", "brew", "yum", "dnf", "apk", "pacman",
  "snap", "docker", "docker-compose", "podman", "kubectl", "helm", "terraform", "systemctl", "journalctl",
  "service", "wrangler", "vercel", "aws", "gcloud", "az", "openclaw",
  // network
  "curl", "wget", "ssh", "scp", "rsync", "ping", "nc", "telnet", "dig", "nslookup", "netstat", "ifconfig", "ip",
]);

/** Words that may legitimately follow an identifier in JavaScript/TypeScript (`ls in x`, `x as T`). */
const BINARY_WORDS = new Set(["in", "instanceof", "as", "satisfies", "of"]);

/** Shell control operators that may follow a command word, longest first. */
const SHELL_OPERATORS = ["&&", "||", ">>", "2>&1", "2>", "&>", "|", ">", "<", ";", "&"];

const COMMAND_WORD = /^(?:[A-Za-z_][A-Za-z0-9_+-]*|\.{1,2}\/[^\s;|&<>]+|~\/[^\s;|&<>]+)/;
const ENV_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=(?:"[^"]*"|'[^']*'|[^\s"';|&]*)\s+/;

/**
 * Heuristic (documented because it errs towards *accepting* code):
 * only the first meaningful line matters (leading blank lines, `//` and `#` comment lines, a
 * `$ ` prompt and a ```sh code fence are skipped). It is a shell command when
 *   1. its first word is a known command name (`ls`, `git`, `npm`, ...) or a `./`/`../`/`~/`
 *      path, optionally after `VAR=value` assignments, and
 *   2. what follows does not have JavaScript's shape:
 *      - nothing (or just `;`): a bare `ls`/`pwd` means the shell, unless the next line continues
 *        the expression (`.`, `(`, `=`, an operator ...);
 *      - another word, a number or a quoted string (`git status`, `sleep 5`, `echo "hi"`): two
 *        operands side by side never parse as JavaScript (`ls in x`, `x as T` excepted);
 *      - a flag (`-la`, `--force`), a path (`/tmp`, `./src`, `~`, `.`, `..`) or a glob (`*.ts`);
 *      - a shell operator (`|`, `&&`, `>`, `;` ...) followed by another shell command or a file
 *        name (`ls | grep x`, `ls > out.txt`).
 * Anything else (`ls = 1`, `git.status`, `ls(x)`, `ls[0]`, `cat - 1`, `echo \`x\``) is JavaScript.
 */
export function checkShellCommand(source: string): SourceCheck {
  const lines = source.split(/\r\n|[\n\r\u2028\u2029]/);
  let index = 0;
  // Skip blank lines, comments and a code fence; remember whether the fence said "shell".
  for (; index < lines.length; index++) {
    const t = lines[index]!.trim();
    if (t === "" || t.startsWith("//")) continue;
    if (t.startsWith("#") && !t.startsWith("#!")) continue; // shell comment (invalid JS at line start)
    if (/^(```|~~~)\s*(sh|bash|shell|zsh|console|terminal|shellscript)?\s*$/i.test(t)) continue;
    break;
  }
  if (index >= lines.length) return OK;
  let first = lines[index]!.trim();
  const rest = lines.slice(index + 1);

  if (/^#!\s*\/(usr\/)?(bin\/)?(env\s+)?(ba|z|fi)?sh\b/.test(first)) return shellRejection(first);
  // A copied terminal prompt: `$ ls -la` (`$ ls` is two identifiers: never JavaScript).
  const prompt = /^\$\s+(.*)$/.exec(first);
  if (prompt) first = prompt[1]!;

  if (!looksLikeShellLine(first, rest)) return OK;
  return shellRejection(first);
}

function looksLikeShellLine(line: string, followingLines: string[]): boolean {
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
  if (!isPath && !SHELL_COMMANDS.has(word)) {
    return false;
  }
  const after = text.slice(word.length);
  // `export const x = 1` is module syntax (checkModuleAccess explains it), not `export FOO=bar`.
  if (word === "export" && /^\s+(const|let|var|function|class|default|async|type|interface|enum|declare|abstract|namespace)\b|^\s*[{*=]/.test(after)) {
    return false;
  }
  if (isPath) return after === "" || /^\s/.test(after) || /^[;|&<>]/.test(after);

  // Nothing after the command word: `ls`, `pwd`, `ls;`.
  if (/^\s*;?\s*$/.test(after)) {
    if (sawAssignment) return true;
    const next = followingLines.find((l) => l.trim() !== "" && !l.trim().startsWith("//"));
    // The expression continues on the next line (`find\n  .call(x)`): JavaScript.
    if (next !== undefined && /^[.([?:=+\-*/%&|^<>,!`]/.test(next.trim()) && !/^\s*;/.test(after)) return false;
    return true;
  }
  // `ls;pwd`, `cd src; make` handled below; `ls.x`, `ls(`, `ls=`, `ls[` etc. are JavaScript.
  if (!/^\s/.test(after)) {
    if (after.startsWith(";")) return looksLikeShellLine(after.slice(1).trim(), followingLines);
    return false;
  }
  return argumentsLookLikeShell(after.trimStart(), followingLines);
}

function argumentsLookLikeShell(args: string, followingLines: string[]): boolean {
  const c = args[0]!;
  // Flags: `-la`, `--force`, `-n5` (a JavaScript subtraction would be `ls - la`).
  if (/^--?[A-Za-z]/.test(args)) return true;
  // `head -5 file`: a negative number followed by another operand.
  if (/^-\d+\s+[\w./~"'-]/.test(args)) return true;
  // A second operand: word, number, quoted string. `ls in x`, `x as T` remain JavaScript.
  if (/^[A-Za-z0-9_$@]/.test(c)) {
    const bare = /^[A-Za-z_$][\w$]*/.exec(args)?.[0];
    const word = /^[^\s;|&<>]+/.exec(args)?.[0];
    if (bare !== undefined && BINARY_WORDS.has(bare) && bare === word) return false;
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
    return looksLikeShellLine(rhs, followingLines);
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
