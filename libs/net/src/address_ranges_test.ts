import { describe, expect, test } from "bun:test";
import {
  checkFetchTarget,
  classifyIp,
  isExemptHost,
  isLocalNetworkAddress,
  parseIPv4,
  parseIPv6,
  TargetError,
} from "./address.ts";
import { LOCAL_NETWORK_HINT } from "./local_network.ts";

// The address guard's exact answers at the edges of every range, every parse and every refusal: the
// tests that kill what StrykerJS found alive in address.ts (docs/mutation-testing.md). Pure: nothing
// here opens a connection or asks DNS.

/** The IPv4 special-purpose ranges (IANA registry, RFC 6890) as the guard names them, in its order. */
const V4: [string, number, string][] = [
  ["0.0.0.0", 8, "unspecified (0.0.0.0/8)"],
  ["10.0.0.0", 8, "private (10/8)"],
  ["100.64.0.0", 10, "carrier-grade NAT (100.64/10)"],
  ["127.0.0.0", 8, "loopback (127/8)"],
  ["169.254.0.0", 16, "link-local (169.254/16)"],
  ["172.16.0.0", 12, "private (172.16/12)"],
  ["192.0.0.0", 24, "reserved (192.0.0/24)"],
  ["192.0.2.0", 24, "documentation (192.0.2/24)"],
  ["192.88.99.0", 24, "6to4 relay (192.88.99/24)"],
  ["192.168.0.0", 16, "private (192.168/16)"],
  ["198.18.0.0", 15, "benchmarking (198.18/15)"],
  ["198.51.100.0", 24, "documentation (198.51.100/24)"],
  ["203.0.113.0", 24, "documentation (203.0.113/24)"],
  ["224.0.0.0", 4, "multicast (224/4)"],
  ["240.0.0.0", 4, "reserved (240/4, broadcast)"],
];
const toInt = (ip: string) => ip.split(".").reduce((a, p) => a * 256 + Number(p), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");
/** The reason by integer arithmetic (an oracle independent of the guard's byte masks). */
const expectedV4 = (ip: string) => {
  const n = toInt(ip);
  for (const [net, bits, why] of V4) {
    const size = 2 ** (32 - bits);
    if (Math.floor(n / size) === Math.floor(toInt(net) / size)) return why;
  }
  return null;
};

describe("IPv4 ranges: first, last and both neighbours of each", () => {
  for (const [net, bits, why] of V4) {
    const first = toInt(net);
    const last = first + 2 ** (32 - bits) - 1;
    test(`${net}/${bits}`, () => {
      expect(classifyIp(toIp(first))).toBe(why);
      expect(classifyIp(toIp(last))).toBe(why);
      if (first > 0) expect(classifyIp(toIp(first - 1))).toBe(expectedV4(toIp(first - 1)));
      if (last < 2 ** 32 - 1) expect(classifyIp(toIp(last + 1))).toBe(expectedV4(toIp(last + 1)));
    });
  }
  test("public addresses pass; text that is no address says so", () => {
    for (const ip of [
      "1.1.1.1",
      "8.8.8.8",
      "9.255.255.255",
      "11.0.0.0",
      "223.255.255.255",
      "126.255.255.255",
    ])
      expect([ip, classifyIp(ip)]).toEqual([ip, null]);
    for (const text of ["example.com", "1.2.3", "1.2.3.4.5", "", "127.1", "0x1.2.3.4", "1.2.3.4."])
      expect([text, classifyIp(text)]).toEqual([text, "not an IP address"]);
  });
});

describe("IPv6 ranges", () => {
  const cases: [string, string | null][] = [
    ["::", "unspecified (::)"],
    ["::1", "loopback (::1)"],
    ["::2", "IPv4-compatible IPv6 (::/96)"],
    ["::1:0:1", "reserved (outside 2000::/3)"],
    ["::ffff:1.2.3.4", "IPv4-mapped IPv6 (::ffff:0:0/96)"],
    ["::ffff:7f00:1", "IPv4-mapped IPv6 (::ffff:0:0/96)"],
    ["::fffe:1.2.3.4", "reserved (outside 2000::/3)"],
    ["::feff:1.2.3.4", "reserved (outside 2000::/3)"],
    ["::1:ffff:1.2.3.4", "reserved (outside 2000::/3)"],
    ["::ffff:0:1.2.3.4", "IPv4-translated IPv6 (::ffff:0:0:0/96)"],
    ["::fffe:0:1.2.3.4", "reserved (outside 2000::/3)"],
    ["::feff:0:1.2.3.4", "reserved (outside 2000::/3)"],
    ["::ffff:1:1.2.3.4", "reserved (outside 2000::/3)"],
    ["::ffff:100:1.2.3.4", "reserved (outside 2000::/3)"],
    ["::1:ffff:0:1.2.3.4", "reserved (outside 2000::/3)"],
    ["64:ff9b::1.2.3.4", "NAT64 (64:ff9b::/96, 64:ff9b:1::/48)"],
    ["64:ff9b:1::1", "NAT64 (64:ff9b::/96, 64:ff9b:1::/48)"],
    ["64:ff9a::1", "reserved (outside 2000::/3)"],
    ["65:ff9b::1", "reserved (outside 2000::/3)"],
    ["100::1", "discard-only (100::/64)"],
    ["100:0:0:1::", "reserved (outside 2000::/3)"],
    ["100:0:1::", "reserved (outside 2000::/3)"],
    ["100:1::", "reserved (outside 2000::/3)"],
    ["101::", "reserved (outside 2000::/3)"],
    ["2001::1", "IETF special-purpose, Teredo (2001::/23)"],
    ["2001:1ff:ffff::", "IETF special-purpose, Teredo (2001::/23)"],
    ["2001:200::1", null],
    ["2000:1::1", null],
    ["2001:db8::1", "documentation (2001:db8::/32)"],
    ["2001:db9::1", null],
    ["2002::1", "6to4 (2002::/16)"],
    ["2003::1", null],
    ["3fff::1", "documentation (3fff::/20)"],
    ["3fff:fff::1", "documentation (3fff::/20)"],
    ["3fff:1000::1", null],
    ["3ffe::1", null],
    ["2606:4700::1111", null],
    ["2400:db8::1", null],
    ["2080::1", null],
    ["20c0::1", null],
    ["fc00::1", "unique local (fc00::/7)"],
    ["fdff::1", "unique local (fc00::/7)"],
    ["fe80::1", "link-local (fe80::/10)"],
    ["febf::1", "link-local (fe80::/10)"],
    ["fec0::1", "site-local (fec0::/10)"],
    ["feff::1", "site-local (fec0::/10)"],
    ["fe00::1", "reserved (outside 2000::/3)"],
    ["fd00::1", "unique local (fc00::/7)"],
    ["ff02::1", "multicast (ff00::/8)"],
    ["1fff::1", "reserved (outside 2000::/3)"],
    ["4000::1", "reserved (outside 2000::/3)"],
    ["e000::1", "reserved (outside 2000::/3)"],
  ];
  test("each range and its edges", () => {
    expect(cases.map(([ip]) => [ip, classifyIp(ip)])).toEqual(cases);
  });
});

describe("parseIPv6", () => {
  const bytes = (...groups: number[]) => groups.flatMap((g) => [g >> 8, g & 0xff]);
  test("the forms an address may take, byte for byte", () => {
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toEqual(bytes(1, 2, 3, 4, 5, 6, 7, 8));
    expect(parseIPv6("[::1]")).toEqual(bytes(0, 0, 0, 0, 0, 0, 0, 1));
    expect(parseIPv6("::")).toEqual(bytes(0, 0, 0, 0, 0, 0, 0, 0));
    expect(parseIPv6("1::")).toEqual(bytes(1, 0, 0, 0, 0, 0, 0, 0));
    expect(parseIPv6("1:2:3:4:5:6:7::")).toEqual(bytes(1, 2, 3, 4, 5, 6, 7, 0));
    expect(parseIPv6("::2:3:4:5:6:7:8")).toEqual(bytes(0, 2, 3, 4, 5, 6, 7, 8));
    expect(parseIPv6("1:2::7:8")).toEqual(bytes(1, 2, 0, 0, 0, 0, 7, 8));
    expect(parseIPv6("FFFF:abcd::")).toEqual(bytes(0xffff, 0xabcd, 0, 0, 0, 0, 0, 0));
    expect(parseIPv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
    expect(parseIPv6("1:2:3:4:5:6:255.0.0.9")).toEqual([...bytes(1, 2, 3, 4, 5, 6), 255, 0, 0, 9]);
    expect(parseIPv6("::ffff:10.20.30.40")).toEqual([...bytes(0, 0, 0, 0, 0, 0xffff), 10, 20, 30, 40]);
  });
  test("anything else is no IPv6 address", () => {
    for (const text of [
      "1.2.3.4",
      "example.com",
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4::5:6:7:8",
      "1::2::3",
      "12345::",
      "g::",
      ":::",
      "fe80::1%eth0",
      "[::1",
      "::1]",
      "x::1]",
      "::1.2.3",
      "::1.2.3.256",
      "::1.2.3.4.5",
      "::1234.2.3.4",
      "::a.2.3.4",
      "1:2:3:4:5:6:7:1.2.3.4",
    ])
      expect([text, parseIPv6(text)]).toEqual([text, null]);
  });
});

describe("parseIPv4 (inet_aton's forms)", () => {
  test("decimal, octal and hex parts; the last part fills the rest", () => {
    const cases: [string, number[]][] = [
      ["1.2.3.4", [1, 2, 3, 4]],
      ["1.2.3.4.", [1, 2, 3, 4]],
      ["127.1", [127, 0, 0, 1]],
      ["0x7f.1", [127, 0, 0, 1]],
      ["0X7F.0.0.1", [127, 0, 0, 1]],
      ["0x", [0, 0, 0, 0]],
      ["0x.0x.0x.0x1", [0, 0, 0, 1]],
      ["0", [0, 0, 0, 0]],
      ["017700000001", [127, 0, 0, 1]],
      ["0177.0.0.01", [127, 0, 0, 1]],
      ["4294967295", [255, 255, 255, 255]],
      ["1.16777215", [1, 255, 255, 255]],
      ["1.2.65535", [1, 2, 255, 255]],
      ["255.255.255.255", [255, 255, 255, 255]],
      ["3232235777", [192, 168, 1, 1]],
    ];
    expect(cases.map(([t]) => [t, parseIPv4(t)])).toEqual(cases);
  });
  test("out of range, too many parts or not a number: null", () => {
    for (const text of [
      "4294967296",
      "1.16777216",
      "1.2.65536",
      "1.2.3.256",
      "256.1.1.1",
      "1.256.1.1",
      "1.2.3.4.5",
      "1.2.3.4.0",
      "",
      ".",
      "1..2",
      "08",
      "019",
      "120x5",
      "09.1.1.1",
      "0x1g",
      "-1",
      "1e3",
      "9007199254740993",
      "0x20000000000000",
      "a.b.c.d",
    ])
      expect([text, parseIPv4(text)]).toEqual([text, null]);
  });
});

describe("checkFetchTarget: exact answers", () => {
  const refusal = (url: string, allow: string[] = [], opts = {}) => {
    try {
      checkFetchTarget(url, allow, opts);
      return null;
    } catch (e) {
      return e instanceof TargetError ? { kind: e.kind, name: e.name, message: e.message } : String(e);
    }
  };
  const hinted = (m: string) => `${m}; ${LOCAL_NETWORK_HINT}`;

  test("invalid URLs, with what is wrong", () => {
    expect(refusal("not a url")).toEqual({
      kind: "invalid",
      name: "TargetError",
      message: "not a valid URL",
    });
    for (const u of ["http://example.com/", "ftp://example.com/", "file:///etc/passwd"])
      expect(refusal(u)).toEqual({
        kind: "invalid",
        name: "TargetError",
        message: "only https URLs can be fetched",
      });
    for (const u of ["https://u:p@example.com/", "https://u@example.com/", "https://:p@example.com/"])
      expect(refusal(u)).toEqual({
        kind: "invalid",
        name: "TargetError",
        message: "URLs with credentials are refused",
      });
  });

  test("a host that is only a dot has no host", () => {
    for (const u of ["https://./", "https://%2e/"])
      expect(refusal(u)).toEqual({ kind: "invalid", name: "TargetError", message: "the URL has no host" });
  });

  test("blocked hosts, with the reason and the development hint", () => {
    expect(refusal("https://10.0.0.1/")).toEqual({
      kind: "blocked",
      name: "TargetError",
      message: hinted("address not allowed: private (10/8)"),
    });
    expect(refusal("https://[fc00::1]/")).toEqual({
      kind: "blocked",
      name: "TargetError",
      message: hinted("address not allowed: unique local (fc00::/7)"),
    });
    for (const u of ["https://localhost/", "https://a.localhost/", "https://intranet/", "https://0x1g/"])
      expect(refusal(u)).toEqual({
        kind: "blocked",
        name: "TargetError",
        message: hinted("host not allowed: local names are refused"),
      });
  });

  test("a public target: host lowercased without its final dot, port, the literal when it is one", () => {
    const t = checkFetchTarget("https://Example.COM./x");
    expect({ ...t, url: t.url.href }).toEqual({
      url: "https://example.com./x",
      host: "example.com",
      port: 443,
      literal: null,
      exempt: false,
    });
    expect(checkFetchTarget("https://example.com:8443/").port).toBe(8443);
    const v6 = checkFetchTarget("https://[2606:4700::1111]/");
    expect([v6.host, v6.literal]).toEqual(["2606:4700::1111", "2606:4700::1111"]);
    const v4 = checkFetchTarget("https://16843009/");
    expect([v4.host, v4.literal]).toEqual(["1.1.1.1", "1.1.1.1"]);
  });

  test("the development switch: plain http and loopback, private and unique local only", () => {
    const t = checkFetchTarget("http://10.0.0.1:8080/", [], { localNetwork: true });
    expect([t.port, t.literal, t.localNetwork]).toEqual([8080, "10.0.0.1", true]);
    expect(checkFetchTarget("http://192.168.1.1/", [], { localNetwork: true }).port).toBe(80);
    expect(checkFetchTarget("https://192.168.1.1/", [], { localNetwork: true }).port).toBe(443);
    expect(checkFetchTarget("https://localhost/", [], { localNetwork: true }).host).toBe("localhost");
    expect(checkFetchTarget("https://[::1]/", [], { localNetwork: true }).literal).toBe("::1");
    expect(refusal("https://169.254.169.254/", [], { localNetwork: true })).toEqual({
      kind: "blocked",
      name: "TargetError",
      message: hinted("address not allowed: link-local (169.254/16)"),
    });
    expect(refusal("https://[2001:db8::1]/", [], { localNetwork: true })).toEqual({
      kind: "blocked",
      name: "TargetError",
      message: hinted("address not allowed: documentation (2001:db8::/32)"),
    });
    expect(refusal("http://10.0.0.1/", [], { localNetwork: false })).toEqual({
      kind: "invalid",
      name: "TargetError",
      message: "only https URLs can be fetched",
    });
  });

  test("FETCH_ALLOW_HOSTS: that host and port only; plain http only where the caller allows it", () => {
    const t = checkFetchTarget("https://127.0.0.1:8443/", ["127.0.0.1:8443"]);
    expect([t.exempt, t.literal, "localNetwork" in t]).toEqual([true, "127.0.0.1", false]);
    expect(refusal("https://127.0.0.1:8444/", ["127.0.0.1:8443"])).toEqual({
      kind: "blocked",
      name: "TargetError",
      message: hinted("address not allowed: loopback (127/8)"),
    });
    expect(checkFetchTarget("https://[::1]:8443/", ["[::1]:8443"]).exempt).toBe(true);
    const plain = checkFetchTarget("http://127.0.0.1:9000/", ["127.0.0.1:9000"], { plainHttpToExempt: true });
    expect([plain.exempt, plain.port]).toEqual([true, 9000]);
    expect(checkFetchTarget("http://127.0.0.1/", ["127.0.0.1:80"], { plainHttpToExempt: true }).port).toBe(
      80,
    );
    expect(checkFetchTarget("http://[::1]:9000/", ["[::1]:9000"], { plainHttpToExempt: true }).exempt).toBe(
      true,
    );
    for (const [u, allow] of [
      ["http://127.0.0.1:9000/", ["127.0.0.1:9001"]],
      ["http://127.0.0.1/", ["127.0.0.1:443"]],
    ] as const)
      expect(refusal(u, [...allow], { plainHttpToExempt: true })).toEqual({
        kind: "invalid",
        name: "TargetError",
        message: "only https URLs can be fetched",
      });
    expect(refusal("http://127.0.0.1:9000/", ["127.0.0.1:9000"])).toEqual({
      kind: "invalid",
      name: "TargetError",
      message: "only https URLs can be fetched",
    });
  });

  test("isExemptHost: case and a final dot do not matter; the port does", () => {
    expect(isExemptHost("Host.Test.", 443, ["host.test:443"])).toBe(true);
    expect(isExemptHost("host.test", 444, ["host.test:443"])).toBe(false);
    expect(isExemptHost("::1", 443, ["[::1]:443"])).toBe(true);
    expect(isExemptHost("::1", 443, [])).toBe(false);
  });
});

test("isLocalNetworkAddress: what the development switch opens (loopback, private, unique local)", () => {
  const cases: [string, boolean][] = [
    ["127.0.0.1", true],
    ["10.1.2.3", true],
    ["192.168.0.1", true],
    ["fd00::1", true],
    ["::1", true],
    ["8.8.8.8", false],
    ["169.254.169.254", false],
    ["fe80::1", false],
    ["2606:4700::1111", false],
  ];
  expect(cases.map(([ip]) => [ip, isLocalNetworkAddress(ip)])).toEqual(cases);
});
