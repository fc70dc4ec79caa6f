import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { type AddressInfo, createServer, type Socket } from "node:net";

/** A loopback TCP and UDP port pair that counts every connection and datagram it gets (it must get none). */
export type Forbidden = {
  port: number;
  udpPort: number;
  accepted(): number;
  datagrams(): number;
  close(): Promise<void>;
};

/** Starts the forbidden service: it answers like an internal HTTP service would, and counts. */
export async function serveForbidden(): Promise<Forbidden> {
  let accepted = 0;
  let datagrams = 0;
  const sockets = new Set<Socket>();
  const tcp = createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
    s.end("HTTP/1.1 200 OK\r\nContent-Length: 14\r\nAccess-Control-Allow-Origin: *\r\n\r\ninternal-token");
  });
  await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
  const udp: UdpSocket = createSocket("udp4");
  udp.on("message", () => datagrams++);
  await new Promise<void>((r) => udp.bind(0, "127.0.0.1", r));
  return {
    port: (tcp.address() as AddressInfo).port,
    udpPort: udp.address().port,
    accepted: () => accepted,
    datagrams: () => datagrams,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => tcp.close(() => r()));
      await new Promise<void>((r) => udp.close(() => r()));
    },
  };
}

/** The ways a page tries to reach the forbidden service without the page-level hooks seeing it. */
export const ESCAPES = [
  "window-websocket",
  "worker-websocket",
  "nested-worker-websocket",
  "shared-worker-fetch",
  "service-worker",
  "webrtc",
] as const;
export type Escape = (typeof ESCAPES)[number];

const js = (s: string) => JSON.stringify(s);

/** The page for one escape: the attempt, then a report to `/done`; `<img src=/wait>` holds the load until then. */
export function escapePage(kind: Escape, origin: string, forbidden: Forbidden): string {
  const f = `127.0.0.1:${forbidden.port}`;
  const report = `const report = (r) => fetch(${js(`${origin}/done?kind=${kind}&r=`)} + encodeURIComponent(r)).catch(() => {});`;
  const socket = `try { const ws = new WebSocket(${js(`ws://${f}/ws`)}); ws.onopen = () => ws.send("hi");
    ws.onmessage = (e) => report("read:" + e.data); ws.onerror = () => report("error"); ws.onclose = () => report("closed");
  } catch (e) { report("threw:" + e); }`;
  const blob = (src: string) => `URL.createObjectURL(new Blob([${js(src)}], { type: "text/javascript" }))`;
  let script: string;
  switch (kind) {
    case "window-websocket":
      script = `${report} ${socket}`;
      break;
    case "worker-websocket":
      script = `${report} try { new Worker(${blob(`${report} ${socket}`)}); } catch (e) { report("threw:" + e); }`;
      break;
    case "nested-worker-websocket": {
      const inner = `${report} ${socket}`;
      const outer = `${report} try { new Worker(${blob(inner)}); } catch (e) { report("threw:" + e); }`;
      script = `${report} try { new Worker(${blob(outer)}); } catch (e) { report("threw:" + e); }`;
      break;
    }
    case "shared-worker-fetch": {
      const src = `${report} fetch(${js(`http://${f}/secret`)}).then((r) => r.text()).then((t) => report("read:" + t), (e) => report("error:" + e));`;
      script = `${report} try { new SharedWorker(${blob(src)}); } catch (e) { report("threw:" + e); }`;
      break;
    }
    case "service-worker":
      script = `${report} navigator.serviceWorker.register("/sw.js").catch((e) => report("threw:" + e));`;
      break;
    case "webrtc":
      // Remote candidates on the forbidden ports, UDP and TCP: ICE would check them directly.
      script = `${report} (async () => {
        const a = new RTCPeerConnection(); const b = new RTCPeerConnection();
        a.createDataChannel("x");
        await a.setLocalDescription(await a.createOffer());
        await b.setRemoteDescription(a.localDescription);
        await b.setLocalDescription(await b.createAnswer());
        await a.setRemoteDescription(b.localDescription);
        for (const c of [${js(`candidate:1 1 udp 2122260223 127.0.0.1 ${forbidden.udpPort} typ host`)},
                         ${js(`candidate:2 1 tcp 2122260223 127.0.0.1 ${forbidden.port} typ host tcptype passive`)}])
          await a.addIceCandidate({ candidate: c, sdpMid: "0", sdpMLineIndex: 0 }).catch(() => {});
        setTimeout(() => report("ice:" + a.iceConnectionState), 3000);
      })().catch((e) => report("threw:" + e));`;
      break;
  }
  return `<!doctype html><html><head><meta charset="utf-8"></head><body><p>${kind}</p>
<script>${script}</script><img src="/wait?kind=${kind}" width="1" height="1"></body></html>`;
}

/**
 * Every escape at once, for a browser that opens a single page (the hosted sign-in): each escape page in
 * a same-origin frame, plus direct attempts from the page itself — `fetch` to the forbidden port and to
 * the link-local metadata address, an image from the forbidden port — each reported to `/done` under its
 * kind (`fetch-loopback`, `fetch-link-local`, `img-loopback`), and a link over the top-left 300×200
 * pixels to the forbidden port whose click is reported (`click`) before the navigation is tried.
 */
export function allEscapesPage(origin: string, forbidden: Forbidden): string {
  const f = `http://127.0.0.1:${forbidden.port}`;
  const report = (kind: string) =>
    `((r) => fetch(${js(`${origin}/done?kind=${kind}&r=`)} + encodeURIComponent(r)).catch(() => {}))`;
  const tryFetch = (kind: string, url: string) =>
    `fetch(${js(url)}).then((r) => r.text()).then((t) => ${report(kind)}("read:" + t), (e) => ${report(kind)}("error:" + e));`;
  return `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0">
<a id="out" href="${f}/clicked" onclick="${report("click").replace(/"/g, "&quot;")}('clicked')"
 style="position:absolute;left:0;top:0;width:300px;height:200px;display:block;background:#eee">out</a>
<div style="position:absolute;top:220px">${ESCAPES.map((k) => `<iframe src="/escape/${k}" width="120" height="60"></iframe>`).join("")}</div>
<img src="${f}/pixel.gif" onload="${report("img-loopback").replace(/"/g, "&quot;")}('loaded')" onerror="${report("img-loopback").replace(/"/g, "&quot;")}('error')">
<script>${tryFetch("fetch-loopback", `${f}/secret`)} ${tryFetch("fetch-link-local", "http://169.254.169.254/latest/meta-data/")}</script>
</body></html>`;
}

/** The service worker: on install it fetches the forbidden port and opens a WebSocket to it. */
export function serviceWorkerScript(origin: string, forbidden: Forbidden): string {
  const f = `127.0.0.1:${forbidden.port}`;
  return `const report = (r) => fetch(${js(`${origin}/done?kind=service-worker&r=`)} + encodeURIComponent(r)).catch(() => {});
self.addEventListener("install", (event) => {
  self.skipWaiting();
  event.waitUntil(Promise.all([
    fetch(${js(`http://${f}/sw-secret`)}).then((r) => r.text()).then((t) => "read:" + t, () => "fetch-error"),
    new Promise((done) => { try { const ws = new WebSocket(${js(`ws://${f}/sw`)});
      ws.onopen = () => done("ws-open"); ws.onerror = () => done("ws-error"); } catch (e) { done("ws-threw"); } }),
  ]).then((r) => report(r.join(","))));
});`;
}

/**
 * Serves the escape pages on 127.0.0.1 (the allowed site): `/escape/<kind>`, `/all`, `/sw.js`, `/done` (the
 * report), `/wait` (holds until the kind reported, 10 s at most). `reports` maps each kind to what it said.
 */
export function serveEscapes(forbidden: Forbidden) {
  const reports = new Map<string, string>();
  const waiting = new Map<string, (() => void)[]>();
  const pixel = () =>
    new Response(Buffer.from("R0lGODlhAQABAAAAACw=", "base64"), { headers: { "content-type": "image/gif" } });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const kind = url.searchParams.get("kind") ?? "";
      if (url.pathname === "/all")
        return new Response(allEscapesPage(url.origin, forbidden), {
          headers: { "content-type": "text/html" },
        });
      if (url.pathname.startsWith("/escape/"))
        return new Response(escapePage(url.pathname.slice(8) as Escape, url.origin, forbidden), {
          headers: { "content-type": "text/html" },
        });
      if (url.pathname === "/sw.js")
        return new Response(serviceWorkerScript(url.origin, forbidden), {
          headers: { "content-type": "text/javascript" },
        });
      if (url.pathname === "/done") {
        if (!reports.has(kind)) reports.set(kind, url.searchParams.get("r") ?? "");
        for (const w of waiting.get(kind) ?? []) w();
        return new Response("ok", { headers: { "access-control-allow-origin": "*" } });
      }
      if (url.pathname === "/wait") {
        if (!reports.has(kind))
          await new Promise<void>((r) => {
            waiting.set(kind, [...(waiting.get(kind) ?? []), r]);
            setTimeout(r, 10_000);
          });
        return pixel();
      }
      return new Response("missing", { status: 404 });
    },
  });
  return { server, port: server.port!, origin: `http://127.0.0.1:${server.port}`, reports };
}
