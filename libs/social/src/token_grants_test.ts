import { afterAll, describe, expect, test } from "bun:test";
import { startFakePlatforms } from "../testing/fake_platforms.ts";
import { oauthClient } from "./adapters.ts";
import { authorizeUrl, exchangeCode, OAUTH } from "./oauth.ts";

// Issue 33: the permissions an account holds are what the token answer says was granted (Instagram's
// `permissions`), not what was asked: a user may untick one in Meta's consent dialog.

const fake = startFakePlatforms();
afterAll(() => fake.close());
const config = {
  social: {
    clients: { instagram: { id: "client-instagram", secret: "secret-instagram" } },
    authBase: { instagram: fake.oauthEnv.SOCIAL_AUTH_BASE_INSTAGRAM! },
  },
};

describe("Instagram: the granted permissions, from the token answer", () => {
  test("a permission the user unticked is not recorded; the granted ones are", async () => {
    fake.declineScope("instagram", "instagram_business_manage_insights");
    const client = oauthClient(config as never, "instagram")!;
    const redirectUri = "https://app.example/social/callback";
    const at = authorizeUrl("instagram", client, { state: "s1", redirectUri, codeChallenge: null });
    const back = await fetch(at, { redirect: "manual" });
    const code = new URL(back.headers.get("location")!).searchParams.get("code")!;
    const tokens = await exchangeCode("instagram", client, {
      code,
      redirectUri,
      codeVerifier: null,
      now: new Date(),
    });
    const asked = OAUTH.instagram.scopes;
    expect(asked).toContain("instagram_business_manage_insights");
    expect(tokens.scopes).toEqual(asked.filter((s) => s !== "instagram_business_manage_insights"));
  });
});
