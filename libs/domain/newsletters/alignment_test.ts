import { describe, expect, test } from "bun:test";
import { warnIfUnaligned } from "./sender.ts";

// DMARC alignment at start (RFC 7489 §3.1, relaxed): MAIL_FROM's organizational domain must be
// DKIM_DOMAIN's or MAIL_BOUNCE_ADDRESS's domain's, else the sender warns naming the domains.
describe("warnIfUnaligned", () => {
  const run = (mailFrom: string, bounceAddress: string, dkimDomain: string | null) => {
    const lines: string[] = [];
    const warned = warnIfUnaligned(
      {
        newsletter: {
          mailFrom,
          bounceAddress,
          dkim: dkimDomain ? { domain: dkimDomain, keys: [] } : null,
        } as never,
      },
      { warn: (msg: string) => lines.push(msg) },
    );
    return { warned, lines };
  };

  test("aligned through DKIM (a subdomain shares the organizational domain) or through the bounce domain: no warning", () => {
    expect(run("news@example.com", "bounces@other.net", "mail.example.com").warned).toBe(false);
    expect(run("news@example.co.uk", "b@bounce.example.co.uk", null).warned).toBe(false);
  });

  test("neither aligned: one warning naming MAIL_FROM's, DKIM_DOMAIN's and the bounce domain", () => {
    const r = run("news@example.com", "bounces@relay.example.net", "other.org");
    expect(r.warned).toBe(true);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain("example.com");
    expect(r.lines[0]).toContain("other.org");
    expect(r.lines[0]).toContain("relay.example.net");
    expect(r.lines[0]).toContain("DMARC");
    // co.uk is a public suffix: example.co.uk and other.co.uk are different organizations.
    expect(run("news@example.co.uk", "b@other.co.uk", null).warned).toBe(true);
  });
});
