/** Command names that start a recognizable shell command line (see shell-commands.ts). */
export const SHELL_COMMANDS = new Set([
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
