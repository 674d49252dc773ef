import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "../../../src/config";
import { MAX_REDACTED_SOURCE_BYTES } from "../../../src/limits";
import { isCredentialName, redactedPreview, redactSecrets, redactSource } from "../../../src/observability";

const bytes = (s: string) => new TextEncoder().encode(s).length;

// Secret-shaped values used below (all fake).
const OPENAI = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t";
const ANTHROPIC = "sk-ant-api03-Xy7_abcdEFGH1234ijklMNOP";
const GITHUB = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz";
const SLACK = "xoxb-1234567890-0987654321-AbCdEfGhIjKl";
const AWS_ID = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const GOOGLE = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q";
const STRIPE = "sk_live_51Hxyz0123456789ABCDEFabcdef";
const STRIPE_RESTRICTED = "rk_live_51Hxyz0123456789ABCDEFabcdef";
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

/** [what, cell source, stored form]: the secret is masked and the rest of the line is unchanged. */
const SECRETS: Array<[string, string, string, string]> = [
  ["OpenAI key in a credential-named const", `const OPENAI_API_KEY = "${OPENAI}";`, `const OPENAI_API_KEY = "***";`, OPENAI],
  [
    "Anthropic key under a key that is not a credential name",
    `const client = makeClient({ region: "us", key: "${ANTHROPIC}" });`,
    `const client = makeClient({ region: "us", key: "***" });`,
    ANTHROPIC,
  ],
  ["GitHub token inside prose", `text("use ${GITHUB} for CI");`, `text("use *** for CI");`, GITHUB],
  ["GitHub fine-grained token in a template", "const msg = `pat is " + GITHUB_PAT + " now`;", "const msg = `pat is *** now`;", GITHUB_PAT],
  [
    "Slack bot token as an object key",
    `await tools.slack.post({ channel: "#ops", text: "deploy done", botToken: "${SLACK}" });`,
    `await tools.slack.post({ channel: "#ops", text: "deploy done", botToken: "***" });`,
    SLACK,
  ],
  [
    "Slack webhook URL",
    `const hook = "https://hooks.slack.com/services/T000AAA/B000BBB/XXXXXXXXXXXXXXXXXXXX";`,
    `const hook = "https://hooks.slack.com/services/***";`,
    "T000AAA/B000BBB",
  ],
  [
    "AWS key id and secret access key",
    `const s3 = new S3({ accessKeyId: "${AWS_ID}", secretAccessKey: "${AWS_SECRET}" });`,
    `const s3 = new S3({ accessKeyId: "***", secretAccessKey: "***" });`,
    "K7MDENG",
  ],
  [
    "AWS secret in an env-file string",
    `const env = "AWS_SECRET_ACCESS_KEY=${AWS_SECRET}\\nREGION=us-east-1";`,
    `const env = "AWS_SECRET_ACCESS_KEY=***\\nREGION=us-east-1";`,
    AWS_SECRET,
  ],
  [
    "Google API key in a URL template",
    "const url = `https://maps.googleapis.com/maps/api/geocode/json?address=${q}&key=" + GOOGLE + "`;",
    "const url = `https://maps.googleapis.com/maps/api/geocode/json?address=${q}&key=***`;",
    GOOGLE,
  ],
  ["Stripe live key passed to a constructor", `const stripe = new Stripe("${STRIPE}");`, `const stripe = new Stripe("***");`, STRIPE],
  ["Stripe restricted key", `const cfg = { stripeKey: '${STRIPE_RESTRICTED}' };`, `const cfg = { stripeKey: '***' };`, STRIPE_RESTRICTED],
  ["JWT as idToken", `await login({ idToken: "${JWT}" });`, `await login({ idToken: "***" });`, "dozjgNryP4J3"],
  ["JWT in prose", `console.log("got ${JWT} back");`, `console.log("got *** back");`, "eyJzdWIi"],
  [
    "PEM private key in a multi-line template",
    "const signer = createSign(`-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----`);",
    "const signer = createSign(`***`);",
    "MIIEvQ",
  ],
  [
    "PEM private key with \\n escapes",
    'const pem = "-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA\\n-----END RSA PRIVATE KEY-----";',
    'const pem = "***";',
    "MIIEpA",
  ],
  [
    "URL userinfo",
    `const db = await connect("postgres://app:s3cr3t-pw@db.internal:5432/prod");`,
    `const db = await connect("postgres://***@db.internal:5432/prod");`,
    "s3cr3t",
  ],
  [
    "credential query parameters",
    `const r = await fetch("https://api.example.com/v1/items?api_key=abc123xyz&token=tok_98765&page=2");`,
    `const r = await fetch("https://api.example.com/v1/items?api_key=***&token=***&page=2");`,
    "abc123xyz",
  ],
  [
    "Bearer value in a curl string",
    `const cmd = "curl -H 'Authorization: Bearer abc123def456ghi' https://api.example.com";`,
    `const cmd = "curl -H 'Authorization: Bearer ***' https://api.example.com";`,
    "abc123def456ghi",
  ],
  [
    "Authorization header literal",
    `const res = await fetch(url, { headers: { Authorization: "Bearer abc123def456", Accept: "application/json" } });`,
    `const res = await fetch(url, { headers: { Authorization: "***", Accept: "application/json" } });`,
    "abc123def456",
  ],
  [
    "Basic credentials built with btoa",
    `const headers = { Authorization: "Basic " + btoa("admin:hunter2") };`,
    `const headers = { Authorization: "Basic " + btoa("***") };`,
    "hunter2",
  ],
  ["x-api-key header set by call", `req.headers.set("X-Api-Key", "live_8f14e45fceea");`, `req.headers.set("X-Api-Key", "***");`, "8f14e45fceea"],
  [
    "x-api-key object key with a fallback",
    `const h = { "x-api-key": env.KEY ?? "fallback-key-123" };`,
    `const h = { "x-api-key": env.KEY ?? "***" };`,
    "fallback-key-123",
  ],
  [
    "password in an options object",
    `await db.connect({ host: "db", user: "app", password: "correct horse battery staple" });`,
    `await db.connect({ host: "db", user: "app", password: "***" });`,
    "horse",
  ],
  [
    "clientSecret next to a clientId",
    `const oauth = { clientId: "my-app", clientSecret: 'Zx9-Qw8-Er7' };`,
    `const oauth = { clientId: "my-app", clientSecret: '***' };`,
    "Zx9",
  ],
  [
    "cookie header template keeps its substitution",
    "await fetch(u, { headers: { cookie: `session=${sid}; csrftoken=abc123` } });",
    "await fetch(u, { headers: { cookie: `***${sid}***` } });",
    "abc123",
  ],
  ["comparison with a credential", `if (input.password === "hunter2") return;`, `if (input.password === "***") return;`, "hunter2"],
  ["comparison written the other way round", `if ("hunter2" === password) return;`, `if ("***" === password) return;`, "hunter2"],
  ["TypeScript annotation", `const apiKey: string = "a1b2c3d4";`, `const apiKey: string = "***";`, "a1b2c3d4"],
  ["property assignment", `config.auth.token = "t0k3n-value";`, `config.auth.token = "***";`, "t0k3n"],
  ["bracket assignment", `headers["Authorization"] = "Token 9f8e7d6c";`, `headers["Authorization"] = "***";`, "9f8e7d6c"],
  ["template with a computed prefix", "const API_SECRET = `${prefix}-s3cr3t-suffix`;", "const API_SECRET = `${prefix}***`;", "s3cr3t"],
  [
    "header pairs",
    `const h = new Headers([["Accept", "text/plain"], ["Authorization", "Bearer abc.def.ghi"]]);`,
    `const h = new Headers([["Accept", "text/plain"], ["Authorization", "***"]]);`,
    "abc.def",
  ],
  ["credential setter", `client.setApiKey("k-123456");`, `client.setApiKey("***");`, "k-123456"],
  ["form field", `form.append("client_secret", "xyz-789");`, `form.append("client_secret", "***");`, "xyz-789"],
  ["scheme concatenation", `const auth = "Bearer " + "abc123";`, `const auth = "Bearer " + "***";`, "abc123"],
  ["secret in a line comment", `// old key: ${ANTHROPIC}\nconst x = 1;`, "// old key: ***\nconst x = 1;", ANTHROPIC],
  ["password in a block comment", `/* password: hunter2 */ const x = 1;`, `/* password: *** */ const x = 1;`, "hunter2"],
  ["JSON text in a string", `const body = '{"user":"bob","password":"pa55word"}';`, `const body = '{"user":"bob","password":"***"}';`, "pa55word"],
  [
    "form body",
    `const body = "grant_type=client_credentials&client_secret=abc123";`,
    `const body = "grant_type=client_credentials&client_secret=***";`,
    "abc123",
  ],
];

/** Source that must be stored byte-identical. */
const LOOK_ALIKES: Array<[string, string]> = [
  ["a token count", "const tokenCount = 5;"],
  ["words containing sk", `const list = "task-list"; const s = "skeleton"; const d = "ask-for-desk-help";`],
  ["sk- in lowercase prose", `const lib = "sk-learn-tutorial-for-beginners";`],
  ["a git SHA", `const sha = "9fceb02d0ae598e95dc970b74767f19372d61af8";`],
  ["a UUID", `const id = "3f2b8c1e-9d4a-4c7b-8e2f-1a2b3c4d5e6f";`],
  ["a vault lookup", `const password = await vault.get("db");`],
  ["a computed token", "const API_TOKEN = computeToken();"],
  ["boolean and null initializers", "const DEBUG = true;\nlet secret = null;\nprocess = undefined;\nconst ENABLED = false;"],
  ["Bearer and Basic in prose", `text("Bearer tokens are described in RFC 6750; use Basic authentication only over TLS.");`],
  ["a normal URL with a query", `const next = await fetch("https://api.example.com/items?page=2&per_page=50");`],
  [
    "pagination tokens and usage counts",
    `const res = await api.list({ pageToken: "CAESBggBEAEYAQ", maxTokens: 1024 });\nconst usage = { tokens: 1234, inputTokens: 100 };`,
  ],
  ["names that mention secrets", `const secretName = "prod/db"; const authType = "oauth"; const cookieName = "sid";`],
  ["a public key", `const publicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx";`],
  ["a session id (decided: not a credential name)", `const sessionId = "sess_01HZX3ABC";`],
  ["a cache key", "const cacheKey = `user:${id}`;"],
  ["a comment about keys", "// TODO: rotate the API key next week\nconst x = 1; /* see token docs */"],
  ["prose asking for a password", `text("Enter your password to continue.");`],
  ["a password input selector", `const el = document.querySelector("input[type=password]");`],
  ["a query about tokens", `const url = "https://example.com/search?q=token&sort=new";`],
  ["a regex about tokens", "const m = /token=([^&]+)/.exec(location.search);"],
  ["a header template from a variable", "if (token) headers.Authorization = `Bearer ${token}`;"],
  ["the secret read from the environment", "const apiKey = env.OPENAI_API_KEY;\nconst h = { Authorization: `Bearer ${apiKey}` };"],
  ["an empty credential", `let password = "";`],
];

describe("redactSource: secret shapes", () => {
  it.each(SECRETS)("%s", (_what, source, stored, leak) => {
    const out = redactSource(source);
    expect(out).toBe(stored);
    expect(out).not.toContain(leak);
  });

  it("has at least 20 shapes", () => {
    expect(SECRETS.length).toBeGreaterThanOrEqual(20);
  });
});

describe("redactSource: look-alikes stay readable", () => {
  it.each(LOOK_ALIKES)("%s", (_what, source) => {
    expect(redactSource(source)).toBe(source);
  });

  it("has at least 12 look-alikes", () => {
    expect(LOOK_ALIKES.length).toBeGreaterThanOrEqual(12);
  });
});

describe("redactSource: stable storage", () => {
  it.each(SECRETS)("redacting %s twice gives the same text", (_what, source) => {
    const once = redactSource(source);
    expect(redactSource(once)).toBe(once);
  });

  it("a realistic cell keeps its structure and is idempotent", () => {
    const cell = [
      `const API_TOKEN = computeToken();`,
      `const DEBUG = true;`,
      `const apiKey = "${OPENAI}"; // rotate monthly`,
      `const res = await fetch("https://api.example.com/v1/items?page=2&api_key=abc123", {`,
      `  headers: { Authorization: \`Bearer \${apiKey}\`, "Content-Type": "application/json" },`,
      `  body: JSON.stringify({ query: "open issues", password: "pa55" }),`,
      `});`,
      `return res.json();`,
    ].join("\n");
    // Exactly the three secrets change; every other byte (comments, computations, the header template) stays.
    const expected = cell.replace(OPENAI, "***").replace("api_key=abc123", "api_key=***").replace('"pa55"', '"***"');
    expect(expected).not.toBe(cell);
    const once = redactSource(cell);
    expect(once).toBe(expected);
    expect(redactSource(once)).toBe(once);
  });

  it("a literal whose partial masks would break it is masked whole", () => {
    // The pattern takes the first backslash of an escaped pair: a partial mask would leave `\"`, ending the string early.
    const patterns = [/ab\\/g];
    const out = redactSource(String.raw`const s = "see ab\\"; const t = 1;`, { patterns });
    expect(out).toBe(`const s = "***"; const t = 1;`);
    expect(redactSource(out, { patterns })).toBe(out);
  });
});

describe("redactSource: registered secrets and configured patterns", () => {
  it("masks registered secret values of 8+ characters anywhere, and ignores shorter ones", () => {
    const source = `const greeting = "hello tenant-secret-value-123"; // tenant-secret-value-123\nconst n = "short";`;
    const out = redactSource(source, { secrets: ["tenant-secret-value-123", "short"] });
    expect(out).toBe(`const greeting = "hello ***"; // ***\nconst n = "short";`);
    expect(redactSource(out, { secrets: ["tenant-secret-value-123", "short"] })).toBe(out);
  });

  it("masks the configured logging.redactPatterns, compiled by the gateway config", () => {
    const parsed = parseGatewayConfig({ logging: { redactPatterns: ["acct_[0-9]{6}", "INTERNAL-[A-Z]+"] } });
    if (!parsed.ok) throw new Error(parsed.error.message);
    const patterns = parsed.config.redactPatterns;
    const source = `const account = "acct_123456"; // ticket INTERNAL-OPS\nconst other = "acct_12";`;
    const out = redactSource(source, { patterns });
    expect(out).toBe(`const account = "***"; // ticket ***\nconst other = "acct_12";`);
    expect(redactSource(out, { patterns })).toBe(out);
    // The shared compiled RegExps keep working on the next call (no lastIndex left behind).
    expect(redactSource(source, { patterns })).toBe(out);
  });

  it("redactSecrets (debug payloads) uses the same table and the configured patterns", () => {
    expect(redactSecrets(`{"note":"${STRIPE} acct_123456"}`, [], [/acct_[0-9]{6}/g])).toBe('{"note":"*** ***"}');
    expect(redactSecrets("Authorization: Bearer abc.def-ghi_jkl")).toBe("Authorization: Bearer ***");
    expect(redactSecrets("Bearer tokens are fine in prose")).toBe("Bearer tokens are fine in prose");
  });
});

describe("redactSource: the same source redacted again", () => {
  // Redactions are remembered per source and options: a repeat must never serve a result made
  // under other options (a secret registered since, a pattern added or removed).
  it("masks a secret added to the options since the first redaction, and stops masking one removed", () => {
    const source = "const a = 'alpha-secret-1'; const b = 'beta-secret-22'; return a + b;";
    const one = redactSource(source, { secrets: ["alpha-secret-1"] });
    expect(one).not.toContain("alpha-secret-1");
    expect(one).toContain("beta-secret-22");
    expect(redactSource(source, { secrets: ["alpha-secret-1"] })).toBe(one);
    const both = redactSource(source, { secrets: ["alpha-secret-1", "beta-secret-22"] });
    expect(both).not.toContain("alpha-secret-1");
    expect(both).not.toContain("beta-secret-22");
    expect(redactSource(source, { secrets: [] })).toContain("alpha-secret-1");
  });

  it("follows the patterns by their source, and gives large sources the same result as before", () => {
    const source = "return 'ticket TKT-12345 and TKT-99';";
    expect(redactSource(source, { patterns: [/TKT-\d{5}/g] })).not.toContain("TKT-12345");
    expect(redactSource(source, { patterns: [/TKT-\d{2}\b/g] })).toContain("TKT-12345");
    expect(redactSource(source, { patterns: [/TKT-\d{2}\b/g] })).not.toContain("TKT-99'");
    const large = `const key = 'alpha-secret-1';\n${"x = 1;\n".repeat(4000)}`;
    const first = redactSource(large, { secrets: ["alpha-secret-1"] });
    expect(first).not.toContain("alpha-secret-1");
    expect(redactSource(large, { secrets: ["alpha-secret-1"] })).toBe(first);
  });
});

describe("redactSource: huge input is diagnostic masked", () => {
  const line = `const row = "${"x".repeat(60)}";\n`;
  const head = `const API_KEY = "${OPENAI}";\n`;
  const tail = `const TAIL_SECRET = "${GITHUB}";\n`;
  const huge = head + line.repeat(Math.ceil((MAX_REDACTED_SOURCE_BYTES * 1.5) / line.length)) + tail;

  it("stores the redacted leading part and a marker counting the omitted bytes, under the cap", () => {
    const out = redactSource(huge);
    expect(bytes(out)).toBeLessThanOrEqual(MAX_REDACTED_SOURCE_BYTES);
    expect(out.startsWith(`const API_KEY = "***";\n`)).toBe(true);
    expect(out).not.toContain(GITHUB);
    const marker = /\n\/\/ …\[(\d+) bytes omitted: source over (\d+) bytes is stored diagnostic-masked\]$/.exec(out);
    expect(marker).not.toBeNull();
    expect(Number(marker![2])).toBe(MAX_REDACTED_SOURCE_BYTES);
    // Omitted + kept source bytes add up to the input: the head was cut at a line end.
    const kept = out.slice(0, out.length - marker![0].length);
    const keptSource = huge.slice(0, kept.length + OPENAI.length - "***".length);
    expect(keptSource.endsWith(`";`)).toBe(true);
    expect(Number(marker![1])).toBe(bytes(huge) - bytes(keptSource));
  });

  it("redacting the capped form again gives the same text", () => {
    const out = redactSource(huge);
    expect(redactSource(out)).toBe(out);
  });

  it("a head cut inside a credential template keeps its marker when redacted again", () => {
    // The template runs past the cap: the stored head is an unterminated credential template, which
    // would swallow (and mask) the marker line if the marker were not recognized.
    const source = "const API_SECRET = `" + "line of secret text\n".repeat(MAX_REDACTED_SOURCE_BYTES / 10) + "`;";
    const out = redactSource(source);
    expect(out).toMatch(/^const API_SECRET = `\*\*\*\n\/\/ …\[\d+ bytes omitted: source over \d+ bytes is stored diagnostic-masked\]$/);
    expect(redactSource(out)).toBe(out);
  });

  it("a multi-byte source is cut on a character boundary", () => {
    const out = redactSource("😀".repeat(MAX_REDACTED_SOURCE_BYTES));
    expect(bytes(out)).toBeLessThanOrEqual(MAX_REDACTED_SOURCE_BYTES);
    expect(new TextDecoder().decode(new TextEncoder().encode(out))).toBe(out);
    expect(out).toMatch(/^(😀)+\n\/\/ …\[\d+ bytes omitted/);
  });

  it.each([
    ["unterminated quotes", '"'.repeat(1 << 20)],
    ["nested template substitutions", "`${".repeat(1 << 18)],
    ["PEM headers without an end", "-----BEGIN PRIVATE KEY-----".repeat(1 << 15)],
    ["credential names without values", "password = ".repeat(1 << 16)],
    ["scheme prefixes", "https://".repeat(1 << 17)],
    ["dotted names", "aaaa.".repeat(1 << 18)],
  ])("pathological %s finish within the cap (linear work)", (_what, source) => {
    const out = redactSource(source, { secrets: ["abcdefghij"], patterns: [/acct_[0-9]{6}/g] });
    expect(bytes(out)).toBeLessThanOrEqual(MAX_REDACTED_SOURCE_BYTES);
    expect(out).toMatch(/bytes omitted: source over \d+ bytes is stored diagnostic-masked\]$/);
  });
});

describe("redactedPreview", () => {
  it("masks credential-named keys in full, keeps booleans and null, masks tokens in other strings", () => {
    const value = {
      url: "https://api.example.com/x?token=abc123&page=2",
      apiKey: "plain-value",
      headers: { Authorization: "Bearer abc.def", Accept: "application/json" },
      credentials: { username: "bob", pin: 1234, remember: true },
      password: null,
      note: `key ${GITHUB}`,
      pageToken: "CAESBggB",
    };
    expect(redactedPreview(value, 10_000)).toBe(
      JSON.stringify({
        url: "https://api.example.com/x?token=***&page=2",
        apiKey: "***",
        headers: { Authorization: "***", Accept: "application/json" },
        credentials: { username: "***", pin: "***", remember: true },
        password: null,
        note: "key ***",
        pageToken: "CAESBggB",
      }),
    );
  });

  it("masks registered secrets and configured patterns, keys included", () => {
    const out = redactedPreview({ acct_123456: "tenant-secret-value-123 ok" }, 1000, {
      secrets: ["tenant-secret-value-123"],
      patterns: [/acct_[0-9]{6}/g],
    });
    expect(out).toBe('{"***":"*** ok"}');
  });

  it("never throws: cycles, BigInt, undefined, functions, symbols, throwing getters and toJSON, deep nesting", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(redactedPreview(cyclic, 1000)).toBe('{"a":1,"self":"[Circular]"}');
    expect(redactedPreview({ n: 12n, token: 34n, u: undefined, f: () => 1, s: Symbol("x"), list: [undefined, NaN] }, 1000)).toBe(
      '{"n":12,"token":"***","list":[null,null]}',
    );
    expect(redactedPreview(undefined, 100)).toBe("null");
    const getter = Object.defineProperty({}, "boom", {
      enumerable: true,
      get() {
        throw new Error("no");
      },
    });
    expect(redactedPreview(getter, 100)).toBe('{"boom":"[Unreadable]"}');
    expect(
      redactedPreview(
        {
          d: new Date(0),
          bad: {
            toJSON: () => {
              throw new Error("x");
            },
          },
        },
        100,
      ),
    ).toBe('{"d":"1970-01-01T00:00:00.000Z","bad":"[Unreadable]"}');
    let deep: unknown = "leaf";
    for (let i = 0; i < 5000; i++) deep = [deep];
    const out = redactedPreview(deep, 100_000);
    expect(out).toContain('"[Too deep]"');
    // A shared (not cyclic) object appears twice.
    const shared = { x: 1 };
    expect(redactedPreview([shared, shared], 100)).toBe('[{"x":1},{"x":1}]');
  });

  it("bounds the text to maxBytes with an exact omitted-bytes suffix", () => {
    const value = { items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) };
    const full = redactedPreview(value, Number.MAX_SAFE_INTEGER);
    for (const max of [40, 41, 100, 257, 1000, 4096]) {
      const out = redactedPreview(value, max);
      expect(bytes(out)).toBeLessThanOrEqual(max);
      const m = /…\[(\d+) bytes omitted\]$/.exec(out);
      expect(m, `max ${max}`).not.toBeNull();
      const kept = out.slice(0, out.length - m![0].length);
      expect(full.startsWith(kept)).toBe(true);
      expect(bytes(kept) + Number(m![1])).toBe(bytes(full));
    }
    expect(redactedPreview(value, bytes(full))).toBe(full);
  });

  it("cuts UTF-8 safely: never half a character, for every budget", () => {
    const value = { text: "héllo 😀 世界 ".repeat(10) };
    for (let max = 0; max <= 120; max++) {
      const out = redactedPreview(value, max);
      expect(bytes(out)).toBeLessThanOrEqual(max);
      expect(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(new TextEncoder().encode(out))).toBe(out);
      expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    }
    expect(redactedPreview(value, 3)).toBe("…");
    expect(redactedPreview(value, 2)).toBe("");
    expect(redactedPreview(value, -5)).toBe("");
    expect(redactedPreview(value, Number.NaN)).toBe("");
  });

  it("redacts before cutting, so a cut never shows the start of a secret", () => {
    const out = redactedPreview({ note: `${OPENAI} ${"and more text ".repeat(10)}` }, 40);
    expect(out).not.toContain("sk-proj");
    expect(out.startsWith('{"note":"***')).toBe(true);
  });
});

describe("isCredentialName", () => {
  const credentials =
    "apiKey API_KEY x-api-key Authorization password DB_PASS clientSecret accessKey secretAccessKey privateKey refreshToken API_TOKEN Set-Cookie basicAuth credentials";
  const others = "tokenCount maxTokens pageToken nextToken cacheKey publicKey key sessionId secretName authType cookieName skeleton accessKeyId";
  it.each([...credentials.split(" ").map((n) => [n, true] as const), ...others.split(" ").map((n) => [n, false] as const)])(
    "isCredentialName(%s) is %s",
    (name, expected) => {
      expect(isCredentialName(name)).toBe(expected);
    },
  );
});
