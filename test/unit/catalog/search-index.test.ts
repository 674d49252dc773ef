import { describe, expect, it } from "vitest";
import { buildCatalog, SearchIndex, stem, tokenize } from "../../../src/catalog";
import { defineToolPlugin } from "../../../src/tools";
import type { ToolDefinition } from "../../../src/tools";

function catalogOf(tools: Array<{ name: string; description: string; parameters?: Record<string, unknown> }>): SearchIndex {
  const defs: ToolDefinition[] = tools.map((t) => ({ parameters: { type: "object", properties: {} }, execute: () => null, ...t }));
  const plugin = defineToolPlugin({ id: "p", name: "p", description: "p", origin: "external", tools: () => defs });
  return new SearchIndex(buildCatalog({ plugins: [plugin], policy: {} }).entries);
}

const names = (index: SearchIndex, query: string, limit = 8) => index.search(query, limit).map((e) => e.toolName);

/** Object.prototype members: a lookup in a plain object would find these for any catalog. */
const PROTOTYPE_WORDS = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

describe("search keys that name Object.prototype members (regression: catalog.search('constructor') threw)", () => {
  // No word of these tools is a camelCase part of the prototype words either ("to", "has", "of", …).
  const ordinary = catalogOf([
    { name: "github_create_issue", description: "Create a new issue in a GitHub repository" },
    { name: "slack_post_message", description: "Post a message in a Slack channel" },
  ]);

  it.each(PROTOTYPE_WORDS)("query %j on a catalog without that word finds nothing and throws nothing", (word) => {
    expect(names(ordinary, word)).toEqual([]);
    expect(names(ordinary, `${word} ${word}`)).toEqual([]);
  });

  it("the words still work as ordinary query words next to real ones", () => {
    expect(names(ordinary, "constructor for a slack message toString", 1)).toEqual(["slack_post_message"]);
  });

  it("tools named and described with those words are indexed and found by them", () => {
    const index = catalogOf([
      { name: "constructor", description: "Build a class instance through its constructor" },
      { name: "toString", description: "Render a value with toString" },
      { name: "hasOwnProperty", description: "Check hasOwnProperty on an object" },
      { name: "valueOf", description: "Unwrap a boxed primitive with valueOf" },
      { name: "proto_inspect", description: "Show the __proto__ chain of an object" },
      { name: "unrelated", description: "Water the plants" },
    ]);
    expect(names(index, "constructor", 1)).toEqual(["constructor"]);
    expect(names(index, "toString", 1)).toEqual(["toString"]);
    expect(names(index, "hasOwnProperty", 1)).toEqual(["hasOwnProperty"]);
    expect(names(index, "valueOf", 1)).toEqual(["valueOf"]);
    expect(names(index, "__proto__", 1)).toEqual(["proto_inspect"]);
    expect(names(index, "water plants", 1)).toEqual(["unrelated"]);
  });

  it.each(PROTOTYPE_WORDS)("the stemmer returns a string for %j", (word) => {
    for (const t of tokenize(word)) expect(typeof stem(t)).toBe("string");
  });
});

describe("search in any script (regression: words outside [A-Za-z0-9] were dropped)", () => {
  const index = catalogOf([
    { name: "vendas_relatorio", description: "Gera o relatório mensal de vendas por região" },
    { name: "minymata_apostoli", description: "Αποστολή μηνύματος σε πελάτη μέσω SMS" },
    { name: "seikyusho_sakusei", description: "顧客向けの請求書を作成します" },
    { name: "zakazy_spisok", description: "Показать список заказов клиента" },
    { name: "stripe_create_invoice", description: "Create an invoice for a customer" },
    { name: "slack_post_message", description: "Post a message to a Slack channel" },
  ]);

  it("Portuguese, with and without accents", () => {
    expect(names(index, "relatório de vendas", 1)).toEqual(["vendas_relatorio"]);
    expect(names(index, "relatorio de vendas da regiao", 1)).toEqual(["vendas_relatorio"]);
  });

  it("Greek, in lower and upper case (final sigma, no tonos)", () => {
    expect(names(index, "αποστολή μηνύματος", 1)).toEqual(["minymata_apostoli"]);
    expect(names(index, "ΑΠΟΣΤΟΛΗ ΜΗΝΥΜΑΤΟΣ", 1)).toEqual(["minymata_apostoli"]);
  });

  it("Japanese, written without spaces", () => {
    expect(names(index, "請求書を作成", 1)).toEqual(["seikyusho_sakusei"]);
    expect(names(index, "請求書", 1)).toEqual(["seikyusho_sakusei"]);
  });

  it("Cyrillic, in lower and upper case", () => {
    expect(names(index, "список заказов", 1)).toEqual(["zakazy_spisok"]);
    expect(names(index, "СПИСОК ЗАКАЗОВ клиента", 1)).toEqual(["zakazy_spisok"]);
  });

  it("a query in one script does not match tools in another", () => {
    expect(names(index, "請求書")).toEqual(["seikyusho_sakusei"]);
    expect(names(index, "список")).toEqual(["zakazy_spisok"]);
    expect(names(index, "invoice", 1)).toEqual(["stripe_create_invoice"]);
  });
});

describe("search tokens", () => {
  it("split on anything but letters, digits and marks; lowercase with Unicode; camelCase parts", () => {
    expect(tokenize("GitHub pull_requests")).toEqual(["github", "git", "hub", "pull", "request"]);
    expect(tokenize("ÉCOLE Ölçek")).toEqual(["ecol", "olcek"]);
    expect(tokenize("ＡＢＣ１２３")).toEqual(["abc123"]); // full-width forms (NFKC)
  });

  it("only words of ASCII letters are stemmed; digits stay as written", () => {
    expect(tokenize("s3Bucket route53")).toEqual(["s3bucket", "s3", "bucket", "route53"]);
    expect(tokenize("заказов")).toEqual(["заказов"]);
  });

  it("scripts without spaces become character bigrams", () => {
    expect(tokenize("請求書を作成")).toEqual(["請求", "求書", "書を", "を作", "作成"]);
    expect(tokenize("GitHubのリポジトリ")).toEqual(["github", "git", "hub", "のリ", "リポ", "ポジ", "ジト", "トリ"]);
    expect(tokenize("本")).toEqual(["本"]);
  });
});

describe("query stop words", () => {
  const index = catalogOf([
    { name: "github_create_issue", description: "Create a new issue in a GitHub repository" },
    { name: "github_list_pull_requests", description: "List pull requests of a GitHub repository" },
    { name: "calendar_create_event", description: "Create an event on a calendar" },
  ]);

  it("count half, so in a small catalog content words outrank shared function words", () => {
    // "an" and "on" occur only in the calendar tool: at full weight they would outscore "issue".
    expect(names(index, "open an issue on github", 1)).toEqual(["github_create_issue"]);
  });

  it("alone do not make a match when the query has other words; on their own they do", () => {
    expect(names(index, "zebra on an")).toEqual([]);
    expect(names(index, "on")).toEqual(["calendar_create_event"]);
  });
});
