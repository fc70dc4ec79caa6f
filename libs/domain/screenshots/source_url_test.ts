import { describe, expect, test } from "bun:test";
import { AppError } from "@site/domain/core";
import { parsePublicPageUrl } from "./source_url.ts";

const refused = (url: string, allow: string[] = []) => {
  try {
    parsePublicPageUrl(url, allow);
  } catch (err) {
    return err instanceof AppError && err.code === "VALIDATION_ERROR";
  }
  return false;
};

describe("screenshot page URLs", () => {
  test("private, loopback, link-local and local names are refused in every spelling", () => {
    for (const url of [
      "http://127.0.0.1/",
      "http://127.1/",
      "http://0x7f000001/",
      "http://2130706433/",
      "http://10.0.0.1/",
      "http://172.16.5.4/",
      "http://192.168.1.1/",
      "http://169.254.169.254/latest/meta-data",
      "http://100.64.0.1/",
      "http://0.0.0.0/",
      "http://[::1]/",
      "http://[fd00::1]/",
      "http://[fe80::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://localhost/",
      "http://app.localhost/",
      "http://printer.local/",
      "http://db.internal/",
      "http://intranet/",
      "javascript:alert(1)",
      "file:///etc/passwd",
      "https://user:secret@example.com/",
    ])
      expect({ url, refused: refused(url) }).toEqual({ url, refused: true });
  });

  test("public pages pass, normalized; FETCH_ALLOW_HOSTS exempts exactly its host:port", () => {
    expect(parsePublicPageUrl("HTTPS://Example.COM:443/Pricing?x=1#top", [])).toBe(
      "https://example.com/Pricing?x=1",
    );
    expect(parsePublicPageUrl("http://93.184.216.34/", [])).toBe("http://93.184.216.34/");
    expect(parsePublicPageUrl("http://127.0.0.1:8443/a", ["127.0.0.1:8443"])).toBe("http://127.0.0.1:8443/a");
    expect(refused("http://127.0.0.1:8444/a", ["127.0.0.1:8443"])).toBe(true);
  });
});

describe("filming a page on this machine (development switch)", () => {
  test("a private page is refused with how to allow it; the switch lets this machine's pages through", () => {
    expect(() => parsePublicPageUrl("http://127.0.0.1:8080/", [])).toThrow(
      /ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT=1/,
    );
    expect(parsePublicPageUrl("http://127.0.0.1:8080/", [], { localNetwork: true })).toBe(
      "http://127.0.0.1:8080/",
    );
    expect(parsePublicPageUrl("http://localhost:5173/app", [], { localNetwork: true })).toBe(
      "http://localhost:5173/app",
    );
    expect(() => parsePublicPageUrl("http://169.254.169.254/", [], { localNetwork: true })).toThrow();
  });
});
