import { describe, expect, test } from "bun:test";
import { checkFetchTarget, classifyIp, parseIPv4, TargetError } from "./address.ts";

// Pure classification: nothing here opens a connection or asks DNS.
const BLOCKED: string[] = [
  "https://127.0.0.1/",
  "https://127.1/",
  "https://127.0.1/",
  "https://2130706433/",
  "https://0x7f000001/",
  "https://0x7f.0x0.0x0.0x1/",
  "https://0177.0.0.1/",
  "https://0177.1/",
  "https://017700000001/",
  "https://127.000.000.001/",
  "https://0/",
  "https://0.0.0.0/",
  "https://10.0.0.1/",
  "https://10.255.255.255/",
  "https://172.16.0.1/",
  "https://172.31.255.254/",
  "https://192.168.1.1/",
  "https://0xc0a80101/",
  "https://3232235777/",
  "https://169.254.169.254/",
  "https://0xa9fea9fe/",
  "https://100.64.0.1/",
  "https://100.127.255.254/",
  "https://192.0.0.8/",
  "https://192.0.2.10/",
  "https://198.18.0.1/",
  "https://198.51.100.7/",
  "https://203.0.113.9/",
  "https://224.0.0.1/",
  "https://239.255.255.250/",
  "https://240.0.0.1/",
  "https://255.255.255.255/",
  "https://[::1]/",
  "https://[0:0:0:0:0:0:0:1]/",
  "https://[::]/",
  "https://[::ffff:127.0.0.1]/",
  "https://[::ffff:7f00:1]/",
  "https://[::ffff:10.0.0.1]/",
  "https://[::ffff:8.8.8.8]/",
  "https://[::127.0.0.1]/",
  "https://[::ffff:0:169.254.169.254]/",
  "https://[64:ff9b::a9fe:a9fe]/",
  "https://[64:ff9b::808:808]/",
  "https://[64:ff9b:1::1]/",
  "https://[2002:7f00:1::]/",
  "https://[2002:c0a8:101::1]/",
  "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
  "https://[2001:db8::1]/",
  "https://[fc00::1]/",
  "https://[fd12:3456::1]/",
  "https://[fe80::1]/",
  "https://[febf::1]/",
  "https://[fec0::1]/",
  "https://[ff02::1]/",
  "https://[100::1]/",
  "https://localhost/",
  "https://LOCALHOST./",
  "https://app.localhost/",
  "https://intranet/",
  "https://127.0.0.1.:443/",
];

const INVALID: string[] = [
  "http://example.com/a.png",
  "ftp://example.com/a.png",
  "file:///etc/passwd",
  "javascript:alert(1)",
  "https://user:pw@example.com/a.png",
  "not a url",
  "",
];

const ALLOWED: string[] = [
  "https://example.com/a.png",
  "https://images.example.org:8443/x/y.jpg?size=2",
  "https://8.8.8.8/logo.png",
  "https://93.184.216.34/",
  "https://[2606:4700:4700::1111]/a.gif",
  "https://[2a00:1450:4001:80b::200e]/",
];

describe("address guard: the pure classification (no connection, no DNS)", () => {
  test(`refuses ${BLOCKED.length} non-public spellings with BLOCKED`, () => {
    expect(BLOCKED.length).toBeGreaterThanOrEqual(40);
    for (const url of BLOCKED) {
      let err: unknown;
      try {
        checkFetchTarget(url);
      } catch (e) {
        err = e;
      }
      expect({ url, kind: (err as TargetError | undefined)?.kind }).toEqual({ url, kind: "blocked" });
    }
  });

  test.each(INVALID)("refuses %p as an invalid import URL (https only, no credentials)", (url) => {
    expect(() => checkFetchTarget(url)).toThrow(TargetError);
    try {
      checkFetchTarget(url);
    } catch (e) {
      expect((e as TargetError).kind).toBe("invalid");
    }
  });

  test.each(ALLOWED)("lets %p through to DNS", (url) => {
    expect(checkFetchTarget(url).exempt).toBe(false);
  });

  test("FETCH_ALLOW_HOSTS exempts exactly that host and port", () => {
    expect(checkFetchTarget("https://127.0.0.1:8443/a.png", ["127.0.0.1:8443"]).exempt).toBe(true);
    expect(checkFetchTarget("https://localhost:8443/", ["localhost:8443"]).exempt).toBe(true);
    expect(() => checkFetchTarget("https://127.0.0.1:8444/a.png", ["127.0.0.1:8443"])).toThrow(TargetError);
    expect(() => checkFetchTarget("https://127.0.0.2:8443/a.png", ["127.0.0.1:8443"])).toThrow(TargetError);
  });

  test("resolved addresses are classified the same way (what DNS answers is checked too)", () => {
    for (const ip of [
      "127.0.0.1",
      "10.1.2.3",
      "::1",
      "::ffff:192.168.0.1",
      "fe80::1",
      "64:ff9b::1",
      "0.0.0.0",
    ])
      expect(classifyIp(ip)).not.toBeNull();
    for (const ip of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"]) expect(classifyIp(ip)).toBeNull();
  });

  test("inet_aton spellings parse to the address a socket would reach", () => {
    expect(parseIPv4("2130706433")).toEqual([127, 0, 0, 1]);
    expect(parseIPv4("0x7f.1")).toEqual([127, 0, 0, 1]);
    expect(parseIPv4("0177.0.0.01")).toEqual([127, 0, 0, 1]);
    expect(parseIPv4("10.1")).toEqual([10, 0, 0, 1]);
    expect(parseIPv4("256.1.1.1")).toBeNull();
    expect(parseIPv4("example")).toBeNull();
  });
});
