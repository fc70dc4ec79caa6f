import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { platformTextViolation, postTextViolations, threadsTextLength, xTextLength } from "./text_rules.ts";

describe("X counts weighted characters (docs.x.com/fundamentals/counting-characters)", () => {
  test("Latin weighs 1, CJK 2, an emoji 2 whatever its joiners, after NFC", () => {
    expect(xTextLength("Hello, world! 👋")).toBe(16); // the page's own example
    expect(xTextLength("日本語")).toBe(6);
    expect(xTextLength("👨‍👩‍👧‍👦")).toBe(2);
    expect(xTextLength("🙋🏽")).toBe(2);
    expect(xTextLength("🇫🇷")).toBe(2);
    expect(xTextLength("cafe\u0301")).toBe(4);
    expect(xTextLength("“quoted” — ok…")).toBe(15);
  });

  test("a URL weighs 23 whatever its length; punctuation after it and unopened brackets are not its own", () => {
    expect(xTextLength("https://example.com")).toBe(23);
    expect(xTextLength(`see https://example.com/${"long/".repeat(40)}x.`)).toBe(4 + 23 + 1);
    expect(xTextLength("(https://en.wikipedia.org/wiki/Foo_(bar))")).toBe(1 + 23 + 1);
    expect(xTextLength("www.example.com/abc and http://a.co")).toBe(23 + 5 + 23);
    expect(xTextLength("http://")).toBe(7);
  });

  test("a bare domain under a real top-level domain is a URL (23); an e-mail, a file name or a number is not", () => {
    expect(xTextLength("see example.com now")).toBe(4 + 23 + 4);
    expect(xTextLength("docs.example.de/guide?x=1.")).toBe(23 + 1);
    expect(xTextLength("t.co")).toBe(23);
    expect(xTextLength("bücher.example.com")).toBe(23);
    expect(xTextLength("mail me: foo@example.com")).toBe(24);
    expect(xTextLength("index.html and v1.2.3")).toBe(21);
    expect(xTextLength("www.example.notatld")).toBe(19);
    expect(xTextLength("пример.рф")).toBe(9); // not Latin: linked only with a scheme
  });

  test("280 fits, 281 does not", () => {
    expect(platformTextViolation("x", "a".repeat(280))).toBeNull();
    expect(platformTextViolation("x", "a".repeat(281))).toBe(
      "281 characters for x, at most 280 (URLs count 23, emoji and CJK 2)",
    );
    expect(platformTextViolation("x", "界".repeat(141))).toContain("282 characters");
  });
});

describe("Threads counts characters, an emoji as its UTF-8 bytes (developers.facebook.com/docs/threads/posts)", () => {
  test("code points, emoji by bytes", () => {
    expect(threadsTextLength("日本語")).toBe(3);
    expect(threadsTextLength("👾")).toBe(4);
    expect(threadsTextLength("👨‍👩‍👧‍👦")).toBe(25);
    expect(threadsTextLength("https://example.com/long")).toBe(24);
  });

  test("500 fits, 501 does not; 125 four-byte emoji fit, 126 do not", () => {
    expect(platformTextViolation("threads", "a".repeat(500))).toBeNull();
    expect(platformTextViolation("threads", "a".repeat(501))).toContain("at most 500");
    expect(platformTextViolation("threads", "👾".repeat(125))).toBeNull();
    expect(platformTextViolation("threads", "👾".repeat(126))).toContain("504 characters");
  });
});

describe("which text of a post is checked", () => {
  test("a platform's override is its text (named by its field); platforms without a limit are not checked", () => {
    const long = "a".repeat(600);
    expect(postTextViolations(["reddit", "linkedin"], long, {})).toEqual([]);
    expect(postTextViolations(["x", "threads"], long, { x: "short" })).toEqual([
      {
        field: "content",
        message: "600 characters for threads, at most 500 (an emoji counts its UTF-8 bytes)",
      },
    ]);
    expect(postTextViolations(["x"], "short", { x: long }).map((v) => v.field)).toEqual([
      "platformOverrides.x",
    ]);
  });
});

// The texts X's reference implementation counts for comparison: links with and without a scheme, the
// characters around them, e-mail addresses, file names, numbers, scripts and emoji.
const CORPUS = [
  "example.com",
  "see example.com now",
  "example.de",
  "example.de/path",
  "t.co",
  "readme.md",
  "node.js",
  "v1.2.3",
  "file.txt",
  "index.html",
  "foo@example.com",
  "$example.com",
  "#example.com",
  "_example.com",
  "-example.com",
  "/example.com",
  "example.com.",
  "(example.com)",
  "example.com/path?q=1#f",
  "www.example.com",
  "www.example.invalidtld",
  "sub.domain.example.co.uk/x",
  "EXAMPLE.COM",
  "example.com:8080/x",
  "ex-ample.com",
  "-ex.com",
  "ex-.com",
  "пример.рф",
  "example.рф",
  "пример.com",
  "bücher.example.com",
  "x×y.com",
  "例え.テスト",
  "münchen.de",
  "example.museum",
  "a.b",
  "1.2",
  "Hello, world! 👋",
  "日本語",
  "https://example.com",
  "http://",
  "(https://en.wikipedia.org/wiki/Foo_(bar))",
  "www.example.com/abc and http://a.co",
  "go to google.com, then bing.com.",
  "I❤️example.com",
  "price 3.50 today",
  "e.g. this",
  "U.S.A. is",
  "x.com/elonmusk",
  "abc.xyz",
  "example.app/install",
  "👨‍👩‍👧‍👦 family",
  "cafe\u0301",
  "“quoted” — ok…",
  `${"a".repeat(250)} https://example.com/${"x".repeat(80)}`,
];

describe("X's counting agrees with X's reference implementation (twitter-text parseTweet)", () => {
  test("every text of the corpus has the weighted length twitter-text gives it", () => {
    const oracle = Bun.spawnSync(
      [process.execPath, join(import.meta.dir, "../testing/twitter_text_oracle.cjs")],
      {
        stdin: new TextEncoder().encode(JSON.stringify(CORPUS)),
      },
    );
    expect(oracle.exitCode).toBe(0);
    const reference = JSON.parse(oracle.stdout.toString()) as number[];
    expect(CORPUS.map((text) => [text, xTextLength(text)])).toEqual(
      CORPUS.map((text, i) => [text, reference[i]]),
    );
  });
});
