/**
 * Pre-execution check for shell commands sent as code-mode cells (seed 002, `exec` rules). It gives
 * the model actionable `invalid_input` guidance before a cell runs; it is a first line of defence
 * only: the real boundary is the QuickJS-WASI guest, which has no subprocess access at all.
 */

import { SOURCE_CHECK_OK, type SourceCheck } from "./source-check-result";

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
  if (index >= lines.length) return SOURCE_CHECK_OK;
  let first = lines[index]!.trim();
  const rest = lines.slice(index + 1);

  if (/^#!\s*\/(usr\/)?(bin\/)?(env\s+)?(ba|z|fi)?sh\b/.test(first)) return shellRejection(first);
  // A copied terminal prompt: `$ ls -la` (`$ ls` is two identifiers: never JavaScript).
  const prompt = /^\$\s+(.*)$/.exec(first);
  if (prompt) first = prompt[1]!;

  if (!looksLikeShellLine(first, rest)) return SOURCE_CHECK_OK;
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
