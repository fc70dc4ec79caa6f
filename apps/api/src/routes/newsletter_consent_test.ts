import { describe, expect, test } from "bun:test";
import { call, sink, uniq, useSendingBed, waitFor } from "../../testing/newsletter_sending_bed.ts";

// Consent as listmonk keeps it (CONTRACT "Mail replies…", issue 34, decision 1455): a subscriber added
// through the API shows where its consent came from (`source`, default `api`) and when; `confirm: true`
// adds it as pending and sends the confirmation mail, as the public form does.

useSendingBed();

const site = async () => {
  const s = await call("POST", "/api/v1/sites", { name: "Consent", slug: `c-${uniq()}` });
  return s.body.site.id as string;
};

describe("consent of subscribers added through the API", () => {
  test("{email} → active, source api and the time; {source} is kept", async () => {
    const siteId = await site();
    const before = Date.now();
    const a = await call("POST", `/api/v1/sites/${siteId}/subscribers`, { email: `a-${uniq()}@example.com` });
    expect(a.status).toBe(201);
    expect(a.body.subscriber).toMatchObject({ status: "active", source: "api" });
    expect(Date.parse(a.body.subscriber.consentedAt)).toBeGreaterThanOrEqual(before - 1000);
    const b = await call("POST", `/api/v1/sites/${siteId}/subscribers`, {
      email: `b-${uniq()}@example.com`,
      source: "shop-checkout",
    });
    expect(b.body.subscriber).toMatchObject({ status: "active", source: "shop-checkout" });
    const bad = await call("POST", `/api/v1/sites/${siteId}/subscribers`, {
      email: `c-${uniq()}@example.com`,
      source: "x".repeat(200),
    });
    expect(bad.status).toBe(400);
  });

  test("{confirm: true} → pending with the confirmation mail; consented when the link is followed", async () => {
    const siteId = await site();
    const email = `confirm-${uniq()}@example.com`;
    const added = await call("POST", `/api/v1/sites/${siteId}/subscribers`, { email, confirm: true });
    expect(added.status).toBe(201);
    expect(added.body.subscriber).toMatchObject({ status: "pending", source: "api", consentedAt: null });
    await waitFor("the confirmation mail", () => sink.messages.some((m) => m.to.includes(email)));
    const mail = sink.messages.find((m) => m.to.includes(email))!;
    const link = /https?:\/\/\S+confirm\?token=[\w.-]+/.exec(String(mail.parsed!.text))![0];
    const url = new URL(link);
    const { h } = await import("../../testing/newsletter_sending_bed.ts");
    const res = await h.call("GET", `${url.pathname}${url.search}`);
    expect(res.status).toBeLessThan(400);
    const id = added.body.subscriber.id as string;
    const shown = await call("GET", `/api/v1/sites/${siteId}/subscribers/${id}`);
    expect(shown.body.subscriber.status).toBe("active");
    expect(shown.body.subscriber.source).toBe("api");
    expect(Date.parse(shown.body.subscriber.consentedAt)).toBeGreaterThan(Date.now() - 60_000);
  });
});
