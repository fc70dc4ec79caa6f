import { describe, expect, test } from "bun:test";
import { classifyReply, enhancedStatus } from "./reply_classes.ts";

// Replies as the big receivers write them (RFC 3463 codes where they give one, their own texts where not).
describe("classifyReply", () => {
  const cases: [string, number | null, string, "hard" | "soft" | "policy" | "none"][] = [
    [
      "Gmail: no such account",
      550,
      "550-5.1.1 The email account that you tried to reach does not exist.",
      "hard",
    ],
    [
      "Postfix: unknown user",
      550,
      "550 5.1.1 <x@example.org>: Recipient address rejected: User unknown",
      "hard",
    ],
    ["mailbox disabled", 550, "550 5.2.1 The email account that you tried to reach is disabled.", "hard"],
    ["Gmail: inbox full", 552, "552-5.2.2 The recipient's inbox is out of storage space.", "soft"],
    ["Postfix: relay access denied", 554, "554 5.7.1 <x@example.org>: Relay access denied", "policy"],
    [
      "Gmail: unauthenticated",
      550,
      "550-5.7.26 Unauthenticated email from example.com is not accepted",
      "policy",
    ],
    ["Outlook: banned IP", 550, "550 5.7.606 Access denied, banned sending IP [192.0.2.1]", "policy"],
    ["Yahoo: policy", 554, "554 5.7.9 Message not accepted for policy reasons", "policy"],
    ["mail system full", 552, "552 5.3.4 Message too big for system", "policy"],
    ["routing loop", 554, "554 5.4.6 Routing loop detected", "policy"],
    ["bad sender address", 553, "553 5.1.8 Domain of sender address does not exist", "policy"],
    ["Exim: relay not permitted (no code)", 550, "550 relay not permitted", "policy"],
    [
      "Exim: blocklist (no code)",
      550,
      "550 rejected because 192.0.2.1 is in a black list at zen.spamhaus.org",
      "policy",
    ],
    [
      "Postfix RBL",
      554,
      "554 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org",
      "policy",
    ],
    [
      "plain 550 (RFC 5321 mailbox unavailable)",
      550,
      "550 Requested action not taken: mailbox unavailable",
      "hard",
    ],
    ["Yahoo deferral", 421, "421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred", "soft"],
    ["greylisting", 450, "450 4.2.0 <x@example.org>: Recipient address rejected: Greylisted", "soft"],
    ["5.0.0 with user unknown", 550, "550 5.0.0 unknown user", "hard"],
    ["5.0.0 with quota", 552, "552 5.0.0 mailbox full", "soft"],
  ];
  for (const [name, code, text, kind] of cases)
    test(`${name} → ${kind}`, () => {
      expect(classifyReply({ code, text }).kind).toBe(kind);
    });

  test("a DSN Status field decides over its Diagnostic-Code's words; 2.x.x is no bounce", () => {
    expect(classifyReply({ status: "5.7.26", text: "smtp; 550 unauthenticated" })).toEqual({
      kind: "policy",
      status: "5.7.26",
    });
    expect(classifyReply({ status: "4.4.7", text: "" }).kind).toBe("soft");
    expect(classifyReply({ status: "2.0.0", text: "" }).kind).toBe("none");
  });

  test("enhancedStatus reads the code after the reply code, also in a multi-line reply", () => {
    expect(enhancedStatus("550-5.1.1 The email account")).toBe("5.1.1");
    expect(enhancedStatus("smtp; 552 5.2.2 full")).toBe("5.2.2");
    expect(enhancedStatus("550 relay not permitted")).toBeNull();
    expect(enhancedStatus("blocked at 192.0.2.1")).toBeNull();
  });
});
